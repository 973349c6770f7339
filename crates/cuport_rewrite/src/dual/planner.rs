//! Dual-stack planning of one file: each site goes to the C-family or the
//! Python rules, which compose one-way planning (each site is also planned
//! for every selected target, whose diagnostics they report).
use cuport_analyze::Site;
use cuport_model::Language;

use super::state::DualPlanner;
use crate::diagnostic::Diagnostic;
use crate::options::MigrateOptions;
use crate::plan::{plan_sites, FileInput, PlanSite, PlannedFile, Planner};

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
        .targets()
        .iter()
        .map(|&target| input.options.one_way_to(target))
        .collect();
    // The kernels a target replaces with operator calls: the source keeps
    // them for CUDA and adds the operator call for that backend.
    let replaced = per_target
        .iter()
        .flat_map(|options| {
            crate::kernel_stage::replaced_kernels(
                input.analysis,
                input.src,
                input.path,
                options,
                options.planned_target(),
                crate::kernel_stage::LaunchArgs::SharedWithCuda,
            )
        })
        .collect();
    let mut base = Planner::for_file(input, input.options);
    base.replaced = replaced;
    let mut planner = DualPlanner {
        base,
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
