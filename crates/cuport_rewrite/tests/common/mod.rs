//! Shared helpers: scan a tree, migrate it, render results.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cuport_analyze::{
    scan_tree, AnalyzeOptions, KnownNames, ScanOptions, SyntaxCheck, NO_PROGRESS,
};
use cuport_model::Target;
use cuport_rewrite::{migrate_report, unified_diff, MigrateOptions, Migration};
use cuport_rules::RuleSet;

pub(crate) fn rules() -> &'static RuleSet {
    static RULES: OnceLock<RuleSet> = OnceLock::new();
    RULES.get_or_init(|| RuleSet::builtin().expect("built-in rules load"))
}

pub(crate) fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

pub(crate) fn fixture_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir(fixtures_root())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

pub(crate) fn scan_options() -> ScanOptions {
    let rules = Arc::new(rules().clone());
    ScanOptions {
        analyze: AnalyzeOptions {
            syntax_check: SyntaxCheck::Off,
        },
        known_names: Some(KnownNames(Arc::new(move |n: &str| rules.is_known(n)))),
        ..ScanOptions::default()
    }
}

pub(crate) fn migrate_dir(dir: &Path, options: &MigrateOptions) -> Migration {
    let report = scan_tree(dir, &scan_options(), NO_PROGRESS).unwrap();
    migrate_report(&report, rules(), options).unwrap()
}

pub(crate) fn target_ids() -> [Target; 4] {
    Target::ALL
}

/// Diagnostics, then the diff: one artifact reviews both.
pub(crate) fn render(migration: &Migration) -> String {
    let mut out = String::new();
    for file in &migration.files {
        for d in &file.result.diagnostics {
            writeln!(
                out,
                "{}:{}:{} {} {} {}",
                file.path,
                d.line,
                d.column,
                d.level.id(),
                d.code,
                d.message
            )
            .unwrap();
        }
    }
    for file in migration.changed_files() {
        out.push_str(&unified_diff(file));
    }
    out
}
