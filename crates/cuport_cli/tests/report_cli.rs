//! `cuport report`: re-renders a report.json written by the library (the
//! same code `cuport migrate --report DIR` uses) without re-running anything.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::path::{Path, PathBuf};
use std::sync::Arc;

use assert_cmd::Command;
use cuport_analyze::{
    scan_tree, AnalyzeOptions, KnownNames, ScanOptions, SyntaxCheck, NO_PROGRESS,
};
use cuport_model::Target;
use cuport_report::{render, Format, ReportDocument, RulesInfo, RunMeta};
use cuport_rewrite::{migrate_report, MigrateOptions};
use cuport_rules::RuleSet;
use tempfile::TempDir;

/// report.json of fixtures/vector_add ported to `target`, in a scratch dir.
fn report_json(target: Target) -> (TempDir, PathBuf, ReportDocument) {
    let rules = Arc::new(RuleSet::builtin().unwrap());
    let (known, sites) = (Arc::clone(&rules), Arc::clone(&rules));
    let options = ScanOptions {
        analyze: AnalyzeOptions {
            syntax_check: SyntaxCheck::Off,
        },
        known_names: Some(KnownNames::new(
            move |n: &str| known.is_known(n),
            move |n: &str| sites.site_of(n),
        )),
        ..ScanOptions::default()
    };
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/vector_add");
    let scan = scan_tree(&fixture, &options, NO_PROGRESS).unwrap();
    let migration = migrate_report(&scan, &rules, &MigrateOptions::new(target)).unwrap();
    let mut meta = RunMeta::new(target, RulesInfo::of_sources(rules.sources()));
    meta.generated_at = "2026-01-01T00:00:00Z".into();
    let mut document = ReportDocument::new(&migration, meta);
    document.root = "fixtures/vector_add".into();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    std::fs::write(&path, document.to_json().unwrap()).unwrap();
    (dir, path, document)
}

fn cuport(args: &[&str], report: &Path) -> (String, String, Option<i32>) {
    let output = Command::cargo_bin("cuport")
        .unwrap()
        .arg("report")
        .arg(report)
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
        output.status.code(),
    )
}

fn rendered(document: &ReportDocument, format: Format, file_name: &str) -> String {
    render(document, format)
        .unwrap()
        .into_iter()
        .find(|r| r.file_name == file_name)
        .unwrap()
        .text
}

#[test]
fn markdown_is_the_default_and_matches_the_library() {
    let (_dir, path, document) = report_json(Target::Ascend);
    let (stdout, stderr, code) = cuport(&[], &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, rendered(&document, Format::Markdown, "summary.md"));
    assert!(stdout.starts_with("# cuport migration report: ascend"));
}

#[test]
fn unsupported_table_on_stdout() {
    let (_dir, path, _) = report_json(Target::Mlu);
    let (stdout, stderr, code) = cuport(&["--format", "csv", "--table", "unsupported"], &path);
    assert_eq!(code, Some(0), "{stderr}");
    insta::assert_snapshot!("report_vector_add_mlu_unsupported_csv", stdout);
}

#[test]
fn sarif_to_a_file_and_csv_to_a_directory() {
    let (dir, path, document) = report_json(Target::Ascend);
    let sarif = dir.path().join("out.sarif");
    let (_, stderr, code) = cuport(&["--format", "sarif", "-o", sarif.to_str().unwrap()], &path);
    assert_eq!(code, Some(0), "{stderr}");
    let written = std::fs::read_to_string(&sarif).unwrap();
    assert_eq!(
        written,
        rendered(&document, Format::Sarif, "diagnostics.sarif")
    );
    let out_dir = dir.path().join("tables");
    let (stdout, stderr, code) = cuport(
        &["--format", "csv", "--out-dir", out_dir.to_str().unwrap()],
        &path,
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.is_empty());
    for name in ["changes.csv", "unsupported.csv"] {
        let text = std::fs::read_to_string(out_dir.join(name)).unwrap();
        assert_eq!(text, rendered(&document, Format::Csv, name), "{name}");
    }
}

#[test]
fn json_re_renders_to_the_same_document() {
    let (_dir, path, document) = report_json(Target::Musa);
    let (stdout, stderr, code) = cuport(&["--format", "json"], &path);
    assert_eq!(code, Some(0), "{stderr}");
    let back = ReportDocument::parse(&stdout, Path::new("stdout")).unwrap();
    assert_eq!(back, document);
}

#[test]
fn max_bytes_truncates_the_summary_with_a_note() {
    let (_dir, path, _) = report_json(Target::Ascend);
    let (stdout, stderr, code) = cuport(&["--max-bytes", "2000"], &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.len() <= 2000, "{} bytes", stdout.len());
    assert!(stdout.contains("> **Truncated:**"), "{stdout}");
}

#[test]
fn options_for_another_format_are_refused() {
    let (_dir, path, _) = report_json(Target::Hip);
    let (stdout, stderr, code) = cuport(&["--format", "sarif", "--table", "changes"], &path);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    assert!(stderr.contains("--format csv"), "{stderr}");
    let (_, stderr, code) = cuport(&["--format", "csv", "--max-bytes", "10"], &path);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--format md"), "{stderr}");
}

#[test]
fn other_documents_are_refused_with_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let scan = dir.path().join("scan.json");
    std::fs::write(&scan, r#"{"format":"cuport-scan","version":1}"#).unwrap();
    let (stdout, stderr, code) = cuport(&[], &scan);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("scan.json") && stderr.contains("cuport migrate --report DIR"),
        "{stderr}"
    );
    let missing = dir.path().join("missing.json");
    let (_, stderr, code) = cuport(&[], &missing);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("missing.json"), "{stderr}");
}
