// cuport_aclblas.h: what a cuBLAS port to ops-blas (`--ascend-blas aclblas`)
// needs beyond ops-blas's own header: the status text and the math mode,
// which cann_ops_blas.h does not declare. Header-only; link ops_blas.
#ifndef CUPORT_ACLBLAS_H
#define CUPORT_ACLBLAS_H

#include <cann_ops_blas.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

// cuBLAS's math modes, kept so that cublasGetMathMode reads back what
// cublasSetMathMode set. ops-blas has no math mode: each call's compute type
// (aclblasGemmEx's computeType) sets its precision.
typedef enum cuport_aclblas_math {
    CUPORT_ACLBLAS_DEFAULT_MATH = 0,
    CUPORT_ACLBLAS_TENSOR_OP_MATH = 1,
    CUPORT_ACLBLAS_PEDANTIC_MATH = 2,
    CUPORT_ACLBLAS_TF32_TENSOR_OP_MATH = 3,
    CUPORT_ACLBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16
} cuport_aclblas_math_t;

// The mode per handle lives here rather than in the handle, which is
// ops-blas's own opaque type. One map for the process, guarded because
// handles may be used from several threads.
struct cuport_aclblas_math_registry {
    std::mutex lock;
    std::unordered_map<aclblasHandle_t, cuport_aclblas_math_t> modes;
};

inline cuport_aclblas_math_registry &cuport_aclblas_math_modes() {
    static cuport_aclblas_math_registry registry;
    return registry;
}

inline aclblasStatus_t cuport_aclblas_set_math_mode(aclblasHandle_t handle,
                                                    cuport_aclblas_math_t mode) {
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    auto &registry = cuport_aclblas_math_modes();
    std::lock_guard<std::mutex> guard(registry.lock);
    registry.modes[handle] = mode;
    return ACLBLAS_STATUS_SUCCESS;
}

inline aclblasStatus_t cuport_aclblas_get_math_mode(aclblasHandle_t handle,
                                                    cuport_aclblas_math_t *mode) {
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    if (mode == nullptr) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    auto &registry = cuport_aclblas_math_modes();
    std::lock_guard<std::mutex> guard(registry.lock);
    auto found = registry.modes.find(handle);
    *mode = found == registry.modes.end() ? CUPORT_ACLBLAS_DEFAULT_MATH : found->second;
    return ACLBLAS_STATUS_SUCCESS;
}

// cublasSgemmStridedBatched: the ops-blas headers cuport checks against
// declare no strided batch, so each matrix of the batch is one
// aclblasSgemmEx on the handle's stream (same results, one launch per
// matrix). Strides are in elements, as in cuBLAS.
inline aclblasStatus_t cuport_aclblas_sgemm_strided_batched(
    aclblasHandle_t handle, aclblasOperation_t transa, aclblasOperation_t transb, int m, int n,
    int k, const float *alpha, const float *A, int lda, long long strideA, const float *B,
    int ldb, long long strideB, const float *beta, float *C, int ldc, long long strideC,
    int batchCount) {
    for (int i = 0; i < batchCount; ++i) {
        aclblasStatus_t status = aclblasSgemmEx(
            handle, transa, transb, m, n, k, alpha, A + i * strideA, lda, B + i * strideB, ldb,
            beta, C + i * strideC, ldc, ACLBLAS_GEMM_DEFAULT);
        if (status != ACLBLAS_STATUS_SUCCESS) {
            return status;
        }
    }
    return ACLBLAS_STATUS_SUCCESS;
}

// cublasGemmStridedBatchedEx, one aclblasGemmEx per matrix; strides are
// in elements of each matrix's own type.
inline aclblasStatus_t cuport_aclblas_gemm_strided_batched_ex(
    aclblasHandle_t handle, aclblasOperation_t transa, aclblasOperation_t transb, int m, int n,
    int k, const void *alpha, const void *A, aclDataType Atype, int lda, long long strideA,
    const void *B, aclDataType Btype, int ldb, long long strideB, const void *beta, void *C,
    aclDataType Ctype, int ldc, long long strideC, int batchCount,
    aclblasComputeType_t computeType, aclblasGemmAlgo_t algo) {
    const long long a_step = strideA * static_cast<long long>(aclDataTypeSize(Atype));
    const long long b_step = strideB * static_cast<long long>(aclDataTypeSize(Btype));
    const long long c_step = strideC * static_cast<long long>(aclDataTypeSize(Ctype));
    for (int i = 0; i < batchCount; ++i) {
        aclblasStatus_t status = aclblasGemmEx(
            handle, transa, transb, m, n, k, alpha, static_cast<const char *>(A) + i * a_step,
            Atype, lda, static_cast<const char *>(B) + i * b_step, Btype, ldb, beta,
            static_cast<char *>(C) + i * c_step, Ctype, ldc, computeType, algo);
        if (status != ACLBLAS_STATUS_SUCCESS) {
            return status;
        }
    }
    return ACLBLAS_STATUS_SUCCESS;
}

// The enumerator's name, as cublasGetStatusString gives cuBLAS's.
inline const char *cuport_aclblas_status_string(aclblasStatus_t status) {
    switch (status) {
    case ACLBLAS_STATUS_SUCCESS: return "ACLBLAS_STATUS_SUCCESS";
    case ACLBLAS_STATUS_NOT_INITIALIZED: return "ACLBLAS_STATUS_NOT_INITIALIZED";
    case ACLBLAS_STATUS_ALLOC_FAILED: return "ACLBLAS_STATUS_ALLOC_FAILED";
    case ACLBLAS_STATUS_INVALID_VALUE: return "ACLBLAS_STATUS_INVALID_VALUE";
    case ACLBLAS_STATUS_MAPPING_ERROR: return "ACLBLAS_STATUS_MAPPING_ERROR";
    case ACLBLAS_STATUS_EXECUTION_FAILED: return "ACLBLAS_STATUS_EXECUTION_FAILED";
    case ACLBLAS_STATUS_INTERNAL_ERROR: return "ACLBLAS_STATUS_INTERNAL_ERROR";
    case ACLBLAS_STATUS_NOT_SUPPORTED: return "ACLBLAS_STATUS_NOT_SUPPORTED";
    case ACLBLAS_STATUS_ARCH_MISMATCH: return "ACLBLAS_STATUS_ARCH_MISMATCH";
    case ACLBLAS_STATUS_HANDLE_IS_NULLPTR: return "ACLBLAS_STATUS_HANDLE_IS_NULLPTR";
    case ACLBLAS_STATUS_INVALID_ENUM: return "ACLBLAS_STATUS_INVALID_ENUM";
    case ACLBLAS_STATUS_UNKNOWN: return "ACLBLAS_STATUS_UNKNOWN";
    }
    return "ACLBLAS_STATUS_UNKNOWN";
}

#endif  // CUPORT_ACLBLAS_H
