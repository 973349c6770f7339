//! The rewriter: turns the analyser's sites into target code through the
//! rule tables. Edits are byte ranges over the original text, applied once
//! and never overlapping; every site that cannot be ported automatically is
//! a coded diagnostic.

mod dead_helpers;
mod diagnostic;
mod dual;
mod edit;
mod file;
mod headers;
mod helper_files;
mod integer_types;
mod kernel_stage;
mod kernels;
mod mode;
mod operator_helper;
mod options;
mod pass_down;
mod passes;
mod plan;
mod pysource;
mod rename;
mod result;
mod run;
mod runtime_providers;
mod scope;
mod sdk;
mod skeleton;
mod source_text;
mod suppress;
mod vector_args;
mod write;

pub use diagnostic::{code_info, codes, effort_hours, CodeInfo, Diagnostic, Level, CODES};
pub use dual::names::{portable_name, shim_header};
pub use dual::shim::{backend_macro, shim_headers, ProjectUse};
pub use edit::{Conflict, Edit, EditKind};
pub use file::migrate_file;
pub use kernel_stage::{Disposition, KernelRecord};
pub use options::{HipLaunch, MigrateOptions, Mode};
pub use rename::{renamed_path, RenamePlan};
pub use result::{
    unified_diff, FileMigration, FileStats, GeneratedFile, MigratedFile, Migration, RewriteError,
    Tally,
};
pub use run::migrate_report;
pub use skeleton::{ascend_skeletons, file_skeletons, KernelSkeleton};
pub use write::{CopySummary, InPlace};
