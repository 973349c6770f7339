// A kernel in a second globbed .cu file.
__global__ void scale(float* x, float by) { x[threadIdx.x] *= by; }
