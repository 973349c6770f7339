//! The PyTorch API support analysis both `cuport analyze` and `cuport
//! migrate --report` produce: the project's API inventories, the vendor's
//! lists for a version and chip, and the files written for them.
use anyhow::Context;
use cuport_analyze::{torch_api_uses, ApiQuery, ScanReport, TorchApiInventory};
use cuport_model::{Language, Library, SiteKind, Target};
use cuport_report::{
    advice_csv, api_support_csv, api_support_html, api_support_report, custom_ops_csv,
    third_party_csv, ApiSupportReport, CudaSources, KernelRef, LibraryUse,
};
use cuport_rules::api_support::{SupportError, SupportLists, VersionList};
use cuport_rules::RuleSet;

use crate::output::Output;

/// The chip the analysis reads the lists for unless told otherwise:
/// Atlas A2 on Ascend, the lists' only chip class elsewhere.
pub(crate) fn default_chip(lists: &SupportLists) -> &str {
    if lists.chips.iter().any(|c| c == "A2") {
        "A2"
    } else {
        lists.chips.first().map_or("", String::as_str)
    }
}

/// The API uses of the Python files of a scan (made with `keep_sources`).
pub(crate) fn inventories(
    scanned: &ScanReport,
    lists: &SupportLists,
    out: &Output,
) -> anyhow::Result<Vec<(String, TorchApiInventory)>> {
    let guidance = &lists.guidance;
    let advice_apis: std::collections::HashSet<&str> = guidance.advice_apis().collect();
    let is_api = |api: &str| advice_apis.contains(api) || lists.lists(api);
    let packages: Vec<String> = guidance.packages.iter().map(|p| p.module.clone()).collect();
    let keywords = guidance.advice_keywords();
    let query = ApiQuery {
        is_api: &is_api,
        packages: &packages,
        keywords: &keywords,
    };
    let mut files = Vec::new();
    for file in &scanned.files {
        let (Language::Python, Some(source)) = (file.language, file.source.as_ref()) else {
            continue;
        };
        let inventory = torch_api_uses(source, &query)?;
        if inventory.unparsed {
            out.warn(&format!(
                "{}: tree-sitter-python could not parse it; its APIs are not counted",
                file.path
            ));
        }
        files.push((file.path.clone(), inventory));
    }
    Ok(files)
}

/// The support report of `files` for `version` on `chip`, with what the
/// rule tables port each API to and the kernels of the CUDA extensions the
/// project builds (from the scan of its CUDA sources).
pub(crate) fn support_report(
    scanned: &ScanReport,
    files: &[(String, TorchApiInventory)],
    lists: &SupportLists,
    selected: (&VersionList, &str),
    rules: &RuleSet,
) -> ApiSupportReport {
    let port_of = |api: &str| {
        let resolved = rules.lookup(lists.target, api)?;
        let to = resolved.target_name.as_deref()?;
        (to != api).then(|| to.to_owned())
    };
    let paths: Vec<String> = scanned
        .files
        .iter()
        .filter(|f| f.language == Language::Cuda)
        .map(|f| f.path.clone())
        .collect();
    let kernels = |path: &str| kernels_of(scanned, path, lists.target);
    // cuport writes Ascend C skeletons only (`--ascend-kernel-skeletons`).
    let no_skeleton_note = (lists.target != Target::Ascend).then_some(
        "cuport generates no kernel skeletons for this target: write the kernel by hand (`cuport migrate` reports it, CP0010)",
    );
    let library_uses = library_uses(scanned, lists);
    let cuda_sources = CudaSources {
        paths: &paths,
        kernels: &kernels,
        no_skeleton_note,
        library_uses: &library_uses,
    };
    api_support_report(files, lists, selected, &port_of, &cuda_sources)
}

/// The uses, in the tree's C, C++ and CUDA sources, of the CUDA libraries
/// some advice of the target is keyed to.
fn library_uses(scanned: &ScanReport, lists: &SupportLists) -> Vec<LibraryUse> {
    let keyed: std::collections::BTreeSet<Library> = lists
        .guidance
        .advice
        .iter()
        .flat_map(|a| a.libraries.iter().copied())
        .collect();
    scanned
        .files
        .iter()
        .filter(|f| f.language.is_c_family())
        .flat_map(|f| {
            f.analysis
                .sites
                .iter()
                .filter(|s| keyed.contains(&s.library))
                .map(|s| LibraryUse {
                    file: f.path.clone(),
                    library: s.library,
                    name: s.name.clone(),
                    line: s.line,
                    column: s.column,
                })
        })
        .collect()
}

/// The kernels defined in one scanned CUDA file; on Ascend with the
/// skeleton `cuport migrate --ascend-kernel-skeletons` writes for each.
fn kernels_of(scanned: &ScanReport, path: &str, target: Target) -> Vec<KernelRef> {
    let Some(file) = scanned.files.iter().find(|f| f.path == path) else {
        return Vec::new();
    };
    if target == Target::Ascend {
        if let Some(source) = &file.source {
            return cuport_rewrite::file_skeletons(path, source, &file.analysis)
                .into_iter()
                .map(|s| KernelRef {
                    name: s.kernel,
                    line: s.line,
                    skeleton: Some(s.path),
                    operator: s.operator,
                })
                .collect();
        }
    }
    file.analysis
        .sites
        .iter()
        .filter(|s| s.kind == SiteKind::KernelDefinition && s.body.is_some())
        .map(|s| KernelRef {
            name: s.name.clone(),
            line: s.line,
            skeleton: None,
            operator: None,
        })
        .collect()
}

/// `cuport migrate --report DIR`: for each target with support lists
/// (which ones is data: `mappings/<target>/api-support/`), the analysis of
/// the newest list on the default chip, next to the migration's reports;
/// `api_support-<target>.*` when several targets have lists.
pub(crate) fn write_migration_support(
    dir: &std::path::Path,
    targets: &[Target],
    scanned: &ScanReport,
    rules: &RuleSet,
    out: &Output,
) -> anyhow::Result<Vec<ApiSupportReport>> {
    let mut listed = Vec::new();
    for &target in targets {
        match SupportLists::builtin(target) {
            Ok(lists) => listed.push(lists),
            Err(SupportError::NoLists(_)) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let mut reports = Vec::new();
    for lists in &listed {
        let files = inventories(scanned, lists, out)?;
        if files.is_empty() {
            continue;
        }
        let version = lists.version(None)?;
        let chip = lists.chip(default_chip(lists))?;
        let report = support_report(scanned, &files, lists, (version, chip), rules);
        let suffix = if listed.len() > 1 {
            format!("-{}", lists.target)
        } else {
            String::new()
        };
        write_report_files(dir, &suffix, &report)?;
        reports.push(report);
    }
    Ok(reports)
}

/// `DIR/api_support{suffix}.csv`, `.json` and `.html`,
/// `DIR/third_party{suffix}.csv`, `DIR/custom_ops{suffix}.csv` and
/// `DIR/advice{suffix}.csv`.
pub(crate) fn write_report_files(
    dir: &std::path::Path,
    suffix: &str,
    report: &ApiSupportReport,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create {}; check the path and permissions",
            dir.display()
        )
    })?;
    let files = [
        (format!("api_support{suffix}.csv"), api_support_csv(report)?),
        (
            format!("api_support{suffix}.json"),
            serde_json::to_string_pretty(report)? + "\n",
        ),
        (
            format!("third_party{suffix}.csv"),
            third_party_csv(&report.third_party)?,
        ),
        (
            format!("custom_ops{suffix}.csv"),
            custom_ops_csv(&report.custom_ops)?,
        ),
        (format!("advice{suffix}.csv"), advice_csv(&report.advice)?),
        (
            format!("api_support{suffix}.html"),
            api_support_html(report),
        ),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
