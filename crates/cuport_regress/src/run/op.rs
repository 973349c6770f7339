//! Op cases: every backend in a child, each output against the f64 oracle.
use crate::case::{LoadedFile, OpCase};
use crate::exec::LegRequest;
use crate::leg::{inputs, OUTPUT_NAME};
use crate::metrics::{compare, AccuracyMetrics};
use crate::placement::shape_class;
use crate::policy::{
    hard_failures, ratio_failures, tolerance_failures, AccuracyPolicy, PolicyKind,
};
use crate::report::{CaseKind, CaseReport, Check, CheckKind, CrossRatio, LegState, Outcome};
use crate::stats::compare_samples;
use crate::tensor::Tensor;

use super::gate::GateSettings;
use super::legs::{launch, leg_check, Finished, Guard};
use super::RunOptions;

/// Leg labels: the backend name, with `#index` when a name repeats.
fn labels(backends: &[String]) -> Vec<String> {
    backends
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if backends.iter().filter(|x| *x == b).count() > 1 {
                format!("{b}#{i}")
            } else {
                b.clone()
            }
        })
        .collect()
}

/// One leg to run: its label, role and request.
pub(super) struct PlannedLeg {
    pub(super) label: String,
    pub(super) role: &'static str,
    pub(super) request: LegRequest,
}

/// The legs of an op case, in backend order (the first is the reference).
/// `case_path` is the case file as the leg should name it (the Slurm
/// runner passes an absolute path).
pub(super) fn plan_op_legs(
    file: &LoadedFile,
    case_path: &std::path::Path,
    case: &OpCase,
    opts: &RunOptions<'_>,
) -> Vec<PlannedLeg> {
    let backends = file.backends_of(case);
    labels(&backends)
        .into_iter()
        .zip(&backends)
        .enumerate()
        .map(|(index, (label, backend))| PlannedLeg {
            label,
            role: if index == 0 { "reference" } else { "candidate" },
            request: LegRequest {
                command: (opts.launcher)(case_path, &case.name, backend, index),
                cwd: None,
                timeout: opts.op_timeout,
                env: Vec::new(),
            },
        })
        .collect()
}

pub(super) fn run_op_case(
    file: &LoadedFile,
    case: &OpCase,
    opts: &RunOptions<'_>,
) -> (CaseReport, Vec<CrossRatio>) {
    let gate = GateSettings::for_op(opts, file, case);
    // Before anything is allocated: a case too big for its limit fails
    // alone instead of aborting cuport.
    if let Some(report) = over_memory(file, case, &gate) {
        return (report, Vec::new());
    }
    // The oracle first: a case it cannot evaluate is not worth launching.
    let oracle = match oracle(file, case) {
        Ok(t) => t,
        Err(e) => return (oracle_failure(file, case, Vec::new(), &e), Vec::new()),
    };
    let guard = Guard {
        stop: opts.stop,
        memory: gate.memory,
    };
    let finished = plan_op_legs(file, &file.path, case, opts)
        .iter()
        .map(|leg| launch(&leg.label, leg.role, &leg.request, &guard))
        .collect();
    judge_op_case(file, case, &oracle, finished, &gate)
}

/// The failed report of a case over its memory limit, if it is.
pub(super) fn over_memory(
    file: &LoadedFile,
    case: &OpCase,
    gate: &GateSettings,
) -> Option<CaseReport> {
    let legs = file.backends_of(case).len();
    let check = gate.memory_check(&case.name, &case.op, case.dtype, legs)?;
    let mut report = empty_report(file, case);
    report.checks.push(check);
    report.settle();
    Some(report)
}

/// Compute the oracle, then judge the finished legs against it.
pub(super) fn judge_op_legs(
    file: &LoadedFile,
    case: &OpCase,
    finished: Vec<Finished>,
    gate: &GateSettings,
) -> (CaseReport, Vec<CrossRatio>) {
    match oracle(file, case) {
        Ok(t) => judge_op_case(file, case, &t, finished, gate),
        Err(e) => (oracle_failure(file, case, finished, &e), Vec::new()),
    }
}

/// The report of an op case before its legs ran.
pub(super) fn empty_report(file: &LoadedFile, case: &OpCase) -> CaseReport {
    CaseReport {
        name: case.name.clone(),
        kind: CaseKind::Op,
        file: file.path.display().to_string(),
        op: Some(case.op.kind().to_owned()),
        dtype: Some(case.dtype),
        shape_class: Some(
            case.shape_class
                .clone()
                .unwrap_or_else(|| shape_class(case.dtype.name(), case.op.work())),
        ),
        legs: Vec::new(),
        checks: Vec::new(),
        outcome: Outcome::Skipped,
    }
}

fn oracle_failure(
    file: &LoadedFile,
    case: &OpCase,
    finished: Vec<Finished>,
    e: &crate::error::RegressError,
) -> CaseReport {
    let mut report = empty_report(file, case);
    report.checks.push(error_check("oracle", e.to_string()));
    report.legs = finished.into_iter().map(|f| f.report).collect();
    report.settle();
    report
}

/// Compare finished legs (in [`plan_op_legs`] order) with the f64 oracle.
fn judge_op_case(
    file: &LoadedFile,
    case: &OpCase,
    oracle: &Tensor,
    finished: Vec<Finished>,
    gate: &GateSettings,
) -> (CaseReport, Vec<CrossRatio>) {
    let labels = labels(&file.backends_of(case));
    let mut report = empty_report(file, case);
    for (leg, label) in finished.iter().zip(&labels) {
        report.checks.push(leg_check(label, &leg.report));
    }
    let policy = case
        .accuracy
        .or(&file.file.defaults.accuracy)
        .resolve(case.dtype, PolicyKind::Ratio);
    report
        .checks
        .extend(accuracy_checks(&finished, &labels, oracle, &policy));
    let cross = cross_ratios(&case.name, &finished, &labels);
    report.legs = finished.into_iter().map(|f| f.report).collect();
    report.checks.extend(gate.compared_check(&report.legs));
    report.settle();
    (report, cross)
}

fn oracle(file: &LoadedFile, case: &OpCase) -> crate::error::Result<Tensor> {
    let inputs = inputs(case, file.seed_of(case))?;
    let values: Vec<Vec<f64>> = inputs.iter().map(Tensor::to_f64_vec).collect();
    let out = case.op.reference(&values)?;
    Ok(Tensor::from_f64(
        crate::dtype::DType::F64,
        case.op.output_shape()?,
        &out,
    ))
}

fn error_check(name: &str, message: String) -> Check {
    Check {
        name: name.to_owned(),
        kind: CheckKind::Leg,
        outcome: Outcome::Error,
        message,
        accuracy: None,
        perf: None,
    }
}

fn output_of(leg: &Finished) -> Option<&Tensor> {
    leg.files.as_ref().and_then(|f| f.tensors.get(OUTPUT_NAME))
}

/// The first backend is the reference: with candidates it gets the hard
/// checks only and its error becomes the yardstick of the ratio policy;
/// alone, it is held to (rtol, atol) against the oracle.
fn accuracy_checks(
    legs: &[Finished],
    labels: &[String],
    oracle: &Tensor,
    policy: &AccuracyPolicy,
) -> Vec<Check> {
    let metrics: Vec<Option<AccuracyMetrics>> = legs
        .iter()
        .map(|l| output_of(l).map(|t| compare(t, oracle, policy.tolerance)))
        .collect();
    let reference = metrics.first().cloned().flatten();
    let mut checks = Vec::new();
    for (index, (m, label)) in metrics.into_iter().zip(labels).enumerate() {
        let Some(m) = m else {
            if legs[index].report.state == LegState::Ok {
                checks.push(missing_output(label));
            }
            continue;
        };
        let failures = match (index, &reference, policy.kind) {
            (0, _, _) if legs.len() > 1 => hard_failures(&m, policy),
            (_, Some(r), PolicyKind::Ratio) if index > 0 => ratio_failures(&m, r, policy),
            _ => tolerance_failures(&m, policy),
        };
        checks.push(accuracy_check(label, failures, m));
    }
    checks
}

fn missing_output(label: &str) -> Check {
    Check {
        name: format!("accuracy:{label}"),
        kind: CheckKind::Accuracy,
        outcome: Outcome::Error,
        message: format!("the leg wrote no `{OUTPUT_NAME}` tensor"),
        accuracy: None,
        perf: None,
    }
}

pub(super) fn accuracy_check(label: &str, failures: Vec<String>, m: AccuracyMetrics) -> Check {
    let summary = format!(
        "max abs {:.3e}, max rel {:.3e}, rmse {:.3e}, cosine {:.6}, ulp max {} p99 {}, {} / {} mismatched, within 1‰ {:.2}%, 5‰ {:.2}%",
        m.max_abs,
        m.max_rel,
        m.rmse,
        m.cosine,
        m.ulp_max,
        m.ulp_p99,
        m.mismatched,
        m.elements,
        m.within_1permille * 100.0,
        m.within_5permille * 100.0
    );
    let (outcome, message) = if failures.is_empty() {
        (Outcome::Pass, summary)
    } else {
        (Outcome::Fail, format!("{}\n{summary}", failures.join("\n")))
    };
    Check {
        name: format!("accuracy:{label}"),
        kind: CheckKind::Accuracy,
        outcome,
        message,
        accuracy: Some(m),
        perf: None,
    }
}

fn cross_ratios(case: &str, legs: &[Finished], labels: &[String]) -> Vec<CrossRatio> {
    let Some(reference) = legs
        .first()
        .and_then(|l| l.report.regions.get(crate::leg::REGION_NAME))
    else {
        return Vec::new();
    };
    let decision = crate::stats::DecisionConfig::default();
    legs.iter()
        .zip(labels)
        .skip(1)
        .filter_map(|(leg, label)| {
            let cand = leg.report.regions.get(crate::leg::REGION_NAME)?;
            let cmp = compare_samples(&reference.samples, &cand.samples, &decision);
            Some(CrossRatio {
                case: case.to_owned(),
                reference: labels[0].clone(),
                candidate: label.clone(),
                region: crate::leg::REGION_NAME.to_owned(),
                ratio: cmp.ratio,
                ci_low: cmp.ci_low,
                ci_high: cmp.ci_high,
            })
        })
        .collect()
}
