// Kernels whose results are exact integers when barriers and exchanges are
// exact; main prints one `name value` line per check (see cpu_runner.rs).
#include "cuda_cpu.h"
namespace cg = cooperative_groups;

__global__ void block_tree_sum(int* out, const int* in, int n) {
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = t < n ? in[t] : 0;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

__global__ void warp_shuffles(int* out) {
    int lane = threadIdx.x % 32;
    int v = lane + 1;
    int x = v;
    for (int m = 16; m > 0; m /= 2) x += __shfl_xor_sync(0xffffffff, x, m);
    int d = v;
    for (int o = 16; o > 0; o /= 2) d += __shfl_down_sync(0xffffffff, d, o);
    int up = __shfl_up_sync(0xffffffff, v, 1);
    int b16 = __shfl_sync(0xffffffff, v, 3, 16);
    if (threadIdx.x == 0) { out[0] = x; out[1] = d; }
    if (threadIdx.x == 5) out[2] = up;
    if (threadIdx.x == 20) out[3] = b16;
    if (threadIdx.x == 33) out[4] = x;
}

__global__ void groups(int* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int sum = cg::reduce(warp, int(threadIdx.x), cg::plus<int>{});
    int big = cg::reduce(warp, int(threadIdx.x), cg::greater<int>{});
    if (warp.thread_rank() == 0) {
        out[warp.meta_group_rank()] = sum;
        out[4 + warp.meta_group_rank()] = big;
    }
    if (threadIdx.x == 0) out[8] = warp.meta_group_size();
}

// Threads that return early must not hold the others at the barrier.
__global__ void early_exit(int* out, int live) {
    // What the source pass makes of `extern __shared__ int dyn[];`.
    int* dyn = reinterpret_cast<int*>(cuport::dynamic_shared());
    if (threadIdx.x >= live) return;
    dyn[threadIdx.x] = 1;
    __syncthreads();
    if (threadIdx.x == 0) {
        int total = 0;
        for (int i = 0; i < live; i++) total += dyn[i];
        out[0] = total;
    }
}

__global__ void atomics(int* out) { atomicAdd(out, 1); }

int main() {
    std::vector<int> in(256, 2), sums(3), w(5), g(9), e(1), a(1, 0);
    cuport::launch(dim3(3), dim3(256), 0, [&] { block_tree_sum(sums.data(), in.data(), 200); });
    cuport::launch(dim3(1), dim3(64), 0, [&] { warp_shuffles(w.data()); });
    cuport::launch(dim3(1), dim3(128), 0, [&] { groups(g.data()); });
    cuport::launch(dim3(1), dim3(128), 128 * sizeof(int), [&] { early_exit(e.data(), 77); });
    cuport::launch(dim3(4), dim3(96), 0, [&] { atomics(a.data()); });
    std::printf("block_tree_sum %d %d %d\n", sums[0], sums[1], sums[2]);
    std::printf("shfl_xor_total %d\nshfl_down_total %d\nshfl_up %d\nshfl_width16 %d\nshfl_xor_warp1 %d\n",
                w[0], w[1], w[2], w[3], w[4]);
    std::printf("cg_sum %d %d %d %d\ncg_max %d %d %d %d\ncg_tiles %d\n", g[0], g[1], g[2], g[3],
                g[4], g[5], g[6], g[7], g[8]);
    std::printf("early_exit %d\natomics %d\n", e[0], a[0]);
    return 0;
}
