// cuport_atomicAdd: CUDA's atomicAdd for half precision and bfloat16
// (__half2 from sm_60, __half from sm_70, cuda_fp16.hpp; __nv_bfloat16 and
// __nv_bfloat162 from sm_80, cuda_bf16.hpp) for a HIP port. HIP declares no
// atomicAdd for any of them (checked: 5.2.3, 6.4.3, 7.2.4; 6.4.3 has
// unsafeAtomicAdd for __half2 and __hip_bfloat162, 7.2.4 for __half too).
//
// Each is a compare-and-swap loop on the aligned 32-bit word that holds the
// value: a pair is that word, a single value one half of it. The sum is
// rounded as HIP's __hadd rounds it. Like CUDA's, each returns the value the
// address held before the addition. A loop is slower than a hardware atomic
// under contention.
//
// Half precision uses only __hadd, __ushort_as_half, __half_as_ushort,
// __low2half, __high2half and __halves2half2, which HIP 5.2.3 has.
// bfloat16 needs hip/hip_bf16.h's __hip_bfloat16 family with those
// functions, which HIP has from 6.2 (ROCm/clr rocm-6.2.0).
#ifndef CUPORT_ATOMIC_HALF_H
#define CUPORT_ATOMIC_HALF_H

#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

#define CUPORT_HIP_HAS_BF16 (HIP_VERSION_MAJOR > 6 || (HIP_VERSION_MAJOR == 6 && HIP_VERSION_MINOR >= 2))
#if CUPORT_HIP_HAS_BF16
#include <hip/hip_bf16.h>
#endif

namespace cuport_detail {

// A 16-bit floating-point type's bits, and its pair type's halves.
template <typename Half> struct half_bits;

template <> struct half_bits<__half> {
    using pair = __half2;
    static __device__ unsigned short of(__half value) { return __half_as_ushort(value); }
    static __device__ __half from(unsigned short bits) { return __ushort_as_half(bits); }
    static __device__ __half low(pair value) { return __low2half(value); }
    static __device__ __half high(pair value) { return __high2half(value); }
    static __device__ pair join(__half low, __half high) { return __halves2half2(low, high); }
};

#if CUPORT_HIP_HAS_BF16
template <> struct half_bits<__hip_bfloat16> {
    using pair = __hip_bfloat162;
    static __device__ unsigned short of(__hip_bfloat16 value) { return __bfloat16_as_ushort(value); }
    static __device__ __hip_bfloat16 from(unsigned short bits) { return __ushort_as_bfloat16(bits); }
    static __device__ __hip_bfloat16 low(pair value) { return __low2bfloat16(value); }
    static __device__ __hip_bfloat16 high(pair value) { return __high2bfloat16(value); }
    static __device__ pair join(__hip_bfloat16 low, __hip_bfloat16 high) {
        return __halves2bfloat162(low, high);
    }
};
#endif

// The value in bits [shift, shift + 16) of a word.
template <typename Half>
__device__ inline Half half_in(unsigned int word, unsigned int shift) {
    return half_bits<Half>::from(static_cast<unsigned short>((word >> shift) & 0xffffu));
}

// The word with `value` added to the value in bits [shift, shift + 16).
template <typename Half>
__device__ inline unsigned int add_to_half(unsigned int word, unsigned int shift, Half value) {
    unsigned int sum = half_bits<Half>::of(__hadd(half_in<Half>(word, shift), value));
    return (word & ~(0xffffu << shift)) | (sum << shift);
}

// A pair: its word, both halves added in one compare-and-swap loop.
template <typename Half>
__device__ inline typename half_bits<Half>::pair add_pair(typename half_bits<Half>::pair* address,
                                                          typename half_bits<Half>::pair value) {
    using bits = half_bits<Half>;
    static_assert(sizeof(typename bits::pair) == sizeof(unsigned int), "a pair is one word");
    unsigned int* word = reinterpret_cast<unsigned int*>(address);
    unsigned int old = *word;
    unsigned int assumed;
    do {
        assumed = old;
        unsigned int low = add_to_half(assumed, 0u, bits::low(value));
        old = atomicCAS(word, assumed, add_to_half(low, 16u, bits::high(value)));
    } while (assumed != old);
    return bits::join(half_in<Half>(old, 0u), half_in<Half>(old, 16u));
}

// One value: the word that holds it, with the other half left as it is.
template <typename Half>
__device__ inline Half add_one(Half* address, Half value) {
    unsigned long long at = reinterpret_cast<unsigned long long>(address);
    unsigned int* word = reinterpret_cast<unsigned int*>(at & ~3ull);
    unsigned int shift = (at & 2ull) ? 16u : 0u;
    unsigned int old = *word;
    unsigned int assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed, add_to_half(assumed, shift, value));
    } while (assumed != old);
    return half_in<Half>(old, shift);
}

}  // namespace cuport_detail

__device__ inline __half cuport_atomicAdd(__half* address, __half value) {
    return cuport_detail::add_one(address, value);
}

__device__ inline __half2 cuport_atomicAdd(__half2* address, __half2 value) {
    return cuport_detail::add_pair<__half>(address, value);
}

#if CUPORT_HIP_HAS_BF16
__device__ inline __hip_bfloat16 cuport_atomicAdd(__hip_bfloat16* address, __hip_bfloat16 value) {
    return cuport_detail::add_one(address, value);
}

__device__ inline __hip_bfloat162 cuport_atomicAdd(__hip_bfloat162* address, __hip_bfloat162 value) {
    return cuport_detail::add_pair<__hip_bfloat16>(address, value);
}
#endif

#endif  // CUPORT_ATOMIC_HALF_H
