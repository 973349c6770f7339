//! Dual-stack mode: the source is rewritten once to portable names
//! (`cuportMalloc`, `cuportStream_t`, `cuport_device.device_type`) and a
//! generated shim maps them to CUDA (the default, zero-cost) or to one of the
//! targets, chosen at build time. Everything the shim says comes from the same
//! rule tables as the one-way migration.
mod build;
mod c;
pub(crate) mod names;
mod planner;
mod python;
pub(crate) mod python_module;
pub(crate) mod shim;
mod state;

pub(crate) use planner::plan_file;

use cuport_analyze::ScanReport;
use cuport_model::{Language, SiteKind, Target};
use cuport_rules::{NameKind, RuleSet};

use crate::options::MigrateOptions;
use crate::result::{GeneratedFile, MigratedFile};
use shim::{shim_headers, shimmed_library, ProjectUse};

/// Every file a dual-stack run adds to the tree: the shim headers for the
/// CUDA libraries the project uses (and what their backends need).
pub(crate) fn generated_files(
    report: &ScanReport,
    files: &[MigratedFile],
    rules: &RuleSet,
    targets: &[Target],
    options: &MigrateOptions,
) -> Vec<GeneratedFile> {
    let mut project = project_use(report, rules, options);
    if !report.root_is_file {
        shim::uses::read_previous(&report.root, &mut project);
    }
    // A Python-only project needs no C headers.
    let c_family = report.files.iter().any(|f| {
        matches!(f.language, Language::Cuda | Language::Cpp | Language::Cmake)
            && !f.analysis.sites.is_empty()
    });
    let mut generated = if c_family || !project.names.is_empty() {
        shim_headers(rules, options, &project)
    } else {
        Vec::new()
    };
    let is_package = |dir: &str| {
        let init = format!("{dir}/__init__.py");
        report.files.iter().any(|f| f.path == init)
    };
    // A header-only helper an include of the sources names (`cooperative_
    // groups/reduce.h` becomes `cuport/cuport_cg_reduce.h` on HIP), which
    // no shim header includes. Read in the output, so that a second run,
    // which edits nothing there, writes it again.
    let outputs: Vec<std::borrow::Cow<'_, str>> = files
        .iter()
        .map(|f| String::from_utf8_lossy(&f.result.output))
        .collect();
    let texts: Vec<&str> = outputs.iter().map(|t| t.as_ref()).collect();
    for helper in crate::helper_files::helper_headers_named_in(&texts, targets, "cuport/") {
        if !generated.iter().any(|g| g.path == helper.path) {
            generated.push(helper);
        }
    }
    generated.extend(python_module::python_generated_files(
        files,
        rules,
        targets,
        &is_package,
    ));
    generated
}

/// The shimmed libraries the project uses, with the CUDA headers it
/// includes for each (a .cu file may use the runtime with no include) and
/// the names it uses.
fn project_use(report: &ScanReport, rules: &RuleSet, options: &MigrateOptions) -> ProjectUse {
    let mut project = ProjectUse::default();
    for site in report.files.iter().flat_map(|f| f.analysis.sites.iter()) {
        let rule_library = options
            .targets()
            .iter()
            .find_map(|&t| rules.lookup(t, &site.name))
            .and_then(|r| r.library());
        let Some(library) = shimmed_library(&site.name, rule_library.or(Some(site.library))) else {
            continue;
        };
        let headers = project.includes.entry(library).or_default();
        match site.kind {
            // Recorded in the shim's `cuport-uses` comment, read back by a
            // rerun word by word: a name cut off by the end of its line or
            // file (`<cuda_# notes`) would come back as other words, or end
            // the comment (a fuzzing finding: `fuzz_regressions::
            // broken_include_is_not_recorded_in_the_shim`).
            SiteKind::Include if is_header_word(&site.name) => {
                headers.insert(site.name.clone());
            }
            SiteKind::RuntimeApi
            | SiteKind::DriverApi
            | SiteKind::LibraryCall
            | SiteKind::Type
            | SiteKind::EnumConstant
            | SiteKind::Macro
                if rules.is_known(&site.name) =>
            {
                let names = project.names.entry(library).or_default();
                names.insert(site.name.clone(), name_kind(site.kind));
            }
            _ => {}
        }
    }
    // Always there: include switches and kernel launches rely on it.
    project
        .includes
        .entry(cuport_model::Library::Runtime)
        .or_default();
    project
}

fn name_kind(kind: SiteKind) -> NameKind {
    match kind {
        SiteKind::Type => NameKind::Type,
        SiteKind::EnumConstant | SiteKind::Macro => NameKind::EnumValue,
        _ => NameKind::Function,
    }
}

/// Whether an include's name can be recorded as one word of a C comment.
fn is_header_word(name: &str) -> bool {
    !name.is_empty() && !name.contains(char::is_whitespace) && !name.contains("*/")
}
