// cuport_atomicAdd: CUDA's atomicAdd for __nv_bfloat16 and __nv_bfloat162
// (cuda_bf16.hpp, sm_80 and later) for a HIP port. HIP declares no
// atomicAdd for __hip_bfloat16 or __hip_bfloat162 (checked: 6.4.3, 7.2.4).
//
// Each is a compare-and-swap loop on the aligned 32-bit word that holds the
// value: a __hip_bfloat162 is that word, a __hip_bfloat16 one half of it.
// The sum is rounded to bfloat16 as HIP's __hadd rounds it. Like CUDA's,
// each returns the value the address held before the addition. A loop is
// slower than a hardware atomic under contention; HIP 6.4.3 and later also
// have unsafeAtomicAdd for __hip_bfloat162 (hardware float atomics, which
// need coarse-grained memory on some GPUs).
//
// Needs hip/hip_bf16.h's __hip_bfloat16 family (HIP 6.2 and later).
#ifndef CUPORT_ATOMIC_BF16_H
#define CUPORT_ATOMIC_BF16_H

#include <hip/hip_runtime.h>
#include <hip/hip_bf16.h>

namespace cuport_detail {

// The bfloat16 in bits [shift, shift + 16) of a word, plus `value`, put
// back into the word.
__device__ inline unsigned int add_bf16_half(unsigned int word, unsigned int shift,
                                             __hip_bfloat16 value) {
    unsigned short held = static_cast<unsigned short>((word >> shift) & 0xffffu);
    unsigned int sum = __bfloat16_as_ushort(__hadd(__ushort_as_bfloat16(held), value));
    return (word & ~(0xffffu << shift)) | (sum << shift);
}

}  // namespace cuport_detail

__device__ inline __hip_bfloat16 cuport_atomicAdd(__hip_bfloat16* address, __hip_bfloat16 value) {
    unsigned long long at = reinterpret_cast<unsigned long long>(address);
    unsigned int* word = reinterpret_cast<unsigned int*>(at & ~3ull);
    unsigned int shift = (at & 2ull) ? 16u : 0u;
    unsigned int old = *word;
    unsigned int assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed, cuport_detail::add_bf16_half(assumed, shift, value));
    } while (assumed != old);
    return __ushort_as_bfloat16(static_cast<unsigned short>((old >> shift) & 0xffffu));
}

__device__ inline __hip_bfloat162 cuport_atomicAdd(__hip_bfloat162* address, __hip_bfloat162 value) {
    static_assert(sizeof(__hip_bfloat162) == sizeof(unsigned int), "a bfloat16 pair is one word");
    unsigned int* word = reinterpret_cast<unsigned int*>(address);
    __hip_bfloat16 low = __low2bfloat16(value);
    __hip_bfloat16 high = __high2bfloat16(value);
    unsigned int old = *word;
    unsigned int assumed;
    do {
        assumed = old;
        unsigned int sum = cuport_detail::add_bf16_half(assumed, 0u, low);
        old = atomicCAS(word, assumed, cuport_detail::add_bf16_half(sum, 16u, high));
    } while (assumed != old);
    return __halves2bfloat162(__ushort_as_bfloat16(static_cast<unsigned short>(old & 0xffffu)),
                              __ushort_as_bfloat16(static_cast<unsigned short>(old >> 16)));
}

#endif  // CUPORT_ATOMIC_BF16_H
