//! The `cuda` backend: cudarc with dynamic loading, so nothing CUDA is
//! needed to build; the driver, NVRTC and cuBLAS are opened at run time.
//!
//! Gemm-family ops run as one `cublasGemmStridedBatchedEx` call (batch 1
//! for plain gemm; pointer-array batched gemm uses the equivalent packed
//! strides), the other ops as NVRTC-compiled kernels from [`kernels`].
//! Timing uses CUDA events around `iters` back-to-back launches.
//!
//! cudarc panics when a library or symbol is missing, so the libraries are
//! probed first and every call into cudarc runs under [`guarded`]: a panic
//! becomes a [`RegressError`] naming what was being done.
#![allow(unsafe_code)]
#[cfg(test)]
mod clang_check;
mod config;
mod identity;
mod kernels;

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cublas::{result as blas_result, sys as blas_sys, CudaBlas};
use cudarc::driver::{
    sys, CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig,
    PushKernelArg,
};

use self::config::{kernel_config, Scalars};
use super::blas::{blas_gemm, BlasGemm};
use super::Backend;
use crate::device::DeviceIdentity;
use crate::dtype::DType;
use crate::error::{RegressError, Result};
use crate::ops::OpSpec;
use crate::tensor::Tensor;

const BACKEND: &str = "cuda";

/// Open device 0 (respecting `CUDA_VISIBLE_DEVICES`).
pub(super) fn open() -> Result<Box<dyn Backend>> {
    identity::probe_libraries()?;
    let backend = guarded("opening CUDA device 0", CudaBackend::open)?;
    Ok(Box::new(backend))
}

/// Run `f`, turning a panic inside cudarc into an error that says what was
/// being done (the leg is a child process, but its message must be clear).
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let detail = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(RegressError::backend(
                BACKEND,
                format!("cudarc failed while {what}: {detail}"),
            ))
        }
    }
}

/// Map a cudarc error into ours, naming the step.
fn failed<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> RegressError {
    move |e| RegressError::backend(BACKEND, format!("{what}: {e}"))
}

/// How one run of the prepared op is launched.
enum Launch {
    /// cuBLAS; `copy_c` re-seeds the output with C before each call when
    /// beta ≠ 0, because gemm accumulates into its output.
    Blas { call: BlasGemm, copy_c: bool },
    Kernel {
        func: CudaFunction,
        cfg: LaunchConfig,
        scalars: Scalars,
    },
}

struct Prepared {
    launch: Launch,
    dtype: DType,
    /// Inputs in op order, then the output, as raw bytes.
    inputs: Vec<CudaSlice<u8>>,
    output: CudaSlice<u8>,
    out_shape: Vec<usize>,
}

pub(crate) struct CudaBackend {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    blas: Option<CudaBlas>,
    blas_missing: Option<String>,
    start: CudaEvent,
    end: CudaEvent,
    device: DeviceIdentity,
    prepared: Option<Prepared>,
}

impl CudaBackend {
    fn open() -> Result<CudaBackend> {
        let count = CudaContext::device_count().map_err(failed("cuDeviceGetCount"))?;
        if count < 1 {
            return Err(RegressError::BackendUnavailable {
                backend: BACKEND.into(),
                reason: "the NVIDIA driver loaded but reports no CUDA device \
                         (check CUDA_VISIBLE_DEVICES and nvidia-smi)"
                    .into(),
            });
        }
        let ctx = CudaContext::new(0).map_err(failed("creating a context on device 0"))?;
        let stream = ctx.default_stream();
        let (blas, blas_missing) = match identity::cublas_present() {
            Ok(()) => (
                Some(CudaBlas::new(stream.clone()).map_err(failed("cublasCreate"))?),
                None,
            ),
            Err(reason) => (None, Some(reason)),
        };
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = ctx.new_event(timing).map_err(failed("cuEventCreate"))?;
        let end = ctx.new_event(timing).map_err(failed("cuEventCreate"))?;
        let device = identity::describe(&ctx, blas.as_ref())?;
        Ok(CudaBackend {
            ctx,
            stream,
            blas,
            blas_missing,
            start,
            end,
            device,
            prepared: None,
        })
    }

    fn plan(&self, op: &OpSpec, dtype: DType) -> Result<Launch> {
        if let Some(call) = blas_gemm(op) {
            let call = call.map_err(|e| RegressError::unsupported(BACKEND, e))?;
            if dtype == DType::I32 {
                return Err(RegressError::unsupported(
                    BACKEND,
                    "gemm on i32: cuBLAS has no i32 gemm with i32 output",
                ));
            }
            if let Some(reason) = &self.blas_missing {
                return Err(RegressError::BackendUnavailable {
                    backend: BACKEND.into(),
                    reason: reason.clone(),
                });
            }
            return Ok(Launch::Blas {
                call,
                copy_c: call.beta != 0.0,
            });
        }
        let name =
            kernels::kernel_for(op, dtype).map_err(|e| RegressError::unsupported(BACKEND, e))?;
        let (major, minor) = self
            .ctx
            .compute_capability()
            .map_err(failed("reading the compute capability"))?;
        let opts = cudarc::nvrtc::CompileOptions {
            options: vec![format!("--gpu-architecture=compute_{major}{minor}")],
            name: Some(format!("cuport_{}.cu", dtype.name())),
            ..Default::default()
        };
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(kernels::source(dtype), opts)
            .map_err(failed("NVRTC compiling the cuport kernels"))?;
        let module = self
            .ctx
            .load_module(ptx)
            .map_err(failed("cuModuleLoadData"))?;
        let func = module
            .load_function(name)
            .map_err(failed("cuModuleGetFunction"))?;
        let (cfg, scalars) = kernel_config(op)?;
        Ok(Launch::Kernel { func, cfg, scalars })
    }

    fn upload(
        &self,
        launch: Launch,
        inputs: &[Tensor],
        out_shape: &[usize],
        dtype: DType,
    ) -> Result<Prepared> {
        let inputs = inputs
            .iter()
            .map(|t| self.stream.clone_htod(&t.to_le_bytes()))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(failed("copying inputs to the device"))?;
        let bytes = out_shape.iter().product::<usize>() * dtype.size_bytes();
        let output = self
            .stream
            .alloc_zeros::<u8>(bytes.max(1))
            .map_err(failed("allocating the output"))?;
        Ok(Prepared {
            launch,
            dtype,
            inputs,
            output,
            out_shape: out_shape.to_vec(),
        })
    }

    fn launch_once(&self, p: &mut Prepared) -> Result<()> {
        match &p.launch {
            Launch::Blas { call, copy_c } => {
                if *copy_c {
                    self.stream
                        .memcpy_dtod(&p.inputs[2], &mut p.output)
                        .map_err(failed("re-seeding C"))?;
                }
                self.gemm(call, p)
            }
            Launch::Kernel { func, cfg, scalars } => {
                let mut ptrs: Vec<u64> = p.inputs.iter().map(|s| self.raw(s)).collect();
                ptrs.push(self.raw(&p.output));
                let mut builder = self.stream.launch_builder(func);
                for ptr in &ptrs {
                    builder.arg(ptr);
                }
                match scalars {
                    Scalars::Len(n) => {
                        builder.arg(n);
                    }
                    Scalars::LayerNorm { cols, eps } => {
                        builder.arg(cols);
                        builder.arg(eps);
                    }
                    Scalars::Conv(values) => {
                        for v in values {
                            builder.arg(v);
                        }
                    }
                }
                // Safety: the argument list matches the kernel's signature
                // in `kernels` (pointers in op order, output, then scalars),
                // and every buffer is sized from the op's shapes.
                unsafe { builder.launch(*cfg) }
                    .map(|_| ())
                    .map_err(failed("launching the kernel"))
            }
        }
    }

    /// The raw device address of `slice`; valid while `slice` lives.
    fn raw(&self, slice: &CudaSlice<u8>) -> u64 {
        let (ptr, _sync) = slice.device_ptr(&self.stream);
        ptr
    }

    fn gemm(&self, call: &BlasGemm, p: &Prepared) -> Result<()> {
        let Some(blas) = &self.blas else {
            return Err(RegressError::backend(BACKEND, "cuBLAS is not loaded"));
        };
        let op = |t: bool| {
            if t {
                blas_sys::cublasOperation_t::CUBLAS_OP_T
            } else {
                blas_sys::cublasOperation_t::CUBLAS_OP_N
            }
        };
        let (data, compute) = blas_types(p.dtype)?;
        // f64 scales for f64 data; f32 scales for everything computed in f32.
        let (alpha64, beta64) = (call.alpha, call.beta);
        let (alpha32, beta32) = (call.alpha as f32, call.beta as f32);
        let (alpha, beta): (*const c_void, *const c_void) = if p.dtype == DType::F64 {
            (
                std::ptr::from_ref(&alpha64).cast(),
                std::ptr::from_ref(&beta64).cast(),
            )
        } else {
            (
                std::ptr::from_ref(&alpha32).cast(),
                std::ptr::from_ref(&beta32).cast(),
            )
        };
        let first = self.raw(&p.inputs[1]) as *const c_void;
        let second = self.raw(&p.inputs[0]) as *const c_void;
        let out = self.raw(&p.output) as *mut c_void;
        // Safety: shapes, leading dimensions and strides come from
        // `blas_gemm`, which is checked against the CPU reference; the
        // scale pointers outlive the call (pointer mode is host).
        unsafe {
            blas_result::gemm_strided_batched_ex(
                *blas.handle(),
                op(call.trans_first),
                op(call.trans_second),
                call.m,
                call.n,
                call.k,
                alpha,
                first,
                data,
                call.ld_first,
                call.stride_first,
                second,
                data,
                call.ld_second,
                call.stride_second,
                beta,
                out,
                data,
                call.ldc,
                call.stride_c,
                call.batch,
                compute,
                blas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(failed("cublasGemmStridedBatchedEx"))
    }
}

/// cuBLAS data and compute types. f32 uses `CUBLAS_COMPUTE_32F` (no TF32:
/// that needs `CUBLAS_COMPUTE_32F_FAST_TF32`); f16/bf16 accumulate in f32.
fn blas_types(dtype: DType) -> Result<(blas_sys::cudaDataType, blas_sys::cublasComputeType_t)> {
    use blas_sys::cublasComputeType_t as C;
    use blas_sys::cudaDataType as D;
    Ok(match dtype {
        DType::F32 => (D::CUDA_R_32F, C::CUBLAS_COMPUTE_32F),
        DType::F64 => (D::CUDA_R_64F, C::CUBLAS_COMPUTE_64F),
        DType::F16 => (D::CUDA_R_16F, C::CUBLAS_COMPUTE_32F),
        DType::Bf16 => (D::CUDA_R_16BF, C::CUBLAS_COMPUTE_32F),
        DType::I32 => return Err(RegressError::unsupported(BACKEND, "gemm on i32")),
    })
}

impl Backend for CudaBackend {
    fn name(&self) -> &str {
        BACKEND
    }

    fn device(&self) -> &DeviceIdentity {
        &self.device
    }

    fn prepare(&mut self, op: &OpSpec, dtype: DType, inputs: &[Tensor]) -> Result<()> {
        guarded("preparing the op", || {
            let launch = self.plan(op, dtype)?;
            self.prepared = Some(self.upload(launch, inputs, &op.output_shape()?, dtype)?);
            Ok(())
        })
    }

    fn run(&mut self, iters: u32) -> Result<f64> {
        let Some(mut p) = self.prepared.take() else {
            return Err(RegressError::backend(BACKEND, "run() before prepare()"));
        };
        let result = guarded("running the op", || {
            self.start
                .record(&self.stream)
                .map_err(failed("cuEventRecord"))?;
            for _ in 0..iters {
                self.launch_once(&mut p)?;
            }
            self.end
                .record(&self.stream)
                .map_err(failed("cuEventRecord"))?;
            let ms = self
                .start
                .elapsed_ms(&self.end)
                .map_err(failed("cuEventElapsedTime (a kernel may have faulted)"))?;
            Ok(f64::from(ms) / 1e3)
        });
        self.prepared = Some(p);
        result
    }

    fn output(&mut self) -> Result<Tensor> {
        let Some(p) = &self.prepared else {
            return Err(RegressError::backend(BACKEND, "output() before prepare()"));
        };
        guarded("copying the output back", || {
            let bytes = self
                .stream
                .clone_dtoh(&p.output)
                .map_err(failed("copying the output to the host"))?;
            self.stream
                .synchronize()
                .map_err(failed("cuStreamSynchronize"))?;
            let len = p.out_shape.iter().product::<usize>() * p.dtype.size_bytes();
            Ok(Tensor::from_le_bytes(
                p.dtype,
                p.out_shape.clone(),
                &bytes[..len.min(bytes.len())],
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::compare;

    /// Without a driver (CI, this machine) opening must be a clear
    /// "unavailable", never a panic. With a GPU, gemm and softmax must
    /// match the f64 oracle within the dtype's tolerance.
    #[test]
    #[allow(clippy::print_stderr)]
    fn gemm_and_softmax_match_the_oracle_or_the_backend_says_why_not() -> Result<()> {
        let mut backend = match open() {
            Ok(b) => b,
            Err(RegressError::BackendUnavailable { reason, .. }) => {
                assert!(
                    reason.contains("libcuda")
                        || reason.contains("NVRTC")
                        || reason.contains("no CUDA device"),
                    "{reason}"
                );
                eprintln!("skipped: no CUDA here ({reason})");
                return Ok(());
            }
            Err(other) => return Err(other),
        };
        let cases = [
            OpSpec::Gemm {
                m: 33,
                n: 17,
                k: 65,
                trans_a: true,
                trans_b: false,
                alpha: 1.5,
                beta: 0.5,
            },
            OpSpec::Softmax { rows: 7, cols: 300 },
        ];
        for op in cases {
            for dtype in [DType::F32, DType::F64] {
                let inputs: Vec<Tensor> = op
                    .input_shapes()?
                    .into_iter()
                    .enumerate()
                    .map(|(i, shape)| {
                        let len = shape.iter().product();
                        Tensor::from_f64(
                            dtype,
                            shape,
                            &crate::rng::generate_input(3, i as u64, len, dtype),
                        )
                    })
                    .collect();
                let values: Vec<Vec<f64>> = inputs.iter().map(Tensor::to_f64_vec).collect();
                let oracle =
                    Tensor::from_f64(DType::F64, op.output_shape()?, &op.reference(&values)?);
                backend.prepare(&op, dtype, &inputs)?;
                let seconds = backend.run(3)?;
                assert!(seconds > 0.0);
                let got = backend.output()?;
                let m = compare(
                    &got,
                    &oracle,
                    crate::dtype::Tolerance {
                        rtol: 1e-4,
                        atol: 1e-5,
                    },
                );
                assert_eq!(m.mismatched, 0, "{op:?} {dtype}: {m:?}");
            }
        }
        Ok(())
    }
}
