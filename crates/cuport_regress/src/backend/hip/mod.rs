//! The `hip` backend: the HIP runtime and hipBLAS through libloading, so
//! nothing from ROCm is needed to build. It runs the gemm family (f32 with
//! `hipblasSgemm`/`hipblasSgemmStridedBatched`, f64 with the `D` variants);
//! other ops and dtypes are reported unsupported: port them as an
//! application and compare with exec legs. Timing uses HIP events on the
//! null stream around `iters` back-to-back calls.
#![allow(unsafe_code)]
mod api;
mod gemm;

use std::ffi::{c_char, c_int, c_void};

use self::api::{
    BlasHandle, HipBlasApi, HipError, HipEvent, HipRuntime, BACKEND, MEMCPY_DEVICE_TO_DEVICE,
    MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE,
};
use self::gemm::{call_blas, plan, Prepared};
use super::Backend;
use crate::device::{host_name, DeviceIdentity};
use crate::dtype::DType;
use crate::error::{RegressError, Result};
use crate::ops::OpSpec;
use crate::tensor::Tensor;

pub(super) fn open() -> Result<Box<dyn Backend>> {
    Ok(Box::new(HipBackend::open()?))
}

/// A device allocation; freed by [`HipBackend`]'s `Drop`.
#[derive(Clone, Copy)]
pub(super) struct DeviceBuffer {
    pub(super) ptr: *mut c_void,
    pub(super) bytes: usize,
}

pub(crate) struct HipBackend {
    rt: HipRuntime,
    blas: Option<(HipBlasApi, BlasHandle)>,
    start: HipEvent,
    end: HipEvent,
    device: DeviceIdentity,
    buffers: Vec<DeviceBuffer>,
    prepared: Option<Prepared>,
}

impl HipBackend {
    fn open() -> Result<HipBackend> {
        let rt = HipRuntime::load()?;
        // Safety: plain C calls with valid out-pointers.
        let init = unsafe { (rt.init)(0) };
        if init != 0 {
            return Err(unavailable(format!(
                "{} loaded, but hipInit failed: {}; no usable AMD GPU is visible \
                 (check `rocminfo`, /dev/kfd permissions and HIP_VISIBLE_DEVICES)",
                rt.library,
                rt.describe(init)
            )));
        }
        let mut count: c_int = 0;
        check(&rt, "hipGetDeviceCount", unsafe {
            (rt.get_device_count)(&mut count)
        })?;
        if count < 1 {
            return Err(unavailable("hipGetDeviceCount reports no device".into()));
        }
        check(&rt, "hipSetDevice(0)", unsafe { (rt.set_device)(0) })?;
        let mut start: HipEvent = std::ptr::null_mut();
        let mut end: HipEvent = std::ptr::null_mut();
        check(&rt, "hipEventCreate", unsafe {
            (rt.event_create)(&mut start)
        })?;
        check(&rt, "hipEventCreate", unsafe {
            (rt.event_create)(&mut end)
        })?;
        let device = identity(&rt)?;
        Ok(HipBackend {
            rt,
            blas: None,
            start,
            end,
            device,
            buffers: Vec::new(),
            prepared: None,
        })
    }

    fn blas_handle(&mut self) -> Result<(&HipBlasApi, BlasHandle)> {
        if self.blas.is_none() {
            let api = HipBlasApi::load()?;
            let mut handle: BlasHandle = std::ptr::null_mut();
            // Safety: out-pointer to a handle.
            let status = unsafe { (api.create)(&mut handle) };
            if status != 0 {
                return Err(failed(format!(
                    "hipblasCreate returned hipblasStatus_t {status}"
                )));
            }
            self.blas = Some((api, handle));
        }
        match &self.blas {
            Some((api, handle)) => Ok((api, *handle)),
            None => Err(failed("hipBLAS handle missing".into())),
        }
    }

    fn upload(&mut self, tensor: &Tensor) -> Result<DeviceBuffer> {
        let bytes = tensor.to_le_bytes();
        let buffer = self.alloc(bytes.len())?;
        let rt = &self.rt;
        // Safety: `buffer` holds at least `bytes.len()` bytes.
        check(rt, "hipMemcpy (to device)", unsafe {
            (rt.memcpy)(
                buffer.ptr,
                bytes.as_ptr().cast(),
                bytes.len(),
                MEMCPY_HOST_TO_DEVICE,
            )
        })?;
        Ok(buffer)
    }

    fn alloc(&mut self, bytes: usize) -> Result<DeviceBuffer> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        let rt = &self.rt;
        // Safety: out-pointer; at least one byte so the pointer is distinct.
        check(rt, "hipMalloc", unsafe {
            (rt.malloc)(&mut ptr, bytes.max(1))
        })?;
        let buffer = DeviceBuffer { ptr, bytes };
        self.buffers.push(buffer);
        Ok(buffer)
    }

    fn gemm_once(&mut self, p: &Prepared) -> Result<()> {
        if p.call.beta != 0.0 {
            let rt = &self.rt;
            // Safety: both buffers hold `output.bytes` bytes (C's shape).
            check(rt, "hipMemcpy (re-seed C)", unsafe {
                (rt.memcpy)(
                    p.output.ptr,
                    p.c_init.ptr,
                    p.output.bytes,
                    MEMCPY_DEVICE_TO_DEVICE,
                )
            })?;
        }
        let (api, handle) = self.blas_handle()?;
        // Safety: the buffers in `p` were allocated and filled by
        // `prepare` from the op's shapes and live until `drop`.
        let status = unsafe { call_blas(api, handle, p) };
        if status != 0 {
            return Err(failed(format!(
                "hipBLAS gemm returned hipblasStatus_t {status}"
            )));
        }
        Ok(())
    }
}

fn unavailable(reason: String) -> RegressError {
    RegressError::BackendUnavailable {
        backend: BACKEND.into(),
        reason,
    }
}

fn failed(message: String) -> RegressError {
    RegressError::backend(BACKEND, message)
}

fn check(rt: &HipRuntime, what: &str, code: HipError) -> Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(failed(format!("{what}: {}", rt.describe(code))))
    }
}

fn identity(rt: &HipRuntime) -> Result<DeviceIdentity> {
    let mut dev: c_int = 0;
    check(rt, "hipDeviceGet", unsafe { (rt.device_get)(&mut dev, 0) })?;
    let mut name = [0 as c_char; 256];
    check(rt, "hipDeviceGetName", unsafe {
        (rt.device_get_name)(name.as_mut_ptr(), name.len() as c_int, dev)
    })?;
    // Safety: the buffer is NUL-terminated (zeroed, and the runtime writes
    // at most `len` bytes including the terminator).
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let (mut driver, mut runtime): (c_int, c_int) = (0, 0);
    check(rt, "hipDriverGetVersion", unsafe {
        (rt.driver_get_version)(&mut driver)
    })?;
    check(rt, "hipRuntimeGetVersion", unsafe {
        (rt.runtime_get_version)(&mut runtime)
    })?;
    Ok(DeviceIdentity {
        backend: BACKEND.into(),
        model: name,
        driver: Some(format!("hipDriverGetVersion {driver}")),
        runtime: Some(format!("hipRuntimeGetVersion {runtime} ({})", rt.library)),
        host: host_name(),
    })
}

impl Backend for HipBackend {
    fn name(&self) -> &str {
        BACKEND
    }

    fn device(&self) -> &DeviceIdentity {
        &self.device
    }

    fn prepare(&mut self, op: &OpSpec, dtype: DType, inputs: &[Tensor]) -> Result<()> {
        let call = plan(op, dtype)?;
        self.blas_handle()?;
        let [a, b, c] = inputs else {
            return Err(failed(format!("gemm needs 3 inputs, got {}", inputs.len())));
        };
        let out_shape = op.output_shape()?;
        let (a, b, c_init) = (self.upload(a)?, self.upload(b)?, self.upload(c)?);
        let output = self.upload(c)?;
        self.prepared = Some(Prepared {
            call,
            single: matches!(op, OpSpec::Gemm { .. }),
            dtype,
            a,
            b,
            c_init,
            output,
            out_shape,
        });
        Ok(())
    }

    fn run(&mut self, iters: u32) -> Result<f64> {
        let Some(p) = self.prepared.take() else {
            return Err(failed("run() before prepare()".into()));
        };
        let result = self.timed(&p, iters);
        self.prepared = Some(p);
        result
    }

    fn output(&mut self) -> Result<Tensor> {
        let Some(p) = &self.prepared else {
            return Err(failed("output() before prepare()".into()));
        };
        let mut bytes = vec![0u8; p.output.bytes];
        let rt = &self.rt;
        // Safety: `bytes` has room for the whole output buffer.
        check(rt, "hipMemcpy (to host)", unsafe {
            (rt.memcpy)(
                bytes.as_mut_ptr().cast(),
                p.output.ptr,
                bytes.len(),
                MEMCPY_DEVICE_TO_HOST,
            )
        })?;
        Ok(Tensor::from_le_bytes(p.dtype, p.out_shape.clone(), &bytes))
    }
}

impl HipBackend {
    fn timed(&mut self, p: &Prepared, iters: u32) -> Result<f64> {
        let null_stream = std::ptr::null_mut();
        check(&self.rt, "hipEventRecord", unsafe {
            (self.rt.event_record)(self.start, null_stream)
        })?;
        for _ in 0..iters {
            self.gemm_once(p)?;
        }
        let rt = &self.rt;
        check(rt, "hipEventRecord", unsafe {
            (rt.event_record)(self.end, null_stream)
        })?;
        check(rt, "hipEventSynchronize", unsafe {
            (rt.event_synchronize)(self.end)
        })?;
        let mut ms = 0f32;
        check(rt, "hipEventElapsedTime", unsafe {
            (rt.event_elapsed_time)(&mut ms, self.start, self.end)
        })?;
        Ok(f64::from(ms) / 1e3)
    }
}

impl Drop for HipBackend {
    fn drop(&mut self) {
        // Errors are ignored: the process is about to end, and a failing
        // teardown must not hide the leg's result.
        // Safety: every pointer was produced by this runtime and is
        // released once.
        unsafe {
            (self.rt.device_synchronize)();
            if let Some((api, handle)) = self.blas.take() {
                (api.destroy)(handle);
            }
            for buffer in self.buffers.drain(..) {
                (self.rt.free)(buffer.ptr);
            }
            (self.rt.event_destroy)(self.start);
            (self.rt.event_destroy)(self.end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_f32_and_f64_gemms_are_planned() {
        let gemm = OpSpec::Gemm {
            m: 2,
            n: 3,
            k: 4,
            trans_a: false,
            trans_b: true,
            alpha: 1.0,
            beta: 0.0,
        };
        assert!(plan(&gemm, DType::F32).is_ok());
        assert!(plan(&gemm, DType::F64).is_ok());
        let unsupported = |op: &OpSpec, dtype| match plan(op, dtype) {
            Err(RegressError::Unsupported { reason, .. }) => reason,
            other => panic!("expected unsupported, got {:?}", other.map(|_| ())),
        };
        assert!(unsupported(&gemm, DType::F16).contains("f32 and f64 only"));
        assert!(
            unsupported(&OpSpec::Softmax { rows: 2, cols: 2 }, DType::F32)
                .contains("use exec legs")
        );
    }

    /// With the runtime installed (Debian: libamdhip64-5), every entry point
    /// must resolve; without it, the error says which files were tried.
    #[test]
    fn runtime_symbols_resolve_when_the_library_is_installed() {
        match HipRuntime::load() {
            Ok(rt) => assert!(rt.library.contains("libamdhip64")),
            Err(RegressError::BackendUnavailable { reason, .. }) => {
                assert!(
                    reason.starts_with("could not load libamdhip64.so"),
                    "{reason}"
                );
            }
            Err(other) => panic!("unexpected error: {other}"),
        }
    }

    /// Without ROCm (CI) the library is missing; with only the runtime
    /// package and no GPU, `hipInit` fails. Both must be a clear reason.
    #[test]
    fn opening_without_a_gpu_says_why() {
        match open() {
            Err(RegressError::BackendUnavailable { backend, reason }) => {
                assert_eq!(backend, "hip");
                assert!(
                    reason.contains("libamdhip64")
                        || reason.contains("hipInit")
                        || reason.contains("no device"),
                    "{reason}"
                );
            }
            Err(other) => panic!("unexpected error: {other}"),
            Ok(_) => {} // a machine with an AMD GPU
        }
    }
}
