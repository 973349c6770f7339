//! What the commands that scan a tree share: the rule tables' CUDA names
//! the analyser tells a project's own names apart with, and the progress
//! bar it reports to.
use std::sync::Arc;

use cuport_analyze::KnownNames;
use indicatif::ProgressBar;

use crate::output::Output;

/// The rule tables' CUDA names, so a project's `atomicAdd` overload or
/// `cuInit` shim is not mistaken for a project-only name.
pub(crate) fn known_cuda_names(out: &Output) -> Option<KnownNames> {
    match cuport_rules::RuleSet::builtin() {
        Ok(rules) => Some(known_names_of(Arc::new(rules))),
        Err(error) => {
            out.warn(&format!("built-in rule tables failed to load ({error}); CUDA-looking names the project defines are all treated as its own"));
            None
        }
    }
}

/// [`KnownNames`] backed by a loaded rule set (shared, not copied).
pub(crate) fn known_names_of(rules: Arc<cuport_rules::RuleSet>) -> KnownNames {
    let sites = Arc::clone(&rules);
    KnownNames::new(
        move |name: &str| rules.is_known(name),
        move |name: &str| sites.site_of(name),
    )
}

pub(crate) struct BarProgress(pub(crate) ProgressBar);

impl cuport_analyze::Progress for BarProgress {
    fn total(&self, files: usize) {
        self.0.set_length(files as u64);
    }
    fn advance(&self) {
        self.0.inc(1);
    }
}
