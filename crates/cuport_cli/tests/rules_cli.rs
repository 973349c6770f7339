//! `cuport rules` end to end.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use assert_cmd::Command;

fn cuport() -> Command {
    let mut cmd = Command::cargo_bin("cuport").expect("binary builds");
    cmd.env("NO_COLOR", "1");
    cmd
}

fn stdout(args: &[&str]) -> (String, Option<i32>) {
    let out = cuport().args(args).output().expect("runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code(),
    )
}

#[test]
fn show_prints_the_ascend_mapping_with_template_and_reference() {
    let (text, code) = stdout(&["rules", "show", "cudaMemcpy", "--to", "ascend"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!(text);
}

#[test]
fn show_of_an_unknown_name_exits_1() {
    let (_, code) = stdout(&["rules", "show", "cudaNoSuchThing"]);
    assert_eq!(code, Some(1));
}

#[test]
fn check_passes_on_builtins_and_reports_positions_in_user_files() {
    let (text, code) = stdout(&["rules", "check"]);
    assert_eq!(code, Some(0), "{text}");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "[meta]\ntarget = \"hip\"\nsource = \"t\"\ncode = \"CP9000\"\n\n[[entry]]\ncuda = \"cudaX\"\nstatus = \"renamed\"\n").expect("write");
    let (text, code) = stdout(&["rules", "check", path.to_str().expect("utf-8 path")]);
    assert_eq!(code, Some(1));
    assert!(
        text.contains("bad.toml:7:8: error[missing-field]"),
        "{text}"
    );
}

#[test]
fn stats_json_counts_hip_over_4000_names() {
    let (text, code) = stdout(&["rules", "stats", "--format", "json"]);
    assert_eq!(code, Some(0));
    let json: serde_json::Value = serde_json::from_str(&text).expect("json");
    let total = json["targets"]["hip"]["total"]["total"]
        .as_u64()
        .expect("count");
    assert!(total >= 4000, "{total}");
}

#[test]
fn matrix_md_matches_the_committed_file() {
    let (text, _) = stdout(&["rules", "matrix", "--format", "md"]);
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../mappings/MATRIX.md"
    ))
    .expect("committed");
    assert_eq!(text, committed);
}

#[test]
fn list_filters_by_target_library_and_status() {
    let (text, code) = stdout(&[
        "rules",
        "list",
        "--to",
        "ascend",
        "--library",
        "nccl",
        "--status",
        "rewrite",
    ]);
    assert_eq!(code, Some(0));
    assert!(text
        .lines()
        .all(|l| l.starts_with("ascend\tnccl\trewrite\t")));
    assert!(text.contains("ncclAllReduce\tHcclAllReduce"));
}

#[test]
fn show_with_hip_libs_roc_prints_the_rocblas_name() {
    let (text, code) = stdout(&[
        "rules",
        "show",
        "cublasSgemm_v2",
        "--to",
        "hip",
        "--hip-libs",
        "roc",
    ]);
    assert_eq!(code, Some(0));
    assert!(
        text.starts_with("hip (roc): cublasSgemm_v2 → rocblas_sgemm  [renamed]"),
        "{text}"
    );
    let (text, _) = stdout(&["rules", "show", "cublasSgemm_v2", "--to", "hip"]);
    assert!(
        text.starts_with("hip: cublasSgemm_v2 → hipblasSgemm"),
        "{text}"
    );
}

#[test]
fn show_maps_an_indexed_device_string() {
    let (text, code) = stdout(&["rules", "show", "cuda:1", "--to", "ascend"]);
    assert_eq!(code, Some(0));
    assert!(text.starts_with("ascend: cuda:1 → npu:1"), "{text}");
}

#[test]
fn stats_json_counts_the_roc_flavour() {
    let (text, code) = stdout(&["rules", "stats", "--format", "json"]);
    assert_eq!(code, Some(0));
    let json: serde_json::Value = serde_json::from_str(&text).expect("json");
    let roc = &json["flavours"]["hip-roc"]["libraries"]["cublas"]["renamed"];
    assert!(roc.as_u64().is_some_and(|n| n > 500), "{roc}");
}
