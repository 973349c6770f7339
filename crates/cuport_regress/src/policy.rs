//! Turning accuracy metrics into pass/fail: hard checks, rtol/atol, and the
//! ratio policy against the f64 oracle.
use serde::{Deserialize, Serialize};

use crate::dtype::{DType, Tolerance};
use crate::metrics::AccuracyMetrics;

/// How a candidate's accuracy is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyKind {
    /// Candidate error vs the oracle ≤ `ratio` × reference-leg error + `floor`.
    Ratio,
    /// Candidate vs expected under (rtol, atol).
    Tolerance,
}

/// Accuracy settings as written in case files; unset fields inherit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccuracyConfig {
    pub policy: Option<PolicyKind>,
    pub rtol: Option<f64>,
    pub atol: Option<f64>,
    /// `k` of the ratio policy (default 2, as FlashAttention's tests).
    pub ratio: Option<f64>,
    /// Absolute slack of the ratio policy (default: the dtype's atol).
    pub floor: Option<f64>,
    /// Hard floor on cosine similarity (default 0.99, msprobe's level).
    pub min_cosine: Option<f64>,
    /// Share of elements allowed outside (rtol, atol) (default 0).
    pub max_mismatch_share: Option<f64>,
}

impl AccuracyConfig {
    /// `self` with unset fields taken from `base`.
    pub fn or(&self, base: &AccuracyConfig) -> AccuracyConfig {
        AccuracyConfig {
            policy: self.policy.or(base.policy),
            rtol: self.rtol.or(base.rtol),
            atol: self.atol.or(base.atol),
            ratio: self.ratio.or(base.ratio),
            floor: self.floor.or(base.floor),
            min_cosine: self.min_cosine.or(base.min_cosine),
            max_mismatch_share: self.max_mismatch_share.or(base.max_mismatch_share),
        }
    }

    pub fn resolve(&self, dtype: DType, default_policy: PolicyKind) -> AccuracyPolicy {
        let table = dtype.default_tolerance();
        let tolerance = Tolerance {
            rtol: self.rtol.unwrap_or(table.rtol),
            atol: self.atol.unwrap_or(table.atol),
        };
        AccuracyPolicy {
            kind: self.policy.unwrap_or(default_policy),
            tolerance,
            ratio: self.ratio.unwrap_or(2.0),
            floor: self.floor.unwrap_or(tolerance.atol),
            min_cosine: self.min_cosine.unwrap_or(0.99),
            max_mismatch_share: self.max_mismatch_share.unwrap_or(0.0),
        }
    }
}

/// Fully resolved accuracy settings for one output.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AccuracyPolicy {
    pub kind: PolicyKind,
    pub tolerance: Tolerance,
    pub ratio: f64,
    pub floor: f64,
    pub min_cosine: f64,
    pub max_mismatch_share: f64,
}

/// Failures that no policy can excuse: layout, non-finite values, direction.
pub fn hard_failures(m: &AccuracyMetrics, policy: &AccuracyPolicy) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(s) = &m.shape_mismatch {
        out.push(format!("shape mismatch: {s}"));
    }
    if let Some(d) = &m.dtype_mismatch {
        out.push(format!("dtype mismatch: {d}"));
    }
    if m.nonfinite_mismatch > 0 {
        out.push(format!(
            "NaN/Inf positions differ at {} elements",
            m.nonfinite_mismatch
        ));
    }
    if m.cosine < policy.min_cosine {
        out.push(format!(
            "cosine similarity {:.6} < {}",
            m.cosine, policy.min_cosine
        ));
    }
    out
}

/// (rtol, atol) check, reported like torch.testing.
pub fn tolerance_failures(m: &AccuracyMetrics, policy: &AccuracyPolicy) -> Vec<String> {
    let mut out = hard_failures(m, policy);
    let allowed = (policy.max_mismatch_share * m.elements as f64).floor() as u64;
    if m.mismatched > allowed {
        out.push(format!(
            "mismatched elements: {} / {} ({:.3}%) under rtol={:e}, atol={:e}; greatest abs diff {:e} at {}, greatest rel diff {:e} at {}",
            m.mismatched,
            m.elements,
            100.0 * m.mismatched as f64 / m.elements.max(1) as f64,
            policy.tolerance.rtol,
            policy.tolerance.atol,
            m.max_abs,
            m.max_abs_index,
            m.max_rel,
            m.max_rel_index
        ));
    }
    out
}

/// Ratio policy: the candidate may be at most `k` times as far from the
/// oracle as the reference leg is, plus `floor`, in max abs error and RMSE.
pub fn ratio_failures(
    candidate: &AccuracyMetrics,
    reference: &AccuracyMetrics,
    policy: &AccuracyPolicy,
) -> Vec<String> {
    let mut out = hard_failures(candidate, policy);
    let limits = [
        ("max_abs", candidate.max_abs, reference.max_abs),
        ("rmse", candidate.rmse, reference.rmse),
    ];
    for (name, cand, refe) in limits {
        let bound = policy.ratio * refe + policy.floor;
        if cand > bound {
            out.push(format!(
                "{name} {cand:.3e} vs oracle exceeds {}×{refe:.3e} (reference leg) + {:.1e} = {bound:.3e}",
                policy.ratio, policy.floor
            ));
        }
    }
    out
}
