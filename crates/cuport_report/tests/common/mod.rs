//! Shared helpers: migrate a fixture and make its report document with
//! fixed metadata, so snapshots do not depend on the clock or the checkout.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cuport_analyze::{
    scan_tree, AnalyzeOptions, KnownNames, ScanOptions, SyntaxCheck, NO_PROGRESS,
};
use cuport_model::Target;
use cuport_report::{ReportDocument, RulesInfo, RunMeta};
use cuport_rewrite::{migrate_report, MigrateOptions, Migration};
use cuport_rules::RuleSet;

pub(crate) const FIXED_TIME: &str = "2026-01-01T00:00:00Z";

pub(crate) fn rules() -> &'static RuleSet {
    static RULES: OnceLock<RuleSet> = OnceLock::new();
    RULES.get_or_init(|| RuleSet::builtin().expect("built-in rules load"))
}

pub(crate) fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// Names of the fixture directories, sorted.
pub(crate) fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_root())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn scan_options() -> ScanOptions {
    ScanOptions {
        analyze: AnalyzeOptions {
            syntax_check: SyntaxCheck::Off,
        },
        known_names: Some(KnownNames::new(
            |n: &str| rules().is_known(n),
            |n: &str| rules().site_of(n),
        )),
        ..ScanOptions::default()
    }
}

pub(crate) fn migrate(dir: &Path, options: &MigrateOptions) -> Migration {
    let report = scan_tree(dir, &scan_options(), NO_PROGRESS).unwrap();
    migrate_report(&report, rules(), options).unwrap()
}

pub(crate) fn meta(target: Target) -> RunMeta {
    let mut meta = RunMeta::new(target, RulesInfo::of_sources(rules().sources()))
        .with_option("annotate", false);
    meta.generated_at = FIXED_TIME.to_owned();
    meta
}

/// The report of `fixtures/NAME` migrated to `target`, rooted at
/// `fixtures/NAME` rather than this checkout's absolute path.
pub(crate) fn fixture_document(name: &str, target: Target) -> ReportDocument {
    let migration = migrate(&fixtures_root().join(name), &MigrateOptions::new(target));
    let mut document = ReportDocument::new(&migration, meta(target));
    document.root = format!("fixtures/{name}");
    document
}

/// Snapshot settings that hide the rule-table hash, which changes with
/// every table edit.
pub(crate) fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"fnv1a64:[0-9a-f]{16}", "[rules-hash]");
    settings
}
