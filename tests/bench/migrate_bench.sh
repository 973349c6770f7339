#!/usr/bin/env bash
# Benchmark `cuport migrate --to hip --out` against hipify-perl on the same
# corpus, in the same run. hipify-perl is not part of cuport: pass the path
# of `bin/hipify-perl` from a local checkout of ROCm's HIPIFY repository.
# Usage: tests/bench/migrate_bench.sh CORPUS_DIR [HIPIFY_PERL]
# CORPUS_DIR: a tree of real CUDA sources (e.g. the .cu/.cuh/.cpp/.h files of
# NVIDIA's cuda-samples, about 9.7 MB).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
corpus=${1:?usage: migrate_bench.sh CORPUS_DIR [HIPIFY_PERL]}
hipify=${2:-}
cargo build --release -p cuport_cli --manifest-path "$root/Cargo.toml" >/dev/null
bin="${CARGO_TARGET_DIR:-$root/target}/release/cuport"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "corpus: $(find "$corpus" -type f | wc -l) files, $(du -sb "$corpus" | cut -f1) bytes, $(nproc) cores"
for run in 1 2 3; do
  rm -rf "$out/ported"
  # Each time is also kept (seconds only) for the ratios at the end.
  /usr/bin/time -o "$out/run$run.time" -f "%e %M" "$bin" migrate --quiet --to hip "$corpus" --out "$out/ported" >/dev/null
  read -r seconds kib < "$out/run$run.time"
  echo "cuport migrate --to hip --out: run $run: $seconds s, peak $kib KiB"
done
# The I/O floor (issue 29's speed target: --out within 2x of it): reading
# and writing the same tree with cp, best of three, on the same machine and
# the same warm page cache.
floor=""
for run in 1 2 3; do
  rm -rf "$out/floor"
  /usr/bin/time -o "$out/floor$run.time" -f "%e" cp -r "$corpus" "$out/floor"
  t=$(cat "$out/floor$run.time")
  floor=$(awk -v a="$floor" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
done
echo "I/O floor (cp -r of the tree, best of 3): $floor s"
for run in 1 2 3; do
  awk -v f="$floor" -v c="$(cut -d' ' -f1 "$out/run$run.time")" -v r="$run" \
    'BEGIN { if (f > 0) printf "--out run %s: %.1fx the I/O floor\n", r, c / f; else print "--out run " r ": floor below the timer resolution" }'
done
/usr/bin/time -f "cuport migrate --to hip (dry run, diagnostics only): %e s, peak %M KiB" "$bin" migrate --quiet --to hip "$corpus" >/dev/null
# A re-run over the unchanged tree into the same output (what a porting
# engineer does after editing a rule file), and the fixed start-up cost
# (rule tables, one small file), which bounds what any cache could save.
/usr/bin/time -f "cuport migrate --to hip --out (warm re-run, unchanged tree): %e s, peak %M KiB" "$bin" migrate --quiet --to hip "$corpus" --out "$out/ported" >/dev/null
one=$(mktemp -d); trap 'rm -rf "$out" "$one"' EXIT
printf '__global__ void k(float *x) { x[threadIdx.x] = 0; }\nint main() { float *p; cudaMalloc(&p, 4); k<<<1, 1>>>(p); return 0; }\n' > "$one/one.cu"
/usr/bin/time -f "cuport migrate --to hip (start-up: one 100-byte file): %e s, peak %M KiB" "$bin" migrate --quiet --to hip "$one" >/dev/null
/usr/bin/time -f "cuport migrate --dual --to ascend,hip --out (dual-stack): %e s, peak %M KiB" "$bin" migrate --quiet --dual --to ascend,hip "$corpus" --out "$out/dual" >/dev/null
if [ -n "$hipify" ]; then
  find "$corpus" -type f \( -name '*.cu' -o -name '*.cuh' -o -name '*.cpp' -o -name '*.h' \) > "$out/files"
  # -quiet-warnings: with its warnings on, hipify-perl is about 100x slower still.
  # time writes to a file: hipify-perl's own stderr is discarded.
  /usr/bin/time -o "$out/hipify.time" -f "hipify-perl -quiet-warnings (one invocation): %e s, peak %M KiB" \
    perl "$hipify" -quiet-warnings $(cat "$out/files") </dev/null >"$out/hipify.out" 2>/dev/null
  cat "$out/hipify.time"
  # hipify-perl's time over each --out run's (the issue's target: >= 50x).
  hipify_s=$(sed -n 's/.*invocation): \([0-9.]*\) s.*/\1/p' "$out/hipify.time")
  for run in 1 2 3; do
    awk -v h="$hipify_s" -v c="$(cut -d' ' -f1 "$out/run$run.time")" -v r="$run" \
      'BEGIN { if (c > 0) printf "--out run %s: %.0fx hipify-perl\n", r, h / c }'
  done
fi
