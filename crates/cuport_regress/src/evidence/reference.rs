//! The reference side: writes `manifest.json` (tensors, and the rule's
//! operator calls with every attribute evaluated for the case), runs
//! `reference.py` with ONNX Runtime (or JAX, for operators ONNX has no
//! form for), and compares the kernel's outputs with
//! the reference's through [`crate::metrics::compare`].
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::cases::Case;
use super::runner::tensor_shape;
use super::{expr, EvidenceError, KernelSpec, OutputEvidence, ParamKind, Toolchain};
use crate::dtype::DType;
use crate::metrics::compare;
use crate::policy::{ratio_failures, tolerance_failures, AccuracyConfig, PolicyKind};
use crate::tensor::Tensor;

const SCRIPT: &str = include_str!("reference.py");
/// What `reference.py` writes in a case directory it could not compute:
/// the last line it printed, or the exception.
const ERROR_FILE: &str = "reference.error";

/// What the reference run wrote: per output, the float32 reference leg
/// and, where the reference ran in double, the f64 oracle.
pub(super) struct ReferenceRun {
    pub name: String,
    pub outputs: BTreeMap<String, (String, Option<String>)>,
}

/// Writes the case's manifest (before [`run`]).
pub(super) fn write_manifest(
    spec: &KernelSpec,
    case: &Case,
    dir: &Path,
) -> Result<(), EvidenceError> {
    let path = dir.join("manifest.json");
    std::fs::write(&path, manifest(spec, case, dir)?.to_string()).map_err(EvidenceError::io(path))
}

/// Runs the reference once over every case directory (of every kernel).
/// A case the reference cannot compute writes `reference.error` and the
/// others go on; only a failure of the script as a whole (a missing
/// package) is an error here.
pub(super) fn run(dirs: &[std::path::PathBuf], tools: &Toolchain) -> Result<(), EvidenceError> {
    let Some(first) = dirs.first() else {
        return Ok(());
    };
    let script = first.with_file_name("reference.py");
    std::fs::write(&script, SCRIPT).map_err(EvidenceError::io(&script))?;
    let out = Command::new(&tools.python)
        .arg(&script)
        .args(dirs)
        .output()
        .map_err(EvidenceError::io(&tools.python))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(EvidenceError::Reference(
            stderr.lines().last().unwrap_or("no message").to_string(),
        ));
    }
    Ok(())
}

/// What the reference wrote for one case.
pub(super) fn read_report(dir: &Path) -> Result<ReferenceRun, EvidenceError> {
    let report_path = dir.join("reference.json");
    if let Ok(why) = std::fs::read_to_string(dir.join(ERROR_FILE)) {
        return Err(EvidenceError::Reference(why.trim().to_string()));
    }
    let text = std::fs::read_to_string(&report_path).map_err(EvidenceError::io(&report_path))?;
    let report: Value = serde_json::from_str(&text)
        .map_err(|e| EvidenceError::Reference(format!("reference.json: {e}")))?;
    let outputs = report["outputs"]
        .as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| {
                    let leg = v["f32"].as_str()?.to_string();
                    Some((k.clone(), (leg, v["f64"].as_str().map(str::to_string))))
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ReferenceRun {
        name: report["reference"]
            .as_str()
            .unwrap_or("onnxruntime")
            .to_string(),
        outputs,
    })
}

/// The manifest; writes the value tensors' files into `dir` as it goes.
fn manifest(spec: &KernelSpec, case: &Case, dir: &Path) -> Result<Value, EvidenceError> {
    let mut tensors = serde_json::Map::new();
    for p in &spec.params {
        if case.is_absent(&p.name) {
            continue;
        }
        if let ParamKind::Tensor {
            role, shape, dtype, ..
        } = &p.kind
        {
            tensors.insert(
                p.name.clone(),
                json!({ "role": role.id(), "shape": tensor_shape(shape, case)?, "dtype": dtype.name(), "file": format!("{}.bin", p.name) }),
            );
        }
    }
    for t in &spec.values {
        let number = expr::eval(&t.value, &case.scalars)?;
        let file = format!("{}.bin", t.name);
        let bytes = match t.dtype {
            DType::I32 => (number as i32).to_le_bytes().to_vec(),
            _ => (number as f32).to_le_bytes().to_vec(),
        };
        let path = dir.join(&file);
        std::fs::write(&path, bytes).map_err(EvidenceError::io(path))?;
        tensors.insert(
            t.name.clone(),
            json!({ "role": "input", "shape": [1], "dtype": t.dtype.name(), "file": file }),
        );
    }
    for t in &spec.scratch {
        // Written by one call and read by the next: an output of the
        // reference's graph that nothing compares.
        tensors.insert(
            t.name.clone(),
            json!({ "role": "output", "shape": tensor_shape(&t.shape, case)?, "dtype": t.dtype, "scratch": true }),
        );
    }
    let mut views = serde_json::Map::new();
    for v in &spec.views {
        if case.is_absent(&v.param) {
            continue;
        }
        views.insert(
            v.name.clone(),
            json!({
                "of": v.param,
                "role": v.role.id(),
                "shape": tensor_shape(&v.shape, case)?,
                "strides": tensor_shape(&v.strides, case)?,
                "offset": expr::eval(&v.offset, &case.scalars)?.max(0.0) as usize,
            }),
        );
    }
    let mut calls = Vec::new();
    for call in &spec.calls {
        if call.when.as_deref().is_some_and(|w| case.is_absent(w))
            || call.unless.as_deref().is_some_and(|w| !case.is_absent(w))
        {
            continue;
        }
        let mut args = serde_json::Map::new();
        for (name, value) in &call.args {
            let bound =
                if tensors.contains_key(value.as_str()) || views.contains_key(value.as_str()) {
                    json!({ "tensor": value })
                } else if let Some(text) = string_literal(value) {
                    json!({ "value": text })
                } else {
                    attribute(value, case)?
                };
            args.insert(name.clone(), bound);
        }
        calls.push(json!({ "operator": call.operator, "args": args }));
    }
    Ok(json!({ "tensors": tensors, "views": views, "calls": calls }))
}

/// The text of a string attribute written `'tanh'` (aclnnGeluBackwardV2's
/// `char* approximate`).
fn string_literal(value: &str) -> Option<&str> {
    value.trim().strip_prefix('\'')?.strip_suffix('\'')
}

/// An attribute's value: a number, a list of numbers, or an element type
/// (`float`, `ACL_FLOAT`: aclnnCast's `dtype`), passed by name.
fn attribute(value: &str, case: &Case) -> Result<Value, EvidenceError> {
    if let Some(dtype) = element_type(value) {
        return Ok(json!({ "dtype": dtype }));
    }
    let values = expr::eval_list(value, &case.scalars)?;
    if value.trim().starts_with('[') {
        Ok(json!({ "value": values }))
    } else {
        Ok(json!({ "value": values.first().copied().unwrap_or(0.0) }))
    }
}

/// The manifest's name for an element type written as a C type or its
/// `aclDataType` member; None for anything else.
fn element_type(value: &str) -> Option<&'static str> {
    match value.trim() {
        "float" | "ACL_FLOAT" => Some("f32"),
        "double" | "ACL_DOUBLE" => Some("f64"),
        "int" | "ACL_INT32" => Some("i32"),
        "int64_t" | "ACL_INT64" => Some("i64"),
        "half" | "__half" | "ACL_FLOAT16" => Some("f16"),
        "__nv_bfloat16" | "ACL_BF16" => Some("bf16"),
        _ => None,
    }
}

/// Each output tensor of the kernel against the reference, judged by the
/// harness's policies: with an f64 oracle, the ratio policy (the kernel
/// may be at most twice as far from the oracle as ONNX Runtime's float32
/// result, plus the floor); without one, (rtol, atol) against the float32
/// reference. An output with K times fewer elements than the largest input
/// is a reduction over K values, and two correct float32 summations in
/// different orders differ by up to the textbook bound (K-1)·u·max|x|
/// (u = 2^-24); that bound is added to the floor (atol), so summation order
/// is not taken for a wrong operator.
pub(super) fn compare_case(
    spec: &KernelSpec,
    case: &Case,
    dir: &Path,
    reference: &ReferenceRun,
) -> Result<Vec<OutputEvidence>, EvidenceError> {
    let inputs = read_inputs(spec, case, dir)?;
    let mut checked = Vec::new();
    for p in &spec.params {
        let ParamKind::Tensor {
            role,
            shape,
            dtype,
            partial,
            ..
        } = &p.kind
        else {
            continue;
        };
        if !role.is_written() || case.is_absent(&p.name) {
            continue;
        }
        let Some((leg_file, oracle_file)) = reference.outputs.get(&p.name) else {
            continue;
        };
        let shape = tensor_shape(shape, case)?;
        // The kernel's output in its element type (an index output is
        // int32); the reference writes every leg as float32.
        let actual = as_f32(read(
            &dir.join(format!("{}.out.bin", p.name)),
            &shape,
            *dtype,
        )?);
        let leg = read(&dir.join(leg_file), &shape, DType::F32)?;
        let oracle = match oracle_file {
            Some(f) => Some(read(&dir.join(f), &shape, DType::F64)?),
            None => None,
        };
        let slack = summation_slack(&inputs, actual.len());
        let (actual, leg, oracle) = match partial {
            true => written_part(&p.name, actual, leg, oracle)?,
            false => (actual, leg, oracle),
        };
        checked.push(judge(&p.name, &actual, &leg, oracle.as_ref(), slack));
    }
    if checked.is_empty() {
        return Err(EvidenceError::Unsupported(
            "the reference computes none of the kernel's outputs".into(),
        ));
    }
    Ok(checked)
}

/// The elements of a partial output the kernel wrote (it starts as NaN),
/// in all three tensors; an output the kernel left untouched is an error,
/// so a kernel that writes nothing cannot pass.
fn written_part(
    name: &str,
    actual: Tensor,
    leg: Tensor,
    oracle: Option<Tensor>,
) -> Result<(Tensor, Tensor, Option<Tensor>), EvidenceError> {
    let values = actual.to_f64_vec();
    let keep: Vec<usize> = (0..values.len()).filter(|&i| !values[i].is_nan()).collect();
    if keep.is_empty() {
        return Err(EvidenceError::Unsupported(format!(
            "the kernel wrote no element of the partial output `{name}`"
        )));
    }
    let pick = |t: &Tensor| {
        let all = t.to_f64_vec();
        let kept: Vec<f64> = keep
            .iter()
            .map(|&i| all.get(i).copied().unwrap_or(f64::NAN))
            .collect();
        Tensor::from_f64(t.dtype(), vec![kept.len()], &kept)
    };
    Ok((pick(&actual), pick(&leg), oracle.as_ref().map(pick)))
}

/// The float inputs of the case, as the kernel read them.
fn read_inputs(spec: &KernelSpec, case: &Case, dir: &Path) -> Result<Vec<Tensor>, EvidenceError> {
    let mut inputs = Vec::new();
    for p in &spec.params {
        if let ParamKind::Tensor {
            role,
            shape,
            dtype: DType::F32,
            ..
        } = &p.kind
        {
            if !role.is_read() || case.is_absent(&p.name) {
                continue;
            }
            let shape = tensor_shape(shape, case)?;
            inputs.push(read(
                &dir.join(format!("{}.bin", p.name)),
                &shape,
                DType::F32,
            )?);
        }
    }
    Ok(inputs)
}

/// (K-1)·u·max|x| for an output of `elements` elements, K being how many
/// input elements the largest input has per output element.
fn summation_slack(inputs: &[Tensor], elements: usize) -> f64 {
    let largest = inputs.iter().map(Tensor::len).max().unwrap_or(0);
    let k = (largest / elements.max(1)).max(1);
    let max_abs = inputs
        .iter()
        .flat_map(Tensor::to_f64_vec)
        .filter(|v| v.is_finite())
        .fold(0.0, |m: f64, v| m.max(v.abs()));
    (k - 1) as f64 * f64::from(f32::EPSILON) / 2.0 * max_abs
}

fn judge(
    name: &str,
    actual: &Tensor,
    leg: &Tensor,
    oracle: Option<&Tensor>,
    slack: f64,
) -> OutputEvidence {
    let mut tolerance = DType::F32.default_tolerance();
    tolerance.atol += slack;
    let config = AccuracyConfig {
        atol: Some(tolerance.atol),
        ..AccuracyConfig::default()
    };
    let vs_leg = compare(actual, leg, tolerance);
    let (policy, failures) = match oracle {
        Some(oracle) => {
            let policy = config.resolve(DType::F32, PolicyKind::Ratio);
            let kernel = compare(actual, oracle, tolerance);
            let reference = compare(leg, oracle, tolerance);
            ("ratio", ratio_failures(&kernel, &reference, &policy))
        }
        None => {
            let policy = config.resolve(DType::F32, PolicyKind::Tolerance);
            ("tolerance", tolerance_failures(&vs_leg, &policy))
        }
    };
    OutputEvidence {
        tensor: name.to_string(),
        elements: vs_leg.elements,
        max_abs: vs_leg.max_abs,
        max_rel: vs_leg.max_rel,
        policy: policy.to_string(),
        atol: tolerance.atol,
        failures,
    }
}

/// An integer output as float32 values (indices below 2^24 are exact), so
/// the comparison sees the same element type as the reference's leg.
fn as_f32(tensor: Tensor) -> Tensor {
    if tensor.dtype() == DType::F32 {
        return tensor;
    }
    Tensor::from_f64(DType::F32, tensor.shape.clone(), &tensor.to_f64_vec())
}

fn read(path: &Path, shape: &[usize], dtype: DType) -> Result<Tensor, EvidenceError> {
    let bytes = std::fs::read(path).map_err(EvidenceError::io(path))?;
    // A reference output of another extent (ONNX keeps reduced axes) is
    // compared by element count; compare() records a true shape mismatch.
    let count = bytes.len() / dtype.size_bytes();
    let expected: usize = shape.iter().product();
    let shape = if count == expected {
        shape.to_vec()
    } else {
        vec![count]
    };
    Ok(Tensor::from_le_bytes(dtype, shape, &bytes))
}
