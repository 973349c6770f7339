// A fully connected layer whose kernel learns its row count only from the
// grid (one block per row) and skips the bias when the pointer is null:
// the shape of llm.c's matmul_forward_kernel4, written small.
#include <cuda_runtime.h>

__global__ void linear_kernel(float* out, const float* inp, const float* weight,
                              const float* bias, int C, int OC) {
    int row = blockIdx.x;
    for (int o = threadIdx.x; o < OC; o += blockDim.x) {
        float acc = bias != NULL ? bias[o] : 0.0f;
        for (int c = 0; c < C; ++c) {
            acc += inp[row * C + c] * weight[o * C + c];
        }
        out[row * OC + o] = acc;
    }
}

void linear_forward(float* out, const float* inp, const float* weight, const float* bias,
                    int B, int T, int C, int OC, cudaStream_t stream) {
    linear_kernel<<<B * T, 128, 0, stream>>>(out, inp, weight, bias, C, OC);
}
