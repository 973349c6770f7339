//! Host memory an op case needs, computed from its shapes alone, so that a
//! case too big for this machine fails before anything is allocated.
//!
//! The count follows what the harness really holds at once (see
//! `run/op.rs` and `leg.rs`):
//!
//! * oracle (in `cuport` itself): the inputs in the case's dtype, their f64
//!   copies, the f64 result and its copy as a tensor;
//! * a `cpu` leg (a child process): inputs in the dtype and in f64, the
//!   previous and the new f64 result plus the rounded copy, and up to four
//!   dtype-sized buffers while it writes `output.safetensors`;
//! * meanwhile `cuport` keeps the f64 oracle and every finished leg's
//!   output, and reads the next one (file bytes + tensor).
//!
//! Vendor legs hold less host memory than the `cpu` leg, so the `cpu`
//! leg's count bounds them. All sums are in u128 and saturate: sizes come
//! from case files and may be absurd.
use super::{conv, gemm, OpSpec};
use crate::dtype::DType;
use crate::memory::human_bytes;

/// Bytes of one value of the oracle and of the CPU reference.
const F64: u128 = 8;

/// Peak host memory of one op case, and what it is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// Elements of all inputs together.
    pub input_elements: u128,
    pub output_elements: u128,
    /// Bytes the CPU reference allocates besides inputs and output.
    pub workspace_bytes: u128,
    /// Bytes of one element in the case's dtype.
    pub element_bytes: u128,
    /// The largest amount held at once, in bytes.
    pub peak_bytes: u128,
}

impl Footprint {
    /// The footprint of `op` in `dtype` with `legs` legs.
    pub fn of(op: &OpSpec, dtype: DType, legs: usize) -> Footprint {
        let (inputs, output) = element_counts(op);
        let workspace = match *op {
            // One row of exponentials per row, in f64.
            OpSpec::Softmax { cols, .. } => (cols as u128).saturating_mul(F64),
            _ => 0,
        };
        let size = dtype.size_bytes() as u128;
        let bytes = |elements: u128, per: u128, times: u128| {
            elements.saturating_mul(per).saturating_mul(times)
        };
        let both_inputs = bytes(inputs, size, 1).saturating_add(bytes(inputs, F64, 1));
        let oracle = both_inputs
            .saturating_add(bytes(output, F64, 2))
            .saturating_add(workspace);
        let child = both_inputs
            .saturating_add(bytes(output, F64, 3))
            .saturating_add(bytes(output, size, 4))
            .saturating_add(workspace);
        let parent_while_legs_run =
            bytes(output, F64, 1).saturating_add(bytes(output, size, legs as u128 + 1));
        Footprint {
            input_elements: inputs,
            output_elements: output,
            workspace_bytes: workspace,
            element_bytes: size,
            peak_bytes: oracle.max(parent_while_legs_run.saturating_add(child)),
        }
    }

    /// `inputs 3.0e10 elements (111.8 GiB as f32 + 223.5 GiB as f64), ...`
    pub fn describe(&self, dtype: DType) -> String {
        let workspace = if self.workspace_bytes > 0 {
            format!(
                ", CPU reference workspace {}",
                human_bytes(self.workspace_bytes)
            )
        } else {
            String::new()
        };
        format!(
            "inputs {} elements ({} as {} + {} as f64), output {} elements ({} as f64 for the oracle){workspace}",
            elements(self.input_elements),
            human_bytes(self.input_elements.saturating_mul(self.element_bytes)),
            dtype.name(),
            human_bytes(self.input_elements.saturating_mul(F64)),
            elements(self.output_elements),
            human_bytes(self.output_elements.saturating_mul(F64)),
        )
    }
}

/// `1000` below ten thousand, `3.0e10` above.
fn elements(n: u128) -> String {
    if n < 10_000 {
        n.to_string()
    } else {
        format!("{:.1e}", n as f64)
    }
}

fn count(dims: &[usize]) -> u128 {
    dims.iter()
        .fold(1u128, |acc, &d| acc.saturating_mul(d as u128))
}

/// (all inputs, output) element counts, mirroring `input_shapes` and
/// `output_shape` without their usize arithmetic.
fn element_counts(op: &OpSpec) -> (u128, u128) {
    match *op {
        OpSpec::Gemm { .. } | OpSpec::BatchedGemm { .. } | OpSpec::StridedBatchedGemm { .. } => {
            gemm::element_counts(&gemm::GemmShape::from_spec(op))
        }
        OpSpec::Softmax { rows, cols } => (count(&[rows, cols]), count(&[rows, cols])),
        OpSpec::ReduceSum { rows, cols } | OpSpec::ReduceMax { rows, cols } => {
            (count(&[rows, cols]), rows as u128)
        }
        OpSpec::LayerNorm { rows, cols, .. } => (
            count(&[rows, cols]).saturating_add(count(&[2, cols])),
            count(&[rows, cols]),
        ),
        OpSpec::Conv2d(super::Conv2d {
            n,
            c,
            h,
            w,
            k,
            r,
            s,
            ..
        }) => {
            let (p, q) = conv::output_hw(op);
            (
                count(&[n, c, h, w]).saturating_add(count(&[k, c, r, s])),
                count(&[n, k, p, q]),
            )
        }
        OpSpec::Add { len } | OpSpec::Mul { len } => (count(&[2, len]), len as u128),
        OpSpec::Gelu { len } | OpSpec::Silu { len } => (len as u128, len as u128),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemm(m: usize, n: usize, k: usize) -> OpSpec {
        OpSpec::Gemm {
            m,
            n,
            k,
            trans_a: false,
            trans_b: false,
            alpha: 1.0,
            beta: 0.0,
        }
    }

    #[test]
    fn counts_match_the_shapes_the_ops_allocate() -> crate::Result<()> {
        let strided = OpSpec::StridedBatchedGemm {
            batch: 3,
            m: 4,
            n: 5,
            k: 6,
            trans_a: true,
            trans_b: false,
            alpha: 1.0,
            beta: 0.0,
            stride_a: Some(0),
            stride_b: Some(40),
        };
        let conv = OpSpec::Conv2d(super::super::Conv2d {
            n: 2,
            c: 3,
            h: 9,
            w: 7,
            k: 4,
            r: 3,
            s: 2,
            stride: 2,
            padding: 1,
            dilation: 1,
        });
        let ops = [
            gemm(3, 5, 7),
            strided,
            conv,
            OpSpec::LayerNorm {
                rows: 3,
                cols: 8,
                eps: 1e-5,
            },
            OpSpec::ReduceMax { rows: 3, cols: 8 },
            OpSpec::Add { len: 11 },
        ];
        for op in &ops {
            let inputs: usize = op
                .input_shapes()?
                .iter()
                .map(|s| s.iter().product::<usize>())
                .sum();
            let output: usize = op.output_shape()?.iter().product();
            assert_eq!(
                element_counts(op),
                (inputs as u128, output as u128),
                "{op:?}"
            );
        }
        Ok(())
    }

    #[test]
    fn the_issue_gemm_needs_far_more_than_any_ci_machine() {
        let f = Footprint::of(&gemm(100_000, 100_000, 100_000), DType::F32, 2);
        assert_eq!(f.input_elements, 30_000_000_000);
        assert_eq!(f.output_elements, 10_000_000_000);
        // Child: 120 GB + 240 GB inputs, 240 GB f64 results, 160 GB
        // write buffers; cuport: 80 GB oracle + 3 × 40 GB outputs.
        assert_eq!(f.peak_bytes, 960_000_000_000);
        let text = f.describe(DType::F32);
        assert!(
            text.contains("3.0e10 elements (111.8 GiB as f32 + 223.5 GiB as f64)"),
            "{text}"
        );
    }

    #[test]
    fn small_cases_are_small_and_absurd_ones_saturate() {
        let f = Footprint::of(&gemm(64, 48, 96), DType::F16, 2);
        assert!(f.peak_bytes < 1 << 20, "{f:?}");
        let softmax = Footprint::of(
            &OpSpec::Softmax {
                rows: 2,
                cols: 1000,
            },
            DType::F32,
            1,
        );
        assert_eq!(softmax.workspace_bytes, 8000);
        let huge = usize::MAX;
        let f = Footprint::of(&gemm(huge, huge, huge), DType::F64, 3);
        assert_eq!(f.peak_bytes, u128::MAX);
    }
}
