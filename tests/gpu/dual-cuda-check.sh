#!/usr/bin/env bash
# The CUDA path of the dual-stack shim on a machine with an NVIDIA GPU and
# nvcc: every fixture program is built twice with nvcc, from the original
# source and from `cuport migrate --dual --to ascend,hip` output (default
# backend, CUPORT_BACKEND_CUDA), both are run, and their exit status and
# output (timing lines aside) must agree. Programs whose libraries are not
# installed (cuDNN, NCCL) are reported as skipped, never as passed.
#
#   tests/gpu/dual-cuda-check.sh [OUT_DIR]      # default: ${OUT:-/tmp/cuport-dual-cuda}
#   CUPORT_BIN=path/to/cuport tests/gpu/dual-cuda-check.sh
# Exit status: 0 all built programs agree; 1 a difference or a build that
# failed only for the dual source; 2 no nvcc.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${1:-${OUT:-/tmp/cuport-dual-cuda}}"
rm -rf "$out" && mkdir -p "$out"
command -v nvcc >/dev/null || { echo "nvcc not found: the CUDA path cannot be checked here"; exit 2; }
nvcc --version | tail -2

if [ -n "${CUPORT_BIN:-}" ]; then
  bin="$CUPORT_BIN"
else
  cargo build --release -p cuport_cli 2>&1 | tail -1
  bin="${CARGO_TARGET_DIR:-target}/release/cuport"
fi
"$bin" migrate --quiet --dual --to ascend,hip fixtures --out "$out/dual" >"$out/migrate.txt" 2>&1 \
  || { echo "cuport migrate --dual failed"; cat "$out/migrate.txt"; exit 1; }

# name | sources (relative to the fixture root) | extra nvcc flags
programs=(
  "vector_add|vector_add/vector_add.cu|"
  "reduction|reduction/reduce.cu|"
  "cublas_gemm|cublas_gemm/gemm.cu|-lcublas"
  "cmake_project|cmake_project/src/main.cu cmake_project/src/util.cpp|-Icmake_project/src -lcublas"
  "project_names|project_names/main.cu|-Iproject_names/include -lcublas"
  "header_lib|header_lib/examples/use_ops.cu|-Iheader_lib/include"
  "cudnn_conv|cudnn_conv/conv.cpp|-lcudnn"
  "nccl_allreduce|nccl_allreduce/allreduce.cu|-lnccl"
)

# Output lines that carry timings or addresses differ run to run.
stable() { grep -viE '([0-9.]+ ?(ms|us|s)\b)|GB/s|time|0x[0-9a-f]+' "$1" || true; }

status=0
for entry in "${programs[@]}"; do
  IFS='|' read -r name sources flags <<<"$entry"
  for tree in original dual; do
    root=fixtures; [ "$tree" = dual ] && root="$out/dual"
    # shellcheck disable=SC2086
    (cd "$root" && nvcc -std=c++17 -O2 -arch=native -x cu ${sources} $flags -o "$out/$name.$tree") \
      >"$out/$name.$tree.build.txt" 2>&1
    echo $? >"$out/$name.$tree.build.rc"
  done
  orig_rc=$(cat "$out/$name.original.build.rc"); dual_rc=$(cat "$out/$name.dual.build.rc")
  if [ "$orig_rc" != 0 ]; then
    echo "SKIP $name: the original does not build here ($(head -c 300 "$out/$name.original.build.txt" | tr '\n' ' '))"
    continue
  fi
  if [ "$dual_rc" != 0 ]; then
    echo "FAIL $name: the original builds, the dual source does not:"; head -20 "$out/$name.dual.build.txt"
    status=1; continue
  fi
  for tree in original dual; do
    (cd "$out" && timeout 120 "./$name.$tree" >"$name.$tree.out" 2>&1; echo $? >"$name.$tree.rc")
  done
  if [ "$(cat "$out/$name.original.rc")" != "$(cat "$out/$name.dual.rc")" ] \
     || ! diff <(stable "$out/$name.original.out") <(stable "$out/$name.dual.out") >"$out/$name.diff"; then
    echo "FAIL $name: exit $(cat "$out/$name.original.rc") vs $(cat "$out/$name.dual.rc")"; head -20 "$out/$name.diff"
    status=1
  else
    echo "PASS $name: same exit status ($(cat "$out/$name.original.rc")) and output"
  fi
done
exit $status
