//! Launch geometry and scalar arguments of the NVRTC kernels.
use cudarc::driver::LaunchConfig;

use super::{kernels, BACKEND};
use crate::error::{RegressError, Result};
use crate::ops::OpSpec;

/// Kernel arguments after the device pointers.
pub(super) enum Scalars {
    Len(i64),
    LayerNorm { cols: i64, eps: f64 },
    Conv([i32; 12]),
}

/// Grid, block and scalar arguments of a kernel op.
pub(super) fn kernel_config(op: &OpSpec) -> Result<(LaunchConfig, Scalars)> {
    let flat = |n: usize| {
        // Grid-stride kernels: cap the grid, the loop covers the rest.
        let blocks = n.div_ceil(256).clamp(1, 65_535) as u32;
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        }
    };
    let rows = |rows: usize| -> Result<LaunchConfig> {
        let blocks = u32::try_from(rows).map_err(|_| {
            RegressError::unsupported(BACKEND, format!("{rows} rows exceed the grid limit"))
        })?;
        Ok(LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (kernels::ROW_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        })
    };
    let len = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    Ok(match *op {
        OpSpec::Add { len: n }
        | OpSpec::Mul { len: n }
        | OpSpec::Gelu { len: n }
        | OpSpec::Silu { len: n } => (flat(n), Scalars::Len(len(n))),
        OpSpec::Softmax { rows: r, cols }
        | OpSpec::ReduceSum { rows: r, cols }
        | OpSpec::ReduceMax { rows: r, cols } => (rows(r)?, Scalars::Len(len(cols))),
        OpSpec::LayerNorm { rows: r, cols, eps } => (
            rows(r)?,
            Scalars::LayerNorm {
                cols: len(cols),
                eps,
            },
        ),
        OpSpec::Conv2d(_) => conv_config(op, flat)?,
        _ => return Err(RegressError::unsupported(BACKEND, "no kernel for this op")),
    })
}

fn conv_config(
    op: &OpSpec,
    flat: impl Fn(usize) -> LaunchConfig,
) -> Result<(LaunchConfig, Scalars)> {
    let OpSpec::Conv2d(crate::ops::Conv2d {
        n,
        c,
        h,
        w,
        k,
        r,
        s,
        stride,
        padding,
        dilation,
    }) = *op
    else {
        return Err(RegressError::unsupported(BACKEND, "not a conv2d"));
    };
    let shape = op.output_shape()?;
    let (p, q) = (shape[2], shape[3]);
    let mut values = [0i32; 12];
    for (slot, v) in values
        .iter_mut()
        .zip([n, c, h, w, k, r, s, stride, padding, dilation, p, q])
    {
        *slot = i32::try_from(v).map_err(|_| {
            RegressError::unsupported(BACKEND, format!("conv2d size {v} exceeds i32"))
        })?;
    }
    Ok((flat(n * k * p * q), Scalars::Conv(values)))
}
