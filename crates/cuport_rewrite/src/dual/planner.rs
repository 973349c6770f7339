//! The dual-stack planner: the shared planning context plus what only
//! dual-stack planning needs. It composes one-way planning (each site is
//! also planned for every selected target, whose diagnostics it reports)
//! and derefs to the context, so the dual rules read like the one-way ones.
use std::ops::{Deref, DerefMut};

use cuport_analyze::Site;
use cuport_model::{Language, TextRange};

use crate::diagnostic::Diagnostic;
use crate::options::MigrateOptions;
use crate::plan::{plan_sites, FileInput, PlanSite, PlannedFile, Planner};

pub(crate) struct DualPlanner<'a> {
    pub(crate) base: Planner<'a>,
    /// One-way options for each dual target (diagnostics come from them).
    pub(crate) per_target: &'a [MigrateOptions],
    /// `../` per directory level: the shim headers are included relative to
    /// the file, so the CUDA build needs no new include path.
    pub(crate) prefix: String,
    /// Launches to rewrite once inner edits are known.
    pub(crate) launches: Vec<Launch>,
}

#[derive(Debug)]
pub(crate) struct Launch {
    pub(crate) call: TextRange,
    pub(crate) kernel: TextRange,
    pub(crate) config: Vec<TextRange>,
    pub(crate) args: Vec<TextRange>,
    pub(crate) cuda_name: String,
}

impl<'a> Deref for DualPlanner<'a> {
    type Target = Planner<'a>;
    fn deref(&self) -> &Planner<'a> {
        &self.base
    }
}

impl DerefMut for DualPlanner<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.base
    }
}

impl PlanSite for DualPlanner<'_> {
    fn plan_site(&mut self, site: &Site) {
        match self.language {
            Language::Python => super::python::plan_site(&mut self.base, site),
            _ => super::c::plan_site(self, site),
        }
    }

    fn diagnostics(&self) -> &[Diagnostic] {
        &self.out.diagnostics
    }
}

/// Plans a file for a dual-stack run.
pub(crate) fn plan_file(input: &FileInput<'_>) -> PlannedFile {
    let per_target: Vec<MigrateOptions> = input
        .options
        .dual
        .iter()
        .map(|&target| MigrateOptions {
            target,
            dual: Vec::new(),
            ..input.options.clone()
        })
        .collect();
    let mut planner = DualPlanner {
        base: Planner::for_file(input, input.options),
        per_target: &per_target,
        prefix: "../".repeat(input.path.matches('/').count()),
        launches: Vec::new(),
    };
    let stats = plan_sites(&mut planner, input);
    if planner.language == Language::Python {
        super::python::finish_file(&mut planner.base);
    }
    planner.compose_rewrites();
    super::c::compose_launches(&mut planner);
    PlannedFile {
        runtime_header: super::c::runtime_include(&planner.prefix),
        planned: planner.base.out,
        stats,
    }
}
