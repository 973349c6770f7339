//! The Slurm flags of `cuport regress run` and the run they start.
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use cuport_regress::case::LoadedFile;
use cuport_regress::report::{CaseReport, RunReport};
use cuport_regress::run::{self, RunOptions, SlurmRunOptions};
use cuport_regress::slurm;

use crate::output::Output;

#[derive(Debug, Args)]
#[command(next_help_heading = "Slurm")]
pub(super) struct SlurmArgs {
    /// Submit every leg as a Slurm job array task (sbatch); placements come
    /// from the case files' [slurm] tables.
    #[arg(long)]
    slurm: bool,
    /// A site file with one [slurm] table, used instead of the case files'
    /// (implies --slurm).
    #[arg(long, value_name = "FILE")]
    slurm_config: Option<PathBuf>,
    /// Run directory, on a filesystem the compute nodes share
    /// [default: ./cuport-slurm/run-<unix time>-<pid>].
    #[arg(long, value_name = "DIR")]
    slurm_dir: Option<PathBuf>,
    /// Most array tasks of one job running at once (--array=0-N%K).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    slurm_concurrency: Option<u32>,
    /// Seconds between two looks at the queue [default: 5].
    #[arg(long, value_name = "SECONDS")]
    slurm_poll: Option<f64>,
    /// Seconds to wait for the jobs before cancelling them [default: 86400].
    #[arg(long, value_name = "SECONDS")]
    slurm_wait_timeout: Option<f64>,
}

impl SlurmArgs {
    pub(super) fn enabled(&self) -> bool {
        self.slurm || self.slurm_config.is_some()
    }
}

/// `run --slurm`: submit, wait (Ctrl-C cancels the jobs), judge.
pub(super) fn run_slurm(
    files: &[LoadedFile],
    opts: &RunOptions<'_>,
    args: &SlurmArgs,
    out: &Output,
    on_case: &mut dyn FnMut(&CaseReport),
) -> anyhow::Result<RunReport> {
    let seconds = |flag: &str, v: Option<f64>| -> anyhow::Result<Option<Duration>> {
        match v {
            Some(s) if !(s.is_finite() && s > 0.0) => {
                bail!("--{flag}: expected a positive number of seconds, got {s}")
            }
            v => Ok(v.map(Duration::from_secs_f64)),
        }
    };
    let site = args
        .slurm_config
        .as_deref()
        .map(slurm::config::load)
        .transpose()?;
    let run_dir = slurm_run_dir(args.slurm_dir.as_deref())?;
    out.info(&format!(
        "Slurm run directory: {} (job scripts in jobs/, leg files and logs in legs/)",
        run_dir.display()
    ));
    let slurm_opts = SlurmRunOptions {
        run_dir,
        site,
        max_concurrent: args.slurm_concurrency,
        poll: seconds("slurm-poll", args.slurm_poll)?,
        wait_timeout: seconds("slurm-wait-timeout", args.slurm_wait_timeout)?,
    };
    Ok(run::run_files_slurm(files, opts, &slurm_opts, on_case)?)
}

/// Create the run directory and make its path absolute: job scripts and
/// `#SBATCH --output` must name it from any node.
fn slurm_run_dir(dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match dir {
        Some(d) => d.to_owned(),
        None => {
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            PathBuf::from("cuport-slurm").join(format!("run-{stamp}-{}", std::process::id()))
        }
    };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the Slurm run directory {}", dir.display()))?;
    dir.canonicalize()
        .with_context(|| format!("cannot resolve the Slurm run directory {}", dir.display()))
}
