//! Stored baselines: raw samples keyed by case × backend × region × device.
//! A result is never compared with a baseline from a different device.
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::device::DeviceIdentity;
use crate::error::{RegressError, Result};
use crate::report::{Check, CheckKind, LegState, Outcome, RunReport};
use crate::stats::{compare_samples, median, DecisionConfig, PerfVerdict};

pub const BASELINE_FORMAT: &str = "cuport-regress-baseline";
pub const BASELINE_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineEntry {
    pub case: String,
    pub backend: String,
    pub region: String,
    pub device: DeviceIdentity,
    pub median: f64,
    pub samples: Vec<f64>,
    pub recorded_unix_s: u64,
}

impl BaselineEntry {
    fn same_slot(&self, other: &BaselineEntry) -> bool {
        self.case == other.case
            && self.backend == other.backend
            && self.region == other.region
            && self.device.fingerprint() == other.device.fingerprint()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineFile {
    pub format: String,
    pub version: u32,
    pub entries: Vec<BaselineEntry>,
}

impl Default for BaselineFile {
    fn default() -> Self {
        BaselineFile {
            format: BASELINE_FORMAT.to_owned(),
            version: BASELINE_VERSION,
            entries: Vec::new(),
        }
    }
}

/// What a lookup found for one leg and region.
#[derive(Debug)]
pub enum Lookup<'a> {
    Found(&'a BaselineEntry),
    /// Entries exist for this case and backend, but on other devices.
    OtherDevices(Vec<String>),
    Missing,
}

impl BaselineFile {
    pub fn load(path: &Path) -> Result<BaselineFile> {
        let text = std::fs::read_to_string(path).map_err(|e| RegressError::io(path, e))?;
        let err = |message: String| RegressError::Baseline {
            path: path.to_owned(),
            message,
        };
        let file: BaselineFile = serde_json::from_str(&text).map_err(|e| err(e.to_string()))?;
        if file.format != BASELINE_FORMAT || file.version != BASELINE_VERSION {
            return Err(err(format!(
                "format `{}` version {} is not `{BASELINE_FORMAT}` version {BASELINE_VERSION}; re-save it with `cuport regress baseline save`",
                file.format, file.version
            )));
        }
        Ok(file)
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(|e| RegressError::Baseline {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        std::fs::write(path, text + "\n").map_err(|e| RegressError::io(path, e))
    }

    /// Every successful leg's regions in `report`.
    pub fn from_report(report: &RunReport) -> BaselineFile {
        let mut file = BaselineFile::default();
        for case in &report.cases {
            for leg in case.legs.iter().filter(|l| l.state == LegState::Ok) {
                let Some(device) = &leg.device else { continue };
                for (region, stats) in &leg.regions {
                    file.entries.push(BaselineEntry {
                        case: case.name.clone(),
                        backend: leg.baseline_backend(),
                        region: region.clone(),
                        device: device.clone(),
                        median: median(&stats.samples),
                        samples: stats.samples.clone(),
                        recorded_unix_s: report.created_unix_s,
                    });
                }
            }
        }
        file
    }

    /// Add `newer`'s entries, replacing those with the same key.
    pub fn merge(&mut self, newer: BaselineFile) {
        for entry in newer.entries {
            self.entries.retain(|e| !e.same_slot(&entry));
            self.entries.push(entry);
        }
        self.entries.sort_by(|a, b| {
            (&a.case, &a.backend, &a.region).cmp(&(&b.case, &b.backend, &b.region))
        });
    }

    pub fn lookup(
        &self,
        case: &str,
        backend: &str,
        region: &str,
        device: &DeviceIdentity,
    ) -> Lookup<'_> {
        let mut others = Vec::new();
        for e in self
            .entries
            .iter()
            .filter(|e| e.case == case && e.backend == backend && e.region == region)
        {
            if e.device.fingerprint() == device.fingerprint() {
                return Lookup::Found(e);
            }
            others.push(e.device.fingerprint());
        }
        if others.is_empty() {
            Lookup::Missing
        } else {
            Lookup::OtherDevices(others)
        }
    }
}

/// Add a `perf:baseline:<backend>:<region>` check to every successful leg
/// of `report` and recompute the gate.
pub fn apply(report: &mut RunReport, baseline: &BaselineFile, cfg: &DecisionConfig) {
    for case in &mut report.cases {
        let mut checks = Vec::new();
        for leg in case.legs.iter().filter(|l| l.state == LegState::Ok) {
            let Some(device) = &leg.device else { continue };
            for (region, stats) in &leg.regions {
                let found = baseline.lookup(&case.name, &leg.baseline_backend(), region, device);
                checks.push(check(
                    &leg.baseline_backend(),
                    region,
                    &stats.samples,
                    found,
                    cfg,
                ));
            }
        }
        case.checks.retain(|c| c.kind != CheckKind::PerfBaseline);
        case.checks.extend(checks);
    }
    report.resettle();
}

fn check(
    backend: &str,
    region: &str,
    samples: &[f64],
    found: Lookup<'_>,
    cfg: &DecisionConfig,
) -> Check {
    let name = format!("perf:baseline:{backend}:{region}");
    let skipped = |message: String| Check {
        name: name.clone(),
        kind: CheckKind::PerfBaseline,
        outcome: Outcome::Skipped,
        message,
        accuracy: None,
        perf: None,
    };
    match found {
        Lookup::Missing => skipped("no baseline for this case, backend and region".into()),
        Lookup::OtherDevices(devices) => skipped(format!(
            "baseline exists only for other devices ({}); results are never compared across devices",
            devices.join("; ")
        )),
        Lookup::Found(entry) => {
            let cmp = compare_samples(&entry.samples, samples, cfg);
            let outcome = match cmp.verdict {
                PerfVerdict::Slower => Outcome::Fail,
                PerfVerdict::Uncertain => Outcome::Uncertain,
                PerfVerdict::Same | PerfVerdict::Faster => Outcome::Pass,
            };
            let message = format!(
                "{} vs baseline: median {:.4e} s → {:.4e} s ({:+.1}%, 95% CI of ratio [{:.3}, {:.3}], Mann–Whitney p={:.2e})",
                cmp.verdict,
                cmp.base_median,
                cmp.new_median,
                (cmp.ratio - 1.0) * 100.0,
                cmp.ci_low,
                cmp.ci_high,
                cmp.p_value
            );
            Check { name, kind: CheckKind::PerfBaseline, outcome, message, accuracy: None, perf: Some(cmp) }
        }
    }
}
