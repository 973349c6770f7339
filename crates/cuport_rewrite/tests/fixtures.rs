//! Every fixture migrated to every target: the diff and the diagnostics
//! together, as a reviewer reads them. Plus the properties that must hold
//! for all of them: a second migration changes nothing, and every CUDA name
//! left in the output has a diagnostic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeSet;

use common::*;
use cuport_analyze::{scan_tree, NO_PROGRESS};
use cuport_model::{Library, SiteKind};
use cuport_rewrite::MigrateOptions;

#[test]
fn every_fixture_for_every_target_as_reviewed() {
    for (mode, options) in one_way_modes() {
        for dir in fixture_dirs() {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            let migration = migrate_dir(&dir, &options);
            insta::assert_snapshot!(format!("migrate_{mode}_{name}"), render(&migration));
        }
    }
}

#[test]
fn migrating_the_output_again_changes_nothing() {
    for (target, options) in one_way_modes() {
        for dir in fixture_dirs() {
            let first = migrate_dir(&dir, &options);
            let out = write_output(&first);
            let second = migrate_dir(&out.path().join("tree"), &options);
            let changed: Vec<_> = second
                .changed_files()
                .map(|f| format!("{}:\n{}", f.path, cuport_rewrite::unified_diff(f)))
                .collect();
            assert!(
                changed.is_empty(),
                "{target} {}: second migration changed\n{}",
                dir.display(),
                changed.join("\n")
            );
        }
    }
}

#[test]
fn every_cuda_name_left_in_the_output_has_a_diagnostic() {
    let mut silent = BTreeSet::new();
    for (mode, options) in one_way_modes() {
        for dir in fixture_dirs() {
            let migration = migrate_dir(&dir, &options);
            let diagnosed: BTreeSet<String> = migration
                .files
                .iter()
                .flat_map(|f| f.result.diagnostics.iter().map(|d| d.cuda_name.clone()))
                .collect();
            let out = write_output(&migration);
            let rescan = scan_tree(&out.path().join("tree"), &scan_options(), NO_PROGRESS).unwrap();
            for file in &rescan.files {
                for site in &file.analysis.sites {
                    if is_accepted_unchanged(&options, site) {
                        continue;
                    }
                    if !diagnosed.contains(&site.name) {
                        silent.insert(format!(
                            "{mode}: `{}` ({}, {}) left in {}:{} without a diagnostic",
                            site.name, site.kind, site.library, file.path, site.line
                        ));
                    }
                }
            }
        }
    }
    assert!(
        silent.is_empty(),
        "{}",
        silent.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// Names a target accepts as they are: the tables say `exact`, or the
/// kernel language is native (HIP, MUSA, MACA: `model = "native"`).
fn is_accepted_unchanged(options: &MigrateOptions, site: &cuport_analyze::Site) -> bool {
    let target = options.targets()[0];
    let flavour = options.flavour_for(target);
    let exact = rules()
        .lookup_flavour(target, flavour, &site.name)
        .is_some_and(|r| r.status() == cuport_rules::Status::Exact);
    let native = target.profile().kernels_native()
        && site.library == Library::Device
        && !matches!(site.kind, SiteKind::WarpSizeAssumption);
    // Kernels a target compiles (natively, or through its SIMT model) stay.
    let kernel = matches!(
        site.kind,
        SiteKind::KernelDefinition | SiteKind::KernelLaunch
    ) && options.kernels_compile(target)
        || site.kind == SiteKind::Qualifier && native;
    // `__global__` is reported through its kernel's definition; `__restrict__` is also a GCC keyword.
    let covered = matches!(site.name.as_str(), "__global__" | "__restrict__");
    // `torch.autocast(device_type="cuda")` stays on a target whose device is still "cuda" (ROCm).
    // So do device strings built from "cuda:" there.
    let cuda_device = rules().device_string(target, "cuda").as_deref() == Some("cuda");
    let same_device =
        (site.name.ends_with("[cuda]") || site.kind == SiteKind::DeviceString) && cuda_device;
    // A PyTorch path that does not say CUDA (`torch.profiler.profile`) and
    // that this target's tables do not port is the same API there.
    let same_python = site.kind == SiteKind::FrameworkCall
        && !cuport_analyze::names_cuda(&site.name)
        && rules()
            .lookup_flavour(target, flavour, &site.name)
            .is_none();
    // A header the port wrote (`simt_api/cooperative_groups.h` is named
    // like CUDA's), and on a SIMT model with 32-wide warps the warp width.
    let target_header =
        site.kind == SiteKind::Include && rules().is_target_header(target, &site.name);
    let simt_warp = site.kind == SiteKind::WarpSizeAssumption
        && options.kernel_model(target) == cuport_model::KernelModel::Simt
        && target
            .profile()
            .kernels
            .simt
            .as_ref()
            .is_some_and(|s| s.limits.warp_size == 32);
    exact || native || kernel || covered || same_device || same_python || target_header || simt_warp
}
