//! Application cases: two commands, their tensors compared under (rtol,
//! atol), their timed regions compared with each other.
use std::path::PathBuf;
use std::time::Duration;

use crate::case::{AppCase, LoadedFile};
use crate::exec::{CommandSpec, LegRequest};
use crate::interrupt::Stop;
use crate::metrics::compare;
use crate::policy::{tolerance_failures, AccuracyConfig, PolicyKind};
use crate::report::{CaseKind, CaseReport, Check, CheckKind, CrossRatio, Outcome};
use crate::sampling::PerfSettings;
use crate::stats::{compare_samples, PerfVerdict};

use super::gate::GateSettings;
use super::legs::{launch, leg_check, Finished, Guard};
use super::op::accuracy_check;
use super::RunOptions;

/// Default seconds before an application leg is killed.
pub const DEFAULT_TIMEOUT_S: f64 = 300.0;

/// One application comparison, from a case file or `cuport regress exec`.
#[derive(Debug, Clone)]
pub struct ExecCase {
    pub name: String,
    pub file: String,
    pub reference: CommandSpec,
    pub candidate: CommandSpec,
    pub cwd: Option<PathBuf>,
    pub timeout: Duration,
    pub accuracy: AccuracyConfig,
    pub perf: PerfSettings,
    pub gate_cross: bool,
    /// Skips allowed or not, and the memory limit for reading the legs'
    /// tensors back.
    pub gate: GateSettings,
}

/// The [`ExecCase`] an `[[app]]` entry describes.
pub(super) fn app_exec_case(file: &LoadedFile, app: &AppCase, opts: &RunOptions<'_>) -> ExecCase {
    let defaults = &file.file.defaults;
    let cwd = match &app.cwd {
        Some(dir) => file.dir().join(dir),
        None => file.dir().to_owned(),
    };
    ExecCase {
        name: app.name.clone(),
        file: file.path.display().to_string(),
        reference: CommandSpec::Shell(app.reference.clone()),
        candidate: CommandSpec::Shell(app.candidate.clone()),
        cwd: Some(cwd),
        timeout: Duration::from_secs_f64(
            app.timeout_s
                .or(defaults.timeout_s)
                .unwrap_or(DEFAULT_TIMEOUT_S)
                .max(0.001),
        ),
        accuracy: app.accuracy.or(&defaults.accuracy),
        perf: app.perf.or(&defaults.perf),
        gate_cross: app.gate_cross.unwrap_or(true),
        gate: GateSettings::for_app(opts, file, app),
    }
}

impl ExecCase {
    /// The request for the leg that runs `command`.
    pub(super) fn request(&self, command: &CommandSpec) -> LegRequest {
        LegRequest {
            command: command.clone(),
            cwd: self.cwd.clone(),
            timeout: self.timeout,
            env: Vec::new(),
        }
    }
}

/// Run both legs of an application case and compare them; `stop` ends a
/// running leg early (see [`RunOptions::stop`]).
pub fn exec_case(case: &ExecCase, stop: &Stop<'_>) -> (CaseReport, Vec<CrossRatio>) {
    let guard = Guard {
        stop,
        memory: case.gate.memory,
    };
    let reference = launch("exec", "reference", &case.request(&case.reference), &guard);
    let candidate = launch("exec", "candidate", &case.request(&case.candidate), &guard);
    judge_exec_case(case, reference, candidate)
}

/// The report of an application case before its legs ran.
pub(super) fn empty_report(case: &ExecCase) -> CaseReport {
    CaseReport {
        name: case.name.clone(),
        kind: CaseKind::App,
        file: case.file.clone(),
        op: None,
        dtype: None,
        shape_class: None,
        legs: Vec::new(),
        checks: Vec::new(),
        outcome: Outcome::Skipped,
    }
}

/// Compare the two finished legs of an application case.
pub(super) fn judge_exec_case(
    case: &ExecCase,
    reference: Finished,
    candidate: Finished,
) -> (CaseReport, Vec<CrossRatio>) {
    let mut report = empty_report(case);
    report.checks = vec![
        leg_check("reference", &reference.report),
        leg_check("candidate", &candidate.report),
    ];
    report
        .checks
        .extend(accuracy_checks(case, &reference, &candidate));
    let (perf, cross) = perf_checks(case, &reference, &candidate);
    report.checks.extend(perf);
    report.legs = vec![reference.report, candidate.report];
    report.checks.extend(case.gate.compared_check(&report.legs));
    report.settle();
    (report, cross)
}

fn accuracy_checks(case: &ExecCase, reference: &Finished, candidate: &Finished) -> Vec<Check> {
    let (Some(ref_files), Some(cand_files)) = (&reference.files, &candidate.files) else {
        return Vec::new();
    };
    let mut checks = Vec::new();
    for (name, expected) in &ref_files.tensors {
        let policy = case
            .accuracy
            .resolve(expected.dtype(), PolicyKind::Tolerance);
        match cand_files.tensors.get(name) {
            Some(actual) => {
                let m = compare(actual, expected, policy.tolerance);
                checks.push(accuracy_check(name, tolerance_failures(&m, &policy), m));
            }
            None => checks.push(Check {
                name: format!("accuracy:{name}"),
                kind: CheckKind::Accuracy,
                outcome: Outcome::Fail,
                message: format!("the candidate wrote no tensor `{name}` (the reference did)"),
                accuracy: None,
                perf: None,
            }),
        }
    }
    if ref_files.tensors.is_empty() && ref_files.timings.is_none() {
        checks.push(Check {
            name: "outputs".into(),
            kind: CheckKind::Accuracy,
            outcome: Outcome::Fail,
            message: "the reference leg wrote no tensors and no timings.json into $CUPORT_OUT"
                .into(),
            accuracy: None,
            perf: None,
        });
    }
    checks
}

fn perf_checks(
    case: &ExecCase,
    reference: &Finished,
    candidate: &Finished,
) -> (Vec<Check>, Vec<CrossRatio>) {
    let (Some(rt), Some(ct)) = (
        reference.files.as_ref().and_then(|f| f.timings.as_ref()),
        candidate.files.as_ref().and_then(|f| f.timings.as_ref()),
    ) else {
        return (Vec::new(), Vec::new());
    };
    let decision = case.perf.decision();
    let (mut checks, mut cross) = (Vec::new(), Vec::new());
    for (region, base) in &rt.regions {
        let Some(new) = ct.regions.get(region) else {
            continue;
        };
        let cmp = compare_samples(base, new, &decision);
        let outcome = match (case.gate_cross, cmp.verdict) {
            (true, PerfVerdict::Slower) => Outcome::Fail,
            (true, PerfVerdict::Uncertain) => Outcome::Uncertain,
            _ => Outcome::Pass,
        };
        let message = format!(
            "candidate {} than reference: median {:.4e} s vs {:.4e} s (×{:.3}, 95% CI [{:.3}, {:.3}], p={:.2e}){}",
            cmp.verdict,
            cmp.new_median,
            cmp.base_median,
            cmp.ratio,
            cmp.ci_low,
            cmp.ci_high,
            cmp.p_value,
            if case.gate_cross { "" } else { "; informational (gate_cross = false)" }
        );
        cross.push(CrossRatio {
            case: case.name.clone(),
            reference: "reference".into(),
            candidate: "candidate".into(),
            region: region.clone(),
            ratio: cmp.ratio,
            ci_low: cmp.ci_low,
            ci_high: cmp.ci_high,
        });
        checks.push(Check {
            name: format!("perf:cross:{region}"),
            kind: CheckKind::PerfCross,
            outcome,
            message,
            accuracy: None,
            perf: Some(cmp),
        });
    }
    (checks, cross)
}
