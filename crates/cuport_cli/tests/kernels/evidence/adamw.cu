// One AdamW step per element with the bias corrections computed by the
// caller from the step count (the shape of llm.c's adamw_kernel2, written
// small). aclnnApplyAdamWV2 takes the step itself, as a one-element tensor.
#include <cuda_runtime.h>
#include <math.h>

__global__ void adamw_step_kernel(float* params, const float* grads, float* m, float* v, int n,
                                  float lr, float beta1, float beta2, float beta1_correction,
                                  float beta2_correction, float eps, float weight_decay) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float g = grads[i];
        float mi = beta1 * m[i] + (1.0f - beta1) * g;
        float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        float m_hat = mi / beta1_correction;
        float v_hat = vi / beta2_correction;
        params[i] -= lr * (m_hat / (sqrtf(v_hat) + eps) + weight_decay * params[i]);
    }
}

void adamw_step(float* params, const float* grads, float* m, float* v, int n, float lr,
                float beta1, float beta2, float eps, float weight_decay, int t, cudaStream_t stream) {
    float c1 = 1.0f - powf(beta1, (float)t);
    float c2 = 1.0f - powf(beta2, (float)t);
    adamw_step_kernel<<<(n + 255) / 256, 256, 0, stream>>>(params, grads, m, v, n, lr, beta1,
                                                         beta2, c1, c2, eps, weight_decay);
}
