// cuport/ascend_helpers.cpp: the cuport_* helpers that ported CUDA calls are
// rewritten into (cuBLAS -> cuport_blas_*, cuBLASLt -> cuport_blaslt_*,
// cuDNN -> cuport_dnn_*, runtime -> cuport_acl_*, NCCL -> cuport_hccl_*),
// implemented over AscendCL, aclnn and HCCL. cuport writes it into dual-stack output; build it into the ported program
// and link ascendcl, opapi (aclnn operators) and hccl.
//
// How the helpers behave, where it differs from CUDA:
// - Each aclnn operator runs its two phases (aclnnXxxGetWorkspaceSize, then
//   aclnnXxx on the handle's stream). A helper then waits for that stream
//   before it frees the workspace, temporaries and aclTensor objects, so the
//   calls are synchronous where cuBLAS and cuDNN are asynchronous.
// - alpha and beta are read from host memory (cuBLAS/cuDNN host pointer mode).
// - cuBLAS is column-major, aclTensor row-major: a column-major m x n matrix
//   with leading dimension ld is the row-major n x m view with strides
//   (ld, 1), so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T.
// - Failures come back as aclError / aclnnStatus codes (0 = success).
// Checked here only against declarations generated from cuport's rule tables
// (g++ -fsyntax-only); not yet run on Ascend hardware.
#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <aclnnop/aclnn_add.h>
#include <aclnnop/aclnn_addmm.h>
#include <aclnnop/aclnn_batch_matmul.h>
#include <aclnnop/aclnn_convolution.h>
#include <aclnnop/aclnn_copy.h>
#include <aclnnop/aclnn_gelu_backward_v2.h>
#include <aclnnop/aclnn_gelu_v2.h>
#include <aclnnop/aclnn_logsoftmax.h>
#include <aclnnop/aclnn_mm.h>
#include <aclnnop/aclnn_mul.h>
#include <aclnnop/aclnn_mv.h>
#include <aclnnop/aclnn_reduce_sum.h>
#include <aclnnop/aclnn_relu.h>
#include <aclnnop/aclnn_softmax.h>
#include <hccl/hccl.h>

#include "cuport_shim.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

// ---- handle and descriptor state ------------------------------------------

// cubeMathType values of the aclnn matmul/convolution operators.
static const int8_t kKeepDtype = 0;
static const int8_t kAllowFp32DownPrecision = 1;
static const int8_t kUseFp16 = 2;
static const int8_t kUseHf32 = 3;

struct cuport_blas_state {
    aclrtStream stream;      // the stream cublasSetStream chose, or null
    aclrtStream own_stream;  // used while no stream is set
    int8_t cube_math;        // KEEP_DTYPE: exact FP32, like cuBLAS's default math mode
    cuport_blas_math_t math_mode;  // what cublasGetMathMode reads back
};

struct cuport_dnn_state {
    aclrtStream stream;
    aclrtStream own_stream;
};

struct cuport_dnn_tensor_desc {
    aclDataType type;
    int64_t dims[4];  // N, C, H, W of a contiguous NCHW tensor
};

struct cuport_dnn_filter_desc {
    aclDataType type;
    int64_t dims[4];  // K, C, R, S
};

struct cuport_dnn_conv_desc {
    int64_t pad[2];
    int64_t stride[2];
    int64_t dilation[2];
    int64_t groups;
    int8_t cube_math;
};

namespace {

// aclnn's own status codes for rejected parameters (CANN aclnn docs).
const aclnnStatus kAclnnParamNullptr = 161001;
const aclnnStatus kAclnnParamInvalid = 161002;

using Phase2 = aclnnStatus (*)(void *, uint64_t, aclOpExecutor *, aclrtStream);

// ---- process-wide runtime start-up ----------------------------------------

void finalize_at_exit() { aclFinalize(); }

// aclInit once per process; aclFinalize at exit unless someone else (a
// framework such as torch_npu) initialised AscendCL first and owns it.
aclError ensure_initialized() {
    static const aclError status = [] {
        aclError st = aclInit(nullptr);
        if (st == ACL_ERROR_REPEAT_INITIALIZE) {
            return static_cast<aclError>(ACL_SUCCESS);
        }
        if (st == ACL_SUCCESS) {
            std::atexit(finalize_at_exit);
        }
        return st;
    }();
    return status;
}

// CUDA initialises implicitly on device 0; AscendCL needs aclInit and a
// current device before streams and operators can be used.
aclError ensure_device() {
    aclError st = ensure_initialized();
    if (st != ACL_SUCCESS) {
        return st;
    }
    int32_t device = 0;
    if (aclrtGetDevice(&device) == ACL_SUCCESS) {
        return ACL_SUCCESS;
    }
    return aclrtSetDevice(0);
}

// ---- element types and host scalars ---------------------------------------

size_t element_size(aclDataType type) {
    switch (type) {
        case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
        case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
        case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
        case ACL_DOUBLE: case ACL_INT64: case ACL_UINT64: case ACL_COMPLEX64: return 8;
        case ACL_COMPLEX128: return 16;
        default: return 0;
    }
}

bool is_complex(aclDataType type) { return type == ACL_COMPLEX64 || type == ACL_COMPLEX128; }

// How a host scalar (alpha, beta) is stored.
enum class ScalarKind { F16, F32, F64, I32 };

aclDataType acl_type(ScalarKind kind) {
    switch (kind) {
        case ScalarKind::F16: return ACL_FLOAT16;
        case ScalarKind::F64: return ACL_DOUBLE;
        case ScalarKind::I32: return ACL_INT32;
        case ScalarKind::F32: break;
    }
    return ACL_FLOAT;
}

// Whether the host scalar at `value` equals `expected` (0 or 1).
bool scalar_is(const void *value, ScalarKind kind, int expected) {
    switch (kind) {
        case ScalarKind::F16: {
            uint16_t bits = 0;
            std::memcpy(&bits, value, sizeof bits);
            return expected == 0 ? (bits & 0x7fffu) == 0 : bits == 0x3c00u;
        }
        case ScalarKind::F64: return *static_cast<const double *>(value) == expected;
        case ScalarKind::I32: return *static_cast<const int32_t *>(value) == expected;
        case ScalarKind::F32: break;
    }
    return *static_cast<const float *>(value) == static_cast<float>(expected);
}

// ---- one helper call: everything it creates lives until the stream is done --

class Call {
public:
    explicit Call(aclrtStream stream) : stream_(stream) {}
    ~Call() { release(); }
    Call(const Call &) = delete;
    Call &operator=(const Call &) = delete;

    aclrtStream stream() const { return stream_; }

    // A strided view of device memory; `data` need not be 32-byte aligned
    // (aclCreateTensor requires it of tensorData): the view then starts at an
    // element offset from the aligned address below it.
    aclTensor *tensor(const void *data, aclDataType type, std::vector<int64_t> dims,
                      std::vector<int64_t> strides, aclFormat format = ACL_FORMAT_ND) {
        size_t size = element_size(type);
        if (size == 0 || dims.size() != strides.size()) {
            return nullptr;
        }
        int64_t extent = 1;
        for (size_t i = 0; i < dims.size(); ++i) {
            if (dims[i] <= 0 || strides[i] < 0) {
                return nullptr;
            }
            extent += (dims[i] - 1) * strides[i];
        }
        uintptr_t address = reinterpret_cast<uintptr_t>(data);
        uintptr_t aligned = address & ~static_cast<uintptr_t>(31);
        int64_t offset = 0;
        if ((address - aligned) % size == 0) {
            offset = static_cast<int64_t>((address - aligned) / size);
            address = aligned;
        }
        int64_t storage = extent + offset;
        aclTensor *tensor = aclCreateTensor(dims.data(), dims.size(), type, strides.data(), offset,
                                            format, &storage, 1, reinterpret_cast<void *>(address));
        if (tensor != nullptr) {
            tensors_.push_back(tensor);
        }
        return tensor;
    }

    // A contiguous (row-major) view of `dims`.
    aclTensor *packed(const void *data, aclDataType type, const std::vector<int64_t> &dims,
                      aclFormat format = ACL_FORMAT_ND) {
        std::vector<int64_t> strides(dims.size(), 1);
        for (size_t i = dims.size(); i > 1; --i) {
            strides[i - 2] = strides[i - 1] * dims[i - 1];
        }
        return tensor(data, type, dims, strides, format);
    }

    aclScalar *scalar(const void *value, ScalarKind kind) {
        aclScalar *scalar = aclCreateScalar(const_cast<void *>(value), acl_type(kind));
        if (scalar != nullptr) {
            scalars_.push_back(scalar);
        }
        return scalar;
    }

    aclIntArray *ints(const int64_t *values, uint64_t count) {
        aclIntArray *array = aclCreateIntArray(values, count);
        if (array != nullptr) {
            arrays_.push_back(array);
        }
        return array;
    }

    // Device memory freed after the stream has finished.
    void *scratch(uint64_t bytes, aclError *status) {
        void *buffer = nullptr;
        *status = aclrtMalloc(&buffer, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
        if (*status == ACL_SUCCESS) {
            buffers_.push_back(buffer);
        }
        return buffer;
    }

    // aclnn's two phases: size the workspace and build the executor, then
    // launch on this call's stream.
    template <typename Phase1>
    aclnnStatus run(Phase1 phase1, Phase2 phase2) {
        uint64_t bytes = 0;
        aclOpExecutor *executor = nullptr;
        aclnnStatus st = phase1(&bytes, &executor);
        if (st != 0) {
            return st;
        }
        void *workspace = nullptr;
        if (bytes > 0) {
            aclError alloc = ACL_SUCCESS;
            workspace = scratch(bytes, &alloc);
            if (alloc != ACL_SUCCESS) {
                return alloc;
            }
        }
        return phase2(workspace, bytes, executor, stream_);
    }

    // Waits for the stream (when everything was launched), then releases.
    aclError finish(aclError status) {
        if (status == ACL_SUCCESS) {
            status = aclrtSynchronizeStream(stream_);
        }
        release();
        return status;
    }

private:
    void release() {
        for (aclTensor *t : tensors_) aclDestroyTensor(t);
        for (aclScalar *s : scalars_) aclDestroyScalar(s);
        for (aclIntArray *a : arrays_) aclDestroyIntArray(a);
        for (void *b : buffers_) aclrtFree(b);
        tensors_.clear();
        scalars_.clear();
        arrays_.clear();
        buffers_.clear();
    }

    aclrtStream stream_;
    std::vector<aclTensor *> tensors_;
    std::vector<aclScalar *> scalars_;
    std::vector<aclIntArray *> arrays_;
    std::vector<void *> buffers_;
};

// The stream a handle's work goes to. Without cublasSetStream/cudnnSetStream
// CUDA uses the legacy default stream, which orders after all earlier device
// work: the handle's own stream then first waits for the whole device.
aclError handle_stream(aclrtStream set, aclrtStream own, aclrtStream *out) {
    if (set != nullptr) {
        *out = set;
        return ACL_SUCCESS;
    }
    *out = own;
    return aclrtSynchronizeDevice();
}

// ---- alpha/beta blending: y = alpha * op(...) + beta * y -------------------

struct Scaling {
    const aclScalar *alpha;
    const aclScalar *beta;
    bool alpha_is_one;
    bool beta_is_zero;
    bool beta_is_one;
};

bool make_scaling(Call &call, const void *alpha, const void *beta, ScalarKind kind, Scaling *out) {
    if (alpha == nullptr || beta == nullptr) {
        return false;
    }
    out->alpha = call.scalar(alpha, kind);
    out->beta = call.scalar(beta, kind);
    out->alpha_is_one = scalar_is(alpha, kind, 1);
    out->beta_is_zero = scalar_is(beta, kind, 0);
    out->beta_is_one = scalar_is(beta, kind, 1);
    return out->alpha != nullptr && out->beta != nullptr;
}

aclnnStatus inplace_muls(Call &call, aclTensor *self, const aclScalar *factor) {
    return call.run(
        [&](uint64_t *bytes, aclOpExecutor **executor) {
            return aclnnInplaceMulsGetWorkspaceSize(self, factor, bytes, executor);
        },
        aclnnInplaceMuls);
}

aclnnStatus inplace_add(Call &call, aclTensor *self, const aclTensor *other, const aclScalar *alpha) {
    return call.run(
        [&](uint64_t *bytes, aclOpExecutor **executor) {
            return aclnnInplaceAddGetWorkspaceSize(self, other, alpha, bytes, executor);
        },
        aclnnInplaceAdd);
}

// `op(dst)` writes its result into dst. With beta = 0 it writes straight into
// y (which is then scaled by alpha unless alpha is 1); otherwise into `temp`,
// and y = beta * y + alpha * temp (aclnnInplaceMuls, aclnnInplaceAdd).
template <typename Op>
aclnnStatus blend(Call &call, const Scaling &s, aclTensor *y, aclTensor *temp, Op op) {
    if (s.beta_is_zero) {
        aclnnStatus st = op(y);
        if (st != 0 || s.alpha_is_one) {
            return st;
        }
        return inplace_muls(call, y, s.alpha);
    }
    if (temp == nullptr) {
        return ACL_ERROR_BAD_ALLOC;
    }
    aclnnStatus st = op(temp);
    if (st == 0 && !s.beta_is_one) {
        st = inplace_muls(call, y, s.beta);
    }
    if (st == 0) {
        st = inplace_add(call, y, temp, s.alpha);
    }
    return st;
}

// ---- column-major operands -------------------------------------------------

// Strides of the row-major view of op(X)^T, where X is column-major with
// leading dimension ld: (ld, 1) when op is N, (1, ld) when op is T (or C on
// real data, which cuBLAS treats as T).
std::vector<int64_t> transposed_view_strides(cuport_blas_op_t op, int ld) {
    if (op == CUPORT_OP_N) {
        return {ld, 1};
    }
    return {1, ld};
}

// Copies `batch` blocks of rows x cols elements between a packed buffer and
// strided memory (row pitch `pitch`, block pitch `block_pitch`, in elements).
aclError copy_blocks(Call &call, bool to_packed, void *packed, void *strided, size_t size,
                     int64_t rows, int64_t cols, int64_t pitch, int64_t batch, int64_t block_pitch) {
    for (int64_t b = 0; b < batch; ++b) {
        char *p = static_cast<char *>(packed) + b * rows * cols * size;
        char *s = static_cast<char *>(strided) + b * block_pitch * size;
        size_t width = cols * size;
        aclError st = to_packed
            ? aclrtMemcpy2dAsync(p, width, s, pitch * size, width, rows, ACL_MEMCPY_DEVICE_TO_DEVICE, call.stream())
            : aclrtMemcpy2dAsync(s, pitch * size, p, width, width, rows, ACL_MEMCPY_DEVICE_TO_DEVICE, call.stream());
        if (st != ACL_SUCCESS) {
            return st;
        }
    }
    return ACL_SUCCESS;
}

struct Gemm {
    cuport_blas_op_t transa, transb;
    int m, n, k;
    const void *A; aclDataType atype; int lda; long long stride_a;
    const void *B; aclDataType btype; int ldb; long long stride_b;
    void *C; aclDataType ctype; int ldc; long long stride_c;
    int batch;      // 0: one 2-D product (aclnnMm / aclnnInplaceAddmm)
    ScalarKind scalars;
    const void *alpha, *beta;
    int8_t cube_math;
};

bool gemm_arguments_valid(const Gemm &g) {
    bool ops = g.transa >= CUPORT_OP_N && g.transa <= CUPORT_OP_C && g.transb >= CUPORT_OP_N && g.transb <= CUPORT_OP_C;
    bool sizes = g.m >= 0 && g.n >= 0 && g.k >= 0 && g.batch >= 0;
    // cuBLAS's rule: each leading dimension covers the stored rows.
    int a_rows = g.transa == CUPORT_OP_N ? g.m : g.k;
    int b_rows = g.transb == CUPORT_OP_N ? g.k : g.n;
    bool lds = g.ldc >= (g.m > 1 ? g.m : 1) && g.lda >= (a_rows > 1 ? a_rows : 1) && g.ldb >= (b_rows > 1 ? b_rows : 1);
    bool real = !is_complex(g.atype) && !is_complex(g.btype) && !is_complex(g.ctype);
    return ops && sizes && lds && real && element_size(g.ctype) != 0;
}

aclnnStatus gemm_2d(Call &call, const Gemm &g, const Scaling &s, aclTensor *mat1, aclTensor *mat2, aclTensor *out) {
    if (!s.beta_is_zero) {
        return call.run(
            [&](uint64_t *bytes, aclOpExecutor **executor) {
                return aclnnInplaceAddmmGetWorkspaceSize(out, mat1, mat2, s.beta, s.alpha, g.cube_math, bytes, executor);
            },
            aclnnInplaceAddmm);
    }
    aclnnStatus st = call.run(
        [&](uint64_t *bytes, aclOpExecutor **executor) {
            return aclnnMmGetWorkspaceSize(mat1, mat2, out, g.cube_math, bytes, executor);
        },
        aclnnMm);
    if (st == 0 && !s.alpha_is_one) {
        st = inplace_muls(call, out, s.alpha);
    }
    return st;
}

// k = 0: C = beta * C; with beta = 0 cuBLAS does not read C, so it is zeroed.
aclnnStatus scale_only(Call &call, const Scaling &s, void *c, aclDataType type, int64_t count) {
    if (s.beta_is_one) {
        return 0;
    }
    size_t bytes = static_cast<size_t>(count) * element_size(type);
    if (s.beta_is_zero) {
        return aclrtMemsetAsync(c, bytes, 0, bytes, call.stream());
    }
    aclTensor *all = call.packed(c, type, {count});
    return all == nullptr ? kAclnnParamInvalid : inplace_muls(call, all, s.beta);
}

// C = alpha * op(A) op(B) + beta * C, batched when g.batch > 0.
aclError gemm(aclrtStream stream, const Gemm &g) {
    if (!gemm_arguments_valid(g)) {
        return ACL_ERROR_INVALID_PARAM;
    }
    int batches = g.batch > 0 ? g.batch : 1;
    if (g.m == 0 || g.n == 0) {
        return ACL_SUCCESS;  // cuBLAS returns at once, leaving C untouched
    }
    Call call(stream);
    Scaling s{};
    if (!make_scaling(call, g.alpha, g.beta, g.scalars, &s)) {
        return call.finish(ACL_ERROR_INVALID_PARAM);
    }
    size_t size = element_size(g.ctype);
    // aclnn writes packed outputs: C^T is batches x n rows of m elements;
    // a C with ldc > m (or a batch stride with gaps) goes through a packed copy.
    bool packed = g.ldc == g.m && (g.batch == 0 || g.stride_c == static_cast<long long>(g.n) * g.m);
    void *c = g.C;
    aclError st = ACL_SUCCESS;
    if (!packed) {
        c = call.scratch(static_cast<uint64_t>(batches) * g.n * g.m * size, &st);
        if (st == ACL_SUCCESS && !s.beta_is_zero) {
            st = copy_blocks(call, true, c, g.C, size, g.n, g.m, g.ldc, batches, g.stride_c);
        }
        if (st != ACL_SUCCESS) {
            return call.finish(st);
        }
    }
    std::vector<int64_t> a_strides = transposed_view_strides(g.transa, g.lda);
    std::vector<int64_t> b_strides = transposed_view_strides(g.transb, g.ldb);
    aclnnStatus result;
    if (g.k == 0) {
        result = scale_only(call, s, c, g.ctype, static_cast<int64_t>(batches) * g.n * g.m);
    } else if (g.batch == 0) {
        aclTensor *mat1 = call.tensor(g.B, g.btype, {g.n, g.k}, b_strides);
        aclTensor *mat2 = call.tensor(g.A, g.atype, {g.k, g.m}, a_strides);
        aclTensor *out = call.packed(c, g.ctype, {g.n, g.m});
        if (mat1 == nullptr || mat2 == nullptr || out == nullptr) {
            return call.finish(kAclnnParamInvalid);
        }
        result = gemm_2d(call, g, s, mat1, mat2, out);
    } else {
        aclTensor *self = call.tensor(g.B, g.btype, {g.batch, g.n, g.k}, {g.stride_b, b_strides[0], b_strides[1]});
        aclTensor *mat2 = call.tensor(g.A, g.atype, {g.batch, g.k, g.m}, {g.stride_a, a_strides[0], a_strides[1]});
        aclTensor *out = call.packed(c, g.ctype, {g.batch, g.n, g.m});
        void *temp_data = s.beta_is_zero ? nullptr : call.scratch(static_cast<uint64_t>(g.batch) * g.n * g.m * size, &st);
        aclTensor *temp = temp_data == nullptr ? nullptr : call.packed(temp_data, g.ctype, {g.batch, g.n, g.m});
        if (self == nullptr || mat2 == nullptr || out == nullptr || st != ACL_SUCCESS) {
            return call.finish(st != ACL_SUCCESS ? st : kAclnnParamInvalid);
        }
        result = blend(call, s, out, temp, [&](aclTensor *dst) {
            return call.run(
                [&](uint64_t *bytes, aclOpExecutor **executor) {
                    return aclnnBatchMatMulGetWorkspaceSize(self, mat2, dst, g.cube_math, bytes, executor);
                },
                aclnnBatchMatMul);
        });
    }
    if (result == 0 && !packed) {
        result = copy_blocks(call, false, c, g.C, size, g.n, g.m, g.ldc, batches, g.stride_c);
    }
    return call.finish(result);
}

Gemm plain_gemm(cuport_blas_handle_t handle, cuport_blas_op_t transa, cuport_blas_op_t transb, int m, int n,
                int k, const void *A, aclDataType atype, int lda, const void *B, aclDataType btype, int ldb,
                void *C, aclDataType ctype, int ldc) {
    Gemm g{};
    g.transa = transa; g.transb = transb; g.m = m; g.n = n; g.k = k;
    g.A = A; g.atype = atype; g.lda = lda;
    g.B = B; g.btype = btype; g.ldb = ldb;
    g.C = C; g.ctype = ctype; g.ldc = ldc;
    g.scalars = ScalarKind::F32;
    g.cube_math = handle->cube_math;
    return g;
}

}  // namespace

// ---- runtime ----------------------------------------------------------------

extern "C" aclError cuport_acl_set_device(int32_t deviceId) {
    aclError st = ensure_initialized();
    return st != ACL_SUCCESS ? st : aclrtSetDevice(deviceId);
}

extern "C" aclError cuport_acl_reset_current_device(void) {
    int32_t device = 0;
    aclError st = aclrtGetDevice(&device);
    return st != ACL_SUCCESS ? st : aclrtResetDevice(device);
}

// CUDA event flags opt out (cudaEventDisableTiming = 0x02), ACL's opt in:
// timestamps need TIME_LINE, cross-stream waits need SYNC. cudaEventBlockingSync
// (0x01) has no counterpart and is dropped.
namespace {

// A completion query's result as CUDA's queries report it: the ACL error,
// else CUPORT_ACL_NOT_READY while work is pending, else ACL_SUCCESS.
aclError query_result(aclError st, bool pending) {
    if (st != ACL_SUCCESS) {
        return st;
    }
    return pending ? static_cast<aclError>(CUPORT_ACL_NOT_READY) : ACL_SUCCESS;
}

}  // namespace

extern "C" aclError cuport_acl_stream_query(aclrtStream stream) {
    aclrtStreamStatus status = ACL_STREAM_STATUS_COMPLETE;
    aclError st = aclrtStreamQuery(stream, &status);
    return query_result(st, status == ACL_STREAM_STATUS_NOT_READY);
}

extern "C" aclError cuport_acl_event_query(aclrtEvent event) {
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    aclError st = aclrtQueryEventStatus(event, &status);
    return query_result(st, status == ACL_EVENT_RECORDED_STATUS_NOT_READY);
}

extern "C" uint32_t cuport_acl_event_flags(unsigned int cudaFlags) {
    uint32_t flags = ACL_EVENT_SYNC;
    if ((cudaFlags & 0x02u) == 0) {
        flags |= ACL_EVENT_TIME_LINE;
    }
#ifdef ACL_EVENT_IPC  // a macro in acl_rt.h since ACL 1.16; older CANN has no IPC events
    if ((cudaFlags & 0x04u) != 0) {
        flags |= ACL_EVENT_IPC;
    }
#endif
    return flags;
}

extern "C" const char *cuport_acl_error_name(aclError error) {
    switch (error) {
        case ACL_SUCCESS: return "ACL_SUCCESS";
        case ACL_ERROR_INVALID_PARAM: return "ACL_ERROR_INVALID_PARAM";
        case ACL_ERROR_REPEAT_INITIALIZE: return "ACL_ERROR_REPEAT_INITIALIZE";
        case ACL_ERROR_BAD_ALLOC: return "ACL_ERROR_BAD_ALLOC";
        case ACL_ERROR_INVALID_DEVICE: return "ACL_ERROR_INVALID_DEVICE";
        case ACL_ERROR_FEATURE_UNSUPPORTED: return "ACL_ERROR_FEATURE_UNSUPPORTED";
        case ACL_ERROR_INTERNAL_ERROR: return "ACL_ERROR_INTERNAL_ERROR";
        case ACL_ERROR_FAILURE: return "ACL_ERROR_FAILURE";
        case ACL_ERROR_RT_FAILURE: return "ACL_ERROR_RT_FAILURE";
        case kAclnnParamNullptr: return "ACLNN_ERR_PARAM_NULLPTR";
        case kAclnnParamInvalid: return "ACLNN_ERR_PARAM_INVALID";
        default: return "ACL_ERROR_UNKNOWN";
    }
}

// The cudaDeviceProp fields Ascend reports. aclrtGetSocName has no device
// argument: the name is the SoC of this machine's NPUs. aclrtGetDeviceInfo
// needs a CANN whose acl_rt.h declares it (ACL 1.16).
namespace {

#if CUPORT_CANN_HAS_RT_DEVICE_INFO
// Memory, AI Core count and L2 size of device `id` (aclrtGetDeviceInfo).
aclError device_counts(uint32_t id, cuport_acl_device_prop_t *prop) {
    int64_t value = 0;
    aclError st = aclrtGetDeviceInfo(id, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &value);
    if (st != ACL_SUCCESS) {
        return st;
    }
    prop->totalGlobalMem = static_cast<size_t>(value);
    if ((st = aclrtGetDeviceInfo(id, ACL_DEV_ATTR_AICORE_CORE_NUM, &value)) != ACL_SUCCESS) {
        return st;
    }
    prop->multiProcessorCount = static_cast<int>(value);
    if ((st = aclrtGetDeviceInfo(id, ACL_DEV_ATTR_L2_CACHE_SIZE, &value)) != ACL_SUCCESS) {
        return st;
    }
    prop->l2CacheSize = static_cast<int>(value);
    return ACL_SUCCESS;
}
#else
// Releases before aclrtGetDeviceInfo: core count and L2 size from
// aclGetDeviceCapability; memory from aclrtGetMemInfo, which reports on
// the current device, so `id` is made current for the query.
aclError device_counts(uint32_t id, cuport_acl_device_prop_t *prop) {
    int64_t value = 0;
    aclError st = aclGetDeviceCapability(id, ACL_DEVICE_INFO_AI_CORE_NUM, &value);
    if (st != ACL_SUCCESS) {
        return st;
    }
    prop->multiProcessorCount = static_cast<int>(value);
    if ((st = aclGetDeviceCapability(id, ACL_DEVICE_INFO_L2_SIZE, &value)) != ACL_SUCCESS) {
        return st;
    }
    prop->l2CacheSize = static_cast<int>(value);
    int32_t current = 0;
    if ((st = aclrtGetDevice(&current)) != ACL_SUCCESS) {
        return st;
    }
    const int32_t wanted = static_cast<int32_t>(id);
    if (current != wanted && (st = aclrtSetDevice(wanted)) != ACL_SUCCESS) {
        return st;
    }
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    st = aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total_bytes);
    prop->totalGlobalMem = total_bytes;
    aclError restored = current != wanted ? aclrtSetDevice(current) : ACL_SUCCESS;
    return st != ACL_SUCCESS ? st : restored;
}
#endif

}  // namespace

extern "C" aclError cuport_acl_get_device_properties(cuport_acl_device_prop_t *prop, int32_t deviceId) {
    if (prop == nullptr || deviceId < 0) {
        return ACL_ERROR_INVALID_PARAM;
    }
    std::memset(prop, 0, sizeof *prop);
    aclError st = ensure_initialized();
    if (st != ACL_SUCCESS) {
        return st;
    }
    const char *soc = aclrtGetSocName();
    if (soc != nullptr) {
        std::strncpy(prop->name, soc, sizeof prop->name - 1);
    }
    uint32_t id = static_cast<uint32_t>(deviceId);
    st = device_counts(id, prop);
    return st;  // major/minor stay 0: Ascend has no compute capability
}

// ---- HCCL -------------------------------------------------------------------

namespace {

size_t hccl_element_size(HcclDataType type) {
    switch (type) {
        case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
        case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16: case HCCL_DATA_TYPE_FP16:
        case HCCL_DATA_TYPE_BFP16: return 2;
        case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
        case HCCL_DATA_TYPE_INT64: case HCCL_DATA_TYPE_UINT64: case HCCL_DATA_TYPE_FP64: return 8;
        default: return 0;
    }
}

}  // namespace

// HcclBroadcast is in place only: the root first copies sendBuf into recvBuf
// on the same stream, so the copy is ordered before the broadcast.
extern "C" HcclResult cuport_hccl_broadcast(const void *sendBuf, void *recvBuf, uint64_t count,
                                            HcclDataType dataType, uint32_t root, HcclComm comm,
                                            aclrtStream stream) {
    size_t size = hccl_element_size(dataType);
    if (size == 0 || recvBuf == nullptr) {
        return HCCL_E_PARA;
    }
    uint32_t rank = 0;
    HcclResult hr = HcclGetRankId(comm, &rank);
    if (hr != HCCL_SUCCESS) {
        return hr;
    }
    if (rank == root && sendBuf != recvBuf && count > 0) {
        size_t bytes = count * size;
        if (aclrtMemcpyAsync(recvBuf, bytes, sendBuf, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, stream) != ACL_SUCCESS) {
            return HCCL_E_RUNTIME;
        }
    }
    return HcclBroadcast(recvBuf, count, dataType, root, comm, stream);
}

// ---- cuBLAS -------------------------------------------------------------------

extern "C" aclError cuport_blas_create(cuport_blas_handle_t *handle) {
    if (handle == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    aclError st = ensure_device();
    if (st != ACL_SUCCESS) {
        return st;
    }
    cuport_blas_state *state = new (std::nothrow) cuport_blas_state{nullptr, nullptr, kKeepDtype, CUPORT_BLAS_DEFAULT_MATH};
    if (state == nullptr) {
        return ACL_ERROR_BAD_ALLOC;
    }
    if ((st = aclrtCreateStream(&state->own_stream)) != ACL_SUCCESS) {
        delete state;
        return st;
    }
    *handle = state;
    return ACL_SUCCESS;
}

extern "C" aclError cuport_blas_destroy(cuport_blas_handle_t handle) {
    if (handle == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    aclError st = aclrtSynchronizeStream(handle->own_stream);
    aclError destroyed = aclrtDestroyStream(handle->own_stream);
    delete handle;
    return st != ACL_SUCCESS ? st : destroyed;
}

extern "C" aclError cuport_blas_set_stream(cuport_blas_handle_t handle, aclrtStream stream) {
    if (handle == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    handle->stream = stream;
    return ACL_SUCCESS;
}

extern "C" aclError cuport_blas_set_math_mode(cuport_blas_handle_t handle, cuport_blas_math_t mode) {
    if (handle == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    // The low bits choose the mode; DISALLOW_REDUCED_PRECISION_REDUCTION (16)
    // is a flag aclnn has no counterpart for.
    switch (static_cast<int>(mode) & 0xf) {
        case CUPORT_BLAS_TF32_TENSOR_OP_MATH: handle->cube_math = kUseHf32; break;
        case CUPORT_BLAS_TENSOR_OP_MATH: handle->cube_math = kAllowFp32DownPrecision; break;
        case CUPORT_BLAS_DEFAULT_MATH:
        case CUPORT_BLAS_PEDANTIC_MATH: handle->cube_math = kKeepDtype; break;
        default: return ACL_ERROR_INVALID_PARAM;
    }
    handle->math_mode = mode;
    return ACL_SUCCESS;
}

extern "C" aclError cuport_blas_get_math_mode(cuport_blas_handle_t handle, cuport_blas_math_t *mode) {
    if (handle == nullptr || mode == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    *mode = handle->math_mode;
    return ACL_SUCCESS;
}

extern "C" aclError cuport_blas_sgemm(cuport_blas_handle_t handle, cuport_blas_op_t transa, cuport_blas_op_t transb,
                                      int m, int n, int k, const float *alpha, const float *A, int lda,
                                      const float *B, int ldb, const float *beta, float *C, int ldc) {
    if (handle == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    Gemm g = plain_gemm(handle, transa, transb, m, n, k, A, ACL_FLOAT, lda, B, ACL_FLOAT, ldb, C, ACL_FLOAT, ldc);
    g.alpha = alpha;
    g.beta = beta;
    aclrtStream stream = nullptr;
    aclError st = handle_stream(handle->stream, handle->own_stream, &stream);
    return st != ACL_SUCCESS ? st : gemm(stream, g);
}

extern "C" aclError cuport_blas_hgemm(cuport_blas_handle_t handle, cuport_blas_op_t transa, cuport_blas_op_t transb,
                                      int m, int n, int k, const void *alpha, const void *A, int lda,
                                      const void *B, int ldb, const void *beta, void *C, int ldc) {
    if (handle == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    Gemm g = plain_gemm(handle, transa, transb, m, n, k, A, ACL_FLOAT16, lda, B, ACL_FLOAT16, ldb, C, ACL_FLOAT16, ldc);
    g.scalars = ScalarKind::F16;  // cublasHgemm's alpha and beta are __half
    g.alpha = alpha;
    g.beta = beta;
    aclrtStream stream = nullptr;
    aclError st = handle_stream(handle->stream, handle->own_stream, &stream);
    return st != ACL_SUCCESS ? st : gemm(stream, g);
}

extern "C" aclError cuport_blas_gemm_ex(cuport_blas_handle_t handle, cuport_blas_op_t transa, cuport_blas_op_t transb,
                                        int m, int n, int k, const void *alpha, const void *A, aclDataType Atype,
                                        int lda, const void *B, aclDataType Btype, int ldb, const void *beta, void *C,
                                        aclDataType Ctype, int ldc, cuport_blas_compute_t computeType) {
    if (handle == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    Gemm g = plain_gemm(handle, transa, transb, m, n, k, A, Atype, lda, B, Btype, ldb, C, Ctype, ldc);
    g.alpha = alpha;
    g.beta = beta;
    // The compute type says how cuBLAS stores alpha and beta.
    switch (computeType) {
        case CUPORT_BLAS_COMPUTE_16F: case CUPORT_BLAS_COMPUTE_16F_PEDANTIC:
            g.scalars = ScalarKind::F16; break;
        case CUPORT_BLAS_COMPUTE_64F: case CUPORT_BLAS_COMPUTE_64F_PEDANTIC:
            g.scalars = ScalarKind::F64; break;
        case CUPORT_BLAS_COMPUTE_32I: case CUPORT_BLAS_COMPUTE_32I_PEDANTIC:
            g.scalars = ScalarKind::I32; break;
        case CUPORT_BLAS_COMPUTE_32F_FAST_TF32:
            g.cube_math = kUseHf32; break;  // HF32 is not bit-identical to TF32
        case CUPORT_BLAS_COMPUTE_32F_FAST_16F:
            g.cube_math = kUseFp16; break;
        default: break;  // 32F variants: float scalars, the handle's math type
    }
    aclrtStream stream = nullptr;
    aclError st = handle_stream(handle->stream, handle->own_stream, &stream);
    return st != ACL_SUCCESS ? st : gemm(stream, g);
}

extern "C" aclError cuport_blas_sgemm_strided_batched(
    cuport_blas_handle_t handle, cuport_blas_op_t transa, cuport_blas_op_t transb, int m, int n, int k,
    const float *alpha, const float *A, int lda, long long strideA, const float *B, int ldb, long long strideB,
    const float *beta, float *C, int ldc, long long strideC, int batchCount) {
    if (handle == nullptr || batchCount < 0) {
        return ACL_ERROR_INVALID_PARAM;
    }
    if (batchCount == 0) {
        return ACL_SUCCESS;
    }
    Gemm g = plain_gemm(handle, transa, transb, m, n, k, A, ACL_FLOAT, lda, B, ACL_FLOAT, ldb, C, ACL_FLOAT, ldc);
    g.stride_a = strideA;
    g.stride_b = strideB;
    g.stride_c = strideC;
    g.batch = batchCount;
    g.alpha = alpha;
    g.beta = beta;
    aclrtStream stream = nullptr;
    aclError st = handle_stream(handle->stream, handle->own_stream, &stream);
    return st != ACL_SUCCESS ? st : gemm(stream, g);
}

// y = alpha * op(A) x + beta * y. The row-major view of op(A) has strides
// (1, lda) for N and (lda, 1) for T; x and y are strided vectors.
extern "C" aclError cuport_blas_sgemv(cuport_blas_handle_t handle, cuport_blas_op_t trans, int m, int n,
                                      const float *alpha, const float *A, int lda, const float *x, int incx,
                                      const float *beta, float *y, int incy) {
    bool op_valid = trans >= CUPORT_OP_N && trans <= CUPORT_OP_C;
    if (handle == nullptr || !op_valid || m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx <= 0 || incy <= 0) {
        return ACL_ERROR_INVALID_PARAM;  // negative increments are not supported
    }
    if (m == 0 || n == 0) {
        return ACL_SUCCESS;
    }
    aclrtStream stream = nullptr;
    aclError st = handle_stream(handle->stream, handle->own_stream, &stream);
    if (st != ACL_SUCCESS) {
        return st;
    }
    bool plain = trans == CUPORT_OP_N;
    int64_t rows = plain ? m : n;
    int64_t cols = plain ? n : m;
    Call call(stream);
    Scaling s{};
    if (!make_scaling(call, alpha, beta, ScalarKind::F32, &s)) {
        return call.finish(ACL_ERROR_INVALID_PARAM);
    }
    aclTensor *matrix = call.tensor(A, ACL_FLOAT, {rows, cols}, plain ? std::vector<int64_t>{1, lda} : std::vector<int64_t>{lda, 1});
    aclTensor *vec = call.tensor(x, ACL_FLOAT, {cols}, {incx});
    void *packed_y = y;
    if (incy != 1) {
        packed_y = call.scratch(rows * sizeof(float), &st);
        if (st == ACL_SUCCESS && !s.beta_is_zero) {
            st = copy_blocks(call, true, packed_y, y, sizeof(float), rows, 1, incy, 1, 0);
        }
    }
    aclTensor *out = st == ACL_SUCCESS ? call.packed(packed_y, ACL_FLOAT, {rows}) : nullptr;
    void *temp_data = s.beta_is_zero || st != ACL_SUCCESS ? nullptr : call.scratch(rows * sizeof(float), &st);
    aclTensor *temp = temp_data == nullptr ? nullptr : call.packed(temp_data, ACL_FLOAT, {rows});
    if (matrix == nullptr || vec == nullptr || out == nullptr || st != ACL_SUCCESS) {
        return call.finish(st != ACL_SUCCESS ? st : kAclnnParamInvalid);
    }
    int8_t cube = handle->cube_math;
    aclnnStatus result = blend(call, s, out, temp, [&](aclTensor *dst) {
        return call.run(
            [&](uint64_t *bytes, aclOpExecutor **executor) {
                return aclnnMvGetWorkspaceSize(matrix, vec, dst, cube, bytes, executor);
            },
            aclnnMv);
    });
    if (result == 0 && incy != 1) {
        result = copy_blocks(call, false, packed_y, y, sizeof(float), rows, 1, incy, 1, 0);
    }
    return call.finish(result);
}

// ---- cuBLASLt -------------------------------------------------------------------
//
// The descriptors record what cublasLt*SetAttribute set; cuport_blaslt_matmul
// checks the combination (lt_plan), runs the GEMM as the cuBLAS helpers do and
// then the epilogue's operators on D. The shim's enums keep cuBLASLt's values.

#ifndef CUPORT_BLASLT_GELU_APPROXIMATE
#define CUPORT_BLASLT_GELU_APPROXIMATE 1  // aclnnGeluV2: 0 the erf form, 1 the tanh form
#endif

struct cuport_blaslt_state {
    int unused;
};

struct cuport_blaslt_matmul_desc {
    int32_t compute;        // cuport_blas_compute_t
    int32_t scale_type;     // aclDataType of alpha and beta
    int32_t pointer_mode;   // cuport_blaslt_pointer_mode_t
    int32_t transa, transb, transc;  // cuport_blas_op_t
    int32_t fill_mode;
    int32_t epilogue;       // cuport_blaslt_epilogue_t
    const void *bias;
    int64_t bias_batch_stride;
    int32_t bias_type;      // -1: D's type
    const void *aux;
    int64_t aux_ld;
    int64_t aux_batch_stride;
};

struct cuport_blaslt_layout {
    uint32_t type;          // aclDataType
    int32_t order;          // cuport_blaslt_order_t
    uint64_t rows, cols;
    int64_t ld;
    int32_t batch_count;
    int64_t batch_stride;
};

struct cuport_blaslt_preference {
    uint32_t search_mode;
    uint64_t max_workspace;
    uint32_t reduction_mask;
    uint32_t min_alignment[4];
    float max_waves;
    uint64_t impl_mask;
};

namespace {

// Copies the attribute value at `buf` into `field` when the sizes agree
// (cuBLASLt's rule: sizeInBytes is the attribute's storage size).
template <typename T>
aclError store(T *field, const void *buf, size_t size) {
    if (buf == nullptr || size != sizeof(T)) {
        return ACL_ERROR_INVALID_PARAM;
    }
    std::memcpy(field, buf, sizeof(T));
    return ACL_SUCCESS;
}

template <typename T>
aclError create_object(T **out, const T &initial) {
    if (out == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    *out = new (std::nothrow) T(initial);
    return *out == nullptr ? static_cast<aclError>(ACL_ERROR_BAD_ALLOC) : static_cast<aclError>(ACL_SUCCESS);
}

template <typename T>
aclError destroy_object(T *object) {
    if (object == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    delete object;
    return ACL_SUCCESS;
}

bool fits_int(uint64_t value) { return value <= 0x7fffffffu; }

// How alpha and beta are stored, from the descriptor's scale type.
bool scalar_kind_of(int32_t scale_type, ScalarKind *kind) {
    switch (scale_type) {
        case ACL_FLOAT: *kind = ScalarKind::F32; return true;
        case ACL_FLOAT16: *kind = ScalarKind::F16; return true;
        case ACL_DOUBLE: *kind = ScalarKind::F64; return true;
        case ACL_INT32: *kind = ScalarKind::I32; return true;
        default: return false;
    }
}

int8_t cube_math_of(int32_t compute) {
    switch (compute) {
        case CUPORT_BLAS_COMPUTE_32F_FAST_TF32: return kUseHf32;  // not bit-identical to TF32
        case CUPORT_BLAS_COMPUTE_32F_FAST_16F: return kUseFp16;
        default: return kKeepDtype;
    }
}

bool epilogue_supported(int32_t e) {
    switch (e) {
        case CUPORT_BLASLT_EPILOGUE_DEFAULT: case CUPORT_BLASLT_EPILOGUE_RELU: case CUPORT_BLASLT_EPILOGUE_BIAS:
        case CUPORT_BLASLT_EPILOGUE_RELU_BIAS: case CUPORT_BLASLT_EPILOGUE_GELU: case CUPORT_BLASLT_EPILOGUE_GELU_AUX:
        case CUPORT_BLASLT_EPILOGUE_GELU_BIAS: case CUPORT_BLASLT_EPILOGUE_GELU_AUX_BIAS:
        case CUPORT_BLASLT_EPILOGUE_DGELU: case CUPORT_BLASLT_EPILOGUE_BGRADA: case CUPORT_BLASLT_EPILOGUE_BGRADB:
            return true;
        default: return false;
    }
}

bool adds_bias(int32_t e) {
    return e == CUPORT_BLASLT_EPILOGUE_BIAS || e == CUPORT_BLASLT_EPILOGUE_RELU_BIAS ||
           e == CUPORT_BLASLT_EPILOGUE_GELU_BIAS || e == CUPORT_BLASLT_EPILOGUE_GELU_AUX_BIAS;
}

bool uses_aux(int32_t e) {
    return e == CUPORT_BLASLT_EPILOGUE_GELU_AUX || e == CUPORT_BLASLT_EPILOGUE_GELU_AUX_BIAS ||
           e == CUPORT_BLASLT_EPILOGUE_DGELU;
}

bool writes_bias(int32_t e) { return e == CUPORT_BLASLT_EPILOGUE_BGRADA || e == CUPORT_BLASLT_EPILOGUE_BGRADB; }

int64_t batches_of(const cuport_blaslt_layout &l) { return l.batch_count > 1 ? l.batch_count : 1; }

// A layout as a column-major operand: a ROW-ordered matrix is the
// column-major view of its transpose, so its op flips.
bool column_major_operand(const cuport_blaslt_layout &l, int32_t op, uint64_t *rows, uint64_t *cols,
                          cuport_blas_op_t *effective) {
    bool transposed = op != CUPORT_OP_N;
    if (l.order == CUPORT_BLASLT_ORDER_ROW) {
        transposed = !transposed;
        *rows = l.cols;
        *cols = l.rows;
    } else {
        *rows = l.rows;
        *cols = l.cols;
    }
    *effective = transposed ? CUPORT_OP_T : CUPORT_OP_N;
    return l.order == CUPORT_BLASLT_ORDER_COL || l.order == CUPORT_BLASLT_ORDER_ROW;
}

// What cuport_blaslt_matmul runs, or why it cannot.
struct LtPlan {
    Gemm gemm;
    int64_t batches;
};

aclError lt_plan(const cuport_blaslt_matmul_desc *d, const cuport_blaslt_layout *a, const cuport_blaslt_layout *b,
                 const cuport_blaslt_layout *c, const cuport_blaslt_layout *dl, LtPlan *plan) {
    if (d == nullptr || a == nullptr || b == nullptr || c == nullptr || dl == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    Gemm &g = plan->gemm;
    g = Gemm{};
    uint64_t a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0;
    bool orders = column_major_operand(*a, d->transa, &a_rows, &a_cols, &g.transa) &&
                  column_major_operand(*b, d->transb, &b_rows, &b_cols, &g.transb) &&
                  c->order == CUPORT_BLASLT_ORDER_COL && dl->order == CUPORT_BLASLT_ORDER_COL;
    if (!orders || d->transc != CUPORT_OP_N || d->pointer_mode != CUPORT_BLASLT_POINTER_MODE_HOST ||
        !epilogue_supported(d->epilogue) || !scalar_kind_of(d->scale_type, &g.scalars)) {
        return ACL_ERROR_FEATURE_UNSUPPORTED;
    }
    // op(A) is m x k, op(B) k x n, C and D m x n (column-major sizes).
    uint64_t m = dl->rows, n = dl->cols;
    uint64_t k = g.transa == CUPORT_OP_N ? a_cols : a_rows;
    bool a_fits = (g.transa == CUPORT_OP_N ? a_rows : a_cols) == m;
    bool b_fits = (g.transb == CUPORT_OP_N ? b_rows : b_cols) == k && (g.transb == CUPORT_OP_N ? b_cols : b_rows) == n;
    bool c_fits = c->rows == m && c->cols == n && c->type == dl->type && c->ld >= static_cast<int64_t>(m);
    int64_t batches = batches_of(*dl);
    bool batch_fits = batches_of(*a) == batches && batches_of(*b) == batches && batches_of(*c) == batches;
    if (!a_fits || !b_fits || !c_fits || !batch_fits || !fits_int(m) || !fits_int(n) || !fits_int(k) ||
        a->ld <= 0 || b->ld <= 0 || dl->ld <= 0 || !fits_int(a->ld) || !fits_int(b->ld) || !fits_int(dl->ld) ||
        a->type != b->type) {
        return ACL_ERROR_INVALID_PARAM;
    }
    // The helper runs epilogues on single matrices only.
    int32_t e = d->epilogue;
    if (e != CUPORT_BLASLT_EPILOGUE_DEFAULT && batches > 1) {
        return ACL_ERROR_FEATURE_UNSUPPORTED;
    }
    if (((adds_bias(e) || writes_bias(e)) && d->bias == nullptr) ||
        (uses_aux(e) && (d->aux == nullptr || d->aux_ld < static_cast<int64_t>(m)))) {
        return ACL_ERROR_INVALID_PARAM;
    }
    g.m = static_cast<int>(m);
    g.n = static_cast<int>(n);
    g.k = static_cast<int>(k);
    g.atype = static_cast<aclDataType>(a->type);
    g.lda = static_cast<int>(a->ld);
    g.stride_a = a->batch_stride;
    g.btype = static_cast<aclDataType>(b->type);
    g.ldb = static_cast<int>(b->ld);
    g.stride_b = b->batch_stride;
    g.ctype = static_cast<aclDataType>(dl->type);
    g.ldc = static_cast<int>(dl->ld);
    g.stride_c = dl->batch_stride;
    g.batch = batches > 1 ? static_cast<int>(batches) : 0;
    g.cube_math = cube_math_of(d->compute);
    plan->batches = batches;
    return gemm_arguments_valid(g) ? static_cast<aclError>(ACL_SUCCESS) : static_cast<aclError>(ACL_ERROR_INVALID_PARAM);
}

// D = C before the GEMM accumulates into D (C and D are different buffers).
aclError copy_c_into_d(aclrtStream stream, const void *c, const cuport_blaslt_layout &cl, void *d,
                       const cuport_blaslt_layout &dl, int64_t batches) {
    Call call(stream);
    size_t size = element_size(static_cast<aclDataType>(dl.type));
    size_t width = dl.rows * size;
    for (int64_t b = 0; b < batches; ++b) {
        const char *src = static_cast<const char *>(c) + b * cl.batch_stride * size;
        char *dst = static_cast<char *>(d) + b * dl.batch_stride * size;
        aclError st = aclrtMemcpy2dAsync(dst, dl.ld * size, src, cl.ld * size, width, dl.cols,
                                         ACL_MEMCPY_DEVICE_TO_DEVICE, stream);
        if (st != ACL_SUCCESS) {
            return call.finish(st);
        }
    }
    return call.finish(ACL_SUCCESS);
}

aclnnStatus inplace_copy(Call &call, aclTensor *dst, const aclTensor *src) {
    return call.run(
        [&](uint64_t *bytes, aclOpExecutor **executor) {
            return aclnnInplaceCopyGetWorkspaceSize(dst, src, bytes, executor);
        },
        aclnnInplaceCopy);
}

// A packed copy of `view` (n x m), for operators whose input and output
// must not alias.
aclTensor *packed_copy(Call &call, aclTensor *view, aclDataType type, int64_t n, int64_t m, aclnnStatus *st) {
    aclError alloc = ACL_SUCCESS;
    void *data = call.scratch(static_cast<uint64_t>(n) * m * element_size(type), &alloc);
    aclTensor *copy = alloc == ACL_SUCCESS ? call.packed(data, type, {n, m}) : nullptr;
    *st = copy == nullptr ? (alloc != ACL_SUCCESS ? alloc : kAclnnParamInvalid) : inplace_copy(call, copy, view);
    return copy;
}

aclnnStatus gelu(Call &call, const aclTensor *x, aclTensor *y) {
    return call.run(
        [&](uint64_t *bytes, aclOpExecutor **executor) {
            return aclnnGeluV2GetWorkspaceSize(x, CUPORT_BLASLT_GELU_APPROXIMATE, y, bytes, executor);
        },
        aclnnGeluV2);
}

// y = grad * GELU'(x); grad and y must not alias.
aclnnStatus gelu_backward(Call &call, const aclTensor *grad, const aclTensor *x, aclTensor *y) {
    static char tanh_form[] = "tanh";
    static char erf_form[] = "none";
    char *form = CUPORT_BLASLT_GELU_APPROXIMATE ? tanh_form : erf_form;
    return call.run(
        [&](uint64_t *bytes, aclOpExecutor **executor) {
            return aclnnGeluBackwardV2GetWorkspaceSize(grad, x, form, y, bytes, executor);
        },
        aclnnGeluBackwardV2);
}

aclnnStatus reduce_sum(Call &call, const aclTensor *self, int64_t dim, aclDataType type, aclTensor *out) {
    const aclIntArray *dims = call.ints(&dim, 1);
    if (dims == nullptr) {
        return kAclnnParamInvalid;
    }
    return call.run(
        [&](uint64_t *bytes, aclOpExecutor **executor) {
            return aclnnReduceSumGetWorkspaceSize(self, dims, false, type, out, bytes, executor);
        },
        aclnnReduceSum);
}

aclnnStatus inplace_relu(Call &call, aclTensor *self) {
    return call.run(
        [&](uint64_t *bytes, aclOpExecutor **executor) { return aclnnInplaceReluGetWorkspaceSize(self, bytes, executor); },
        aclnnInplaceRelu);
}

// The epilogue's operators on D (m x n column-major = the row-major n x m
// view with strides (ld, 1)), after the GEMM.
aclError run_epilogue(aclrtStream stream, const cuport_blaslt_matmul_desc &desc, const Gemm &g, void *D) {
    int32_t e = desc.epilogue;
    if (e == CUPORT_BLASLT_EPILOGUE_DEFAULT || g.m == 0 || g.n == 0) {
        return ACL_SUCCESS;  // an empty D: nothing to apply, as in cuBLASLt
    }
    Call call(stream);
    aclDataType type = g.ctype;
    aclDataType bias_type = desc.bias_type < 0 ? type : static_cast<aclDataType>(desc.bias_type);
    if (writes_bias(e) && g.k == 0) {
        // A sum over an empty k: the bias gradient is zero.
        size_t count = e == CUPORT_BLASLT_EPILOGUE_BGRADA ? g.m : g.n;
        size_t bytes = count * element_size(bias_type);
        return call.finish(aclrtMemsetAsync(const_cast<void *>(desc.bias), bytes, 0, bytes, stream));
    }
    aclTensor *d = call.tensor(D, type, {g.n, g.m}, {g.ldc, 1});
    if (d == nullptr) {
        return call.finish(kAclnnParamInvalid);
    }
    aclnnStatus st = 0;
    if (adds_bias(e)) {
        static const float one = 1.0f;
        aclTensor *bias = call.tensor(desc.bias, bias_type, {g.m}, {1});
        const aclScalar *alpha = call.scalar(&one, ScalarKind::F32);
        st = bias == nullptr || alpha == nullptr ? kAclnnParamInvalid : inplace_add(call, d, bias, alpha);
    }
    if (st == 0 && (e == CUPORT_BLASLT_EPILOGUE_RELU || e == CUPORT_BLASLT_EPILOGUE_RELU_BIAS)) {
        st = inplace_relu(call, d);
    }
    aclTensor *aux = uses_aux(e) ? call.tensor(desc.aux, type, {g.n, g.m}, {desc.aux_ld, 1}) : nullptr;
    if (uses_aux(e) && aux == nullptr) {
        st = kAclnnParamInvalid;
    }
    bool forward_gelu = e == CUPORT_BLASLT_EPILOGUE_GELU || e == CUPORT_BLASLT_EPILOGUE_GELU_BIAS ||
                        e == CUPORT_BLASLT_EPILOGUE_GELU_AUX || e == CUPORT_BLASLT_EPILOGUE_GELU_AUX_BIAS;
    if (st == 0 && forward_gelu) {
        // GELU reads the pre-activation from the aux matrix when there is
        // one (it must be kept anyway), else from a packed copy.
        const aclTensor *input = aux;
        if (aux != nullptr) {
            st = inplace_copy(call, aux, d);
        } else {
            input = packed_copy(call, d, type, g.n, g.m, &st);
        }
        if (st == 0) {
            st = gelu(call, input, d);
        }
    }
    if (st == 0 && e == CUPORT_BLASLT_EPILOGUE_DGELU) {
        aclTensor *grad = packed_copy(call, d, type, g.n, g.m, &st);
        if (st == 0) {
            st = gelu_backward(call, grad, aux, d);
        }
    }
    if (st == 0 && e == CUPORT_BLASLT_EPILOGUE_BGRADA) {
        // op(A) is m x k: its row-major view is k x m; sum over k (dim 0).
        std::vector<int64_t> strides = transposed_view_strides(g.transa, g.lda);
        aclTensor *a = call.tensor(g.A, g.atype, {g.k, g.m}, strides);
        aclTensor *out = call.tensor(desc.bias, bias_type, {g.m}, {1});
        st = a == nullptr || out == nullptr ? kAclnnParamInvalid : reduce_sum(call, a, 0, bias_type, out);
    }
    if (st == 0 && e == CUPORT_BLASLT_EPILOGUE_BGRADB) {
        // op(B) is k x n: its row-major view is n x k; sum over k (dim 1).
        std::vector<int64_t> strides = transposed_view_strides(g.transb, g.ldb);
        aclTensor *b = call.tensor(g.B, g.btype, {g.n, g.k}, strides);
        aclTensor *out = call.tensor(desc.bias, bias_type, {g.n}, {1});
        st = b == nullptr || out == nullptr ? kAclnnParamInvalid : reduce_sum(call, b, 1, bias_type, out);
    }
    return call.finish(st);
}

}  // namespace

extern "C" aclError cuport_blaslt_create(cuport_blaslt_handle_t *handle) {
    if (handle == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    aclError st = ensure_device();
    return st != ACL_SUCCESS ? st : create_object(handle, cuport_blaslt_state{0});
}

extern "C" aclError cuport_blaslt_destroy(cuport_blaslt_handle_t handle) { return destroy_object(handle); }

extern "C" aclError cuport_blaslt_matmul_desc_create(cuport_blaslt_matmul_desc_t *desc, cuport_blas_compute_t computeType,
                                                     aclDataType scaleType) {
    cuport_blaslt_matmul_desc initial{};
    initial.compute = computeType;
    initial.scale_type = scaleType;
    initial.pointer_mode = CUPORT_BLASLT_POINTER_MODE_HOST;
    initial.transa = initial.transb = initial.transc = CUPORT_OP_N;
    initial.epilogue = CUPORT_BLASLT_EPILOGUE_DEFAULT;
    initial.bias_type = -1;
    return create_object(desc, initial);
}

extern "C" aclError cuport_blaslt_matmul_desc_destroy(cuport_blaslt_matmul_desc_t desc) { return destroy_object(desc); }

extern "C" aclError cuport_blaslt_matmul_desc_set_attribute(cuport_blaslt_matmul_desc_t desc,
                                                            cuport_blaslt_matmul_desc_attr_t attr, const void *buf,
                                                            size_t sizeInBytes) {
    if (desc == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    switch (attr) {
        case CUPORT_BLASLT_MATMUL_DESC_COMPUTE_TYPE: return store(&desc->compute, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_SCALE_TYPE: return store(&desc->scale_type, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_POINTER_MODE: return store(&desc->pointer_mode, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_TRANSA: return store(&desc->transa, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_TRANSB: return store(&desc->transb, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_TRANSC: return store(&desc->transc, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_FILL_MODE: return store(&desc->fill_mode, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_EPILOGUE: return store(&desc->epilogue, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_BIAS_POINTER: return store(&desc->bias, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: return store(&desc->bias_batch_stride, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: return store(&desc->aux, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: return store(&desc->aux_ld, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE: return store(&desc->aux_batch_stride, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return store(&desc->bias_type, buf, sizeInBytes);
    }
    return ACL_ERROR_FEATURE_UNSUPPORTED;
}

extern "C" aclError cuport_blaslt_layout_create(cuport_blaslt_layout_t *layout, aclDataType type, uint64_t rows,
                                                uint64_t cols, int64_t ld) {
    cuport_blaslt_layout initial{};
    initial.type = static_cast<uint32_t>(type);
    initial.order = CUPORT_BLASLT_ORDER_COL;
    initial.rows = rows;
    initial.cols = cols;
    initial.ld = ld;
    initial.batch_count = 1;
    return create_object(layout, initial);
}

extern "C" aclError cuport_blaslt_layout_destroy(cuport_blaslt_layout_t layout) { return destroy_object(layout); }

extern "C" aclError cuport_blaslt_layout_set_attribute(cuport_blaslt_layout_t layout, cuport_blaslt_layout_attr_t attr,
                                                       const void *buf, size_t sizeInBytes) {
    if (layout == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    switch (attr) {
        case CUPORT_BLASLT_MATRIX_LAYOUT_TYPE: return store(&layout->type, buf, sizeInBytes);
        case CUPORT_BLASLT_MATRIX_LAYOUT_ORDER: return store(&layout->order, buf, sizeInBytes);
        case CUPORT_BLASLT_MATRIX_LAYOUT_ROWS: return store(&layout->rows, buf, sizeInBytes);
        case CUPORT_BLASLT_MATRIX_LAYOUT_COLS: return store(&layout->cols, buf, sizeInBytes);
        case CUPORT_BLASLT_MATRIX_LAYOUT_LD: return store(&layout->ld, buf, sizeInBytes);
        case CUPORT_BLASLT_MATRIX_LAYOUT_BATCH_COUNT: return store(&layout->batch_count, buf, sizeInBytes);
        case CUPORT_BLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return store(&layout->batch_stride, buf, sizeInBytes);
    }
    return ACL_ERROR_FEATURE_UNSUPPORTED;
}

extern "C" aclError cuport_blaslt_preference_create(cuport_blaslt_preference_t *pref) {
    return create_object(pref, cuport_blaslt_preference{});
}

extern "C" aclError cuport_blaslt_preference_destroy(cuport_blaslt_preference_t pref) { return destroy_object(pref); }

extern "C" aclError cuport_blaslt_preference_set_attribute(cuport_blaslt_preference_t pref,
                                                           cuport_blaslt_pref_attr_t attr, const void *buf,
                                                           size_t sizeInBytes) {
    if (pref == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    switch (attr) {
        case CUPORT_BLASLT_MATMUL_PREF_SEARCH_MODE: return store(&pref->search_mode, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: return store(&pref->max_workspace, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK: return store(&pref->reduction_mask, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES: return store(&pref->min_alignment[0], buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES: return store(&pref->min_alignment[1], buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES: return store(&pref->min_alignment[2], buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: return store(&pref->min_alignment[3], buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_PREF_MAX_WAVES_COUNT: return store(&pref->max_waves, buf, sizeInBytes);
        case CUPORT_BLASLT_MATMUL_PREF_IMPL_MASK: return store(&pref->impl_mask, buf, sizeInBytes);
    }
    return ACL_ERROR_FEATURE_UNSUPPORTED;
}

extern "C" aclError cuport_blaslt_algo_get_heuristic(cuport_blaslt_handle_t handle, cuport_blaslt_matmul_desc_t desc,
                                                     cuport_blaslt_layout_t Adesc, cuport_blaslt_layout_t Bdesc,
                                                     cuport_blaslt_layout_t Cdesc, cuport_blaslt_layout_t Ddesc,
                                                     cuport_blaslt_preference_t preference, int requestedAlgoCount,
                                                     cuport_blaslt_heuristic_t heuristicResultsArray[],
                                                     int *returnAlgoCount) {
    if (handle == nullptr || preference == nullptr || requestedAlgoCount < 1 || heuristicResultsArray == nullptr ||
        returnAlgoCount == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    LtPlan plan{};
    aclError st = lt_plan(desc, Adesc, Bdesc, Cdesc, Ddesc, &plan);
    *returnAlgoCount = st == ACL_SUCCESS ? 1 : 0;
    if (st != ACL_SUCCESS) {
        return st;
    }
    heuristicResultsArray[0] = cuport_blaslt_heuristic_t{};
    heuristicResultsArray[0].state = ACL_SUCCESS;
    heuristicResultsArray[0].wavesCount = 1.0f;
    return ACL_SUCCESS;
}

extern "C" aclError cuport_blaslt_matmul(cuport_blaslt_handle_t handle, cuport_blaslt_matmul_desc_t desc,
                                         const void *alpha, const void *A, cuport_blaslt_layout_t Adesc, const void *B,
                                         cuport_blaslt_layout_t Bdesc, const void *beta, const void *C,
                                         cuport_blaslt_layout_t Cdesc, void *D, cuport_blaslt_layout_t Ddesc,
                                         const cuport_blaslt_algo_t *algo, void *workspace,
                                         size_t workspaceSizeInBytes, aclrtStream stream) {
    (void)algo;  // aclnn picks its own kernel and sizes its own workspace
    (void)workspace;
    (void)workspaceSizeInBytes;
    if (handle == nullptr || alpha == nullptr || beta == nullptr || A == nullptr || B == nullptr || D == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    LtPlan plan{};
    aclError st = lt_plan(desc, Adesc, Bdesc, Cdesc, Ddesc, &plan);
    if (st != ACL_SUCCESS) {
        return st;
    }
    Gemm &g = plan.gemm;
    g.A = A;
    g.B = B;
    g.C = D;
    g.alpha = alpha;
    g.beta = beta;
    bool reads_c = !scalar_is(beta, g.scalars, 0);
    if (reads_c && C == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    if (reads_c && C != D) {
        st = copy_c_into_d(stream, C, *Cdesc, D, *Ddesc, plan.batches);
    } else if (C == D && (Cdesc->ld != Ddesc->ld || Cdesc->batch_stride != Ddesc->batch_stride)) {
        return ACL_ERROR_INVALID_PARAM;  // in place needs one layout, as in cuBLASLt
    }
    if (st == ACL_SUCCESS) {
        st = gemm(stream, g);
    }
    return st != ACL_SUCCESS ? st : run_epilogue(stream, *desc, g, D);
}

// ---- cuDNN ---------------------------------------------------------------------

extern "C" aclError cuport_dnn_create(cuport_dnn_handle_t *handle) {
    if (handle == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    aclError st = ensure_device();
    if (st != ACL_SUCCESS) {
        return st;
    }
    cuport_dnn_state *state = new (std::nothrow) cuport_dnn_state{nullptr, nullptr};
    if (state == nullptr) {
        return ACL_ERROR_BAD_ALLOC;
    }
    if ((st = aclrtCreateStream(&state->own_stream)) != ACL_SUCCESS) {
        delete state;
        return st;
    }
    *handle = state;
    return ACL_SUCCESS;
}

extern "C" aclError cuport_dnn_destroy(cuport_dnn_handle_t handle) {
    if (handle == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    aclError st = aclrtSynchronizeStream(handle->own_stream);
    aclError destroyed = aclrtDestroyStream(handle->own_stream);
    delete handle;
    return st != ACL_SUCCESS ? st : destroyed;
}

extern "C" aclError cuport_dnn_set_stream(cuport_dnn_handle_t handle, aclrtStream stream) {
    if (handle == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    handle->stream = stream;
    return ACL_SUCCESS;
}

namespace {

bool dims_positive(int a, int b, int c, int d) { return a > 0 && b > 0 && c > 0 && d > 0; }

aclError allocated(const void *object) {
    if (object == nullptr) {
        return ACL_ERROR_BAD_ALLOC;
    }
    return ACL_SUCCESS;
}

// The cuDNN descriptor calls differ only in the descriptor type.
template <typename Desc>
aclError create_desc(Desc **desc, const Desc &initial) {
    if (desc == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    *desc = new (std::nothrow) Desc(initial);
    return allocated(*desc);
}

// A 4-D NCHW descriptor (tensors: n, c, h, w; filters: k, c, h, w).
template <typename Desc>
aclError set_4d_desc(Desc *desc, aclDataType dataType, aclFormat format, int a, int b, int c,
                     int d) {
    if (desc == nullptr || !dims_positive(a, b, c, d) || element_size(dataType) == 0) {
        return ACL_ERROR_INVALID_PARAM;
    }
    if (format != ACL_FORMAT_NCHW) {
        return ACL_ERROR_FEATURE_UNSUPPORTED;
    }
    *desc = Desc{dataType, {a, b, c, d}};
    return ACL_SUCCESS;
}

}  // namespace

extern "C" aclError cuport_dnn_create_tensor_desc(cuport_dnn_tensor_desc_t *desc) {
    return create_desc(desc, cuport_dnn_tensor_desc{ACL_FLOAT, {0, 0, 0, 0}});
}

extern "C" aclError cuport_dnn_destroy_tensor_desc(cuport_dnn_tensor_desc_t desc) {
    delete desc;
    return ACL_SUCCESS;
}

extern "C" aclError cuport_dnn_set_tensor_4d_desc(cuport_dnn_tensor_desc_t desc, aclFormat format,
                                                  aclDataType dataType, int n, int c, int h, int w) {
    return set_4d_desc(desc, dataType, format, n, c, h, w);
}

extern "C" aclError cuport_dnn_create_filter_desc(cuport_dnn_filter_desc_t *desc) {
    return create_desc(desc, cuport_dnn_filter_desc{ACL_FLOAT, {0, 0, 0, 0}});
}

extern "C" aclError cuport_dnn_destroy_filter_desc(cuport_dnn_filter_desc_t desc) {
    delete desc;
    return ACL_SUCCESS;
}

extern "C" aclError cuport_dnn_set_filter_4d_desc(cuport_dnn_filter_desc_t desc, aclDataType dataType,
                                                  aclFormat format, int k, int c, int h, int w) {
    return set_4d_desc(desc, dataType, format, k, c, h, w);
}

extern "C" aclError cuport_dnn_create_conv_desc(cuport_dnn_conv_desc_t *desc) {
    return create_desc(desc, cuport_dnn_conv_desc{{0, 0}, {1, 1}, {1, 1}, 1, kKeepDtype});
}

extern "C" aclError cuport_dnn_destroy_conv_desc(cuport_dnn_conv_desc_t desc) {
    delete desc;
    return ACL_SUCCESS;
}

// aclnnConvolution computes cross-correlation; true convolution would need
// the filter flipped first. computeType has no aclnn counterpart.
extern "C" aclError cuport_dnn_set_conv_2d_desc(cuport_dnn_conv_desc_t desc, int padH, int padW, int strideH,
                                                int strideW, int dilationH, int dilationW,
                                                cuport_dnn_conv_mode_t mode, aclDataType computeType) {
    (void)computeType;
    if (desc == nullptr || padH < 0 || padW < 0 || strideH <= 0 || strideW <= 0 || dilationH <= 0 || dilationW <= 0) {
        return ACL_ERROR_INVALID_PARAM;
    }
    if (mode != CUPORT_DNN_CROSS_CORRELATION) {
        return ACL_ERROR_FEATURE_UNSUPPORTED;
    }
    desc->pad[0] = padH;
    desc->pad[1] = padW;
    desc->stride[0] = strideH;
    desc->stride[1] = strideW;
    desc->dilation[0] = dilationH;
    desc->dilation[1] = dilationW;
    return ACL_SUCCESS;
}

extern "C" aclError cuport_dnn_set_conv_math_type(cuport_dnn_conv_desc_t desc, cuport_dnn_math_t mathType) {
    if (desc == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    desc->cube_math = mathType == CUPORT_DNN_TENSOR_OP_MATH_ALLOW_CONVERSION ? kAllowFp32DownPrecision : kKeepDtype;
    return ACL_SUCCESS;
}

extern "C" aclError cuport_dnn_set_conv_group_count(cuport_dnn_conv_desc_t desc, int groupCount) {
    if (desc == nullptr || groupCount <= 0) {
        return ACL_ERROR_INVALID_PARAM;
    }
    desc->groups = groupCount;
    return ACL_SUCCESS;
}

// cuDNN's output size: 1 + (in + 2 pad - ((filter - 1) dilation + 1)) / stride.
extern "C" aclError cuport_dnn_get_conv_2d_fwd_output_dim(cuport_dnn_conv_desc_t conv, cuport_dnn_tensor_desc_t input,
                                                          cuport_dnn_filter_desc_t filter, int *n, int *c, int *h,
                                                          int *w) {
    if (conv == nullptr || input == nullptr || filter == nullptr || n == nullptr || c == nullptr || h == nullptr ||
        w == nullptr || input->dims[1] != filter->dims[1] * conv->groups) {
        return ACL_ERROR_INVALID_PARAM;
    }
    int64_t out[2];
    for (int i = 0; i < 2; ++i) {
        int64_t span = (filter->dims[2 + i] - 1) * conv->dilation[i] + 1;
        out[i] = 1 + (input->dims[2 + i] + 2 * conv->pad[i] - span) / conv->stride[i];
        if (out[i] <= 0) {
            return ACL_ERROR_INVALID_PARAM;
        }
    }
    *n = static_cast<int>(input->dims[0]);
    *c = static_cast<int>(filter->dims[0]);
    *h = static_cast<int>(out[0]);
    *w = static_cast<int>(out[1]);
    return ACL_SUCCESS;
}

// No algorithm search on Ascend: one entry, and the forward call ignores it.
extern "C" aclError cuport_dnn_get_conv_fwd_algorithm(cuport_dnn_handle_t handle, cuport_dnn_tensor_desc_t x,
                                                      cuport_dnn_filter_desc_t w, cuport_dnn_conv_desc_t conv,
                                                      cuport_dnn_tensor_desc_t y, int requestedAlgoCount,
                                                      int *returnedAlgoCount,
                                                      cuport_dnn_conv_fwd_algo_perf_t *perfResults) {
    if (handle == nullptr || x == nullptr || w == nullptr || conv == nullptr || y == nullptr ||
        requestedAlgoCount < 1 || returnedAlgoCount == nullptr || perfResults == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    perfResults[0].algo = CUPORT_DNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    perfResults[0].status = ACL_SUCCESS;
    perfResults[0].time = -1.0f;
    perfResults[0].memory = 0;
    *returnedAlgoCount = 1;
    return ACL_SUCCESS;
}

// aclnn sizes its workspace in phase 1 of every call, and the forward helper
// allocates it: callers need none.
extern "C" aclError cuport_dnn_get_conv_fwd_workspace_size(cuport_dnn_handle_t handle, cuport_dnn_tensor_desc_t x,
                                                           cuport_dnn_filter_desc_t w, cuport_dnn_conv_desc_t conv,
                                                           cuport_dnn_tensor_desc_t y, cuport_dnn_conv_fwd_algo_t algo,
                                                           size_t *sizeInBytes) {
    (void)algo;
    if (handle == nullptr || x == nullptr || w == nullptr || conv == nullptr || y == nullptr || sizeInBytes == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    *sizeInBytes = 0;
    return ACL_SUCCESS;
}

namespace {

std::vector<int64_t> dims_of(const int64_t (&d)[4]) { return {d[0], d[1], d[2], d[3]}; }

// cuDNN's alpha and beta are double for double data, float otherwise.
ScalarKind dnn_scalars(aclDataType data) { return data == ACL_DOUBLE ? ScalarKind::F64 : ScalarKind::F32; }

aclTensor *temporary_like(Call &call, aclDataType type, const std::vector<int64_t> &dims, aclFormat format,
                          aclError *status) {
    uint64_t count = 1;
    for (int64_t d : dims) count *= static_cast<uint64_t>(d);
    void *data = call.scratch(count * element_size(type), status);
    return data == nullptr ? nullptr : call.packed(data, type, dims, format);
}

}  // namespace

extern "C" aclError cuport_dnn_conv_forward(cuport_dnn_handle_t handle, const void *alpha, cuport_dnn_tensor_desc_t xDesc,
                                            const void *x, cuport_dnn_filter_desc_t wDesc, const void *w,
                                            cuport_dnn_conv_desc_t convDesc, cuport_dnn_conv_fwd_algo_t algo,
                                            void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
                                            cuport_dnn_tensor_desc_t yDesc, void *y) {
    (void)algo;
    (void)workSpace;
    (void)workSpaceSizeInBytes;
    if (handle == nullptr || xDesc == nullptr || wDesc == nullptr || convDesc == nullptr || yDesc == nullptr ||
        x == nullptr || w == nullptr || y == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    aclrtStream stream = nullptr;
    aclError st = handle_stream(handle->stream, handle->own_stream, &stream);
    if (st != ACL_SUCCESS) {
        return st;
    }
    Call call(stream);
    Scaling s{};
    if (!make_scaling(call, alpha, beta, dnn_scalars(yDesc->type), &s)) {
        return call.finish(ACL_ERROR_INVALID_PARAM);
    }
    std::vector<int64_t> y_dims = dims_of(yDesc->dims);
    aclTensor *input = call.packed(x, xDesc->type, dims_of(xDesc->dims), ACL_FORMAT_NCHW);
    aclTensor *weight = call.packed(w, wDesc->type, dims_of(wDesc->dims), ACL_FORMAT_NCHW);
    aclTensor *output = call.packed(y, yDesc->type, y_dims, ACL_FORMAT_NCHW);
    aclTensor *temp = s.beta_is_zero ? nullptr : temporary_like(call, yDesc->type, y_dims, ACL_FORMAT_NCHW, &st);
    const int64_t no_padding[2] = {0, 0};
    aclIntArray *strides = call.ints(convDesc->stride, 2);
    aclIntArray *padding = call.ints(convDesc->pad, 2);
    aclIntArray *dilation = call.ints(convDesc->dilation, 2);
    aclIntArray *output_padding = call.ints(no_padding, 2);
    if (input == nullptr || weight == nullptr || output == nullptr || strides == nullptr || padding == nullptr ||
        dilation == nullptr || output_padding == nullptr || st != ACL_SUCCESS) {
        return call.finish(st != ACL_SUCCESS ? st : kAclnnParamInvalid);
    }
    aclnnStatus result = blend(call, s, output, temp, [&](aclTensor *dst) {
        return call.run(
            [&](uint64_t *bytes, aclOpExecutor **executor) {
                return aclnnConvolutionGetWorkspaceSize(input, weight, nullptr, strides, padding, dilation, false,
                                                        output_padding, convDesc->groups, dst, convDesc->cube_math,
                                                        bytes, executor);
            },
            aclnnConvolution);
    });
    return call.finish(result);
}

// Softmax over the channel dimension: dim 1 of an [N, C, H*W] view (CHANNEL)
// or of an [N, C*H*W] view (INSTANCE, all of C, H, W per image).
extern "C" aclError cuport_dnn_softmax_forward(cuport_dnn_handle_t handle, cuport_dnn_softmax_algo_t algo,
                                               cuport_dnn_softmax_mode_t mode, const void *alpha,
                                               cuport_dnn_tensor_desc_t xDesc, const void *x, const void *beta,
                                               cuport_dnn_tensor_desc_t yDesc, void *y) {
    if (handle == nullptr || xDesc == nullptr || yDesc == nullptr || x == nullptr || y == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    if (std::memcmp(xDesc->dims, yDesc->dims, sizeof xDesc->dims) != 0) {
        return ACL_ERROR_INVALID_PARAM;
    }
    aclrtStream stream = nullptr;
    aclError st = handle_stream(handle->stream, handle->own_stream, &stream);
    if (st != ACL_SUCCESS) {
        return st;
    }
    const int64_t *d = xDesc->dims;
    std::vector<int64_t> view = mode == CUPORT_DNN_SOFTMAX_MODE_CHANNEL
        ? std::vector<int64_t>{d[0], d[1], d[2] * d[3]}
        : std::vector<int64_t>{d[0], d[1] * d[2] * d[3]};
    Call call(stream);
    Scaling s{};
    if (!make_scaling(call, alpha, beta, dnn_scalars(yDesc->type), &s)) {
        return call.finish(ACL_ERROR_INVALID_PARAM);
    }
    aclTensor *input = call.packed(x, xDesc->type, view);
    aclTensor *output = call.packed(y, yDesc->type, view);
    aclTensor *temp = s.beta_is_zero ? nullptr : temporary_like(call, yDesc->type, view, ACL_FORMAT_ND, &st);
    if (input == nullptr || output == nullptr || st != ACL_SUCCESS) {
        return call.finish(st != ACL_SUCCESS ? st : kAclnnParamInvalid);
    }
    bool log = algo == CUPORT_DNN_SOFTMAX_LOG;
    aclnnStatus result = blend(call, s, output, temp, [&](aclTensor *dst) {
        if (log) {
            return call.run(
                [&](uint64_t *bytes, aclOpExecutor **executor) {
                    return aclnnLogSoftmaxGetWorkspaceSize(input, 1, dst, bytes, executor);
                },
                aclnnLogSoftmax);
        }
        return call.run(
            [&](uint64_t *bytes, aclOpExecutor **executor) {
                return aclnnSoftmaxGetWorkspaceSize(input, 1, dst, bytes, executor);
            },
            aclnnSoftmax);
    });
    return call.finish(result);
}
