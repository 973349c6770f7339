// Evidence fixture: an elementwise add, one thread per element with a guard.
// Expect: a proposed aclnnAdd rule, confirmed by execution.
#include <cuda_runtime.h>

__global__ void add_kernel(float* out, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a[i] + b[i];
    }
}

void add(float* out, const float* a, const float* b, int n) {
    const int block_size = 256;
    const int grid_size = (n + block_size - 1) / block_size;
    add_kernel<<<grid_size, block_size>>>(out, a, b, n);
}
