// asc_simt_standin.h -- cuport's own stand-in for what Huawei's bisheng compiler
// provides implicitly when it compiles an Ascend C SIMT source
// (`bisheng x.asc --npu-arch=dav-3510 --enable-simt`).
//
// Purpose: let `g++ -std=c++17 -fsyntax-only` parse a CUDA-shaped SIMT kernel
// together with the REAL, unmodified asc-devkit headers (CANN 9.0.0 / 9.1.0).
//
// Rules this file follows:
//  * it only DECLARES names the compiler provides (keywords/qualifiers, builtin
//    types, builtin variables, builtin functions); no function here has a body
//    (the one exception is dim3's member-wise constructor), so nothing here
//    re-implements vendor semantics and nothing here can be linked or run;
//  * builtin types (half, bfloat16_t, fp8, short vectors) get a layout and
//    declared-only operators so that expressions type-check;
//  * NOTES.md says which devkit header needs each name, and why.
// Requires the devkit headers to be compiled in pure-SIMT mode
// (-D__NPU_COMPILER_INTERNAL_PURE_SIMT__), as `--enable-simt` does.
//
// Use (see NOTES.md / run.sh for the full command):
//   g++ -std=c++17 -fsyntax-only -D__NPU_ARCH__=3510 -D__NPU_COMPILER_INTERNAL_PURE_SIMT__
//       -D__NPU_DEVICE__ -include asc_simt_standin.h -isystem <this dir>
//       -isystem <devkit>/include -isystem <devkit> -isystem <cann>/include x.cpp
#ifndef CUPORT_ASC_SIMT_STANDIN_H
#define CUPORT_ASC_SIMT_STANDIN_H
#pragma GCC system_header  // silence -Wunused-function for the static builtin declarations

#include <cstdint>
#include <cstddef>
#include <cmath>    // glibc declares __expf/__logf/... itself; must come before section 6
#include <cstdlib>
#include <type_traits>  // the devkit's printf impl uses std::is_same_v etc. without including it
// g++ cannot keep a host and a device function of one signature apart, which
// bisheng does: the devkit declares device `bool isfinite(float)` (and isnan,
// isinf, signbit) where libstdc++'s <math.h> has made std's global (cuda-samples'
// helpers include <math.h>). libstdc++'s <math.h> is read first, then the
// devkit's names are spelled apart, so each side keeps its own declaration.
#include <math.h>
#define isfinite cuport_device_isfinite
#define isnan cuport_device_isnan
#define isinf cuport_device_isinf
#define signbit cuport_device_signbit
namespace std {
template <typename T> bool cuport_device_isfinite(T);
template <typename T> bool cuport_device_isnan(T);
template <typename T> bool cuport_device_isinf(T);
template <typename T> bool cuport_device_signbit(T);
}

// ---------------------------------------------------------------------------
// 1. Keywords / qualifiers (bisheng attributes). Empty for g++.
//    __aicore__ must be predefined: impl/utils/sys_macros.h otherwise defines it
//    as `[aicore]`, bisheng attribute syntax that g++ cannot parse.
// ---------------------------------------------------------------------------
#define __aicore__
#define __global__           // kernel entry (user code only)
#define __host__             // documented host qualifier (user code only)
#define __gm__               // address space: global memory
#define __ubuf__             // address space: unified buffer ("shared memory")
#define __launch_bounds__(...)  // user code only; N is not checked

// ---------------------------------------------------------------------------
// 2. Builtin enums used as template arguments of builtins.
// ---------------------------------------------------------------------------
enum class ROUND { R, A, F, C, Z, O, H };
enum class RoundingSaturation { RS_DISABLE_VALUE, RS_ENABLE_VALUE };
enum class LD_L2CacheType : uint32_t { L2_CACHE_HINT_NORMAL_FV = 0 };
enum class ST_L2CacheType : uint32_t { L2_CACHE_HINT_NORMAL_FV = 0 };
enum L1CacheType : uint32_t { NON_CACHEABLE = 0, CACHEABLE = 1 };

// ---------------------------------------------------------------------------
// 3. Builtin scalar types half / bfloat16_t. In bisheng they are native
//    arithmetic types (like clang's _Float16): h op h -> h, h op int -> h,
//    h op float -> float, h op double -> double. A struct with a 16-bit layout
//    and DECLARED (never defined) operators reproduces those typing rules so
//    that overload resolution in the impl headers and in user code type-checks
//    as it would under bisheng; `half / float` must not be ambiguous
//    (impl/simt_api/asc_fp16_impl.h: (half)1.0 / __sqrtf(x.x)).
// ---------------------------------------------------------------------------
template <typename H, typename T, typename = void> struct cuport_standin_arith { };
template <typename H, typename T>
struct cuport_standin_arith<H, T, std::enable_if_t<std::is_integral<T>::value>> { using type = H; };
template <typename H> struct cuport_standin_arith<H, float> { using type = float; };
template <typename H> struct cuport_standin_arith<H, double> { using type = double; };
template <typename H> struct cuport_standin_arith<H, long double> { using type = long double; };

#define CUPORT_STANDIN_FLOAT16(H)                                                                 \
    struct H {                                                                                    \
        uint16_t __bits;                                                                          \
        H() = default;                                                                            \
        template <typename T, typename = std::enable_if_t<std::is_arithmetic<T>::value>> H(T);    \
        operator float() const;                                                                   \
    };                                                                                            \
    H operator-(H); H operator+(H);                                                               \
    H operator+(H, H); H operator-(H, H); H operator*(H, H); H operator/(H, H);                   \
    bool operator==(H, H); bool operator!=(H, H); bool operator<(H, H);                           \
    bool operator>(H, H); bool operator<=(H, H); bool operator>=(H, H);                           \
    template <typename T> typename cuport_standin_arith<H, T>::type operator+(H, T);                    \
    template <typename T> typename cuport_standin_arith<H, T>::type operator-(H, T);                    \
    template <typename T> typename cuport_standin_arith<H, T>::type operator*(H, T);                    \
    template <typename T> typename cuport_standin_arith<H, T>::type operator/(H, T);                    \
    template <typename T> typename cuport_standin_arith<H, T>::type operator+(T, H);                    \
    template <typename T> typename cuport_standin_arith<H, T>::type operator-(T, H);                    \
    template <typename T> typename cuport_standin_arith<H, T>::type operator*(T, H);                    \
    template <typename T> typename cuport_standin_arith<H, T>::type operator/(T, H);                    \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator==(H, T);  \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator!=(H, T);  \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator<(H, T);   \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator>(H, T);   \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator<=(H, T);  \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator>=(H, T);  \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator==(T, H);  \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator!=(T, H);  \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator<(T, H);   \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator>(T, H);   \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator<=(T, H);  \
    template <typename T, typename = typename cuport_standin_arith<H, T>::type> bool operator>=(T, H);  \
    template <typename T> H& operator+=(H&, T); template <typename T> H& operator-=(H&, T);       \
    template <typename T> H& operator*=(H&, T); template <typename T> H& operator/=(H&, T);       \
    H& operator++(H&); H operator++(H&, int); H& operator--(H&); H operator--(H&, int);
CUPORT_STANDIN_FLOAT16(half)
CUPORT_STANDIN_FLOAT16(bfloat16_t)
#undef CUPORT_STANDIN_FLOAT16
#define CUPORT_STANDIN_FP8(T)                 \
    struct T {                                \
        uint8_t __bits;                       \
        T() = default;                        \
        T(float);                             \
        operator float() const;               \
    };
CUPORT_STANDIN_FP8(hifloat8_t)
CUPORT_STANDIN_FP8(float8_e4m3_t)
CUPORT_STANDIN_FP8(float8_e5m2_t)
CUPORT_STANDIN_FP8(float4_e2m1x2_t)
CUPORT_STANDIN_FP8(float4_e1m2x2_t)

// ---------------------------------------------------------------------------
// 4. Builtin short-vector types (docs: SIMT编程简介/扩展语法/内置数据类型).
//    Natural alignment = size, as the docs' table says.
// ---------------------------------------------------------------------------
#define CUPORT_VEC2(N, E) struct alignas(2 * sizeof(E)) N { E x, y; };
#define CUPORT_VEC3(N, E) struct N { E x, y, z; };
#define CUPORT_VEC4(N, E) struct alignas(4 * sizeof(E)) N { E x, y, z, w; };
#define CUPORT_VECS(P, E) CUPORT_VEC2(P##2, E) CUPORT_VEC3(P##3, E) CUPORT_VEC4(P##4, E)
CUPORT_VECS(char, signed char)
CUPORT_VECS(uchar, unsigned char)
CUPORT_VECS(short, short)
CUPORT_VECS(ushort, unsigned short)
CUPORT_VECS(int, int)
CUPORT_VECS(uint, unsigned int)
CUPORT_VECS(long, int32_t)      // docs: long2/long4 are 32-bit elements on the device
CUPORT_VECS(ulong, uint32_t)
CUPORT_VECS(longlong, long long)
CUPORT_VECS(ulonglong, unsigned long long)
CUPORT_VECS(float, float)
struct alignas(4) half2 { half x, y; };
struct alignas(4) bfloat16x2_t { bfloat16_t x, y; };
// half2 / bfloat16x2_t are arithmetic vector types in bisheng (the devkit sample
// short_vector_add.asc does `z2[i] = x2[i] + y2[i]` on half2).
#define CUPORT_VEC2_ARITH(V)                                                      \
    V operator+(V, V); V operator-(V, V); V operator*(V, V); V operator/(V, V);   \
    V operator-(V); V& operator+=(V&, V); V& operator-=(V&, V);                   \
    V& operator*=(V&, V); V& operator/=(V&, V);
CUPORT_VEC2_ARITH(half2)
CUPORT_VEC2_ARITH(bfloat16x2_t)
#undef CUPORT_VEC2_ARITH
struct alignas(2) hifloat8x2_t { hifloat8_t x, y; };
struct alignas(2) float8_e4m3x2_t { float8_e4m3_t x, y; };
struct alignas(2) float8_e5m2x2_t { float8_e5m2_t x, y; };

// ---------------------------------------------------------------------------
// 5. dim3 and the builtin index variables (docs: 内置变量).
// ---------------------------------------------------------------------------
namespace cce {
struct dim3 {
    uint32_t x, y, z;
    constexpr dim3(uint32_t vx = 1, uint32_t vy = 1, uint32_t vz = 1) : x(vx), y(vy), z(vz) {}
};
}  // namespace cce
#if defined(__NPU_COMPILER_INTERNAL_PURE_SIMT__)
using dim3 = cce::dim3;  // in mixed mode simt_api/common_functions.h makes this alias itself
#endif
extern const cce::dim3 blockIdx;
extern const cce::dim3 blockDim;
extern const cce::dim3 threadIdx;
extern const cce::dim3 gridDim;
extern const int warpSize;

// ---------------------------------------------------------------------------
// 5b. `__asc_simt_vf` is an implicit namespace for bisheng: device_functions.h
//     says "no qualification needed at call sites" (asc_atomic_*, asc_ldcg,
//     printf, ... live in it in 9.1.0). A using-directive gives that lookup.
// ---------------------------------------------------------------------------
namespace __asc_simt_vf {}
using namespace __asc_simt_vf;

// ---------------------------------------------------------------------------
// 6. Builtin functions called by the devkit impl headers. Declarations only.
// ---------------------------------------------------------------------------
// sync / fences
void __sync_workitems();
void __threadfence();
void __threadfence_block();
// warp vote / shuffle / reduce
int32_t __all(int32_t);
int32_t __any(int32_t);
uint32_t __ballot(int32_t);
uint32_t __activemask();
template <typename T> T __shfl(T var, int32_t src_lane, int32_t width);
template <typename T> T __shfl_up(T var, uint32_t delta, int32_t width);
template <typename T> T __shfl_down(T var, uint32_t delta, int32_t width);
template <typename T> T __shfl_xor(T var, int32_t lane_mask, int32_t width);
// CANN 9.0.0 impl headers call the 2-argument form, passing one packed control
// word ((warpSize - width) << 16 | max_offset << 8 | lane); 9.1.0 calls the
// 3-argument form (var, lane/delta, width).
template <typename T> T __shfl(T var, int32_t packed_ctrl);
template <typename T> T __shfl_up(T var, int32_t packed_ctrl);
template <typename T> T __shfl_down(T var, int32_t packed_ctrl);
template <typename T> T __shfl_xor(T var, int32_t packed_ctrl);
template <typename T> T __reduce_add(T);
template <typename T> T __reduce_max(T);
template <typename T> T __reduce_min(T);
// lane helpers, bit ops: simt_api/device_functions.h declares these `static`
// itself, but impl/utils/debug/asc_printf_simt_impl.h (included earlier) and
// cooperative_groups_impl.h already call them in templates; declared static here
// with the header's signatures so that its redeclaration matches.
static int32_t laneid();
static int32_t lanemask_lt();
static int __popc(unsigned int);
static int __ffs(int);
// atomics (generic over the element type and address space; `val` converts to
// the element type, e.g. __atomic_add(uint64_t*, 1) in asc_printf_simt_impl.h)
template <typename T> struct cuport_standin_id { using type = T; };
template <typename T> T __atomic_add(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T __atomic_sub(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T __atomic_exch(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T __atomic_max(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T __atomic_min(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T __atomic_and(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T __atomic_or(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T __atomic_xor(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T __atomic_inc(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T __atomic_dec(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T __atomic_cas(T* address, typename cuport_standin_id<T>::type compare,
                                     typename cuport_standin_id<T>::type val);
// CANN 9.0.0 spells the atomic builtins CUDA-style (atomicXOr sic); 9.1.0's
// non-pure-SIMT printf impl still calls atomicAdd/atomicExch.
template <typename T> T atomicAdd(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T atomicSub(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T atomicExch(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T atomicMax(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T atomicMin(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T atomicAnd(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T atomicOr(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T atomicXOr(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T atomicInc(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T atomicDec(T* address, typename cuport_standin_id<T>::type val);
template <typename T> T atomicCAS(T* address, typename cuport_standin_id<T>::type compare,
                                  typename cuport_standin_id<T>::type val);
// cache-hinted loads/stores, cache maintenance
template <LD_L2CacheType L2 = LD_L2CacheType::L2_CACHE_HINT_NORMAL_FV, L1CacheType L1 = NON_CACHEABLE, typename T>
T __ldg(T* address);
template <ST_L2CacheType L2 = ST_L2CacheType::L2_CACHE_HINT_NORMAL_FV, L1CacheType L1 = NON_CACHEABLE, typename T>
void __stg(T* address, T val);
void dcci(void* dst, int entire);
namespace __cce_scalar {          // CANN 9.0.0 printf impl: __cce_scalar::dcci(ptr, entire, 1)
void dcci(void* dst, int entire, int mode);
}
// conversions: __cvt_<dst><round, sat>(src)
template <ROUND r, RoundingSaturation s, typename T> float __cvt_float(T);
template <ROUND r, RoundingSaturation s, typename T> half __cvt_half(T);
template <ROUND r, RoundingSaturation s, typename T> bfloat16_t __cvt_bfloat16_t(T);
template <ROUND r, RoundingSaturation s, typename T> int32_t __cvt_int32_t(T);
template <ROUND r, RoundingSaturation s, typename T> uint32_t __cvt_uint32_t(T);
template <ROUND r, RoundingSaturation s, typename T> int64_t __cvt_int64_t(T);
template <ROUND r, RoundingSaturation s, typename T> uint64_t __cvt_uint64_t(T);
template <ROUND r, RoundingSaturation s, typename T> float2 __cvt_float2(T);
template <ROUND r, RoundingSaturation s, typename T> half2 __cvt_half2(T);
template <ROUND r, RoundingSaturation s, typename T> bfloat16x2_t __cvt_bfloat16x2_t(T);
template <ROUND r, RoundingSaturation s, typename T> hifloat8x2_t __cvt_hifloat8x2_t(T);
template <ROUND r, RoundingSaturation s, typename T> float8_e4m3x2_t __cvt_float8_e4m3x2_t(T);
template <ROUND r, RoundingSaturation s, typename T> float8_e5m2x2_t __cvt_float8_e5m2x2_t(T);
// float classification / hardware math
template <typename T> bool __isnan(T);
template <typename T> bool __isinf(T);
template <typename T> bool __isfinite(T);
template <typename T> T __fma(T, T, T);
// hardware math builtins; generic because the impl headers also pass half,
// half2 and bfloat16_t (e.g. asc_fp16_impl.h: h2exp(half2 x) { return __expf(x); }).
// glibc's <cmath> already declares the float forms (float __expf(float) ...).
template <typename T> T __fmaxf(T, T);
template <typename T> T __fminf(T, T);
template <typename T> T __max(T, T);   // asc_bf16_impl.h: __hmax/__hmin on bfloat16_t
template <typename T> T __min(T, T);
template <typename T> T __expf(T);
template <typename T> T __logf(T);
template <typename T> T __powf(T, T);
template <typename T> T __sqrtf(T);
template <typename T> T __floorf(T);
template <typename T> T __ceilf(T);
template <typename T> T __rintf(T);
template <typename T> T __roundf(T);
template <typename T> T __fabsf(T);
int signbitf(float);
// Integer max/min builtins (CANN 9.0.0 math_functions_impl.h calls max/min
// undeclared; 9.1.0 pure-SIMT math_functions.h redeclares exactly these ten
// overloads `static`, so they are static here as well).
#define CUPORT_MAXMIN(T) static T max(T x, T y); static T min(T x, T y);
CUPORT_MAXMIN(long long) CUPORT_MAXMIN(unsigned long long) CUPORT_MAXMIN(unsigned int)
CUPORT_MAXMIN(long) CUPORT_MAXMIN(int) CUPORT_MAXMIN(short) CUPORT_MAXMIN(char)
CUPORT_MAXMIN(unsigned long) CUPORT_MAXMIN(unsigned short) CUPORT_MAXMIN(unsigned char)
#undef CUPORT_MAXMIN
using std::abs;  // the impl headers call abs(long), abs(long long) (9.1.0) and abs(float) (9.0.0)
// timers
int64_t __cce_simt_get_CLOCK64();

// ---------------------------------------------------------------------------
// 7. Not a bisheng name: target of cuport's `<<<...>>>` rewrite (chevrons.py).
//    g++ cannot parse `k<<<grid, block, dyn_ubuf_bytes, stream>>>(args)`;
//    the rewrite yields `k(args), cuport_chevron_config(grid, block, bytes, stream)`
//    so the launch configuration is type-checked like bisheng would
//    (int or dim3; size_t; aclrtStream, which is `void*` in acl_base_rt.h).
// ---------------------------------------------------------------------------
void cuport_chevron_config(cce::dim3 grid, cce::dim3 block, size_t dyn_ubuf_bytes = 0, void* stream = nullptr);

#endif  // CUPORT_ASC_SIMT_STANDIN_H
