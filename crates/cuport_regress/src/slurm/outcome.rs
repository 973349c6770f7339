//! One leg's outcome: its status file, Slurm's final record, and the
//! words for a leg Slurm ended before it finished.
use std::path::Path;

use super::legs::{BatchLeg, BatchOptions, Group, LegOutcome, NOT_SUBMITTED};
use super::parse::JobRecord;
use super::script::{LOG_FILE, NODE_FILE, STATUS_FILE, TIMEOUT_STATUS};
use crate::exec::ExitState;
use crate::report::SlurmLeg;

/// What became of leg `task` of group `g`, from its files and Slurm's record.
pub(super) fn outcome(
    g: &Group,
    task: usize,
    leg: &BatchLeg,
    record: Option<&JobRecord>,
    stopped: Option<&str>,
    opts: &BatchOptions<'_>,
) -> LegOutcome {
    let dir = opts.run_dir.join("legs").join(&leg.name);
    let job_id = match &g.job {
        Ok(id) => format!("{id}_{task}"),
        Err(_) => NOT_SUBMITTED.to_owned(),
    };
    let slurm = SlurmLeg {
        job_id: job_id.clone(),
        placement: g.name.clone(),
        partition: record
            .and_then(|r| r.partition.clone())
            .or_else(|| g.placement.partition.clone()),
        node: record.and_then(|r| r.node.clone()).or_else(|| {
            std::fs::read_to_string(dir.join(NODE_FILE))
                .ok()
                .map(|s| s.trim().to_owned())
        }),
        state: record.map_or_else(|| "UNKNOWN".to_owned(), |r| r.state.clone()),
        exit_code: record.and_then(|r| r.exit_code.clone()),
        reason: record.and_then(|r| r.reason.clone()),
        script: g.script.display().to_string(),
    };
    let status = read_status(&dir);
    let result = match (&g.job, status) {
        (Err(e), _) => Err(format!("sbatch could not submit this leg: {e}")),
        (Ok(_), Some((code, wall))) => Ok((exit_state(code, wall, leg), wall)),
        (Ok(_), None) => Err(slurm_reason(&slurm, stopped, g)),
    };
    let log = [
        dir.join(LOG_FILE),
        opts.run_dir.join(format!("slurm-{}.out", job_id)),
    ];
    LegOutcome {
        log_excerpt: log
            .iter()
            .find_map(|p| std::fs::File::open(p).ok())
            .map(|mut f| crate::exec::excerpt(&mut f))
            .unwrap_or_default(),
        dir,
        slurm,
        result,
    }
}

/// `status`: `EXIT START END`.
fn read_status(dir: &Path) -> Option<(i32, f64)> {
    let text = std::fs::read_to_string(dir.join(STATUS_FILE)).ok()?;
    let mut words = text.split_whitespace();
    let code = words.next()?.parse().ok()?;
    let start: f64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0.0);
    let end: f64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(start);
    Some((code, (end - start).max(0.0)))
}

fn exit_state(code: i32, wall: f64, leg: &BatchLeg) -> ExitState {
    let timeout = leg.request.timeout.as_secs_f64();
    // timeout(1): 124 after TERM, 128+9 when it had to KILL.
    if code == TIMEOUT_STATUS || (code == 137 && wall >= timeout) {
        ExitState::TimedOut { after_s: wall }
    } else {
        ExitState::Exited { code }
    }
}

/// Why a leg that left no status behind did not finish, in Slurm's words.
fn slurm_reason(s: &SlurmLeg, stopped: Option<&str>, g: &Group) -> String {
    let on = s
        .node
        .as_deref()
        .map(|n| format!(" on {n}"))
        .unwrap_or_default();
    let mut text = format!("Slurm job {} ended {}{on}", s.job_id, s.state);
    if let Some(reason) = &s.reason {
        text.push_str(&format!(" (reason: {reason})"));
    }
    if let Some(code) = &s.exit_code {
        text.push_str(&format!(", exit code {code}"));
    }
    text.push_str("; ");
    text.push_str(&hint(&s.state, stopped, g));
    text
}

/// What a final state means for the leg, and what to do about it.
fn hint(state: &str, stopped: Option<&str>, g: &Group) -> String {
    let table = &g.placement_name;
    match (state, stopped) {
        ("CANCELLED", Some(why)) => format!("cuport cancelled it: {why}"),
        ("CANCELLED", None) => "it was cancelled (scancel) outside cuport".into(),
        ("TIMEOUT", _) => format!(
            "it hit the time limit ({}); raise `time` in [slurm.placement.{table}]",
            g.placement
                .time
                .as_deref()
                .unwrap_or("the default: the leg's timeout plus 2 minutes")
        ),
        ("NODE_FAIL", _) => "its node failed while the leg ran".into(),
        ("OUT_OF_MEMORY", _) => format!(
            "it ran out of memory; ask for more with sbatch_args = [\"--mem=…\"] in [slurm.placement.{table}]"
        ),
        ("PREEMPTED", _) => "a higher-priority job preempted it".into(),
        ("BOOT_FAIL", _) => "its node failed to boot".into(),
        ("DEADLINE", _) => "it missed its deadline".into(),
        ("UNKNOWN", _) => "Slurm no longer knows the job (MinJobAge) and accounting is off, and the leg left no status file".into(),
        _ => "the job script ended before the leg did; see its slurm-*.out in the run directory".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slurm::batch::tests::leg;
    use crate::slurm::config::Placement;

    #[test]
    fn status_file_and_timeouts() -> std::result::Result<(), std::io::Error> {
        let dir = tempfile::tempdir()?;
        assert_eq!(read_status(dir.path()), None);
        std::fs::write(dir.path().join(STATUS_FILE), "124 100.5 103.0\n")?;
        assert_eq!(read_status(dir.path()), Some((124, 2.5)));
        let l = leg("cpu", "cpu", 2.0);
        assert_eq!(
            exit_state(124, 2.5, &l),
            ExitState::TimedOut { after_s: 2.5 }
        );
        assert_eq!(
            exit_state(137, 12.0, &l),
            ExitState::TimedOut { after_s: 12.0 }
        );
        assert_eq!(exit_state(137, 0.5, &l), ExitState::Exited { code: 137 });
        assert_eq!(exit_state(3, 0.5, &l), ExitState::Exited { code: 3 });
        Ok(())
    }

    #[test]
    fn slurm_failures_are_worded_with_slurms_reason() {
        let g = Group {
            name: "cuda".into(),
            placement_name: "cuda".into(),
            placement: Placement {
                time: Some("10".into()),
                ..Placement::default()
            },
            legs: vec![0],
            script: "/run/jobs/cuda.sh".into(),
            job: Ok("12".into()),
        };
        let s = |state: &str, reason: Option<&str>, exit: &str| SlurmLeg {
            job_id: "12_0".into(),
            placement: "cuda".into(),
            partition: Some("cuda".into()),
            node: Some("g01".into()),
            state: state.into(),
            exit_code: Some(exit.into()),
            reason: reason.map(Into::into),
            script: String::new(),
        };
        assert_eq!(
            slurm_reason(&s("TIMEOUT", Some("TimeLimit"), "0:15"), None, &g),
            "Slurm job 12_0 ended TIMEOUT on g01 (reason: TimeLimit), exit code 0:15; it hit the time limit (10); raise `time` in [slurm.placement.cuda]"
        );
        assert_eq!(
            slurm_reason(&s("NODE_FAIL", None, "0:0"), None, &g),
            "Slurm job 12_0 ended NODE_FAIL on g01, exit code 0:0; its node failed while the leg ran"
        );
        assert_eq!(
            slurm_reason(&s("CANCELLED", None, "0:15"), Some("interrupted (SIGINT, Ctrl-C)"), &g),
            "Slurm job 12_0 ended CANCELLED on g01, exit code 0:15; cuport cancelled it: interrupted (SIGINT, Ctrl-C)"
        );
    }
}
