#!/usr/bin/env bash
# One-shot check of the `cuda` backend on a machine with an NVIDIA GPU:
# build cuport (release), run the cuda unit test (gemm + softmax against
# the f64 oracle), then `cuport regress run` on regress/gpu/cuda-vs-cpu.toml
# (gemm, softmax, layer norm, elementwise, reductions, conv2d; cpu vs cuda)
# and print the JSON summary; then the dual-stack CUDA path check
# (tests/gpu/dual-cuda-check.sh). Exit status: cuport's gate (0 pass, 1
# regression, 2 harness error), 3 when a cuda leg did not run, 4 when the
# dual-stack CUDA path check failed.
#
#   regress/gpu-check.sh [OUT_DIR]     # default OUT_DIR: ${OUT:-/tmp/cuport-gpu-check}
#   CUPORT_BIN=path/to/cuport regress/gpu-check.sh   # reuse a build
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-/tmp/cuport-gpu-check}}"
mkdir -p "$out"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi not found"
ls /usr/local/cuda*/lib64/libnvrtc.so* /usr/lib/x86_64-linux-gnu/libnvrtc.so* 2>/dev/null | head -3 || true

if [ -n "${CUPORT_BIN:-}" ]; then
  bin="$CUPORT_BIN"   # a prebuilt cuport: skip the build and the unit test
else
  echo "== build (release)"
  cargo build --release -p cuport_cli 2>&1 | tail -2
  bin="$CARGO_TARGET_DIR/release/cuport"
  echo "== cuda unit test (gemm + softmax vs oracle)"
  cargo test --release -p cuport_regress --lib backend::cuda -- --nocapture 2>&1 | tail -8 | tee "$out/unit-test.txt"
fi

echo "== cuport regress run (cpu vs cuda)"
set +e
"$bin" regress run regress/gpu/cuda-vs-cpu.toml --verbose \
  --json "$out/report.json" --markdown "$out/summary.md" --junit "$out/junit.xml" \
  >"$out/run.txt" 2>&1
status=$?
set -e
cat "$out/run.txt"

echo "== summary (exit $status)"
set +e
python3 - "$out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(json.dumps({"summary": r["summary"], "cross_geomean": r.get("cross_geomean")}, indent=1))
for c in r["cases"]:
    legs = {l["backend"]: (l.get("device") or {}).get("model") for l in c["legs"]}
    med = {l["backend"]: (l["regions"].get("op") or {}).get("median") for l in c["legs"]}
    print(c["name"], c["outcome"], legs, med)
    for chk in c["checks"]:
        if chk["outcome"] not in ("pass",):
            print("   ", chk["name"], chk["outcome"], chk["message"].splitlines()[0][:200])
cuda = [l.get("device") for c in r["cases"] for l in c["legs"] if l["backend"] == "cuda" and l.get("device")]
print("cuda device:", json.dumps(cuda[0] if cuda else None))
missing = [c["name"] for c in r["cases"] for l in c["legs"]
           if l["backend"] == "cuda" and l["state"]["state"] != "ok"]
if missing:
    print(f"CUDA legs did not run in {len(missing)} cases: {', '.join(missing)}")
    sys.exit(3)
PY
py=$?
[ "$status" -eq 0 ] && [ "$py" -ne 0 ] && status=3

# The dual-stack shim's CUDA path, in the same device session: every fixture
# program built with nvcc from the original and from the dual source.
echo "== dual-stack CUDA path (tests/gpu/dual-cuda-check.sh)"
CUPORT_BIN="$bin" tests/gpu/dual-cuda-check.sh "$out/dual-cuda"
dual=$?
echo "dual-stack CUDA path check: exit $dual"
[ "$status" -eq 0 ] && [ "$dual" -ne 0 ] && status=4
exit $status
