//! The hot loop of the metrics pass: one fused, branch-free loop over a
//! chunk, with every sum and count in two independent lanes (one SSE2
//! register each, so nothing spills). Rare work is done after the loop and
//! only when needed: a rescan for new maximum errors (no division per
//! element), a rescan for ULP distances ≥ 2 (the histogram), and the
//! element-by-element path for chunks holding NaN or ±Inf. Fewer lane
//! accumulators beat wider vectors here: more would spill to the stack.
//!
//! Results equal the element-by-element definition in `Acc::add`, except
//! that sums are added in a different order (last-bit differences in RMSE
//! and cosine); a property test checks this.
use super::element::Element;
use super::{Acc, EXACT};
use crate::dtype::Tolerance;

const LANES: usize = 2;

/// ULP distance of one pair, in `A`'s dtype.
#[inline(always)]
pub(super) fn ulp_of<A: Element, E: Element>(a: A, e: E, ev: f64) -> u64 {
    if A::DTYPE == E::DTYPE {
        a.ordered().abs_diff(e.ordered())
    } else {
        a.ordered().abs_diff(A::DTYPE.ordered(ev))
    }
}

/// Lane-wise partial results of one chunk.
#[derive(Default)]
struct Lanes {
    sq: [f64; LANES],
    dot: [f64; LANES],
    na: [f64; LANES],
    ne: [f64; LANES],
    mismatched: [u64; LANES],
    within1: [u64; LANES],
    within5: [u64; LANES],
    /// Set when an error beats the running max abs or rel error.
    beats: [u64; LANES],
    ulp0: [u64; LANES],
    /// Elements with a ULP distance of 2 or more.
    ulp_big: [u64; LANES],
}

/// The running maxima before the chunk, and the tolerance.
#[derive(Clone, Copy)]
struct Limits {
    tol: Tolerance,
    max_abs: f64,
    max_rel: f64,
}

impl Lanes {
    #[inline(always)]
    fn add(&mut self, l: usize, a: f64, e: f64, ulp: u64, lim: Limits) {
        let diff = (a - e).abs();
        let mag = e.abs();
        self.sq[l] += diff * diff;
        self.dot[l] += a * e;
        self.na[l] += a * a;
        self.ne[l] += e * e;
        self.mismatched[l] += u64::from(diff > lim.tol.atol + lim.tol.rtol * mag);
        self.within1[l] += u64::from(diff <= 1e-3 * mag);
        self.within5[l] += u64::from(diff <= 5e-3 * mag);
        // rel > max_rel without dividing; |e| = 0 with diff > 0 counts.
        self.beats[l] |= u64::from((diff > lim.max_abs) | (diff > lim.max_rel * mag));
        self.ulp0[l] += u64::from(ulp == 0);
        self.ulp_big[l] += u64::from(ulp >= 2);
    }
}

#[inline]
fn rel(diff: f64, mag: f64) -> f64 {
    if diff == 0.0 {
        0.0
    } else {
        diff / mag
    }
}

fn sum<T: Copy + std::iter::Sum<T>>(lanes: [T; LANES]) -> T {
    lanes.into_iter().sum()
}

/// One chunk: raw elements `ca`/`ce` and their widened values `wa`/`we`
/// (all the same length), starting at element `base`.
pub(super) struct Chunk<'a, A, E> {
    pub(super) base: u64,
    pub(super) ca: &'a [A],
    pub(super) ce: &'a [E],
    pub(super) wa: &'a [f64],
    pub(super) we: &'a [f64],
}

impl<A: Element, E: Element> Chunk<'_, A, E> {
    /// The fused loop; zipped `chunks_exact` keep bounds checks out of it.
    fn lanes(&self, lim: Limits) -> Lanes {
        let mut s = Lanes::default();
        let n = self.wa.len();
        let split = n - n % LANES;
        let quads = self.wa[..split]
            .chunks_exact(LANES)
            .zip(self.we[..split].chunks_exact(LANES))
            .zip(self.ca[..split].chunks_exact(LANES))
            .zip(self.ce[..split].chunks_exact(LANES));
        for (((wa, we), ca), ce) in quads {
            for l in 0..LANES {
                s.add(l, wa[l], we[l], ulp_of(ca[l], ce[l], we[l]), lim);
            }
        }
        let rest = self.wa[split..]
            .iter()
            .zip(&self.we[split..])
            .zip(self.ca[split..].iter().zip(&self.ce[split..]));
        for ((&a, &e), (&ra, &re)) in rest {
            s.add(0, a, e, ulp_of(ra, re, e), lim);
        }
        s
    }
}

impl Acc {
    /// Add one chunk. Chunks with NaN/±Inf take the element path.
    pub(super) fn add_chunk<A: Element, E: Element>(
        &mut self,
        c: &Chunk<'_, A, E>,
        tol: Tolerance,
    ) {
        let lim = Limits {
            tol,
            max_abs: self.max_abs,
            max_rel: self.max_rel,
        };
        let s = c.lanes(lim);
        // A NaN or ±Inf anywhere makes a sum of squares non-finite (so can
        // an overflow, which the element path handles correctly too).
        if !(sum(s.na) + sum(s.ne)).is_finite() {
            self.add_elementwise(c, tol);
            return;
        }
        self.sq += sum(s.sq);
        self.dot += sum(s.dot);
        self.na += sum(s.na);
        self.ne += sum(s.ne);
        self.mismatched += sum(s.mismatched);
        self.within1 += sum(s.within1);
        self.within5 += sum(s.within5);
        if sum(s.beats) != 0 {
            self.locate_extremes(c.base, c.wa, c.we);
        }
        let (ulp0, big) = (sum(s.ulp0), sum(s.ulp_big));
        let ulp1 = c.wa.len() as u64 - ulp0 - big;
        self.exact[0] += ulp0;
        self.exact[1] += ulp1;
        if ulp1 > 0 {
            self.ulp_max = self.ulp_max.max(1);
        }
        if big > 0 {
            self.count_big_ulps(c);
        }
    }

    /// The definition, one element at a time.
    fn add_elementwise<A: Element, E: Element>(&mut self, c: &Chunk<'_, A, E>, tol: Tolerance) {
        for (j, (&av, &ev)) in c.wa.iter().zip(c.we).enumerate() {
            if av.is_finite() && ev.is_finite() {
                let ulp = ulp_of(c.ca[j], c.ce[j], ev);
                self.add(c.base + j as u64, av, ev, ulp, tol);
            } else {
                self.add_nonfinite(av, ev);
            }
        }
    }

    /// Some element beats a running maximum: rescan the chunk, keeping the
    /// first position of each new maximum (as `Acc::add` does).
    fn locate_extremes(&mut self, base: u64, a: &[f64], e: &[f64]) {
        for (j, (&x, &y)) in a.iter().zip(e).enumerate() {
            let (diff, mag) = ((x - y).abs(), y.abs());
            if diff > self.max_abs {
                self.max_abs = diff;
                self.max_abs_i = base + j as u64;
            }
            if diff > self.max_rel * mag {
                let r = rel(diff, mag);
                if r > self.max_rel {
                    self.max_rel = r;
                    self.max_rel_i = base + j as u64;
                }
            }
        }
    }

    fn count_big_ulps<A: Element, E: Element>(&mut self, c: &Chunk<'_, A, E>) {
        for j in 0..c.wa.len() {
            let ulp = ulp_of(c.ca[j], c.ce[j], c.we[j]);
            if ulp < 2 {
                continue;
            }
            self.ulp_max = self.ulp_max.max(ulp);
            if (ulp as usize) < EXACT {
                self.exact[ulp as usize] += 1;
            } else {
                self.log2[63 - ulp.leading_zeros() as usize] += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Equal up to summation order: the slack scales with the magnitude of
    /// the terms, not of the (possibly cancelling) sum.
    fn close(x: f64, y: f64, scale: f64) -> bool {
        (x - y).abs() <= 1e-12 * (1.0 + scale)
    }

    proptest! {
        /// The fused chunk loop and the element-by-element definition
        /// agree on every metric (sums up to rounding), NaN included.
        #[test]
        fn chunk_loop_matches_the_element_loop(
            pairs in prop::collection::vec((-40i32..40, -40i32..40), 1..300),
            nan_at in prop::option::of(0usize..300),
        ) {
            let tol = Tolerance { rtol: 1e-3, atol: 1e-5 };
            let mut ca: Vec<f32> = pairs.iter().map(|p| p.0 as f32 / 3.0).collect();
            let ce: Vec<f64> = pairs.iter().map(|p| f64::from(p.1) / 3.0).collect();
            if let Some(i) = nan_at.filter(|&i| i < ca.len()) {
                ca[i] = f32::NAN;
            }
            let wa: Vec<f64> = ca.iter().map(|&v| f64::from(v)).collect();
            let chunk = Chunk { base: 7, ca: &ca, ce: &ce, wa: &wa, we: &ce };
            let mut one = Acc::new();
            one.add_elementwise(&chunk, tol);
            let mut fused = Acc::new();
            fused.add_chunk(&chunk, tol);
            prop_assert_eq!((one.max_abs, one.max_abs_i), (fused.max_abs, fused.max_abs_i));
            prop_assert_eq!((one.max_rel, one.max_rel_i), (fused.max_rel, fused.max_rel_i));
            prop_assert_eq!(
                (one.mismatched, one.within1, one.within5, one.nonfinite),
                (fused.mismatched, fused.within1, fused.within5, fused.nonfinite)
            );
            prop_assert_eq!(one.ulp_max, fused.ulp_max);
            prop_assert_eq!(&one.exact, &fused.exact);
            prop_assert_eq!(one.log2, fused.log2);
            let scale = one.na + one.ne + one.sq;
            for (x, y) in [(one.sq, fused.sq), (one.dot, fused.dot), (one.na, fused.na), (one.ne, fused.ne)] {
                prop_assert!(close(x, y, scale), "{} vs {}", x, y);
            }
        }
    }
}
