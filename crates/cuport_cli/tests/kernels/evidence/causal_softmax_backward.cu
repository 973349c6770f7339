// The gradient of a causal softmax: for row t, dx = scale * y * (dy - sum
// over i <= t of y * dy), written for i <= t only (the shape of llm.c's
// softmax_autoregressive_backward_kernel, one thread per row). It reads y
// only where the forward wrote it.
#include <cuda_runtime.h>

__global__ void causal_softmax_backward_kernel(float* dx, const float* dy, const float* y,
                                               int N, int T, float scale) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N * T) {
        return;
    }
    int t = row % T;
    const float* y_row = y + row * T;
    const float* dy_row = dy + row * T;
    float dot = 0.0f;
    for (int i = 0; i <= t; ++i) {
        dot += y_row[i] * dy_row[i];
    }
    for (int i = 0; i <= t; ++i) {
        dx[row * T + i] = scale * y_row[i] * (dy_row[i] - dot);
    }
}
