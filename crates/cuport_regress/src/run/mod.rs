//! Running cases: launch each leg in a child process, read its files, and
//! turn outputs and timings into checks.
mod app;
mod legs;
mod op;
mod slurm;

use std::path::Path;
use std::time::Duration;

use crate::baseline::{self, BaselineFile};
use crate::case::LoadedFile;
use crate::exec::CommandSpec;
use crate::report::{CaseReport, CrossRatio, RunReport};

pub use app::{exec_case, ExecCase, DEFAULT_TIMEOUT_S};
pub use slurm::{run_files_slurm, SlurmRunOptions, DEFAULT_POLL_S, DEFAULT_WAIT_TIMEOUT_S};

/// Builds the command for an op-case leg: (case file, case name, backend,
/// leg index) → command. The CLI re-executes itself (`cuport regress leg`).
pub type OpLauncher<'a> = dyn Fn(&Path, &str, &str, usize) -> CommandSpec + 'a;

/// Settings for one run.
pub struct RunOptions<'a> {
    pub launcher: &'a OpLauncher<'a>,
    pub baseline: Option<BaselineFile>,
    pub uncertain_fails: bool,
    /// Timeout for op legs (app legs use their case's `timeout_s`).
    pub op_timeout: Duration,
    /// Only run cases whose name contains this.
    pub filter: Option<String>,
}

/// Number of cases `run_files` will run.
pub fn count_cases(files: &[LoadedFile], filter: Option<&str>) -> usize {
    let keep = |n: &str| filter.is_none_or(|f| n.contains(f));
    files
        .iter()
        .map(|f| {
            f.file.cases.iter().filter(|c| keep(&c.name)).count()
                + f.file.apps.iter().filter(|a| keep(&a.name)).count()
        })
        .sum()
}

/// Run every case; `on_case` is called after each (for progress bars).
pub fn run_files(
    files: &[LoadedFile],
    opts: &RunOptions<'_>,
    on_case: &mut dyn FnMut(&CaseReport),
) -> RunReport {
    let keep = |n: &str| opts.filter.as_deref().is_none_or(|f| n.contains(f));
    let mut cases = Vec::new();
    let mut cross: Vec<CrossRatio> = Vec::new();
    for file in files {
        for case in file.file.cases.iter().filter(|c| keep(&c.name)) {
            let (report, ratios) = op::run_op_case(file, case, opts);
            on_case(&report);
            cases.push(report);
            cross.extend(ratios);
        }
        for app in file.file.apps.iter().filter(|a| keep(&a.name)) {
            let (report, ratios) = app::run_app_case(file, app);
            on_case(&report);
            cases.push(report);
            cross.extend(ratios);
        }
    }
    finish(cases, cross, opts.baseline.as_ref(), opts.uncertain_fails)
}

/// Build the report and apply the baseline, if any.
pub fn finish(
    cases: Vec<CaseReport>,
    cross: Vec<CrossRatio>,
    baseline: Option<&BaselineFile>,
    uncertain_fails: bool,
) -> RunReport {
    let placement = crate::placement::placement(&cases);
    let mut report = RunReport::new(cases, cross, placement, uncertain_fails);
    if let Some(base) = baseline {
        baseline::apply(&mut report, base, &crate::stats::DecisionConfig::default());
    }
    report
}
