//! How our row-major inputs are described to aclnn as `aclTensor` views.
//!
//! aclnnMatmul takes no transpose flags; its reference page says inputs may
//! be non-contiguous, so a transposed operand is a view with swapped
//! strides over the stored buffer (no copy). Strides are in elements, as
//! torch_npu passes `tensor.strides()` (UNCONFIRMED in official text).
//! Broadcast (stride 0) uses Matmul's documented batch broadcasting: the
//! shared matrix is a plain 2-D tensor.
use crate::dtype::DType;
use crate::ops::OpSpec;

use super::api::{ACL_BF16, ACL_FLOAT, ACL_FLOAT16};

/// One `aclCreateTensor` description: view dims and strides over a 1-D
/// storage of `storage` elements.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct View {
    pub(super) dims: Vec<i64>,
    pub(super) strides: Vec<i64>,
    pub(super) storage: i64,
}

/// What aclnn operator runs, with its tensor views in call order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Plan {
    /// `aclnnMatmul(self = A, mat2 = B, out)`.
    Matmul { a: View, b: View, out: View },
    /// `aclnnSoftmax(self = x, dim = 1, out)`.
    Softmax { x: View, out: View },
}

/// `aclDataType` for the dtypes aclnnMatmul/aclnnSoftmax document.
pub(super) fn acl_dtype(dtype: DType) -> Result<i32, String> {
    match dtype {
        DType::F32 => Ok(ACL_FLOAT),
        DType::F16 => Ok(ACL_FLOAT16),
        DType::Bf16 => Ok(ACL_BF16),
        other => Err(format!(
            "{other} is unsupported on the ascend backend (aclnnMatmul/aclnnSoftmax take f32, f16, bf16)"
        )),
    }
}

fn int(v: usize) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn contiguous(dims: &[usize]) -> View {
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * int(dims[i + 1]);
    }
    View {
        dims: dims.iter().map(|&d| int(d)).collect(),
        strides,
        storage: int(dims.iter().product()),
    }
}

/// A logical `[rows, cols]` operand stored row-major as `[rows, cols]`,
/// or as `[cols, rows]` when `trans`; `batch_stride` adds a batch axis.
fn operand(
    rows: usize,
    cols: usize,
    trans: bool,
    batch: Option<(usize, usize)>,
    storage: usize,
) -> View {
    let (row_stride, col_stride) = if trans {
        (1, int(rows))
    } else {
        (int(cols), 1)
    };
    let mut view = View {
        dims: vec![int(rows), int(cols)],
        strides: vec![row_stride, col_stride],
        storage: int(storage),
    };
    if let Some((count, stride)) = batch {
        view.dims.insert(0, int(count));
        view.strides.insert(0, int(stride));
    }
    view
}

/// The aclnn plan for `op`, or why the ascend backend cannot run it.
pub(super) fn plan(op: &OpSpec) -> Result<Plan, String> {
    match *op {
        OpSpec::Softmax { rows, cols } => Ok(Plan::Softmax {
            x: contiguous(&[rows, cols]),
            out: contiguous(&[rows, cols]),
        }),
        OpSpec::Gemm { .. } | OpSpec::BatchedGemm { .. } | OpSpec::StridedBatchedGemm { .. } => {
            matmul(op)
        }
        _ => Err(format!(
            "`{}` is unsupported on the ascend backend (it runs gemm through aclnnMatmul and \
             softmax through aclnnSoftmax only): use exec legs, i.e. an [[app]] case running \
             your Ascend build",
            op.kind()
        )),
    }
}

fn matmul(op: &OpSpec) -> Result<Plan, String> {
    let g = crate::ops::gemm_shape(op);
    if g.alpha != 1.0 || g.beta != 0.0 {
        return Err(format!(
            "gemm with alpha = {} and beta = {} is unsupported on the ascend backend: \
             aclnnMatmul computes A·B only (alpha = 1, beta = 0)",
            g.alpha, g.beta
        ));
    }
    let shapes = op.input_shapes().map_err(|e| e.to_string())?;
    let len = |i: usize| shapes[i].iter().product::<usize>();
    let batch = |stride: usize| (g.batched && stride != 0).then_some((g.batch, stride));
    let a = operand(g.m, g.k, g.trans_a, batch(g.stride_a), len(0));
    let b = operand(g.k, g.n, g.trans_b, batch(g.stride_b), len(1));
    let out = if g.batched {
        contiguous(&[g.batch, g.m, g.n])
    } else {
        contiguous(&[g.m, g.n])
    };
    if g.batched && a.dims.len() == 2 && b.dims.len() == 2 {
        return Err(
            "strided-batched gemm broadcasting both A and B (both strides 0) is \
                    unsupported on the ascend backend"
                .into(),
        );
    }
    Ok(Plan::Matmul { a, b, out })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Host matmul that reads operands through the views, with
    /// aclnnMatmul's batch broadcasting; must equal the oracle.
    fn through_views(a: &View, b: &View, out: &View, xa: &[f64], xb: &[f64]) -> Vec<f64> {
        let at = |v: &View, x: &[f64], batch: i64, i: i64, j: i64| {
            let n = v.dims.len();
            let base = if n == 3 { batch * v.strides[0] } else { 0 };
            x[(base + i * v.strides[n - 2] + j * v.strides[n - 1]) as usize]
        };
        let (batches, m, n) = match out.dims.as_slice() {
            [b, m, n] => (*b, *m, *n),
            [m, n] => (1, *m, *n),
            _ => panic!("bad out dims"),
        };
        let k = a.dims[a.dims.len() - 1];
        let mut y = vec![0.0; (batches * m * n) as usize];
        for bt in 0..batches {
            for i in 0..m {
                for j in 0..n {
                    y[(bt * m * n + i * n + j) as usize] = (0..k)
                        .map(|p| at(a, xa, bt, i, p) * at(b, xb, bt, p, j))
                        .sum();
                }
            }
        }
        y
    }

    fn check(op: OpSpec) {
        let shapes = op.input_shapes().expect("valid op");
        let inputs: Vec<Vec<f64>> = shapes
            .iter()
            .enumerate()
            .map(|(s, shape)| {
                let len: usize = shape.iter().product();
                (0..len).map(|i| ((i * 5 + s) % 9) as f64 - 4.0).collect()
            })
            .collect();
        let expected = op.reference(&inputs).expect("reference");
        let Ok(Plan::Matmul { a, b, out }) = plan(&op) else {
            panic!("{op:?} should plan as a matmul");
        };
        assert_eq!(a.storage as usize, inputs[0].len());
        assert_eq!(
            through_views(&a, &b, &out, &inputs[0], &inputs[1]),
            expected,
            "{op:?}"
        );
    }

    #[test]
    #[allow(clippy::expect_used)]
    fn transposes_and_batches_become_strided_views() {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            check(OpSpec::Gemm {
                m: 3,
                n: 5,
                k: 4,
                trans_a: ta,
                trans_b: tb,
                alpha: 1.0,
                beta: 0.0,
            });
            check(OpSpec::StridedBatchedGemm {
                batch: 3,
                m: 2,
                n: 3,
                k: 4,
                trans_a: ta,
                trans_b: tb,
                alpha: 1.0,
                beta: 0.0,
                stride_a: Some(0),
                stride_b: Some(20),
            });
        }
        check(OpSpec::BatchedGemm {
            batch: 2,
            m: 4,
            n: 2,
            k: 3,
            trans_a: false,
            trans_b: true,
            alpha: 1.0,
            beta: 0.0,
        });
    }

    #[test]
    fn scaled_gemms_and_other_ops_say_why_they_do_not_run() {
        let scaled = OpSpec::Gemm {
            m: 2,
            n: 2,
            k: 2,
            trans_a: false,
            trans_b: false,
            alpha: 2.0,
            beta: 0.0,
        };
        assert!(plan(&scaled).is_err_and(|e| e.contains("aclnnMatmul computes A·B only")));
        assert!(plan(&OpSpec::Gelu { len: 4 }).is_err_and(|e| e.contains("use exec legs")));
        assert!(acl_dtype(DType::F64).is_err());
        assert_eq!(acl_dtype(DType::Bf16), Ok(27));
    }
}
