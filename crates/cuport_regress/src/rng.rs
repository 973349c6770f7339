//! Deterministic input generation. A self-contained generator (SplitMix64)
//! keeps inputs identical across crate versions, platforms and both legs.
use crate::dtype::DType;

/// SplitMix64: tiny, fast, and its output is fixed by its published
/// algorithm, so a seed means the same numbers everywhere.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box–Muller), used by the statistics simulation.
    pub fn next_normal(&mut self) -> f64 {
        let u1 = self.next_f64().max(f64::MIN_POSITIVE);
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// `len` values for input number `index` of a case: uniform in [-1, 1)
/// (integers in [-8, 8]), already rounded to `dtype` so both legs and the
/// oracle see exactly the same numbers.
pub fn generate_input(seed: u64, index: u64, len: usize, dtype: DType) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
    (0..len)
        .map(|_| {
            let u = rng.next_f64();
            if dtype.is_float() {
                dtype.round(2.0 * u - 1.0)
            } else {
                (u * 17.0).floor() - 8.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_inputs_and_different_index_differs() {
        let a = generate_input(7, 0, 64, DType::F16);
        assert_eq!(a, generate_input(7, 0, 64, DType::F16));
        assert_ne!(a, generate_input(7, 1, 64, DType::F16));
        assert!(a.iter().all(|v| (-1.0..1.0).contains(v)));
        assert!(a.iter().all(|&v| DType::F16.round(v) == v));
    }

    #[test]
    fn integer_inputs_are_small_integers() {
        let a = generate_input(3, 0, 1000, DType::I32);
        assert!(a
            .iter()
            .all(|v| v.fract() == 0.0 && (-8.0..=8.0).contains(v)));
    }
}
