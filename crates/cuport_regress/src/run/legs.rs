//! Launching a leg and turning what it left behind into a [`LegReport`].
use std::collections::BTreeMap;
use std::path::Path;

use crate::device::DeviceIdentity;
use crate::exec::{allocation_failure, run_leg, ExitState, LegRequest};
use crate::interrupt::Stop;
use crate::io::{read_leg_dir, LegFiles};
use crate::leg::{DEVICE_FILE, UNAVAILABLE_FILE};
use crate::memory::human_bytes;
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

/// What every leg launch needs besides its request.
pub(super) struct Guard<'a> {
    pub(super) stop: &'a Stop<'a>,
    /// The case's memory limit in bytes: a leg's tensors are read back
    /// only when they take at most half of it (cuport holds two legs'
    /// tensors at once).
    pub(super) memory: u64,
}

/// Run a leg; never fails: launch errors, crashes, timeouts, interrupts
/// and unreadable files become a failed [`LegReport`] with the reason and
/// log excerpt.
pub(super) fn launch(backend: &str, role: &str, req: &LegRequest, guard: &Guard<'_>) -> Finished {
    let report = blank_report(backend, role, req.command.display());
    if let Some(why) = (guard.stop)() {
        return failed(report, format!("not started: cuport was {}", why.reason));
    }
    match run_leg(req, guard.stop) {
        Ok(run) => settle(
            report,
            run.state,
            run.wall_s,
            run.log_excerpt,
            run.out_dir.path(),
            guard.memory,
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

/// Judge a leg that ended with `state`, having written into `dir`; its
/// tensors are read only if they fit in half of `memory` bytes.
pub(super) fn settle(
    mut report: LegReport,
    state: ExitState,
    wall_s: f64,
    log_excerpt: String,
    dir: &Path,
    memory: u64,
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
        let reason = failure_reason(&state, &report.log_excerpt);
        return failed(report, reason);
    }
    let size = tensor_bytes(dir);
    if size.saturating_mul(2) > memory {
        let reason = format!(
            "the leg wrote {} of tensors, more than half of this case's memory limit of {} (cuport holds both legs' tensors at once), so they were not read; write smaller outputs, or raise --max-case-memory or `max_case_memory`",
            human_bytes(u128::from(size)),
            human_bytes(u128::from(memory))
        );
        return failed(report, reason);
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

/// How the leg ended, plus the allocator's own words when it ran out of
/// memory (Rust prints `memory allocation of N bytes failed`, then aborts).
fn failure_reason(state: &ExitState, log: &str) -> String {
    match allocation_failure(log) {
        Some(line) => format!(
            "{}; the leg ran out of memory (`{line}`): lower the case's sizes, or run it where more memory is free",
            state.describe()
        ),
        None => state.describe(),
    }
}

/// Bytes of the tensor files a leg left in `dir`.
fn tensor_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let path = e.path();
            let ext = path.extension().and_then(|x| x.to_str());
            matches!(ext, Some("npy" | "safetensors"))
        })
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .fold(0u64, u64::saturating_add)
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
