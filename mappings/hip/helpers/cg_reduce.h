// cuport_cg::reduce and its operators: CUDA's cooperative_groups::reduce
// (cooperative_groups/reduce.h) for a HIP port. No HIP release checked
// (5.2.3, 6.4.3, 7.2.4) has cooperative_groups::reduce or the operators
// CUDA's reduce.h brings (plus, less, greater, bit_and, bit_or, bit_xor).
//
// reduce combines every lane's value with a butterfly over the tile's
// shfl_xor, so every lane gets the result, as CUDA's reduce gives it. It
// needs a thread_block_tile (a power-of-two size up to the wavefront):
// CUDA's reduce also takes a coalesced_group, for which this does not
// compile. The order in which values are combined follows the butterfly,
// so a floating-point sum may differ from CUDA's in its last bits.
//
// CUDA's reduce also takes a trivially copyable struct (llm.c's softmax
// reduces a {max, sum} pair), while HIP's tile shfl_xor takes integers and
// floating-point values only (a static_assert): such a value is shuffled
// as 32-bit words.
#ifndef CUPORT_CG_REDUCE_H
#define CUPORT_CG_REDUCE_H

#include <hip/hip_cooperative_groups.h>
#include <type_traits>

namespace cuport_cg {

template <typename T> struct plus {
    __host__ __device__ T operator()(const T& a, const T& b) const { return a + b; }
};
// CUDA's less and greater give the smaller and the larger value (a min and
// a max), not a comparison.
template <typename T> struct less {
    __host__ __device__ T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <typename T> struct greater {
    __host__ __device__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <typename T> struct bit_and {
    __host__ __device__ T operator()(const T& a, const T& b) const { return a & b; }
};
template <typename T> struct bit_or {
    __host__ __device__ T operator()(const T& a, const T& b) const { return a | b; }
};
template <typename T> struct bit_xor {
    __host__ __device__ T operator()(const T& a, const T& b) const { return a ^ b; }
};

namespace detail {

template <typename Tile, typename T>
__device__ T shfl_xor(const Tile& tile, T value, unsigned int mask, std::true_type) {
    return tile.shfl_xor(value, mask);
}

template <typename Tile, typename T>
__device__ T shfl_xor(const Tile& tile, T value, unsigned int mask, std::false_type) {
    static_assert(std::is_trivially_copyable<T>::value,
                  "cuport_cg::reduce shuffles the value as its bytes: T must be trivially copyable");
    constexpr unsigned int words = (sizeof(T) + sizeof(int) - 1) / sizeof(int);
    int bits[words] = {};
    __builtin_memcpy(bits, &value, sizeof(T));
    for (unsigned int w = 0; w < words; ++w) {
        bits[w] = tile.shfl_xor(bits[w], mask);
    }
    __builtin_memcpy(&value, bits, sizeof(T));
    return value;
}

}  // namespace detail

template <typename Tile, typename T, typename Op>
__device__ T reduce(const Tile& tile, T value, Op op) {
    for (unsigned int mask = tile.size() / 2; mask > 0; mask /= 2) {
        T other = detail::shfl_xor(tile, value, mask, std::is_arithmetic<T>());
        value = op(value, other);
    }
    return value;
}

}  // namespace cuport_cg

#endif  // CUPORT_CG_REDUCE_H
