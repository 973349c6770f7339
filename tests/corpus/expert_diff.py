#!/usr/bin/env python3
"""Compare cuport's HIP port of a benchmark suite with the suite's own expert HIP ports.

HeCBench (github.com/zjin-lcf/HeCBench) keeps each benchmark as `src/<name>-cuda` and, written
by hand, `src/<name>-hip`. This ports every `-cuda` directory that has a `-hip` twin with
`cuport migrate --to hip` (and, when given, with hipify-perl), diffs each ported source file
against the expert's file of the same path, and reports:

- the lines that differ from the expert port (added plus removed, as `diff` counts them), in all
  and after ignoring whitespace, per tool;
- the lines cuport writes that the expert does not, and the reverse, most frequent first, with
  identifiers and numbers kept: what a reviewer reads in the hunks (issue 29, item 6).

Nothing here is committed from HeCBench; pass a checkout. Python 3.11, standard library only.

    tests/corpus/expert_diff.py --src HeCBench/src --cuport target/release/cuport \
        [--hipify-perl HIPIFY/bin/hipify-perl] [--sample 100 --seed 29] [--json out.json]
"""
import argparse
import collections
import difflib
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCES = {".cu", ".cuh", ".h", ".hpp", ".cpp", ".c", ".cc", ".inc"}


def arguments():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--src", type=Path, required=True, help="HeCBench's src directory")
    p.add_argument("--cuport", type=Path, required=True)
    p.add_argument("--hipify-perl", type=Path, help="bin/hipify-perl of a ROCm/HIPIFY checkout")
    p.add_argument("--sample", type=int, default=0, help="benchmarks to draw (0: all pairs)")
    p.add_argument("--seed", type=int, default=29)
    p.add_argument("--only", nargs="*", default=[], help="these benchmarks (names without -cuda)")
    p.add_argument("--top", type=int, default=40, help="most frequent differing lines to print")
    p.add_argument("--json", type=Path)
    return p.parse_args()


def pairs(src, sample, seed, only):
    names = sorted(d.name[: -len("-cuda")] for d in src.glob("*-cuda") if (src / (d.name[:-5] + "-hip")).is_dir())
    if only:
        return [n for n in names if n in set(only)]
    if sample and sample < len(names):
        return sorted(random.Random(seed).sample(names, sample))
    return names


def source_files(root):
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and p.suffix in SOURCES)


def port_cuport(cuport, cuda_dir, out_dir):
    run = subprocess.run(
        [str(cuport), "migrate", "--quiet", "--to", "hip", str(cuda_dir), "--out", str(out_dir)],
        capture_output=True, text=True, timeout=300,
    )
    # Exit 1 means diagnostics were reported; the files are written.
    return run.returncode in (0, 1)


def port_hipify(perl_script, cuda_dir, out_dir):
    for rel in source_files(cuda_dir):
        run = subprocess.run(
            ["perl", str(perl_script), "-quiet-warnings", str(cuda_dir / rel)],
            capture_output=True, timeout=300,
        )
        dst = out_dir / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(run.stdout if run.returncode == 0 else (cuda_dir / rel).read_bytes())
    return True


def read_lines(path):
    return path.read_bytes().decode("utf-8", "replace").splitlines()


def diff_lines(ported, expert):
    """Lines only in `ported` and lines only in `expert`, as difflib aligns them."""
    ours, theirs = [], []
    matcher = difflib.SequenceMatcher(None, ported, expert, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            ours.extend(ported[i1:i2])
            theirs.extend(expert[j1:j2])
    return ours, theirs


def without_whitespace(lines):
    return ["".join(line.split()) for line in lines]


def compare(ported_dir, expert_dir, cuda_dir):
    """Per tool and benchmark: differing lines, whitespace-blind differing lines, and the lines."""
    total = blind = files = 0
    ours_all, theirs_all = [], []
    for rel in source_files(cuda_dir):
        expert = expert_dir / rel
        ported = ported_dir / rel
        if not expert.is_file() or not ported.is_file():
            continue
        files += 1
        a, b = read_lines(ported), read_lines(expert)
        ours, theirs = diff_lines(a, b)
        total += len(ours) + len(theirs)
        o2, t2 = diff_lines(without_whitespace(a), without_whitespace(b))
        blind += len(o2) + len(t2)
        ours_all += [l.strip() for l in ours if l.strip()]
        theirs_all += [l.strip() for l in theirs if l.strip()]
    return {"files": files, "lines": total, "lines_ignoring_whitespace": blind}, ours_all, theirs_all


def main():
    args = arguments()
    names = pairs(args.src, args.sample, args.seed, args.only)
    # Each tool ports a -cuda folder into an output folder.
    tools = {"cuport": lambda cuda, out: port_cuport(args.cuport, cuda, out)}
    if args.hipify_perl:
        tools["hipify-perl"] = lambda cuda, out: port_hipify(args.hipify_perl, cuda, out)
    results = {}
    written = {tool: collections.Counter() for tool in tools}
    missed = {tool: collections.Counter() for tool in tools}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            cuda_dir, expert_dir = args.src / f"{name}-cuda", args.src / f"{name}-hip"
            results[name] = {}
            for tool, port in tools.items():
                out = Path(tmp) / tool / name
                if not port(cuda_dir, out):
                    results[name][tool] = {"error": True}
                    continue
                counts, ours, theirs = compare(out, expert_dir, cuda_dir)
                results[name][tool] = counts
                written[tool].update(ours)
                missed[tool].update(theirs)
                shutil.rmtree(out, ignore_errors=True)
    summary = {
        tool: {
            key: sum(r[tool].get(key, 0) for r in results.values())
            for key in ("files", "lines", "lines_ignoring_whitespace")
        }
        for tool in tools
    }
    print(f"{len(names)} benchmarks with an expert HIP port")
    for tool, s in summary.items():
        print(f"{tool}: {s['files']} files compared; {s['lines']} lines differ from the expert port, "
              f"{s['lines_ignoring_whitespace']} ignoring whitespace")
    for tool in tools:
        print(f"\n{tool}: lines it writes that the expert port does not (most frequent first)")
        for line, n in written[tool].most_common(args.top):
            print(f"  {n:5d}  {line[:150]}")
        print(f"\n{tool}: lines the expert port has that it does not")
        for line, n in missed[tool].most_common(args.top):
            print(f"  {n:5d}  {line[:150]}")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "benchmarks": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
