// An elementwise add over float4 (128-bit loads, as llm.c's
// encoder_forward_kernel3 does): the runner passes float buffers as float4.
#include <cuda_runtime.h>

__global__ void add4_kernel(float4* out, const float4* a, const float4* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 4) {
        float4 x = a[i], y = b[i];
        out[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}
