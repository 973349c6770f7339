// cuport's bridge from CUDA kernels to AMD's HIP-CPU runtime (used when
// HIP_CPU_ROOT is set; issue 27 evidence). Written for cuport. HIP-CPU has
// no `*_sync` intrinsics and no cooperative groups: the shuffles below are
// its older forms, exact for the full-mask calls CUDA code makes (every
// lane of the warp takes part); a kernel using cooperative groups or
// __syncwarp does not compile here and is reported as not run.
#pragma once
#include <hip/hip_runtime.h>
#include <cassert>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef __align__
#define __align__(n) alignas(n)
#endif

// HIP-CPU's wavefront is 64 lanes; CUDA code means 32 (a 32-wide shuffle
// inside a 64-lane wavefront is the same exchange).
#define warpSize 32

template <class T> T __shfl_sync(unsigned, T v, int src, int width = 32) {
  return __shfl(v, src, width);
}
template <class T> T __shfl_xor_sync(unsigned, T v, int mask, int width = 32) {
  return __shfl_xor(v, mask, width);
}
template <class T> T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
  return __shfl_down(v, delta, width);
}
template <class T> T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
  return __shfl_up(v, delta, width);
}
template <class T> T __ldcs(const T* p) { return *p; }
template <class T> void __stcs(T* p, T v) { *p = v; }
template <class T> void __stcg(T* p, T v) { *p = v; }

namespace cuport {
// The launch's dynamic shared memory, as HIP-CPU's HIP_DYNAMIC_SHARED
// provides it (one buffer per worker thread, sized for the launch).
inline void* dynamic_shared() {
  HIP_DYNAMIC_SHARED(unsigned char, cuport_dynamic);
  return cuport_dynamic;
}
}  // namespace cuport
