//! Issue 15, resource limits: an op case over its memory limit fails alone
//! before anything is allocated, a leg that runs out of memory fails only
//! its case, and the report is written either way.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

mod regress_common;
use regress_common::{case, write};

/// The issue's gemm between two small cases that must still pass.
const OVERSIZED: &str = r#"
[[case]]
name = "small-add"
[case.op]
kind = "add"
len = 1000

[[case]]
name = "huge-gemm"
[case.op]
kind = "gemm"
m = 100000
n = 100000
k = 100000

[[case]]
name = "small-softmax"
[case.op]
kind = "softmax"
rows = 4
cols = 64
"#;

fn cuport() -> Command {
    let mut cmd = Command::cargo_bin("cuport").unwrap();
    cmd.env("NO_COLOR", "1");
    cmd
}

/// `cuport regress run ARGS FILE --json DIR/report.json`: status, stdout,
/// stderr and the JSON report.
fn run_with_report(
    dir: &Path,
    file: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Option<i32>, String, String, Value) {
    let report = dir.join("report.json");
    let _ = std::fs::remove_file(&report);
    let out = cuport()
        .args(["regress", "run"])
        .args(args)
        .arg(file)
        .arg("--json")
        .arg(&report)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    let text = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("no report written ({e})\n{stdout}\n{stderr}"));
    (
        out.status.code(),
        stdout,
        stderr,
        serde_json::from_str(&text).unwrap(),
    )
}

fn message<'r>(case: &'r Value, check: &str) -> &'r str {
    case["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == check)
        .and_then(|c| c["message"].as_str())
        .unwrap_or_else(|| panic!("no check {check} in {case:#}"))
}

#[test]
fn issue_15_an_oversized_case_fails_alone_and_the_report_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let cases = write(dir.path(), "huge.toml", OVERSIZED);
    let (code, stdout, stderr, report) = run_with_report(dir.path(), &cases, &[], &[]);
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("REGRESSION: 3 cases"), "{stdout}");
    assert_eq!(case(&report, "small-add")["outcome"], "pass");
    assert_eq!(case(&report, "small-softmax")["outcome"], "pass");
    let huge = case(&report, "huge-gemm");
    assert_eq!(huge["outcome"], "error", "{huge:#}");
    assert!(huge["legs"].as_array().unwrap().is_empty(), "{huge:#}");
    let text = message(huge, "memory");
    for part in [
        "huge.toml:8: case `huge-gemm` needs about 856.8 GiB of host memory",
        "inputs 3.0e10 elements (111.8 GiB as f32 + 223.5 GiB as f64)",
        "(the default: 50% of this machine's",
        "Nothing was allocated and no leg ran",
        "--max-case-memory",
    ] {
        assert!(text.contains(part), "{part}\n{text}");
    }
}

#[test]
fn the_memory_limit_comes_from_the_flag_then_the_case_file() {
    let dir = tempfile::tempdir().unwrap();
    let small = OVERSIZED.replace("100000", "16");
    let cases = write(dir.path(), "small.toml", &small);
    let (code, stdout, _, report) =
        run_with_report(dir.path(), &cases, &["--max-case-memory", "1KiB"], &[]);
    assert_eq!(code, Some(1), "{stdout}");
    let text = message(case(&report, "small-add"), "memory");
    assert!(
        text.contains("over its limit of 1.0 KiB (--max-case-memory 1KiB)"),
        "{text}"
    );

    let limited = write(
        dir.path(),
        "limited.toml",
        &format!("[defaults]\nmax_case_memory = \"1KiB\"\n{small}"),
    );
    let (code, _, _, report) = run_with_report(dir.path(), &limited, &[], &[]);
    assert_eq!(code, Some(1));
    let text = message(case(&report, "huge-gemm"), "memory");
    assert!(
        text.contains("(max_case_memory = \"1KiB\" in [defaults] of "),
        "{text}"
    );
    let (code, stdout, _, _) =
        run_with_report(dir.path(), &limited, &["--max-case-memory", "50%"], &[]);
    assert_eq!(code, Some(0), "{stdout}");

    let out = cuport()
        .args(["regress", "run", "--max-case-memory", "12XB"])
        .arg(&cases)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`12XB` is not a memory size") && stderr.contains("e.g. `8GiB`"),
        "{stderr}"
    );
}

#[test]
fn a_leg_that_runs_out_of_memory_fails_only_its_case() {
    let dir = tempfile::tempdir().unwrap();
    let cases = write(
        dir.path(),
        "oom.toml",
        "[[case]]\nname = \"two-legs\"\nbackends = [\"cpu\", \"cpu\"]\n[case.op]\nkind = \"add\"\nlen = 64\n\n[[case]]\nname = \"one-leg\"\n[case.op]\nkind = \"add\"\nlen = 64\n",
    );
    // Leg #1 (only the first case has one) asks for about 4.6e18 bytes at
    // once: the allocator refuses, Rust aborts the leg (SIGABRT).
    let perturb = [("CUPORT_REGRESS_TEST_PERTURB", "1:alloc=4e18")];
    let (code, stdout, stderr, report) = run_with_report(dir.path(), &cases, &[], &perturb);
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert_eq!(case(&report, "one-leg")["outcome"], "pass");
    let two = case(&report, "two-legs");
    assert_eq!(two["outcome"], "error");
    let text = message(two, "leg:cpu#1");
    assert!(
        text.starts_with("aborted (signal 6, SIGABRT): likely out of memory"),
        "{text}"
    );
    assert!(
        text.contains("the leg ran out of memory (`memory allocation of"),
        "{text}"
    );
}
