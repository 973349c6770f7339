// Negative fixtures: kernels that look like a pattern but compute something
// else. Each is preceded by what cuport kernels must find (`expect: none`
// when nothing, or the right pattern where a wrong one is tempting).

// A sum of squares into one value is not an elementwise add.
// expect: none
__global__ void global_norm_squared(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, x[i] * x[i]);
}

// Squaring is no multiply of two tensors.
// expect: none
__global__ void square(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i];
}

// An add plus a constant is not an add.
// expect: none
__global__ void add_one_more(float* c, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i] + 1.0f;
}

// A stencil reads neighbours, not the thread's own element.
// expect: none
__global__ void neighbours(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) y[i] = x[i - 1] + x[i + 1];
}

// A broadcast bias add reads another index of the bias.
// expect: none
__global__ void bias_add(float* y, const float* x, const float* bias, int n, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + bias[i % C];
}

// A leaky relu is not a relu.
// expect: none
__global__ void leaky(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.01f * x[i];
}

// A gelu with the wrong cubic coefficient is no gelu.
// expect: none
__global__ void almost_gelu(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.0447f * v * v * v)));
    }
}

// Three inputs summed: no single binary operator.
// expect: none
__global__ void sum_three(float* d, const float* a, const float* b, const float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] = a[i] + b[i] + c[i];
}

// A GEMM accumulates products; it is not a row reduction.
// expect: gemm
__global__ void matmul_rows(float* out, const float* inp, const float* weight, int BT, int C, int OC) {
    int bt = blockIdx.x * blockDim.x + threadIdx.x;
    int oc = blockIdx.y * blockDim.y + threadIdx.y;
    if (bt < BT && oc < OC) {
        const float* x = inp + bt * C;
        const float* w = weight + oc * C;
        float val = 0.0f;
        for (int i = 0; i < C; i++) val += x[i] * w[i];
        out[bt * OC + oc] = val;
    }
}

// Two rows of the same position multiplied: a dot product, not a GEMM.
// expect: none
__global__ void row_dots(float* out, const float* a, const float* b, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* ar = a + r * cols;
        const float* br = b + r * cols;
        float acc = 0.0f;
        for (int j = 0; j < cols; j++) acc += ar[j] * br[j];
        out[r] = acc;
    }
}

// Summing over the leading dimension walks a column, not a row.
// expect: none
__global__ void column_sums(float* out, const float* x, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float acc = 0.0f;
        for (int r = 0; r < rows; r++) acc += x[r * cols + c];
        out[c] = acc;
    }
}

// A residual add fused with a layer norm is more than a layer norm.
// expect: none
__global__ void residual_layer_norm(float* res, float* y, const float* a, const float* b,
                                    const float* w, const float* bias, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float sum = 0.0f;
    for (int j = 0; j < cols; j++) {
        float v = a[r * cols + j] + b[r * cols + j];
        res[r * cols + j] = v;
        sum += v;
    }
    float mean = sum / cols;
    float var = 0.0f;
    for (int j = 0; j < cols; j++) {
        float d = res[r * cols + j] - mean;
        var += d * d;
    }
    float s = rsqrtf(var / cols + 1e-5f);
    for (int j = 0; j < cols; j++) {
        y[r * cols + j] = (res[r * cols + j] - mean) * s * w[j] + bias[j];
    }
}

// A normalisation by precomputed statistics is elementwise with broadcast
// reads, not a permutation.
// expect: none
__global__ void apply_stats(float* out, const float* inp, const float* mean, const float* rstd,
                            const float* weight, const float* bias, int N, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int bt = idx / C;
    int c = idx % C;
    float n = rstd[bt] * (inp[idx] - mean[bt]);
    out[idx] = n * weight[c] + bias[c];
}

// A histogram scatters counts: nothing here.
// expect: none
__global__ void histogram(int* bins, const int* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[data[i]], 1);
}

// A transpose that accumulates into its output (llm.c's dev/cuda
// attention_backward.cu unpermute_kernel_backward: `dinp[idx] += ...`) adds
// the old value: no permutation.
// expect: none
__global__ void transpose_accumulate(float* out, const float* in, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        int r = i / cols;
        int c = i % cols;
        out[c * rows + r] += in[i];
    }
}
