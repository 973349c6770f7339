//! The one place that picks between one-way and dual-stack migration: per
//! file, which planner plans it, which passes follow and where the runtime
//! header goes; per tree, which files the run generates. File-level
//! orchestration (`crate::file`) takes these choices without knowing the
//! mode. Below this, passes that belong to a one-way port read their target
//! from `Mode::OneWay`, and `dual/` plans each target's branch with one-way
//! options (`Planner::for_dual_stack` marks that planning).
use cuport_analyze::ScanReport;
use cuport_model::KernelModel;
use cuport_rules::RuleSet;

use crate::headers::HeaderPlacement;
use crate::options::{MigrateOptions, Mode};
use crate::passes::{Pass, DUAL, ONE_WAY};
use crate::plan::{FileInput, PlannedFile};
use crate::result::{GeneratedFile, MigratedFile};

pub(crate) fn plan_file(input: &FileInput<'_>) -> PlannedFile {
    match input.options.mode {
        Mode::OneWay(_) => crate::plan::one_way::plan_file(input),
        Mode::Dual(_) => crate::dual::plan_file(input),
    }
}

/// The post-plan passes of the run, in order.
pub(crate) fn passes(options: &MigrateOptions) -> &'static [Pass] {
    match options.mode {
        Mode::OneWay(_) => ONE_WAY,
        Mode::Dual(_) => DUAL,
    }
}

/// Where the runtime (and device) header goes. Where kernels compile as
/// they are (HIP, MUSA, SIMT, and every dual-stack backend that builds
/// them), a kernel-only .cu file needs the runtime header too: only nvcc
/// includes it implicitly.
pub(crate) fn header_placement(options: &MigrateOptions) -> HeaderPlacement<'static> {
    match options.mode {
        Mode::OneWay(target) => {
            let kernels_compile = options.kernels_compile(target);
            let simt = (options.kernel_model(target) == KernelModel::Simt)
                .then(|| target.profile().kernels.simt.as_ref())
                .flatten();
            HeaderPlacement {
                device: simt.map(|s| s.device_header.as_str()),
                even_without_edits: kernels_compile,
                before_cooperative_groups: kernels_compile,
                before_project_headers: false,
            }
        }
        Mode::Dual(_) => HeaderPlacement {
            device: None,
            even_without_edits: true,
            before_cooperative_groups: false,
            before_project_headers: true,
        },
    }
}

pub(crate) fn generated_files(
    report: &ScanReport,
    files: &[MigratedFile],
    rules: &RuleSet,
    options: &MigrateOptions,
) -> Vec<GeneratedFile> {
    match &options.mode {
        Mode::OneWay(target) => {
            crate::helper_files::one_way_helpers(files, rules, options, *target)
        }
        Mode::Dual(targets) => crate::dual::generated_files(report, files, rules, targets, options),
    }
}
