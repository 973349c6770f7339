//! Element types the metrics pass reads: widening to f64 and the
//! monotonic integer position used for ULP distances.
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

use crate::dtype::DType;

/// Elements widened per chunk (two stack buffers of this many f64).
pub(super) const CHUNK: usize = 256;

/// An element type the metrics pass can read.
pub(super) trait Element: Copy {
    const DTYPE: DType;
    /// Widening is a plain cast, so the element-by-element loop is faster
    /// than staging chunks (measured: regress/README.md, "Measured numbers").
    const CAST: bool;
    fn widen(self) -> f64;
    /// Monotonic integer position of this value, from its own bits.
    fn ordered(self) -> i64;
    /// Widen `src` into `dst` (same length).
    #[inline]
    fn widen_chunk(src: &[Self], dst: &mut [f64]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s.widen();
        }
    }
}

/// Sign-magnitude bits to a monotonic integer, without a branch (signs
/// are random in real data).
#[inline]
fn ordered_bits(bits: u64, sign: u64) -> i64 {
    let magnitude = (bits & (sign - 1)) as i64;
    let negative = -i64::from(bits & sign != 0);
    (magnitude ^ negative) - negative
}

impl Element for f32 {
    const CAST: bool = true;
    const DTYPE: DType = DType::F32;
    #[inline]
    fn widen(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn ordered(self) -> i64 {
        ordered_bits(u64::from(self.to_bits()), 1 << 31)
    }
}

impl Element for f64 {
    const CAST: bool = true;
    const DTYPE: DType = DType::F64;
    #[inline]
    fn widen(self) -> f64 {
        self
    }
    #[inline]
    fn ordered(self) -> i64 {
        ordered_bits(self.to_bits(), 1 << 63)
    }
}

impl Element for f16 {
    const CAST: bool = false;
    const DTYPE: DType = DType::F16;
    #[inline]
    fn widen(self) -> f64 {
        self.to_f64()
    }
    #[inline]
    fn ordered(self) -> i64 {
        ordered_bits(u64::from(self.to_bits()), 1 << 15)
    }
    /// `half`'s slice conversion: F16C vector instructions when the CPU
    /// has them (detected at run time), a software loop otherwise.
    #[inline]
    fn widen_chunk(src: &[Self], dst: &mut [f64]) {
        src.convert_to_f64_slice(dst);
    }
}

impl Element for bf16 {
    const CAST: bool = false;
    const DTYPE: DType = DType::Bf16;
    #[inline]
    fn widen(self) -> f64 {
        f64::from(f32::from_bits(u32::from(self.to_bits()) << 16))
    }
    #[inline]
    fn ordered(self) -> i64 {
        ordered_bits(u64::from(self.to_bits()), 1 << 15)
    }
}

impl Element for i32 {
    const CAST: bool = true;
    const DTYPE: DType = DType::I32;
    #[inline]
    fn widen(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn ordered(self) -> i64 {
        i64::from(self)
    }
}
