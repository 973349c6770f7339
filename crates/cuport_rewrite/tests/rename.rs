//! `--rename-sources` on copies of the fixtures: the renamed files exist,
//! includes and build files name them, nothing else differs from a plain
//! copy, and renaming in place twice changes nothing the second time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use cuport_model::Target;
use cuport_rewrite::{InPlace, MigrateOptions, Migration, RenamePlan};

const FIXTURES: [&str; 3] = ["cmake_project", "torch_extension", "reduction"];
const RENAMING: [Target; 3] = [Target::Hip, Target::Musa, Target::Mlu];

/// Relative path → bytes.
type Tree = BTreeMap<String, Vec<u8>>;

/// Every file under `dir`.
fn read_tree(dir: &Path) -> Tree {
    files_under(dir)
        .into_iter()
        .map(|rel| {
            let bytes = std::fs::read(dir.join(&rel)).unwrap();
            (rel, bytes)
        })
        .collect()
}

fn plan_for(migration: &Migration, target: Target) -> RenamePlan {
    RenamePlan::new(&files_under(&migration.root), target).unwrap()
}

/// The plain copy and the renamed copy of one fixture.
fn both_copies(fixture: &str, target: Target) -> (Tree, Tree, RenamePlan) {
    let migration = migrate_dir(&fixtures_root().join(fixture), &MigrateOptions::new(target));
    let plan = plan_for(&migration, target);
    let out = tempfile::tempdir().unwrap();
    migration
        .write_copy(&out.path().join("plain"), &RenamePlan::default())
        .unwrap();
    migration
        .write_copy(&out.path().join("renamed"), &plan)
        .unwrap();
    (
        read_tree(&out.path().join("plain")),
        read_tree(&out.path().join("renamed")),
        plan,
    )
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[test]
fn renamed_copies_as_reviewed() {
    for fixture in FIXTURES {
        for target in RENAMING {
            let (plain, renamed, plan) = both_copies(fixture, target);
            let mut review = String::new();
            for (from, to) in &plan.renames {
                review.push_str(&format!("rename {from} -> {to}\n"));
            }
            for (path, before) in &plain {
                let after = &renamed[plan.new_path(path)];
                if after != before {
                    let before = String::from_utf8_lossy(before);
                    let after = String::from_utf8_lossy(after);
                    let diff = similar::TextDiff::from_lines(before.as_ref(), after.as_ref())
                        .unified_diff()
                        .context_radius(1)
                        .header(path, plan.new_path(path))
                        .to_string();
                    review.push_str(&diff);
                }
            }
            insta::assert_snapshot!(format!("rename_{target}_{fixture}"), review);
        }
    }
}

#[test]
fn only_names_and_references_change() {
    for fixture in FIXTURES {
        for target in RENAMING {
            let (plain, renamed, plan) = both_copies(fixture, target);
            assert_eq!(plain.len(), renamed.len(), "{fixture} {target}");
            for (path, before) in &plain {
                let new_path = plan.new_path(path);
                let after = renamed
                    .get(new_path)
                    .unwrap_or_else(|| panic!("{fixture} {target}: {new_path} missing"));
                // Undo the reference edits: new file names back to old ones.
                let mut undone = String::from_utf8_lossy(after).into_owned();
                for (from, to) in &plan.renames {
                    undone = undone.replace(file_name(to), file_name(from));
                }
                assert_eq!(
                    undone.as_bytes(),
                    before.as_slice(),
                    "{fixture} {target}: {path} changed beyond its references"
                );
            }
        }
    }
}

#[test]
fn references_follow_the_rename() {
    let (_, renamed, _) = both_copies("cmake_project", Target::Hip);
    let cmake = String::from_utf8_lossy(&renamed["CMakeLists.txt"]).into_owned();
    assert!(cmake.contains("src/main.hip"), "{cmake}");
    assert!(renamed.contains_key("src/main.hip"));
    let (_, renamed, _) = both_copies("reduction", Target::Musa);
    let driver = String::from_utf8_lossy(&renamed["reduce.mu"]).into_owned();
    assert!(driver.contains("#include \"reduce.muh\""), "{driver}");
    let (_, renamed, _) = both_copies("torch_extension", Target::Mlu);
    let setup = String::from_utf8_lossy(&renamed["setup.py"]).into_owned();
    assert!(setup.contains("\"ext_kernel.mlu\""), "{setup}");
    // Comments keep the old names.
    assert!(setup.contains("ext_kernel.cu for kernels"), "{setup}");
}

#[test]
fn ascend_renames_nothing() {
    let (plain, renamed, plan) = both_copies("torch_extension", Target::Ascend);
    assert!(plan.is_empty());
    assert_eq!(plain, renamed);
}

fn copy_fixture(name: &str, to: &Path) {
    let from = fixtures_root().join(name);
    for rel in files_under(&from) {
        let target = to.join(&rel);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&rel), target).unwrap();
    }
}

fn rename_in_place(root: &Path, target: Target, backup: bool) -> usize {
    let migration = migrate_dir(root, &MigrateOptions::new(target));
    let plan = plan_for(&migration, target);
    let how = InPlace {
        backup,
        force: false,
    };
    migration.write_in_place_renamed(how, &plan).unwrap()
}

#[test]
fn in_place_keeps_the_old_file_as_backup_and_reruns_change_nothing() {
    for (fixture, target) in [
        ("torch_extension", Target::Musa),
        ("cmake_project", Target::Hip),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tree");
        copy_fixture(fixture, &root);
        let original = read_tree(&root);
        assert!(rename_in_place(&root, target, true) > 0);
        let first = read_tree(&root);
        for (path, bytes) in &original {
            if let Some(new) = cuport_rewrite::renamed_path(path, target) {
                assert!(first.contains_key(&new), "{new} missing");
                assert!(!first.contains_key(path), "{path} still there");
                assert_eq!(&first[&format!("{path}.cuport.orig")], bytes);
            }
        }
        assert_eq!(
            rename_in_place(&root, target, true),
            0,
            "{fixture} {target}"
        );
        assert_eq!(
            read_tree(&root),
            first,
            "{fixture} {target}: second run changed files"
        );
    }
}

#[test]
fn in_place_without_backup_removes_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    copy_fixture("reduction", &root);
    rename_in_place(&root, Target::Mlu, false);
    let after = read_tree(&root);
    let names: Vec<&str> = after.keys().map(String::as_str).collect();
    assert_eq!(names, ["reduce.mlu", "reduce.mluh"]);
}
