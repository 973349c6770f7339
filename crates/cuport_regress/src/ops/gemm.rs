//! GEMM family: plain, batched and strided-batched, row-major.
use super::OpSpec;

/// Everything the gemm variants share, normalised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct GemmShape {
    pub(crate) batch: usize,
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) trans_a: bool,
    pub(crate) trans_b: bool,
    pub(crate) alpha: f64,
    pub(crate) beta: f64,
    /// Elements between consecutive A (B) matrices; 0 broadcasts.
    pub(crate) stride_a: usize,
    pub(crate) stride_b: usize,
    /// Whether the op has a leading batch axis in its output.
    pub(crate) batched: bool,
}

impl GemmShape {
    pub(crate) fn from_spec(spec: &OpSpec) -> GemmShape {
        let base = |batch, m, n, k, trans_a, trans_b, alpha, beta, batched| GemmShape {
            batch,
            m,
            n,
            k,
            trans_a,
            trans_b,
            alpha,
            beta,
            // Saturating: shapes come from case files, and the memory check
            // that rejects oversized cases runs on this shape.
            stride_a: m.saturating_mul(k),
            stride_b: k.saturating_mul(n),
            batched,
        };
        match *spec {
            OpSpec::BatchedGemm {
                batch,
                m,
                n,
                k,
                trans_a,
                trans_b,
                alpha,
                beta,
            } => base(batch, m, n, k, trans_a, trans_b, alpha, beta, true),
            OpSpec::StridedBatchedGemm {
                batch,
                m,
                n,
                k,
                trans_a,
                trans_b,
                alpha,
                beta,
                stride_a,
                stride_b,
            } => {
                let mut shape = base(batch, m, n, k, trans_a, trans_b, alpha, beta, true);
                shape.stride_a = stride_a.unwrap_or(shape.stride_a);
                shape.stride_b = stride_b.unwrap_or(shape.stride_b);
                shape
            }
            OpSpec::Gemm {
                m,
                n,
                k,
                trans_a,
                trans_b,
                alpha,
                beta,
            } => base(1, m, n, k, trans_a, trans_b, alpha, beta, false),
            _ => base(1, 1, 1, 1, false, false, 1.0, 0.0, false),
        }
    }

    /// Stored (rows, cols) of A and B, after the transpose flags.
    pub(crate) fn a_dims(&self) -> (usize, usize) {
        if self.trans_a {
            (self.k, self.m)
        } else {
            (self.m, self.k)
        }
    }

    pub(crate) fn b_dims(&self) -> (usize, usize) {
        if self.trans_b {
            (self.n, self.k)
        } else {
            (self.k, self.n)
        }
    }
}

fn operand_shape(shape: &GemmShape, (rows, cols): (usize, usize), stride: usize) -> Vec<usize> {
    if !shape.batched || stride == 0 {
        vec![rows, cols]
    } else if stride == rows * cols {
        vec![shape.batch, rows, cols]
    } else {
        vec![(shape.batch - 1) * stride + rows * cols]
    }
}

/// Elements of every input (A, B, C) and of the output, without overflow:
/// the same layout as [`input_shapes`], counted in u128.
pub(super) fn element_counts(shape: &GemmShape) -> (u128, u128) {
    let count = |dims: &[usize]| {
        dims.iter()
            .fold(1u128, |acc, &d| acc.saturating_mul(d as u128))
    };
    let operand = |(rows, cols): (usize, usize), stride: usize| {
        let one = count(&[rows, cols]);
        if !shape.batched || stride == 0 {
            one
        } else if stride as u128 == one {
            count(&[shape.batch, rows, cols])
        } else {
            count(&[shape.batch.saturating_sub(1), stride]).saturating_add(one)
        }
    };
    let c = count(&[shape.batch, shape.m, shape.n]);
    let inputs = operand(shape.a_dims(), shape.stride_a)
        .saturating_add(operand(shape.b_dims(), shape.stride_b))
        .saturating_add(c);
    (inputs, c)
}

pub(super) fn input_shapes(shape: &GemmShape) -> Vec<Vec<usize>> {
    let c = if shape.batched {
        vec![shape.batch, shape.m, shape.n]
    } else {
        vec![shape.m, shape.n]
    };
    vec![
        operand_shape(shape, shape.a_dims(), shape.stride_a),
        operand_shape(shape, shape.b_dims(), shape.stride_b),
        c,
    ]
}

pub(super) fn reference(shape: &GemmShape, inputs: &[Vec<f64>]) -> Vec<f64> {
    let (a, b, c) = (&inputs[0], &inputs[1], &inputs[2]);
    let (m, n, k) = (shape.m, shape.n, shape.k);
    let (_, a_cols) = shape.a_dims();
    let (_, b_cols) = shape.b_dims();
    let mut out = vec![0.0; shape.batch * m * n];
    for batch in 0..shape.batch {
        let a0 = batch * shape.stride_a;
        let b0 = batch * shape.stride_b;
        let c0 = batch * m * n;
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0;
                for p in 0..k {
                    let a_at = if shape.trans_a {
                        p * a_cols + i
                    } else {
                        i * a_cols + p
                    };
                    let b_at = if shape.trans_b {
                        j * b_cols + p
                    } else {
                        p * b_cols + j
                    };
                    acc += a[a0 + a_at] * b[b0 + b_at];
                }
                let at = c0 + i * n + j;
                out[at] = shape.alpha * acc + shape.beta * c[at];
            }
        }
    }
    out
}
