// Evidence fixtures for the operators beyond the elementwise ones: each
// kernel is what a CUDA programmer writes for the operation, and the
// evidence compares it with ONNX Runtime's form of the aclnn operator that
// ops.toml declares (ops-wrong.toml declares wrong ones, to be refuted).
#include <cuda_runtime.h>

__global__ void fill_kernel(float* out, float value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}

__global__ void copy_kernel(float* out, const float* inp, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = inp[i];
}

__global__ void cast_kernel(int* out, const float* inp, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (int)inp[i];
}

// One thread per row.
__global__ void row_sum_kernel(float* out, const float* inp, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float acc = 0.0f;
    for (int j = 0; j < cols; j++) acc += inp[r * cols + j];
    out[r] = acc;
}

__global__ void row_max_kernel(float* out, const float* inp, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float m = -INFINITY;
    for (int j = 0; j < cols; j++) m = fmaxf(m, inp[r * cols + j]);
    out[r] = m;
}

// The maximum of each row and the first column holding it.
__global__ void row_argmax_kernel(float* out, int* index, const float* inp, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float m = inp[r * cols];
    int at = 0;
    for (int j = 1; j < cols; j++) {
        if (inp[r * cols + j] > m) { m = inp[r * cols + j]; at = j; }
    }
    out[r] = m;
    index[r] = at;
}

// (a, b, c) -> (c, a, b)
__global__ void permute3_kernel(float* out, const float* inp, int a, int b, int c) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= a * b * c) return;
    int i = idx / (b * c), j = (idx / c) % b, k = idx % c;
    out[k * a * b + i * b + j] = inp[idx];
}

// out[t][:] = table[ids[t]][:]
__global__ void embedding_kernel(float* out, const int* ids, const float* table, int n, int rows, int cols) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n * cols) return;
    int t = idx / cols, c = idx % cols;
    out[idx] = table[ids[t] * cols + c];
}

// c (m x n) = a (m x k) @ b (k x n), one thread per output element.
__global__ void matmul_kernel(float* c, const float* a, const float* b, int m, int k, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= m * n) return;
    int row = idx / n, col = idx % n;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += a[row * k + p] * b[p * n + col];
    c[idx] = acc;
}

// One AdamW step (torch.optim.AdamW's algorithm); *step counts the steps
// already taken, as torch.optim's state does before its `step += 1`.
__global__ void adamw_step_kernel(float* param, const float* grad, float* m1, float* m2, const float* step,
                                  float lr, float beta1, float beta2, float eps, float weight_decay, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float t = step[0] + 1.0f;
    float g = grad[i];
    float m = beta1 * m1[i] + (1.0f - beta1) * g;
    float v = beta2 * m2[i] + (1.0f - beta2) * g * g;
    m1[i] = m;
    m2[i] = v;
    float m_hat = m / (1.0f - powf(beta1, t));
    float v_hat = v / (1.0f - powf(beta2, t));
    param[i] -= lr * (m_hat / (sqrtf(v_hat) + eps) + weight_decay * param[i]);
}

void launch_all(float* f, int* ix, float* g, float* h, int n, int rows, int cols) {
    fill_kernel<<<(n + 255) / 256, 256>>>(f, 0.5f, n);
    copy_kernel<<<(n + 255) / 256, 256>>>(f, g, n);
    cast_kernel<<<(n + 255) / 256, 256>>>(ix, g, n);
    row_sum_kernel<<<(rows + 63) / 64, 64>>>(f, g, rows, cols);
    row_max_kernel<<<(rows + 63) / 64, 64>>>(f, g, rows, cols);
    row_argmax_kernel<<<(rows + 63) / 64, 64>>>(f, ix, g, rows, cols);
    permute3_kernel<<<(n * rows * cols + 255) / 256, 256>>>(f, g, n, rows, cols);
    embedding_kernel<<<(n * cols + 127) / 128, 128>>>(f, ix, g, n, rows, cols);
    matmul_kernel<<<(n * cols + 127) / 128, 128>>>(f, g, h, n, rows, cols);
    adamw_step_kernel<<<(n + 255) / 256, 256>>>(f, g, h, h, g, 0.1f, 0.9f, 0.99f, 1e-8f, 0.01f, n);
}
