//! Launching a leg and turning what it left behind into a [`LegReport`].
use std::collections::BTreeMap;
use std::path::Path;

use crate::device::DeviceIdentity;
use crate::exec::{run_leg, ExitState, LegRequest};
use crate::io::{read_leg_dir, LegFiles};
use crate::leg::{DEVICE_FILE, UNAVAILABLE_FILE};
use crate::report::{Check, CheckKind, LegReport, LegState, Outcome, RegionStats};

/// A leg's report plus its tensors (when it succeeded).
pub(super) struct Finished {
    pub(super) report: LegReport,
    pub(super) files: Option<LegFiles>,
}

/// A leg's report before it ran.
pub(super) fn blank_report(backend: &str, role: &str, command: String) -> LegReport {
    LegReport {
        backend: backend.to_owned(),
        role: role.to_owned(),
        command,
        device: None,
        exit: None,
        state: LegState::Ok,
        wall_s: 0.0,
        log_excerpt: String::new(),
        regions: BTreeMap::new(),
        slurm: None,
    }
}

/// Run a leg; never fails: launch errors, crashes, timeouts and unreadable
/// files become a failed [`LegReport`] with the reason and log excerpt.
pub(super) fn launch(backend: &str, role: &str, req: &LegRequest) -> Finished {
    let report = blank_report(backend, role, req.command.display());
    match run_leg(req) {
        Ok(run) => settle(
            report,
            run.state,
            run.wall_s,
            run.log_excerpt,
            run.out_dir.path(),
        ),
        Err(e) => failed(report, e.to_string()),
    }
}

/// A leg that did not run to the end, for `reason`.
pub(super) fn failed(mut report: LegReport, reason: String) -> Finished {
    report.state = LegState::Failed { reason };
    Finished {
        report,
        files: None,
    }
}

/// Judge a leg that ended with `state`, having written into `dir`.
pub(super) fn settle(
    mut report: LegReport,
    state: ExitState,
    wall_s: f64,
    log_excerpt: String,
    dir: &Path,
) -> Finished {
    report.exit = Some(state.clone());
    report.wall_s = wall_s;
    report.log_excerpt = log_excerpt;
    if let Ok(reason) = std::fs::read_to_string(dir.join(UNAVAILABLE_FILE)) {
        report.state = LegState::Skipped {
            reason: reason.trim().to_owned(),
        };
        return Finished {
            report,
            files: None,
        };
    }
    if !state.succeeded() {
        return failed(report, state.describe());
    }
    match read_leg_dir(dir) {
        Ok(files) => {
            report.device = Some(device_of(dir, &report.backend, &files));
            if let Some(t) = &files.timings {
                report.regions = t
                    .regions
                    .iter()
                    .map(|(k, v)| (k.clone(), RegionStats::new(v.clone())))
                    .collect();
            }
            Finished {
                report,
                files: Some(files),
            }
        }
        Err(e) => failed(report, format!("unreadable output: {e}")),
    }
}

/// Op legs write `device.json`; app legs may describe their device in
/// `timings.json`; otherwise the leg ran on this host's CPU.
fn device_of(dir: &Path, backend: &str, files: &LegFiles) -> DeviceIdentity {
    if let Some(d) = std::fs::read_to_string(dir.join(DEVICE_FILE))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
    {
        return d;
    }
    let mut id = DeviceIdentity::this_cpu(backend);
    if let Some(note) = files.timings.as_ref().and_then(|t| t.device.clone()) {
        id.model = note.model.unwrap_or(id.model);
        id.driver = note.driver;
        id.runtime = note.runtime;
    }
    id
}

/// The `leg:<label>` check for a finished leg.
pub(super) fn leg_check(label: &str, leg: &LegReport) -> Check {
    let (outcome, message) = match &leg.state {
        LegState::Ok => (
            Outcome::Pass,
            format!("ran in {:.2} s{}", leg.wall_s, slurm_note(leg)),
        ),
        LegState::Skipped { reason } => (Outcome::Skipped, reason.clone()),
        LegState::Failed { reason } => {
            let named = leg
                .slurm
                .as_ref()
                .is_some_and(|s| reason.contains(&s.job_id));
            let reason = if named {
                reason.clone()
            } else {
                format!("{reason}{}", slurm_note(leg))
            };
            let log = if leg.log_excerpt.is_empty() {
                "(no output)".to_owned()
            } else {
                leg.log_excerpt.clone()
            };
            (
                Outcome::Error,
                format!("{reason}\n--- log excerpt ---\n{log}"),
            )
        }
    };
    Check {
        name: format!("leg:{label}"),
        kind: CheckKind::Leg,
        outcome,
        message,
        accuracy: None,
        perf: None,
    }
}

/// ` (Slurm job 12_0 on node01, COMPLETED)` for legs that ran under Slurm.
fn slurm_note(leg: &LegReport) -> String {
    let Some(s) = leg
        .slurm
        .as_ref()
        .filter(|s| s.job_id != crate::slurm::batch::NOT_SUBMITTED)
    else {
        return String::new();
    };
    let node = s
        .node
        .as_deref()
        .map(|n| format!(" on {n}"))
        .unwrap_or_default();
    format!(" (Slurm job {}{node}, {})", s.job_id, s.state)
}
