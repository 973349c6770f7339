//! Launching a leg and turning what it left behind into a [`LegReport`].
use std::collections::BTreeMap;
use std::path::Path;

use crate::device::DeviceIdentity;
use crate::exec::{run_leg, LegRequest};
use crate::io::{read_leg_dir, LegFiles};
use crate::leg::{DEVICE_FILE, UNAVAILABLE_FILE};
use crate::report::{Check, CheckKind, LegReport, LegState, Outcome, RegionStats};

/// A leg's report plus its tensors (when it succeeded).
pub(super) struct Finished {
    pub(super) report: LegReport,
    pub(super) files: Option<LegFiles>,
}

/// Run a leg; never fails: launch errors, crashes, timeouts and unreadable
/// files become a failed [`LegReport`] with the reason and log excerpt.
pub(super) fn launch(backend: &str, role: &str, req: &LegRequest) -> Finished {
    let mut report = LegReport {
        backend: backend.to_owned(),
        role: role.to_owned(),
        command: req.command.display(),
        device: None,
        exit: None,
        state: LegState::Ok,
        wall_s: 0.0,
        log_excerpt: String::new(),
        regions: BTreeMap::new(),
    };
    let run = match run_leg(req) {
        Ok(run) => run,
        Err(e) => {
            report.state = LegState::Failed {
                reason: e.to_string(),
            };
            return Finished {
                report,
                files: None,
            };
        }
    };
    report.exit = Some(run.state.clone());
    report.wall_s = run.wall_s;
    report.log_excerpt = run.log_excerpt.clone();
    let dir = run.out_dir.path();
    if let Ok(reason) = std::fs::read_to_string(dir.join(UNAVAILABLE_FILE)) {
        report.state = LegState::Skipped {
            reason: reason.trim().to_owned(),
        };
        return Finished {
            report,
            files: None,
        };
    }
    if !run.state.succeeded() {
        report.state = LegState::Failed {
            reason: run.state.describe(),
        };
        return Finished {
            report,
            files: None,
        };
    }
    match read_leg_dir(dir) {
        Ok(files) => {
            report.device = Some(device_of(dir, backend, &files));
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
        Err(e) => {
            report.state = LegState::Failed {
                reason: format!("unreadable output: {e}"),
            };
            Finished {
                report,
                files: None,
            }
        }
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
        LegState::Ok => (Outcome::Pass, format!("ran in {:.2} s", leg.wall_s)),
        LegState::Skipped { reason } => (Outcome::Skipped, reason.clone()),
        LegState::Failed { reason } => {
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
