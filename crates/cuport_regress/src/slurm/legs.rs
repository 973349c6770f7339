//! What a Slurm batch run is made of: the legs to run, how to submit them,
//! the job arrays they are grouped into, and what became of each leg.
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::config::Placement;
use crate::exec::{ExitState, LegRequest};
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

pub(super) struct Group {
    /// Unique: the job's and script's name.
    pub(super) name: String,
    pub(super) placement_name: String,
    pub(super) placement: Placement,
    pub(super) legs: Vec<usize>,
    pub(super) script: PathBuf,
    pub(super) job: std::result::Result<String, String>,
}

/// The job id of a leg whose array `sbatch` refused.
pub const NOT_SUBMITTED: &str = "not submitted";
