#!/usr/bin/env bash
# Benchmark `cuport scan` on a generated corpus (>= 5,000 files, >= 50 MB).
# Usage: tests/bench/scan_bench.sh [CORPUS_DIR]
# Prints wall time, files/s, MB/s and peak memory for each syntax-check mode.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
corpus=${1:-/tmp/cuport-bench-corpus}
if [ ! -d "$corpus" ]; then
  python3 "$here/make_corpus.py" "$corpus"
fi
cargo build --release -p cuport_cli --manifest-path "$root/Cargo.toml" >/dev/null
bin="${CARGO_TARGET_DIR:-$root/target}/release/cuport"
files=$(find "$corpus" -type f | wc -l)
bytes=$(du -sb "$corpus" | cut -f1)
echo "corpus: $files files, $((bytes / 1000000)) MB, $(nproc) cores"
"$bin" scan --quiet --syntax-check off "$corpus" >/dev/null  # warm the page cache
for mode in off kernels all; do
  for run in 1 2 3; do
    /usr/bin/time -f "%e %M" -o /tmp/cuport-bench-time "$bin" scan --quiet --format json --syntax-check "$mode" "$corpus" >/dev/null
    read -r secs kib < /tmp/cuport-bench-time
    awk -v m="$mode" -v r="$run" -v s="$secs" -v k="$kib" -v f="$files" -v b="$bytes" \
      'BEGIN { printf "syntax-check=%-7s run %d: %.2f s, %.0f files/s, %.1f MB/s, peak %.0f MiB\n", m, r, s, f / s, b / s / 1e6, k / 1024 }'
  done
done
