//! Calling Slurm's commands (`sbatch`, `scontrol`, `sacct`, `scancel`)
//! found on `PATH`, as the user would.
use std::path::Path;
use std::process::{Command, Output};

use super::parse::{parse_parsable, parse_sacct, parse_scontrol, JobRecord, SACCT_FORMAT};
use crate::error::{RegressError, Result};

fn run(tool: &str, args: &[&str], cwd: Option<&Path>) -> Result<Output> {
    let mut cmd = Command::new(tool);
    cmd.args(args);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    cmd.output().map_err(|e| RegressError::Slurm {
        command: shown(tool, args),
        message: format!(
            "cannot run it: {e}; install Slurm's client commands (Debian: apt-get install slurm-client) or put them on PATH"
        ),
    })
}

fn shown(tool: &str, args: &[&str]) -> String {
    std::iter::once(tool)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ")
}

fn failure(tool: &str, args: &[&str], out: &Output) -> RegressError {
    let stderr = String::from_utf8_lossy(&out.stderr);
    RegressError::Slurm {
        command: shown(tool, args),
        message: format!("{} ({})", stderr.trim(), out.status),
    }
}

/// Submit `script` with `sbatch --parsable` from `cwd`; the job id.
pub fn submit(script: &Path, cwd: &Path) -> Result<String> {
    let path = script.display().to_string();
    let args = ["--parsable", path.as_str()];
    let out = run("sbatch", &args, Some(cwd))?;
    if !out.status.success() {
        return Err(failure("sbatch", &args, &out));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    parse_parsable(&stdout).ok_or_else(|| RegressError::Slurm {
        command: shown("sbatch", &args),
        message: format!("printed no job id: `{}`", stdout.trim()),
    })
}

/// The records of `job` (every task of an array), or `None` once Slurm
/// has forgotten it (`MinJobAge` passed) or never knew it.
pub fn show_job(job: &str) -> Result<Option<Vec<JobRecord>>> {
    let args = ["show", "job", "-o", job];
    let out = run("scontrol", &args, None)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        if stderr.contains("Invalid job id") {
            return Ok(None);
        }
        return Err(failure("scontrol", &args, &out));
    }
    Ok(Some(parse_scontrol(&String::from_utf8_lossy(&out.stdout))))
}

/// What the accounting database says about `job`; empty when accounting
/// is off on this cluster.
pub fn accounting(job: &str) -> Vec<JobRecord> {
    let args = ["-X", "-n", "-P", "-o", SACCT_FORMAT, "-j", job];
    match run("sacct", &args, None) {
        Ok(out) if out.status.success() => parse_sacct(&String::from_utf8_lossy(&out.stdout)),
        _ => Vec::new(),
    }
}

/// `scancel` the jobs (all their tasks).
pub fn cancel(jobs: &[String]) -> Result<()> {
    if jobs.is_empty() {
        return Ok(());
    }
    let args: Vec<&str> = jobs.iter().map(String::as_str).collect();
    let out = run("scancel", &args, None)?;
    if out.status.success() {
        Ok(())
    } else {
        Err(failure("scancel", &args, &out))
    }
}
