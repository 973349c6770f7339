// Strided views of one parameter ([[kernel]] tensors with name, strides and
// offset): split_kernel reads two interleaved slices of `pairs` (R, 2, C)
// and writes each transposed (C, R); join_kernel writes two inputs into the
// slices of one output. Declared in views.toml (confirmed) and
// views-wrong.toml (the slices swapped: refuted).
__global__ void split_kernel(float* left, float* right, const float* pairs, int R, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < R * C) {
        int c = i / R;
        int r = i % R;
        left[i] = pairs[r * 2 * C + c];
        right[i] = pairs[r * 2 * C + C + c];
    }
}

__global__ void join_kernel(float* pairs, const float* left, const float* right, int R, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < R * C) {
        int r = i / C;
        int c = i % C;
        pairs[r * 2 * C + c] = left[i];
        pairs[r * 2 * C + C + c] = right[i];
    }
}

void launch(float* left, float* right, float* pairs, int R, int C) {
    split_kernel<<<(R * C + 127) / 128, 128>>>(left, right, pairs, R, C);
    join_kernel<<<(R * C + 127) / 128, 128>>>(pairs, left, right, R, C);
}
