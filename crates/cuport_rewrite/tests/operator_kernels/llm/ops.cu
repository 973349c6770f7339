// Kernels in the shape llm.c writes them (train_gpt2_fp32.cu), launched the
// way its host code does, with and without a stream.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))

static void check(cudaError_t error, const char *file, int line) {
    if (error != cudaSuccess) {
        printf("[CUDA ERROR] at file %s:%d:\n%s\n", file, line, cudaGetErrorString(error));
        exit(EXIT_FAILURE);
    }
}
#define cudaCheck(err) (check(err, __FILE__, __LINE__))

__global__ void residual_forward_kernel(float* out, float* inp1, float* inp2, int N) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) {
        out[idx] = inp1[idx] + inp2[idx];
    }
}

#define GELU_SCALING_FACTOR sqrtf(2.0f / M_PI)
__global__ void gelu_forward_kernel(float* out, const float* inp, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float xi = inp[i];
        float cube = 0.044715f * xi * xi * xi;
        out[i] = 0.5f * xi * (1.0f + tanhf(GELU_SCALING_FACTOR * (xi + cube)));
    }
}

__global__ void softmax_rows_kernel(float* out, const float* inp, int N, int C) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < N) {
        const float* x = inp + row * C;
        float maxval = -INFINITY;
        for (int j = 0; j < C; j++) maxval = fmaxf(maxval, x[j]);
        float sum = 0.0f;
        for (int j = 0; j < C; j++) sum += expf(x[j] - maxval);
        for (int j = 0; j < C; j++) out[row * C + j] = expf(x[j] - maxval) / sum;
    }
}

void residual_forward(float* out, float* inp1, float* inp2, int N) {
    const int block_size = 256;
    const int grid_size = CEIL_DIV(N, block_size);
    residual_forward_kernel<<<grid_size, block_size>>>(out, inp1, inp2, N);
    cudaCheck(cudaGetLastError());
}

void gelu_forward(float* out, const float* inp, int N, cudaStream_t stream) {
    const int block_size = 128;
    gelu_forward_kernel<<<CEIL_DIV(N, block_size), block_size, 0, stream>>>(out, inp, N);
    cudaCheck(cudaGetLastError());
}

void softmax_forward(float* out, const float* inp, int N, int C) {
    softmax_rows_kernel<<<CEIL_DIV(N, 64), 64>>>(out, inp + 0, N, C);
}
