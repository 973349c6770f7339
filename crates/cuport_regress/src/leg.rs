//! The child side of an op-case leg: generate the inputs, run the op on one
//! backend, and write `output.safetensors` + `timings.json` into the leg's
//! output folder. The parent (`run`) reads them back exactly like an
//! application leg's files, so a crashing vendor library only kills the
//! child.
use std::collections::BTreeMap;
use std::path::Path;

use crate::backend::{self, Perturbation};
use crate::case::{LoadedFile, OpCase};
use crate::error::{RegressError, Result};
use crate::io::timings::{DeviceNote, Timings};
use crate::rng::generate_input;
use crate::sampling::{collect, SampleSource};
use crate::tensor::Tensor;

/// Name of the output tensor and of the timed region an op leg writes.
pub const OUTPUT_NAME: &str = "output";
pub const REGION_NAME: &str = "op";
/// Written instead of outputs when the backend cannot run here, or cannot
/// run this op or dtype; holds the reason.
pub const UNAVAILABLE_FILE: &str = "unavailable.txt";
/// Written by an op leg: full device identity.
pub const DEVICE_FILE: &str = "device.json";

/// The inputs of a case, identical for every leg and for the oracle.
pub fn inputs(case: &OpCase, seed: u64) -> Result<Vec<Tensor>> {
    let shapes = case.op.input_shapes()?;
    Ok(shapes
        .into_iter()
        .enumerate()
        .map(|(i, shape)| {
            let len = shape.iter().product();
            Tensor::from_f64(
                case.dtype,
                shape,
                &generate_input(seed, i as u64, len, case.dtype),
            )
        })
        .collect())
}

struct Timed<'a>(&'a mut dyn backend::Backend);

impl SampleSource for Timed<'_> {
    fn run(&mut self, iters: u32) -> Result<f64> {
        self.0.run(iters)
    }
}

/// Run `case` from `file` on `backend_name`, writing results into `out`.
/// An unavailable backend writes [`UNAVAILABLE_FILE`] and succeeds.
pub fn run_op_leg(
    file: &LoadedFile,
    case_name: &str,
    backend_name: &str,
    perturb: Option<Perturbation>,
    out: &Path,
) -> Result<()> {
    let case = file
        .file
        .cases
        .iter()
        .find(|c| c.name == case_name)
        .ok_or_else(|| RegressError::Case {
            path: file.path.clone(),
            message: format!("no [[case]] named `{case_name}`"),
        })?;
    let inputs = inputs(case, file.seed_of(case))?;
    let opened = backend::open(backend_name, perturb)
        .and_then(|mut b| b.prepare(&case.op, case.dtype, &inputs).map(|()| b));
    let mut backend = match opened {
        Ok(b) => b,
        Err(e @ (RegressError::BackendUnavailable { .. } | RegressError::Unsupported { .. })) => {
            let path = out.join(UNAVAILABLE_FILE);
            return std::fs::write(&path, e.to_string()).map_err(|e| RegressError::io(path, e));
        }
        Err(e) => return Err(e),
    };
    let settings = case.perf.or(&file.file.defaults.perf);
    let samples = collect(&mut Timed(backend.as_mut()), &settings.sampling())?;
    let output = backend.output()?;
    let device = backend.device().clone();
    write_results(out, output, samples, &device)
}

fn write_results(
    out: &Path,
    output: Tensor,
    samples: Vec<f64>,
    device: &crate::device::DeviceIdentity,
) -> Result<()> {
    let mut tensors = BTreeMap::new();
    tensors.insert(OUTPUT_NAME.to_owned(), output);
    crate::io::safetensors::write(&out.join("output.safetensors"), &tensors)?;
    let timings = Timings {
        regions: BTreeMap::from([(REGION_NAME.to_owned(), samples)]),
        unit: Some("s".into()),
        device: Some(DeviceNote {
            model: Some(device.model.clone()),
            driver: device.driver.clone(),
            runtime: device.runtime.clone(),
        }),
    };
    crate::io::timings::write(&out.join("timings.json"), &timings)?;
    let path = out.join(DEVICE_FILE);
    let json = serde_json::to_string_pretty(device)
        .map_err(|e| RegressError::format(&path, e.to_string()))?;
    std::fs::write(&path, json).map_err(|e| RegressError::io(path, e))
}
