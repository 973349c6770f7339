//! Submitting legs as job arrays (one per placement), waiting for them,
//! cancelling them on a signal or timeout, and reading back what each leg
//! left in the run directory together with Slurm's verdict.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::client;
use super::config::Placement;
use super::parse::{JobRecord, TaskIds};
use super::script::{self, JobSpec, ScriptLeg, LOG_FILE, NODE_FILE, STATUS_FILE, TIMEOUT_STATUS};
use crate::error::{RegressError, Result};
use crate::exec::{CommandSpec, ExitState, LegRequest};
use crate::report::SlurmLeg;

/// One leg to run as an array task.
#[derive(Debug, Clone)]
pub struct BatchLeg {
    /// Placement name (`[slurm.placement.NAME]`).
    pub placement_name: String,
    pub placement: Placement,
    /// Folder name in the run directory (unique).
    pub name: String,
    pub request: LegRequest,
}

/// How to submit and wait.
pub struct BatchOptions<'a> {
    pub run_dir: &'a Path,
    pub max_concurrent: Option<u32>,
    pub poll: Duration,
    pub wait_timeout: Duration,
    /// Asked between polls: a reason to give up and cancel the jobs.
    pub stop: &'a dyn Fn() -> Option<String>,
}

/// What became of one leg.
#[derive(Debug)]
pub struct LegOutcome {
    /// The leg's folder; its `out/` holds what the leg wrote.
    pub dir: PathBuf,
    pub slurm: SlurmLeg,
    /// How the leg's command ended and its wall time, or why it never
    /// ended on its own (Slurm's reason).
    pub result: std::result::Result<(ExitState, f64), String>,
    pub log_excerpt: String,
}

struct Group {
    /// Unique: the job's and script's name.
    name: String,
    placement_name: String,
    placement: Placement,
    legs: Vec<usize>,
    script: PathBuf,
    job: std::result::Result<String, String>,
}

/// The job id of a leg whose array `sbatch` refused.
pub const NOT_SUBMITTED: &str = "not submitted";

/// Grace period for cancelled jobs to reach a final state.
const CANCEL_GRACE: Duration = Duration::from_secs(60);

/// Run every leg through Slurm; returns one outcome per leg, in order.
/// Fails only when the run directory cannot be written.
pub fn run(legs: &[BatchLeg], opts: &BatchOptions<'_>) -> Result<Vec<LegOutcome>> {
    prepare_run_dir(opts.run_dir, legs)?;
    let mut groups = group(legs, opts.run_dir);
    for g in &mut groups {
        let text = job_script(g, legs, opts);
        std::fs::write(&g.script, text).map_err(|e| RegressError::io(&g.script, e))?;
        g.job = client::submit(&g.script, opts.run_dir).map_err(|e| e.to_string());
    }
    write_job_list(&groups, opts.run_dir)?;
    // Nothing submitted at all is Slurm missing or misconfigured here, not
    // a property of any case: say it once, as a harness error.
    if let Some(Err(first)) = groups.first().map(|g| &g.job) {
        if groups.iter().all(|g| g.job.is_err()) {
            return Err(RegressError::Slurm {
                command: "sbatch".into(),
                message: format!(
                    "no job could be submitted; the first attempt said: {first}\nCheck that Slurm's commands work here (`sinfo`), SLURM_CONF, and the [slurm] placements"
                ),
            });
        }
    }
    let stopped = wait(&groups, opts);
    let mut outcomes: Vec<Option<LegOutcome>> = legs.iter().map(|_| None).collect();
    for g in &groups {
        let records = final_records(g);
        for (task, &leg) in g.legs.iter().enumerate() {
            let record = records.get(&(task as u32));
            outcomes[leg] = Some(outcome(
                g,
                task,
                &legs[leg],
                record,
                stopped.as_deref(),
                opts,
            ));
        }
    }
    Ok(outcomes.into_iter().flatten().collect())
}

/// Create the run directory; empty each leg's folder, so files of an
/// earlier run in the same directory can never pass for this run's.
fn prepare_run_dir(dir: &Path, legs: &[BatchLeg]) -> Result<()> {
    if dir.display().to_string().chars().any(char::is_whitespace) {
        return Err(RegressError::Slurm {
            command: "cuport regress run --slurm".into(),
            message: format!(
                "the run directory `{}` contains whitespace, which #SBATCH --output cannot take; pick another with --slurm-dir",
                dir.display()
            ),
        });
    }
    for sub in ["jobs", "legs"] {
        let path = dir.join(sub);
        std::fs::create_dir_all(&path).map_err(|e| RegressError::io(path, e))?;
    }
    for leg in legs {
        let path = dir.join("legs").join(&leg.name);
        match std::fs::remove_dir_all(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(RegressError::io(path, e))
            }
            _ => {}
        }
        std::fs::create_dir_all(&path).map_err(|e| RegressError::io(path, e))?;
    }
    Ok(())
}

/// Legs with the same placement share one job array; a name that two
/// case files define differently gets a `-2` suffix.
fn group(legs: &[BatchLeg], run_dir: &Path) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (index, leg) in legs.iter().enumerate() {
        let same_name = |g: &&mut Group| g.placement_name == leg.placement_name;
        if let Some(g) = groups
            .iter_mut()
            .filter(same_name)
            .find(|g| g.placement == leg.placement)
        {
            g.legs.push(index);
            continue;
        }
        let name = match groups.iter_mut().filter(same_name).count() {
            0 => leg.placement_name.clone(),
            n => format!("{}-{}", leg.placement_name, n + 1),
        };
        groups.push(Group {
            script: run_dir.join("jobs").join(format!("{name}.sh")),
            name,
            placement_name: leg.placement_name.clone(),
            placement: leg.placement.clone(),
            legs: vec![index],
            job: Err("not submitted".into()),
        });
    }
    groups
}

fn job_script(g: &Group, legs: &[BatchLeg], opts: &BatchOptions<'_>) -> String {
    let script_legs: Vec<ScriptLeg> = g
        .legs
        .iter()
        .map(|&i| {
            let leg = &legs[i];
            let dir = opts.run_dir.join("legs").join(&leg.name);
            ScriptLeg {
                cwd: leg.request.cwd.clone().unwrap_or_else(|| dir.clone()),
                dir,
                command: shell_line(&leg.request.command),
                env: leg.request.env.clone(),
                timeout_s: leg.request.timeout.as_secs_f64(),
            }
        })
        .collect();
    script::render(&JobSpec {
        name: &g.name,
        placement: &g.placement,
        run_dir: opts.run_dir,
        legs: &script_legs,
        max_concurrent: opts.max_concurrent,
    })
}

/// The command as one `sh -c` line.
pub fn shell_line(command: &CommandSpec) -> String {
    match command {
        CommandSpec::Shell(s) => s.clone(),
        CommandSpec::Argv(argv) => argv
            .iter()
            .map(|a| script::sh_quote(&a.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// `jobs.json`: placement → job id, so a user can `scancel` by hand.
fn write_job_list(groups: &[Group], run_dir: &Path) -> Result<()> {
    let list: BTreeMap<&str, serde_json::Value> = groups
        .iter()
        .map(|g| {
            let value = match &g.job {
                Ok(id) => {
                    serde_json::json!({"job_id": id, "script": g.script, "legs": g.legs.len()})
                }
                Err(e) => serde_json::json!({"error": e, "script": g.script}),
            };
            (g.name.as_str(), value)
        })
        .collect();
    let path = run_dir.join("jobs.json");
    let text = serde_json::to_string_pretty(&list)
        .map_err(|e| RegressError::format(&path, e.to_string()))?;
    std::fs::write(&path, text + "\n").map_err(|e| RegressError::io(path, e))
}

/// Poll until every submitted job is final; on a stop reason or the wait
/// timeout, `scancel` them and wait a little longer. Returns why the jobs
/// were cancelled, if they were.
fn wait(groups: &[Group], opts: &BatchOptions<'_>) -> Option<String> {
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
fn final_records(g: &Group) -> BTreeMap<u32, JobRecord> {
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

fn outcome(
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

    fn leg(placement_name: &str, partition: &str, timeout_s: f64) -> BatchLeg {
        BatchLeg {
            placement_name: placement_name.into(),
            placement: Placement {
                partition: Some(partition.into()),
                ..Placement::default()
            },
            name: format!("leg-{placement_name}"),
            request: LegRequest {
                command: CommandSpec::Shell("true".into()),
                cwd: None,
                timeout: Duration::from_secs_f64(timeout_s),
                env: Vec::new(),
            },
        }
    }

    #[test]
    fn legs_of_one_placement_share_an_array() {
        let legs = [
            leg("cuda", "cuda", 1.0),
            leg("ascend", "ascend", 1.0),
            leg("cuda", "cuda", 1.0),
            // Same name, different table (another case file): its own job.
            leg("cuda", "gpu-big", 1.0),
        ];
        let groups = group(&legs, Path::new("/run"));
        let names: Vec<(&str, &[usize])> = groups
            .iter()
            .map(|g| (g.name.as_str(), g.legs.as_slice()))
            .collect();
        assert_eq!(
            names,
            [
                ("cuda", &[0, 2][..]),
                ("ascend", &[1][..]),
                ("cuda-2", &[3][..])
            ]
        );
        assert_eq!(groups[2].script, Path::new("/run/jobs/cuda-2.sh"));
    }

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

    #[test]
    fn argv_commands_become_one_quoted_line() {
        let argv = CommandSpec::Argv(vec!["/opt/cu port".into(), "it's".into()]);
        assert_eq!(shell_line(&argv), r"'/opt/cu port' 'it'\''s'");
    }
}
