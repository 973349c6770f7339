//! Kernel rules for Cambricon MLU (issue 27 item 7), run as a user runs
//! them: `cuport kernels --to mlu` proposes CNNL calls marked unconfirmed,
//! the proposals pass `--check`, `--verify` is refused (no reference forms),
//! and `migrate --to mlu --rules` names the CNNL calls in a CP0038
//! diagnostic on each mapped kernel's line without generating code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::{copy_dir, migrate};

fn run(args: &[&str]) -> (String, String, Option<i32>) {
    let out = Command::cargo_bin("cuport")
        .expect("binary builds")
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

fn model() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kernels/model.cu")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn proposes_cnnl_calls_each_marked_unconfirmed() {
    let path = model();
    let (text, err, code) = run(&["kernels", &path, "--to", "mlu"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("4 kernels, 3 classified, 2 with a proposed rule"),
        "{err}"
    );
    assert!(text.contains("cnnlOpTensor") && text.contains("cnnlActivationForward"));
    let text = text.replace(&path, "model.cu");
    insta::assert_snapshot!(text);
}

#[test]
fn the_json_names_each_operator_status_and_the_proposals_pass_the_check() {
    let (json, err, code) = run(&["kernels", &model(), "--to", "mlu", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let kernels: serde_json::Value = serde_json::from_str(&json).unwrap();
    let residual = &kernels.as_array().unwrap()[0];
    let status = residual["unconfirmed"][0].as_str().unwrap();
    assert!(
        status.starts_with("cnnlOpTensor (cnnl.h): unconfirmed: not checked against cnnl.h"),
        "{status}"
    );
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    let rules = rules.to_str().unwrap();
    let (_, err, code) = run(&["kernels", &model(), "--to", "mlu", "--out", rules]);
    assert_eq!(code, Some(0), "{err}");
    let (_, err, code) = run(&["kernels", "--to", "mlu", "--check", rules]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn verify_is_refused_for_unconfirmed_operators() {
    let (_, err, code) = run(&["kernels", &model(), "--to", "mlu", "--verify"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("have none (and are unconfirmed)"), "{err}");
}

/// llm.c-shaped kernels and their launches (the rewrite crate's fixture).
fn llm_tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuport_rewrite/tests/operator_kernels/llm"),
        &tree,
    );
    std::fs::remove_file(tree.join("kernels.toml")).unwrap();
    (dir, tree)
}

#[test]
fn migrate_names_the_cnnl_calls_on_each_mapped_kernel_and_writes_no_helper() {
    let (dir, tree) = llm_tree();
    let rules = dir.path().join("mlu.toml");
    let ops = tree.join("ops.cu");
    let (_, err, code) = run(&[
        "kernels",
        ops.to_str().unwrap(),
        "--to",
        "mlu",
        "--out",
        rules.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let out = dir.path().join("out");
    let run = migrate(
        &tree,
        &[
            "--to",
            "mlu",
            "--rules",
            rules.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--report",
            dir.path().join("report").to_str().unwrap(),
        ],
    )
    .expect_code(0);
    // report.json: a kernel the rule maps stays a manual port (skeleton),
    // and its record names the CNNL calls.
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("report/report.json")).unwrap(),
    )
    .unwrap();
    let residual = report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "residual_forward_kernel")
        .unwrap();
    assert_eq!(residual["disposition"], "skeleton", "{residual}");
    assert_eq!(residual["operators"][0], "cnnlOpTensor", "{residual}");
    let lines: Vec<String> = run
        .stdout
        .lines()
        .filter(|l| l.contains("CP0038") || l.contains("CP0037"))
        .map(|l| l.replace(tree.to_str().unwrap(), "tree"))
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
    assert!(!out.join("cuport_kernel_ops.h").exists());
    let ported = std::fs::read_to_string(out.join("ops.mlu"))
        .or_else(|_| std::fs::read_to_string(out.join("ops.cu")))
        .unwrap();
    assert!(
        ported.contains("residual_forward_kernel<<<"),
        "launches stay"
    );
}
