//! The vocabulary every stage of cuport shares: where a thing is in a file
//! ([`TextRange`], [`LineIndex`]), what language a file is in ([`Language`]),
//! which CUDA library a name belongs to ([`Library`]), what kind of touchpoint
//! a site is ([`SiteKind`]) and which accelerator a port aims at ([`Target`]),
//! with the facts about targets and libraries kept as data in `mappings/`
//! ([`TargetProfile`], [`LibraryProfile`]).
//!
//! This crate has no logic beyond these types so that the analyser, the rule
//! tables, the rewriter and the reports can all depend on it without depending
//! on each other.

mod code;
mod generated;
mod ids;
mod language;
mod library;
mod profile;
mod site_kind;
mod target;
mod text;
mod version;

pub use code::{Code, Effort};
pub use generated::{is_cuport_generated, GENERATED_MARKER};
pub use language::Language;
pub use library::Library;
pub use profile::{
    helper_source, CmakeFacts, CoordinateFacts, DeviceRuntimeFacts, HeaderFamily, KernelFacts,
    KernelModel, LibraryCounterpart, LibraryProfile, MakeFacts, MissingOverload, MixedSignMinMax,
    OneWayCmake, OverloadHelper, ProfileError, Profiles, PythonFacts, ShimFacts, SimtCmake,
    SimtFacts, SimtLimits, TargetFacts, TargetProfile, VectorTypeFacts, VendorHeaderFacts,
    VersionFacts, VersionFeature, WarpDiagnostic, WarpFacts,
};
pub use site_kind::{looks_like_cuda_name, SiteKind};
pub use target::{PerTarget, Target};
pub use text::{dotted_within, LineCol, LineIndex, TextRange};
pub use version::{MinimumVersion, SdkVersion, VersionError};
