#!/usr/bin/env bash
# Builds the include tree hipBLASLt installs (include/hipblaslt/*.h), from
# ROCm/hipBLASLt at a release tag, with the two generated headers made by
# CMake itself as hipBLASLt's library/CMakeLists.txt makes them
# (configure_file of hipblaslt-version.h.in, generate_export_header). Debian
# packages no hipBLASLt, and llm.c's port includes <hipblaslt/hipblaslt.h>.
# Usage: tests/corpus/hipblaslt_headers.sh HIPBLASLT_CHECKOUT TAG OUT
#   HIPBLASLT_CHECKOUT: a clone (or bare mirror) of github.com/ROCm/hipBLASLt
#   TAG: e.g. rocm-5.7.1 (the ROCm release of Debian trixie's HIP stack)
# Writes OUT/include/hipblaslt; pass OUT/include to corpus_check.py's
# --hip-include. Needs git and cmake.
set -euo pipefail
repo=${1:?usage: hipblaslt_headers.sh HIPBLASLT_CHECKOUT TAG OUT}
tag=${2:?usage: hipblaslt_headers.sh HIPBLASLT_CHECKOUT TAG OUT}
out=$(mkdir -p "${3:?usage: hipblaslt_headers.sh HIPBLASLT_CHECKOUT TAG OUT}" && cd "$3" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$repo" archive "$tag" library/include CMakeLists.txt | tar -x -C "$work"
# The version rocm_setup_version() is given in the top-level CMakeLists.txt.
version=$(sed -n 's/^set(VERSION_STRING "\([0-9.]*\)")$/\1/p' "$work/CMakeLists.txt")
[ -n "$version" ] || { echo "hipblaslt_headers.sh: no VERSION_STRING in $tag's CMakeLists.txt" >&2; exit 1; }
mkdir -p "$work/project"
cat > "$work/project/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.5)
project(hipblaslt VERSION $version LANGUAGES C)
set(hipblaslt_VERSION_TWEAK 0)
configure_file("$work/library/include/hipblaslt-version.h.in"
               "$out/include/hipblaslt/hipblaslt-version.h")
file(WRITE "\${CMAKE_BINARY_DIR}/empty.c" "")
add_library(hipblaslt SHARED "\${CMAKE_BINARY_DIR}/empty.c")
include(GenerateExportHeader)
generate_export_header(hipblaslt EXPORT_FILE_NAME "$out/include/hipblaslt/hipblaslt-export.h")
EOF
rm -rf "$out/include/hipblaslt"
mkdir -p "$out/include/hipblaslt"
cmake -S "$work/project" -B "$work/build" >/dev/null
find "$work/library/include" -maxdepth 1 -type f \( -name '*.h' -o -name '*.hpp' \) \
  -exec cp {} "$out/include/hipblaslt/" \;
echo "hipBLASLt $tag ($version) headers in $out/include/hipblaslt:"
ls "$out/include/hipblaslt"
