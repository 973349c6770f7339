// Evidence fixture: gelu (tanh form) in a grid-stride loop; the grid is
// smaller than the data, so every thread handles several elements.
// Expect: a proposed aclnnGeluV2 (approximate = 1) rule, confirmed.
#include <cuda_runtime.h>
#include <math.h>

#define GELU_SCALING_FACTOR sqrtf(2.0f / M_PI)

__global__ void gelu_kernel(float* out, const float* inp, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float x = inp[i];
        float cube = 0.044715f * x * x * x;
        out[i] = 0.5f * x * (1.0f + tanhf(GELU_SCALING_FACTOR * (x + cube)));
    }
}

void gelu(float* out, const float* inp, int n) {
    gelu_kernel<<<8, 128>>>(out, inp, n);
}
