//! CUDA C sources for the non-BLAS ops, compiled at run time with NVRTC.
//!
//! One program per dtype: a prelude defines the storage type `T`, the
//! compute type `A` and the conversions between them, then the op kernels
//! follow. The prelude avoids `cuda_fp16.h`/`cuda_bf16.h` on purpose: NVRTC
//! does not ship those headers, and a toolkit include path is exactly what a
//! driver-only machine lacks. f16 converts with the PTX `cvt` instructions,
//! bf16 with integer round-to-nearest-even.
use crate::dtype::DType;
use crate::ops::OpSpec;

/// Threads per block of the row kernels; the shared-memory reductions
/// assume a power of two.
pub(super) const ROW_BLOCK: u32 = 256;

const PRELUDE_F32: &str = r#"
typedef float T; typedef float A;
__device__ __forceinline__ A ld(T v) { return v; }
__device__ __forceinline__ T st(A v) { return v; }
"#;

const PRELUDE_F64: &str = r#"
typedef double T; typedef double A;
__device__ __forceinline__ A ld(T v) { return v; }
__device__ __forceinline__ T st(A v) { return v; }
"#;

const PRELUDE_F16: &str = r#"
typedef unsigned short T; typedef float A;
__device__ __forceinline__ A ld(T v) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v)); return f; }
__device__ __forceinline__ T st(A v) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v)); return h; }
"#;

const PRELUDE_BF16: &str = r#"
typedef unsigned short T; typedef float A;
__device__ __forceinline__ A ld(T v) { return __uint_as_float(((unsigned int)v) << 16); }
__device__ __forceinline__ T st(A v) {
  unsigned int u = __float_as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (T)0x7fc0u;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (T)(u >> 16);
}
"#;

/// i32 stores as int and accumulates in 64 bits, so sums of many small
/// integers stay exact.
const PRELUDE_I32: &str = r#"
typedef int T; typedef long long A;
__device__ __forceinline__ A ld(T v) { return (A)v; }
__device__ __forceinline__ T st(A v) { return (T)v; }
__device__ __forceinline__ A amax(A a, A b) { return a > b ? a : b; }
#define A_LOWEST (-9223372036854775807LL - 1)
"#;

/// Math for floating compute types; `amax` ignores NaN like `f64::max`.
const MATH_FLOAT: &str = r#"
__device__ __forceinline__ A amax(A a, A b) { return fmaxf(a, b); }
__device__ __forceinline__ A aexp(A x) { return expf(x); }
__device__ __forceinline__ A aerf(A x) { return erff(x); }
__device__ __forceinline__ A asqrt(A x) { return sqrtf(x); }
#define A_LOWEST (-__int_as_float(0x7f800000))
"#;

const MATH_DOUBLE: &str = r#"
__device__ __forceinline__ A amax(A a, A b) { return fmax(a, b); }
__device__ __forceinline__ A aexp(A x) { return exp(x); }
__device__ __forceinline__ A aerf(A x) { return erf(x); }
__device__ __forceinline__ A asqrt(A x) { return sqrt(x); }
#define A_LOWEST (-__longlong_as_double(0x7ff0000000000000LL))
"#;

/// Kernels every dtype gets: binary elementwise ops and row reductions.
const COMMON: &str = r#"
#define ROW_BLOCK 256
#define GRID_STRIDE(i, n) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); i += (long long)blockDim.x * gridDim.x)

__device__ A block_sum(A v, A* sh) {
  sh[threadIdx.x] = v; __syncthreads();
  for (int s = ROW_BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  A r = sh[0]; __syncthreads(); return r;
}

__device__ A block_max(A v, A* sh) {
  sh[threadIdx.x] = v; __syncthreads();
  for (int s = ROW_BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] = amax(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  A r = sh[0]; __syncthreads(); return r;
}

extern "C" __global__ void cuport_add(const T* a, const T* b, T* out, long long n) {
  GRID_STRIDE(i, n) out[i] = st(ld(a[i]) + ld(b[i]));
}

extern "C" __global__ void cuport_mul(const T* a, const T* b, T* out, long long n) {
  GRID_STRIDE(i, n) out[i] = st(ld(a[i]) * ld(b[i]));
}

extern "C" __global__ void cuport_reduce_sum(const T* x, T* out, long long cols) {
  __shared__ A sh[ROW_BLOCK];
  const T* row = x + blockIdx.x * cols;
  A acc = 0;
  for (long long j = threadIdx.x; j < cols; j += ROW_BLOCK) acc += ld(row[j]);
  acc = block_sum(acc, sh);
  if (threadIdx.x == 0) out[blockIdx.x] = st(acc);
}

extern "C" __global__ void cuport_reduce_max(const T* x, T* out, long long cols) {
  __shared__ A sh[ROW_BLOCK];
  const T* row = x + blockIdx.x * cols;
  A acc = A_LOWEST;
  for (long long j = threadIdx.x; j < cols; j += ROW_BLOCK) acc = amax(acc, ld(row[j]));
  acc = block_max(acc, sh);
  if (threadIdx.x == 0) out[blockIdx.x] = st(acc);
}
"#;

/// Kernels only floating dtypes get.
const FLOATING: &str = r#"
extern "C" __global__ void cuport_gelu(const T* x, T* out, long long n) {
  GRID_STRIDE(i, n) {
    A v = ld(x[i]);
    out[i] = st((A)0.5 * v * ((A)1 + aerf(v * (A)0.70710678118654752440)));
  }
}

extern "C" __global__ void cuport_silu(const T* x, T* out, long long n) {
  GRID_STRIDE(i, n) {
    A v = ld(x[i]);
    out[i] = st(v / ((A)1 + aexp(-v)));
  }
}

extern "C" __global__ void cuport_softmax(const T* x, T* out, long long cols) {
  __shared__ A sh[ROW_BLOCK];
  const T* row = x + blockIdx.x * cols;
  T* dst = out + blockIdx.x * cols;
  A m = A_LOWEST;
  for (long long j = threadIdx.x; j < cols; j += ROW_BLOCK) m = amax(m, ld(row[j]));
  m = block_max(m, sh);
  A sum = 0;
  for (long long j = threadIdx.x; j < cols; j += ROW_BLOCK) sum += aexp(ld(row[j]) - m);
  sum = block_sum(sum, sh);
  for (long long j = threadIdx.x; j < cols; j += ROW_BLOCK) dst[j] = st(aexp(ld(row[j]) - m) / sum);
}

extern "C" __global__ void cuport_layer_norm(const T* x, const T* gamma, const T* beta, T* out,
                                             long long cols, double eps) {
  __shared__ A sh[ROW_BLOCK];
  const T* row = x + blockIdx.x * cols;
  T* dst = out + blockIdx.x * cols;
  A sum = 0;
  for (long long j = threadIdx.x; j < cols; j += ROW_BLOCK) sum += ld(row[j]);
  A mean = block_sum(sum, sh) / (A)cols;
  A sq = 0;
  for (long long j = threadIdx.x; j < cols; j += ROW_BLOCK) { A d = ld(row[j]) - mean; sq += d * d; }
  A inv = (A)1 / asqrt(block_sum(sq, sh) / (A)cols + (A)eps);
  for (long long j = threadIdx.x; j < cols; j += ROW_BLOCK)
    dst[j] = st((ld(row[j]) - mean) * inv * ld(gamma[j]) + ld(beta[j]));
}

/* Direct convolution, one thread per output element (NCHW x KCRS -> NKPQ). */
extern "C" __global__ void cuport_conv2d(const T* x, const T* w, T* y,
    int n, int c, int h, int wd, int k, int r, int s,
    int stride, int pad, int dil, int p, int q) {
  long long total = (long long)n * k * p * q;
  GRID_STRIDE(i, total) {
    int oq = i % q; int op = (i / q) % p; int ok = (i / ((long long)q * p)) % k; int on = i / ((long long)q * p * k);
    A acc = 0;
    for (int ic = 0; ic < c; ++ic)
      for (int ir = 0; ir < r; ++ir) {
        int ih = op * stride - pad + ir * dil;
        if (ih < 0 || ih >= h) continue;
        for (int is = 0; is < s; ++is) {
          int iw = oq * stride - pad + is * dil;
          if (iw < 0 || iw >= wd) continue;
          acc += ld(x[(((long long)on * c + ic) * h + ih) * wd + iw]) * ld(w[(((long long)ok * c + ic) * r + ir) * s + is]);
        }
      }
    y[i] = st(acc);
  }
}
"#;

/// The NVRTC program for `dtype`.
pub(super) fn source(dtype: DType) -> String {
    let (prelude, math, floating) = match dtype {
        DType::F32 => (PRELUDE_F32, MATH_FLOAT, true),
        DType::F16 => (PRELUDE_F16, MATH_FLOAT, true),
        DType::Bf16 => (PRELUDE_BF16, MATH_FLOAT, true),
        DType::F64 => (PRELUDE_F64, MATH_DOUBLE, true),
        DType::I32 => (PRELUDE_I32, "", false),
    };
    let mut src = format!("{prelude}{math}{COMMON}");
    if floating {
        src.push_str(FLOATING);
    }
    src
}

/// Which kernel runs `op`, or why none does for this dtype.
pub(super) fn kernel_for(op: &OpSpec, dtype: DType) -> Result<&'static str, String> {
    let name = match op {
        OpSpec::Add { .. } => "cuport_add",
        OpSpec::Mul { .. } => "cuport_mul",
        OpSpec::ReduceSum { .. } => "cuport_reduce_sum",
        OpSpec::ReduceMax { .. } => "cuport_reduce_max",
        OpSpec::Gelu { .. } => "cuport_gelu",
        OpSpec::Silu { .. } => "cuport_silu",
        OpSpec::Softmax { .. } => "cuport_softmax",
        OpSpec::LayerNorm { .. } => "cuport_layer_norm",
        OpSpec::Conv2d(_) => "cuport_conv2d",
        OpSpec::Gemm { .. } | OpSpec::BatchedGemm { .. } | OpSpec::StridedBatchedGemm { .. } => {
            return Err("gemm runs through cuBLAS, not a kernel".to_owned())
        }
    };
    let integer_ok = matches!(
        op,
        OpSpec::Add { .. }
            | OpSpec::Mul { .. }
            | OpSpec::ReduceSum { .. }
            | OpSpec::ReduceMax { .. }
    );
    if dtype == DType::I32 && !integer_ok {
        return Err(format!(
            "`{}` on i32 is not supported by the cuda backend (integer kernels: add, mul, reduce_sum, reduce_max)",
            op.kind()
        ));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_a_dtype_supports_is_in_its_program() {
        let ops = [
            OpSpec::Add { len: 4 },
            OpSpec::Mul { len: 4 },
            OpSpec::Gelu { len: 4 },
            OpSpec::Silu { len: 4 },
            OpSpec::Softmax { rows: 2, cols: 3 },
            OpSpec::LayerNorm {
                rows: 2,
                cols: 3,
                eps: 1e-5,
            },
            OpSpec::ReduceSum { rows: 2, cols: 3 },
            OpSpec::ReduceMax { rows: 2, cols: 3 },
        ];
        for dtype in DType::ALL {
            let src = source(dtype);
            for op in &ops {
                if let Ok(name) = kernel_for(op, dtype) {
                    assert!(src.contains(&format!("void {name}(")), "{dtype} {name}");
                }
            }
        }
    }

    #[test]
    fn integer_programs_only_get_integer_kernels() {
        assert!(!source(DType::I32).contains("cuport_softmax"));
        let err = kernel_for(&OpSpec::Gelu { len: 3 }, DType::I32);
        assert!(err.is_err_and(|e| e.contains("i32")));
    }

    #[test]
    fn row_block_matches_the_kernel_constant() {
        assert!(COMMON.contains(&format!("#define ROW_BLOCK {ROW_BLOCK}")));
        assert!(ROW_BLOCK.is_power_of_two());
    }
}
