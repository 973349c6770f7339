//! `cuport scan` as a user runs it: the real binary, real fixtures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn cuport() -> Command {
    let mut cmd = Command::cargo_bin("cuport").unwrap();
    cmd.env_remove("NO_COLOR").env("CLICOLOR", "0");
    cmd
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn text_summary_of_the_bundled_fixtures() {
    let output = cuport()
        .current_dir(workspace_root())
        .args(["scan", "fixtures"])
        .output()
        .unwrap();
    assert!(output.status.success());
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

#[test]
fn json_lists_every_site_with_a_version() {
    let output = cuport()
        .current_dir(workspace_root())
        .args(["scan", "--format", "json", "fixtures"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["format"], "cuport-scan");
    assert_eq!(doc["version"], 1);
    let sites: usize = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["sites"].as_array().unwrap().len())
        .sum();
    assert_eq!(doc["summary"]["sites"], sites);
    assert!(sites > 400);
}

#[test]
fn missing_root_exits_2_and_names_the_path() {
    cuport()
        .args(["scan", "no/such/dir"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/dir"));
}

#[test]
fn usage_error_exits_2() {
    cuport()
        .args(["scan", "--format", "yaml", "."])
        .assert()
        .code(2);
}

#[test]
fn skipped_files_are_warnings_on_stderr_and_scan_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bin.cu"), [1u8, 0, 2]).unwrap();
    std::fs::write(dir.path().join("ok.cu"), "cudaFree(p);").unwrap();
    cuport()
        .arg("scan")
        .arg(dir.path())
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "warning: bin.cu: skipped: binary file",
        ))
        .stdout(predicate::str::contains("1 CUDA touchpoints in 1 files"));
    cuport()
        .arg("--quiet")
        .arg("scan")
        .arg(dir.path())
        .assert()
        .success()
        .stderr("");
}

#[test]
fn colour_only_when_asked_and_never_with_no_color() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ok.cu"), "cudaFree(p);").unwrap();
    let coloured = cuport()
        .args(["--color", "always", "scan"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&coloured.stdout).contains("\u{1b}["));
    let piped = cuport()
        .arg("scan")
        .arg(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&piped.stdout).contains("\u{1b}["));
}

#[test]
fn help_has_examples_and_completions_work() {
    cuport()
        .args(["scan", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:"));
    cuport()
        .args(["completions", "bash"])
        .assert()
        .success()
        .stdout(predicate::str::contains("cuport"));
    cuport().args(["completions", "zsh"]).assert().success();
}
