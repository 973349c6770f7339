//! Dual-stack mode on every fixture: the portable diff and diagnostics as a
//! reviewer reads them, the generated shim, idempotence, and that every name
//! the one-way tables know is provided by the shim.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use common::*;
use cuport_model::{Library, Target};
use cuport_rewrite::{backend_macro, portable_name, shim_header, shim_headers, MigrateOptions};
use cuport_rules::NameKind;

pub(crate) fn dual_options(targets: &[Target]) -> MigrateOptions {
    let mut options = MigrateOptions::new(targets[0]);
    options.mode = cuport_rewrite::Mode::Dual(targets.to_vec());
    options
}

const ALL: [Target; 4] = [Target::Ascend, Target::Hip, Target::Musa, Target::Mlu];

#[test]
fn every_fixture_in_dual_mode_as_reviewed() {
    for dir in fixture_dirs() {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let migration = migrate_dir(&dir, &dual_options(&ALL));
        insta::assert_snapshot!(format!("dual_{name}"), render(&migration));
    }
}

/// The shim of the whole fixture set for the targets with small tables in
/// full, and HIP's (thousands of HIPIFY names) by structure and counts.
#[test]
fn generated_shim_as_reviewed() {
    let migration = migrate_dir(
        &fixtures_root(),
        &dual_options(&[Target::Ascend, Target::Musa, Target::Mlu]),
    );
    for file in &migration.generated {
        let name = file.path.replace(['/', '.'], "_");
        insta::assert_snapshot!(format!("shim_{name}"), file.text);
    }
    let hip = migrate_dir(&fixtures_root(), &dual_options(&[Target::Hip]));
    let mut outline = String::new();
    for file in &hip.generated {
        let defines = file
            .text
            .lines()
            .filter(|l| l.starts_with("#define"))
            .count();
        let unavailable = file.text.matches("CUPORT_UNAVAILABLE_").count();
        outline.push_str(&format!(
            "== {}: {defines} defines, {unavailable} unavailable\n",
            file.path
        ));
        for line in file.text.lines().filter(|l| is_structure(l)) {
            outline.push_str(line);
            outline.push('\n');
        }
    }
    insta::assert_snapshot!("shim_hip_outline", outline);
}

fn is_structure(line: &str) -> bool {
    line.starts_with("#if")
        || line.starts_with("#elif")
        || line.starts_with("#else")
        || line.starts_with("#endif")
        || line.starts_with("#include")
}

#[test]
fn migrating_the_dual_output_again_changes_nothing() {
    for dir in fixture_dirs() {
        let first = migrate_dir(&dir, &dual_options(&ALL));
        let out = tempfile::tempdir().unwrap();
        first
            .write_copy(out.path(), &cuport_rewrite::RenamePlan::default())
            .unwrap();
        let second = migrate_dir(out.path(), &dual_options(&ALL));
        let changed: Vec<String> = second
            .changed_files()
            .map(|f| format!("{}:\n{}", f.path, cuport_rewrite::unified_diff(f)))
            .collect();
        assert!(
            changed.is_empty(),
            "{}: second run changed\n{}",
            dir.display(),
            changed.join("\n")
        );
        let paths = |m: &cuport_rewrite::Migration| -> Vec<String> {
            m.generated.iter().map(|g| g.path.clone()).collect()
        };
        assert_eq!(paths(&first), paths(&second), "{}", dir.display());
        for (a, b) in first.generated.iter().zip(&second.generated) {
            let first_difference = a.text.lines().zip(b.text.lines()).find(|(x, y)| x != y);
            assert!(
                a == b,
                "{}: {} differs on a second run: {first_difference:?}",
                dir.display(),
                a.path
            );
        }
        assert_eq!(first.generated.len(), second.generated.len());
    }
}

/// Nothing the one-way mode knows is missing from dual mode: every table
/// name of a shimmed library (functions, types, enum values, macros) has
/// its portable name defined or declared unavailable in the target's
/// section of its library's header.
#[test]
fn every_table_entry_is_represented_in_the_shim() {
    let rules = rules();
    let mut project = cuport_rewrite::ProjectUse::default();
    for library in Library::ALL {
        if shim_header(library).is_some() {
            project.includes.insert(library, Default::default());
        }
    }
    for target in ALL {
        let files = shim_headers(rules, &dual_options(&[target]), &project);
        let sections: BTreeMap<&str, &str> = files
            .iter()
            .map(|f| (f.path.as_str(), target_section(&f.text, target)))
            .collect();
        let mut missing = Vec::new();
        let mut checked = 0;
        for name in rules.known_cuda_names(target) {
            let resolved = rules.lookup(target, name).unwrap();
            let code_kind = matches!(
                resolved.kind(),
                NameKind::Function | NameKind::Type | NameKind::EnumValue | NameKind::Macro
            );
            let library = resolved
                .library()
                .or_else(|| cuport_analyze::library_of(name));
            let Some(header) = library.and_then(shim_header) else {
                continue;
            };
            let Some(portable) = portable_name(name).filter(|_| code_kind) else {
                continue;
            };
            checked += 1;
            let section = sections.get(format!("cuport/{header}").as_str()).copied();
            let provided = section.is_some_and(|s| {
                s.contains(&format!("#define {portable} "))
                    || s.contains(&format!("#define {portable}("))
                    || s.contains(&format!("({portable}, \""))
            });
            if !provided {
                missing.push(format!("{name} ({portable}) in cuport/{header}"));
            }
        }
        assert!(checked > 50, "{target}: only {checked} names checked");
        assert!(
            missing.is_empty(),
            "{target}: {} table names missing from the shim:\n{}",
            missing.len(),
            missing.join("\n")
        );
    }
}

/// The part of a shim header between `#if defined(CUPORT_BACKEND_X)` and
/// the next `#elif`/`#else`.
fn target_section(text: &str, target: Target) -> &str {
    let start_marker = format!("defined({})\n", backend_macro(target));
    let Some(start) = text.find(&start_marker) else {
        return "";
    };
    let rest = &text[start..];
    let end = ["\n#elif", "\n#else"]
        .iter()
        .filter_map(|m| rest.find(m))
        .min()
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Every library header starts with the backend switch and ends with the
/// CUDA section, which forwards to the original names.
#[test]
fn the_cuda_section_forwards_every_portable_name_to_its_cuda_name() {
    let migration = migrate_dir(&fixtures_root(), &dual_options(&ALL));
    for file in migration
        .generated
        .iter()
        .filter(|f| f.path != "cuport/backend.h")
    {
        let Some(cuda) = file.text.split("#else /* CUDA").nth(1) else {
            continue;
        };
        for line in cuda.lines().filter(|l| l.starts_with("#define ")) {
            let mut words = line.split_whitespace().skip(1);
            let (portable, cuda_name) = (words.next().unwrap(), words.next().unwrap());
            assert_eq!(
                portable_name(cuda_name).as_deref(),
                Some(portable),
                "{}: {line}",
                file.path
            );
        }
    }
}

/// The HIP branch of a shim made for a release before HIP 7.0 spells the
/// warp builtins without a mask (HIP 6.4.3 declares the `*_sync` forms only
/// with HIP_ENABLE_WARP_SYNC_BUILTINS; llm.c's dual-stack HIP path failed
/// on them), and it includes `<math.h>`, which cuda_runtime.h brings and
/// hip_runtime.h does not (llm.c's host `isfinite`).
#[test]
fn the_hip_branch_follows_the_selected_release_and_brings_math_h() {
    let shim_for = |version: Option<&str>| {
        let mut options = dual_options(&[Target::Hip]);
        if let Some(version) = version {
            options.sdk_versions.insert(
                Target::Hip,
                cuport_model::SdkVersion::parse(version).unwrap(),
            );
        }
        let migration = migrate_dir(&fixtures_root(), &options);
        let runtime = migration
            .generated
            .iter()
            .find(|f| f.path.ends_with("runtime.h"))
            .unwrap();
        target_section(&runtime.text, Target::Hip).to_owned()
    };
    let older = shim_for(Some("6.4.3"));
    assert!(
        older.contains("#define __shfl_xor_sync(cuport_a1, ...) __shfl_xor(__VA_ARGS__)"),
        "{older}"
    );
    assert!(
        older.contains("#define __activemask() __ballot(1)"),
        "{older}"
    );
    assert!(older.contains("#include <math.h>"), "{older}");
    let newest = shim_for(None);
    assert!(!newest.contains("#define __shfl_xor_sync"), "{newest}");
    assert!(newest.contains("#include <math.h>"), "{newest}");
}
