//! `cuport regress run` on op cases with the `cpu` backend, the f64 oracle,
//! and the test-only perturbation seam (`CUPORT_REGRESS_TEST_PERTURB`).
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;

use assert_cmd::Command;
use predicates::str::contains;
use serde_json::Value;

mod regress_common;
use regress_common::write;

const TWO_CPU_LEGS: &str = r#"
[defaults]
backends = ["cpu", "cpu"]
[defaults.perf]
min_samples = 10
max_samples = 12

[[case]]
name = "softmax"
[case.op]
kind = "softmax"
rows = 16
cols = 64

[[case]]
name = "gemm"
[case.op]
kind = "gemm"
m = 24
n = 24
k = 24
trans_a = true
beta = 0.5
"#;

fn cuport() -> Command {
    Command::cargo_bin("cuport").unwrap()
}

/// `regress/ops.toml` names `cuda` next to `cpu`: without an NVIDIA
/// driver its cases cannot compare their legs, so the run is INCOMPLETE
/// (exit 1) unless skips are allowed; with a GPU it passes as it is.
#[test]
fn shipped_examples_pass_here_with_skips_allowed() {
    let regress = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../regress");
    cuport()
        .args(["regress", "run", "--allow-skip"])
        .arg(&regress)
        .assert()
        .success()
        .stdout(contains("PASS"));
    if Path::new("/proc/driver/nvidia/version").exists() {
        return;
    }
    cuport()
        .args(["regress", "run"])
        .arg(&regress)
        .assert()
        .code(1)
        .stdout(contains("INCOMPLETE: 10 cases"))
        .stdout(contains("9 cases with skipped legs"));
}

#[test]
fn clean_cpu_legs_pass_and_a_perturbed_candidate_fails_the_ratio_policy() {
    let dir = tempfile::tempdir().unwrap();
    let cases = write(dir.path(), "ops.toml", TWO_CPU_LEGS);
    cuport()
        .args(["regress", "run"])
        .arg(&cases)
        .assert()
        .success();
    let out = cuport()
        .args(["regress", "run", "--format", "json"])
        .arg(&cases)
        .env("CUPORT_REGRESS_TEST_PERTURB", "1:rel=1e-2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    for case in report["cases"].as_array().unwrap() {
        let checks = case["checks"].as_array().unwrap();
        let by_name = |n: &str| checks.iter().find(|c| c["name"] == n).unwrap();
        assert_eq!(by_name("accuracy:cpu#0")["outcome"], "pass");
        let bad = by_name("accuracy:cpu#1");
        assert_eq!(bad["outcome"], "fail");
        assert!(
            bad["message"].as_str().unwrap().starts_with("max_abs"),
            "{bad}"
        );
    }
}

#[test]
fn a_single_leg_is_held_to_torch_tolerances() {
    let dir = tempfile::tempdir().unwrap();
    let cases = write(
        dir.path(),
        "one.toml",
        &TWO_CPU_LEGS.replace("[\"cpu\", \"cpu\"]", "[\"cpu\"]"),
    );
    cuport()
        .args(["regress", "run"])
        .arg(&cases)
        .env("CUPORT_REGRESS_TEST_PERTURB", "rel=1e-3")
        .assert()
        .code(1)
        .stdout(contains("mismatched elements"));
}

#[test]
fn a_slowed_leg_fails_against_its_baseline_and_reports_render() {
    let dir = tempfile::tempdir().unwrap();
    let cases = write(
        dir.path(),
        "one.toml",
        &TWO_CPU_LEGS.replace("[\"cpu\", \"cpu\"]", "[\"cpu\"]"),
    );
    let base = dir.path().join("base.json");
    cuport()
        .args(["regress", "run", "--filter", "gemm", "--save-baseline"])
        .arg(&base)
        .arg(&cases)
        .assert()
        .success();
    let (md, html) = (
        dir.path().join("summary.md"),
        dir.path().join("report.html"),
    );
    cuport()
        .args(["regress", "run", "--filter", "gemm", "--baseline"])
        .arg(&base)
        .arg("--markdown")
        .arg(&md)
        .arg("--html")
        .arg(&html)
        .arg(&cases)
        .env("CUPORT_REGRESS_TEST_PERTURB", "slow=2")
        .assert()
        .code(1)
        .stdout(contains("SLOWER vs baseline"));
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .contains("# cuport regress: REGRESSION"));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
}

#[test]
fn case_file_errors_name_the_file_and_field_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.toml",
        "[[case]]\nname = \"x\"\n[case.op]\nkind = \"softmax\"\nrows = 2\ncols = 2\naxis = 0\n",
    );
    cuport()
        .args(["regress", "run"])
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(contains("bad.toml"))
        .stderr(contains("axis"));
}
