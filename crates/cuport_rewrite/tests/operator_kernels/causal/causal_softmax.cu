// Attention's causal softmax: row t of each (T, T) matrix is the softmax of
// scale * x over its first t + 1 entries; the kernel writes only those and
// leaves the upper triangle as it was (the shape of llm.c's
// softmax_forward_kernel5, written small, one thread per row).
#include <cuda_runtime.h>
#include <float.h>

__global__ void causal_softmax_kernel(float* out, float scale, const float* inp, int N, int T) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N * T) {
        return;
    }
    int t = row % T;
    const float* x = inp + row * T;
    float maxval = -FLT_MAX;
    for (int i = 0; i <= t; ++i) {
        maxval = fmaxf(maxval, x[i]);
    }
    float sum = 0.0f;
    for (int i = 0; i <= t; ++i) {
        sum += expf(scale * (x[i] - maxval));
    }
    for (int i = 0; i <= t; ++i) {
        out[row * T + i] = expf(scale * (x[i] - maxval)) / sum;
    }
}

void causal_softmax(float* out, float scale, const float* inp, int N, int T, cudaStream_t stream) {
    causal_softmax_kernel<<<(N * T + 127) / 128, 128, 0, stream>>>(out, scale, inp, N, T);
}
