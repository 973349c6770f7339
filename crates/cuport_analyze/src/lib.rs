//! The analyser: walks a tree in parallel and finds every CUDA and framework
//! touchpoint in C/C++/CUDA, Python, CMake, `pyproject.toml` and Rust files.
//!
//! The C family goes through a fast token pass (see `cfamily`), Python
//! through tree-sitter-python, Rust through syn, and build files through
//! small dedicated scanners. Each file is read once and analysed in one pass.

mod cfamily;
mod cmake;
mod cpp_extension;
mod document;
mod error;
mod file;
mod inventory;
mod kernel_patterns;
mod known;
mod make;
mod pyproject;
mod python;
mod rust;
mod site;
mod torch_api;
mod tree;
mod ts_errors;

pub use cfamily::library_of;
pub use cmake::{
    cmake_arguments, cmake_closing_paren, cmake_commands, is_cmake_command_at, CmakeCommand,
    CUDA_ARCHITECTURE_VALUES,
};
pub use cpp_extension::ExtensionBuild;
pub use document::{scan_schema, ScanDocument, ScanSummary, SCAN_FORMAT_NAME, SCAN_FORMAT_VERSION};
pub use error::AnalyzeError;
pub use file::{analyze_source, AnalyzeOptions, SyntaxCheck};
pub use inventory::{EntryKind, TreeEntry, VCS_DIRS};
pub use kernel_patterns::{
    recognise_kernels, Certainty, KernelParam, KernelPattern, Recognised, TensorUse,
};
pub use known::SiteOf;
pub use make::CUDA_PREFIX;
pub use python::names_cuda;
pub use site::{
    Condition, FileAnalysis, FunctionDefinition, OperatorDefinition, ParseIssue, ScannedFile, Site,
    SkippedFile,
};
pub use torch_api::{
    torch_api_uses, ApiQuery, ApiUse, IsApi, KeywordUse, PackageUse, Resolution, TorchApiInventory,
    UnresolvedUse,
};
pub use tree::{
    find_files, is_header_path, list_tree, map_largest_first, scan_found, scan_tree, FoundFiles,
    KnownNames, Progress, ScanOptions, ScanReport, NO_PROGRESS,
};
