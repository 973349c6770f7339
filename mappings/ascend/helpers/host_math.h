// cuport_max and cuport_min: CUDA's host max and min, for an Ascend port.
// nvcc gives a .cu file's host code global max/min overloads (crt/
// math_functions.hpp of the CUDA toolkit: int, unsigned, long, unsigned long,
// long long, unsigned long long, float, double, and mixed signed/unsigned
// pairs), which compare in the type the usual arithmetic conversions give
// and, for floating point, as fmax/fmin do. The host compiler of an
// AscendCL program has no such functions. These compare in the common type
// of their arguments, the same conversions.
#ifndef CUPORT_HOST_MATH_H
#define CUPORT_HOST_MATH_H

#include <cmath>
#include <type_traits>

namespace cuport_detail {
template <typename T>
inline T host_max(T a, T b, std::true_type) { return std::fmax(a, b); }
template <typename T>
inline T host_max(T a, T b, std::false_type) { return a < b ? b : a; }
template <typename T>
inline T host_min(T a, T b, std::true_type) { return std::fmin(a, b); }
template <typename T>
inline T host_min(T a, T b, std::false_type) { return b < a ? b : a; }
}  // namespace cuport_detail

template <typename A, typename B>
inline typename std::common_type<A, B>::type cuport_max(A a, B b) {
    typedef typename std::common_type<A, B>::type T;
    return cuport_detail::host_max<T>(static_cast<T>(a), static_cast<T>(b),
                                      std::is_floating_point<T>());
}

template <typename A, typename B>
inline typename std::common_type<A, B>::type cuport_min(A a, B b) {
    typedef typename std::common_type<A, B>::type T;
    return cuport_detail::host_min<T>(static_cast<T>(a), static_cast<T>(b),
                                      std::is_floating_point<T>());
}

#endif  // CUPORT_HOST_MATH_H
