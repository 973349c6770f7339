//! What a migration produces, before anything is written: per file the
//! output bytes, the applied edits, the diagnostics and the statistics; for
//! the tree the migrated files and the generated ones. The writer, the
//! reports and the CLI all read these types.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cuport_analyze::TreeEntry;
use cuport_model::{Language, Library, LineIndex, SiteKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diagnostic::{Diagnostic, Level};
use crate::edit::Edit;
use crate::kernel_stage::KernelRecord;

#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path} changed on disk while cuport was running; run the migration again")]
    ChangedDuringRun { path: PathBuf },
    #[error("output directory {out} is inside the tree being migrated ({root}); choose a directory outside it")]
    OutInsideRoot { out: PathBuf, root: PathBuf },
    #[error("refusing to write {path}: it is outside the output root")]
    OutsideRoot { path: PathBuf },
    #[error("refusing to overwrite {path}: cuport did not generate it; move it away or migrate into another directory")]
    WouldOverwrite { path: PathBuf },
    #[error("cannot rename {from} to {to}: {to} already exists; rename or remove one of them, or run without --rename-sources")]
    RenameCollision { from: String, to: String },
    #[error("-o OUTFILE needs exactly one source file cuport analyses ({count} were analysed); use --out DIR for a tree")]
    NotOneFile { count: usize },
    #[error("nothing was written: {}", problems.join("; "))]
    Refused { problems: Vec<String> },
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RewriteError + '_ {
    move |error| RewriteError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// Converted and not converted sites of one library or kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tally {
    pub converted: usize,
    pub not_converted: usize,
}

/// What migrating one file did, in numbers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileStats {
    pub sites: usize,
    /// Sites ported automatically (approximate ones included, and reported).
    pub converted: usize,
    /// Sites left for a person (manual, unsupported, unknown).
    pub not_converted: usize,
    pub approximate: usize,
    /// Sites skipped because of `cuport: ignore` / `cuport: off` markers.
    pub suppressed: usize,
    pub edits: usize,
    pub changed_lines: usize,
    pub bytes_removed: usize,
    pub bytes_added: usize,
    /// Estimated hours of manual work (see `effort_hours`).
    pub effort_hours: f64,
    pub by_library: BTreeMap<Library, Tally>,
    pub by_kind: BTreeMap<SiteKind, Tally>,
}

/// The result of migrating one file.
#[derive(Debug, Clone, Default)]
pub struct FileMigration {
    pub output: Vec<u8>,
    pub edits: Vec<Edit>,
    pub diagnostics: Vec<Diagnostic>,
    pub stats: FileStats,
    /// What the kernel stage made of each kernel the file defines, per
    /// target.
    pub kernels: Vec<KernelRecord>,
    /// The lines of the input, for reports that give lines and columns
    /// (built once per file; empty where a migration was made otherwise).
    pub lines: LineIndex,
}

impl FileMigration {
    pub fn changed(&self) -> bool {
        !self.edits.is_empty()
    }
}

impl FileStats {
    /// Adds `other`'s counts to these (totals over files).
    pub fn add(&mut self, other: &FileStats) {
        self.sites += other.sites;
        self.converted += other.converted;
        self.not_converted += other.not_converted;
        self.approximate += other.approximate;
        self.suppressed += other.suppressed;
        self.edits += other.edits;
        self.changed_lines += other.changed_lines;
        self.bytes_removed += other.bytes_removed;
        self.bytes_added += other.bytes_added;
        self.effort_hours += other.effort_hours;
        add_tallies(&mut self.by_library, &other.by_library);
        add_tallies(&mut self.by_kind, &other.by_kind);
    }

    /// Counts one planned site: converted unless a diagnostic it raised
    /// (`new`) leaves it for a person.
    pub(crate) fn count_site(&mut self, library: Library, kind: SiteKind, new: &[Diagnostic]) {
        self.sites += 1;
        let worst = new.iter().map(|d| d.level).max();
        let converted = !matches!(worst, Some(Level::Manual | Level::Unsupported));
        self.approximate += usize::from(worst == Some(Level::Approximate));
        let tally = |t: &mut Tally| {
            if converted {
                t.converted += 1
            } else {
                t.not_converted += 1
            }
        };
        tally(self.by_library.entry(library).or_default());
        tally(self.by_kind.entry(kind).or_default());
        if converted {
            self.converted += 1;
        } else {
            self.not_converted += 1;
        }
    }
}

fn add_tallies<K: Ord + Copy>(into: &mut BTreeMap<K, Tally>, from: &BTreeMap<K, Tally>) {
    for (key, tally) in from {
        let entry = into.entry(*key).or_default();
        entry.converted += tally.converted;
        entry.not_converted += tally.not_converted;
    }
}

/// One migrated file: where it is, its original bytes and the result.
#[derive(Debug, Clone)]
pub struct MigratedFile {
    /// Relative to the migrated root, `/`-separated.
    pub path: String,
    pub language: Language,
    /// Shared with the scan's `ScannedFile::source` where it kept one.
    pub original: std::sync::Arc<Vec<u8>>,
    pub result: FileMigration,
}

#[derive(Debug, Clone, Default)]
pub struct Migration {
    pub root: PathBuf,
    /// Whether `root` is one file (asked of the file system once, by the
    /// scan).
    pub root_is_file: bool,
    /// Every entry of the tree, from the scan: what a copy reproduces.
    pub tree: Vec<TreeEntry>,
    pub files: Vec<MigratedFile>,
    /// Files the run adds (the dual-stack shim), relative to the root.
    pub generated: Vec<GeneratedFile>,
}

impl Migration {
    pub fn changed_files(&self) -> impl Iterator<Item = &MigratedFile> {
        self.files.iter().filter(|f| f.result.changed())
    }
}

/// A file the run generates (relative to the output root, `/`-separated):
/// the dual-stack shim, or the helpers a one-way Ascend port calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    pub path: String,
    pub text: String,
}

/// A unified diff of one file (`a/PATH` → `b/PATH`), empty when unchanged.
pub fn unified_diff(file: &MigratedFile) -> String {
    if !file.result.changed() {
        return String::new();
    }
    let old = String::from_utf8_lossy(&file.original);
    let new = String::from_utf8_lossy(&file.result.output);
    similar::TextDiff::from_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{}", file.path), &format!("b/{}", file.path))
        .to_string()
}
