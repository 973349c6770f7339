#!/usr/bin/env python3
"""Give the [[pattern]] names of the generated HIP tables their first HIP release.

gen_hip_tables.py puts names that follow a mechanical rename (`cuda*` ->
`hip*`) into one pattern's `exists` list, which has room for no per-name
version, so `--rocm-version 5.2.3` could not tell that `hipDeviceSetLimit`
(HIP 5.3.0) or `hiprandStateSobol64` (HIP 6.2.0) are missing there. This
pass splits each pattern into one block per first release (HIPIFY's "A"
column next to the HIP name in the table the file was generated from), each
block with `target-version = "HIP >= X"`; names the table gives no release
stay in a block without one. Blocks keep the pattern's code and stay
adjacent, so lookups resolve as before. Running it again changes nothing.

Facts only (names and versions) are read from ROCm/HIPIFY docs/tables.

Usage: python3 crates/cuport_rules/tools/date_hip_patterns.py HIPIFY_CHECKOUT [MAPPINGS_DIR]
(HIPIFY_CHECKOUT: a work tree, or a bare git directory read at HEAD).
"""
import pathlib
import re
import subprocess
import sys

DOC_LINE = re.compile(r"^# facts from HIPIFY docs/tables, (\S+\.md)", re.M)
FIELD = re.compile(r'^(code|from|to|status|target-version) = "(.*)"$')


def read_doc(hipify, doc):
    path = pathlib.Path(hipify) / "docs" / "tables" / doc
    if path.exists():
        return path.read_text()
    return subprocess.run(
        ["git", "--git-dir", str(hipify), "show", f"HEAD:docs/tables/{doc}"],
        check=True, capture_output=True, text=True,
    ).stdout


def first_releases(table_text):
    """HIP name -> the release HIPIFY says it first appeared in."""
    added = {}
    hip_col = None
    for line in table_text.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if "**HIP**" in cells:
            hip_col = cells.index("**HIP**")
            continue
        if hip_col is None or len(cells) <= hip_col + 1:
            continue
        name = cells[hip_col].strip("`")
        version = cells[hip_col + 1]
        if name and re.fullmatch(r"\d+\.\d+\.\d+", version):
            added.setdefault(name, version)
    return added


def version_key(version):
    return tuple(int(p) for p in version.split("."))


def parse_blocks(lines):
    """Split a generated file into text chunks and pattern blocks (dicts)."""
    out, i = [], 0
    while i < len(lines):
        if lines[i] != "[[pattern]]":
            out.append(lines[i])
            i += 1
            continue
        block, names = {}, []
        i += 1
        while lines[i] != "exists = [":
            key, value = FIELD.match(lines[i]).groups()
            block[key] = value
            i += 1
        i += 1
        while lines[i] != "]":
            names.append(lines[i].strip().rstrip(",").strip('"'))
            i += 1
        i += 1
        block["exists"] = names
        out.append(block)
    return out


def merge_split_blocks(chunks):
    """Blocks of one pattern (same code, from, to) written by an earlier run, as one."""
    merged = []
    for chunk in chunks:
        prev = next((c for c in reversed(merged) if isinstance(c, dict)), None)
        same = (
            isinstance(chunk, dict) and prev is not None
            and all(chunk[k] == prev[k] for k in ("code", "from", "to"))
        )
        if same:
            while merged and merged[-1] == "":
                merged.pop()
            prev["exists"] += chunk["exists"]
        else:
            merged.append(chunk)
    return merged


def render_pattern(block, added):
    groups = {}
    for name in block["exists"]:
        groups.setdefault(added.get(name), []).append(name)
    order = sorted(groups, key=lambda v: (v is not None, version_key(v) if v else ()))
    text = []
    for version in order:
        if text:
            text.append("")
        text += ["[[pattern]]"] + [f'{k} = "{block[k]}"' for k in ("code", "from", "to", "status")]
        if version:
            text.append(f'target-version = "HIP >= {version}"')
        text.append("exists = [")
        text += [f'  "{name}",' for name in sorted(groups[version])]
        text.append("]")
    return text


def date_file(path, hipify):
    text = path.read_text()
    doc = DOC_LINE.search(text)
    if not doc or "[[pattern]]" not in text:
        return False
    added = first_releases(read_doc(hipify, doc.group(1)))
    lines = []
    for chunk in merge_split_blocks(parse_blocks(text.split("\n"))):
        lines += render_pattern(chunk, added) if isinstance(chunk, dict) else [chunk]
    new = "\n".join(lines)
    if new != text:
        path.write_text(new)
    return new != text


def main():
    hipify = sys.argv[1]
    mappings = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "mappings")
    for path in sorted((mappings / "hip").glob("*.toml")):
        if date_file(path, hipify):
            print(f"dated {path}")


if __name__ == "__main__":
    main()
