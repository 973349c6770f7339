// Two interleaved slices of one (R, 2, C) buffer, each copied out
// transposed: mapped by split.toml to two aclnnInplaceCopy calls from
// strided views of `pairs` (CuportOpCall::view).
#include <cuda_runtime.h>

__global__ void split_kernel(float* left, float* right, const float* pairs, int R, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < R * C) {
        int c = i / R;
        int r = i % R;
        left[i] = pairs[r * 2 * C + c];
        right[i] = pairs[r * 2 * C + C + c];
    }
}

void split(float* left, float* right, const float* pairs, int R, int C, cudaStream_t stream) {
    split_kernel<<<(R * C + 127) / 128, 128, 0, stream>>>(left, right, pairs, R, C);
}
