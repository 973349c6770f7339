//! Accuracy metrics for one output tensor, computed in a single pass.
//!
//! `expected` is the reference (the f64 oracle or the reference leg);
//! relative errors divide by `|expected|`, as torch.testing does.
mod chunk;
mod element;

use serde::{Deserialize, Serialize};

use crate::dtype::{DType, Tolerance};
use crate::tensor::{Tensor, TensorData};

use self::chunk::{ulp_of, Chunk};
use self::element::{Element, CHUNK};

/// Everything measured about `actual` against `expected`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyMetrics {
    pub elements: u64,
    pub max_abs: f64,
    pub max_abs_index: u64,
    pub max_rel: f64,
    pub max_rel_index: u64,
    pub rmse: f64,
    pub cosine: f64,
    /// ULP distance in `actual`'s dtype (expected rounded to it first).
    pub ulp_max: u64,
    /// 99th percentile; exact below 1024 ulps, else the power of two above.
    pub ulp_p99: u64,
    /// Elements with `|a - e| > atol + rtol·|e|` (and non-finite mismatches).
    pub mismatched: u64,
    pub tolerance: Tolerance,
    /// Share of elements within 1‰ (0.001) and 5‰ relative error.
    pub within_1permille: f64,
    pub within_5permille: f64,
    /// Positions where NaN/±Inf differ between the two tensors.
    pub nonfinite_mismatch: u64,
    pub shape_mismatch: Option<String>,
    pub dtype_mismatch: Option<String>,
}

/// Ulp distances 0..EXACT are counted exactly, larger ones by power of two.
const EXACT: usize = 1024;

/// Running sums for one pass.
struct Acc {
    n: u64,
    max_abs: f64,
    max_abs_i: u64,
    max_rel: f64,
    max_rel_i: u64,
    sq: f64,
    dot: f64,
    na: f64,
    ne: f64,
    mismatched: u64,
    within1: u64,
    within5: u64,
    nonfinite: u64,
    ulp_max: u64,
    exact: Vec<u64>,
    log2: [u64; 64],
}

impl Acc {
    fn new() -> Self {
        Acc {
            n: 0,
            max_abs: 0.0,
            max_abs_i: 0,
            max_rel: 0.0,
            max_rel_i: 0,
            sq: 0.0,
            dot: 0.0,
            na: 0.0,
            ne: 0.0,
            mismatched: 0,
            within1: 0,
            within5: 0,
            nonfinite: 0,
            ulp_max: 0,
            exact: vec![0; EXACT],
            log2: [0; 64],
        }
    }

    #[inline]
    fn add_nonfinite(&mut self, a: f64, e: f64) {
        let same = (a.is_nan() && e.is_nan()) || a == e;
        if same {
            self.within1 += 1;
            self.within5 += 1;
            self.exact[0] += 1;
        } else {
            self.nonfinite += 1;
            self.mismatched += 1;
            self.ulp_max = u64::MAX;
            self.log2[63] += 1;
        }
    }

    /// One finite pair: the definition the chunked path must match.
    /// Division-free except when a new max relative error is found.
    #[inline]
    fn add(&mut self, i: u64, a: f64, e: f64, ulp: u64, tol: Tolerance) {
        let diff = (a - e).abs();
        let mag = e.abs();
        if diff > self.max_abs {
            self.max_abs = diff;
            self.max_abs_i = i;
        }
        // rel = diff / |e| > max_rel, without dividing (|e| = 0 gives inf).
        if diff > self.max_rel * mag {
            let rel = diff / mag;
            if rel > self.max_rel {
                self.max_rel = rel;
                self.max_rel_i = i;
            }
        }
        self.sq += diff * diff;
        self.dot += a * e;
        self.na += a * a;
        self.ne += e * e;
        self.mismatched += u64::from(diff > tol.atol + tol.rtol * mag);
        self.within1 += u64::from(diff <= 1e-3 * mag);
        self.within5 += u64::from(diff <= 5e-3 * mag);
        self.ulp_max = self.ulp_max.max(ulp);
        if (ulp as usize) < EXACT {
            self.exact[ulp as usize] += 1;
        } else {
            self.log2[63 - ulp.leading_zeros() as usize] += 1;
        }
    }

    fn ulp_quantile(&self, q: f64) -> u64 {
        let target = ((self.n as f64) * q).ceil() as u64;
        let mut seen = 0;
        for (ulp, count) in self.exact.iter().enumerate() {
            seen += count;
            if seen >= target {
                return ulp as u64;
            }
        }
        for (bit, count) in self.log2.iter().enumerate() {
            seen += count;
            if seen >= target {
                return if bit >= 63 {
                    u64::MAX
                } else {
                    (2u64 << bit) - 1
                };
            }
        }
        self.ulp_max
    }

    fn finish(self, tolerance: Tolerance) -> AccuracyMetrics {
        let n = self.n.max(1) as f64;
        let cosine = if self.na == 0.0 && self.ne == 0.0 {
            1.0
        } else if self.na == 0.0 || self.ne == 0.0 {
            0.0
        } else {
            self.dot / (self.na.sqrt() * self.ne.sqrt())
        };
        AccuracyMetrics {
            elements: self.n,
            max_abs: self.max_abs,
            max_abs_index: self.max_abs_i,
            max_rel: self.max_rel,
            max_rel_index: self.max_rel_i,
            rmse: (self.sq / n).sqrt(),
            cosine,
            ulp_max: self.ulp_max,
            ulp_p99: self.ulp_quantile(0.99),
            mismatched: self.mismatched,
            tolerance,
            within_1permille: self.within1 as f64 / n,
            within_5permille: self.within5 as f64 / n,
            nonfinite_mismatch: self.nonfinite,
            shape_mismatch: None,
            dtype_mismatch: None,
        }
    }
}

fn pass<A: Element, E: Element>(actual: &[A], expected: &[E], tol: Tolerance) -> AccuracyMetrics {
    let mut acc = Acc::new();
    let n = actual.len().min(expected.len());
    acc.n = n as u64;
    if A::CAST && E::CAST {
        for (i, (&a, &e)) in actual[..n].iter().zip(&expected[..n]).enumerate() {
            let (av, ev) = (a.widen(), e.widen());
            if av.is_finite() && ev.is_finite() {
                acc.add(i as u64, av, ev, ulp_of(a, e, ev), tol);
            } else {
                acc.add_nonfinite(av, ev);
            }
        }
        return acc.finish(tol);
    }
    // Widen a chunk at a time into stack buffers, so f16 can use the
    // CPU's vector conversion (F16C) instead of one lookup per element.
    let (mut wa, mut we) = ([0f64; CHUNK], [0f64; CHUNK]);
    for (c, (ca, ce)) in actual[..n]
        .chunks(CHUNK)
        .zip(expected[..n].chunks(CHUNK))
        .enumerate()
    {
        let (wa, we) = (&mut wa[..ca.len()], &mut we[..ca.len()]);
        A::widen_chunk(ca, wa);
        E::widen_chunk(ce, we);
        let chunk = Chunk {
            base: (c * CHUNK) as u64,
            ca,
            ce,
            wa,
            we,
        };
        acc.add_chunk(&chunk, tol);
    }
    acc.finish(tol)
}

macro_rules! dispatch_expected {
    ($a:expr, $expected:expr, $tol:expr) => {
        match &$expected.data {
            TensorData::F32(e) => pass($a, e, $tol),
            TensorData::F16(e) => pass($a, e, $tol),
            TensorData::Bf16(e) => pass($a, e, $tol),
            TensorData::F64(e) => pass($a, e, $tol),
            TensorData::I32(e) => pass($a, e, $tol),
        }
    };
}

/// Compare `actual` with `expected` under `tolerance`. Shape or dtype
/// mismatches are recorded; values are still compared when the element
/// counts agree, so the report can say how far off a mis-shaped output is.
/// A dtype difference against an f64 oracle is expected and not recorded.
pub fn compare(actual: &Tensor, expected: &Tensor, tolerance: Tolerance) -> AccuracyMetrics {
    let mut metrics = match &actual.data {
        TensorData::F32(a) => dispatch_expected!(a, expected, tolerance),
        TensorData::F16(a) => dispatch_expected!(a, expected, tolerance),
        TensorData::Bf16(a) => dispatch_expected!(a, expected, tolerance),
        TensorData::F64(a) => dispatch_expected!(a, expected, tolerance),
        TensorData::I32(a) => dispatch_expected!(a, expected, tolerance),
    };
    if actual.shape != expected.shape {
        metrics.shape_mismatch = Some(format!(
            "{:?} vs expected {:?}",
            actual.shape, expected.shape
        ));
    }
    if actual.dtype() != expected.dtype() && expected.dtype() != DType::F64 {
        metrics.dtype_mismatch = Some(format!(
            "{} vs expected {}",
            actual.dtype(),
            expected.dtype()
        ));
    }
    metrics
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn t(dtype: DType, v: &[f64]) -> Tensor {
        Tensor::from_f64(dtype, vec![v.len()], v)
    }

    #[test]
    fn identical_tensors_have_zero_error() {
        let a = t(DType::F32, &[1.0, -2.0, 0.5, 0.0]);
        let m = compare(&a, &a, DType::F32.default_tolerance());
        assert_eq!((m.max_abs, m.ulp_max, m.mismatched), (0.0, 0, 0));
        assert!((m.cosine - 1.0).abs() < 1e-15);
        assert_eq!(m.within_1permille, 1.0);
    }

    #[test]
    fn errors_are_located_and_counted() {
        let e = t(DType::F32, &[1.0, 2.0, 4.0, 8.0]);
        let a = t(DType::F32, &[1.0, 2.5, 4.0, 8.001]);
        let m = compare(
            &a,
            &e,
            Tolerance {
                rtol: 1e-3,
                atol: 0.0,
            },
        );
        assert_eq!(m.max_abs_index, 1);
        assert!((m.max_abs - 0.5).abs() < 1e-12);
        assert!((m.max_rel - 0.25).abs() < 1e-12);
        assert_eq!(m.mismatched, 1);
        assert_eq!(m.within_1permille, 0.75);
        assert!(m.ulp_max > 1000);
    }

    #[test]
    fn indices_and_counts_carry_across_chunks() {
        let n = 3 * CHUNK + 17;
        let expected: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 / 1024.0).collect();
        for dtype in [DType::F16, DType::F32, DType::Bf16] {
            let mut actual = expected.clone();
            actual[700] += 0.5;
            let m = compare(
                &t(dtype, &actual),
                &t(DType::F64, &expected),
                dtype.default_tolerance(),
            );
            assert_eq!(m.elements, n as u64);
            assert_eq!(m.max_abs_index, 700, "{dtype}");
            assert_eq!(
                m.mismatched,
                1 + mismatched_by_rounding(dtype, &expected),
                "{dtype}"
            );
        }
    }

    /// Elements that fail (rtol, atol) from rounding to `dtype` alone.
    fn mismatched_by_rounding(dtype: DType, values: &[f64]) -> u64 {
        let tol = dtype.default_tolerance();
        values
            .iter()
            .enumerate()
            .filter(|&(i, &v)| {
                i != 700 && (dtype.round(v) - v).abs() > tol.atol + tol.rtol * v.abs()
            })
            .count() as u64
    }

    #[test]
    fn nan_positions_must_match() {
        let e = t(DType::F64, &[f64::NAN, 1.0, f64::INFINITY]);
        let a = t(DType::F64, &[f64::NAN, f64::NAN, f64::NEG_INFINITY]);
        let m = compare(&a, &e, DType::F64.default_tolerance());
        assert_eq!(m.nonfinite_mismatch, 2);
    }

    #[test]
    fn ulp_against_an_f64_oracle_uses_the_actual_dtype() {
        let exact = 1.0 + f64::from(f32::EPSILON) * 0.4;
        let e = t(DType::F64, &[exact]);
        let a = t(DType::F32, &[1.0]);
        let m = compare(&a, &e, DType::F32.default_tolerance());
        assert_eq!(m.ulp_max, 0);
        assert!(m.dtype_mismatch.is_none());
        let half = t(DType::F16, &[1.0]);
        assert!(compare(&half, &a, DType::F16.default_tolerance())
            .dtype_mismatch
            .is_some());
    }

    #[test]
    fn p99_ignores_one_outlier_in_two_hundred() {
        let e: Vec<f64> = (1..=200).map(f64::from).collect();
        let mut a = e.clone();
        a[7] += 1.0;
        let m = compare(
            &t(DType::F32, &a),
            &t(DType::F32, &e),
            DType::F32.default_tolerance(),
        );
        assert_eq!(m.ulp_p99, 0);
        assert!(m.ulp_max > 0);
    }
}
