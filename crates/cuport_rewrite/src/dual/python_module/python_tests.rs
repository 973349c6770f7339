//! The generated modules under a real `python3`: byte-compiled for every
//! target set, and their selection logic exercised by test_modules.py
//! through the environment and import-probe seams. Skipped (loudly) when
//! there is no python3, except in CI (`CI=true`), where that fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
use std::path::Path;
use std::process::{Command, Output};

use cuport_model::Target;
use cuport_rules::RuleSet;

use super::{build_module, device_module};

const TEST_MODULES: &str = include_str!("test_modules.py");

fn python() -> Option<&'static str> {
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some("python3");
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !in_ci,
        "python3 is required in CI to check the generated Python modules"
    );
    eprintln!("SKIPPED: python3 not found; the generated Python modules were not checked");
    None
}

fn run(python: &str, dir: &Path, args: &[&str]) -> Output {
    Command::new(python)
        .args(args)
        .current_dir(dir)
        .env_remove("CUPORT_DEVICE")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs")
}

fn assert_ok(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn generated_modules_byte_compile_for_every_target_set() {
    let Some(python) = python() else { return };
    let rules = RuleSet::builtin().unwrap();
    let mut sets: Vec<Vec<Target>> = Target::ALL.iter().map(|&t| vec![t]).collect();
    sets.push(Target::ALL.to_vec());
    for targets in sets {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("cuport_device.py"),
            device_module(&rules, &targets),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("cuport_build.py"),
            build_module(&rules, &targets),
        )
        .unwrap();
        let compiled = run(
            python,
            dir.path(),
            &["-m", "py_compile", "cuport_device.py", "cuport_build.py"],
        );
        assert_ok(&compiled, &format!("py_compile for {targets:?}"));
    }
}

#[test]
fn generated_modules_select_backends_through_their_seams() {
    let Some(python) = python() else { return };
    let rules = RuleSet::builtin().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cuport_device.py"),
        device_module(&rules, &Target::ALL),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("cuport_build.py"),
        build_module(&rules, &Target::ALL),
    )
    .unwrap();
    std::fs::write(dir.path().join("test_modules.py"), TEST_MODULES).unwrap();
    let tested = run(
        python,
        dir.path(),
        &["-m", "unittest", "-v", "test_modules"],
    );
    assert_ok(&tested, "test_modules.py");
    let report = String::from_utf8_lossy(&tested.stderr);
    let ran = report.lines().find_map(|l| {
        l.strip_prefix("Ran ")?
            .split(' ')
            .next()?
            .parse::<usize>()
            .ok()
    });
    assert!(
        ran.is_some_and(|n| n >= 15),
        "unittest ran too few tests:\n{report}"
    );
}
