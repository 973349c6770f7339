//! report.json: the canonical, versioned record of one migration. Every
//! other format renders from this document alone, so it keeps each changed
//! file's unified diff as well as the edits and diagnostics.
use std::collections::BTreeMap;
use std::path::Path;

use cuport_model::{Language, LineIndex};
use cuport_rewrite::{
    effort_hours, unified_diff, Diagnostic, Edit, FileStats, KernelRecord, Level, MigratedFile,
    Migration,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{io, ReportError};
use crate::meta::RunMeta;
use crate::record::{DiagnosticRecord, EditRecord};

pub const REPORT_FORMAT_NAME: &str = "cuport-report";
/// Bumped on any change a reader of version N could misread.
pub const REPORT_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReportDocument {
    /// Always `cuport-report`.
    pub format: String,
    pub version: u32,
    pub run: RunMeta,
    /// The migrated root as given on the command line.
    pub root: String,
    pub totals: Totals,
    pub files: Vec<FileReport>,
    /// Files the run generates (the dual-stack shim, helper sources),
    /// relative to the output root.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generated: Vec<String>,
    /// Every kernel the tree defines and what the run made of it, per
    /// target (the kernel stage's decision), in file order.
    #[serde(default)]
    pub kernels: Vec<KernelEntry>,
    /// The Ascend C skeletons written for kernels, when the run was asked
    /// for them (`--ascend-kernel-skeletons`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skeletons: Option<Vec<SkeletonEntry>>,
    /// The sources the run renamed, when it renames (`--rename-sources`,
    /// or a SIMT port's `.cu` → `.asc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renames: Option<Vec<RenameEntry>>,
}

/// One Ascend C skeleton written for a kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkeletonEntry {
    /// The CUDA kernel's name (also the Ascend C entry's name).
    pub kernel: String,
    /// The CUDA source, relative to the migrated root.
    pub source: String,
    /// 1-based line of the kernel's name in `source`.
    pub line: u32,
    /// Where the skeleton goes, relative to the output root.
    pub path: String,
    /// The aclnn operator that may replace the kernel outright, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// Where it was written, when the run wrote a tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<String>,
}

/// One source renamed by the run, relative to the root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RenameEntry {
    pub from: String,
    pub to: String,
}

/// One kernel on one target: where it is defined and its disposition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelEntry {
    /// The file that defines it, relative to the migrated root.
    pub file: String,
    #[serde(flatten)]
    pub kernel: KernelRecord,
}

/// Sums over all files: every file statistic added up, plus counts by
/// diagnostic level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Totals {
    pub files: usize,
    pub files_changed: usize,
    /// The files' statistics added up (`effort_hours` is the sum of every
    /// diagnostic's weight, `cuport_rewrite::effort_hours`).
    #[serde(flatten)]
    pub sums: FileStats,
    /// `effort_hours` split by diagnostic level.
    pub effort_by_level: BTreeMap<Level, f64>,
    /// Diagnostics per level.
    pub diagnostics: BTreeMap<Level, usize>,
}

impl ReportDocument {
    /// Kernels per disposition over every target of the run.
    pub fn kernel_dispositions(&self) -> BTreeMap<cuport_rewrite::Disposition, usize> {
        let mut counts = BTreeMap::new();
        for entry in &self.kernels {
            *counts.entry(entry.kernel.disposition).or_default() += 1;
        }
        counts
    }
}

/// Reads of the sums (`totals.sites`) as of a file's statistics.
impl std::ops::Deref for Totals {
    type Target = FileStats;
    fn deref(&self) -> &FileStats {
        &self.sums
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileReport {
    /// Relative to the migrated root, `/`-separated.
    pub path: String,
    pub language: Language,
    pub changed: bool,
    pub stats: FileStats,
    pub edits: Vec<EditRecord>,
    pub diagnostics: Vec<DiagnosticRecord>,
    /// Unified diff (`a/PATH` → `b/PATH`) of a changed file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

impl ReportDocument {
    pub fn new(migration: &Migration, run: RunMeta) -> Self {
        Self::build(migration, run, true)
    }

    /// The document without the per-file diffs, for outputs that show none
    /// (the text summary): computing them is most of the document's cost.
    pub fn without_diffs(migration: &Migration, run: RunMeta) -> Self {
        Self::build(migration, run, false)
    }

    fn build(migration: &Migration, run: RunMeta, diffs: bool) -> Self {
        let files: Vec<FileReport> = migration
            .files
            .par_iter()
            .map(|file| FileReport::of(file, diffs))
            .collect();
        Self {
            format: REPORT_FORMAT_NAME.to_owned(),
            version: REPORT_FORMAT_VERSION,
            run,
            root: migration.root.display().to_string(),
            totals: Totals::of(&files),
            files,
            generated: migration.generated.iter().map(|g| g.path.clone()).collect(),
            kernels: migration
                .files
                .iter()
                .flat_map(|f| {
                    f.result.kernels.iter().map(|k| KernelEntry {
                        file: f.path.clone(),
                        kernel: k.clone(),
                    })
                })
                .collect(),
            skeletons: None,
            renames: None,
        }
    }

    /// Reads and checks a report.json written by any cuport that wrote
    /// version `REPORT_FORMAT_VERSION` or older.
    pub fn read(path: &Path) -> Result<Self, ReportError> {
        let text = std::fs::read_to_string(path).map_err(io(path))?;
        Self::parse(&text, path)
    }

    /// Parses `text`; `path` only names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ReportError> {
        let header: Header = serde_json::from_str(text).map_err(|error| ReportError::Parse {
            path: path.to_path_buf(),
            error,
        })?;
        if header.format != REPORT_FORMAT_NAME {
            return Err(ReportError::WrongFormat {
                path: path.to_path_buf(),
                found: header.format,
            });
        }
        if header.version > REPORT_FORMAT_VERSION {
            return Err(ReportError::UnsupportedVersion {
                path: path.to_path_buf(),
                found: header.version,
                supported: REPORT_FORMAT_VERSION,
            });
        }
        serde_json::from_str(text).map_err(|error| ReportError::Parse {
            path: path.to_path_buf(),
            error,
        })
    }

    pub fn to_json(&self) -> Result<String, ReportError> {
        serde_json::to_string_pretty(self)
            .map(|text| text + "\n")
            .map_err(|error| ReportError::Encode {
                what: "report JSON",
                error: error.to_string(),
            })
    }
}

/// What is checked before the whole document is parsed, so that a file of
/// another format or a newer version gets a precise error.
#[derive(Deserialize)]
struct Header {
    #[serde(default)]
    format: String,
    #[serde(default)]
    version: u32,
}

impl FileReport {
    fn of(file: &MigratedFile, diff: bool) -> Self {
        let result = &file.result;
        // The migration's own index of the same text; built here only
        // where the migration did not keep one.
        let kept = result.lines.line_count() > 0;
        let lines = if kept && result.lines.text_len() == file.original.len() {
            std::borrow::Cow::Borrowed(&result.lines)
        } else {
            std::borrow::Cow::Owned(LineIndex::new(&file.original))
        };
        Self {
            path: file.path.clone(),
            language: file.language,
            changed: result.changed(),
            stats: result.stats.clone(),
            edits: result
                .edits
                .iter()
                .map(|e| edit_record(e, file, &lines))
                .collect(),
            diagnostics: result
                .diagnostics
                .iter()
                .map(|d| diagnostic_record(d, &file.original, &lines))
                .collect(),
            diff: (diff && result.changed()).then(|| unified_diff(file)),
        }
    }
}

fn edit_record(edit: &Edit, file: &MigratedFile, lines: &LineIndex) -> EditRecord {
    let at = lines.line_col(edit.range.start);
    let original = file.original.get(edit.range.start..edit.range.end);
    EditRecord {
        line: at.line,
        column: at.column,
        start: edit.range.start,
        end: edit.range.end,
        code: edit.code,
        cuda_name: edit.cuda_name.clone(),
        original: original.map_or_else(String::new, |b| String::from_utf8_lossy(b).into_owned()),
        replacement: edit.replacement.clone(),
        status: crate::record::edit_status(edit, &file.result.diagnostics),
    }
}

fn diagnostic_record(d: &Diagnostic, src: &[u8], lines: &LineIndex) -> DiagnosticRecord {
    DiagnosticRecord {
        code: d.code,
        level: d.level,
        effort: d.effort,
        effort_hours: effort_hours(d),
        message: d.message.clone(),
        line: d.line,
        column: d.column,
        char_column: char_column(src, lines, d.range.start),
        start: d.range.start,
        end: d.range.end,
        cuda_name: d.cuda_name.clone(),
        library: d.library,
        kind: d.kind,
        suggestion: d.suggestion.clone(),
        reference: d.reference.clone(),
    }
}

/// 1-based column in Unicode code points (SARIF's `unicodeCodePoints`);
/// the analyser's columns count bytes.
fn char_column(src: &[u8], lines: &LineIndex, offset: usize) -> u32 {
    let line = lines.line_of(offset);
    let start = lines.line_range(line).map_or(0, |r| r.start);
    let prefix = src.get(start..offset.min(src.len())).unwrap_or_default();
    let chars = String::from_utf8_lossy(prefix).chars().count();
    u32::try_from(chars + 1).unwrap_or(u32::MAX)
}

impl Totals {
    fn of(files: &[FileReport]) -> Self {
        let mut t = Totals {
            files: files.len(),
            ..Totals::default()
        };
        for file in files {
            t.files_changed += usize::from(file.changed);
            t.sums.add(&file.stats);
            for d in &file.diagnostics {
                *t.diagnostics.entry(d.level).or_default() += 1;
                *t.effort_by_level.entry(d.level).or_default() += d.effort_hours;
            }
        }
        t
    }
}

/// The JSON schema of [`ReportDocument`], pretty-printed.
pub fn report_schema() -> String {
    let schema = schemars::schema_for!(ReportDocument);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}
