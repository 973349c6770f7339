//! The versioned JSON document `cuport scan --format json` writes. Its JSON
//! schema is generated from these types (see `scan_schema`) and committed;
//! a test fails when the two drift apart.
use std::collections::BTreeMap;

use cuport_model::{Library, SiteKind};
use serde::{Deserialize, Serialize};

use crate::site::{ScannedFile, SkippedFile};
use crate::tree::ScanReport;

/// Bumped on any change that could break a consumer of the document.
pub const SCAN_FORMAT_VERSION: u32 = 1;
pub const SCAN_FORMAT_NAME: &str = "cuport-scan";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScanDocument {
    /// Always `cuport-scan`.
    pub format: String,
    /// The document's format version (`SCAN_FORMAT_VERSION`).
    pub version: u32,
    /// The cuport version that wrote it.
    pub cuport_version: String,
    /// The scanned path as given on the command line.
    pub root: String,
    pub summary: ScanSummary,
    pub files: Vec<ScannedFile>,
    pub skipped: Vec<SkippedFile>,
}

/// Totals over the whole scan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScanSummary {
    pub files: usize,
    pub files_with_sites: usize,
    pub bytes: u64,
    pub lines: u64,
    pub sites: usize,
    pub by_kind: BTreeMap<SiteKind, usize>,
    pub by_library: BTreeMap<Library, usize>,
    pub kernel_definitions: usize,
    pub kernel_launches: usize,
    pub files_with_parse_issues: usize,
    pub skipped: usize,
    /// Files walked past because cuport does not analyse their type.
    pub other_files: usize,
    /// CUDA-looking names the project defines itself (functions, macros,
    /// headers) and how many uses of each were not counted as CUDA.
    pub project_names: BTreeMap<String, usize>,
}

impl ScanSummary {
    pub fn of(report: &ScanReport) -> Self {
        let mut summary = ScanSummary {
            files: report.files.len(),
            skipped: report.skipped.len(),
            other_files: report.other_files,
            project_names: report.project_names.clone(),
            ..ScanSummary::default()
        };
        for file in &report.files {
            summary.bytes += file.bytes;
            summary.lines += file.lines;
            summary.sites += file.analysis.sites.len();
            summary.files_with_sites += usize::from(!file.analysis.sites.is_empty());
            summary.files_with_parse_issues += usize::from(!file.analysis.parse_issues.is_empty());
            for site in &file.analysis.sites {
                *summary.by_kind.entry(site.kind).or_default() += 1;
                *summary.by_library.entry(site.library).or_default() += 1;
            }
        }
        summary.kernel_definitions = summary
            .by_kind
            .get(&SiteKind::KernelDefinition)
            .copied()
            .unwrap_or(0);
        summary.kernel_launches = summary
            .by_kind
            .get(&SiteKind::KernelLaunch)
            .copied()
            .unwrap_or(0);
        summary
    }
}

impl ScanDocument {
    pub fn new(root: &str, cuport_version: &str, report: ScanReport) -> Self {
        Self {
            format: SCAN_FORMAT_NAME.to_owned(),
            version: SCAN_FORMAT_VERSION,
            cuport_version: cuport_version.to_owned(),
            root: root.to_owned(),
            summary: ScanSummary::of(&report),
            files: report.files,
            skipped: report.skipped,
        }
    }
}

/// The JSON schema of [`ScanDocument`], pretty-printed.
pub fn scan_schema() -> String {
    let schema = schemars::schema_for!(ScanDocument);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}
