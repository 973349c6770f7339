// cuBLAS and cuBLASLt calls as a training or solver code base makes them:
// handle and stream set-up, level 1/2/3 routines, Ex and batched GEMMs, a
// triangular solve, status text and math mode, and a cuBLASLt GEMM with a
// bias epilogue. Ported with `--ascend-blas aclblas` it must compile against
// CANN's ops-blas headers (crates/cuport_rewrite/tests/ascend_blas.rs).
#include <cstdio>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CHECK_BLAS(call)                                                       \
    do {                                                                       \
        cublasStatus_t status_ = (call);                                       \
        if (status_ != CUBLAS_STATUS_SUCCESS) {                                \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,            \
                         cublasGetStatusString(status_));                      \
            return status_;                                                    \
        }                                                                      \
    } while (0)

// y = alpha * x + y, dot, norms and a scaled copy, on n floats.
cublasStatus_t level1(cublasHandle_t handle, int n, const float *x, float *y,
                      float *result) {
    const float alpha = 2.0f;
    CHECK_BLAS(cublasSaxpy(handle, n, &alpha, x, 1, y, 1));
    CHECK_BLAS(cublasSdot(handle, n, x, 1, y, 1, &result[0]));
    CHECK_BLAS(cublasSnrm2(handle, n, y, 1, &result[1]));
    CHECK_BLAS(cublasSasum(handle, n, y, 1, &result[2]));
    int index = 0;
    CHECK_BLAS(cublasIsamax(handle, n, y, 1, &index));
    CHECK_BLAS(cublasSscal(handle, n, &alpha, y, 1));
    CHECK_BLAS(cublasScopy(handle, n, x, 1, y, 1));
    CHECK_BLAS(cublasSswap(handle, n, y, 1, y, 1));
    return CUBLAS_STATUS_SUCCESS;
}

// y = A x and a rank-1 update, A m x n column-major.
cublasStatus_t level2(cublasHandle_t handle, int m, int n, float *a,
                      const float *x, float *y) {
    const float one = 1.0f, zero = 0.0f;
    CHECK_BLAS(cublasSgemv(handle, CUBLAS_OP_N, m, n, &one, a, m, x, 1, &zero, y, 1));
    CHECK_BLAS(cublasSger(handle, m, n, &one, y, 1, x, 1, a, m));
    CHECK_BLAS(cublasSsymv(handle, CUBLAS_FILL_MODE_UPPER, n, &one, a, m, x, 1,
                           &zero, y, 1));
    CHECK_BLAS(cublasStrsv(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                           CUBLAS_DIAG_NON_UNIT, n, a, m, y, 1));
    return CUBLAS_STATUS_SUCCESS;
}

// C = A B three ways (plain, Ex with explicit types, batched), then a
// triangular solve with B.
cublasStatus_t level3(cublasHandle_t handle, int m, int n, int k, const float *a,
                      const float *b, float *c, const float *const *a_batch,
                      const float *const *b_batch, float *const *c_batch,
                      int batch) {
    const float one = 1.0f, zero = 0.0f;
    CHECK_BLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &one, a, m,
                           b, n, &zero, c, m));
    CHECK_BLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a,
                            CUDA_R_32F, m, b, CUDA_R_32F, k, &zero, c,
                            CUDA_R_32F, m, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
    CHECK_BLAS(cublasSgemmBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one,
                                  a_batch, m, b_batch, k, &zero, c_batch, m,
                                  batch));
    CHECK_BLAS(cublasGemmBatchedEx(
        handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one,
        reinterpret_cast<const void *const *>(a_batch), CUDA_R_32F, k,
        reinterpret_cast<const void *const *>(b_batch), CUDA_R_32F, k, &zero,
        reinterpret_cast<void *const *>(c_batch), CUDA_R_32F, m, batch,
        CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
    CHECK_BLAS(cublasStrsm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER,
                           CUBLAS_OP_N, CUBLAS_DIAG_UNIT, m, n, &one, a, m, c, m));
    return CUBLAS_STATUS_SUCCESS;
}

// D = A B + bias with cuBLASLt, A m x k, B k x n, all column-major.
cublasStatus_t lt_gemm_bias(cublasLtHandle_t lt, int m, int n, int k,
                            const float *a, const float *b, const float *bias,
                            float *d, void *workspace, size_t workspace_size,
                            cudaStream_t stream) {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr,
                           d_layout = nullptr;
    cublasLtMatmulPreference_t preference = nullptr;
    CHECK_BLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t no_transpose = CUBLAS_OP_N;
    CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA,
                                              &no_transpose,
                                              sizeof(no_transpose)));
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                              &epilogue, sizeof(epilogue)));
    CHECK_BLAS(cublasLtMatmulDescSetAttribute(
        op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&a_layout, CUDA_R_32F, m, k, m));
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&b_layout, CUDA_R_32F, k, n, k));
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&d_layout, CUDA_R_32F, m, n, m));
    CHECK_BLAS(cublasLtMatmulPreferenceCreate(&preference));
    CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_size,
        sizeof(workspace_size)));
    cublasLtMatmulHeuristicResult_t heuristic = {};
    int found = 0;
    CHECK_BLAS(cublasLtMatmulAlgoGetHeuristic(lt, op, a_layout, b_layout,
                                              d_layout, d_layout, preference, 1,
                                              &heuristic, &found));
    if (found == 0) {
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    const float one = 1.0f, zero = 0.0f;
    CHECK_BLAS(cublasLtMatmul(lt, op, &one, a, a_layout, b, b_layout, &zero, d,
                              d_layout, d, d_layout, &heuristic.algo, workspace,
                              workspace_size, stream));
    cublasLtMatmulPreferenceDestroy(preference);
    cublasLtMatrixLayoutDestroy(d_layout);
    cublasLtMatrixLayoutDestroy(b_layout);
    cublasLtMatrixLayoutDestroy(a_layout);
    cublasLtMatmulDescDestroy(op);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t make_handle(cublasHandle_t *handle, cudaStream_t stream,
                           void *workspace, size_t workspace_size) {
    CHECK_BLAS(cublasCreate(handle));
    CHECK_BLAS(cublasSetStream(*handle, stream));
    CHECK_BLAS(cublasSetWorkspace(*handle, workspace, workspace_size));
    CHECK_BLAS(cublasSetMathMode(*handle, CUBLAS_TF32_TENSOR_OP_MATH));
    cublasMath_t mode = CUBLAS_DEFAULT_MATH;
    CHECK_BLAS(cublasGetMathMode(*handle, &mode));
    int version = 0;
    CHECK_BLAS(cublasGetVersion(*handle, &version));
    return mode == CUBLAS_TF32_TENSOR_OP_MATH ? CUBLAS_STATUS_SUCCESS
                                              : CUBLAS_STATUS_INTERNAL_ERROR;
}

void release(cublasHandle_t handle, cublasLtHandle_t lt) {
    cublasDestroy(handle);
    cublasLtDestroy(lt);
}
