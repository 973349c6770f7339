// Evidence fixture: a layer norm, one warp per row through cooperative
// groups (tiled_partition<32>, cg::reduce), two passes (mean, then the
// variance about it), storing mean and rstd too.
// Expect: a proposed aclnnLayerNorm rule, confirmed.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void layernorm_kernel(float* out, float* mean, float* rstd, const float* inp,
                                 const float* weight, const float* bias, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (idx >= N) {
        return;
    }
    const float* x = inp + idx * C;
    float sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        sum += x[i];
    }
    sum = cg::reduce(warp, sum, cg::plus<float>{});
    float m = sum / C;
    if (warp.thread_rank() == 0) {
        mean[idx] = m;
    }
    sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        float diff = x[i] - m;
        sum += diff * diff;
    }
    sum = cg::reduce(warp, sum, cg::plus<float>{});
    float s = rsqrtf(sum / C + 1e-5f);
    if (warp.thread_rank() == 0) {
        rstd[idx] = s;
    }
    float* o = out + idx * C;
    for (int c = warp.thread_rank(); c < C; c += warp.size()) {
        float n = s * (x[c] - m);
        o[c] = n * weight[c] + bias[c];
    }
}

void layernorm(float* out, float* mean, float* rstd, const float* inp, const float* weight,
               const float* bias, int N, int C) {
    const int block_size = 128;
    const int grid_size = (N * 32 + block_size - 1) / block_size;
    layernorm_kernel<<<grid_size, block_size>>>(out, mean, rstd, inp, weight, bias, N, C);
}
