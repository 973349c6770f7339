// The classifier of classifier.cu with two threads per row and the race of
// llm.c's fused_classifier_kernel3: thread 0 reads the target's logit for
// the loss while the thread that owns that element overwrites it with its
// gradient, with no barrier between. Which value thread 0 reads depends on
// the order the threads run in.
#include <cuda_runtime.h>
#include <float.h>

__global__ void classifier_racy_kernel(float* logits, float* losses, float* probs,
                                       const float* dlosses, const int* targets, int N, int V,
                                       int P) {
    int row = blockIdx.x;
    float* x = logits + row * P;
    float maxval = -FLT_MAX;
    for (int i = 0; i < V; ++i) {
        maxval = fmaxf(maxval, x[i]);
    }
    float sum = 0.0f;
    for (int i = 0; i < V; ++i) {
        sum += expf(x[i] - maxval);
    }
    __syncthreads();
    int target = targets[row];
    if (threadIdx.x == 0) {
        losses[row] = logf(sum) - (x[target] - maxval);
    }
    float dloss = dlosses != NULL ? dlosses[row] : 1.0f / N;
    for (int i = threadIdx.x; i < V; i += blockDim.x) {
        float p = expf(x[i] - maxval) / sum;
        if (probs != NULL) {
            probs[row * P + i] = p;
        }
        x[i] = (p - (i == target ? 1.0f : 0.0f)) * dloss;
    }
}
