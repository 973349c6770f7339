#!/usr/bin/env bash
# Sets up Debian sid's ROCm 6.4 HIP toolchain (hipcc 7.0.2, clang 21, HIP
# 6.4.3 headers and the ROCm library headers sid packages) on a Debian
# bookworm machine, without installing anything: bookworm's C library is too
# old for sid's binaries, so the packages are unpacked under OUT, clang and
# hipcc get OUT's dynamic loader (patchelf), and two wrappers point them at
# OUT. What it gives is a syntax check (`-fsyntax-only`) against a current
# ROCm release; nothing is linked or run.
# Usage: tests/corpus/sid_rocm_toolchain.sh OUT
#   then: corpus_check.py --mode hip --hipcc OUT/hipcc --rocm-version 6.4.3 ...
# Needs curl, dpkg-deb (dpkg -x), patchelf (apt-get install patchelf) and
# python3; reaches http://deb.debian.org.
set -euo pipefail
out=$(mkdir -p "${1:?usage: sid_rocm_toolchain.sh OUT}" && cd "$1" && pwd)
root="$out/root"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$out/debs" "$root" "$out/clangbin"
curl -sSf -o "$out/Packages.xz" "$mirror/dists/sid/main/binary-amd64/Packages.xz"
# The compiler and its run-time libraries, HIP, and the ROCm libraries'
# headers (each -dev package's include/ tree).
packages=(
  clang-21 libclang-cpp21 libllvm21 libclang-common-21-dev libomp-21-dev rocm-device-libs-21 hipcc
  libc6 libstdc++6 libgcc-s1 libedit2 libffi8 libxml2-16 libz3-4 libzstd1 zlib1g libbsd0 libmd0 libtinfo6 liblzma5
  libamdhip64-dev libhsa-runtime-dev libamd-comgr-dev
  libhipblas-dev libhipblas-common-dev libhipblaslt-dev librocblas-dev libhipcub-dev librocprim-dev librocthrust-dev
  libhipfft-dev librocfft-dev libhiprand-dev librocrand-dev libhipsparse-dev librocsparse-dev libhipsolver-dev librocsolver-dev
)
python3 - "$out/Packages.xz" "$mirror" "$out/debs" "${packages[@]}" <<'EOF'
import lzma, os, subprocess, sys
index, mirror, dest, wanted = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
found, entry = {}, {}
for line in lzma.open(index, "rt"):
    line = line.rstrip("\n")
    if not line:
        if entry.get("Package") in wanted:
            found.setdefault(entry["Package"], entry)
        entry = {}
    elif not line.startswith(" ") and ":" in line:
        key, value = line.split(":", 1)
        entry[key] = value.strip()
missing = [p for p in wanted if p not in found]
if missing:
    sys.exit(f"sid_rocm_toolchain.sh: not in sid's index: {' '.join(missing)}")
for name in wanted:
    path = found[name]["Filename"]
    target = os.path.join(dest, os.path.basename(path))
    if not os.path.exists(target):
        subprocess.run(["curl", "-sSf", "-o", target, f"{mirror}/{path}"], check=True)
    print(name, found[name]["Version"])
EOF
for deb in "$out"/debs/*.deb; do dpkg -x "$deb" "$root"; done
loader="$root/usr/lib64/ld-linux-x86-64.so.2"
libs="$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu"
patchelf --set-interpreter "$loader" "$root/usr/lib/llvm-21/bin/clang"
# hipcc runs its commands through bookworm's sh, so it gets sid's libraries
# through its own rpath, not LD_LIBRARY_PATH.
patchelf --set-interpreter "$loader" --force-rpath --set-rpath "$libs" "$root/usr/bin/hipcc"
# Debian's clang looks for ROCm in /usr, where bookworm's HIP 5.2.3 headers
# are: sid's go first, and the device libraries are sid's.
for name in clang clang++; do
  cat > "$out/clangbin/$name" <<EOF
#!/bin/sh
LD_LIBRARY_PATH=$libs:$root/usr/lib/llvm-21/lib exec $root/usr/lib/llvm-21/bin/clang -resource-dir $root/usr/lib/llvm-21/lib/clang/21 -isystem $root/usr/include --rocm-path=$root/usr --hip-path=$root/usr --rocm-device-lib-path=$root/usr/lib/llvm-21/lib/clang/21/amdgcn/bitcode "\$@"
EOF
  chmod +x "$out/clangbin/$name"
done
cat > "$out/hipcc" <<EOF
#!/bin/sh
export HIP_CLANG_PATH=$out/clangbin HIP_PATH=$root/usr ROCM_PATH=$root/usr HIP_PLATFORM=amd HIP_DEVICE_LIB_PATH=$root/usr/lib/llvm-21/lib/clang/21/amdgcn/bitcode
exec $root/usr/bin/hipcc "\$@"
EOF
chmod +x "$out/hipcc"
# The check the wrappers exist for: HIP 6, not the host's HIP 5.2.3.
printf '#include <hip/hip_runtime.h>\n#if HIP_VERSION_MAJOR != 6\n#error not HIP 6\n#endif\n' > "$out/version_check.hip"
"$out/hipcc" -fsyntax-only --offload-arch=gfx90a "$out/version_check.hip" 2>/dev/null
echo "hipcc: $out/hipcc ($("$out/hipcc" --version 2>/dev/null | sed -n 's/^HIP version: //p'))"
