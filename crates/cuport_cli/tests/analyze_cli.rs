//! `cuport analyze --to ascend` as a user runs it: the real binary on the
//! bundled PyTorch fixtures, against the embedded torch_npu support lists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn cuport() -> Command {
    let mut cmd = Command::cargo_bin("cuport").unwrap();
    cmd.env_remove("NO_COLOR").env("CLICOLOR", "0");
    cmd
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
}

/// `cuport analyze FIXTURE ARGS...`, expected to succeed: its stdout.
fn analyze(fixture_name: &str, args: &[&std::ffi::OsStr]) -> Vec<u8> {
    let output = cuport()
        .arg("analyze")
        .arg(fixture(fixture_name))
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// `cuport analyze FIXTURE --format json ARGS...`.
fn analyze_json(fixture_name: &str, args: &[&str]) -> serde_json::Value {
    let mut all: Vec<&std::ffi::OsStr> = vec!["--format".as_ref(), "json".as_ref()];
    all.extend(args.iter().map(|a| std::ffi::OsStr::new(*a)));
    serde_json::from_slice(&analyze(fixture_name, &all)).unwrap()
}

fn json(args: &[&str]) -> serde_json::Value {
    analyze_json("pytorch_train", &[&["--to", "ascend"], args].concat())
}

/// `cuport analyze FIXTURE ARGS...` expected to stop with a usage error
/// whose message contains `expected`.
fn usage_error(fixture_name: &str, args: &[&str], expected: &[&str]) {
    let mut assert = cuport()
        .arg("analyze")
        .arg(fixture(fixture_name))
        .args(args)
        .assert()
        .code(2);
    for text in expected {
        assert = assert.stderr(predicate::str::contains(*text));
    }
}

fn status_of<'v>(report: &'v serde_json::Value, api: &str) -> Option<&'v str> {
    report["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["api"] == api)
        .and_then(|r| r["status"].as_str())
}

#[test]
fn every_resolved_torch_api_gets_a_status_from_the_lists() {
    let report = json(&[]);
    assert_eq!(report["format"], "cuport-api-support");
    assert_eq!(report["chip"], "A2");
    let records = report["records"].as_array().unwrap();
    assert!(records.len() > 20, "{}", records.len());
    for record in records {
        let status = record["status"].as_str().unwrap();
        assert!(
            ["supported", "restricted", "unsupported", "unknown"].contains(&status),
            "{record}"
        );
        assert!(record["line"].as_u64().unwrap() > 0);
    }
    // Through `import torch.nn as nn` and on a tensor made by torch.
    assert!(status_of(&report, "torch.nn.Linear").is_some());
    assert!(records
        .iter()
        .any(|r| r["api"].as_str().unwrap().starts_with("torch.Tensor.")));
    // A CUDA API the lists do not have, with what `cuport migrate` does to it.
    let empty_cache = records
        .iter()
        .find(|r| r["api"] == "torch.cuda.empty_cache")
        .unwrap();
    assert_eq!(empty_cache["status"], "unknown");
    assert!(empty_cache["note"]
        .as_str()
        .unwrap()
        .contains("torch.npu.empty_cache"));
}

#[test]
fn the_chip_and_version_select_the_list() {
    // torch.nn.Linear is listed for A2 and A3 but not for 950DT.
    let a2 = json(&["--chip", "A2"]);
    let dt = json(&["--chip", "950dt"]);
    assert_eq!(dt["chip"], "950DT");
    assert_eq!(dt["adapter"], "torch_npu");
    assert_ne!(
        status_of(&a2, "torch.nn.Linear"),
        status_of(&dt, "torch.nn.Linear")
    );
    let old = json(&["--torch-npu", "2.7.1"]);
    assert_eq!(old["release"], "2.7.1");
}

#[test]
fn text_csv_and_report_files() {
    cuport()
        .arg("analyze")
        .arg(fixture("pytorch_train"))
        .args(["--to", "ascend"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "PyTorch API support on ascend A2, torch_npu",
        ))
        .stdout(predicate::str::contains("method calls not resolved"));
    let dir = tempfile::tempdir().unwrap();
    let output = cuport()
        .arg("analyze")
        .arg(fixture("pytorch_ddp"))
        .args(["--to", "ascend", "--format", "csv", "--report"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success());
    let csv = String::from_utf8(output.stdout).unwrap();
    assert!(
        csv.starts_with("file,line,column,api,status,versions,chips,note,source\n"),
        "{csv}"
    );
    assert!(csv.contains("train_ddp.py,"), "{csv}");
    let written = std::fs::read_to_string(dir.path().join("api_support.csv")).unwrap();
    assert_eq!(written, csv);
    assert!(dir.path().join("api_support.json").is_file());
}

#[test]
fn unknown_versions_and_chips_are_usage_errors_that_list_the_known_ones() {
    usage_error(
        "pytorch_train",
        &["--to", "ascend", "--torch-npu", "1.0.0"],
        &["2.13.0", "--torch-npu"],
    );
    usage_error(
        "pytorch_train",
        &["--to", "ascend", "--chip", "H100"],
        &["A2"],
    );
}

#[test]
fn migrate_report_for_ascend_includes_the_analysis() {
    let dir = tempfile::tempdir().unwrap();
    for (target, expected) in [("ascend", true), ("mlu", true), ("hip", false)] {
        let report = dir.path().join(target);
        cuport()
            .arg("migrate")
            .arg(fixture("pytorch_ddp"))
            .args(["--to", target, "--report"])
            .arg(&report)
            .assert()
            .success();
        assert_eq!(
            report.join("api_support.csv").is_file(),
            expected,
            "{target}"
        );
        assert!(report.join("report.json").is_file());
        let page = std::fs::read_to_string(report.join("report.html")).unwrap();
        assert_eq!(
            page.contains("<section id=\"api-support\">"),
            expected,
            "{target}: report.html has the API support section"
        );
    }
}

/// `json(...)` for another fixture and target.
fn json_of(fixture_name: &str, target: &str) -> serde_json::Value {
    analyze_json(fixture_name, &["--to", target])
}

/// `cuport analyze FIXTURE --to ascend --report DIR`: DIR and stdout.
fn analyze_report(fixture_name: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--to".as_ref(),
        "ascend".as_ref(),
        "--report".as_ref(),
        dir.path().as_os_str(),
    ];
    let stdout = analyze(fixture_name, &args);
    (dir, String::from_utf8(stdout).unwrap())
}

fn rows<'v>(report: &'v serde_json::Value, table: &str) -> &'v Vec<serde_json::Value> {
    report[table].as_array().unwrap()
}

#[test]
fn cuda_only_packages_are_listed_with_the_targets_alternative() {
    let report = json_of("pytorch_train", "ascend");
    let packages = rows(&report, "third_party");
    let fused_adam = packages
        .iter()
        .find(|r| r["used"] == "apex.optimizers.FusedAdam" && r["line"] == 118)
        .unwrap_or_else(|| panic!("the FusedAdam call is listed: {packages:#?}"));
    assert_eq!(fused_adam["package"], "apex");
    assert_eq!(fused_adam["alternative"], "torch_npu.optim.NpuFusedAdamW");
    assert!(fused_adam["source"]
        .as_str()
        .unwrap()
        .starts_with("https://"));
    assert!(packages
        .iter()
        .any(|r| r["package"] == "triton" && r["line"] == 33));
    // Every row of every table names its source.
    for table in ["third_party", "advice"] {
        for row in rows(&report, table) {
            assert!(!row["source"].as_str().unwrap().is_empty(), "{row}");
        }
    }
    let mlu = json_of("pytorch_train", "mlu");
    assert!(rows(&mlu, "third_party")
        .iter()
        .any(|r| r["package"] == "apex"));
}

#[test]
fn advice_is_triggered_by_api_uses_and_keyword_arguments() {
    let report = json_of("pytorch_train", "ascend");
    let advice = rows(&report, "advice");
    let triggered = |id: &str, trigger: &str| {
        advice
            .iter()
            .any(|r| r["id"] == id && r["trigger"].as_str().unwrap() == trigger)
    };
    assert!(triggered("fp64", "torch.float64"), "{advice:#?}");
    assert!(triggered(
        "tf32-hf32",
        "torch.backends.cuda.matmul.allow_tf32"
    ));
    assert!(triggered("pin-memory", "torch.Tensor.pin_memory"));
    let ddp = json_of("pytorch_ddp", "ascend");
    let advice = rows(&ddp, "advice");
    let non_blocking = advice
        .iter()
        .find(|r| r["id"] == "non-blocking")
        .unwrap_or_else(|| panic!("{advice:#?}"));
    assert_eq!(non_blocking["trigger"], "non_blocking=True");
    assert_eq!(non_blocking["file"], "bom_helpers.py");
    // A constant found for the advice is no row of the support table
    // unless a list has it.
    let records = rows(&report, "records");
    assert!(records
        .iter()
        .all(|r| r["api"] != "torch.float64"
            || status_of(&report, "torch.float64") != Some("unknown")));
}

#[test]
fn cuda_extension_kernels_link_to_their_ascend_skeletons() {
    let (dir, stdout) = analyze_report("torch_extension");
    assert!(
        stdout.contains("2 kernels need an implementation on ascend"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(dir.path().join("custom_ops.csv")).unwrap();
    assert!(csv.starts_with(
        "file,line,extension,builder,source,kernel,kernel_line,skeleton,operator,note\n"
    ));
    assert!(
        csv.contains("setup.py,37,fused_ops._C,torch.utils.cpp_extension.CUDAExtension,ext_kernel.cu,scaled_add_kernel,25,ext_kernel.cu.ascend/scaled_add_kernel.cpp,"),
        "{csv}"
    );
    assert!(csv.contains(
        "jit_load.py,46,fused_ops_jit,torch.utils.cpp_extension.load,ext_kernel.cu,relu_kernel,"
    ));
    assert!(csv.contains("inline_square") && csv.contains("load_inline cuda_sources"));
    // The skeleton named is the one migrate writes.
    let out = dir.path().join("out");
    cuport()
        .arg("migrate")
        .arg(fixture("torch_extension"))
        .args(["--to", "ascend", "--ascend-kernel-skeletons", "--out"])
        .arg(&out)
        .assert()
        .code(predicate::in_iter([0, 1]));
    assert!(out
        .join("ext_kernel.cu.ascend/scaled_add_kernel.cpp")
        .is_file());
    // On MLU no skeleton is named, and the note says why.
    let mlu = json_of("torch_extension", "mlu");
    let ops = rows(&mlu, "custom_ops");
    let kernel = ops.iter().find(|r| r["kernel"] == "relu_kernel").unwrap();
    assert_eq!(kernel["skeleton"], "");
    assert!(kernel["note"].as_str().unwrap().contains("by hand"));
    for name in ["third_party.csv", "advice.csv", "api_support.html"] {
        assert!(dir.path().join(name).is_file(), "{name}");
    }
}

#[test]
fn the_html_page_filters_by_status_and_file() {
    let (dir, _) = analyze_report("pytorch_train");
    let page = std::fs::read_to_string(dir.path().join("api_support.html")).unwrap();
    for needle in [
        "<select id=\"as-status\">",
        "<option value=\"restricted\">",
        "<select id=\"as-file\">",
        "<option value=\"train.py\">",
        "<tr data-status=\"restricted\" data-file=\"train.py\">",
        "<table id=\"as-packages\">",
        "<table id=\"as-advice\">",
    ] {
        assert!(page.contains(needle), "{needle}");
    }
}

#[test]
fn torch_mlu_lists_answer_for_mlu() {
    let report = analyze_json("pytorch_train", &["--to", "mlu", "--torch-mlu", "2.1"]);
    assert_eq!(report["adapter"], "torch_mlu");
    assert_eq!(report["release"], "2.1");
    assert_eq!(report["chip"], "MLU");
    assert!(status_of(&report, "torch.nn.Linear").is_some());
    usage_error(
        "pytorch_train",
        &["--to", "mlu", "--torch-npu", "2.13.0"],
        &["--torch-mlu"],
    );
}

/// A fixture of these tests only (`tests/analyze/NAME`).
fn analyze_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/analyze")
        .join(name)
}

/// `cuport analyze PATH ARGS...`, expected to succeed: its stdout.
fn analyze_path(path: &Path, args: &[&str]) -> String {
    let output = cuport()
        .arg("analyze")
        .arg(path)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn a_cublas_project_is_told_both_ascend_blas_routes() {
    // A C++/CUDA project with no Python at all.
    let report: serde_json::Value = serde_json::from_str(&analyze_path(
        &fixture("cublas_gemm"),
        &["--to", "ascend", "--format", "json"],
    ))
    .unwrap();
    let advice = rows(&report, "advice");
    assert_eq!(advice.len(), 1, "once per file: {advice:#?}");
    let row = &advice[0];
    assert_eq!(row["id"], "blas-route");
    assert_eq!(row["kind"], "porting");
    assert_eq!(row["file"], "gemm.cu");
    assert_eq!(row["trigger"], "cublas_v2.h");
    let text = row["advice"].as_str().unwrap();
    for needle in [
        "--ascend-blas aclnn",
        "--ascend-blas aclblas",
        "ops-blas",
        "cann_ops_blas.h",
        "unconfirmed",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    assert!(row["source"]
        .as_str()
        .unwrap()
        .contains("include/cann_ops_blas.h"));
    assert_eq!(
        row["operators"],
        "aclnnMm; aclnnInplaceAddmm; aclnnBatchMatMul"
    );
    assert!(row["operators_source"]
        .as_str()
        .unwrap()
        .contains("cann/ops-nn"));
    // torch_mlu's advice names no BLAS route.
    let mlu: serde_json::Value = serde_json::from_str(&analyze_path(
        &fixture("cublas_gemm"),
        &["--to", "mlu", "--format", "json"],
    ))
    .unwrap();
    assert!(rows(&mlu, "advice").is_empty());
}

#[test]
fn alternatives_and_advice_name_the_aclnn_operators_behind_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = analyze_fixture("blas_ext");
    let report_dir = dir.path().to_str().unwrap();
    let stdout = analyze_path(&path, &["--to", "ascend", "--report", report_dir]);
    let third_party = std::fs::read_to_string(dir.path().join("third_party.csv")).unwrap();
    assert!(third_party.starts_with(
        "file,line,column,package,pip,used,status,alternative,operators,note,source,operators_source\n"
    ));
    let advice = std::fs::read_to_string(dir.path().join("advice.csv")).unwrap();
    assert!(advice.starts_with(
        "file,line,column,id,kind,trigger,advice,operators,source,operators_source\n"
    ));
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("api_support.json")).unwrap(),
    )
    .unwrap();
    let package = |used: &str| {
        rows(&report, "third_party")
            .iter()
            .find(|r| r["used"] == used)
            .unwrap_or_else(|| panic!("{used}: {report:#}"))
            .clone()
    };
    let flash = package("flash_attn.flash_attn_func");
    assert_eq!(flash["operators"], "aclnnFlashAttentionScore");
    assert!(flash["operators_source"]
        .as_str()
        .unwrap()
        .contains("Ascend/op-plugin/blob/09024aa99e234be0456a41f02585f060389d488f/op_plugin/ops/opapi/FlashAttentionKernelNpuOpApi.cpp"));
    assert_eq!(
        package("apex.normalization.FusedRMSNorm")["operators"],
        "aclnnRmsNorm"
    );
    let advice_row = |id: &str| {
        rows(&report, "advice")
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{id}: {report:#}"))
            .clone()
    };
    assert_eq!(advice_row("sdpa")["operators"], "aclnnFlashAttentionScore");
    assert_eq!(
        advice_row("fused-optimizers")["operators"],
        "aclnnApplyAdamWV2"
    );
    // The extension's own CUDA source calls cuBLAS: the BLAS routes too.
    let blas = advice_row("blas-route");
    assert_eq!(blas["file"], "gemm.cu");
    let page = std::fs::read_to_string(dir.path().join("api_support.html")).unwrap();
    assert!(page.contains("<option value=\"porting\">porting</option>"));
    assert!(page.contains("<th>operators</th>"));
    insta::assert_snapshot!(stdout);
}
