//! Running legs through Slurm (`cuport regress run --slurm`, issue 8).
//!
//! Legs are grouped by placement (`[slurm.placement.NAME]`: partition,
//! GRES, constraint, account, time, extra options, environment); each
//! group is one job array (`sbatch --parsable`, `--array=0-N%K`) whose
//! script is kept in the run directory. Each task writes its leg's files,
//! log, node and exit status into the run directory on the shared
//! filesystem; `cuport` polls `scontrol show job` until every task is
//! final, falls back to `sacct` for jobs Slurm has forgotten, and cancels
//! everything with `scancel` on SIGINT/SIGTERM or the wait timeout.
pub mod batch;
pub mod client;
pub mod config;
mod legs;
mod outcome;
pub mod parse;
pub mod script;
mod wait;

pub use batch::{BatchLeg, BatchOptions, LegOutcome};
pub use config::{Placement, SlurmConfig};
