//! The `cpu` backend: the f64 reference implementation, rounded to the
//! case's dtype. It is the oracle's twin, so its own error is only the final
//! rounding; a test-only [`Perturbation`] makes it wrong or slow on purpose.
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::Backend;
use crate::device::DeviceIdentity;
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::OpSpec;
use crate::tensor::Tensor;

/// Deliberate damage, for testing that the gate catches it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Perturbation {
    /// Multiply every output by `1 + rel_error`.
    pub rel_error: f64,
    /// Stretch each run to `slowdown` times its duration.
    pub slowdown: f64,
    /// Ask for this many bytes at once in `prepare` (0: don't), as a
    /// backend running out of host memory would: the allocation fails and
    /// the leg aborts, which must fail only its case.
    #[serde(default)]
    pub alloc_bytes: u64,
}

impl Default for Perturbation {
    fn default() -> Self {
        Perturbation {
            rel_error: 0.0,
            slowdown: 1.0,
            alloc_bytes: 0,
        }
    }
}

impl Perturbation {
    /// Parse `rel=1e-3,slow=1.5,alloc=BYTES` (every key optional).
    pub fn parse(text: &str) -> Option<Perturbation> {
        let mut p = Perturbation::default();
        for part in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = part.split_once('=')?;
            let value: f64 = value.trim().parse().ok()?;
            match key.trim() {
                "rel" => p.rel_error = value,
                "slow" => p.slowdown = value,
                "alloc" if value >= 0.0 => p.alloc_bytes = value as u64,
                _ => return None,
            }
        }
        Some(p)
    }
}

/// An op ready to run: spec, dtype, inputs as f64, output shape.
type Prepared = (OpSpec, DType, Vec<Vec<f64>>, Vec<usize>);

pub struct CpuBackend {
    device: DeviceIdentity,
    perturb: Perturbation,
    prepared: Option<Prepared>,
    last: Vec<f64>,
}

impl CpuBackend {
    pub fn new(perturb: Perturbation) -> CpuBackend {
        CpuBackend {
            device: DeviceIdentity::this_cpu("cpu"),
            perturb,
            prepared: None,
            last: Vec::new(),
        }
    }

    fn run_once(&mut self) -> Result<()> {
        let Some((op, dtype, inputs, _)) = &self.prepared else {
            return Err(crate::error::RegressError::Backend {
                backend: "cpu".into(),
                message: "run() before prepare()".into(),
            });
        };
        let scale = 1.0 + self.perturb.rel_error;
        self.last = op
            .reference(inputs)?
            .into_iter()
            .map(|v| dtype.round(v * scale))
            .collect();
        Ok(())
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> &str {
        "cpu"
    }

    fn device(&self) -> &DeviceIdentity {
        &self.device
    }

    fn prepare(&mut self, op: &OpSpec, dtype: DType, inputs: &[Tensor]) -> Result<()> {
        if self.perturb.alloc_bytes > 0 {
            // Capped below isize::MAX so the request reaches the allocator
            // (and fails there) instead of panicking on capacity overflow.
            let bytes = usize::try_from(self.perturb.alloc_bytes)
                .unwrap_or(usize::MAX)
                .min(isize::MAX as usize / 2);
            std::hint::black_box(Vec::<u8>::with_capacity(bytes));
        }
        let values = inputs.iter().map(Tensor::to_f64_vec).collect();
        self.prepared = Some((op.clone(), dtype, values, op.output_shape()?));
        Ok(())
    }

    fn run(&mut self, iters: u32) -> Result<f64> {
        let start = Instant::now();
        for _ in 0..iters {
            self.run_once()?;
        }
        let took = start.elapsed();
        if self.perturb.slowdown > 1.0 {
            std::thread::sleep(took.mul_f64(self.perturb.slowdown - 1.0));
        }
        Ok(start.elapsed().as_secs_f64())
    }

    fn output(&mut self) -> Result<Tensor> {
        if self.last.is_empty() {
            self.run_once()?;
        }
        match &self.prepared {
            Some((_, dtype, _, shape)) => Ok(Tensor::from_f64(*dtype, shape.clone(), &self.last)),
            None => Ok(Tensor::from_f64(DType::F32, vec![0], &[])),
        }
    }
}
