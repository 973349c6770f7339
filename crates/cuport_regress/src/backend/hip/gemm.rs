//! The gemm family on hipBLAS: what runs, and the call itself.
#![allow(unsafe_code)]
use std::ffi::c_int;

use super::api::{
    BlasHandle, BlasStatus, Gemm, HipBlasApi, StridedGemm, BACKEND, HIPBLAS_OP_N, HIPBLAS_OP_T,
};
use super::DeviceBuffer;
use crate::backend::blas::{blas_gemm, BlasGemm};
use crate::dtype::DType;
use crate::error::{RegressError, Result};
use crate::ops::OpSpec;

pub(super) struct Prepared {
    pub(super) call: BlasGemm,
    /// Plain gemm (`hipblasSgemm`) rather than strided-batched.
    pub(super) single: bool,
    pub(super) dtype: DType,
    pub(super) a: DeviceBuffer,
    pub(super) b: DeviceBuffer,
    pub(super) c_init: DeviceBuffer,
    pub(super) output: DeviceBuffer,
    pub(super) out_shape: Vec<usize>,
}

/// Whether `op` on `dtype` runs here, and its BLAS call.
pub(crate) fn plan(op: &OpSpec, dtype: DType) -> Result<BlasGemm> {
    let Some(call) = blas_gemm(op) else {
        return Err(RegressError::unsupported(
            BACKEND,
            format!(
                "`{}` is unsupported on the hip backend (it runs the gemm family through \
                 hipBLAS only): use exec legs, i.e. an [[app]] case running your HIP build",
                op.kind()
            ),
        ));
    };
    if !matches!(dtype, DType::F32 | DType::F64) {
        return Err(RegressError::unsupported(
            BACKEND,
            format!("gemm on {dtype} is unsupported on the hip backend (f32 and f64 only)"),
        ));
    }
    call.map_err(|e| RegressError::unsupported(BACKEND, e))
}

/// One hipBLAS gemm on the prepared buffers.
///
/// # Safety
/// `p`'s buffers must be live device allocations sized from the op's
/// shapes. The call's sizes, leading dimensions and strides come from
/// `blas_gemm` (checked against the CPU reference), and the scales are
/// host values that outlive the call (default host pointer mode).
pub(super) unsafe fn call_blas(api: &HipBlasApi, handle: BlasHandle, p: &Prepared) -> BlasStatus {
    let c = &p.call;
    // Safety: as the function's contract above.
    unsafe {
        match (p.dtype, p.single) {
            (DType::F64, true) => single(api.dgemm, handle, p, c.alpha, c.beta),
            (DType::F64, false) => strided(api.dgemm_strided_batched, handle, p, c.alpha, c.beta),
            (_, true) => single(api.sgemm, handle, p, c.alpha as f32, c.beta as f32),
            (_, false) => strided(
                api.sgemm_strided_batched,
                handle,
                p,
                c.alpha as f32,
                c.beta as f32,
            ),
        }
    }
}

fn operations(p: &Prepared) -> (c_int, c_int) {
    let op = |t: bool| if t { HIPBLAS_OP_T } else { HIPBLAS_OP_N };
    (op(p.call.trans_first), op(p.call.trans_second))
}

/// # Safety
/// As [`call_blas`]; `T` matches the element type of `p`'s buffers.
unsafe fn single<T>(
    gemm: Gemm<T>,
    handle: BlasHandle,
    p: &Prepared,
    alpha: T,
    beta: T,
) -> BlasStatus {
    let c = &p.call;
    let (ta, tb) = operations(p);
    // Safety: the caller's contract; the scales live on this stack frame.
    unsafe {
        gemm(
            handle,
            ta,
            tb,
            c.m,
            c.n,
            c.k,
            &alpha,
            p.b.ptr.cast(),
            c.ld_first,
            p.a.ptr.cast(),
            c.ld_second,
            &beta,
            p.output.ptr.cast(),
            c.ldc,
        )
    }
}

/// # Safety
/// As [`call_blas`]; `T` matches the element type of `p`'s buffers.
unsafe fn strided<T>(
    gemm: StridedGemm<T>,
    handle: BlasHandle,
    p: &Prepared,
    alpha: T,
    beta: T,
) -> BlasStatus {
    let c = &p.call;
    let (ta, tb) = operations(p);
    // Safety: the caller's contract; the scales live on this stack frame.
    unsafe {
        gemm(
            handle,
            ta,
            tb,
            c.m,
            c.n,
            c.k,
            &alpha,
            p.b.ptr.cast(),
            c.ld_first,
            c.stride_first,
            p.a.ptr.cast(),
            c.ld_second,
            c.stride_second,
            &beta,
            p.output.ptr.cast(),
            c.ldc,
            c.stride_c,
            c.batch,
        )
    }
}
