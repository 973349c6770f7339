// Recognition fixtures: elementwise maps. Each kernel is preceded by the
// pattern cuport kernels must find in it (`expect:`); tests/kernel_patterns.rs.
#include <cuda_fp16.h>
#define SQRT_2_OVER_PI 0.7978845608f

// expect: add
__global__ void sum_two(float* c, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// expect: sub
__global__ void difference(float* d, const float* x, const float* y, int count) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += blockDim.x * gridDim.x) {
        d[k] = y[k] - x[k];
    }
}

// expect: mul
__global__ void product(const float* p, const float* q, float* r, int n) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t >= n) return;
    float lhs = p[t];
    float rhs = q[t];
    r[t] = lhs * rhs;
}

// expect: div
__global__ void ratio(float* out, const float* num, const float* den, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = num[i] / den[i];
}

// expect: axpy
__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// expect: scale
__global__ void scaled(float* out, const float* in, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * factor;
}

// expect: relu
__global__ void rectify(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

// expect: relu
__global__ void rectify_fmax(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(0.0f, x[i]);
}

// expect: gelu-tanh
__global__ void gelu_pow(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float inner = SQRT_2_OVER_PI * (v + 0.044715f * powf(v, 3.0f));
        y[i] = 0.5f * v * (1.0f + tanhf(inner));
    }
}

// expect: gelu-erf
__global__ void gelu_exact(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.5f * (1.0f + erff(x[i] * M_SQRT1_2));
}

// expect: silu
__global__ void swish(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / (1.0f + __expf(-x[i]));
}

// expect: sigmoid
__global__ void logistic(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 1.0f / (1.0f + expf(-x[i]));
}

// expect: tanh
__global__ void hyperbolic(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = tanhf(x[i]);
}

// expect: exp
__global__ void exponential(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = expf(x[i]);
}

// expect: cast
__global__ void to_half(__half* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2half(x[i]);
}

// expect: copy
__global__ void duplicate(float* dst, const float* src, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = __ldg(&src[i]);
}

// expect: fill
__global__ void zero(float* buf, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) buf[i] = 0.0f;
}

// expect: fill
__global__ void set_all(float* buf, float value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) buf[i] = value;
}

// expect: adamw
__global__ void adamw_step(float* w, const float* g, float* m1, float* m2, int n, float lr,
                           float b1, float b2, float c1, float c2, float eps, float decay) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float grad = g[i];
    float m = b1 * m1[i] + (1.0f - b1) * grad;
    float v = b2 * m2[i] + (1.0f - b2) * grad * grad;
    m1[i] = m;
    m2[i] = v;
    w[i] = w[i] - lr * ((m / c1) / (sqrtf(v / c2) + eps) + decay * w[i]);
}

// expect: add
__global__ void strided_sum(const float* a, const float* b, float* c, int n) {
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}
