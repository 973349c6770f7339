// Evidence fixture: a row softmax, one block per row: a shared-memory tree
// reduction with __syncthreads for the maximum, warp shuffles
// (__shfl_xor_sync) and shared memory for the sum. declared.toml declares
// it as aclnnSoftmax over the last dimension (the row count is the grid, so
// recognition cannot give the extent).
#include <cuda_runtime.h>

__global__ void softmax_rows(float* out, const float* inp, int rows, int cols) {
    extern __shared__ float scratch[];
    const float* x = inp + blockIdx.x * cols;
    float* y = out + blockIdx.x * cols;
    int t = threadIdx.x;
    float m = -INFINITY;
    for (int i = t; i < cols; i += blockDim.x) m = fmaxf(m, x[i]);
    scratch[t] = m;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) scratch[t] = fmaxf(scratch[t], scratch[t + stride]);
        __syncthreads();
    }
    m = scratch[0];
    __syncthreads();
    float s = 0.0f;
    for (int i = t; i < cols; i += blockDim.x) s += expf(x[i] - m);
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffff, s, offset);
    if (t % 32 == 0) scratch[t / 32] = s;
    __syncthreads();
    if (t == 0) {
        float total = 0.0f;
        for (int w = 0; w < blockDim.x / 32; w++) total += scratch[w];
        scratch[0] = total;
    }
    __syncthreads();
    float total = scratch[0];
    for (int i = t; i < cols; i += blockDim.x) y[i] = expf(x[i] - m) / total;
}

void softmax(float* out, const float* inp, int rows, int cols) {
    softmax_rows<<<rows, 128, 128 * sizeof(float)>>>(out, inp, rows, cols);
}
