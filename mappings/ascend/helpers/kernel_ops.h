// cuport_kernel_ops.h: what the functions that replace CUDA kernels mapped
// to aclnn operators share (`[[kernel]]` rules, docs/kernel-rules.md).
// cuport writes it at the root of the output when a file's kernel launches
// became operator calls; the operator headers are included by that file.
//
// One CuportOpCall per replaced launch: it wraps the kernel's device
// pointers in aclTensor views, runs each operator's two phases
// (aclnnXxxGetWorkspaceSize, then aclnnXxx on the launch's stream), waits
// for the stream and releases what it created. A launch was asynchronous;
// the replacement returns when the operators are done, which is correct
// for every caller and slower for some. Failures come back as aclError /
// aclnnStatus codes (0 = success) from the replacing function.
// Checked by compiling against the real CANN headers (8.5.0, 9.0.0, 9.1.0);
// not yet run on Ascend hardware.
#ifndef CUPORT_KERNEL_OPS_H
#define CUPORT_KERNEL_OPS_H

#include <acl/acl.h>
#include <aclnn/acl_meta.h>

#include <cstdint>
#include <vector>

class CuportOpCall {
public:
    using Launch = aclnnStatus (*)(void *, uint64_t, aclOpExecutor *, aclrtStream);

    explicit CuportOpCall(aclrtStream stream) : stream_(stream) {}
    ~CuportOpCall() { release(); }
    CuportOpCall(const CuportOpCall &) = delete;
    CuportOpCall &operator=(const CuportOpCall &) = delete;

    // False once a view or value could not be created.
    bool ok() const { return ok_; }

    // A row-major view of `rank` extents at `data`. aclCreateTensor wants
    // 32-byte aligned data: a pointer into the middle of an allocation (a
    // kernel launched on `inp + b * C`) becomes an element offset from the
    // aligned address below it.
    aclTensor *tensor(const void *data, aclDataType type, const int64_t *dims, uint64_t rank) {
        size_t size = aclDataTypeSize(type);
        std::vector<int64_t> strides(rank, 1);
        int64_t elements = 1;
        for (uint64_t i = rank; i > 0; --i) {
            strides[i - 1] = elements;
            elements *= dims[i - 1];
        }
        if (size == 0 || elements <= 0) {
            return fail<aclTensor>(nullptr);
        }
        uintptr_t address = reinterpret_cast<uintptr_t>(data);
        uintptr_t aligned = address & ~static_cast<uintptr_t>(31);
        int64_t offset = 0;
        if ((address - aligned) % size == 0) {
            offset = static_cast<int64_t>((address - aligned) / size);
            address = aligned;
        }
        int64_t storage = elements + offset;
        aclTensor *view = aclCreateTensor(dims, rank, type, strides.data(), offset, ACL_FORMAT_ND,
                                          &storage, 1, reinterpret_cast<void *>(address));
        if (view != nullptr) {
            tensors_.push_back(view);
        }
        return fail(view);
    }

    // A view of `rank` extents with element `strides`, starting `offset`
    // elements after `data` (a `[[kernel]]` tensor with `strides` or
    // `offset`: one slice of an interleaved buffer, a transposed matrix).
    // The storage is the extent from `data` to the view's last element.
    aclTensor *view(const void *data, aclDataType type, const int64_t *dims, const int64_t *strides,
                    uint64_t rank, int64_t offset) {
        size_t size = aclDataTypeSize(type);
        int64_t last = offset;
        for (uint64_t i = 0; i < rank; ++i) {
            if (dims[i] <= 0 || strides[i] < 0) {
                return fail<aclTensor>(nullptr);
            }
            last += (dims[i] - 1) * strides[i];
        }
        if (size == 0 || offset < 0) {
            return fail<aclTensor>(nullptr);
        }
        uintptr_t address = reinterpret_cast<uintptr_t>(data);
        uintptr_t aligned = address & ~static_cast<uintptr_t>(31);
        if ((address - aligned) % size == 0) {
            int64_t shift = static_cast<int64_t>((address - aligned) / size);
            offset += shift;
            last += shift;
            address = aligned;
        }
        int64_t storage = last + 1;
        aclTensor *made = aclCreateTensor(dims, rank, type, strides, offset, ACL_FORMAT_ND, &storage,
                                          1, reinterpret_cast<void *>(address));
        if (made != nullptr) {
            tensors_.push_back(made);
        }
        return fail(made);
    }

    // Device memory of the function's own for `rank` extents (a `[[kernel]]`
    // tensor with `scratch = true`: a result one call writes and a later
    // call reads), freed by finish after the stream has finished.
    aclTensor *scratch(aclDataType type, const int64_t *dims, uint64_t rank) {
        void *memory = allocate(type, dims, rank);
        return memory == nullptr ? nullptr : tensor(memory, type, dims, rank);
    }

    // A one-element tensor holding `number` converted to `type` (a
    // `[[kernel]]` tensor with `value`: an operator that takes a scalar as
    // a tensor, aclnnApplyAdamWV2's step). The copy is synchronous, so
    // the host value may go out of scope at once.
    aclTensor *value(double number, aclDataType type, const int64_t *dims, uint64_t rank) {
        void *memory = allocate(type, dims, rank);
        if (memory == nullptr) {
            return nullptr;
        }
        float as_float = static_cast<float>(number);
        int32_t as_int32 = static_cast<int32_t>(number);
        int64_t as_int64 = static_cast<int64_t>(number);
        const void *host = nullptr;
        switch (type) {
            case ACL_FLOAT: host = &as_float; break;
            case ACL_INT32: host = &as_int32; break;
            case ACL_INT64: host = &as_int64; break;
            default: return fail<aclTensor>(nullptr);
        }
        size_t size = aclDataTypeSize(type);
        if (aclrtMemcpy(memory, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
            return fail<aclTensor>(nullptr);
        }
        return tensor(memory, type, dims, rank);
    }

    // `value` must live until the operator's first phase has run.
    aclScalar *scalar(void *value, aclDataType type) {
        aclScalar *scalar = aclCreateScalar(value, type);
        if (scalar != nullptr) {
            scalars_.push_back(scalar);
        }
        return fail(scalar);
    }

    aclIntArray *ints(const int64_t *values, uint64_t count) {
        aclIntArray *array = aclCreateIntArray(values, count);
        if (array != nullptr) {
            arrays_.push_back(array);
        }
        return fail(array);
    }

    aclBoolArray *bools(const bool *values, uint64_t count) {
        aclBoolArray *array = aclCreateBoolArray(values, count);
        if (array != nullptr) {
            bool_arrays_.push_back(array);
        }
        return fail(array);
    }

    // The second phase, with a workspace of `bytes` that lives until the
    // stream has finished (finish waits for it).
    aclnnStatus run(uint64_t bytes, aclOpExecutor *executor, Launch launch) {
        void *workspace = nullptr;
        if (bytes > 0) {
            aclError status = aclrtMalloc(&workspace, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
            if (status != ACL_SUCCESS) {
                return status;
            }
            buffers_.push_back(workspace);
        }
        return launch(workspace, bytes, executor, stream_);
    }

    // Waits for the stream when everything was launched, then releases.
    aclError finish(aclError status) {
        if (!ok_ && status == ACL_SUCCESS) {
            status = ACL_ERROR_INVALID_PARAM;
        }
        if (status == ACL_SUCCESS) {
            status = aclrtSynchronizeStream(stream_);
        }
        release();
        return status;
    }

private:
    // Device memory for `rank` extents of `type`, freed by release.
    void *allocate(aclDataType type, const int64_t *dims, uint64_t rank) {
        int64_t elements = 1;
        for (uint64_t i = 0; i < rank; ++i) {
            elements *= dims[i];
        }
        size_t size = aclDataTypeSize(type);
        void *memory = nullptr;
        if (size == 0 || elements <= 0 ||
            aclrtMalloc(&memory, static_cast<size_t>(elements) * size, ACL_MEM_MALLOC_HUGE_FIRST) !=
                ACL_SUCCESS) {
            return fail<void>(nullptr);
        }
        buffers_.push_back(memory);
        return memory;
    }

    template <typename T>
    T *fail(T *made) {
        if (made == nullptr) {
            ok_ = false;
        }
        return made;
    }

    void release() {
        for (aclTensor *t : tensors_) aclDestroyTensor(t);
        for (aclScalar *s : scalars_) aclDestroyScalar(s);
        for (aclIntArray *a : arrays_) aclDestroyIntArray(a);
        for (aclBoolArray *a : bool_arrays_) aclDestroyBoolArray(a);
        for (void *b : buffers_) aclrtFree(b);
        tensors_.clear();
        scalars_.clear();
        arrays_.clear();
        bool_arrays_.clear();
        buffers_.clear();
    }

    aclrtStream stream_;
    bool ok_ = true;
    std::vector<aclTensor *> tensors_;
    std::vector<aclScalar *> scalars_;
    std::vector<aclIntArray *> arrays_;
    std::vector<aclBoolArray *> bool_arrays_;
    std::vector<void *> buffers_;
};

#endif  // CUPORT_KERNEL_OPS_H
