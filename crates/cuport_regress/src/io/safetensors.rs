//! safetensors: u64 LE header length, a JSON header, then the data buffer.
use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::dtype::DType;
use crate::error::{RegressError, Result};
use crate::tensor::{byte_len, Tensor};

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

fn code(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "F32",
        DType::F16 => "F16",
        DType::Bf16 => "BF16",
        DType::F64 => "F64",
        DType::I32 => "I32",
    }
}

fn from_code(code: &str) -> Option<DType> {
    DType::ALL.into_iter().find(|d| self::code(*d) == code)
}

pub fn to_bytes(tensors: &BTreeMap<String, Tensor>) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, t) in tensors {
        let start = data.len();
        data.extend_from_slice(&t.to_le_bytes());
        let entry = Entry {
            dtype: code(t.dtype()).to_owned(),
            shape: t.shape.clone(),
            data_offsets: [start, data.len()],
        };
        header.insert(
            name.clone(),
            serde_json::to_value(entry).unwrap_or_default(),
        );
    }
    let mut json = serde_json::Value::Object(header).to_string().into_bytes();
    // The format pads the header with spaces to an 8-byte boundary.
    json.resize(json.len().div_ceil(8) * 8, b' ');
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&json);
    out.extend_from_slice(&data);
    out
}

pub fn write(path: &Path, tensors: &BTreeMap<String, Tensor>) -> Result<()> {
    std::fs::write(path, to_bytes(tensors)).map_err(|e| RegressError::io(path, e))
}

pub fn read(path: &Path) -> Result<Vec<(String, Tensor)>> {
    let bytes = std::fs::read(path).map_err(|e| RegressError::io(path, e))?;
    parse(&bytes).map_err(|m| RegressError::format(path, m))
}

pub fn parse(bytes: &[u8]) -> std::result::Result<Vec<(String, Tensor)>, String> {
    let len_bytes: [u8; 8] = bytes
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .ok_or("file shorter than the 8-byte header length")?;
    let header_len =
        usize::try_from(u64::from_le_bytes(len_bytes)).map_err(|_| "header length overflows")?;
    let header = bytes
        .get(8..8usize.saturating_add(header_len))
        .ok_or("truncated safetensors header")?;
    let map: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(header).map_err(|e| format!("bad safetensors JSON header: {e}"))?;
    let data = &bytes[8 + header_len..];
    let mut out = Vec::new();
    for (name, value) in map {
        if name == "__metadata__" {
            continue;
        }
        let entry: Entry =
            serde_json::from_value(value).map_err(|e| format!("tensor `{name}`: {e}"))?;
        out.push((name.clone(), tensor(&name, &entry, data)?));
    }
    Ok(out)
}

fn tensor(name: &str, entry: &Entry, data: &[u8]) -> std::result::Result<Tensor, String> {
    let dtype = from_code(&entry.dtype).ok_or_else(|| {
        format!(
            "tensor `{name}`: unsupported dtype {} (use F32, F16, BF16, F64 or I32)",
            entry.dtype
        )
    })?;
    let [start, end] = entry.data_offsets;
    let need = byte_len(&entry.shape, dtype);
    if end < start || end - start != need {
        return Err(format!(
            "tensor `{name}`: data_offsets span {} bytes, shape {:?} needs {need}",
            end.saturating_sub(start),
            entry.shape
        ));
    }
    let bytes = data.get(start..end).ok_or_else(|| {
        format!(
            "truncated tensor `{name}`: needs bytes {start}..{end} but the data section holds {}",
            data.len()
        )
    })?;
    Ok(Tensor::from_le_bytes(dtype, entry.shape.clone(), bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_dtype_and_detects_truncation() -> std::result::Result<(), String> {
        let mut map = BTreeMap::new();
        for d in DType::ALL {
            map.insert(
                d.name().to_owned(),
                Tensor::from_f64(d, vec![2, 2], &[1.0, -2.0, 0.5, 8.0]),
            );
        }
        let bytes = to_bytes(&map);
        let back: BTreeMap<_, _> = parse(&bytes)?.into_iter().collect();
        assert_eq!(back, map);
        let err = parse(&bytes[..bytes.len() - 1]).err().unwrap_or_default();
        assert!(err.contains("truncated"), "{err}");
        Ok(())
    }
}
