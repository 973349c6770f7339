#!/usr/bin/env python3
"""Write mappings/hip/hipcub.toml: the `cub::X` -> `hipcub::X` pattern with
every name hipCUB declares at namespace scope and every member those classes
declare (`cub::DeviceRadixSort::SortPairs`), and the `cub/X.cuh` headers
hipCUB ships as `hipcub/X.hpp` (written as hipCUB's umbrella header, which
includes them in the order they need).

HIPIFY maps the `cub` namespace to `hipcub` (src/CUDA2HIP.cpp); cuport's
patterns only rename to names that exist, so the `exists` list is read from
hipCUB's own headers (the rocPRIM backend, hipcub/include/hipcub/backend/
rocprim/**.hpp): classes, structs, enums and their enumerators, `using`
aliases and functions declared directly inside BEGIN_HIPCUB_NAMESPACE ...
END_HIPCUB_NAMESPACE (not in nested `detail` namespaces), and the member
functions and member types those classes and structs declare directly. The
headers are hipCUB's public ones outside `backend/` (hipcub/include/hipcub/
block/block_reduce.hpp for CUB's cub/block/block_reduce.cuh). Facts only:
names and paths.

Usage: python3 gen_hipcub_names.py GIT_DIR REV CUB_DIR > mappings/hip/hipcub.toml
CUB_DIR: CUB's headers (`include/cccl/cub` of the nvidia-cuda-cccl wheel that
tests/corpus/fetch_toolchains.sh unpacks): a header gets an entry only where
both libraries ship it.
"""
import re
import subprocess
import sys
import tomllib
from pathlib import Path

PUBLIC = "hipcub/include/hipcub/"
# Hand-written CUB rules (`approximate` ones with a note) win over the
# pattern: it lists their names as exceptions.
MANUAL = Path(__file__).resolve().parents[3] / "mappings" / "hip" / "cub-manual.toml"

NOT_NAMES = {"if", "for", "while", "switch", "return", "sizeof", "decltype", "static_assert",
             "alignas", "alignof", "defined", "HIPCUB_DEVICE", "HIPCUB_HOST_DEVICE",
             "HIPCUB_RUNTIME_FUNCTION", "HIPCUB_HOST", "HIPCUB_FORCEINLINE", "__attribute__",
             "template", "noexcept", "operator", "__launch_bounds__"}


def strip(text):
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"^\s*#[^\n]*", "", text, flags=re.M)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def without_template_heads(statement):
    """`template <...>` prefixes removed (their `class T` declare nothing here)."""
    out = statement
    while (at := re.search(r"\btemplate\s*<", out)) is not None:
        depth, k = 0, at.end() - 1
        while k < len(out):
            depth += {"<": 1, ">": -1}.get(out[k], 0)
            if depth == 0:
                break
            k += 1
        out = out[: at.start()] + " " + out[k + 1:]
    return out


def declared(statement, ends_with_semicolon=False):
    """The name a top-level declaration (up to its `{` or `;`) declares: a
    class, enum, alias or function, or, for a statement ended by `;`, the
    variable, typedef or using-declaration (`static const host_t host;`,
    `using thrust::hip_rocprim::par;`)."""
    s = without_template_heads(statement)
    if re.match(r"\s*namespace\b", s):
        return set()
    if m := re.match(r"\s*(?:class|struct|enum(?:\s+class)?|union)\s+(?:HIPCUB_\w+\s+)?([A-Za-z_]\w*)", s):
        return {m.group(1)}
    if m := re.match(r"\s*using\s+([A-Za-z_]\w*)\s*=", s):
        return {m.group(1)}
    for m in re.finditer(r"(?<![\w:])([A-Za-z_]\w*)\s*\(", s):
        # Attribute macros (`HIPCUB_DEPRECATED("...")`) come before the name.
        if m.group(1) not in NOT_NAMES and not m.group(1).startswith(("HIPCUB_", "THRUST_", "_")):
            return {m.group(1)}
    if ends_with_semicolon and "(" not in s and not re.match(r"\s*(?:using\s+namespace|friend|extern\s+template|template)\b", s):
        words = re.findall(r"[A-Za-z_]\w*", re.sub(r"=.*|\[[^\]]*\]", "", s, flags=re.S))
        if words and words[-1] not in NOT_NAMES | {"const", "static", "inline", "constexpr"}:
            return {words[-1]}
    return set()


def is_class(statement):
    return re.match(r"\s*(?:class|struct|union)\b", without_template_heads(statement)) is not None


def namespace_names(text, begin="BEGIN_HIPCUB_NAMESPACE", end="END_HIPCUB_NAMESPACE"):
    """Names declared at the top level of the library's namespace in `text`
    (between `begin` and `end`): declarations outside any brace of the
    namespace's body, the enumerators of the enums among them, and the names
    of named namespaces nested in it (`placeholders::_1`), `detail` ones
    excepted."""
    names = set()
    for region in re.findall(re.escape(begin) + r"(.*?)" + re.escape(end), text, flags=re.S):
        names.update(scope_names(region))
    return {n for n in names
            if not n.split("::")[-1].startswith(("_", "HIPCUB_")) or re.fullmatch(r"_\d+", n.split("::")[-1])}


def scope_names(region):
    """`namespace_names` of one namespace body."""
    names = set()
    depth, statement, enum_body = 0, "", None
    nested, nested_body = None, ""
    owner, member, access = None, "", "public"
    for ch in region:
        if owner is not None and depth == 1 and ch in "{;":
            # A member's statement, after any access label: only public
            # members are names a user writes.
            labels = re.findall(r"\b(public|protected|private)\s*:(?!:)", member)
            access = labels[-1] if labels else access
            found = declared(re.sub(r"\b(?:public|protected|private)\s*:(?!:)", " ", member), ch == ";")
            if access == "public":
                names.update(f"{owner}::{m}" for m in found if m != owner and m not in NOT_NAMES)
            member = ""
        elif owner is not None and depth == 1:
            member += ch
        if nested is not None and depth >= 1 and not (depth == 1 and ch == "}"):
            nested_body += ch
        if ch == "{":
            if depth == 0 and (m := re.fullmatch(r"\s*(?:inline\s+)?namespace\s+(\w+)\s*", statement)):
                nested, nested_body = m.group(1), ""
                statement = ""
            elif depth == 0:
                found = declared(statement)
                names.update(found)
                enum_body = "" if re.match(r"\s*enum\b", without_template_heads(statement)) else None
                owner = next(iter(found)) if found and is_class(statement) else None
                access = "private" if re.match(r"\s*class\b", without_template_heads(statement)) else "public"
                member = ""
                statement = ""
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 1:
                member = ""
            if depth == 0:
                owner = None
            if depth == 0 and nested is not None:
                if "detail" not in nested:
                    names.add(nested)
                    names.update(f"{nested}::{n}" for n in scope_names(nested_body))
                nested = None
            if depth == 0 and enum_body is not None:
                for value in enum_body.split(","):
                    value = value.split("=")[0].strip()
                    if re.fullmatch(r"[A-Za-z_]\w*", value):
                        names.add(value)
                enum_body = None
        elif depth == 0:
            statement += ch
            if ch == ";":
                names.update(declared(statement, True))
                statement = ""
        elif depth == 1 and enum_body is not None:
            enum_body += ch
    # Macros invoked at namespace scope (HIPCUB_ASM_THREAD_LOAD(...)) and
    # attributes are no names.
    return {n for n in names if n.split("::")[-1] != "deprecated"}


def main():
    git_dir, rev, cub_dir = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "--short=8", rev],
                            check=True, capture_output=True, text=True).stdout.strip()
    files = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", rev],
                           check=True, capture_output=True, text=True).stdout.split()
    headers = sorted(
        path[len(PUBLIC):-len(".hpp")]
        for path in files
        if path.startswith(PUBLIC) and path.endswith(".hpp") and "/backend/" not in path
        and (cub_dir / (path[len(PUBLIC):-len(".hpp")] + ".cuh")).is_file()
    )
    names = set()
    for path in files:
        if path.startswith("hipcub/include/hipcub/backend/rocprim/") and path.endswith(".hpp"):
            text = subprocess.run(["git", "--git-dir", git_dir, "show", f"{rev}:{path}"],
                                  check=True, capture_output=True, text=True).stdout
            names.update(namespace_names(strip(text)))
    print("# GENERATED by crates/cuport_rules/tools/gen_hipcub_names.py; do not edit by hand.")
    print(f"# CUB -> hipCUB: HIPIFY maps the cub namespace to hipcub (ROCm/HIPIFY @014177bc")
    print(f"# src/CUDA2HIP.cpp); the names are those hipCUB declares at namespace scope")
    print(f"# (ROCm/hipCUB @{commit}, hipcub/include/hipcub/backend/rocprim), with their")
    print("# members; the headers are those hipCUB ships under CUB's paths.")
    print("[meta]")
    print('target = "hip"')
    print('library = "cub"')
    print(f'source = "ROCm/hipCUB @{commit} hipcub/include/hipcub/backend/rocprim (names at namespace scope); ROCm/HIPIFY @014177bc src/CUDA2HIP.cpp (cub:: -> hipcub::)"')
    print('reference = "ROCm/hipCUB hipcub/include/hipcub/hipcub.hpp"')
    print('code = "CP1701"')
    print('headers = ["hipcub/hipcub.hpp"]')
    print()
    print("[[pattern]]")
    print('code = "CP1701"')
    print('from = "cub::*"')
    print('to = "hipcub::*"')
    manual = tomllib.loads(MANUAL.read_text()).get("entry", [])
    exceptions = sorted(e["cuda"] for e in manual if e["cuda"].startswith("cub::"))
    if exceptions:
        print("exceptions = [")
        for name in exceptions:
            print(f'  "{name}",')
        print("]")
    print("exists = [")
    for name in sorted(names):
        print(f'  "hipcub::{name}",')
    print("]")
    # hipCUB's own per-header files are not self-contained with the rocPRIM
    # backend (hipCUB 5.3.3's block/block_load.hpp with Debian's hipcc:
    # "use of undeclared identifier 'HIPCUB_ARCH'"); its umbrella header
    # includes them in order, as ONNX Runtime's HIP build also includes it.
    for header in headers:
        print()
        print("[[entry]]")
        print(f'cuda = "cub/{header}.cuh"')
        print('kind = "header"')
        print('status = "renamed"')
        print('to = "hipcub/hipcub.hpp"')
        print(f'note = "hipCUB ships this API as hipcub/{header}.hpp; the umbrella header is included because hipCUB\'s own headers need its configuration first."')


if __name__ == "__main__":
    main()
