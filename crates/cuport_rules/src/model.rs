//! The small vocabulary of the rule tables: how well a name maps, what kind of
//! name it is, how much work a manual port takes, and rule codes.
use cuport_model::Target;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a CUDA name carries over to a target.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The target accepts the CUDA name unchanged (RCCL's `ncclAllReduce`, HIP's `__syncthreads`).
    Exact,
    /// Only the identifier changes; arguments and semantics are the same.
    Renamed,
    /// The call must be rewritten with an argument template.
    Rewrite,
    /// A counterpart exists but numerics or semantics differ; `note` says how.
    Approximate,
    /// No automatic equivalent; `note` gives guidance and `effort` the size of the job.
    Manual,
    /// The target has no counterpart.
    Unsupported,
}

impl Status {
    pub const ALL: [Status; 6] = [
        Status::Exact,
        Status::Renamed,
        Status::Rewrite,
        Status::Approximate,
        Status::Manual,
        Status::Unsupported,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Status::Exact => "exact",
            Status::Renamed => "renamed",
            Status::Rewrite => "rewrite",
            Status::Approximate => "approximate",
            Status::Manual => "manual",
            Status::Unsupported => "unsupported",
        }
    }

    pub fn from_id(id: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.id() == id)
    }

    /// Whether cuport may apply the mapping without a human reading it.
    pub fn is_mechanical(self) -> bool {
        matches!(self, Status::Exact | Status::Renamed)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// What kind of CUDA name an entry maps.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum NameKind {
    Function,
    Type,
    EnumValue,
    Macro,
    /// A header name as written in `#include <...>`.
    Header,
    /// A device-side intrinsic, built-in variable, qualifier or math function.
    Intrinsic,
    /// A dotted Python API path (`torch.cuda.synchronize`).
    Python,
    /// A PyTorch device string or distributed backend name (`cuda`, `nccl`).
    DeviceString,
    /// A member of a CUDA struct or class, named `Owner::member`
    /// (`cudaDeviceProp::uuid`): found through the owner's variables, never
    /// as a name of its own, so only its version and status matter.
    Member,
}

/// Which library family a target's names come from. Only HIP has a second
/// flavour: `roc` picks rocBLAS, rocSPARSE, rocRAND, rocSOLVER (and the
/// roc header set) where HIPIFY's `--roc` would, instead of the hip* wrappers.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Flavour {
    /// The target's default names (hipBLAS, hipSPARSE, ... on HIP).
    #[default]
    Default,
    /// HIP with the roc* libraries (`--hip-libs=roc`).
    Roc,
    /// A target's SIMT kernel model (`--ascend-kernels simt`): the device
    /// names its CUDA-shaped kernels are written with.
    Simt,
    /// Ascend with CANN's ops-blas for cuBLAS/cuBLASLt
    /// (`--ascend-blas aclblas`) instead of the aclnn helpers.
    Aclblas,
}

impl Flavour {
    /// Every flavour; where a run stacks several (SIMT device names and
    /// ops-blas on Ascend), the earlier one wins a name both map.
    pub const ALL: [Flavour; 4] = [
        Flavour::Default,
        Flavour::Roc,
        Flavour::Simt,
        Flavour::Aclblas,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Flavour::Default => "default",
            Flavour::Roc => "roc",
            Flavour::Simt => "simt",
            Flavour::Aclblas => "aclblas",
        }
    }

    /// Parses an `--ascend-blas` value: `aclnn` (the default flavour) or
    /// `aclblas`.
    pub fn from_ascend_blas(value: &str) -> Option<Flavour> {
        match value {
            "aclnn" | "default" => Some(Flavour::Default),
            "aclblas" => Some(Flavour::Aclblas),
            _ => None,
        }
    }

    /// Parses a `--hip-libs` value: `hip` (the default flavour) or `roc`.
    pub fn from_hip_libs(value: &str) -> Option<Flavour> {
        match value {
            "hip" | "default" => Some(Flavour::Default),
            "roc" => Some(Flavour::Roc),
            _ => None,
        }
    }

    /// Whether `target` has rules for this flavour (all targets have the
    /// default; the roc flavour is HIP's `--hip-libs`, the simt flavour
    /// belongs to targets whose profile has a SIMT kernel model).
    pub fn applies_to(self, target: Target) -> bool {
        match self {
            Flavour::Default => true,
            Flavour::Roc => target == Target::Hip,
            Flavour::Simt => target.profile().kernels.simt.is_some(),
            Flavour::Aclblas => target == Target::Ascend,
        }
    }
}

/// The flavours one lookup takes names from before the default rules: a
/// run may stack several (Ascend's SIMT device names and ops-blas). Where
/// two map the same name, the one earlier in [`Flavour::ALL`] wins.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Flavours(u8);

impl Flavours {
    fn bit(flavour: Flavour) -> u8 {
        let index = Flavour::ALL.iter().position(|f| *f == flavour);
        index.map_or(0, |i| 1 << i)
    }

    /// These flavours and `flavour`.
    #[must_use]
    pub fn with(self, flavour: Flavour) -> Self {
        Flavours(self.0 | Self::bit(flavour))
    }

    pub fn contains(self, flavour: Flavour) -> bool {
        self.0 & Self::bit(flavour) != 0
    }

    /// The flavours other than the default, in precedence order.
    pub fn own(self) -> impl Iterator<Item = Flavour> {
        Flavour::ALL
            .into_iter()
            .filter(move |f| *f != Flavour::Default && self.contains(*f))
    }
}

impl From<Flavour> for Flavours {
    fn from(flavour: Flavour) -> Self {
        Flavours::default().with(flavour)
    }
}

impl FromIterator<Flavour> for Flavours {
    fn from_iter<I: IntoIterator<Item = Flavour>>(iter: I) -> Self {
        iter.into_iter().fold(Flavours::default(), Flavours::with)
    }
}

impl std::fmt::Display for Flavour {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}
