//! `cuport report --format html` and `cuport migrate --report DIR` write the
//! self-contained review page, identical to the library's rendering.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use std::path::Path;

use assert_cmd::Command;
use cuport_report::{render, Format, ReportDocument};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
}

fn migrate_with_report(dir: &Path) {
    let dir = dir.to_str().expect("a UTF-8 temporary path");
    common::migrate(
        &fixture("vector_add"),
        &["--to", "hip", "-q", "--report", dir],
    )
    .expect_code(0);
}

#[test]
fn migrate_report_dir_writes_report_html_from_report_json() {
    let dir = tempfile::tempdir().unwrap();
    migrate_with_report(dir.path());
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let document = ReportDocument::read(&dir.path().join("report.json")).unwrap();
    let expected = render(&document, Format::Html).unwrap();
    assert_eq!(html, expected[0].text);
    assert!(html.starts_with("<!DOCTYPE html>"));
}

#[test]
fn report_format_html_to_a_file_and_to_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    migrate_with_report(dir.path());
    let report = dir.path().join("report.json");
    let single = dir.path().join("single.html");
    let output = Command::cargo_bin("cuport")
        .unwrap()
        .arg("report")
        .arg(&report)
        .args(["--format", "html", "-o"])
        .arg(&single)
        .output()
        .unwrap();
    assert!(output.status.success());
    let out_dir = dir.path().join("again");
    let output = Command::cargo_bin("cuport")
        .unwrap()
        .arg("report")
        .arg(&report)
        .args(["--format", "html", "--out-dir"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(output.status.success());
    let original = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert_eq!(std::fs::read_to_string(&single).unwrap(), original);
    assert_eq!(
        std::fs::read_to_string(out_dir.join("report.html")).unwrap(),
        original
    );
}
