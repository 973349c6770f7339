//! Evidence by execution (issue 27 item 3): a kernel rule says a CUDA kernel
//! computes what some vendor operator calls compute; this module checks the
//! claim by running the ORIGINAL kernel on the CPU (the fiber runner of
//! `cuda_cpu.h`) on generated inputs and comparing its outputs, with the
//! harness's [`compare`](crate::metrics::compare) and tolerances, against
//! ONNX Runtime's outputs for the same operators (`reference.py`). The
//! runner executes; the reference is an implementation written elsewhere.
//!
//! Nothing here runs unless a caller asks: it compiles and runs code from
//! the scanned tree.
mod cases;
pub mod expr;
mod launch;
mod reference;
mod runner;
mod source;
mod toolchain;

use std::collections::BTreeMap;
use std::path::PathBuf;

use rayon::prelude::*;
use serde::Serialize;

use crate::dtype::{DType, Tolerance};

pub use cases::{cases_for, Case};
pub use launch::{launch_from_source, LaunchSpec};

pub use toolchain::{Runner, Toolchain};

/// Why evidence could not be produced or a step failed.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error("`{tool}` is not usable: {why}; {fix}")]
    MissingTool {
        tool: String,
        why: String,
        fix: String,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("expression `{expr}`: {message}")]
    Expr { expr: String, message: String },
    #[error("{0}")]
    Unsupported(String),
    #[error("the kernel's file does not compile for the CPU runner (first error: {0})")]
    Compile(String),
    #[error("the kernel failed on case `{case}`: {why}")]
    Run { case: String, why: String },
    #[error("the reference failed: {0}")]
    Reference(String),
}

impl EvidenceError {
    fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> EvidenceError {
        let path = path.into();
        move |source| EvidenceError::Io { path, source }
    }
}

/// What a kernel rule claims, in the runner's terms.
#[derive(Debug, Clone)]
pub struct KernelSpec {
    /// The CUDA file that defines the kernel.
    pub file: PathBuf,
    pub kernel: String,
    /// Every parameter of the kernel, in order.
    pub params: Vec<ParamSpec>,
    /// The operator calls with their arguments: a tensor's parameter name
    /// or an expression over the kernel's parameters.
    pub calls: Vec<CallSpec>,
    pub launch: LaunchSpec,
    /// Strided views of tensor parameters that calls bind by name; such a
    /// parameter's shape is then the one-dimensional extent its views
    /// cover, and the kernel reads and writes that buffer.
    pub views: Vec<ViewSpec>,
    /// Sizes the kernel does not take as parameters but the shapes and
    /// the launch use (a rule's launch values): generated like the size
    /// parameters, never passed to the kernel.
    pub launch_values: Vec<String>,
    /// Memory the operator calls use between them (a rule's scratch
    /// tensors): computed by the reference, never compared.
    pub scratch: Vec<ScratchSpec>,
    /// One-element input tensors holding a host value (a rule's `value`
    /// tensors): written for the reference, never passed to the kernel.
    pub values: Vec<ValueSpec>,
    /// Values given to parameters or launch values instead of generated
    /// ones, as expressions over the others (a rule's `case-values`).
    pub case_values: BTreeMap<String, String>,
    /// Sizes the kernel handles only in whole tiles: each generated value
    /// is a number of tiles of this many elements.
    pub size_multiples: BTreeMap<String, u64>,
}

impl KernelSpec {
    /// The tensor parameters the kernel writes (the runner saves each to
    /// `<name>.out.bin`), with their element types.
    fn written_tensors(&self) -> impl Iterator<Item = (&str, DType)> {
        self.params.iter().filter_map(|p| match p.kind {
            ParamKind::Tensor { role, dtype, .. } if role.is_written() => {
                Some((p.name.as_str(), dtype))
            }
            _ => None,
        })
    }
}

/// A strided view of a tensor parameter (a slice of an interleaved buffer,
/// a transposed matrix), as a `[[kernel]]` tensor with `strides` or
/// `offset` declares it.
#[derive(Debug, Clone)]
pub struct ViewSpec {
    /// The name calls bind it by.
    pub name: String,
    /// The parameter whose buffer it views.
    pub param: String,
    pub role: TensorRole,
    /// Extents, element strides and element offset: expressions over the
    /// kernel's parameters.
    pub shape: String,
    pub strides: String,
    pub offset: String,
}

/// A one-element tensor holding `value`, an expression over the case's
/// values.
#[derive(Debug, Clone)]
pub struct ValueSpec {
    pub name: String,
    pub value: String,
    pub dtype: DType,
}

/// A scratch tensor: shape over the case's sizes, element type.
#[derive(Debug, Clone)]
pub struct ScratchSpec {
    pub name: String,
    pub shape: String,
    /// The manifest's element type name (`f32`, `i32`, `bool`: a mask the
    /// calls make).
    pub dtype: String,
}

#[derive(Debug, Clone)]
pub struct ParamSpec {
    pub name: String,
    /// The C type as declared (`const float*`, `int`).
    pub c_type: String,
    pub kind: ParamKind,
}

#[derive(Debug, Clone)]
pub enum ParamKind {
    /// A pointer the rule declares as a tensor of this shape expression.
    Tensor {
        role: TensorRole,
        shape: String,
        dtype: DType,
        /// The kernel accepts a null pointer (one extra case passes it).
        optional: bool,
        /// The kernel writes only part of it: only the elements it wrote
        /// (no longer NaN) are compared.
        partial: bool,
        /// Drawn with zeros above the diagonal of its last two axes.
        lower_triangular: bool,
    },
    /// A value parameter: a size when tensor shapes use it.
    Scalar,
}

/// What the kernel does with a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorRole {
    /// Read only: generated values in, nothing compared.
    Input,
    /// Written only: starts as NaN, compared with the reference.
    Output,
    /// Read and updated in place (an optimizer's parameters): generated
    /// values in, the updated values compared with the reference.
    Inout,
}

impl TensorRole {
    /// Whether the kernel reads the generated values.
    pub fn is_read(self) -> bool {
        matches!(self, TensorRole::Input | TensorRole::Inout)
    }

    /// Whether the kernel's final values are compared.
    pub fn is_written(self) -> bool {
        matches!(self, TensorRole::Output | TensorRole::Inout)
    }

    /// The name in the reference manifest.
    pub fn id(self) -> &'static str {
        match self {
            TensorRole::Input => "input",
            TensorRole::Output => "output",
            TensorRole::Inout => "inout",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CallSpec {
    pub operator: String,
    pub args: BTreeMap<String, String>,
    /// The optional parameter that must be present for the call to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// The optional parameter that must be null for the call to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unless: Option<String>,
}

/// The outcome for one kernel rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every case matched the reference within the tolerance.
    Confirmed,
    /// A case did not match: the rule does not describe the kernel.
    Refuted,
    /// No comparison was possible; `why` says what stopped it.
    NotRun,
}

/// The evidence for one kernel rule, as written into the report.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub verdict: Verdict,
    /// Why: the first failing case or what stopped the run.
    pub why: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    pub runner: String,
    pub tolerance: Tolerance,
    pub launch: String,
    pub max_abs: f64,
    pub max_rel: f64,
    pub cases: Vec<CaseEvidence>,
    /// Outputs of a refuted case that the kernel itself computes
    /// differently when the threads of a block run in the opposite order
    /// (`losses`: 80 of 260 elements): a data race in the kernel.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schedule_dependent: Vec<String>,
}

/// One generated case and how its outputs compared.
#[derive(Debug, Clone, Serialize)]
pub struct CaseEvidence {
    pub name: String,
    pub sizes: BTreeMap<String, i64>,
    pub values: String,
    pub outputs: Vec<OutputEvidence>,
    pub passed: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct OutputEvidence {
    pub tensor: String,
    pub elements: u64,
    /// Against ONNX Runtime's float32 output.
    pub max_abs: f64,
    pub max_rel: f64,
    /// The harness policy that judged it: `ratio` (with an f64 oracle) or
    /// `tolerance`.
    pub policy: String,
    /// The absolute slack used (the floor of the ratio policy): float32's
    /// atol plus the summation bound of a reduction.
    pub atol: f64,
    /// What the policy found wrong; empty when the output passed.
    pub failures: Vec<String>,
}

/// The name the report gives the runner.
pub const RUNNER: &str = "cuport CPU fiber runner (g++; threads of a block as ucontext fibers)";

/// Runs the evidence for one kernel. Failures to run are a `NotRun`
/// verdict with the reason, never an error: one kernel that cannot run
/// must not stop the others. (A missing tool is checked once, before, by
/// [`Toolchain::check`].)
pub fn verify(spec: &KernelSpec, tools: &Toolchain) -> Evidence {
    let mut all = verify_all(std::slice::from_ref(spec), tools);
    all.pop()
        .unwrap_or_else(|| not_run(tools, spec, "no evidence".into()))
}

/// Runs the evidence for every kernel: the runners are built and run in
/// parallel, and one reference process computes every case of every
/// kernel (its start-up, the imports of onnxruntime or JAX, takes longer
/// than most kernels' cases). The results are in the order of `specs`.
pub fn verify_all(specs: &[KernelSpec], tools: &Toolchain) -> Vec<Evidence> {
    let prepared: Vec<Result<Prepared, EvidenceError>> =
        specs.par_iter().map(|spec| prepare(spec, tools)).collect();
    let dirs: Vec<PathBuf> = prepared
        .iter()
        .flatten()
        .flat_map(|p| p.dirs.iter().cloned())
        .collect();
    let reference = reference::run(&dirs, tools).map_err(|e| e.to_string());
    specs
        .par_iter()
        .zip(prepared)
        .map(|(spec, prepared)| {
            let mut evidence = not_run(tools, spec, String::new());
            let checked = match (prepared, &reference) {
                (Ok(p), Ok(())) => judge(spec, &p, tools, &mut evidence),
                (Err(err), _) => Err(err),
                (Ok(_), Err(why)) => Err(EvidenceError::Reference(why.clone())),
            };
            if let Err(err) = checked {
                evidence.verdict = Verdict::NotRun;
                evidence.why = err.to_string();
            }
            evidence
        })
        .collect()
}

/// Evidence that nothing ran yet, or that nothing could (`why`).
fn not_run(tools: &Toolchain, spec: &KernelSpec, why: String) -> Evidence {
    Evidence {
        verdict: Verdict::NotRun,
        why,
        reference: None,
        runner: tools.runner.describe(),
        tolerance: DType::F32.default_tolerance(),
        launch: spec.launch.to_string(),
        max_abs: 0.0,
        max_rel: 0.0,
        cases: Vec::new(),
        schedule_dependent: Vec::new(),
    }
}

/// One kernel's runner, built and run on every case, waiting for the
/// reference. The work directory lives as long as this.
struct Prepared {
    binary: PathBuf,
    cases: Vec<Case>,
    dirs: Vec<PathBuf>,
    _work: tempfile::TempDir,
}

fn prepare(spec: &KernelSpec, tools: &Toolchain) -> Result<Prepared, EvidenceError> {
    let work = work_dir(spec)?;
    let binary = runner::build(spec, tools, work.path())?;
    let cases = cases_for(spec)?;
    let dirs: Vec<PathBuf> = cases.iter().map(|c| work.path().join(&c.name)).collect();
    for (case, dir) in cases.iter().zip(&dirs) {
        runner::run_case(spec, case, &binary, dir)?;
        reference::write_manifest(spec, case, dir)?;
    }
    Ok(Prepared {
        binary,
        cases,
        dirs,
        _work: work,
    })
}

/// Compares each case with what the reference wrote for it.
fn judge(
    spec: &KernelSpec,
    prepared: &Prepared,
    tools: &Toolchain,
    evidence: &mut Evidence,
) -> Result<(), EvidenceError> {
    let Prepared {
        binary,
        cases,
        dirs,
        ..
    } = prepared;
    for (case, dir) in cases.iter().zip(dirs) {
        let reference = reference::read_report(dir)?;
        evidence.reference = Some(reference.name.clone());
        let checked = reference::compare_case(spec, case, dir, &reference)?;
        record(evidence, case, checked);
    }
    if evidence.verdict == Verdict::Refuted && tools.runner == Runner::Fibers {
        check_schedule(spec, cases, dirs, binary, evidence)?;
    }
    if evidence.verdict == Verdict::NotRun {
        evidence.verdict = Verdict::Confirmed;
        evidence.why = format!("{} cases within tolerance", evidence.cases.len());
    }
    Ok(())
}

/// Reruns each failed case with the threads of every block resumed in the
/// opposite order; outputs that change are the kernel's own race, which
/// the refutation then names (it may be the kernel's fault, not the
/// rule's).
fn check_schedule(
    spec: &KernelSpec,
    cases: &[Case],
    dirs: &[PathBuf],
    binary: &std::path::Path,
    evidence: &mut Evidence,
) -> Result<(), EvidenceError> {
    // `record` kept the cases in their order.
    let failed: Vec<bool> = evidence.cases.iter().map(|c| !c.passed).collect();
    for ((case, dir), _) in cases.iter().zip(dirs).zip(failed).filter(|(_, f)| *f) {
        let reversed = runner::rerun_reversed(case, binary, dir)?;
        for (tensor, dtype) in spec.written_tensors() {
            let file = format!("{tensor}.out.bin");
            let (Ok(first), Ok(second)) = (
                std::fs::read(dir.join(&file)),
                std::fs::read(reversed.join(&file)),
            ) else {
                continue;
            };
            let width = dtype.size_bytes().max(1);
            let differ = first
                .chunks(width)
                .zip(second.chunks(width))
                .filter(|(a, b)| a != b)
                .count();
            if differ > 0 {
                let of = first.len() / width;
                let seen = format!(
                    "case `{}`: `{tensor}`, {differ} of {of} elements",
                    case.name
                );
                evidence.schedule_dependent.push(seen);
            }
        }
    }
    if !evidence.schedule_dependent.is_empty() {
        evidence.why = format!(
            "{}; the kernel's own outputs change when the threads of a block run in another order ({}): a data race in the kernel, so the mismatch may be the kernel's rather than the rule's",
            evidence.why,
            evidence.schedule_dependent.join("; ")
        );
    }
    Ok(())
}

/// A fresh directory for one kernel's files: below `CUPORT_EVIDENCE_DIR`
/// and kept when that is set (to read the generated runner and inputs),
/// else a temporary one.
fn work_dir(spec: &KernelSpec) -> Result<tempfile::TempDir, EvidenceError> {
    match std::env::var_os("CUPORT_EVIDENCE_DIR") {
        Some(root) => {
            std::fs::create_dir_all(&root).map_err(EvidenceError::io(&root))?;
            tempfile::Builder::new()
                .prefix(&format!("{}-", spec.kernel))
                .disable_cleanup(true)
                .tempdir_in(&root)
                .map_err(EvidenceError::io(&root))
        }
        None => tempfile::tempdir().map_err(EvidenceError::io(std::env::temp_dir())),
    }
}

fn record(evidence: &mut Evidence, case: &Case, checked: Vec<OutputEvidence>) {
    evidence.max_abs = evidence.max_abs.max(max_of(&checked, |o| o.max_abs));
    evidence.max_rel = evidence.max_rel.max(max_of(&checked, |o| o.max_rel));
    let passed = checked.iter().all(|o| o.failures.is_empty());
    evidence.cases.push(CaseEvidence {
        name: case.name.clone(),
        sizes: case.sizes_as_ints(),
        values: case.values.describe().to_string(),
        outputs: checked,
        passed,
    });
    if !passed && evidence.verdict != Verdict::Refuted {
        evidence.verdict = Verdict::Refuted;
        evidence.why = first_mismatch(evidence);
    }
}

fn max_of(outputs: &[OutputEvidence], field: impl Fn(&OutputEvidence) -> f64) -> f64 {
    outputs.iter().map(field).fold(0.0, f64::max)
}

fn first_mismatch(evidence: &Evidence) -> String {
    let Some(case) = evidence.cases.iter().find(|c| !c.passed) else {
        return String::new();
    };
    let Some(out) = case.outputs.iter().find(|o| !o.failures.is_empty()) else {
        return format!("case `{}` failed", case.name);
    };
    format!(
        "case `{}` ({}, {:?}): `{}` fails the {} policy: {}",
        case.name,
        case.values,
        case.sizes,
        out.tensor,
        out.policy,
        out.failures.join("; ")
    )
}
