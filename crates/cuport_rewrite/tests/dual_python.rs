//! Dual-stack mode on the Python fixtures: the rewrite to `cuport_device` /
//! `cuport_build` and the per-target diagnostics as a reviewer reads them,
//! idempotence, and that every rewritten script still byte-compiles.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::fmt::Write;
use std::path::Path;
use std::process::Command;

use common::*;
use cuport_model::{Language, Target};
use cuport_rewrite::{unified_diff, MigrateOptions, MigratedFile, Migration};

const ALL: [Target; 4] = [Target::Ascend, Target::Hip, Target::Musa, Target::Mlu];

fn dual_options(targets: &[Target]) -> MigrateOptions {
    let mut options = MigrateOptions::new(targets[0]);
    options.mode = cuport_rewrite::Mode::Dual(targets.to_vec());
    options
}

fn python_files(migration: &Migration) -> impl Iterator<Item = &MigratedFile> {
    migration
        .files
        .iter()
        .filter(|f| f.language == Language::Python)
}

/// Fixture directories holding Python, with their dual migration.
fn python_fixtures(targets: &[Target]) -> Vec<(String, Migration)> {
    fixture_dirs()
        .into_iter()
        .map(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            (name, migrate_dir(&dir, &dual_options(targets)))
        })
        .filter(|(_, m)| python_files(m).next().is_some())
        .collect()
}

/// Diagnostics, then the diff, of the Python files only.
fn render_python(migration: &Migration) -> String {
    let mut out = String::new();
    for file in python_files(migration) {
        for d in &file.result.diagnostics {
            writeln!(out, "{}", d.plain_line(&file.path)).unwrap();
        }
    }
    for file in python_files(migration).filter(|f| f.result.changed()) {
        out.push_str(&unified_diff(file));
    }
    out
}

#[test]
fn every_python_fixture_in_dual_mode_as_reviewed() {
    let fixtures = python_fixtures(&ALL);
    assert!(!fixtures.is_empty(), "no Python fixtures found");
    for (name, migration) in fixtures {
        insta::assert_snapshot!(format!("dual_python_{name}"), render_python(&migration));
    }
}

#[test]
fn ascend_alone_reports_only_ascend() {
    let migration = migrate_dir(
        &fixtures_root().join("pytorch_train"),
        &dual_options(&[Target::Ascend]),
    );
    insta::assert_snapshot!(
        "dual_python_pytorch_train_ascend",
        render_python(&migration)
    );
}

fn write_python(migration: &Migration, dir: &Path) {
    for file in python_files(migration) {
        let path = dir.join(&file.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &file.result.output).unwrap();
    }
}

#[test]
fn a_second_dual_rewrite_changes_nothing() {
    for (name, first) in python_fixtures(&ALL) {
        let out = tempfile::tempdir().unwrap();
        write_python(&first, out.path());
        let second = migrate_dir(out.path(), &dual_options(&ALL));
        let changed: Vec<String> = python_files(&second)
            .filter(|f| f.result.changed())
            .map(|f| format!("{}:\n{}", f.path, unified_diff(f)))
            .collect();
        assert!(
            changed.is_empty(),
            "{name}: second rewrite changed\n{}",
            changed.join("\n")
        );
    }
}

fn python3() -> Option<&'static str> {
    if Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Some("python3");
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !in_ci,
        "python3 is required in CI to byte-compile the dual rewrite"
    );
    eprintln!("SKIPPED: python3 not found; the dual-rewritten scripts were not byte-compiled");
    None
}

#[test]
fn rewritten_scripts_byte_compile() {
    let Some(python) = python3() else { return };
    for targets in [ALL.to_vec(), vec![Target::Ascend]] {
        for (name, migration) in python_fixtures(&targets) {
            let out = tempfile::tempdir().unwrap();
            write_python(&migration, out.path());
            let files: Vec<String> = python_files(&migration).map(|f| f.path.clone()).collect();
            let compiled = Command::new(python)
                .args(["-m", "py_compile"])
                .args(&files)
                .current_dir(out.path())
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .output()
                .unwrap();
            assert!(
                compiled.status.success(),
                "{name} ({targets:?}) does not byte-compile:\n{}",
                String::from_utf8_lossy(&compiled.stderr)
            );
        }
    }
}
