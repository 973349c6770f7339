// A small model's kernels for `cuport kernels` (tests/kernels_cli.rs).
__global__ void residual(float* out, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

__global__ void gelu(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        out[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}

__global__ void norm_squared(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, x[i] * x[i]);
}

__global__ void rms(float* y, const float* x, const float* w, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float ss = 0.0f;
    for (int j = 0; j < cols; j++) {
        float v = x[r * cols + j];
        ss += v * v;
    }
    float s = rsqrtf(ss / cols + 1e-6f);
    for (int j = 0; j < cols; j++) y[r * cols + j] = x[r * cols + j] * s * w[j];
}
