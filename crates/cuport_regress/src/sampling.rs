//! Adaptive sampling: warm up, then take samples until the relative noise
//! is low enough or the time budget is spent.
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::stats::relative_noise;

/// Sampling settings as written in case files (`[case.perf]`); unset fields
/// inherit from `[defaults.perf]`, then from [`Sampling::default`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerfSettings {
    /// Relative median change that counts as a regression (default 0.05).
    pub threshold: Option<f64>,
    /// Mann–Whitney significance level (default 0.01).
    pub alpha: Option<f64>,
    pub min_samples: Option<usize>,
    pub max_samples: Option<usize>,
    /// Stop once 1.4826·MAD/median is below this (default 0.01).
    pub max_noise: Option<f64>,
    /// Measured seconds to spend per leg at most (default 5).
    pub budget_s: Option<f64>,
    /// Seconds of warm-up before sampling (default 0.05).
    pub warmup_s: Option<f64>,
    /// A sample repeats the op until it lasts this long (default 1e-4 s), so
    /// timer resolution does not dominate tiny ops.
    pub min_sample_s: Option<f64>,
}

impl PerfSettings {
    pub fn or(&self, base: &PerfSettings) -> PerfSettings {
        PerfSettings {
            threshold: self.threshold.or(base.threshold),
            alpha: self.alpha.or(base.alpha),
            min_samples: self.min_samples.or(base.min_samples),
            max_samples: self.max_samples.or(base.max_samples),
            max_noise: self.max_noise.or(base.max_noise),
            budget_s: self.budget_s.or(base.budget_s),
            warmup_s: self.warmup_s.or(base.warmup_s),
            min_sample_s: self.min_sample_s.or(base.min_sample_s),
        }
    }

    pub fn sampling(&self) -> Sampling {
        let d = Sampling::default();
        let min_samples = self.min_samples.unwrap_or(d.min_samples).max(1);
        Sampling {
            min_samples,
            max_samples: self.max_samples.unwrap_or(d.max_samples).max(min_samples),
            max_noise: self.max_noise.unwrap_or(d.max_noise),
            budget_s: self.budget_s.unwrap_or(d.budget_s),
            warmup_s: self.warmup_s.unwrap_or(d.warmup_s),
            min_sample_s: self.min_sample_s.unwrap_or(d.min_sample_s),
        }
    }

    pub fn decision(&self) -> crate::stats::DecisionConfig {
        let d = crate::stats::DecisionConfig::default();
        crate::stats::DecisionConfig {
            threshold: self.threshold.unwrap_or(d.threshold),
            alpha: self.alpha.unwrap_or(d.alpha),
            ..d
        }
    }
}

/// Resolved sampling settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    pub min_samples: usize,
    pub max_samples: usize,
    pub max_noise: f64,
    pub budget_s: f64,
    pub warmup_s: f64,
    pub min_sample_s: f64,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            min_samples: 10,
            max_samples: 30,
            max_noise: 0.01,
            budget_s: 5.0,
            warmup_s: 0.05,
            min_sample_s: 1e-4,
        }
    }
}

/// Something that can be timed: run the op `iters` times, return seconds.
pub trait SampleSource {
    fn run(&mut self, iters: u32) -> Result<f64>;
}

/// Per-iteration seconds. The budget counts measured time only, so the
/// stopping rule is deterministic for synthetic sources.
pub fn collect(source: &mut dyn SampleSource, cfg: &Sampling) -> Result<Vec<f64>> {
    let iters = warm_up(source, cfg)?;
    let mut samples = Vec::with_capacity(cfg.max_samples);
    let mut spent = 0.0;
    while samples.len() < cfg.max_samples {
        let t = source.run(iters)?;
        spent += t;
        samples.push(t / f64::from(iters));
        let enough = samples.len() >= cfg.min_samples;
        if enough && (relative_noise(&samples) <= cfg.max_noise || spent >= cfg.budget_s) {
            break;
        }
    }
    Ok(samples)
}

/// Run for `warmup_s` and pick how many iterations make one sample.
fn warm_up(source: &mut dyn SampleSource, cfg: &Sampling) -> Result<u32> {
    let mut spent = 0.0;
    let mut last = source.run(1)?;
    spent += last;
    while spent < cfg.warmup_s {
        last = source.run(1)?;
        spent += last;
    }
    if last <= 0.0 || last >= cfg.min_sample_s {
        return Ok(1);
    }
    Ok((cfg.min_sample_s / last).ceil().min(1e6) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Constant(f64);
    impl SampleSource for Constant {
        fn run(&mut self, iters: u32) -> Result<f64> {
            Ok(self.0 * f64::from(iters))
        }
    }

    #[test]
    fn quiet_source_stops_at_min_samples_and_tiny_ops_are_batched() -> Result<()> {
        let cfg = Sampling::default();
        let samples = collect(&mut Constant(1e-6), &cfg)?;
        assert_eq!(samples.len(), cfg.min_samples);
        assert!((samples[0] - 1e-6).abs() < 1e-15);
        Ok(())
    }
}
