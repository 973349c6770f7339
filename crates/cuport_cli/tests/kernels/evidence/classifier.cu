// A classifier's softmax cross-entropy that writes the loss per row and
// the gradient over the logits (rows of V classes, stored P apart), with
// the probabilities only when asked and a default loss gradient of 1/N
// when none is given (the shape of llm.c's fused_classifier_kernel3,
// written small, one thread per row).
#include <cuda_runtime.h>
#include <float.h>

__global__ void classifier_kernel(float* logits, float* losses, float* probs,
                                  const float* dlosses, const int* targets, int N, int V, int P) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N) {
        return;
    }
    float* x = logits + row * P;
    float maxval = -FLT_MAX;
    for (int i = 0; i < V; ++i) {
        maxval = fmaxf(maxval, x[i]);
    }
    float sum = 0.0f;
    for (int i = 0; i < V; ++i) {
        sum += expf(x[i] - maxval);
    }
    int target = targets[row];
    losses[row] = logf(sum) - (x[target] - maxval);
    float dloss = dlosses != NULL ? dlosses[row] : 1.0f / N;
    for (int i = 0; i < V; ++i) {
        float p = expf(x[i] - maxval) / sum;
        if (probs != NULL) {
            probs[row * P + i] = p;
        }
        x[i] = (p - (i == target ? 1.0f : 0.0f)) * dloss;
    }
}
