//! The canonical, versioned result of a run; every other format (Markdown,
//! JUnit, HTML) is rendered from it.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::device::DeviceIdentity;
use crate::dtype::DType;
use crate::exec::ExitState;
use crate::interrupt::Interruption;
use crate::metrics::AccuracyMetrics;
use crate::stats::{geometric_mean, mad, median, relative_noise, PerfComparison};

mod summary;

use summary::summarise;
pub use summary::{Summary, Verdict, COMPARED};

pub const REPORT_FORMAT: &str = "cuport-regress-report";
pub const REPORT_VERSION: u32 = 1;

/// Result of one check, and of a case (the worst of its checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    /// Not judged: a leg whose backend is missing here, a baseline for
    /// another device, a skip allowed by `--allow-skip`.
    Skipped,
    Uncertain,
    /// Legs did not run here, so the case's comparison is missing, and
    /// skips are not allowed: fails the gate.
    Incomplete,
    Fail,
    /// A leg crashed, hung or wrote unreadable files.
    Error,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Skipped => "skipped",
            Outcome::Uncertain => "uncertain",
            Outcome::Incomplete => "INCOMPLETE",
            Outcome::Fail => "FAIL",
            Outcome::Error => "ERROR",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseKind {
    Op,
    App,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    Leg,
    Accuracy,
    PerfBaseline,
    PerfCross,
    /// Whether the case could run and be compared at all: `compared`
    /// (skipped legs), `memory` (over the limit), `interrupted`.
    Harness,
}

/// Samples of one timed region and their summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionStats {
    pub samples: Vec<f64>,
    pub median: f64,
    pub mad: f64,
    pub relative_noise: f64,
}

impl RegionStats {
    pub fn new(samples: Vec<f64>) -> RegionStats {
        RegionStats {
            median: median(&samples),
            mad: mad(&samples),
            relative_noise: relative_noise(&samples),
            samples,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LegState {
    Ok,
    Skipped { reason: String },
    Failed { reason: String },
}

/// One leg of a case as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LegReport {
    /// Backend name (`cpu`, `cuda`, ...) or `exec` for application legs.
    pub backend: String,
    /// `reference` or `candidate` (op cases: the first backend is the reference).
    pub role: String,
    pub command: String,
    pub device: Option<DeviceIdentity>,
    pub exit: Option<ExitState>,
    pub state: LegState,
    pub wall_s: f64,
    pub log_excerpt: String,
    pub regions: BTreeMap<String, RegionStats>,
    /// Set when the leg ran as a Slurm job (`regress run --slurm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm: Option<SlurmLeg>,
}

/// Where and how Slurm ran a leg.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SlurmLeg {
    /// `ARRAYJOB_TASK`, as `squeue`, `sacct` and `scancel` accept it.
    pub job_id: String,
    /// Name of the `[slurm.placement.NAME]` the leg used.
    pub placement: String,
    pub partition: Option<String>,
    pub node: Option<String>,
    /// Slurm's final job state (`COMPLETED`, `FAILED`, `TIMEOUT`, ...).
    pub state: String,
    /// Slurm's `EXIT:SIGNAL` pair.
    pub exit_code: Option<String>,
    pub reason: Option<String>,
    /// The generated batch script, kept in the run directory.
    pub script: String,
}

impl LegReport {
    /// The key baselines use for this leg.
    pub fn baseline_backend(&self) -> String {
        if self.backend == "exec" {
            format!("exec:{}", self.role)
        } else {
            self.backend.clone()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub kind: CheckKind,
    pub outcome: Outcome,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub accuracy: Option<AccuracyMetrics>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub perf: Option<PerfComparison>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseReport {
    pub name: String,
    pub kind: CaseKind,
    pub file: String,
    pub op: Option<String>,
    pub dtype: Option<DType>,
    pub shape_class: Option<String>,
    pub legs: Vec<LegReport>,
    pub checks: Vec<Check>,
    pub outcome: Outcome,
}

impl CaseReport {
    /// Whether anything was measured against something: an accuracy or
    /// performance check that computed its metrics.
    pub fn compared(&self) -> bool {
        self.checks
            .iter()
            .any(|c| c.accuracy.is_some() || c.perf.is_some())
    }

    /// Whether a leg was skipped (its backend cannot run it here).
    pub fn skipped_legs(&self) -> bool {
        self.legs
            .iter()
            .any(|l| matches!(l.state, LegState::Skipped { .. }))
    }

    /// Worst check outcome; all-skipped stays skipped.
    pub fn settle(&mut self) {
        let ran = self
            .checks
            .iter()
            .map(|c| c.outcome)
            .filter(|o| *o != Outcome::Skipped);
        self.outcome = ran.max().unwrap_or(Outcome::Skipped);
    }
}

/// Candidate vs reference speed for one case and region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossRatio {
    pub case: String,
    pub reference: String,
    pub candidate: String,
    pub region: String,
    /// `median(candidate) / median(reference)`: above 1 means slower.
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// Fastest backend for one op and shape class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementRow {
    pub op: String,
    pub shape_class: String,
    pub fastest: String,
    /// Geometric mean of the fastest backend's medians, seconds.
    pub median_s: f64,
    pub runner_up: Option<String>,
    /// How many times faster than the runner-up.
    pub speedup: Option<f64>,
    /// Worst accuracy outcome of the fastest backend in this class.
    pub accuracy: Outcome,
    /// Every backend's geometric-mean median, seconds.
    pub backends: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub format: String,
    pub version: u32,
    pub host: String,
    pub created_unix_s: u64,
    pub cases: Vec<CaseReport>,
    pub cross_backend: Vec<CrossRatio>,
    /// `"candidate/reference"` → geometric mean of the per-case ratios.
    pub cross_geomean: BTreeMap<String, f64>,
    pub placement: Vec<PlacementRow>,
    /// Set when a signal stopped the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<Interruption>,
    /// Set when the harness could not run (the report then has no cases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub summary: Summary,
}

impl RunReport {
    /// Assemble the report: cross ratios, the placement advice computed
    /// from the cases (`crate::placement`), and the gate's verdict.
    pub fn new(
        cases: Vec<CaseReport>,
        cross_backend: Vec<CrossRatio>,
        placement: Vec<PlacementRow>,
        uncertain_fails: bool,
    ) -> RunReport {
        let mut pairs: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for c in &cross_backend {
            pairs
                .entry(format!("{}/{}", c.candidate, c.reference))
                .or_default()
                .push(c.ratio);
        }
        let cross_geomean = pairs
            .into_iter()
            .filter_map(|(k, v)| geometric_mean(&v).map(|g| (k, g)))
            .collect();
        let summary = summarise(&cases, uncertain_fails, None, None);
        RunReport {
            format: REPORT_FORMAT.to_owned(),
            version: REPORT_VERSION,
            host: crate::device::host_name(),
            created_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            cases,
            cross_backend,
            cross_geomean,
            placement,
            interrupted: None,
            error: None,
            summary,
        }
    }

    /// The report of a run the harness could not carry out, so that CI
    /// still finds its report files: no cases, verdict ERROR, `message`.
    pub fn harness_error(message: String) -> RunReport {
        let mut report = RunReport::new(Vec::new(), Vec::new(), Vec::new(), false);
        report.error = Some(message);
        report.resettle();
        report
    }

    /// Mark the run as stopped by `why` (verdict INTERRUPTED).
    pub fn interrupt(&mut self, why: Interruption) {
        self.interrupted = Some(why);
        self.resettle();
    }

    /// Recompute the summary (after baseline checks were added).
    pub fn resettle(&mut self) {
        self.cases.iter_mut().for_each(CaseReport::settle);
        self.summary = summarise(
            &self.cases,
            self.summary.uncertain_fails,
            self.interrupted.as_ref(),
            self.error.as_deref(),
        );
    }
}
