//! Row-wise ops over the last axis: softmax, layer norm, reductions.

pub(super) fn softmax(x: &[f64], cols: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks_exact(cols) {
        // Subtracting the row max keeps exp() finite; the result is unchanged.
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let exps: Vec<f64> = row.iter().map(|v| (v - max).exp()).collect();
        let sum: f64 = exps.iter().sum();
        out.extend(exps.iter().map(|e| e / sum));
    }
    out
}

pub(super) fn layer_norm(
    x: &[f64],
    gamma: &[f64],
    beta: &[f64],
    cols: usize,
    eps: f64,
) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks_exact(cols) {
        let mean = row.iter().sum::<f64>() / cols as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / cols as f64;
        let inv = 1.0 / (var + eps).sqrt();
        out.extend(
            row.iter()
                .zip(gamma)
                .zip(beta)
                .map(|((v, g), b)| (v - mean) * inv * g + b),
        );
    }
    out
}

pub(super) fn reduce_rows(
    x: &[f64],
    cols: usize,
    init: f64,
    f: impl Fn(f64, f64) -> f64,
) -> Vec<f64> {
    x.chunks_exact(cols)
        .map(|row| row.iter().copied().fold(init, &f))
        .collect()
}
