#!/usr/bin/env bash
# Ports a CMake CUDA project to HIP with cuport, then configures and builds
# the port with CMake's HIP language and Debian's ROCm (hipcc 5.2.3,
# clang-15). Debian splits ROCm over /usr, so a root holding the one link
# CMake's HIP language looks for (lib/cmake/hip-lang) stands in for
# /opt/rocm, as crates/cuport_rewrite/tests/cmake_glob.rs does.
# Usage: tests/corpus/cmake_hip_build.sh CUPORT PROJECT [CMAKE ARGS]...
set -euo pipefail
cuport=$1
src=$(cd "$2" && pwd)
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cuport" migrate --quiet --to hip --hip-arch gfx90a "$src" --out "$work/tree" > "$work/migrate.log" 2>&1 || {
  cat "$work/migrate.log"; exit 1; }
diff -ru "$src" "$work/tree" | grep -E '^[-+][^-+]' | grep -iE 'cmake|project|language|hip|cuda|gpu-rdc|arch' || true
mkdir -p "$work/rocm/lib/cmake" "$work/tmp"
ln -s /usr/lib/x86_64-linux-gnu/cmake/hip-lang "$work/rocm/lib/cmake/hip-lang"
export TMPDIR="$work/tmp"   # clang leaves a folder per HIP compile in TMPDIR
CMAKE_PREFIX_PATH=/usr/lib/x86_64-linux-gnu/cmake cmake -S "$work/tree" -B "$work/build" \
  -DCMAKE_HIP_COMPILER_ROCM_ROOT="$work/rocm" -DCMAKE_HIP_COMPILER=clang++-15 \
  -DCMAKE_HIP_FLAGS="--rocm-path=/usr --hip-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode" \
  "$@" > "$work/configure.log" 2>&1 || { tail -20 "$work/configure.log"; echo "configure FAILED"; exit 1; }
echo "configured: $(grep -m1 'The HIP compiler identification' "$work/configure.log")"
cmake --build "$work/build" -j2 > "$work/build.log" 2>&1 || { grep -m5 -E 'error' "$work/build.log"; echo "build FAILED"; exit 1; }
echo "built: $(cd "$work/build" && find . -maxdepth 2 -type f -perm -u+x -not -name '*.sh' -not -path './CMakeFiles/*' | sort | tr '\n' ' ')"
