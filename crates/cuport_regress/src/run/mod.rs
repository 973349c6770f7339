//! Running cases: launch each leg in a child process, read its files, and
//! turn outputs and timings into checks.
mod app;
mod gate;
mod legs;
mod op;
mod slurm;

use std::path::Path;
use std::time::Duration;

use crate::baseline::{self, BaselineFile};
use crate::case::LoadedFile;
use crate::exec::CommandSpec;
use crate::interrupt::{Interruption, Stop};
use crate::memory::{MachineMemory, MemoryLimit};
use crate::report::{CaseReport, CrossRatio, RunReport};

pub use app::{exec_case, ExecCase, DEFAULT_TIMEOUT_S};
pub use gate::GateSettings;
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
    /// `--allow-skip`: skipped legs are warnings in every case (otherwise
    /// each case's `allow_skip`, default false).
    pub allow_skip: bool,
    /// `--max-case-memory`: overrides every case file's `max_case_memory`.
    pub max_case_memory: Option<MemoryLimit>,
    /// This machine's memory: the base of shares and of the default limit.
    pub machine: MachineMemory,
    /// Asked before each case and while legs run; when it answers, the
    /// running leg is killed, the remaining cases are reported as not run,
    /// and the report is marked interrupted.
    pub stop: &'a Stop<'a>,
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
/// A case never ends the run: a failure, an oversized case or a harness
/// panic fails that case alone.
pub fn run_files(
    files: &[LoadedFile],
    opts: &RunOptions<'_>,
    on_case: &mut dyn FnMut(&CaseReport),
) -> RunReport {
    let keep = |n: &str| opts.filter.as_deref().is_none_or(|f| n.contains(f));
    let mut cases = Vec::new();
    let mut cross: Vec<CrossRatio> = Vec::new();
    let mut stopped: Option<Interruption> = None;
    let mut record = |(report, ratios): (CaseReport, Vec<CrossRatio>)| {
        on_case(&report);
        cases.push(report);
        cross.extend(ratios);
    };
    for file in files {
        for case in file.file.cases.iter().filter(|c| keep(&c.name)) {
            stopped = stopped.or_else(|| (opts.stop)());
            record(match &stopped {
                Some(why) => (gate::not_run(op::empty_report(file, case), why), Vec::new()),
                None => guarded(op::empty_report(file, case), || {
                    op::run_op_case(file, case, opts)
                }),
            });
        }
        for app in file.file.apps.iter().filter(|a| keep(&a.name)) {
            stopped = stopped.or_else(|| (opts.stop)());
            let exec = app::app_exec_case(file, app, opts);
            record(match &stopped {
                Some(why) => (gate::not_run(app::empty_report(&exec), why), Vec::new()),
                None => guarded(app::empty_report(&exec), || {
                    app::exec_case(&exec, opts.stop)
                }),
            });
        }
    }
    let mut report = finish(cases, cross, opts.baseline.as_ref(), opts.uncertain_fails);
    if let Some(why) = stopped.or_else(|| (opts.stop)()) {
        report.interrupt(why);
    }
    report
}

/// Run one case; a panic inside the harness errs that case only.
fn guarded(
    base: CaseReport,
    run: impl FnOnce() -> (CaseReport, Vec<CrossRatio>),
) -> (CaseReport, Vec<CrossRatio>) {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(done) => done,
        Err(payload) => (gate::panicked(base, payload.as_ref()), Vec::new()),
    }
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

#[cfg(test)]
mod tests {
    use super::gate::tests::{loaded, options};
    use super::*;
    use crate::interrupt::Interruption;
    use crate::report::{Outcome, Verdict};

    const CASES: &str = "[[case]]\nname = \"a\"\n[case.op]\nkind = \"add\"\nlen = 4\n[[app]]\nname = \"b\"\nreference = \"true\"\ncandidate = \"true\"\n";

    #[test]
    fn an_interrupt_before_a_case_reports_it_as_not_run() {
        let file = loaded(CASES);
        let term = || Some(Interruption::from_signal(libc::SIGTERM));
        let mut opts = options(false, None);
        opts.stop = &term;
        let mut seen = Vec::new();
        let report = run_files(&[file], &opts, &mut |c| seen.push(c.name.clone()));
        assert_eq!(seen, ["a", "b"]);
        assert_eq!(report.summary.verdict, Verdict::Interrupted);
        assert_eq!(report.summary.exit_code, 143);
        for case in &report.cases {
            assert_eq!(case.outcome, Outcome::Skipped);
            assert_eq!(
                case.checks[0].message,
                "not run: cuport was terminated (SIGTERM) before this case started"
            );
        }
    }

    #[test]
    fn a_panic_inside_the_harness_errs_that_case_only() {
        let file = loaded(CASES);
        let base = op::empty_report(&file, &file.file.cases[0]);
        let (report, _) = guarded(base, || panic!("index out of bounds: the len is 3"));
        assert_eq!(report.outcome, Outcome::Error);
        assert!(report.checks[0]
            .message
            .contains("internal error while running this case: index out of bounds"));
    }
}
