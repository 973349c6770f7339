//! Review reports of a migration. `report.json` ([`ReportDocument`]) is the
//! canonical, versioned record; `summary.md`, `diagnostics.sarif`,
//! `changes.csv`, `unsupported.csv` and the review page `report.html` are
//! rendered from it alone, so
//! `cuport report report.json --format ...` re-renders any of them without
//! running the migration again.

mod api_support;
mod csv_out;
mod document;
mod error;
mod html;
mod markdown;
mod meta;
mod python_guidance;
mod record;
mod sarif;
mod text;

use std::path::{Path, PathBuf};

pub use api_support::{
    api_support_csv, api_support_report, ApiSupportReport, PortOf, SupportRecord, UnresolvedRecord,
    API_SUPPORT_FORMAT, API_SUPPORT_VERSION,
};
pub use csv_out::{changes_csv, unsupported_csv};
pub use cuport_rewrite::{FileStats, Level, Tally};
pub use document::{
    report_schema, FileReport, KernelEntry, RenameEntry, ReportDocument, SkeletonEntry, Totals,
    REPORT_FORMAT_NAME, REPORT_FORMAT_VERSION,
};
pub use error::ReportError;
pub use html::{api_support_html, api_support_section, report_html, report_html_with};
pub use markdown::{summary_markdown, summary_markdown_within, SUMMARY_LIMIT};
pub use meta::{RulesInfo, RunMeta};
pub use python_guidance::{
    advice_csv, custom_ops_csv, third_party_csv, AdviceRecord, CudaSources, CustomOpRecord,
    KernelRef, LibraryUse, ThirdPartyRecord,
};
pub use record::{DiagnosticRecord, EditRecord, EditStatus};
pub use sarif::sarif;
pub use text::{summary_text, Emphasis};

use error::io;

/// A report format and the file(s) it is written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `report.json`.
    Json,
    /// `summary.md`.
    Markdown,
    /// `diagnostics.sarif`.
    Sarif,
    /// `changes.csv` and `unsupported.csv`.
    Csv,
    /// `report.html`: the self-contained review page.
    Html,
}

impl Format {
    /// The machine and summary formats; `Html` is separate because it is
    /// much larger and only a person reads it.
    pub const ALL: [Format; 4] = [Format::Json, Format::Markdown, Format::Sarif, Format::Csv];

    /// The files `write_reports` writes for this format.
    pub fn file_names(self) -> &'static [&'static str] {
        match self {
            Format::Json => &["report.json"],
            Format::Markdown => &["summary.md"],
            Format::Sarif => &["diagnostics.sarif"],
            Format::Csv => &["changes.csv", "unsupported.csv"],
            Format::Html => &["report.html"],
        }
    }
}

/// One rendered output: its standard file name and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub file_name: &'static str,
    pub text: String,
}

/// Renders `document` as `format` (two files for CSV).
pub fn render(document: &ReportDocument, format: Format) -> Result<Vec<Rendered>, ReportError> {
    let [first, ..] = format.file_names() else {
        return Ok(Vec::new());
    };
    let one = |text| {
        vec![Rendered {
            file_name: first,
            text,
        }]
    };
    Ok(match format {
        Format::Json => one(document.to_json()?),
        Format::Markdown => one(summary_markdown(document)),
        Format::Sarif => one(sarif(document)?),
        Format::Html => one(report_html(document)?),
        Format::Csv => vec![
            Rendered {
                file_name: "changes.csv",
                text: changes_csv(document)?,
            },
            Rendered {
                file_name: "unsupported.csv",
                text: unsupported_csv(document)?,
            },
        ],
    })
}

/// Writes the reports of `migration` in `formats` into `dir` (created if
/// missing) and returns the paths written. `cuport migrate --report DIR`
/// passes `Format::ALL`.
pub fn write_reports(
    migration: &cuport_rewrite::Migration,
    meta: &RunMeta,
    dir: &Path,
    formats: &[Format],
) -> Result<Vec<PathBuf>, ReportError> {
    let document = ReportDocument::new(migration, meta.clone());
    write_rendered(&document, dir, formats)
}

/// Writes `document` in `formats` into `dir` (created if missing).
pub fn write_rendered(
    document: &ReportDocument,
    dir: &Path,
    formats: &[Format],
) -> Result<Vec<PathBuf>, ReportError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut written = Vec::new();
    for &format in formats {
        for rendered in render(document, format)? {
            let path = dir.join(rendered.file_name);
            std::fs::write(&path, rendered.text).map_err(io(&path))?;
            written.push(path);
        }
    }
    Ok(written)
}
