//! Submitting legs as job arrays (one per placement), waiting for them,
//! cancelling them on a signal or timeout, and reading back what each leg
//! left in the run directory together with Slurm's verdict.
use std::collections::BTreeMap;
use std::path::Path;

use super::client;
use super::legs::Group;
pub use super::legs::{BatchLeg, BatchOptions, LegOutcome, NOT_SUBMITTED};
use super::outcome::outcome;
use super::script::{self, JobSpec, ScriptLeg};
use super::wait::{await_status_files, final_records, wait};
use crate::error::{RegressError, Result};
use crate::exec::CommandSpec;

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
    let records: Vec<_> = groups.iter().map(final_records).collect();
    await_status_files(&groups, &records, legs, opts.run_dir);
    let mut outcomes: Vec<Option<LegOutcome>> = legs.iter().map(|_| None).collect();
    for (g, records) in groups.iter().zip(&records) {
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

#[cfg(test)]
pub(super) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::exec::LegRequest;
    use crate::slurm::config::Placement;

    pub(in crate::slurm) fn leg(placement_name: &str, partition: &str, timeout_s: f64) -> BatchLeg {
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
    fn argv_commands_become_one_quoted_line() {
        let argv = CommandSpec::Argv(vec!["/opt/cu port".into(), "it's".into()]);
        assert_eq!(shell_line(&argv), r"'/opt/cu port' 'it'\''s'");
    }
}
