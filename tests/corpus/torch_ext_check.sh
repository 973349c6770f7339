#!/usr/bin/env bash
# Ports a PyTorch C++/CUDA extension to HIP with cuport and compiles every
# ported .cu (as HIP) and .cpp (host) with Debian's hipcc, -fsyntax-only,
# against the ROCm header tree of rocm_torch_headers.sh, with the flags
# torch.utils.cpp_extension (1.13.1) passes on ROCm. The original sources
# are compiled the same way first, as the baseline.
# Usage: tests/corpus/torch_ext_check.sh TORCH_TREE CUPORT EXTENSION_SRC [-I DIR | -isystem DIR | -D X]...
# TORCH_TREE: the OUT of rocm_torch_headers.sh. The extra flags name what
# the extension and PyTorch's headers need beyond Debian's hipcc: rocThrust
# (c10/util/complex.h includes <thrust/complex.h> under hipcc), rocBLAS
# (ATen/hip/HIPContext.h), hipCUB, the extension's own third-party headers.
set -uo pipefail
tree=$(cd "${1:?usage: torch_ext_check.sh TORCH_TREE CUPORT EXTENSION_SRC [FLAGS]...}" && pwd)
cuport=$2
src=$(cd "$3" && pwd)
shift 3
extra=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cuport" migrate --quiet --to hip "$src" --out "$work/ported" > "$work/migrate.log" 2>&1 || {
  cat "$work/migrate.log"; exit 1; }
python_include=$(python3 -c 'import sysconfig; print(sysconfig.get_path("include", scheme="posix_prefix"))')
includes=(-I"$tree/include" -I"$tree/include/torch/csrc/api/include" -I"$tree/include/TH"
  -I"$tree/include/THC" -I"$tree/include/THH" -isystem "$tree/deps/include" -I"$python_include")
# torch/utils/cpp_extension.py 1.13.1: COMMON_HIP_FLAGS, COMMON_HIPCC_FLAGS,
# the pybind11 ABI defines, TORCH_EXTENSION_NAME, _GLIBCXX_USE_CXX11_ABI
# (0 in pip wheels); -fno-gpu-rdc and the offload architecture from
# _get_rocm_arch_flags.
common=(-std=c++17 -fsyntax-only -fPIC -D__HIP_PLATFORM_HCC__=1 -DUSE_ROCM=1 -DWITH_CUDA -DWITH_HIP
  -DTORCH_API_INCLUDE_EXTENSION_H -DPYBIND11_COMPILER_TYPE='"_gcc"' -DPYBIND11_STDLIB='"_libstdcpp"'
  -DPYBIND11_BUILD_ABI='"_cxxabi1011"' -DTORCH_EXTENSION_NAME=ext -D_GLIBCXX_USE_CXX11_ABI=0
  -Wno-deprecated-builtins -Wno-deprecated-declarations)
device=(-x hip -DCUDA_HAS_FP16=1 -D__HIP_NO_HALF_OPERATORS__=1 -D__HIP_NO_HALF_CONVERSIONS__=1
  --offload-arch=gfx90a -fno-gpu-rdc)
mkdir -p "$work/tmp"   # clang leaves a folder per HIP compile in TMPDIR
compile() { # root file -> prints "ok" or the first error
  local root=$1 file=$2 kind=()
  case $file in *.cu) kind=("${device[@]}") ;; *) kind=(-x c++) ;; esac
  (cd "$root/$(dirname "$file")" && TMPDIR="$work/tmp" hipcc "${common[@]}" "${kind[@]}" "${includes[@]}" \
    -I"$root" -I"$root/$(dirname "$file")" "${extra[@]}" "$(basename "$file")" > "$work/out" 2>&1)
  local rc=$?
  if [ $rc -eq 0 ]; then echo ok; else grep -m1 -E 'error' "$work/out" || echo "exit $rc"; fi
}
files=$(cd "$src" && find . -type f \( -name '*.cu' -o -name '*.cpp' \) -not -path './third_party/*' | sed 's|^\./||' | sort)
passed_before=0; passed_after=0; total=0
for file in $files; do
  total=$((total + 1))
  before=$(compile "$src" "$file")
  after=$(compile "$work/ported" "$file")
  [ "$before" = ok ] && passed_before=$((passed_before + 1))
  [ "$after" = ok ] && passed_after=$((passed_after + 1))
  printf '%s\n  as written: %s\n  ported:     %s\n' "$file" "$before" "$after"
done
echo "$(basename "$src"): $total units; hipcc compiles $passed_before as written, $passed_after after the port"
echo "cuport: $(grep -E '^Sites:' "$work/migrate.log" 2>/dev/null || true)"
