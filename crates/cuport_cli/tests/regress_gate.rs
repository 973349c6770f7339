//! Issue 15, the gate: a case whose legs could not all run here is
//! INCOMPLETE (exit 1) unless skips are allowed, and a run that compared
//! nothing never passes, `--allow-skip` or not.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

mod regress_common;
use regress_common::{case, write};

/// Two backends this machine cannot run: no NVIDIA driver, no HIP runtime.
const ALL_LEGS_SKIP: &str = r#"
[[case]]
name = "gemm-cuda-vs-hip"
backends = ["cuda", "hip"]
[case.op]
kind = "gemm"
m = 8
n = 8
k = 8
"#;

/// `cpu` is always there; `cuda` is not on a machine without a driver.
const CPU_VS_CUDA: &str = r#"
[defaults]
backends = ["cpu", "cuda"]
ALLOW

[[case]]
name = "add-cpu-vs-cuda"
CASE_ALLOW
[case.op]
kind = "add"
len = 64
"#;

fn cpu_vs_cuda(defaults: &str, case: &str) -> String {
    CPU_VS_CUDA
        .replace("CASE_ALLOW", case)
        .replace("ALLOW", defaults)
}

fn no_gpu_here() -> bool {
    !Path::new("/proc/driver/nvidia/version").exists()
}

/// `cuport regress run ARGS`: exit status, stdout, stderr.
fn run(args: &[&str], files: &[&Path]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("cuport")
        .unwrap()
        .env("NO_COLOR", "1")
        .args(["regress", "run"])
        .args(args)
        .args(files)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: no report written: {e}", path.display()))
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: no report written: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn issue_15_a_run_whose_legs_all_skipped_does_not_pass() {
    if !no_gpu_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = write(dir.path(), "skip.toml", ALL_LEGS_SKIP);
    let report = dir.path().join("report.json");
    let (code, stdout, stderr) = run(&["--json", report.to_str().unwrap()], &[&cases]);
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(!stdout.contains("PASS"), "{stdout}");
    assert!(stdout.contains("NOTHING COMPARED: 1 cases"), "{stdout}");
    let report = json(&report);
    assert_eq!(report["summary"]["verdict"], "nothing_compared");
    assert_eq!(case(&report, "gemm-cuda-vs-hip")["outcome"], "incomplete");
}

#[test]
fn allow_skip_makes_skips_warnings_but_nothing_compared_still_fails() {
    if !no_gpu_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = write(dir.path(), "skip.toml", ALL_LEGS_SKIP);
    let (report, junit) = (dir.path().join("r.json"), dir.path().join("j.xml"));
    let (code, stdout, stderr) = run(
        &[
            "--allow-skip",
            "--json",
            report.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
        &[&cases],
    );
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("NOTHING COMPARED: 1 cases, 3 checks (3 skipped); 1 case with skipped legs (allowed), 1 case compared nothing"), "{stdout}");
    assert!(
        stderr.contains("cannot pass, even with --allow-skip"),
        "{stderr}"
    );
    let report = json(&report);
    let case = case(&report, "gemm-cuda-vs-hip");
    assert_eq!(case["outcome"], "skipped");
    let compared = &case["checks"][2];
    assert_eq!(compared["name"], "compared");
    assert_eq!(compared["outcome"], "skipped");
    assert!(compared["message"]
        .as_str()
        .unwrap()
        .contains("skips are allowed (--allow-skip)"));
    let xml = read(&junit);
    assert!(
        xml.contains("<testcase name=\"verdict\" classname=\"cuport-regress\""),
        "{xml}"
    );
    assert!(xml.contains("NOTHING COMPARED"), "{xml}");
}

#[test]
fn a_skipped_candidate_makes_its_case_incomplete_until_skips_are_allowed() {
    if !no_gpu_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let strict = write(dir.path(), "strict.toml", &cpu_vs_cuda("", ""));
    let (md, junit) = (dir.path().join("s.md"), dir.path().join("j.xml"));
    let (code, stdout, _) = run(
        &[
            "--markdown",
            md.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
        &[&strict],
    );
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("INCOMPLETE: 1 cases"), "{stdout}");
    assert!(
        stdout.contains("1 of 2 legs did not run here, so this case's comparison is missing (")
            && stdout.contains("strict.toml:6): leg `cuda`: backend `cuda` is not available"),
        "{stdout}"
    );
    let summary = read(&md);
    assert!(
        summary.starts_with("# cuport regress: INCOMPLETE"),
        "{summary}"
    );
    assert!(
        summary.contains("<details><summary>add-cpu-vs-cuda / compared: INCOMPLETE</summary>"),
        "{summary}"
    );
    let xml = read(&junit);
    assert!(
        xml.contains("<testcase name=\"compared\" classname=\"add-cpu-vs-cuda\""),
        "{xml}"
    );
    assert!(
        xml.contains("<failure message=\"1 of 2 legs did not run here"),
        "{xml}"
    );

    let (code, stdout, _) = run(&["--allow-skip"], &[&strict]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "PASS: 1 cases, 4 checks (2 pass, 2 skipped); 1 case with skipped legs (allowed)"
        ),
        "{stdout}"
    );

    let in_defaults = write(
        dir.path(),
        "defaults.toml",
        &cpu_vs_cuda("allow_skip = true", ""),
    );
    let (code, stdout, _) = run(&[], &[&in_defaults]);
    assert_eq!(code, Some(0), "{stdout}");
    let overridden = write(
        dir.path(),
        "case.toml",
        &cpu_vs_cuda("allow_skip = true", "allow_skip = false"),
    );
    let (code, stdout, _) = run(&[], &[&overridden]);
    assert_eq!(code, Some(1), "{stdout}");
    let per_case = write(
        dir.path(),
        "per-case.toml",
        &cpu_vs_cuda("", "allow_skip = true"),
    );
    let (code, stdout, _) = run(&["--verbose"], &[&per_case]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("skips are allowed (allow_skip = true in this case, ")
            && stdout.contains("per-case.toml:6)"),
        "{stdout}"
    );
}
