#!/usr/bin/env python3
"""Write argcasts.tsv: the CUDA functions whose arguments HIPIFY rewrites.

Reads `src/HipifyAction.cpp` of a ROCm/HIPIFY checkout (git dir + revision)
and lists each key of its `FuncArgCasts` map with the kinds of argument edits
(e_add_const_argument, e_remove_argument, ...) and whether the edit applies
when translating to roc (`isToRoc`) or MIOpen (`isToMIOpen`). Facts only:
names and flags. gen_hip_tables.py reads the file to mark those roc mappings
`approximate`.

Usage: python3 extract_hipify_argcasts.py GIT_DIR [REV] > /tmp/hipdata/argcasts.tsv
"""
import re
import subprocess
import sys


def top_level_block(text, opening):
    start = text.index(opening) + len(opening) - 1
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i]
    raise ValueError("unbalanced braces after " + opening)


def main():
    git_dir = sys.argv[1]
    rev = sys.argv[2] if len(sys.argv) > 2 else "HEAD"
    src = subprocess.run(["git", "--git-dir", git_dir, "show", f"{rev}:src/HipifyAction.cpp"],
                         check=True, capture_output=True, text=True).stdout
    names = dict(re.findall(r'const std::string (s\w+) = "([^"]+)";', src))
    body = top_level_block(src, "std::map<std::string, std::vector<ArgCastStruct>> FuncArgCasts {")
    parts = re.split(r"\n  \{(s\w+),", body)
    print("cuda_name\tto_miopen\tto_roc\tedits")
    for key, block in zip(parts[1::2], parts[2::2]):
        flags = re.findall(r"\n\s+(true|false),?\s*(?=\n)", block)
        # ArgCastStruct order: castMap, isToRoc, isToMIOpen (src/CUDA2HIP_Scripting.h).
        roc, miopen = (flags + ["false", "false"])[:2]
        edits = ",".join(sorted(set(re.findall(r"e_(\w+?)_argument", block))))
        print(f"{names.get(key, key)}\t{int(miopen == 'true')}\t{int(roc == 'true')}\t{edits}")


if __name__ == "__main__":
    main()
