//! Operator specifications and their f64 CPU reference implementations.
//!
//! An [`OpSpec`] knows its input shapes, its output shape and its work, so
//! every backend and the oracle agree on what a case computes.
mod conv;
mod elementwise;
mod footprint;
mod gemm;
mod norm;

pub use footprint::Footprint;

pub use conv::Conv2d;
pub(crate) use gemm::GemmShape;

/// A product of sizes in f64: never overflows, exact enough for work.
fn product(sizes: &[usize]) -> f64 {
    sizes.iter().map(|&s| s as f64).product()
}

/// The normalised gemm parameters of a gemm-family op (defaults for others).
pub(crate) fn gemm_shape(op: &OpSpec) -> GemmShape {
    GemmShape::from_spec(op)
}

use serde::{Deserialize, Serialize};

use crate::error::{RegressError, Result};

fn one() -> f64 {
    1.0
}
fn layer_norm_eps() -> f64 {
    1e-5
}

/// One operator and its sizes, as written in a case file's `[case.op]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum OpSpec {
    /// `C = alpha * op(A) op(B) + beta * C`, row-major; `A` is `[m,k]`
    /// (`[k,m]` with `trans_a`), `B` is `[k,n]` (`[n,k]` with `trans_b`).
    Gemm {
        m: usize,
        n: usize,
        k: usize,
        #[serde(default)]
        trans_a: bool,
        #[serde(default)]
        trans_b: bool,
        #[serde(default = "one")]
        alpha: f64,
        #[serde(default)]
        beta: f64,
    },
    /// `batch` independent gemms (cuBLAS's pointer-array form).
    BatchedGemm {
        batch: usize,
        m: usize,
        n: usize,
        k: usize,
        #[serde(default)]
        trans_a: bool,
        #[serde(default)]
        trans_b: bool,
        #[serde(default = "one")]
        alpha: f64,
        #[serde(default)]
        beta: f64,
    },
    /// Strided-batched gemm; a stride of 0 broadcasts one matrix to every
    /// batch entry. Strides default to the packed size of one matrix.
    StridedBatchedGemm {
        batch: usize,
        m: usize,
        n: usize,
        k: usize,
        #[serde(default)]
        trans_a: bool,
        #[serde(default)]
        trans_b: bool,
        #[serde(default = "one")]
        alpha: f64,
        #[serde(default)]
        beta: f64,
        stride_a: Option<usize>,
        stride_b: Option<usize>,
    },
    /// Softmax over the last axis of `[rows, cols]`.
    Softmax {
        rows: usize,
        cols: usize,
    },
    /// Layer norm over the last axis of `[rows, cols]` with `gamma`, `beta`.
    LayerNorm {
        rows: usize,
        cols: usize,
        #[serde(default = "layer_norm_eps")]
        eps: f64,
    },
    /// NCHW input `[n,c,h,w]`, KCRS weight `[k,c,r,s]`, no bias, groups = 1.
    Conv2d(Conv2d),
    Add {
        len: usize,
    },
    Mul {
        len: usize,
    },
    /// Exact (erf) GELU, PyTorch's default.
    Gelu {
        len: usize,
    },
    Silu {
        len: usize,
    },
    /// Sum over the last axis of `[rows, cols]`.
    ReduceSum {
        rows: usize,
        cols: usize,
    },
    /// Max over the last axis of `[rows, cols]`.
    ReduceMax {
        rows: usize,
        cols: usize,
    },
}

impl OpSpec {
    /// The `kind` string as written in case files.
    pub fn kind(&self) -> &'static str {
        match self {
            OpSpec::Gemm { .. } => "gemm",
            OpSpec::BatchedGemm { .. } => "batched_gemm",
            OpSpec::StridedBatchedGemm { .. } => "strided_batched_gemm",
            OpSpec::Softmax { .. } => "softmax",
            OpSpec::LayerNorm { .. } => "layer_norm",
            OpSpec::Conv2d(_) => "conv2d",
            OpSpec::Add { .. } => "add",
            OpSpec::Mul { .. } => "mul",
            OpSpec::Gelu { .. } => "gelu",
            OpSpec::Silu { .. } => "silu",
            OpSpec::ReduceSum { .. } => "reduce_sum",
            OpSpec::ReduceMax { .. } => "reduce_max",
        }
    }

    /// Shapes of the inputs, in the order backends receive them.
    pub fn input_shapes(&self) -> Result<Vec<Vec<usize>>> {
        self.validate()?;
        Ok(match *self {
            OpSpec::Gemm { .. }
            | OpSpec::BatchedGemm { .. }
            | OpSpec::StridedBatchedGemm { .. } => {
                gemm::input_shapes(&gemm::GemmShape::from_spec(self))
            }
            OpSpec::Softmax { rows, cols }
            | OpSpec::ReduceSum { rows, cols }
            | OpSpec::ReduceMax { rows, cols } => vec![vec![rows, cols]],
            OpSpec::LayerNorm { rows, cols, .. } => vec![vec![rows, cols], vec![cols], vec![cols]],
            OpSpec::Conv2d(Conv2d {
                n,
                c,
                h,
                w,
                k,
                r,
                s,
                ..
            }) => vec![vec![n, c, h, w], vec![k, c, r, s]],
            OpSpec::Add { len } | OpSpec::Mul { len } => vec![vec![len], vec![len]],
            OpSpec::Gelu { len } | OpSpec::Silu { len } => vec![vec![len]],
        })
    }

    /// Shape of the single output.
    pub fn output_shape(&self) -> Result<Vec<usize>> {
        self.validate()?;
        Ok(match *self {
            OpSpec::Gemm { m, n, .. } => vec![m, n],
            OpSpec::BatchedGemm { batch, m, n, .. }
            | OpSpec::StridedBatchedGemm { batch, m, n, .. } => {
                vec![batch, m, n]
            }
            OpSpec::Softmax { rows, cols } | OpSpec::LayerNorm { rows, cols, .. } => {
                vec![rows, cols]
            }
            OpSpec::ReduceSum { rows, .. } | OpSpec::ReduceMax { rows, .. } => vec![rows],
            OpSpec::Conv2d(Conv2d { n, k, .. }) => {
                let (p, q) = conv::output_hw(self);
                vec![n, k, p, q]
            }
            OpSpec::Add { len }
            | OpSpec::Mul { len }
            | OpSpec::Gelu { len }
            | OpSpec::Silu { len } => {
                vec![len]
            }
        })
    }

    /// Floating-point operations (or elements touched, for memory-bound
    /// ops); used to bucket cases into shape classes.
    pub fn work(&self) -> f64 {
        match *self {
            OpSpec::Gemm { m, n, k, .. } => 2.0 * product(&[m, n, k]),
            OpSpec::BatchedGemm { batch, m, n, k, .. }
            | OpSpec::StridedBatchedGemm { batch, m, n, k, .. } => 2.0 * product(&[batch, m, n, k]),
            OpSpec::Conv2d(Conv2d { n, c, k, r, s, .. }) => {
                let (p, q) = conv::output_hw(self);
                2.0 * product(&[n, k, p, q, c, r, s])
            }
            OpSpec::Softmax { rows, cols }
            | OpSpec::LayerNorm { rows, cols, .. }
            | OpSpec::ReduceSum { rows, cols }
            | OpSpec::ReduceMax { rows, cols } => product(&[rows, cols]),
            OpSpec::Add { len }
            | OpSpec::Mul { len }
            | OpSpec::Gelu { len }
            | OpSpec::Silu { len } => len as f64,
        }
    }

    /// Reject sizes no backend can run, naming the field.
    pub fn validate(&self) -> Result<()> {
        let zero = |field: &str| {
            Err(RegressError::op(
                self.kind(),
                format!("`{field}` must be at least 1"),
            ))
        };
        match *self {
            OpSpec::Gemm { m, n, k, .. } if [m, n, k].contains(&0) => zero("m, n and k"),
            OpSpec::BatchedGemm { batch, m, n, k, .. }
            | OpSpec::StridedBatchedGemm { batch, m, n, k, .. }
                if [batch, m, n, k].contains(&0) =>
            {
                zero("batch, m, n and k")
            }
            OpSpec::Softmax { rows, cols }
            | OpSpec::LayerNorm { rows, cols, .. }
            | OpSpec::ReduceSum { rows, cols }
            | OpSpec::ReduceMax { rows, cols }
                if rows == 0 || cols == 0 =>
            {
                zero("rows and cols")
            }
            OpSpec::Add { len }
            | OpSpec::Mul { len }
            | OpSpec::Gelu { len }
            | OpSpec::Silu { len }
                if len == 0 =>
            {
                zero("len")
            }
            OpSpec::Conv2d(_) => conv::validate(self),
            _ => Ok(()),
        }
    }

    /// The f64 reference result: inputs are taken as exact values and every
    /// sum is accumulated in f64.
    pub fn reference(&self, inputs: &[Vec<f64>]) -> Result<Vec<f64>> {
        let shapes = self.input_shapes()?;
        if inputs.len() != shapes.len() {
            return Err(RegressError::op(
                self.kind(),
                format!("expected {} inputs, got {}", shapes.len(), inputs.len()),
            ));
        }
        for (i, (input, shape)) in inputs.iter().zip(&shapes).enumerate() {
            if input.len() != shape.iter().product::<usize>() {
                return Err(RegressError::op(
                    self.kind(),
                    format!(
                        "input {i} has {} elements, shape {shape:?} needs more or fewer",
                        input.len()
                    ),
                ));
            }
        }
        Ok(match *self {
            OpSpec::Gemm { .. }
            | OpSpec::BatchedGemm { .. }
            | OpSpec::StridedBatchedGemm { .. } => {
                gemm::reference(&gemm::GemmShape::from_spec(self), inputs)
            }
            OpSpec::Softmax { cols, .. } => norm::softmax(&inputs[0], cols),
            OpSpec::LayerNorm { cols, eps, .. } => {
                norm::layer_norm(&inputs[0], &inputs[1], &inputs[2], cols, eps)
            }
            OpSpec::ReduceSum { cols, .. } => {
                norm::reduce_rows(&inputs[0], cols, 0.0, |a, b| a + b)
            }
            OpSpec::ReduceMax { cols, .. } => {
                norm::reduce_rows(&inputs[0], cols, f64::NEG_INFINITY, f64::max)
            }
            OpSpec::Conv2d(_) => conv::reference(self, &inputs[0], &inputs[1]),
            OpSpec::Add { .. } => elementwise::binary(&inputs[0], &inputs[1], |a, b| a + b),
            OpSpec::Mul { .. } => elementwise::binary(&inputs[0], &inputs[1], |a, b| a * b),
            OpSpec::Gelu { .. } => elementwise::unary(&inputs[0], elementwise::gelu),
            OpSpec::Silu { .. } => elementwise::unary(&inputs[0], elementwise::silu),
        })
    }
}
