//! Element types a case can use, and what "one ulp" and "close enough" mean
//! for each of them.
use half::{bf16, f16};
use serde::{Deserialize, Serialize};

/// Element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    F32,
    F16,
    Bf16,
    F64,
    I32,
}

/// Elementwise closeness: `|actual - expected| <= atol + rtol * |expected|`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

impl DType {
    pub const ALL: [DType; 5] = [DType::F32, DType::F16, DType::Bf16, DType::F64, DType::I32];

    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::F64 => "f64",
            DType::I32 => "i32",
        }
    }

    pub fn size_bytes(self) -> usize {
        match self {
            DType::F16 | DType::Bf16 => 2,
            DType::F32 | DType::I32 => 4,
            DType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        self != DType::I32
    }

    /// The value `v` becomes once stored in this type (round to nearest even;
    /// integers saturate).
    pub fn round(self, v: f64) -> f64 {
        match self {
            DType::F32 => f64::from(v as f32),
            DType::F16 => f16::from_f64(v).to_f64(),
            DType::Bf16 => bf16::from_f64(v).to_f64(),
            DType::F64 => v,
            DType::I32 => f64::from(v.round() as i32),
        }
    }

    /// torch.testing.assert_close's defaults (`_DTYPE_PRECISIONS`); integers
    /// compare exactly.
    pub fn default_tolerance(self) -> Tolerance {
        let (rtol, atol) = match self {
            DType::F16 => (1e-3, 1e-5),
            DType::Bf16 => (1.6e-2, 1e-5),
            DType::F32 => (1.3e-6, 1e-5),
            DType::F64 => (1e-7, 1e-7),
            DType::I32 => (0.0, 0.0),
        };
        Tolerance { rtol, atol }
    }

    /// Position of `v` (after rounding to this type) on a line where
    /// neighbouring representable values are 1 apart; ±0 map to 0.
    pub fn ordered(self, v: f64) -> i64 {
        match self {
            DType::F32 => ordered_bits(u64::from((v as f32).to_bits()), 32),
            DType::F16 => ordered_bits(u64::from(f16::from_f64(v).to_bits()), 16),
            DType::Bf16 => ordered_bits(u64::from(bf16::from_f64(v).to_bits()), 16),
            DType::F64 => ordered_bits(v.to_bits(), 64),
            DType::I32 => v as i64,
        }
    }

    /// Parse the names used in npy/safetensors headers and case files.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Sign-magnitude IEEE bits to a monotonic integer (two's complement).
fn ordered_bits(bits: u64, width: u32) -> i64 {
    let sign = 1u64 << (width - 1);
    let magnitude = (bits & (sign - 1)) as i64;
    if bits & sign != 0 {
        -magnitude
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbouring_floats_are_one_ulp_apart() {
        let x = 1.0f32;
        let next = f32::from_bits(x.to_bits() + 1);
        assert_eq!(
            DType::F32.ordered(f64::from(next)) - DType::F32.ordered(1.0),
            1
        );
        assert_eq!(DType::F32.ordered(0.0), DType::F32.ordered(-0.0));
        let tiny = f64::from(f32::from_bits(1));
        assert_eq!(DType::F32.ordered(tiny) - DType::F32.ordered(-tiny), 2);
    }

    #[test]
    fn rounding_matches_the_storage_type() {
        assert_eq!(DType::Bf16.round(1.0 + 1.0 / 512.0), 1.0);
        assert_eq!(DType::F16.round(1.0 + 1.0 / 1024.0), 1.0 + 1.0 / 1024.0);
        assert_eq!(DType::I32.round(2.6), 3.0);
    }
}
