// A bias gradient that accumulates: each column's sum over the rows is
// added to what dbias holds (the shape of llm.c's
// matmul_backward_bias_kernel4, written small). No operator adds a
// reduction into its output, so the rule reduces into scratch memory and
// adds that in place.
#include <cuda_runtime.h>

__global__ void bias_grad_kernel(float* dbias, const float* dout, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < cols) {
        float sum = 0.0f;
        for (int r = 0; r < rows; ++r) {
            sum += dout[r * cols + col];
        }
        dbias[col] += sum;
    }
}

void bias_grad(float* dbias, const float* dout, int rows, int cols, cudaStream_t stream) {
    bias_grad_kernel<<<(cols + 127) / 128, 128, 0, stream>>>(dbias, dout, rows, cols);
}
