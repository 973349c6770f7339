//! Robust timing statistics: median, MAD, Mann–Whitney U, a bootstrap
//! confidence interval of the median ratio, and the verdict built on them.
use serde::{Deserialize, Serialize};

use crate::rng::SplitMix64;

/// Median of `xs` (NaN-free); 0 for an empty slice.
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    median_in_place(&mut v)
}

fn median_in_place(v: &mut [f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    let (_, hi, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        return hi;
    }
    let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    0.5 * (lo + hi)
}

/// Median absolute deviation (unscaled).
pub fn mad(xs: &[f64]) -> f64 {
    let m = median(xs);
    let mut dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    median_in_place(&mut dev)
}

/// Robust relative noise: 1.4826·MAD / median (≈ stdev/mean for normal data).
pub fn relative_noise(xs: &[f64]) -> f64 {
    let m = median(xs);
    if m == 0.0 {
        return f64::INFINITY;
    }
    1.4826 * mad(xs) / m
}

/// Two-sided Mann–Whitney U p-value: normal approximation with tie and
/// continuity corrections (adequate from about 8 samples per side).
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    if a.is_empty() || b.is_empty() {
        return 1.0;
    }
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (mut rank_a, mut tie_term, mut i) = (0.0, 0.0, 0);
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let avg_rank = (i + j) as f64 / 2.0 + 1.0;
        let ties = (j - i + 1) as f64;
        tie_term += ties * ties * ties - ties;
        rank_a += avg_rank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        i = j + 1;
    }
    let u = rank_a - n1 * (n1 + 1.0) / 2.0;
    let n = n1 + n2;
    let var = n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - n1 * n2 / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
    (2.0 * normal_sf(z)).min(1.0)
}

/// Upper tail of the standard normal, via erfc.
fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// Percentile bootstrap CI of `median(new) / median(base)`. Deterministic:
/// the resampling seed is fixed, so a report can be regenerated exactly.
pub fn bootstrap_median_ratio(
    base: &[f64],
    new: &[f64],
    resamples: usize,
    confidence: f64,
) -> (f64, f64) {
    if base.is_empty() || new.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mut rng =
        SplitMix64::new(0x005E_ED0F_B007 ^ ((base.len() as u64) << 32) ^ (new.len() as u64));
    let (mut rb, mut rn) = (vec![0.0; base.len()], vec![0.0; new.len()]);
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        resample(&mut rng, base, &mut rb);
        resample(&mut rng, new, &mut rn);
        ratios.push(median_in_place(&mut rn) / median_in_place(&mut rb));
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| ratios[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    (at(tail), at(1.0 - tail))
}

fn resample(rng: &mut SplitMix64, from: &[f64], into: &mut [f64]) {
    for slot in into.iter_mut() {
        *slot = from[(rng.next_u64() % from.len() as u64) as usize];
    }
}

/// Performance verdict of `new` against `base`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PerfVerdict {
    Faster,
    Same,
    Slower,
    Uncertain,
}

impl std::fmt::Display for PerfVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PerfVerdict::Faster => "FASTER",
            PerfVerdict::Same => "SAME",
            PerfVerdict::Slower => "SLOWER",
            PerfVerdict::Uncertain => "UNCERTAIN",
        })
    }
}

/// Decision thresholds; defaults follow regress-methods.md §1.8.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DecisionConfig {
    /// Relative change of the median that matters (τ).
    pub threshold: f64,
    /// Significance level of the Mann–Whitney test.
    pub alpha: f64,
    /// The CI must clear ±this before FASTER/SLOWER is claimed.
    pub noise_floor: f64,
    pub resamples: usize,
    pub confidence: f64,
    /// Below this many samples on either side the verdict is UNCERTAIN.
    pub min_samples: usize,
}

impl Default for DecisionConfig {
    fn default() -> Self {
        DecisionConfig {
            threshold: 0.05,
            alpha: 0.01,
            noise_floor: 0.01,
            resamples: 2000,
            confidence: 0.95,
            min_samples: 9,
        }
    }
}

/// The numbers behind a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerfComparison {
    pub verdict: PerfVerdict,
    /// `median(new) / median(base)`.
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p_value: f64,
    pub base_median: f64,
    pub new_median: f64,
    pub base_samples: usize,
    pub new_samples: usize,
}

/// SLOWER iff the median moved up by more than τ, Mann–Whitney rejects
/// equality at α, and the whole CI lies above 1 + noise floor (FASTER
/// mirrors it); SAME iff the CI lies inside 1 ± τ; otherwise UNCERTAIN.
pub fn compare_samples(base: &[f64], new: &[f64], cfg: &DecisionConfig) -> PerfComparison {
    let (base_median, new_median) = (median(base), median(new));
    let ratio = new_median / base_median;
    let p_value = mann_whitney_p(base, new);
    let (ci_low, ci_high) = bootstrap_median_ratio(base, new, cfg.resamples, cfg.confidence);
    let enough = base.len() >= cfg.min_samples && new.len() >= cfg.min_samples;
    let significant = p_value < cfg.alpha;
    let verdict = if !enough || !ratio.is_finite() {
        PerfVerdict::Uncertain
    } else if significant && ratio > 1.0 + cfg.threshold && ci_low > 1.0 + cfg.noise_floor {
        PerfVerdict::Slower
    } else if significant && ratio < 1.0 - cfg.threshold && ci_high < 1.0 - cfg.noise_floor {
        PerfVerdict::Faster
    } else if ci_low >= 1.0 - cfg.threshold && ci_high <= 1.0 + cfg.threshold {
        PerfVerdict::Same
    } else {
        PerfVerdict::Uncertain
    };
    PerfComparison {
        verdict,
        ratio,
        ci_low,
        ci_high,
        p_value,
        base_median,
        new_median,
        base_samples: base.len(),
        new_samples: new.len(),
    }
}

/// Geometric mean of positive ratios (None if there are none).
pub fn geometric_mean(ratios: &[f64]) -> Option<f64> {
    let usable: Vec<f64> = ratios
        .iter()
        .copied()
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    if usable.is_empty() {
        return None;
    }
    Some((usable.iter().map(|r| r.ln()).sum::<f64>() / usable.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_mad_of_small_sets() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), 1.0);
    }

    #[test]
    fn mann_whitney_separates_disjoint_samples() {
        let a: Vec<f64> = (0..12).map(f64::from).collect();
        let b: Vec<f64> = (100..112).map(f64::from).collect();
        assert!(mann_whitney_p(&a, &b) < 1e-4);
        assert!(mann_whitney_p(&a, &a) > 0.9);
    }

    #[test]
    fn clear_slowdown_is_slower_and_identical_is_same() {
        let base: Vec<f64> = (0..20).map(|i| 1.0 + 0.001 * f64::from(i % 5)).collect();
        let slow: Vec<f64> = base.iter().map(|x| x * 1.2).collect();
        let cfg = DecisionConfig::default();
        assert_eq!(
            compare_samples(&base, &slow, &cfg).verdict,
            PerfVerdict::Slower
        );
        assert_eq!(
            compare_samples(&slow, &base, &cfg).verdict,
            PerfVerdict::Faster
        );
        assert_eq!(
            compare_samples(&base, &base, &cfg).verdict,
            PerfVerdict::Same
        );
        assert_eq!(
            compare_samples(&base[..4], &slow[..4], &cfg).verdict,
            PerfVerdict::Uncertain
        );
    }

    #[test]
    fn geometric_mean_of_reciprocals_is_one() {
        let g = geometric_mean(&[2.0, 0.5]).unwrap_or(0.0);
        assert!((g - 1.0).abs() < 1e-12);
    }
}
