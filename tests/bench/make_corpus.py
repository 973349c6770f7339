#!/usr/bin/env python3
"""Generate a large benchmark corpus from cuport's bundled fixtures.

Usage: make_corpus.py OUT_DIR [--files N] [--file-kib K]

Each generated file concatenates fixture sources of one language (CUDA/C++
or Python) until it reaches about K KiB, with kernel and function names
suffixed per file so that no two files are identical. Files are spread over
nested directories the way a real code base is. Standard library only.
"""
import argparse
import os
import re
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
C_FAMILY = {".cu", ".cuh", ".cpp", ".h"}


def sources(suffixes):
    return [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.rglob("*")) if p.suffix in suffixes]


def vary(text, index):
    # Rename definitions so every file is distinct; CUDA API names stay.
    return re.sub(r"\b(\w+_kernel|reduce_sum|weighted_sum|activate|main|train|evaluate)\b",
                  lambda m: f"{m.group(1)}_{index}", text)


def build(pool, index, target_bytes):
    parts, size, k = [], 0, index
    while size < target_bytes:
        chunk = vary(pool[k % len(pool)], index)
        parts.append(chunk)
        size += len(chunk.encode("utf-8"))
        k += 1
    return "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--files", type=int, default=5200)
    parser.add_argument("--file-kib", type=int, default=10)
    args = parser.parse_args()
    c_pool, py_pool = sources(C_FAMILY), sources({".py"})
    if not c_pool or not py_pool:
        sys.exit(f"no fixtures found under {FIXTURES}")
    out = Path(args.out)
    total = 0
    for i in range(args.files):
        python = i % 8 == 7
        directory = out / f"module_{i // 100:03d}" / ("scripts" if python else "src")
        directory.mkdir(parents=True, exist_ok=True)
        name = f"file_{i:05d}.py" if python else f"file_{i:05d}.{('cu', 'cuh', 'cpp', 'h')[i % 4]}"
        text = build(py_pool if python else c_pool, i, args.file_kib * 1024)
        (directory / name).write_text(text, encoding="utf-8")
        total += len(text.encode("utf-8"))
    print(f"{args.files} files, {total / 1e6:.1f} MB in {out}")


if __name__ == "__main__":
    main()
