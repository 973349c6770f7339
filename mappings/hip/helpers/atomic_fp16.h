// cuport_atomicAdd: CUDA's atomicAdd for __half and __half2 (cuda_fp16.hpp;
// __half2 from sm_60, __half from sm_70) for a HIP port. HIP declares no
// atomicAdd for __half or __half2 (checked: 5.2.3, 6.4.3, 7.2.4; 6.4.3 has
// unsafeAtomicAdd for __half2, 7.2.4 for both).
//
// Each is a compare-and-swap loop on the aligned 32-bit word that holds the
// value: a __half2 is that word, a __half one half of it. The sum is
// rounded to half precision as HIP's __hadd rounds it. Like CUDA's, each
// returns the value the address held before the addition. A loop is slower
// than a hardware atomic under contention.
//
// Uses only __hadd, __ushort_as_half, __half_as_ushort, __low2half,
// __high2half and __halves2half2, which HIP 5.2.3's hip/hip_fp16.h has.
#ifndef CUPORT_ATOMIC_FP16_H
#define CUPORT_ATOMIC_FP16_H

#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

namespace cuport_detail {

// The half in bits [shift, shift + 16) of a word, plus `value`, put back
// into the word.
__device__ inline unsigned int add_fp16_half(unsigned int word, unsigned int shift, __half value) {
    unsigned short held = static_cast<unsigned short>((word >> shift) & 0xffffu);
    unsigned int sum = __half_as_ushort(__hadd(__ushort_as_half(held), value));
    return (word & ~(0xffffu << shift)) | (sum << shift);
}

}  // namespace cuport_detail

__device__ inline __half cuport_atomicAdd(__half* address, __half value) {
    unsigned long long at = reinterpret_cast<unsigned long long>(address);
    unsigned int* word = reinterpret_cast<unsigned int*>(at & ~3ull);
    unsigned int shift = (at & 2ull) ? 16u : 0u;
    unsigned int old = *word;
    unsigned int assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed, cuport_detail::add_fp16_half(assumed, shift, value));
    } while (assumed != old);
    return __ushort_as_half(static_cast<unsigned short>((old >> shift) & 0xffffu));
}

__device__ inline __half2 cuport_atomicAdd(__half2* address, __half2 value) {
    static_assert(sizeof(__half2) == sizeof(unsigned int), "a half pair is one word");
    unsigned int* word = reinterpret_cast<unsigned int*>(address);
    __half low = __low2half(value);
    __half high = __high2half(value);
    unsigned int old = *word;
    unsigned int assumed;
    do {
        assumed = old;
        unsigned int sum = cuport_detail::add_fp16_half(assumed, 0u, low);
        old = atomicCAS(word, assumed, cuport_detail::add_fp16_half(sum, 16u, high));
    } while (assumed != old);
    return __halves2half2(__ushort_as_half(static_cast<unsigned short>(old & 0xffffu)),
                          __ushort_as_half(static_cast<unsigned short>(old >> 16)));
}

#endif  // CUPORT_ATOMIC_FP16_H
