// A CPU stand-in for the AscendCL and aclnn calls the GEMM and cuDNN helpers make,
// written for cuport's tests from the documented semantics (FP32 only):
// device memory is host memory, streams do nothing, an aclTensor is a strided
// view, and each aclnn operator runs when its second phase is called. It
// checks the helpers' own logic (layouts, transposes, batches, epilogue
// order), not Ascend's kernels. Functions the tests do not reach are left
// undefined (the test links with unresolved symbols ignored).
#include "cuport_ascend_decls.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

struct aclTensor {
    std::vector<int64_t> dims, strides;
    int64_t offset;
    float *data;
};
struct aclScalar {
    double value;
};
struct aclIntArray {
    std::vector<int64_t> values;
};
struct aclOpExecutor {
    std::function<aclnnStatus()> run;
};

namespace {

float &at(const aclTensor *t, const std::vector<int64_t> &index) {
    int64_t position = t->offset;
    for (size_t d = 0; d < index.size(); ++d) position += index[d] * t->strides[d];
    return t->data[position];
}

// Calls f for every index of `dims`, last dimension fastest.
void each(const std::vector<int64_t> &dims, const std::function<void(const std::vector<int64_t> &)> &f) {
    std::vector<int64_t> index(dims.size(), 0);
    for (int64_t d : dims) {
        if (d <= 0) return;
    }
    while (true) {
        f(index);
        size_t d = dims.size();
        while (d > 0) {
            --d;
            if (++index[d] < dims[d]) break;
            index[d] = 0;
            if (d == 0) return;
        }
        if (dims.empty()) return;
    }
}

aclnnStatus plan(aclOpExecutor **executor, uint64_t *bytes, std::function<aclnnStatus()> run) {
    *bytes = 0;
    *executor = new aclOpExecutor{std::move(run)};
    return 0;
}

aclnnStatus launch(aclOpExecutor *executor) {
    aclnnStatus st = executor->run();
    delete executor;
    return st;
}

// out[..., i, j] = sum_k a[..., i, k] * b[..., k, j] for 2-D or 3-D views.
void matmul(const aclTensor *a, const aclTensor *b, std::vector<float> &out, std::vector<int64_t> &dims) {
    size_t r = a->dims.size();
    dims = a->dims;
    dims[r - 1] = b->dims[r - 1];
    int64_t total = 1;
    for (int64_t d : dims) total *= d;
    out.assign(total, 0.0f);
    int64_t inner = a->dims[r - 1];
    size_t n = 0;
    each(dims, [&](const std::vector<int64_t> &index) {
        double sum = 0;
        std::vector<int64_t> ai = index, bi = index;
        for (int64_t k = 0; k < inner; ++k) {
            ai[r - 1] = k;
            bi[r - 2] = k;
            sum += static_cast<double>(at(a, ai)) * at(b, bi);
        }
        out[n++] = static_cast<float>(sum);
    });
}

void store(aclTensor *out, const std::vector<float> &values, double alpha, double beta) {
    size_t n = 0;
    each(out->dims, [&](const std::vector<int64_t> &index) {
        float &y = at(out, index);
        y = static_cast<float>(beta * (beta == 0 ? 0 : y) + alpha * values[n++]);
    });
}

const double kGeluScale = 0.7978845608028654;  // sqrt(2 / pi)

double gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(kGeluScale * (x + 0.044715 * x * x * x))); }

double gelu_tanh_grad(double x) {
    double t = std::tanh(kGeluScale * (x + 0.044715 * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * kGeluScale * (1 + 3 * 0.044715 * x * x);
}

}  // namespace

extern "C" {

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t *stride,
                           int64_t offset, aclFormat, const int64_t *, uint64_t, void *tensorData) {
    if (dataType != ACL_FLOAT) return nullptr;
    return new aclTensor{std::vector<int64_t>(viewDims, viewDims + viewDimsNum),
                         std::vector<int64_t>(stride, stride + viewDimsNum), offset,
                         static_cast<float *>(tensorData)};
}
aclnnStatus aclDestroyTensor(const aclTensor *tensor) { delete tensor; return 0; }
aclScalar *aclCreateScalar(void *value, aclDataType dataType) {
    if (dataType != ACL_FLOAT) return nullptr;
    return new aclScalar{*static_cast<float *>(value)};
}
aclnnStatus aclDestroyScalar(const aclScalar *scalar) { delete scalar; return 0; }
aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size) {
    return new aclIntArray{std::vector<int64_t>(value, value + size)};
}
aclnnStatus aclDestroyIntArray(const aclIntArray *array) { delete array; return 0; }

aclError aclInit(const char *) { return 0; }
aclError aclFinalize(void) { return 0; }
aclError aclrtGetDevice(int32_t *deviceId) { *deviceId = 0; return 0; }
aclError aclrtSetDevice(int32_t) { return 0; }
aclError aclrtSynchronizeStream(aclrtStream) { return 0; }
aclError aclrtCreateStream(aclrtStream *stream) {
    static int token;
    *stream = &token;  // any non-null handle: work runs when it is launched
    return 0;
}
aclError aclrtDestroyStream(aclrtStream) { return 0; }
aclError aclrtSynchronizeDevice(void) { return 0; }
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy) {
    *devPtr = std::aligned_alloc(64, (size + 63) / 64 * 64);
    return *devPtr == nullptr ? ACL_ERROR_BAD_ALLOC : 0;
}
aclError aclrtFree(void *devPtr) { std::free(devPtr); return 0; }
aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                            aclrtMemcpyKind, aclrtStream) {
    for (size_t row = 0; row < height; ++row) {
        std::memmove(static_cast<char *>(dst) + row * dpitch, static_cast<const char *>(src) + row * spitch, width);
    }
    return 0;
}
aclError aclrtMemsetAsync(void *devPtr, size_t, int32_t value, size_t count, aclrtStream) {
    std::memset(devPtr, value, count);
    return 0;
}

aclnnStatus aclnnMmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out, int8_t,
                                    uint64_t *bytes, aclOpExecutor **executor) {
    return plan(executor, bytes, [=] {
        std::vector<float> product; std::vector<int64_t> dims;
        matmul(self, mat2, product, dims);
        store(out, product, 1, 0);
        return 0;
    });
}
aclnnStatus aclnnMm(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

// out[i] = sum_j self[i, j] * vec[j]
aclnnStatus aclnnMvGetWorkspaceSize(const aclTensor *self, const aclTensor *vec, aclTensor *out, int8_t,
                                    uint64_t *bytes, aclOpExecutor **executor) {
    return plan(executor, bytes, [=] {
        for (int64_t i = 0; i < self->dims[0]; ++i) {
            double sum = 0;
            for (int64_t j = 0; j < self->dims[1]; ++j) sum += static_cast<double>(at(self, {i, j})) * at(vec, {j});
            at(out, {i}) = static_cast<float>(sum);
        }
        return 0;
    });
}
aclnnStatus aclnnMv(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

aclnnStatus aclnnBatchMatMulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out, int8_t,
                                             uint64_t *bytes, aclOpExecutor **executor) {
    return aclnnMmGetWorkspaceSize(self, mat2, out, 0, bytes, executor);
}
aclnnStatus aclnnBatchMatMul(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *mat1, const aclTensor *mat2,
                                              const aclScalar *beta, const aclScalar *alpha, int8_t, uint64_t *bytes,
                                              aclOpExecutor **executor) {
    return plan(executor, bytes, [=] {
        std::vector<float> product; std::vector<int64_t> dims;
        matmul(mat1, mat2, product, dims);
        store(const_cast<aclTensor *>(selfRef), product, alpha->value, beta->value);
        return 0;
    });
}
aclnnStatus aclnnInplaceAddmm(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

aclnnStatus aclnnInplaceMulsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other, uint64_t *bytes,
                                             aclOpExecutor **executor) {
    return plan(executor, bytes, [=] {
        each(selfRef->dims, [&](const std::vector<int64_t> &i) { at(selfRef, i) *= static_cast<float>(other->value); });
        return 0;
    });
}
aclnnStatus aclnnInplaceMuls(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

// selfRef += alpha * other, `other` broadcast over selfRef's leading dimensions.
aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other, const aclScalar *alpha,
                                            uint64_t *bytes, aclOpExecutor **executor) {
    return plan(executor, bytes, [=] {
        size_t skip = selfRef->dims.size() - other->dims.size();
        each(selfRef->dims, [&](const std::vector<int64_t> &i) {
            std::vector<int64_t> j(i.begin() + static_cast<long>(skip), i.end());
            for (size_t d = 0; d < j.size(); ++d) if (other->dims[d] == 1) j[d] = 0;
            at(selfRef, i) += static_cast<float>(alpha->value) * at(other, j);
        });
        return 0;
    });
}
aclnnStatus aclnnInplaceAdd(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

aclnnStatus aclnnInplaceReluGetWorkspaceSize(aclTensor *selfRef, uint64_t *bytes, aclOpExecutor **executor) {
    return plan(executor, bytes, [=] {
        each(selfRef->dims, [&](const std::vector<int64_t> &i) { at(selfRef, i) = std::fmax(at(selfRef, i), 0.0f); });
        return 0;
    });
}
aclnnStatus aclnnInplaceRelu(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor *selfRef, const aclTensor *src, uint64_t *bytes,
                                             aclOpExecutor **executor) {
    return plan(executor, bytes, [=] {
        each(selfRef->dims, [&](const std::vector<int64_t> &i) { at(selfRef, i) = at(src, i); });
        return 0;
    });
}
aclnnStatus aclnnInplaceCopy(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor *x, int64_t approximate, aclTensor *y, uint64_t *bytes,
                                        aclOpExecutor **executor) {
    if (approximate != 1) return 161002;  // the stand-in knows the tanh form only
    return plan(executor, bytes, [=] {
        each(y->dims, [&](const std::vector<int64_t> &i) { at(y, i) = static_cast<float>(gelu_tanh(at(x, i))); });
        return 0;
    });
}
aclnnStatus aclnnGeluV2(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self, char *approximate,
                                                aclTensor *gradInput, uint64_t *bytes, aclOpExecutor **executor) {
    if (std::strcmp(approximate, "tanh") != 0) return 161002;
    return plan(executor, bytes, [=] {
        each(gradInput->dims, [&](const std::vector<int64_t> &i) {
            at(gradInput, i) = static_cast<float>(at(gradOutput, i) * gelu_tanh_grad(at(self, i)));
        });
        return 0;
    });
}
aclnnStatus aclnnGeluBackwardV2(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, bool, aclDataType,
                                           aclTensor *out, uint64_t *bytes, aclOpExecutor **executor) {
    int64_t reduced = dim->values.at(0);
    return plan(executor, bytes, [=] {
        each(out->dims, [&](const std::vector<int64_t> &i) { at(out, i) = 0; });
        each(self->dims, [&](const std::vector<int64_t> &i) {
            std::vector<int64_t> j;
            for (size_t d = 0; d < i.size(); ++d) if (static_cast<int64_t>(d) != reduced) j.push_back(i[d]);
            at(out, j) += at(self, i);
        });
        return 0;
    });
}
aclnnStatus aclnnReduceSum(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

// NCHW cross-correlation with groups, stride, padding and dilation (no bias).
aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor *input, const aclTensor *weight, const aclTensor *bias,
                                             const aclIntArray *stride, const aclIntArray *padding,
                                             const aclIntArray *dilation, bool transposed, const aclIntArray *,
                                             const int64_t groups, aclTensor *output, int8_t, uint64_t *bytes,
                                             aclOpExecutor **executor) {
    if (bias != nullptr || transposed || groups <= 0) return 161002;
    return plan(executor, bytes, [=] {
        int64_t in_per_group = input->dims[1] / groups, out_per_group = output->dims[1] / groups;
        each(output->dims, [&](const std::vector<int64_t> &o) {
            int64_t group = o[1] / out_per_group;
            double sum = 0;
            for (int64_t c = 0; c < in_per_group; ++c)
                for (int64_t r = 0; r < weight->dims[2]; ++r)
                    for (int64_t q = 0; q < weight->dims[3]; ++q) {
                        int64_t h = o[2] * stride->values[0] - padding->values[0] + r * dilation->values[0];
                        int64_t w = o[3] * stride->values[1] - padding->values[1] + q * dilation->values[1];
                        if (h < 0 || w < 0 || h >= input->dims[2] || w >= input->dims[3]) continue;
                        sum += static_cast<double>(at(input, {o[0], group * in_per_group + c, h, w})) *
                               at(weight, {o[1], c, r, q});
                    }
            at(output, o) = static_cast<float>(sum);
        });
        return 0;
    });
}
aclnnStatus aclnnConvolution(void *, const uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

namespace {
aclnnStatus softmax(const aclTensor *self, int64_t dim, aclTensor *out, bool log, uint64_t *bytes,
                    aclOpExecutor **executor) {
    return plan(executor, bytes, [=] {
        std::vector<int64_t> outer = self->dims;
        outer[dim] = 1;
        each(outer, [&](const std::vector<int64_t> &base) {
            std::vector<int64_t> i = base;
            double top = -1e300, sum = 0;
            for (i[dim] = 0; i[dim] < self->dims[dim]; ++i[dim]) top = std::fmax(top, at(self, i));
            for (i[dim] = 0; i[dim] < self->dims[dim]; ++i[dim]) sum += std::exp(at(self, i) - top);
            for (i[dim] = 0; i[dim] < self->dims[dim]; ++i[dim]) {
                double x = at(self, i) - top;
                at(out, i) = static_cast<float>(log ? x - std::log(sum) : std::exp(x) / sum);
            }
        });
        return 0;
    });
}
}  // namespace

aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out, uint64_t *bytes,
                                         aclOpExecutor **executor) {
    return softmax(self, dim, out, false, bytes, executor);
}
aclnnStatus aclnnSoftmax(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }
aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out, uint64_t *bytes,
                                            aclOpExecutor **executor) {
    return softmax(self, dim, out, true, bytes, executor);
}
aclnnStatus aclnnLogSoftmax(void *, uint64_t, aclOpExecutor *executor, aclrtStream) { return launch(executor); }

}  // extern "C"
