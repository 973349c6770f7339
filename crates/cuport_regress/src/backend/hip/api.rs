//! The HIP runtime and hipBLAS entry points the `hip` backend calls,
//! resolved with libloading.
//!
//! Signatures and enum values are taken from the public headers:
//! `ROCm/HIP` `include/hip/hip_runtime_api.h` and `include/hip/driver_types.h`
//! (commit c5e11fca, 2024-10), and `ROCm/hipBLAS` `library/include/hipblas.h`
//! (commit d0a90f06^, the last one before the enums moved to
//! hipblas-common; the values are kept by `static_assert`s there).
#![allow(unsafe_code)]
use std::ffi::{c_char, c_int, c_longlong, c_uint, c_void};

use libloading::Library;

use crate::backend::dl::{open_first, symbol};
use crate::error::Result;

pub(super) const BACKEND: &str = "hip";

/// `hipError_t`; `hipSuccess = 0`.
pub(super) type HipError = c_int;
pub(super) type HipEvent = *mut c_void;
pub(super) type HipStream = *mut c_void;
/// `hipblasStatus_t`; `HIPBLAS_STATUS_SUCCESS = 0`.
pub(super) type BlasStatus = c_int;
pub(super) type BlasHandle = *mut c_void;

/// `hipMemcpyKind` (driver_types.h).
pub(super) const MEMCPY_HOST_TO_DEVICE: c_int = 1;
pub(super) const MEMCPY_DEVICE_TO_HOST: c_int = 2;
pub(super) const MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
/// `hipblasOperation_t` (hipblas.h).
pub(super) const HIPBLAS_OP_N: c_int = 111;
pub(super) const HIPBLAS_OP_T: c_int = 112;

/// `hipblas{S,D}gemm`: handle, transA, transB, m, n, k, alpha, A, lda, B,
/// ldb, beta, C, ldc.
pub(super) type Gemm<T> = unsafe extern "C" fn(
    BlasHandle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    *const T,
    c_int,
    *const T,
    *mut T,
    c_int,
) -> BlasStatus;
/// `hipblas{S,D}gemmStridedBatched`: as [`Gemm`] with a stride after each
/// matrix and the batch count last.
pub(super) type StridedGemm<T> = unsafe extern "C" fn(
    BlasHandle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    c_longlong,
    *const T,
    c_int,
    c_longlong,
    *const T,
    *mut T,
    c_int,
    c_longlong,
    c_int,
) -> BlasStatus;

/// `libamdhip64`; the function pointers are valid while `_lib` lives.
pub(super) struct HipRuntime {
    _lib: Library,
    pub(super) library: String,
    pub(super) init: unsafe extern "C" fn(c_uint) -> HipError,
    pub(super) get_device_count: unsafe extern "C" fn(*mut c_int) -> HipError,
    pub(super) set_device: unsafe extern "C" fn(c_int) -> HipError,
    pub(super) device_get: unsafe extern "C" fn(*mut c_int, c_int) -> HipError,
    pub(super) device_get_name: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> HipError,
    pub(super) malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError,
    pub(super) memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> HipError,
    pub(super) free: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub(super) device_synchronize: unsafe extern "C" fn() -> HipError,
    pub(super) event_create: unsafe extern "C" fn(*mut HipEvent) -> HipError,
    pub(super) event_record: unsafe extern "C" fn(HipEvent, HipStream) -> HipError,
    pub(super) event_synchronize: unsafe extern "C" fn(HipEvent) -> HipError,
    pub(super) event_elapsed_time: unsafe extern "C" fn(*mut f32, HipEvent, HipEvent) -> HipError,
    pub(super) event_destroy: unsafe extern "C" fn(HipEvent) -> HipError,
    pub(super) driver_get_version: unsafe extern "C" fn(*mut c_int) -> HipError,
    pub(super) runtime_get_version: unsafe extern "C" fn(*mut c_int) -> HipError,
    pub(super) get_error_string: unsafe extern "C" fn(HipError) -> *const c_char,
}

/// `libhipblas`; the function pointers are valid while `_lib` lives.
pub(super) struct HipBlasApi {
    _lib: Library,
    pub(super) create: unsafe extern "C" fn(*mut BlasHandle) -> BlasStatus,
    pub(super) destroy: unsafe extern "C" fn(BlasHandle) -> BlasStatus,
    pub(super) sgemm: Gemm<f32>,
    pub(super) dgemm: Gemm<f64>,
    pub(super) sgemm_strided_batched: StridedGemm<f32>,
    pub(super) dgemm_strided_batched: StridedGemm<f64>,
}

pub(super) const RUNTIME_LIBRARIES: &[&str] = &[
    "libamdhip64.so",
    "libamdhip64.so.6",
    "libamdhip64.so.5",
    "/opt/rocm/lib/libamdhip64.so",
];
pub(super) const BLAS_LIBRARIES: &[&str] = &[
    "libhipblas.so",
    "libhipblas.so.2",
    "libhipblas.so.1",
    "libhipblas.so.0",
    "/opt/rocm/lib/libhipblas.so",
];

impl HipRuntime {
    pub(super) fn load() -> Result<HipRuntime> {
        let (lib, library) = open_first(
            BACKEND,
            RUNTIME_LIBRARIES,
            "install ROCm (libamdhip64) or add /opt/rocm/lib to LD_LIBRARY_PATH",
        )?;
        // Safety: each type below is the C signature from hip_runtime_api.h.
        unsafe {
            Ok(HipRuntime {
                init: symbol(&lib, BACKEND, "hipInit")?,
                get_device_count: symbol(&lib, BACKEND, "hipGetDeviceCount")?,
                set_device: symbol(&lib, BACKEND, "hipSetDevice")?,
                device_get: symbol(&lib, BACKEND, "hipDeviceGet")?,
                device_get_name: symbol(&lib, BACKEND, "hipDeviceGetName")?,
                malloc: symbol(&lib, BACKEND, "hipMalloc")?,
                memcpy: symbol(&lib, BACKEND, "hipMemcpy")?,
                free: symbol(&lib, BACKEND, "hipFree")?,
                device_synchronize: symbol(&lib, BACKEND, "hipDeviceSynchronize")?,
                event_create: symbol(&lib, BACKEND, "hipEventCreate")?,
                event_record: symbol(&lib, BACKEND, "hipEventRecord")?,
                event_synchronize: symbol(&lib, BACKEND, "hipEventSynchronize")?,
                event_elapsed_time: symbol(&lib, BACKEND, "hipEventElapsedTime")?,
                event_destroy: symbol(&lib, BACKEND, "hipEventDestroy")?,
                driver_get_version: symbol(&lib, BACKEND, "hipDriverGetVersion")?,
                runtime_get_version: symbol(&lib, BACKEND, "hipRuntimeGetVersion")?,
                get_error_string: symbol(&lib, BACKEND, "hipGetErrorString")?,
                library,
                _lib: lib,
            })
        }
    }

    /// `hipGetErrorString` text for a failed call.
    pub(super) fn describe(&self, code: HipError) -> String {
        // Safety: returns a static C string (or null) for any code.
        let text = unsafe { (self.get_error_string)(code) };
        if text.is_null() {
            return format!("hipError_t {code}");
        }
        // Safety: non-null, NUL-terminated, owned by the runtime.
        let text = unsafe { std::ffi::CStr::from_ptr(text) };
        format!("{} (hipError_t {code})", text.to_string_lossy())
    }
}

impl HipBlasApi {
    pub(super) fn load() -> Result<HipBlasApi> {
        let (lib, _) = open_first(
            BACKEND,
            BLAS_LIBRARIES,
            "gemm cases need hipBLAS: install it (ROCm's hipblas package) or add /opt/rocm/lib to LD_LIBRARY_PATH",
        )?;
        // Safety: each type below is the C signature from hipblas.h.
        unsafe {
            Ok(HipBlasApi {
                create: symbol(&lib, BACKEND, "hipblasCreate")?,
                destroy: symbol(&lib, BACKEND, "hipblasDestroy")?,
                sgemm: symbol(&lib, BACKEND, "hipblasSgemm")?,
                dgemm: symbol(&lib, BACKEND, "hipblasDgemm")?,
                sgemm_strided_batched: symbol(&lib, BACKEND, "hipblasSgemmStridedBatched")?,
                dgemm_strided_batched: symbol(&lib, BACKEND, "hipblasDgemmStridedBatched")?,
                _lib: lib,
            })
        }
    }
}
