//! The shipped examples under `regress/` run on a CPU-only machine: the
//! application example passes, and the op cases report the GPU backends as
//! skipped with a reason: INCOMPLETE by default, a warning with
//! `--allow-skip`.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

fn regress_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../regress")
}

fn run_json(file: &str, args: &[&str]) -> (i32, Value) {
    let out = Command::cargo_bin("cuport")
        .unwrap()
        .args(["regress", "run"])
        .arg(regress_dir().join(file))
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}; stderr:\n{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), report)
}

#[test]
fn saxpy_application_example_passes_with_both_tensors_compared() {
    let (code, report) = run_json("apps.toml", &[]);
    assert_eq!(code, 0, "{report:#}");
    let case = &report["cases"][0];
    assert_eq!(case["name"], "saxpy-app");
    let checks: Vec<&str> = case["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in ["accuracy:y", "accuracy:dot", "perf:cross:saxpy"] {
        assert!(checks.contains(&name), "{checks:?}");
    }
}

#[test]
fn gpu_cases_skip_with_a_reason_when_no_gpu_is_present() {
    if std::path::Path::new("/proc/driver/nvidia/version").exists() {
        return; // a GPU machine: regress/gpu-check.sh covers it
    }
    let (code, report) = run_json("gpu/cuda-vs-cpu.toml", &[]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["summary"]["verdict"], "incomplete");
    let (code, allowed) = run_json("gpu/cuda-vs-cpu.toml", &["--allow-skip"]);
    assert_eq!(code, 0, "{allowed:#}");
    assert_eq!(allowed["summary"]["skips_allowed"], 15);
    for case in report["cases"].as_array().unwrap() {
        assert_eq!(case["outcome"], "incomplete", "{case:#}");
        let cuda = case["legs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["backend"] == "cuda")
            .unwrap();
        assert_eq!(cuda["state"]["state"], "skipped");
        assert!(cuda["state"]["reason"]
            .as_str()
            .unwrap()
            .contains("backend `cuda` is not available"));
    }
}
