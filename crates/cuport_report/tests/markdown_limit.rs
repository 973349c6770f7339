//! summary.md stays under its size limit for any migration, truncating at a
//! row boundary with a note, and escapes table syntax in user text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;

use cuport_model::{Language, Library, SiteKind, Target, TextRange};
use cuport_report::{summary_markdown, summary_markdown_within, ReportDocument, SUMMARY_LIMIT};
use cuport_rewrite::{effort_hours, Diagnostic, FileMigration, Level, MigratedFile, Migration};

fn diagnostic(i: usize, message: String) -> Diagnostic {
    Diagnostic {
        code: cuport_model::Code::from_literal("CP0001"),
        level: if matches!(i % 3, 0) {
            Level::Unsupported
        } else {
            Level::Manual
        },
        effort: None,
        message,
        line: u32::try_from(i + 1).unwrap(),
        column: 1,
        range: TextRange::new(0, 0),
        cuda_name: format!("cudaThing{}", i % 50),
        library: Library::Runtime,
        kind: SiteKind::RuntimeApi,
        suggestion: None,
        reference: None,
    }
}

/// 400 files of 100 diagnostics each: far more than 1 MiB of Markdown.
fn large_migration() -> Migration {
    let files = (0..400)
        .map(|f| {
            let diagnostics: Vec<Diagnostic> = (0..100)
                .map(|i| diagnostic(i, format!("site {i} of file {f}: {}", "x".repeat(60))))
                .collect();
            let mut result = FileMigration::default();
            result.stats.sites = diagnostics.len();
            result.stats.not_converted = diagnostics.len();
            result.stats.effort_hours = diagnostics.iter().map(effort_hours).sum();
            result.diagnostics = diagnostics;
            MigratedFile {
                path: format!("src/module_{f:03}/kernels.cu"),
                language: Language::Cuda,
                original: Default::default(),
                result,
            }
        })
        .collect();
    Migration {
        root: PathBuf::from("big"),
        files,
        ..Migration::default()
    }
}

#[test]
fn a_large_migration_is_truncated_under_the_limit_with_a_note() {
    let document = ReportDocument::new(&large_migration(), common::meta(Target::Hip));
    assert_eq!(document.totals.diagnostics.values().sum::<usize>(), 40_000);
    let markdown = summary_markdown(&document);
    assert!(markdown.len() <= SUMMARY_LIMIT, "{} bytes", markdown.len());
    assert!(markdown.len() > SUMMARY_LIMIT - 2_000, "fills the budget");
    assert!(markdown.contains("> **Truncated:**"));
    assert!(markdown.contains("## Files by work left"));
    assert!(markdown.contains("…and 300 more files"));
    let last_row = markdown.lines().rfind(|l| l.starts_with('|')).unwrap();
    assert!(
        last_row.ends_with(" |"),
        "stops at a row boundary: {last_row}"
    );
}

#[test]
fn a_small_limit_keeps_the_header() {
    let migration = large_migration();
    let hours: f64 = migration
        .files
        .iter()
        .flat_map(|f| &f.result.diagnostics)
        .map(effort_hours)
        .sum();
    let document = ReportDocument::new(&migration, common::meta(Target::Hip));
    let markdown = summary_markdown_within(&document, 4_096);
    assert!(markdown.len() <= 4_096, "{} bytes", markdown.len());
    assert!(markdown.starts_with("# cuport migration report: hip"));
    let effort = format!("Estimated manual effort: {hours} hours");
    assert!(markdown.contains(&effort), "{effort} in:\n{markdown}");
}

#[test]
fn a_small_migration_is_not_truncated() {
    let document = common::fixture_document("vector_add", Target::Hip);
    assert!(!summary_markdown(&document).contains("Truncated"));
}

#[test]
fn table_cells_escape_pipes_newlines_and_html() {
    let mut migration = large_migration();
    migration.files.truncate(1);
    migration.files[0].result.diagnostics = vec![diagnostic(
        1,
        "a | b\nc <script>alert(1)</script> `d`".into(),
    )];
    let document = ReportDocument::new(&migration, common::meta(Target::Hip));
    let markdown = summary_markdown(&document);
    let row = markdown
        .lines()
        .find(|l| l.starts_with("| manual |") && l.contains("a \\| b c &lt;script&gt;"))
        .unwrap_or_else(|| panic!("escaped row in:\n{markdown}"));
    assert_eq!(row.matches(" | ").count(), 4, "{row}");
}
