//! Runs one pass on a source, after the mode's planner, so a pass's tests
//! see exactly what it adds.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use cuport_model::Code;
use std::sync::OnceLock;

use cuport_analyze::{analyze_source, AnalyzeOptions};
use cuport_model::{Language, LineIndex};
use cuport_rules::RuleSet;

use super::Pass;
use crate::diagnostic::Diagnostic;
use crate::edit::Edit;
use crate::options::MigrateOptions;
use crate::plan::FileInput;
use crate::suppress::Suppressions;

fn rules() -> &'static RuleSet {
    static RULES: OnceLock<RuleSet> = OnceLock::new();
    RULES.get_or_init(|| RuleSet::builtin().expect("built-in rules load"))
}

/// What `pass` added to the plan of `src`.
pub(super) struct Added {
    pub(super) diagnostics: Vec<Diagnostic>,
    pub(super) edits: Vec<Edit>,
    pub(super) headers: Vec<String>,
}

impl Added {
    pub(super) fn codes(&self) -> Vec<Code> {
        self.diagnostics.iter().map(|d| d.code).collect()
    }
}

pub(super) fn run_pass(
    pass: &Pass,
    language: Language,
    src: &str,
    options: &MigrateOptions,
) -> Added {
    run_pass_on("", pass, language, src, options)
}

/// `run_pass` on a file at `path` (relative to the migrated root).
pub(super) fn run_pass_on(
    path: &str,
    pass: &Pass,
    language: Language,
    src: &str,
    options: &MigrateOptions,
) -> Added {
    let src = src.as_bytes();
    let analysis = analyze_source(language, src, &AnalyzeOptions::default());
    let lines = LineIndex::new(src);
    let suppressions = Suppressions::find(src, &lines, language);
    let input = FileInput {
        path,
        language,
        src,
        analysis: &analysis,
        rules: rules(),
        options,
        lines: &lines,
        suppressions: &suppressions,
        words: std::cell::OnceCell::new(),
        valid_text: std::cell::OnceCell::new(),
    };
    let before = crate::mode::plan_file(&input).planned;
    let mut after = before.clone();
    pass.run(&input, &mut after);
    Added {
        diagnostics: new_items(&before.diagnostics, after.diagnostics),
        edits: new_items(&before.edits, after.edits),
        headers: new_items(&before.headers, after.headers),
    }
}

/// What `after` holds beyond `before`, or with changed content (a pass
/// that changes an item's effort changes the item).
fn new_items<T: PartialEq>(before: &[T], after: Vec<T>) -> Vec<T> {
    after.into_iter().filter(|a| !before.contains(a)).collect()
}
