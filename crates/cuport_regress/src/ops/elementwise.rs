//! Pointwise ops.

pub(super) fn binary(a: &[f64], b: &[f64], f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

pub(super) fn unary(a: &[f64], f: impl Fn(f64) -> f64) -> Vec<f64> {
    a.iter().map(|&x| f(x)).collect()
}

/// `x * Φ(x)` with the exact normal CDF (PyTorch `approximate='none'`).
pub(super) fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2))
}

pub(super) fn silu(x: f64) -> f64 {
    x / (1.0 + (-x).exp())
}
