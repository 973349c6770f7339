//! Everything cuport could not port automatically becomes a coded
//! diagnostic: nothing is dropped silently.
use cuport_model::{Library, SiteKind, TextRange};
use serde::{Deserialize, Serialize};

/// How much attention a diagnostic needs, lowest first. `--fail-on LEVEL`
/// fails on this level and every level above it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Worth knowing (a CUDA-version condition, a setup requirement).
    Note,
    /// Ported, but numerics or semantics differ.
    Approximate,
    /// Needs a person: no automatic equivalent, or a name the tables do not know.
    Manual,
    /// The target has no counterpart.
    Unsupported,
}

impl Level {
    pub fn id(self) -> &'static str {
        match self {
            Level::Note => "note",
            Level::Approximate => "approximate",
            Level::Manual => "manual",
            Level::Unsupported => "unsupported",
        }
    }
}

/// Codes of diagnostics that come from cuport itself rather than a table row.
pub mod codes {
    /// A CUDA name the rule tables do not know for this target.
    pub const UNKNOWN_NAME: &str = "CP0001";
    /// A rewrite template could not be applied to this call.
    pub const TEMPLATE_FAILED: &str = "CP0002";
    /// A mapped name used in a way the rewrite cannot handle (aliased, not called).
    pub const NOT_REWRITABLE: &str = "CP0003";
    /// The rewrite calls a cuport helper (declared in `cuport_shim.h`,
    /// implemented in the generated `cuport_ascend_helpers.cpp`).
    pub const HELPER_REQUIRED: &str = "CP0005";
    /// Two edits overlapped; the later one was not applied.
    pub const EDIT_CONFLICT: &str = "CP0004";
    /// A kernel definition that needs a hand port on this target.
    pub const KERNEL_MANUAL: &str = "CP0010";
    /// A kernel launch that needs a hand port on this target.
    pub const LAUNCH_MANUAL: &str = "CP0011";
    /// Code that assumes a 32-wide warp.
    pub const WARP_SIZE: &str = "CP0012";
    /// A preprocessor condition on the CUDA version.
    pub const CUDA_VERSION_CONDITION: &str = "CP0013";
    /// Runtime setup the target needs (aclInit, device and stream setup).
    pub const SETUP_REQUIRED: &str = "CP0014";
    /// A build rule cuport does not rewrite.
    pub const BUILD_MANUAL: &str = "CP0020";
    /// A package that only runs on NVIDIA GPUs.
    pub const CUDA_ONLY_PACKAGE: &str = "CP0021";
    /// Dual-stack: the source keeps a CUDA spelling that a target spells
    /// differently and the shim cannot provide (a preprocessor test, C++
    /// framework API, build rule).
    pub const DUAL_KEPT: &str = "CP0040";
    /// Dual-stack: a kernel launch or definition that cannot be put behind
    /// the backend switch automatically.
    pub const DUAL_NOT_WRAPPED: &str = "CP0041";
    /// Dual-stack: an edit to the portable spelling (not a diagnostic; the
    /// code labels the edit in reports).
    pub const DUAL_PORTABLE: &str = "CP0042";
    /// Dual-stack Python: a dtype a selected target does not support (fp64
    /// on Ascend). The code is kept; nothing converts it silently.
    pub const DUAL_UNSUPPORTED_DTYPE: &str = "CP0050";
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub code: String,
    pub level: Level,
    /// `low`, `medium` or `high` for manual work; `included` when the work is
    /// part of an enclosing kernel's port (counted once, with the kernel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    pub message: String,
    pub line: u32,
    pub column: u32,
    pub range: TextRange,
    pub cuda_name: String,
    pub library: Library,
    pub kind: SiteKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// Weight of a diagnostic in the effort estimate, in hours of engineer
/// time: a rough, documented scale so that estimates are comparable.
pub fn effort_hours(diagnostic: &Diagnostic) -> f64 {
    match (diagnostic.level, diagnostic.effort.as_deref()) {
        (Level::Note, _) | (_, Some("included")) => 0.0,
        (_, Some("high")) => 16.0,
        (_, Some("medium")) => 2.0,
        (_, Some("low")) => 0.25,
        (Level::Approximate, _) => 0.25,
        (Level::Manual, _) => 1.0,
        (Level::Unsupported, _) => 4.0,
    }
}
