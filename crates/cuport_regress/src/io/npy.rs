//! NumPy `.npy` (format versions 1–3), little-endian, C order.
use std::path::Path;

use crate::dtype::DType;
use crate::error::{RegressError, Result};
use crate::tensor::{byte_len, Tensor};

const MAGIC: &[u8] = b"\x93NUMPY";

fn descr(dtype: DType) -> Option<&'static str> {
    match dtype {
        DType::F32 => Some("<f4"),
        DType::F16 => Some("<f2"),
        DType::F64 => Some("<f8"),
        DType::I32 => Some("<i4"),
        DType::Bf16 => None,
    }
}

/// Serialise a tensor as version-1 `.npy`; bf16 has no npy type code, so
/// it is refused (write safetensors instead).
pub fn to_bytes(tensor: &Tensor) -> Option<Vec<u8>> {
    let descr = descr(tensor.dtype())?;
    let shape = match tensor.shape.len() {
        1 => format!("({},)", tensor.shape[0]),
        _ => format!(
            "({})",
            tensor
                .shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad so the data starts on a 64-byte boundary, newline-terminated.
    let unpadded = MAGIC.len() + 2 + 2 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(unpadded + 64 + tensor.len() * tensor.dtype().size_bytes());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&tensor.to_le_bytes());
    Some(out)
}

pub fn write(path: &Path, tensor: &Tensor) -> Result<()> {
    let bytes = to_bytes(tensor).ok_or_else(|| {
        RegressError::format(
            path,
            "bf16 has no .npy type code; write a .safetensors file instead",
        )
    })?;
    std::fs::write(path, bytes).map_err(|e| RegressError::io(path, e))
}

pub fn read(path: &Path) -> Result<Tensor> {
    let bytes = std::fs::read(path).map_err(|e| RegressError::io(path, e))?;
    parse(&bytes).map_err(|m| RegressError::format(path, m))
}

/// Parse `.npy` bytes; the error says what is wrong with the file.
pub fn parse(bytes: &[u8]) -> std::result::Result<Tensor, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (missing the \\x93NUMPY magic)".into());
    }
    let (header_len, start) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy format version {v}")),
    };
    let header = bytes
        .get(start..start + header_len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or("truncated or non-UTF-8 .npy header")?;
    let (dtype, shape) = parse_header(header)?;
    let data = &bytes[start + header_len..];
    let need = byte_len(&shape, dtype);
    if data.len() != need {
        return Err(format!(
            "truncated tensor: header says shape {shape:?} of {dtype} ({need} bytes) but the file holds {} data bytes",
            data.len()
        ));
    }
    Ok(Tensor::from_le_bytes(dtype, shape, data))
}

fn parse_header(header: &str) -> std::result::Result<(DType, Vec<usize>), String> {
    let descr = value_after(header, "'descr'")
        .and_then(|v| v.split('\'').nth(1))
        .ok_or("the .npy header has no 'descr'")?;
    let dtype = match descr {
        "<f4" => DType::F32,
        "<f2" => DType::F16,
        "<f8" => DType::F64,
        "<i4" => DType::I32,
        other => {
            return Err(format!(
                "unsupported .npy dtype '{other}': use little-endian float32/float16/float64/int32 (bf16: safetensors)"
            ))
        }
    };
    if value_after(header, "'fortran_order'").is_some_and(|v| v.trim_start().starts_with("True")) {
        return Err(
            "fortran_order arrays are not supported; save with np.ascontiguousarray".into(),
        );
    }
    let shape_text = value_after(header, "'shape'")
        .and_then(|v| {
            v.split_once('(')
                .and_then(|(_, rest)| rest.split_once(')'))
                .map(|(inner, _)| inner)
        })
        .ok_or("the .npy header has no 'shape' tuple")?;
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| format!("bad dimension '{s}' in .npy shape"))
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((dtype, shape))
}

fn value_after<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    header
        .find(key)
        .map(|at| &header[at + key.len()..])
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_detects_truncation() -> std::result::Result<(), String> {
        let t = Tensor::from_f64(DType::F32, vec![2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let bytes = to_bytes(&t).ok_or("no bytes")?;
        assert_eq!((bytes.len() - 24) % 64, 0, "data is 64-byte aligned");
        assert_eq!(parse(&bytes)?, t);
        let err = parse(&bytes[..bytes.len() - 4]).err().unwrap_or_default();
        assert!(err.contains("truncated tensor"), "{err}");
        Ok(())
    }

    #[test]
    fn an_absurd_shape_is_an_error_not_an_overflow() -> std::result::Result<(), String> {
        let header =
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }\n";
        let mut bytes = MAGIC.to_vec();
        bytes.extend([1, 0]);
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header.as_bytes());
        bytes.extend([0u8; 16]);
        let err = parse(&bytes).err().unwrap_or_default();
        assert!(
            err.contains("truncated tensor: header says shape [4611686018427387904, 8]"),
            "{err}"
        );
        Ok(())
    }

    #[test]
    fn scalars_and_vectors_parse() -> std::result::Result<(), String> {
        let v = Tensor::from_f64(DType::I32, vec![3], &[1.0, -2.0, 3.0]);
        assert_eq!(parse(&to_bytes(&v).ok_or("no bytes")?)?, v);
        Ok(())
    }
}
