//! Snapshot of what `scan` finds in each bundled fixture, one line per site:
//! `line:column kind library name [branch]`. Reviewing these snapshots is
//! reviewing the analyser.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use cuport_analyze::{scan_tree, FileAnalysis, ScanOptions, ScanReport, Site, NO_PROGRESS};

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

fn render(report: &ScanReport) -> String {
    let mut lines: Vec<String> = Vec::new();
    for file in &report.files {
        let analysis = &file.analysis;
        lines.push(format!(
            "== {} ({}, {} lines)",
            file.path, file.language, file.lines
        ));
        lines.extend(analysis.sites.iter().map(|site| site_line(analysis, site)));
        lines.extend(analysis.parse_issues.iter().map(|issue| {
            let (start, end) = (issue.line_start, issue.line_end);
            format!("parse issue: lines {start}-{end}: {}", issue.message)
        }));
        lines.extend(analysis.warnings.iter().map(|w| format!("warning: {w}")));
    }
    lines.extend(
        report
            .skipped
            .iter()
            .map(|skipped| format!("skipped {}: {}", skipped.path, skipped.reason)),
    );
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// `line:column kind library name`, then the launch shape and the branch.
fn site_line(analysis: &FileAnalysis, site: &Site) -> String {
    let branch = analysis.conditions_of(site).join(" && ");
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
    let (kind, library) = (site.kind, site.library.id());
    format!(
        "{}:{} {kind} {library} {}{extra}{branch}",
        site.line, site.column, site.name
    )
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
