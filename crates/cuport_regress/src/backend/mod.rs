//! Backends run one op case: take inputs, produce the output, time it.
//!
//! `cpu` is always there; `cuda`, `hip` and `ascend` load their vendor
//! libraries at run time and report [`RegressError::BackendUnavailable`]
//! (a skipped leg, not a crash) when the library or device is missing.
mod ascend;
pub(crate) mod blas;
mod cpu;
mod cuda;
mod dl;
mod hip;

use crate::device::DeviceIdentity;
use crate::dtype::DType;
use crate::error::{RegressError, Result};
use crate::ops::OpSpec;
use crate::tensor::Tensor;

pub use ascend::CUBE_MATH_ENV as ASCEND_CUBE_MATH_ENV;
pub use cpu::{CpuBackend, Perturbation};

/// A device that can run op cases.
pub trait Backend {
    fn name(&self) -> &str;
    fn device(&self) -> &DeviceIdentity;
    /// Upload inputs and set up the op; later calls reuse them.
    fn prepare(&mut self, op: &OpSpec, dtype: DType, inputs: &[Tensor]) -> Result<()>;
    /// Run the prepared op `iters` times back to back; seconds elapsed
    /// (device events where the backend has them).
    fn run(&mut self, iters: u32) -> Result<f64>;
    /// The output of the last run, on the host.
    fn output(&mut self) -> Result<Tensor>;
}

/// Open a backend by name. `perturb` is a test seam honoured only by `cpu`.
pub fn open(name: &str, perturb: Option<Perturbation>) -> Result<Box<dyn Backend>> {
    match name {
        "cpu" => Ok(Box::new(CpuBackend::new(perturb.unwrap_or_default()))),
        "cuda" => cuda::open(),
        "hip" => hip::open(),
        "ascend" => ascend::open(),
        other => Err(RegressError::BackendUnavailable {
            backend: other.to_owned(),
            reason: format!(
                "unknown backend; use one of {}",
                crate::case::KNOWN_BACKENDS.join(", ")
            ),
        }),
    }
}
