#!/usr/bin/env bash
# Fetch the compilers and vendor headers the corpus checks need, from PyPI only, into a cache.
#
#   eval "$(tests/corpus/fetch_toolchains.sh)"        # or: tests/corpus/fetch_toolchains.sh > env.sh
#
# What it puts under $CUPORT_TOOLCHAINS (default ~/.cache/cuport-toolchains):
#   cuda/nvidia/cu13/           nvcc 13.0 (nvidia-cuda-nvcc, -runtime, -crt, -cccl, nvidia-nvvm wheels)
#   cuda-libs/nvidia/*/include  headers of cuBLAS, cuDNN, NCCL (+ cuFFT, cuRAND, cuSPARSE, cuSOLVER,
#                               NVTX, NVML, profiler API, NVRTC unless --minimal); include folders only
#   cann/2.6.0/torch_npu/include, cann/2.14.0/torch_npu/include
#                               AscendCL/HCCL headers from the torch-npu wheels (CANN 8.2.RC1 / 9.1.0)
# Wheels are downloaded one at a time into a temporary dir and deleted after extraction.
# Idempotent: each part has a stamp file recording its package list; a part whose stamp matches
# is skipped (so a CI cache of $CUPORT_TOOLCHAINS makes a rerun take about a second).
#
# stdout: only `export` lines (CUPORT_NVCC, CUPORT_CUDA_INCLUDES, CUPORT_ASCEND_INCLUDES_2_6_0,
# CUPORT_ASCEND_INCLUDES_2_14_0, CUPORT_CANN_2_6_0_INCLUDE, CUPORT_CANN_2_14_0_INCLUDE and, when
# Debian's hipcc is installed, CUPORT_HIPCC); progress goes to stderr.
#
# Options: --minimal   only cuBLAS, cuDNN and NCCL headers besides nvcc
#          --no-cuda   skip nvcc and the CUDA library headers
#          --no-ascend skip the torch-npu headers
#          --check     after fetching, compile a tiny CUDA program and a tiny ACL/HCCL program
# Needs: bash, python3 with pip (any Python >= 3.8: the wheels are fetched for explicit tags), network
# access to PyPI. Disk: about 300 MB after a full run (nvcc 271 MB, headers ~7 MB, torch-npu ~9 MB);
# peak about 800 MB while the largest wheel (cuDNN, ~520 MB) is being unpacked.
set -euo pipefail

T="${CUPORT_TOOLCHAINS:-$HOME/.cache/cuport-toolchains}"
MINIMAL=0; CUDA=1; ASCEND=1; CHECK=0
for arg in "$@"; do
  case "$arg" in
    --minimal) MINIMAL=1 ;;
    --no-cuda) CUDA=0 ;;
    --no-ascend) ASCEND=0 ;;
    --check) CHECK=1 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "fetch_toolchains.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done

PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null || { echo "fetch_toolchains.sh: python3 not found" >&2; exit 1; }
"$PY" -m pip --version >/dev/null 2>&1 || { echo "fetch_toolchains.sh: pip is not available for $PY" >&2; exit 1; }
mkdir -p "$T"
log() { echo "[fetch_toolchains] $*" >&2; }
CLEANUP=()
cleanup() { local d; for d in "${CLEANUP[@]+"${CLEANUP[@]}"}"; do rm -rf "$d"; done; }
trap cleanup EXIT

# Package specs. The CUDA 13.0 family: library versions are the ones shipped with CUDA 13.0.
NVCC_PKGS=(
  'nvidia-cuda-nvcc>=13.0,<13.1' 'nvidia-cuda-runtime>=13.0,<13.1' 'nvidia-cuda-crt>=13.0,<13.1'
  'nvidia-cuda-cccl>=13.0,<13.1' 'nvidia-nvvm>=13.0,<13.1'
)
LIB_PKGS=('nvidia-cublas>=13.0,<13.1' 'nvidia-cudnn-cu13>=9.13,<10' 'nvidia-nccl-cu13>=2.27,<3')
if [ "$MINIMAL" = 0 ]; then
  LIB_PKGS+=(
    'nvidia-cufft>=12.0,<12.1' 'nvidia-curand>=10.4.0,<10.4.1' 'nvidia-cusparse>=12.6,<12.7'
    'nvidia-cusolver>=12.0,<12.1' 'nvidia-nvtx>=13.0,<13.1' 'nvidia-nvml-dev>=13.0,<13.1'
    'nvidia-cuda-profiler-api>=13.0,<13.1' 'nvidia-cuda-nvrtc>=13.0,<13.1'
  )
fi
PLATFORMS=(--platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64)

# extract WHEEL DEST [PREFIX...]: unzip (all members, or those under the prefixes), keeping exec bits.
extract() {
  "$PY" - "$@" <<'EOF'
import os, sys, zipfile
whl, dest, prefixes = sys.argv[1], sys.argv[2], tuple(sys.argv[3:])
n = 0
with zipfile.ZipFile(whl) as z:
    for info in z.infolist():
        name = info.filename
        if prefixes and not any(name.startswith(p) or ("/" + p) in name for p in prefixes):
            continue
        if ".dist-info/" in name and not prefixes:
            continue
        path = z.extract(info, dest)
        mode = (info.external_attr >> 16) & 0o777
        if mode and not info.is_dir():
            os.chmod(path, mode)
        n += 1
print(n)
EOF
}

# fetch_part NAME DEST PREFIX_FILTER PIP_ARGS... -- SPECS...
# Downloads each spec into a temp dir, extracts, deletes the wheel; writes DEST/.stamp-NAME.
fetch_part() {
  local name="$1" dest="$2" filter="$3"; shift 3
  local pipargs=() specs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do pipargs+=("$1"); shift; done
  shift
  specs=("$@")
  local stamp="$dest/.stamp-$name" want
  want="$(printf '%s\n' "${pipargs[@]}" "${specs[@]}" "$filter")"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    log "$name: up to date in $dest"
    return 0
  fi
  mkdir -p "$dest"
  local tmp; tmp="$(mktemp -d "$T/.download.XXXXXX")"
  CLEANUP+=("$tmp")
  local spec whl n
  for spec in "${specs[@]}"; do
    log "$name: pip download $spec"
    if ! "$PY" -m pip download --quiet --no-cache-dir --no-deps --only-binary=:all: \
         "${pipargs[@]}" -d "$tmp" "$spec" >&2; then
      echo "fetch_toolchains.sh: pip download failed for $spec" >&2
      return 1
    fi
    for whl in "$tmp"/*.whl; do
      if [ -n "$filter" ]; then
        n="$(extract "$whl" "$dest" $filter)"
      else
        n="$(extract "$whl" "$dest")"
      fi
      log "$name: $(basename "$whl"): $n files"
      rm -f "$whl"
    done
  done
  rm -rf "$tmp"
  printf '%s' "$want" > "$stamp"
}

START=$(date +%s)
if [ "$CUDA" = 1 ]; then
  fetch_part nvcc "$T/cuda" "" --python-version 3.12 "${PLATFORMS[@]}" -- "${NVCC_PKGS[@]}"
  # nvcc.profile links from $(TOP)/lib64; the wheel ships lib/.
  [ -e "$T/cuda/nvidia/cu13/lib64" ] || ln -s lib "$T/cuda/nvidia/cu13/lib64"
  fetch_part cuda-libs "$T/cuda-libs" "nvidia/cu13/include/ nvidia/cudnn/include/ nvidia/nccl/include/" \
    --python-version 3.12 "${PLATFORMS[@]}" -- "${LIB_PKGS[@]}"
fi
if [ "$ASCEND" = 1 ]; then
  # cp311 wheels exist for both versions; explicit tags make the host Python irrelevant.
  fetch_part torch-npu "$T/cann/2.6.0" "torch_npu/include/ torch_npu/version.py" \
    --python-version 3.11 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -- 'torch-npu==2.6.0'
  fetch_part torch-npu "$T/cann/2.14.0" "torch_npu/include/ torch_npu/version.py" \
    --python-version 3.11 --platform manylinux_2_28_x86_64 -- 'torch-npu==2.14.0'
fi
log "done in $(( $(date +%s) - START )) s; $(du -sh "$T" 2>/dev/null | cut -f1) in $T"

NVCC="$T/cuda/nvidia/cu13/bin/nvcc"
L="$T/cuda-libs/nvidia"
if [ "$CHECK" = 1 ]; then
  tmp="$(mktemp -d)"
  CLEANUP+=("$tmp")
  if [ "$CUDA" = 1 ]; then
    printf '#include <cuda_runtime.h>\n#include <cublas_v2.h>\n#include <cudnn.h>\n#include <nccl.h>\n__global__ void k(float *x) { x[threadIdx.x] += 1.0f; }\nint main() { float *p; cudaMalloc(&p, 64); k<<<1, 16>>>(p); return cudaDeviceSynchronize() != cudaSuccess; }\n' > "$tmp/t.cu"
    "$NVCC" -arch=sm_80 -std=c++17 -I "$L/cu13/include" -I "$L/cudnn/include" -I "$L/nccl/include" -c "$tmp/t.cu" -o "$tmp/t.o" >&2
    log "check: nvcc compiled a kernel with cuBLAS/cuDNN/NCCL headers"
  fi
  if [ "$ASCEND" = 1 ]; then
    printf '#include <acl/acl.h>\n#include <hccl/hccl.h>\nint main() { aclInit(nullptr); void *p; aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST); HcclComm c = nullptr; HcclCommDestroy(c); return 0; }\n' > "$tmp/a.cpp"
    for v in 2.6.0 2.14.0; do
      B="$T/cann/$v/torch_npu/include"
      ${CXX:-g++} -std=c++17 -fsyntax-only -I "$B/third_party/acl/inc" -I "$B/third_party/hccl/inc" -I "$B" "$tmp/a.cpp" >&2
      log "check: g++ compiled an ACL/HCCL program against torch-npu $v headers"
    done
  fi
  rm -rf "$tmp"
fi

if [ "$CUDA" = 1 ]; then
  echo "export CUPORT_NVCC='$NVCC'"
  echo "export CUPORT_CUDA_INCLUDES='$L/cu13/include:$L/cudnn/include:$L/nccl/include'"
fi
if [ "$ASCEND" = 1 ]; then
  for v in 2.6.0 2.14.0; do
    B="$T/cann/$v/torch_npu/include"
    V="${v//./_}"
    echo "export CUPORT_CANN_${V}_INCLUDE='$B'"
    echo "export CUPORT_ASCEND_INCLUDES_${V}='$B/third_party/acl/inc:$B/third_party/hccl/inc:$B'"
  done
fi
if command -v hipcc >/dev/null 2>&1; then
  echo "export CUPORT_HIPCC='$(command -v hipcc)'"
fi
