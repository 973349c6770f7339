//! Waiting for the job arrays: poll `scontrol` until every task is final,
//! `scancel` everything on a stop reason or the wait timeout, then read
//! the final records (from `sacct` for jobs Slurm has forgotten).
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use super::client;
use super::legs::{BatchLeg, BatchOptions, Group};
use super::parse::{JobRecord, TaskIds};
use super::script::STATUS_FILE;

/// Grace period for cancelled jobs to reach a final state.
const CANCEL_GRACE: Duration = Duration::from_secs(60);
/// How long a status file written on a node may take to show up here
/// (NFS caches directory entries for up to 30-60 s by default).
const STATUS_GRACE: Duration = Duration::from_secs(60);

/// Poll until every submitted job is final; on a stop reason or the wait
/// timeout, `scancel` them and wait a little longer. Returns why the jobs
/// were cancelled, if they were.
pub(super) fn wait(groups: &[Group], opts: &BatchOptions<'_>) -> Option<String> {
    let jobs: Vec<(String, usize)> = groups
        .iter()
        .filter_map(|g| g.job.as_ref().ok().map(|id| (id.clone(), g.legs.len())))
        .collect();
    let start = Instant::now();
    let mut stopped: Option<(String, Instant)> = None;
    let mut next_poll = Instant::now();
    loop {
        if Instant::now() >= next_poll {
            if jobs.iter().all(|(id, n)| is_done(id, *n)) {
                return stopped.map(|(why, _)| why);
            }
            next_poll = Instant::now() + opts.poll;
        }
        match &stopped {
            None => {
                let why = (opts.stop)().or_else(|| {
                    (start.elapsed() >= opts.wait_timeout).then(|| {
                        format!(
                            "the jobs did not finish within the wait timeout of {:.0} s",
                            opts.wait_timeout.as_secs_f64()
                        )
                    })
                });
                if let Some(why) = why {
                    let ids: Vec<String> = jobs.iter().map(|(id, _)| id.clone()).collect();
                    let why = match client::cancel(&ids) {
                        Ok(()) => why,
                        Err(e) => format!("{why}; scancel failed: {e}"),
                    };
                    stopped = Some((why, Instant::now()));
                    next_poll = Instant::now();
                }
            }
            Some((why, when)) if when.elapsed() >= CANCEL_GRACE => return Some(why.clone()),
            Some(_) => {}
        }
        std::thread::sleep(Duration::from_millis(100).min(opts.poll));
    }
}

/// Every task of the array has a final record (or Slurm forgot the job).
fn is_done(job: &str, tasks: usize) -> bool {
    match client::show_job(job) {
        Ok(Some(records)) => {
            let finished = records
                .iter()
                .filter(|r| matches!(r.tasks, TaskIds::One(_) | TaskIds::None) && r.is_final())
                .count();
            finished >= tasks && records.iter().all(JobRecord::is_final)
        }
        Ok(None) => true,
        // scontrol failing (controller restarting): ask again next time.
        Err(_) => false,
    }
}

/// Task index → final record, from `scontrol`, else from `sacct`.
pub(super) fn final_records(g: &Group) -> BTreeMap<u32, JobRecord> {
    let Ok(job) = &g.job else {
        return BTreeMap::new();
    };
    let mut records = client::show_job(job).ok().flatten().unwrap_or_default();
    if records.is_empty() {
        records = client::accounting(job);
    }
    records
        .into_iter()
        .filter_map(|r| match r.tasks {
            TaskIds::One(t) => Some((t, r)),
            TaskIds::None if g.legs.len() == 1 => Some((0, r)),
            _ => None,
        })
        .collect()
}

/// Wait (up to [`STATUS_GRACE`]) until every leg Slurm says ended on its
/// own (`COMPLETED`, `FAILED`) has its status file visible here, so a slow
/// shared filesystem is not mistaken for a leg that never finished.
pub(super) fn await_status_files(
    groups: &[Group],
    records: &[BTreeMap<u32, JobRecord>],
    legs: &[BatchLeg],
    run_dir: &Path,
) {
    let expected: Vec<_> = groups
        .iter()
        .zip(records)
        .flat_map(|(g, recs)| {
            g.legs.iter().enumerate().filter_map(move |(task, &leg)| {
                let state = recs.get(&(task as u32)).map(|r| r.state.as_str());
                matches!(state, Some("COMPLETED" | "FAILED")).then_some(leg)
            })
        })
        .map(|leg| run_dir.join("legs").join(&legs[leg].name))
        .collect();
    let deadline = Instant::now() + STATUS_GRACE;
    // Listing the folder (not just stat-ing the file) makes NFS revalidate it.
    let visible = |dir: &Path| {
        std::fs::read_dir(dir)
            .map(|entries| entries.flatten().any(|e| e.file_name() == STATUS_FILE))
            .unwrap_or(false)
    };
    while !expected.iter().all(|d| visible(d)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
    }
}
