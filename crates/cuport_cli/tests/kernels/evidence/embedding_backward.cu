// Evidence fixture: the gradient of an embedding lookup for its table, one
// thread per table element: the sum of the gradient rows of the positions
// that looked that row up (no atomics, so every element is written).
// embedding_backward.toml declares it as aclnnEmbeddingDenseBackward with
// no padding row (confirmed); embedding_backward-wrong.toml with row 0 as
// the padding row, whose gradient the kernel does not drop (refuted).
#include <cuda_runtime.h>

__global__ void embedding_grad(float* dtable, const float* dout, const int* ids, int n, int rows, int cols) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= rows * cols) return;
    int row = idx / cols, col = idx % cols;
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        if (ids[i] == row) sum += dout[i * cols + col];
    }
    dtable[idx] = sum;
}

void embedding_backward(float* dtable, const float* dout, const int* ids, int n, int rows, int cols) {
    embedding_grad<<<(rows * cols + 127) / 128, 128>>>(dtable, dout, ids, n, rows, cols);
}
