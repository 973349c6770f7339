//! `cuport migrate --to ascend --ascend-kernels simt` end to end: the real
//! binary on a copy of the SIMT fixture, checked as a porting engineer
//! would (what is written and renamed, the kernels the JSON lists, and the
//! errors a wrong setting gets).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{migrate, read_tree, scratch, text};

const SIMT: &[&str] = &["--to", "ascend", "--ascend-kernels", "simt"];

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    SIMT.iter().copied().chain(extra.iter().copied()).collect()
}

#[test]
fn a_simt_port_writes_asc_sources_with_their_includes_and_build_following() {
    let (dir, root) = scratch("simt_kernels");
    let out = dir.path().join("npu");
    let out_arg = out.to_str().unwrap();
    let run = migrate(&root, &args(&["--out", out_arg])).expect_code(0);
    run.assert_stdout_contains("Kernels: 8 simt");
    let tree = read_tree(&out);
    let names: Vec<&str> = tree.keys().map(String::as_str).collect();
    for renamed in ["main.asc", "softmax.asc", "gaps.asc"] {
        assert!(names.contains(&renamed), "{names:?}");
    }
    assert!(!names.iter().any(|n| n.ends_with(".cu")), "{names:?}");
    // A header keeps its name; the kernel file includes the device API.
    let softmax = text(&tree["softmax.asc"]);
    assert!(
        softmax.contains("#include <simt_api/asc_simt.h>"),
        "{softmax}"
    );
    assert!(softmax.contains("asc_shfl_xor(v, offset)"), "{softmax}");
    assert!(softmax.contains("__ubuf__ float partial[32];"), "{softmax}");
    assert!(softmax.contains("#include \"softmax.h\""), "{softmax}");
    // CMake: the architecture, SIMT and the ASC package before project(),
    // the sources under their new names.
    let cmake = text(&tree["CMakeLists.txt"]);
    let before_project = cmake.find("find_package(ASC REQUIRED)").unwrap();
    assert!(before_project < cmake.find("project(simt_kernels").unwrap());
    assert!(cmake.contains("set(CMAKE_ASC_ENABLE_SIMT ON)"), "{cmake}");
    assert!(cmake.contains("LANGUAGES CXX ASC)"), "{cmake}");
    assert!(
        cmake.contains("add_executable(softmax_demo main.asc softmax.asc)"),
        "{cmake}"
    );
    assert!(
        cmake.contains("CMAKE_ASC_ARCHITECTURES dav-3510"),
        "{cmake}"
    );
}

#[test]
fn the_json_lists_every_kernel_with_its_disposition_and_diagnostics() {
    let (_dir, root) = scratch("simt_kernels");
    let run = migrate(&root, &args(&["--format", "json"])).expect_code(0);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let kernels = doc["kernels"].as_array().unwrap();
    let listed: Vec<(&str, &str)> = kernels
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap(),
                k["disposition"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(listed.len(), 8, "{listed:?}");
    assert!(listed.iter().all(|(_, d)| *d == "simt"), "{listed:?}");
    let parent = kernels.iter().find(|k| k["name"] == "parent").unwrap();
    assert_eq!(parent["file"], "gaps.cu");
    assert_eq!(parent["target"], "ascend");
    let codes: Vec<&str> = parent["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    // The device-side launch, __nanosleep and __threadfence_system.
    assert!(codes.contains(&"CP0026"), "{codes:?}");
    assert!(codes.contains(&"CP2259"), "{codes:?}");
    // The vector model lists the same kernels as skeletons.
    let vector = migrate(&root, &["--to", "ascend", "--format", "json"]).expect_code(0);
    let doc: serde_json::Value = serde_json::from_str(&vector.stdout).unwrap();
    let dispositions: Vec<&str> = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["disposition"].as_str())
        .collect();
    assert_eq!(dispositions, ["skeleton"; 8]);
}

#[test]
fn simt_needs_cann_9_1_and_the_ascend_target() {
    let (_dir, root) = scratch("simt_kernels");
    let old = migrate(&root, &args(&["--cann-version", "9.0.0"])).expect_code(2);
    old.assert_stderr_contains("needs CANN 9.1.0 or newer");
    old.assert_stderr_contains("hybrid");
    let hip = migrate(&root, &["--to", "hip", "--ascend-kernels", "simt"]).expect_code(2);
    hip.assert_stderr_contains("is for --to ascend");
    let skeletons = migrate(
        &root,
        &args(&["--out", "/nonexistent/x", "--ascend-kernel-skeletons"]),
    )
    .expect_code(2);
    skeletons.assert_stderr_contains("drop one of the two");
}

#[test]
fn cuport_toml_chooses_the_kernel_model_and_rejects_a_bad_one_or_a_bad_glob() {
    let (_dir, root) = scratch("simt_kernels");
    let config = root.join("cuport.toml");
    std::fs::write(
        &config,
        "[migrate]\ntarget = \"ascend\"\nascend-kernels = \"simt\"\n",
    )
    .unwrap();
    let run = migrate(&root, &["--show-settings"]).expect_code(0);
    run.assert_stdout_contains("ascend-kernels     simt");
    let diff = migrate(&root, &["--diff"]).expect_code(0);
    diff.assert_stdout_contains("+    asc_syncthreads();");
    let vector = migrate(&root, &["--show-settings", "--ascend-kernels", "vector"]).expect_code(0);
    vector.assert_stdout_contains("ascend-kernels     vector");
    std::fs::write(
        &config,
        "[migrate]\ntarget = \"ascend\"\nascend-kernels = \"warp\"\n",
    )
    .unwrap();
    let bad = migrate(&root, &["--diff"]).expect_code(2);
    bad.assert_stderr_contains("unknown value \"warp\"");
    bad.assert_stderr_contains("cuport.toml");
    std::fs::write(
        &config,
        "[migrate]\ntarget = \"ascend\"\nignore = [\"src/[a-\"]\n",
    )
    .unwrap();
    let glob = migrate(&root, &["--diff"]).expect_code(2);
    glob.assert_stderr_contains("not a valid glob");
    glob.assert_stderr_contains("cuport.toml (ignore)");
}

#[test]
fn porting_a_simt_port_again_changes_nothing() {
    let (dir, root) = scratch("simt_kernels");
    let first = dir.path().join("npu");
    let second = dir.path().join("npu2");
    migrate(&root, &args(&["--out", first.to_str().unwrap()])).expect_code(0);
    let rerun = migrate(&first, &args(&["--out", second.to_str().unwrap()])).expect_code(0);
    assert!(
        rerun.stdout.contains("0 would change") || rerun.stdout.contains("0 changed"),
        "{}",
        rerun.stdout
    );
    assert_eq!(read_tree(&first), read_tree(&second));
}

/// report.json records every choice that changes the port, so a reviewer
/// (and `cuport report`) sees that it is a SIMT port for CANN 9.1.0.
#[test]
fn report_json_records_the_kernel_model_and_the_cann_release() {
    let (dir, root) = scratch("simt_kernels");
    let reports = dir.path().join("reports");
    let reports_arg = reports.to_str().unwrap();
    migrate(&root, &args(&["--report", reports_arg])).expect_code(0);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("report.json")).unwrap())
            .unwrap();
    let options = &doc["run"]["options"];
    assert_eq!(options["ascend-kernels"], "simt", "{options}");
    assert_eq!(options["cann-version"], "9.1.0", "{options}");
    let (dir, root) = scratch("simt_kernels");
    let reports = dir.path().join("reports");
    let reports_arg = reports.to_str().unwrap();
    migrate(&root, &["--to", "ascend", "--report", reports_arg]).expect_code(0);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("report.json")).unwrap())
            .unwrap();
    assert!(
        doc["run"]["options"].get("ascend-kernels").is_none(),
        "{}",
        doc["run"]
    );
}
