#!/usr/bin/env bash
# Builds the header tree a ROCm build of PyTorch 1.13.1 installs
# (torch/include with ATen/hip, c10/hip and ATen/hip/impl/*MasqueradingAsCUDA.h)
# from vendor files only, for compiling HIP-ported PyTorch extensions with
# Debian's hipcc (HIP 5.2.3; PyTorch 1.13 was built for ROCm 5.2):
#   - Debian bookworm libtorch-dev and python3-torch 1.13.1+dfsg-4 (the CUDA
#     headers, the Masquerading headers, and PyTorch's own hipify);
#   - pybind11-dev, libgoogle-glog-dev, libgflags-dev (headers Debian's
#     c10 configuration includes);
#   - three files of pytorch/pytorch, fetched by you into PYTORCH_FILES:
#       tools/amd_build/build_amd.py            @0119c2052192720d6fe53677e485675727edb8c4
#       aten/src/ATen/cuda/CUDAConfig.h.in      @2ed5f27041408eb48471f3d379fa97d1e7cd80ae
#       c10/cuda/impl/cuda_cmake_macros.h.in    @ea5cd3606542b2ea3a4d3fe9359947e1d6184fac
# PyTorch's hipify is run over the headers as build_amd.py runs it over the
# sources (its includes/ignores lists), then the configure_file() steps of a
# USE_ROCM build fill HIPConfig.h and hip_cmake_macros.h.
# Usage: tests/corpus/rocm_torch_headers.sh OUT PYTORCH_FILES
# Writes OUT/include (the torch/include layout) and OUT/deps/include.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
files=$(cd "${2:?usage: rocm_torch_headers.sh OUT PYTORCH_FILES}" && pwd)
work="$out/build"
rm -rf "$work" "$out/include" "$out/deps"
mkdir -p "$work/debs" "$work/root" "$work/src/aten/src" "$work/py"
(cd "$work/debs" && apt-get download libtorch-dev=1.13.1+dfsg-4 python3-torch=1.13.1+dfsg-4 \
  pybind11-dev libgoogle-glog-dev libgflags-dev >/dev/null)
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/root"; done
inc="$work/root/usr/include"
# hipify's rules are keyed on PyTorch's source paths.
cp -a "$inc/ATen" "$work/src/aten/src/ATen"
cp -a "$inc/c10" "$inc/torch" "$inc/caffe2" "$work/src/"
cp "$files/aten/src/ATen/cuda/CUDAConfig.h.in" "$work/src/aten/src/ATen/cuda/"
cp "$files/c10/cuda/impl/cuda_cmake_macros.h.in" "$work/src/c10/cuda/impl/"
# PyTorch's hipify takes the ROCm version from rocm-core's rocm_version.h,
# which Debian does not ship; without it, it writes pre-5.2 include paths
# (<rocblas.h>). A copy of the tool reads the installed hipcc's version.
cp -a "$work/root/usr/lib/python3/dist-packages/torch/utils/hipify" "$work/py/hipify"
rocm_version=$(dpkg-query -W -f='${Version}' hipcc | sed 's/-.*//')
sed -i "s/^rocm_version = (0, 0, 0)\$/rocm_version = ($(echo "$rocm_version" | tr . ,))/" \
  "$work/py/hipify/cuda_to_hip_mappings.py"
grep -q "^rocm_version = ($(echo "$rocm_version" | tr . ,))" "$work/py/hipify/cuda_to_hip_mappings.py"
python3 "$here/hipify_torch_headers.py" "$work/py" "$files/tools/amd_build/build_amd.py" "$work/src"
# aten/src/ATen/CMakeLists.txt and c10/hip/CMakeLists.txt of a USE_ROCM build.
settings="-DAT_CUDNN_ENABLED=0 -DAT_ROCM_ENABLED=1 -DAT_MAGMA_ENABLED=1 -DNVCC_FLAGS_EXTRA= \
  -DC10_CUDA_BUILD_SHARED_LIBS=ON -DC10_HIP_BUILD_SHARED_LIBS=ON"
for header in aten/src/ATen/hip/HIPConfig.h aten/src/ATen/cuda/CUDAConfig.h c10/hip/impl/hip_cmake_macros.h; do
  printf 'configure_file("%s" "%s")\n' "$work/src/$header.in" "$work/src/$header" > "$work/configure.cmake"
  # shellcheck disable=SC2086
  cmake $settings -P "$work/configure.cmake"
done
mkdir -p "$out/include" "$out/deps/include"
cp -a "$work/src/aten/src/ATen" "$work/src/c10" "$work/src/torch" "$work/src/caffe2" "$out/include/"
find "$out/include" -name '*.in' -delete
cp -a "$inc/pybind11" "$out/include/"            # torch wheels ship it in torch/include
cp -a "$inc/glog" "$inc/gflags" "$out/deps/include/"
rm -rf "$work"
echo "$out/include: $(find "$out/include" -type f | wc -l) headers," \
  "ATen/hip $(find "$out/include/ATen/hip" -type f | wc -l), c10/hip $(find "$out/include/c10/hip" -type f | wc -l)"
