//! The `ascend` backend: AscendCL and aclnn through libloading, so nothing
//! from CANN is needed to build. Gemm (alpha = 1, beta = 0) runs through
//! aclnnMatmul, softmax through aclnnSoftmax, in f32/f16/bf16; everything
//! else is reported unsupported (compare your Ascend build with exec legs).
//!
//! aclnn executors are single-use, so every iteration runs both phases
//! (`…GetWorkspaceSize`, then the operator on the stream), as torch_npu
//! does. Timing uses ACL events recorded on the backend's stream.
#![allow(unsafe_code)]
mod api;
mod views;

use std::ffi::c_void;

use self::api::{
    c_text, AclEvent, AclExecutor, AclRuntime, AclStream, AclTensor, AclnnApi,
    ACL_ERROR_REPEAT_INITIALIZE, ACL_FORMAT_ND, ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEM_MALLOC_HUGE_FIRST, BACKEND,
};
use self::views::{acl_dtype, plan, Plan, View};
use super::Backend;
use crate::device::{host_name, DeviceIdentity};
use crate::dtype::DType;
use crate::error::{RegressError, Result};
use crate::ops::OpSpec;
use crate::tensor::Tensor;

/// Overrides aclnnMatmul's `cubeMathType` (0 KEEP_DTYPE, the default here;
/// 1 ALLOW_FP32_DOWN_PRECISION, needed for f32 on Atlas training/inference
/// series before A2; 2 USE_FP16; 3 USE_HF32).
pub const CUBE_MATH_ENV: &str = "CUPORT_ASCEND_CUBE_MATH";

pub(super) fn open() -> Result<Box<dyn Backend>> {
    Ok(Box::new(AscendBackend::open()?))
}

/// A prepared op: tensor descriptors in call order, and the output buffer.
struct Prepared {
    plan: Plan,
    tensors: Vec<AclTensor>,
    dtype: DType,
    output: *mut c_void,
    output_bytes: usize,
    out_shape: Vec<usize>,
}

pub(crate) struct AscendBackend {
    rt: AclRuntime,
    nn: Option<AclnnApi>,
    stream: AclStream,
    start: AclEvent,
    end: AclEvent,
    device: DeviceIdentity,
    buffers: Vec<*mut c_void>,
    workspace: (*mut c_void, u64),
    cube_math: i8,
    prepared: Option<Prepared>,
}

fn unavailable(reason: String) -> RegressError {
    RegressError::BackendUnavailable {
        backend: BACKEND.into(),
        reason,
    }
}

impl AscendBackend {
    fn open() -> Result<AscendBackend> {
        let rt = AclRuntime::load()?;
        // Safety: a null config path is documented as allowed.
        let init = unsafe { (rt.init)(std::ptr::null()) };
        if init != 0 && init != ACL_ERROR_REPEAT_INITIALIZE {
            return Err(unavailable(format!(
                "{} loaded, but {} (check `npu-smi info` and ASCEND_RT_VISIBLE_DEVICES)",
                rt.library,
                rt.error("aclInit", init)
            )));
        }
        let mut count = 0u32;
        // Safety: out-pointer to a u32.
        rt.check("aclrtGetDeviceCount", unsafe {
            (rt.get_device_count)(&mut count)
        })?;
        if count == 0 {
            return Err(unavailable("aclrtGetDeviceCount reports no NPU".into()));
        }
        // Safety: plain calls with valid out-pointers.
        let (mut stream, mut start, mut end) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        unsafe {
            rt.check("aclrtSetDevice(0)", (rt.set_device)(0))?;
            rt.check("aclrtCreateStream", (rt.create_stream)(&mut stream))?;
            rt.check("aclrtCreateEvent", (rt.create_event)(&mut start))?;
            rt.check("aclrtCreateEvent", (rt.create_event)(&mut end))?;
        }
        let device = identity(&rt)?;
        Ok(AscendBackend {
            rt,
            nn: None,
            stream,
            start,
            end,
            device,
            buffers: Vec::new(),
            workspace: (std::ptr::null_mut(), 0),
            cube_math: cube_math()?,
            prepared: None,
        })
    }

    fn upload(&mut self, bytes: &[u8]) -> Result<*mut c_void> {
        let ptr = self.alloc(bytes.len())?;
        let rt = &self.rt;
        // Safety: `ptr` holds at least `bytes.len()` bytes (destMax).
        rt.check("aclrtMemcpy (to device)", unsafe {
            (rt.memcpy)(
                ptr,
                bytes.len().max(1),
                bytes.as_ptr().cast(),
                bytes.len(),
                ACL_MEMCPY_HOST_TO_DEVICE,
            )
        })?;
        Ok(ptr)
    }

    fn alloc(&mut self, bytes: usize) -> Result<*mut c_void> {
        let mut ptr = std::ptr::null_mut();
        let rt = &self.rt;
        // Safety: out-pointer; HUGE_FIRST is the first policy enumerator.
        rt.check("aclrtMalloc", unsafe {
            (rt.malloc)(&mut ptr, bytes.max(1), ACL_MEM_MALLOC_HUGE_FIRST)
        })?;
        self.buffers.push(ptr);
        Ok(ptr)
    }

    fn tensor(
        &self,
        nn: &AclnnApi,
        view: &View,
        dtype: i32,
        data: *mut c_void,
    ) -> Result<AclTensor> {
        let storage = [view.storage];
        // Safety: dims/strides have `dims.len()` entries; the storage
        // covers every element the view addresses (checked by `views`).
        let t = unsafe {
            (nn.create_tensor)(
                view.dims.as_ptr(),
                view.dims.len() as u64,
                dtype,
                view.strides.as_ptr(),
                0,
                ACL_FORMAT_ND,
                storage.as_ptr(),
                1,
                data,
            )
        };
        if t.is_null() {
            return Err(self.rt.error("aclCreateTensor", -1));
        }
        Ok(t)
    }

    /// Phase 1 then phase 2 of the prepared operator, on the stream.
    fn launch_once(&mut self, p: &Prepared) -> Result<()> {
        let Some(nn) = &self.nn else {
            return Err(RegressError::backend(BACKEND, "aclnn is not loaded"));
        };
        let mut size = 0u64;
        let mut exec: AclExecutor = std::ptr::null_mut();
        let t = &p.tensors;
        // Safety: tensors were created by `prepare` for this plan and
        // stay alive until `drop`; out-pointers are valid.
        let (what, status) = unsafe {
            match p.plan {
                Plan::Matmul { .. } => (
                    "aclnnMatmulGetWorkspaceSize",
                    (nn.matmul_workspace)(t[0], t[1], t[2], self.cube_math, &mut size, &mut exec),
                ),
                Plan::Softmax { .. } => (
                    "aclnnSoftmaxGetWorkspaceSize",
                    (nn.softmax_workspace)(t[0], 1, t[1], &mut size, &mut exec),
                ),
            }
        };
        self.rt.check(what, status)?;
        let workspace = self.workspace_of(size)?;
        let Some(nn) = &self.nn else {
            return Err(RegressError::backend(BACKEND, "aclnn is not loaded"));
        };
        let run = match p.plan {
            Plan::Matmul { .. } => nn.matmul,
            Plan::Softmax { .. } => nn.softmax,
        };
        // Safety: the executor comes from phase 1 and is used once; the
        // workspace holds at least `size` bytes.
        self.rt.check("aclnn execute", unsafe {
            run(workspace, size, exec, self.stream)
        })
    }

    /// A device workspace of at least `size` bytes, grown when needed.
    fn workspace_of(&mut self, size: u64) -> Result<*mut c_void> {
        if size == 0 {
            return Ok(std::ptr::null_mut());
        }
        if size > self.workspace.1 {
            let bytes = usize::try_from(size)
                .map_err(|_| RegressError::backend(BACKEND, "workspace too large"))?;
            self.workspace = (self.alloc(bytes)?, size);
        }
        Ok(self.workspace.0)
    }
}

fn cube_math() -> Result<i8> {
    match std::env::var(CUBE_MATH_ENV) {
        Err(_) => Ok(0),
        Ok(v) => v.trim().parse::<i8>().map_err(|_| {
            RegressError::backend(
                BACKEND,
                format!("{CUBE_MATH_ENV}={v:?}: expected -1, 0, 1, 2 or 3"),
            )
        }),
    }
}

fn identity(rt: &AclRuntime) -> Result<DeviceIdentity> {
    // Safety: returns a runtime-owned C string or null.
    let soc = c_text(unsafe { (rt.get_soc_name)() }).unwrap_or_else(|| "unknown Ascend SoC".into());
    let (mut major, mut minor, mut patch) = (0i32, 0i32, 0i32);
    // Safety: three out-pointers.
    rt.check("aclrtGetVersion", unsafe {
        (rt.get_version)(&mut major, &mut minor, &mut patch)
    })?;
    let driver = std::fs::read_to_string("/usr/local/Ascend/driver/version.info")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("Version=").map(|v| v.trim().to_owned()))
        });
    Ok(DeviceIdentity {
        backend: BACKEND.into(),
        model: soc,
        driver,
        runtime: Some(format!("AscendCL {major}.{minor}.{patch}")),
        host: host_name(),
    })
}

impl Backend for AscendBackend {
    fn name(&self) -> &str {
        BACKEND
    }

    fn device(&self) -> &DeviceIdentity {
        &self.device
    }

    fn prepare(&mut self, op: &OpSpec, dtype: DType, inputs: &[Tensor]) -> Result<()> {
        let plan = plan(op).map_err(|e| RegressError::unsupported(BACKEND, e))?;
        let acl_type = acl_dtype(dtype).map_err(|e| RegressError::unsupported(BACKEND, e))?;
        if self.nn.is_none() {
            self.nn = Some(AclnnApi::load()?);
        }
        let data: Vec<*mut c_void> = match plan {
            Plan::Matmul { .. } => vec![
                self.upload(&inputs[0].to_le_bytes())?,
                self.upload(&inputs[1].to_le_bytes())?,
            ],
            Plan::Softmax { .. } => vec![self.upload(&inputs[0].to_le_bytes())?],
        };
        let out_shape = op.output_shape()?;
        let output_bytes = out_shape.iter().product::<usize>() * dtype.size_bytes();
        let output = self.alloc(output_bytes)?;
        let views: Vec<&View> = match &plan {
            Plan::Matmul { a, b, out } => vec![a, b, out],
            Plan::Softmax { x, out } => vec![x, out],
        };
        let Some(nn) = &self.nn else {
            return Err(RegressError::backend(BACKEND, "aclnn is not loaded"));
        };
        let mut tensors = Vec::new();
        for (view, ptr) in views.iter().zip(data.iter().chain([&output])) {
            tensors.push(self.tensor(nn, view, acl_type, *ptr)?);
        }
        self.prepared = Some(Prepared {
            plan,
            tensors,
            dtype,
            output,
            output_bytes,
            out_shape,
        });
        Ok(())
    }

    fn run(&mut self, iters: u32) -> Result<f64> {
        let Some(p) = self.prepared.take() else {
            return Err(RegressError::backend(BACKEND, "run() before prepare()"));
        };
        let result = self.timed(&p, iters);
        self.prepared = Some(p);
        result
    }

    fn output(&mut self) -> Result<Tensor> {
        let Some(p) = &self.prepared else {
            return Err(RegressError::backend(BACKEND, "output() before prepare()"));
        };
        let rt = &self.rt;
        // aclrtMemcpy does not wait for queued stream work.
        rt.check("aclrtSynchronizeStream", unsafe {
            (rt.synchronize_stream)(self.stream)
        })?;
        let mut bytes = vec![0u8; p.output_bytes];
        // Safety: `bytes` has room for the whole output (destMax).
        rt.check("aclrtMemcpy (to host)", unsafe {
            (rt.memcpy)(
                bytes.as_mut_ptr().cast(),
                bytes.len(),
                p.output,
                p.output_bytes,
                ACL_MEMCPY_DEVICE_TO_HOST,
            )
        })?;
        Ok(Tensor::from_le_bytes(p.dtype, p.out_shape.clone(), &bytes))
    }
}

impl AscendBackend {
    fn timed(&mut self, p: &Prepared, iters: u32) -> Result<f64> {
        // Safety: events and stream were created in `open`.
        self.rt.check("aclrtRecordEvent", unsafe {
            (self.rt.record_event)(self.start, self.stream)
        })?;
        for _ in 0..iters {
            self.launch_once(p)?;
        }
        let rt = &self.rt;
        let mut ms = 0f32;
        // Safety: as above; `ms` is an out-pointer.
        unsafe {
            rt.check("aclrtRecordEvent", (rt.record_event)(self.end, self.stream))?;
            rt.check("aclrtSynchronizeEvent", (rt.synchronize_event)(self.end))?;
            rt.check(
                "aclrtEventElapsedTime",
                (rt.event_elapsed_time)(&mut ms, self.start, self.end),
            )?;
        }
        Ok(f64::from(ms) / 1e3)
    }
}

impl Drop for AscendBackend {
    fn drop(&mut self) {
        // Teardown order from acl_rt.h: synchronize, destroy events and the
        // stream, free memory, reset the device, finalize. Errors are
        // ignored so a failing teardown cannot hide the leg's result.
        // Safety: every handle was created by this runtime, released once.
        unsafe {
            (self.rt.synchronize_stream)(self.stream);
            if let (Some(p), Some(nn)) = (self.prepared.take(), &self.nn) {
                for t in p.tensors {
                    (nn.destroy_tensor)(t);
                }
            }
            (self.rt.destroy_event)(self.start);
            (self.rt.destroy_event)(self.end);
            (self.rt.destroy_stream)(self.stream);
            for ptr in self.buffers.drain(..) {
                (self.rt.free)(ptr);
            }
            (self.rt.reset_device)(0);
            (self.rt.finalize)();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without CANN (CI, this machine) the backend names the library and
    /// how to get it; it must never crash.
    #[test]
    fn opening_without_cann_says_why() {
        match open() {
            Err(RegressError::BackendUnavailable { backend, reason }) => {
                assert_eq!(backend, "ascend");
                assert!(
                    reason.contains("libascendcl.so")
                        || reason.contains("aclInit")
                        || reason.contains("no NPU"),
                    "{reason}"
                );
            }
            Err(other) => panic!("unexpected error: {other}"),
            Ok(_) => {} // a machine with an NPU
        }
    }
}
