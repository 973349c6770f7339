// Recognition fixtures: kernels with loops, reductions and gathers. Each
// kernel is preceded by the pattern cuport kernels must find (`expect:`).

// expect: row-sum
__global__ void row_sums(float* out, const float* x, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float acc = 0.0f;
        for (int j = 0; j < cols; j++) {
            acc += x[r * cols + j];
        }
        out[r] = acc;
    }
}

// expect: row-max
__global__ void row_max(float* out, const float* x, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float best = -INFINITY;
        for (int j = 0; j < cols; j++) {
            best = fmaxf(best, x[r * cols + j]);
        }
        out[r] = best;
    }
}

// expect: row-mean
__global__ void row_mean(float* out, const float* x, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* row = x + r * cols;
        float acc = 0.0f;
        for (int j = 0; j < cols; j++) {
            acc += row[j];
        }
        out[r] = acc / cols;
    }
}

// expect: row-sum-of-squares
__global__ void row_energy(float* out, const float* x, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float acc = 0.0f;
        for (int j = 0; j < cols; j++) {
            acc += x[r * cols + j] * x[r * cols + j];
        }
        out[r] = acc;
    }
}

// expect: softmax
__global__ void softmax_rows(float* out, const float* in, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* x = in + r * cols;
        float hi = -INFINITY;
        for (int j = 0; j < cols; j++) {
            hi = fmaxf(hi, x[j]);
        }
        float total = 0.0f;
        for (int j = 0; j < cols; j++) {
            total += expf(x[j] - hi);
        }
        for (int j = 0; j < cols; j++) {
            out[r * cols + j] = expf(x[j] - hi) / total;
        }
    }
}

// expect: softmax-causal
__global__ void softmax_causal(float* out, const float* in, int rows, int T) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        int t = r % T;
        const float* x = in + r * T;
        float hi = -INFINITY;
        for (int j = 0; j <= t; j++) {
            hi = fmaxf(hi, x[j]);
        }
        float total = 0.0f;
        for (int j = 0; j <= t; j++) {
            total += expf(x[j] - hi);
        }
        for (int j = 0; j <= t; j++) {
            out[r * T + j] = expf(x[j] - hi) / total;
        }
    }
}

// expect: layer-norm
__global__ void layer_norm(float* y, const float* x, const float* gamma, const float* beta,
                           float* mu, float* inv_std, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* row = x + r * cols;
    float sum = 0.0f;
    for (int j = 0; j < cols; j++) sum += row[j];
    float mean = sum / cols;
    float var = 0.0f;
    for (int j = 0; j < cols; j++) {
        float d = row[j] - mean;
        var += d * d;
    }
    float rs = rsqrtf(var / cols + 1e-6f);
    for (int j = 0; j < cols; j++) {
        y[r * cols + j] = (row[j] - mean) * rs * gamma[j] + beta[j];
    }
    mu[r] = mean;
    inv_std[r] = rs;
}

// expect: rms-norm
__global__ void rms_norm(float* y, const float* x, const float* w, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float ss = 0.0f;
    for (int j = 0; j < cols; j++) {
        float v = x[r * cols + j];
        ss += v * v;
    }
    float scale = rsqrtf(ss / cols + 1e-6f);
    for (int j = 0; j < cols; j++) {
        y[r * cols + j] = x[r * cols + j] * scale * w[j];
    }
}

// expect: gemm
__global__ void naive_gemm(float* C, const float* A, const float* B, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = acc;
    }
}

// expect: permute
__global__ void transpose(float* out, const float* in, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        int r = i / cols;
        int c = i % cols;
        out[c * rows + r] = in[i];
    }
}

// expect: embedding
__global__ void lookup(float* out, const int* ids, const float* table, int n, int dim) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n * dim) {
        int token = ids[i / dim];
        out[i] = table[token * dim + i % dim];
    }
}

// expect: embedding-add
__global__ void token_and_position(float* out, const int* ids, const float* wte, const float* wpe,
                                   int n, int T, int dim) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n * dim) {
        int row = i / dim;
        int token = ids[row];
        out[i] = wte[token * dim + i % dim] + wpe[(row % T) * dim + i % dim];
    }
}

// A row per block: a shared-memory tree reduction for the maximum, warp
// shuffles for the sum, loops bounded by the block's size and by numbers,
// none by the row's own position: a plain softmax, not a causal one.
// expect: softmax
__global__ void softmax_block_rows(float* out, const float* in, int rows, int cols) {
    extern __shared__ float part[];
    const float* row = in + blockIdx.x * cols;
    float* dst = out + blockIdx.x * cols;
    int lane = threadIdx.x;
    float big = -INFINITY;
    for (int j = lane; j < cols; j += blockDim.x) big = fmaxf(big, row[j]);
    part[lane] = big;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (lane < half) part[lane] = fmaxf(part[lane], part[lane + half]);
        __syncthreads();
    }
    big = part[0];
    __syncthreads();
    float acc = 0.0f;
    for (int j = lane; j < cols; j += blockDim.x) acc += expf(row[j] - big);
    for (int d = 16; d > 0; d /= 2) acc += __shfl_xor_sync(0xffffffff, acc, d);
    if (lane % 32 == 0) part[lane / 32] = acc;
    __syncthreads();
    if (lane == 0) {
        float all = 0.0f;
        for (int k = 0; k < blockDim.x / 32; k++) all += part[k];
        part[0] = all;
    }
    __syncthreads();
    for (int j = lane; j < cols; j += blockDim.x) dst[j] = expf(row[j] - big) / part[0];
}
