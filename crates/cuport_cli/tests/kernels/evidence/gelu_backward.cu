// Evidence fixture: the gradient of the tanh-form gelu, one thread per
// element: dinp = gelu'(inp) * dout with the derivative written out by
// hand (tanh' = 1 - tanh^2), as training code does. gelu_backward.toml
// declares it as aclnnGeluBackwardV2 with approximate 'tanh' (confirmed)
// and gelu_backward-wrong.toml with 'none', the erf form (refuted).
#include <cuda_runtime.h>
#include <math.h>

__global__ void gelu_grad(float* dinp, const float* inp, const float* dout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float k = sqrtf(2.0f / M_PI);
    float x = inp[i];
    float u = k * (x + 0.044715f * x * x * x);
    float t = tanhf(u);
    float du = k * (1.0f + 3.0f * 0.044715f * x * x);
    float local = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
    dinp[i] = local * dout[i];
}

void gelu_backward(float* dinp, const float* inp, const float* dout, int n) {
    gelu_grad<<<(n + 127) / 128, 128>>>(dinp, inp, dout, n);
}
