//! `cuport kernels` end to end: proposals from kernel bodies, checked
//! before they are written, and `--check` of declared rules.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::path::Path;

use assert_cmd::Command;

fn cuport() -> Command {
    let mut cmd = Command::cargo_bin("cuport").expect("binary builds");
    cmd.env("NO_COLOR", "1");
    cmd
}

fn fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kernels/model.cu")
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> (String, String, Option<i32>) {
    let out = cuport().args(args).output().expect("runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

#[test]
fn proposes_rules_for_what_the_bodies_compute_and_says_why_not_for_the_rest() {
    let path = fixture();
    let (text, err, code) = run(&["kernels", &path, "--to", "ascend"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("4 kernels, 3 classified, 2 with a proposed rule"),
        "{err}"
    );
    let text = text.replace(&path, "model.cu");
    insta::assert_snapshot!(text);
}

#[test]
fn written_proposals_pass_the_check_and_a_broken_rule_fails_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("rules.toml");
    let rules = rules.to_str().expect("utf-8 path");
    let (_, err, code) = run(&["kernels", &fixture(), "--to", "ascend", "--out", rules]);
    assert_eq!(code, Some(0), "{err}");
    let (_, err, code) = run(&["kernels", "--to", "ascend", "--check", rules]);
    assert_eq!(code, Some(0), "{err}");
    let text = std::fs::read_to_string(rules).expect("written");
    std::fs::write(rules, text.replace("aclnnGeluV2", "aclnnGeluV9")).expect("write");
    let (_, err, code) = run(&["kernels", "--to", "ascend", "--check", rules]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no ascend operator `aclnnGeluV9`"), "{err}");
}

#[test]
fn a_target_without_operator_tables_is_an_error() {
    let (_, err, code) = run(&["kernels", &fixture(), "--to", "hip"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no operator tables for hip"), "{err}");
}

/// A reason that quotes a statement spread over lines (llm.c's
/// adamw_kernel3 calls a device function with eleven lines of arguments)
/// stays one comment line: the written file is valid TOML.
#[test]
fn the_written_file_stays_valid_when_a_reason_quotes_several_lines() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("multi.cu");
    std::fs::write(
        &source,
        "__device__ void update(float* p, const float* g, float lr) { *p -= lr * *g; }\n\
         __global__ void step_kernel(float* params, const float* grads, float lr, int n) {\n\
             int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             if (i < n) update(params + i,\n\
                               grads + i,\n\
                               lr);\n\
         }\n",
    )
    .unwrap();
    let rules = dir.path().join("rules.toml");
    let (_, err, code) = run(&[
        "kernels",
        source.to_str().unwrap(),
        "--to",
        "ascend",
        "--out",
        rules.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let text = std::fs::read_to_string(&rules).unwrap();
    assert!(text.contains("step_kernel"), "{text}");
    let (_, err, code) = run(&[
        "kernels",
        "--to",
        "ascend",
        "--check",
        rules.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}\n{text}");
}
