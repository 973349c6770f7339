// Evidence fixture: an elementwise product. declared-wrong.toml declares it
// as aclnnAdd, which the evidence must refute.
#include <cuda_runtime.h>

__global__ void mul_kernel(float* out, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = a[i] * b[i];
}

void mul(float* out, const float* a, const float* b, int n) {
    mul_kernel<<<(n + 127) / 128, 128>>>(out, a, b, n);
}
