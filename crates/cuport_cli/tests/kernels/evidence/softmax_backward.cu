// Evidence fixture: the gradient of a row softmax given its output, one
// block per row: dinp[j] = out[j] * (dout[j] - sum_k dout[k] * out[k]),
// the dot product reduced in shared memory. softmax_backward.toml declares
// it as aclnnSoftmaxBackward over the last dimension (confirmed) and
// softmax_backward-wrong.toml over the first (refuted).
#include <cuda_runtime.h>

__global__ void softmax_grad_rows(float* dinp, const float* out, const float* dout, int rows, int cols) {
    extern __shared__ float partial[];
    const float* y = out + blockIdx.x * cols;
    const float* dy = dout + blockIdx.x * cols;
    float* dx = dinp + blockIdx.x * cols;
    int t = threadIdx.x;
    float dot = 0.0f;
    for (int j = t; j < cols; j += blockDim.x) dot += y[j] * dy[j];
    partial[t] = dot;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    float total = partial[0];
    for (int j = t; j < cols; j += blockDim.x) dx[j] = y[j] * (dy[j] - total);
}

void softmax_backward(float* dinp, const float* out, const float* dout, int rows, int cols) {
    softmax_grad_rows<<<rows, 128, 128 * sizeof(float)>>>(dinp, out, dout, rows, cols);
}
