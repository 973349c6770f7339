//! Snapshot of what `scan` finds in each bundled fixture, one line per site:
//! `line:column kind library name [branch]`. Reviewing these snapshots is
//! reviewing the analyser.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write;
use std::path::{Path, PathBuf};

use cuport_analyze::{scan_tree, ScanOptions, ScanReport, NO_PROGRESS};

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

fn render(report: &ScanReport) -> String {
    let mut out = String::new();
    for file in &report.files {
        writeln!(
            out,
            "== {} ({}, {} lines)",
            file.path, file.language, file.lines
        )
        .unwrap();
        for site in &file.analysis.sites {
            let branch = file.analysis.conditions_of(site).join(" && ");
            let branch = if branch.is_empty() {
                String::new()
            } else {
                format!("  [if {branch}]")
            };
            let extra = match (site.args.len(), site.launch_config.len()) {
                (0, 0) => String::new(),
                (args, 0) => format!(" ({args} args)"),
                (args, config) => format!(" <<<{config}>>> ({args} args)"),
            };
            writeln!(
                out,
                "{}:{} {} {} {}{extra}{branch}",
                site.line,
                site.column,
                site.kind,
                site.library.id(),
                site.name
            )
            .unwrap();
        }
        for issue in &file.analysis.parse_issues {
            writeln!(
                out,
                "parse issue: lines {}-{}: {}",
                issue.line_start, issue.line_end, issue.message
            )
            .unwrap();
        }
        for warning in &file.analysis.warnings {
            writeln!(out, "warning: {warning}").unwrap();
        }
    }
    for skipped in &report.skipped {
        writeln!(out, "skipped {}: {}", skipped.path, skipped.reason).unwrap();
    }
    out
}

#[test]
fn every_fixture_scans_as_reviewed() {
    let root = fixtures_root();
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("fixtures directory")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.path())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 10,
        "expected the ten bundled fixtures, found {}",
        dirs.len()
    );
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let report = scan_tree(&dir, &ScanOptions::default(), NO_PROGRESS).unwrap();
        assert!(!report.files.is_empty(), "{name} has no analysable files");
        insta::assert_snapshot!(format!("scan_{name}"), render(&report));
    }
}
