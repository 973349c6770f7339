//! Host tensors: a shape plus typed, row-major data.
use half::{bf16, f16};

use crate::dtype::DType;

/// Row-major element storage, one variant per [`DType`].
#[derive(Debug, Clone, PartialEq)]
pub enum TensorData {
    F32(Vec<f32>),
    F16(Vec<f16>),
    Bf16(Vec<bf16>),
    F64(Vec<f64>),
    I32(Vec<i32>),
}

/// A named-free host tensor.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: TensorData,
}

impl Tensor {
    /// Store `values` (already computed in f64) as `dtype`, rounding each.
    pub fn from_f64(dtype: DType, shape: Vec<usize>, values: &[f64]) -> Tensor {
        let data = match dtype {
            DType::F32 => TensorData::F32(values.iter().map(|&v| v as f32).collect()),
            DType::F16 => TensorData::F16(values.iter().map(|&v| f16::from_f64(v)).collect()),
            DType::Bf16 => TensorData::Bf16(values.iter().map(|&v| bf16::from_f64(v)).collect()),
            DType::F64 => TensorData::F64(values.to_vec()),
            DType::I32 => TensorData::I32(values.iter().map(|&v| v.round() as i32).collect()),
        };
        Tensor { shape, data }
    }

    pub fn dtype(&self) -> DType {
        match self.data {
            TensorData::F32(_) => DType::F32,
            TensorData::F16(_) => DType::F16,
            TensorData::Bf16(_) => DType::Bf16,
            TensorData::F64(_) => DType::F64,
            TensorData::I32(_) => DType::I32,
        }
    }

    pub fn len(&self) -> usize {
        match &self.data {
            TensorData::F32(v) => v.len(),
            TensorData::F16(v) => v.len(),
            TensorData::Bf16(v) => v.len(),
            TensorData::F64(v) => v.len(),
            TensorData::I32(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every element widened to f64 (exact for all supported types).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        match &self.data {
            TensorData::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            TensorData::F16(v) => v.iter().map(|x| x.to_f64()).collect(),
            TensorData::Bf16(v) => v.iter().map(|x| x.to_f64()).collect(),
            TensorData::F64(v) => v.clone(),
            TensorData::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        }
    }

    /// Raw little-endian bytes, as `.npy` and safetensors store them.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match &self.data {
            TensorData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            TensorData::F16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            TensorData::Bf16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            TensorData::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            TensorData::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    /// Build from little-endian bytes; `bytes.len()` must equal
    /// `product(shape) * dtype.size_bytes()` (checked by the callers, which
    /// know the file to blame).
    pub fn from_le_bytes(dtype: DType, shape: Vec<usize>, bytes: &[u8]) -> Tensor {
        let data = match dtype {
            DType::F32 => TensorData::F32(chunks(bytes, f32::from_le_bytes)),
            DType::F16 => TensorData::F16(chunks(bytes, f16::from_le_bytes)),
            DType::Bf16 => TensorData::Bf16(chunks(bytes, bf16::from_le_bytes)),
            DType::F64 => TensorData::F64(chunks(bytes, f64::from_le_bytes)),
            DType::I32 => TensorData::I32(chunks(bytes, i32::from_le_bytes)),
        };
        Tensor { shape, data }
    }
}

fn chunks<T, const N: usize>(bytes: &[u8], convert: fn([u8; N]) -> T) -> Vec<T> {
    bytes
        .chunks_exact(N)
        .map(|c| {
            let mut buf = [0u8; N];
            buf.copy_from_slice(c);
            convert(buf)
        })
        .collect()
}

/// Number of elements a shape holds.
pub fn element_count(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Bytes a tensor of `shape` and `dtype` needs; saturates instead of
/// overflowing, since shapes come from files legs wrote.
pub fn byte_len(shape: &[usize], dtype: DType) -> usize {
    shape
        .iter()
        .fold(dtype.size_bytes(), |bytes, &d| bytes.saturating_mul(d))
}
