//! The reference side: writes `manifest.json` (tensors, and the rule's
//! operator calls with every attribute evaluated for the case), runs
//! `reference.py` with ONNX Runtime, and compares the kernel's outputs with
//! the reference's through [`crate::metrics::compare`].
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::cases::Case;
use super::runner::tensor_shape;
use super::{expr, EvidenceError, KernelSpec, OutputEvidence, ParamKind, Toolchain};
use crate::dtype::{DType, Tolerance};
use crate::metrics::compare;
use crate::tensor::Tensor;

const SCRIPT: &str = include_str!("reference.py");

/// What the reference run wrote.
pub(super) struct ReferenceRun {
    pub name: String,
    pub outputs: BTreeMap<String, String>,
}

pub(super) fn run(
    spec: &KernelSpec,
    case: &Case,
    dir: &Path,
    tools: &Toolchain,
) -> Result<ReferenceRun, EvidenceError> {
    let manifest = manifest(spec, case)?;
    let path = dir.join("manifest.json");
    std::fs::write(&path, manifest.to_string()).map_err(EvidenceError::io(&path))?;
    let script = dir.join("reference.py");
    std::fs::write(&script, SCRIPT).map_err(EvidenceError::io(&script))?;
    let out = Command::new(&tools.python)
        .arg(&script)
        .arg(dir)
        .output()
        .map_err(EvidenceError::io(&tools.python))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(EvidenceError::Reference(
            stderr.lines().last().unwrap_or("no message").to_string(),
        ));
    }
    let report_path = dir.join("reference.json");
    let text = std::fs::read_to_string(&report_path).map_err(EvidenceError::io(&report_path))?;
    let report: Value = serde_json::from_str(&text)
        .map_err(|e| EvidenceError::Reference(format!("reference.json: {e}")))?;
    let outputs = report["outputs"]
        .as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default();
    Ok(ReferenceRun {
        name: report["reference"].as_str().unwrap_or("onnxruntime").to_string(),
        outputs,
    })
}

fn manifest(spec: &KernelSpec, case: &Case) -> Result<Value, EvidenceError> {
    let mut tensors = serde_json::Map::new();
    for p in &spec.params {
        if let ParamKind::Tensor { output, shape, dtype } = &p.kind {
            let role = if *output { "output" } else { "input" };
            tensors.insert(
                p.name.clone(),
                json!({ "role": role, "shape": tensor_shape(shape, case)?, "dtype": dtype.name(), "file": format!("{}.bin", p.name) }),
            );
        }
    }
    let mut calls = Vec::new();
    for call in &spec.calls {
        let mut args = serde_json::Map::new();
        for (name, value) in &call.args {
            let bound = if tensors.contains_key(value.as_str()) {
                json!({ "tensor": value })
            } else {
                attribute(value, case)?
            };
            args.insert(name.clone(), bound);
        }
        calls.push(json!({ "operator": call.operator, "args": args }));
    }
    Ok(json!({ "tensors": tensors, "calls": calls }))
}

/// An attribute's value: a number or a list of numbers.
fn attribute(value: &str, case: &Case) -> Result<Value, EvidenceError> {
    let values = expr::eval_list(value, &case.scalars)?;
    if value.trim().starts_with('[') {
        Ok(json!({ "value": values }))
    } else {
        Ok(json!({ "value": values.first().copied().unwrap_or(0.0) }))
    }
}

/// Each output tensor of the kernel against the reference's.
pub(super) fn compare_case(
    spec: &KernelSpec,
    case: &Case,
    dir: &Path,
    reference: &ReferenceRun,
    tolerance: Tolerance,
) -> Result<Vec<OutputEvidence>, EvidenceError> {
    let mut checked = Vec::new();
    for p in &spec.params {
        let ParamKind::Tensor { output: true, shape, .. } = &p.kind else {
            continue;
        };
        let Some(reference_file) = reference.outputs.get(&p.name) else {
            continue;
        };
        let shape = tensor_shape(shape, case)?;
        let actual = read(&dir.join(format!("{}.out.bin", p.name)), &shape)?;
        let expected = read(&dir.join(reference_file), &shape)?;
        let m = compare(&actual, &expected, tolerance);
        let shape_wrong = u64::from(m.shape_mismatch.is_some());
        checked.push(OutputEvidence {
            tensor: p.name.clone(),
            elements: m.elements,
            max_abs: m.max_abs,
            max_rel: m.max_rel,
            mismatched: m.mismatched + m.nonfinite_mismatch + shape_wrong,
        });
    }
    if checked.is_empty() {
        return Err(EvidenceError::Unsupported(
            "the reference computes none of the kernel's outputs".into(),
        ));
    }
    Ok(checked)
}

fn read(path: &Path, shape: &[usize]) -> Result<Tensor, EvidenceError> {
    let bytes = std::fs::read(path).map_err(EvidenceError::io(path))?;
    // A reference output of another extent (ONNX keeps reduced axes) is
    // compared by element count; compare() records a true shape mismatch.
    let count = bytes.len() / 4;
    let expected: usize = shape.iter().product();
    let shape = if count == expected {
        shape.to_vec()
    } else {
        vec![count]
    };
    Ok(Tensor::from_le_bytes(DType::F32, shape, &bytes))
}
