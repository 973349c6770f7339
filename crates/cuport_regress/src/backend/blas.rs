//! Row-major gemm cases expressed as column-major BLAS calls.
//!
//! cuBLAS (and hipBLAS) are column-major; our tensors are row-major. A
//! row-major `[rows, cols]` buffer read column-major is its transpose, so
//! `C = op(A)·op(B)` (row-major) is computed as `Cᵀ = op(B)ᵀ·op(A)ᵀ`
//! (column-major): swap the operands, keep each operand's transpose flag,
//! swap m and n, and use each stored matrix's column count as its leading
//! dimension. No data is moved. Shared by the `cuda` and `hip` backends.
use crate::ops::OpSpec;

/// One `gemmStridedBatched` call, in BLAS terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BlasGemm {
    /// Transpose flag of the first BLAS operand (our B).
    pub(crate) trans_first: bool,
    /// Transpose flag of the second BLAS operand (our A).
    pub(crate) trans_second: bool,
    pub(crate) m: i32,
    pub(crate) n: i32,
    pub(crate) k: i32,
    pub(crate) ld_first: i32,
    pub(crate) ld_second: i32,
    pub(crate) ldc: i32,
    pub(crate) stride_first: i64,
    pub(crate) stride_second: i64,
    pub(crate) stride_c: i64,
    pub(crate) batch: i32,
    pub(crate) alpha: f64,
    pub(crate) beta: f64,
}

/// The BLAS call for a gemm-family op, or `None` for other ops. Sizes past
/// `i32` are reported by the caller as unsupported.
pub(crate) fn blas_gemm(op: &OpSpec) -> Option<Result<BlasGemm, String>> {
    if !matches!(
        op,
        OpSpec::Gemm { .. } | OpSpec::BatchedGemm { .. } | OpSpec::StridedBatchedGemm { .. }
    ) {
        return None;
    }
    let g = crate::ops::gemm_shape(op);
    let int = |v: usize, what: &str| {
        i32::try_from(v).map_err(|_| format!("{what} = {v} exceeds the BLAS 32-bit limit"))
    };
    let call = || -> Result<BlasGemm, String> {
        Ok(BlasGemm {
            trans_first: g.trans_b,
            trans_second: g.trans_a,
            m: int(g.n, "n")?,
            n: int(g.m, "m")?,
            k: int(g.k, "k")?,
            ld_first: int(g.b_dims().1, "ldb")?,
            ld_second: int(g.a_dims().1, "lda")?,
            ldc: int(g.n, "n")?,
            stride_first: g.stride_b as i64,
            stride_second: g.stride_a as i64,
            stride_c: (g.m * g.n) as i64,
            batch: int(g.batch, "batch")?,
            alpha: g.alpha,
            beta: g.beta,
        })
    };
    Some(call())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference column-major strided-batched gemm with BLAS semantics,
    /// to check the mapping without a GPU.
    fn column_major(call: &BlasGemm, first: &[f64], second: &[f64], c: &mut [f64]) {
        let (m, n, k) = (call.m as usize, call.n as usize, call.k as usize);
        let at = |buf: &[f64], base: usize, ld: usize, trans: bool, row: usize, col: usize| {
            // element (row, col) of op(X), X column-major with leading dim ld
            if trans {
                buf[base + row * ld + col]
            } else {
                buf[base + col * ld + row]
            }
        };
        for b in 0..call.batch as usize {
            let f0 = b * call.stride_first as usize;
            let s0 = b * call.stride_second as usize;
            let c0 = b * call.stride_c as usize;
            for j in 0..n {
                for i in 0..m {
                    let mut acc = 0.0;
                    for p in 0..k {
                        let x = at(first, f0, call.ld_first as usize, call.trans_first, i, p);
                        let y = at(second, s0, call.ld_second as usize, call.trans_second, p, j);
                        acc += x * y;
                    }
                    let idx = c0 + j * call.ldc as usize + i;
                    c[idx] = call.alpha * acc + call.beta * c[idx];
                }
            }
        }
    }

    fn check(op: OpSpec) -> Result<(), String> {
        let shapes = op.input_shapes().map_err(|e| e.to_string())?;
        let inputs: Vec<Vec<f64>> = shapes
            .iter()
            .enumerate()
            .map(|(s, shape)| {
                let len: usize = shape.iter().product();
                (0..len)
                    .map(|i| ((i * 7 + s * 3) % 11) as f64 - 5.0)
                    .collect()
            })
            .collect();
        let expected = op.reference(&inputs).map_err(|e| e.to_string())?;
        let call = blas_gemm(&op).ok_or("not a gemm")??;
        let mut c = inputs[2].clone();
        column_major(&call, &inputs[1], &inputs[0], &mut c);
        assert_eq!(c, expected, "{op:?}");
        Ok(())
    }

    #[test]
    fn row_major_gemms_map_onto_column_major_blas() -> Result<(), String> {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            check(OpSpec::Gemm {
                m: 3,
                n: 5,
                k: 4,
                trans_a: ta,
                trans_b: tb,
                alpha: 1.5,
                beta: 0.5,
            })?;
            check(OpSpec::StridedBatchedGemm {
                batch: 3,
                m: 2,
                n: 3,
                k: 4,
                trans_a: ta,
                trans_b: tb,
                alpha: 1.0,
                beta: -1.0,
                stride_a: Some(0),
                stride_b: None,
            })?;
        }
        check(OpSpec::BatchedGemm {
            batch: 2,
            m: 4,
            n: 2,
            k: 3,
            trans_a: false,
            trans_b: true,
            alpha: 2.0,
            beta: 0.0,
        })
    }

    #[test]
    fn non_gemm_ops_have_no_blas_call() {
        assert!(blas_gemm(&OpSpec::Add { len: 3 }).is_none());
    }
}
