#!/usr/bin/env python3
"""Runs PyTorch's own hipify over a PyTorch-source-shaped header tree with
the includes/ignores lists of PyTorch's tools/amd_build/build_amd.py (read
from that file, not copied), as a ROCm build of PyTorch does.

usage: hipify_torch_headers.py HIPIFY_PARENT BUILD_AMD_PY PROJECT_DIR
"""
import ast
import os
import subprocess
import sys


def build_amd_lists(path):
    """The `includes` and `ignores` lists build_amd.py passes to hipify."""
    lists = {}
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            target = node.targets[0]
            name = target.id if isinstance(target, ast.Name) else None
            if name in ("includes", "ignores") and name not in lists:
                lists[name] = [ast.literal_eval(e) for e in node.value.elts]
    return lists["includes"], lists["ignores"]


def hip_clang():
    # build_amd.py reads $HIP_PATH/lib/.hipInfo, which Debian does not ship;
    # hipconfig says the same.
    try:
        out = subprocess.check_output(["hipconfig", "--compiler"], text=True)
    except OSError:
        return True
    return out.strip() == "clang"


def main():
    hipify_parent, build_amd, project = sys.argv[1:4]
    sys.path.insert(0, hipify_parent)
    from hipify import hipify_python  # PyTorch's, from python3-torch

    includes, ignores = build_amd_lists(build_amd)
    result = hipify_python.hipify(
        project_directory=project,
        output_directory=project,
        includes=[os.path.join(project, p) for p in includes],
        ignores=[os.path.join(project, p) for p in ignores],
        out_of_place_only=False,
        hip_clang_launch=hip_clang(),
        show_progress=False,
    )
    statuses = {}
    for value in result.values():
        statuses[str(value["status"])] = statuses.get(str(value["status"]), 0) + 1
    print("hipify:", statuses)


if __name__ == "__main__":
    main()
