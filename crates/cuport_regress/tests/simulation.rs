//! The performance verdict measured on synthetic timings (deterministic
//! seeds, no real timing): A/A comparisons with 5 % noise must raise a false
//! SLOWER/FASTER alarm in ≤ 1 % of trials, and a 10 % slowdown must be
//! called SLOWER in ≥ 95 % of trials, at the default sample counts.
//! The rates printed here are the ones quoted in regress/README.md:
//! `cargo test -p cuport_regress --release --test simulation -- --nocapture`
#![allow(clippy::print_stderr)]

use cuport_regress::rng::SplitMix64;
use cuport_regress::sampling::{collect, PerfSettings, SampleSource};
use cuport_regress::stats::{compare_samples, DecisionConfig, PerfVerdict};
use cuport_regress::Result;

/// A fake op: 1 ms × slowdown, with Gaussian noise of `noise` relative sd.
struct Noisy {
    rng: SplitMix64,
    noise: f64,
    slowdown: f64,
}

impl SampleSource for Noisy {
    fn run(&mut self, iters: u32) -> Result<f64> {
        let t = 1e-3 * self.slowdown * (1.0 + self.noise * self.rng.next_normal());
        Ok(t.max(1e-6) * f64::from(iters))
    }
}

const TRIALS: u64 = 1000;

fn rate(slowdown: f64, hit: impl Fn(PerfVerdict) -> bool) -> Result<(f64, usize)> {
    let sampling = PerfSettings::default().sampling();
    let decision = DecisionConfig::default();
    let mut hits = 0;
    let mut samples = 0;
    for trial in 0..TRIALS {
        let mut base = Noisy {
            rng: SplitMix64::new(2 * trial + 1),
            noise: 0.05,
            slowdown: 1.0,
        };
        let mut new = Noisy {
            rng: SplitMix64::new(2 * trial + 2 + 1_000_000),
            noise: 0.05,
            slowdown,
        };
        let a = collect(&mut base, &sampling)?;
        let b = collect(&mut new, &sampling)?;
        samples = a.len();
        hits += usize::from(hit(compare_samples(&a, &b, &decision).verdict));
    }
    Ok((hits as f64 / TRIALS as f64, samples))
}

#[test]
fn a_a_false_alarms_at_most_one_percent() -> Result<()> {
    let (rate, n) = rate(1.0, |v| {
        matches!(v, PerfVerdict::Slower | PerfVerdict::Faster)
    })?;
    eprintln!(
        "A/A, 5% noise, {n} samples per side, {TRIALS} trials: false-alarm rate {:.2}%",
        rate * 100.0
    );
    assert!(rate <= 0.01, "false-alarm rate {rate}");
    Ok(())
}

#[test]
fn ten_percent_slowdown_is_caught_at_least_95_percent() -> Result<()> {
    let (rate, n) = rate(1.10, |v| v == PerfVerdict::Slower)?;
    eprintln!(
        "10% slowdown, 5% noise, {n} samples per side, {TRIALS} trials: detection rate {:.2}%",
        rate * 100.0
    );
    assert!(rate >= 0.95, "detection rate {rate}");
    Ok(())
}
