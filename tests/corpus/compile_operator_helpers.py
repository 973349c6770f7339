#!/usr/bin/env python3
"""Compiles the operator helpers of an Ascend port (`cuport migrate --to
ascend --rules FILE`) against the real CANN headers of one release.

The functions cuport generated for mapped kernels (`aclError
cuport_kernel_<name>(aclrtStream, ...)`, each after a `// cuport: kernel`
comment) are taken out of the ported file with the file's `aclnnop/`
includes and `cuport_kernel_ops.h`, and compiled with
`g++ -std=c++17 -fsyntax-only`. The rest of the ported file is compiled
separately (`--whole`): it still holds the kernels that are manual ports.

Usage: compile_operator_helpers.py PORTED_ROOT FILE RELEASE [--whole]
Needs CUPORT_CANN_VENDOR (cann-<release>/include) and, for --whole,
CUPORT_CANN_2_14_0_INCLUDE (HCCL headers of the torch-npu wheel).
"""
import os
import re
import subprocess
import sys
import tempfile


def helpers(text):
    """The generated functions, each from its comment to its closing brace."""
    found = []
    for m in re.finditer(r"^// cuport: kernel `(\w+)` is computed by", text, re.M):
        end = text.find("\n}\n", m.start())
        found.append((m.group(1), text[m.start():end + 3]))
    return found


def main():
    root, name, release = sys.argv[1:4]
    vendor = os.environ["CUPORT_CANN_VENDOR"]
    include = os.path.join(vendor, f"cann-{release}", "include")
    text = open(os.path.join(root, name)).read()
    heads = re.findall(r'^#include [<"](?:aclnnop/[\w.]+|cuport_kernel_ops\.h)[>"]$', text, re.M)
    funcs = helpers(text)
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write("\n".join(heads) + "\n\n" + "\n".join(body for _, body in funcs))
    cmd = ["g++", "-std=c++17", "-fsyntax-only", f"-I{include}", f"-I{root}", f.name]
    out = subprocess.run(cmd, capture_output=True, text=True)
    errors = [l for l in out.stderr.splitlines() if "error" in l]
    print(f"{release}: {len(funcs)} helpers ({', '.join(n for n, _ in funcs)}), "
          f"{len(heads)} includes: g++ exit {out.returncode}, {len(errors)} errors")
    for line in errors[:20]:
        print("  " + line)
    status = out.returncode
    if "--whole" in sys.argv:
        hccl = os.environ.get("CUPORT_CANN_2_14_0_INCLUDE", "")
        cmd = ["g++", "-std=c++17", "-fsyntax-only", "-x", "c++", f"-I{include}",
               f"-I{hccl}/third_party/hccl/inc", f"-I{hccl}", f"-I{root}", os.path.join(root, name)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        errors = [l for l in out.stderr.splitlines() if "error" in l]
        print(f"{release}: whole file {name}: g++ exit {out.returncode}, {len(errors)} errors")
        for line in errors[:40]:
            print("  " + line)
    sys.exit(status)


if __name__ == "__main__":
    main()
