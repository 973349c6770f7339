//! The one place that picks between one-way and dual-stack migration: per
//! file, which planner plans it; per tree, which files the run generates.
//! Nothing else outside `dual/` knows dual-stack mode exists.
use cuport_analyze::ScanReport;
use cuport_rules::RuleSet;

use crate::options::MigrateOptions;
use crate::plan::{FileInput, PlannedFile};
use crate::result::{GeneratedFile, MigratedFile};

pub(crate) fn plan_file(input: &FileInput<'_>) -> PlannedFile {
    if input.options.is_dual() {
        crate::dual::plan_file(input)
    } else {
        crate::plan::one_way::plan_file(input)
    }
}

pub(crate) fn generated_files(
    report: &ScanReport,
    files: &[MigratedFile],
    rules: &RuleSet,
    options: &MigrateOptions,
) -> Vec<GeneratedFile> {
    if options.is_dual() {
        crate::dual::generated_files(report, files, rules, options)
    } else {
        crate::helper_files::one_way_helpers(files, rules, options)
    }
}
