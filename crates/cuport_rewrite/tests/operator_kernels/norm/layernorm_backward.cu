// The gradients of a layer norm over rows of C elements from the mean and
// rstd its forward saved, added to dx, dw and db (what llm.c's
// layernorm_backward_kernel2 computes, written with one thread per row).
#include <cuda_runtime.h>

__global__ void layernorm_grad_kernel(float* dx, float* dw, float* db, const float* dy,
                                      const float* x, const float* w, const float* mean,
                                      const float* rstd, int rows, int C) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* dy_r = dy + r * C;
    const float* x_r = x + r * C;
    float* dx_r = dx + r * C;
    float m = mean[r], s = rstd[r];
    float mean_g = 0.0f, mean_gn = 0.0f;
    for (int i = 0; i < C; i++) {
        float n = (x_r[i] - m) * s;
        float g = w[i] * dy_r[i];
        mean_g += g;
        mean_gn += g * n;
    }
    mean_g /= C;
    mean_gn /= C;
    for (int i = 0; i < C; i++) {
        float n = (x_r[i] - m) * s;
        float g = w[i] * dy_r[i];
        atomicAdd(&db[i], dy_r[i]);
        atomicAdd(&dw[i], n * dy_r[i]);
        dx_r[i] += (g - mean_g - n * mean_gn) * s;
    }
}

void layernorm_grad(float* dx, float* dw, float* db, const float* dy, const float* x,
                    const float* w, const float* mean, const float* rstd, int rows, int C,
                    cudaStream_t stream) {
    layernorm_grad_kernel<<<(rows + 127) / 128, 128, 0, stream>>>(dx, dw, db, dy, x, w, mean,
                                                                  rstd, rows, C);
}
