//! `cuport migrate --to ascend --rules FILE` with `[[kernel]]` rules, run as
//! a user runs it: the mapped kernels' launches become operator calls, the
//! reports list every kernel with its disposition, operators and evidence,
//! a refuted rule is not applied, and a broken rule stops the run before
//! anything is written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{copy_dir, migrate};

/// The sources and rules the rewrite crate's operator-kernel tests use.
fn fixture() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuport_rewrite/tests/operator_kernels/llm"),
        &tree,
    );
    let rules = dir.path().join("kernels.toml");
    std::fs::rename(tree.join("kernels.toml"), &rules).unwrap();
    (dir, tree, rules)
}

fn report_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

#[test]
fn rules_replace_the_mapped_kernels_and_the_reports_list_every_kernel() {
    let (dir, tree, rules) = fixture();
    let out = dir.path().join("out");
    let report = dir.path().join("report");
    migrate(
        &tree,
        &[
            "--to",
            "ascend",
            "--rules",
            rules.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ],
    )
    .expect_code(0)
    .assert_stdout_contains("CP0036");
    assert!(out.join("cuport_kernel_ops.h").is_file());
    let ported = std::fs::read_to_string(out.join("ops.cu")).unwrap();
    assert!(ported.contains("cuport_kernel_gelu_forward_kernel(stream, out, inp, N);"));
    let kernels = report_json(&report)["kernels"].as_array().unwrap().clone();
    let summary: Vec<(String, String, String)> = kernels
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap().to_owned(),
                k["disposition"].as_str().unwrap().to_owned(),
                k["operators"]
                    .as_array()
                    .map(|ops| {
                        ops.iter()
                            .filter_map(|o| o.as_str())
                            .collect::<Vec<_>>()
                            .join("+")
                    })
                    .unwrap_or_default(),
            )
        })
        .collect();
    let expected = [
        ("residual_forward_kernel", "operator", "aclnnAdd"),
        ("gelu_forward_kernel", "operator", "aclnnGeluV2"),
        ("softmax_rows_kernel", "operator", "aclnnSoftmax"),
        ("scale_kernel", "skeleton", ""),
    ];
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect();
    assert_eq!(summary, expected);
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(html.contains("<table id=\"kernels\">"));
    assert!(html.contains("<td>operator</td><td>aclnnGeluV2</td>"));
}

#[test]
fn a_rule_the_evidence_refuted_is_not_applied_and_says_so() {
    let (dir, tree, rules) = fixture();
    let text = std::fs::read_to_string(&rules).unwrap().replace(
        "calls = [{ operator = \"aclnnGeluV2\", args = { x = \"inp\", approximate = \"1\", y = \"out\" } }]",
        "calls = [{ operator = \"aclnnGeluV2\", args = { x = \"inp\", approximate = \"1\", y = \"out\" } }]\nevidence = { verdict = \"refuted\", cases = 4, summary = \"case `ragged` differs\" }",
    );
    std::fs::write(&rules, text).unwrap();
    let run = migrate(
        &tree,
        &["--to", "ascend", "--rules", rules.to_str().unwrap()],
    )
    .expect_code(0);
    run.assert_stdout_contains(
        "the [[kernel]] rule for `gelu_forward_kernel` was not applied: its evidence refuted it",
    );
    drop(dir);
}

#[test]
fn a_broken_kernel_rule_stops_the_run_with_its_line_and_writes_nothing() {
    let (dir, tree, rules) = fixture();
    let text = std::fs::read_to_string(&rules).unwrap().replace(
        "operator = \"aclnnSoftmax\"",
        "operator = \"aclnnSoftmaxx\"",
    );
    std::fs::write(&rules, text).unwrap();
    let out = dir.path().join("out");
    let run = migrate(
        &tree,
        &[
            "--to",
            "ascend",
            "--rules",
            rules.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    )
    .expect_code(2);
    run.assert_stderr_contains("kernels.toml:");
    run.assert_stderr_contains("no ascend operator `aclnnSoftmaxx`");
    assert!(!out.exists());
}
