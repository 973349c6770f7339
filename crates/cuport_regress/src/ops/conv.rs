//! 2-D convolution forward (cross-correlation, as cuDNN and PyTorch define it).
use serde::{Deserialize, Serialize};

use super::OpSpec;
use crate::error::{RegressError, Result};

/// The sizes of a 2-D convolution, as a case file's `[case.op]` writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conv2d {
    pub n: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub k: usize,
    pub r: usize,
    pub s: usize,
    #[serde(default = "unit")]
    pub stride: usize,
    #[serde(default)]
    pub padding: usize,
    #[serde(default = "unit")]
    pub dilation: usize,
}

fn unit() -> usize {
    1
}

fn conv(spec: &OpSpec) -> Option<&Conv2d> {
    match spec {
        OpSpec::Conv2d(conv) => Some(conv),
        _ => None,
    }
}

fn out_len(input: usize, window: usize, cv: &Conv2d) -> usize {
    // Saturating: absurd sizes in a case file must not overflow here; the
    // memory check rejects them.
    let span = cv.dilation.saturating_mul(window - 1).saturating_add(1);
    let padded = input.saturating_add(cv.padding.saturating_mul(2));
    if padded < span || cv.stride == 0 {
        0
    } else {
        (padded - span) / cv.stride + 1
    }
}

pub(super) fn output_hw(spec: &OpSpec) -> (usize, usize) {
    match conv(spec) {
        Some(cv) if cv.r > 0 && cv.s > 0 => (out_len(cv.h, cv.r, cv), out_len(cv.w, cv.s, cv)),
        _ => (0, 0),
    }
}

pub(super) fn validate(spec: &OpSpec) -> Result<()> {
    let Some(cv) = conv(spec) else { return Ok(()) };
    let sizes = [
        cv.n,
        cv.c,
        cv.h,
        cv.w,
        cv.k,
        cv.r,
        cv.s,
        cv.stride,
        cv.dilation,
    ];
    if sizes.contains(&0) {
        return Err(RegressError::op(
            "conv2d",
            "n, c, h, w, k, r, s, stride and dilation must be at least 1",
        ));
    }
    let (p, q) = output_hw(spec);
    if p == 0 || q == 0 {
        return Err(RegressError::op(
            "conv2d",
            "the filter is larger than the padded input; lower r/s or raise padding",
        ));
    }
    Ok(())
}

pub(super) fn reference(spec: &OpSpec, x: &[f64], wt: &[f64]) -> Vec<f64> {
    let Some(cv) = conv(spec) else {
        return Vec::new();
    };
    let (p_len, q_len) = output_hw(spec);
    let mut out = vec![0.0; cv.n * cv.k * p_len * q_len];
    for (idx, slot) in out.iter_mut().enumerate() {
        let q = idx % q_len;
        let p = (idx / q_len) % p_len;
        let k = (idx / (q_len * p_len)) % cv.k;
        let n = idx / (q_len * p_len * cv.k);
        *slot = dot_window(cv, x, wt, n, k, p, q);
    }
    out
}

fn dot_window(cv: &Conv2d, x: &[f64], wt: &[f64], n: usize, k: usize, p: usize, q: usize) -> f64 {
    let mut acc = 0.0;
    for c in 0..cv.c {
        for r in 0..cv.r {
            let Some(y) = (p * cv.stride + r * cv.dilation)
                .checked_sub(cv.padding)
                .filter(|&y| y < cv.h)
            else {
                continue;
            };
            for s in 0..cv.s {
                let Some(xx) = (q * cv.stride + s * cv.dilation)
                    .checked_sub(cv.padding)
                    .filter(|&v| v < cv.w)
                else {
                    continue;
                };
                let xi = ((n * cv.c + c) * cv.h + y) * cv.w + xx;
                let wi = ((k * cv.c + c) * cv.r + r) * cv.s + s;
                acc += x[xi] * wt[wi];
            }
        }
    }
    acc
}
