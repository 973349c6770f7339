//! `cuport migrate --dual` end to end: the real binary writes one portable
//! tree plus the generated shim, reruns change nothing, and the flags that
//! make no sense together are refused before anything is written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{migrate, read_tree, scratch, text, Run};

/// `cuport migrate --dual --to ascend,hip ROOT --out OUT`, which must succeed.
fn dual_out(root: &std::path::Path, out: &std::path::Path) -> Run {
    migrate(
        root,
        &[
            "--dual",
            "--to",
            "ascend,hip",
            "--out",
            out.to_str().unwrap(),
        ],
    )
    .expect_code(0)
}

#[test]
fn dual_out_writes_the_portable_tree_and_the_shim() {
    let (dir, root) = scratch("vector_add");
    let out = dir.path().join("out");
    let run = dual_out(&root, &out);
    run.assert_stdout_contains("Dual-stack migration (CUDA + ascend, hip)");
    run.assert_stdout_contains("Generated 5 shim files");
    let tree = read_tree(&out);
    for generated in [
        "cuport/backend.h",
        "cuport/runtime.h",
        "cuport/cuport_shim.h",
        "cuport/ascend_helpers.cpp",
        "cuport/cuport.cmake",
    ] {
        assert!(
            tree.contains_key(generated),
            "{generated} missing: {:?}",
            tree.keys()
        );
    }
    let source = text(&tree["vector_add.cu"]);
    assert!(source.contains("#include \"cuport/runtime.h\""), "{source}");
    assert!(source.contains("cuportMalloc(&d_a, bytes)"), "{source}");
    assert!(
        source.contains("CUPORT_KERNEL_LAUNCH((vector_add), (grid, block, 0, stream)"),
        "{source}"
    );
    let runtime = text(&tree["cuport/runtime.h"]);
    assert!(
        runtime.contains("#define cuportMalloc cudaMalloc"),
        "CUDA section forwards"
    );
    assert!(
        runtime.contains("#define cuportMalloc hipMalloc"),
        "HIP section renames"
    );
    assert!(runtime
        .contains("aclrtMalloc((void **)(cuport_a1), (cuport_a2), ACL_MEM_MALLOC_HUGE_FIRST)"));

    // A second run over the output changes nothing, generated files included.
    let again = dir.path().join("again");
    migrate(
        &out,
        &[
            "--dual",
            "--to",
            "ascend,hip",
            "--out",
            again.to_str().unwrap(),
        ],
    )
    .expect_code(0);
    assert_eq!(read_tree(&again), tree);
}

#[test]
fn dual_diff_shows_new_shim_files_and_json_lists_them() {
    let (_dir, root) = scratch("cublas_gemm");
    let run = migrate(&root, &["--dual", "--to", "hip", "--diff"]).expect_code(0);
    assert!(
        run.stdout.contains("--- /dev/null\n+++ b/cuport/blas.h"),
        "{}",
        &run.stdout[..run.stdout.len().min(2000)]
    );
    assert!(run
        .stdout
        .contains("+#define cuport_cublasSgemm hipblasSgemm"));
    assert!(
        read_tree(&root).keys().all(|k| !k.starts_with("cuport/")),
        "--diff wrote files"
    );

    let json = migrate(&root, &["--dual", "--to", "hip,mlu", "--format", "json"]).expect_code(0);
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(document["run"]["options"]["dual"], "hip,mlu");
    let generated: Vec<&str> = document["generated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap())
        .collect();
    assert!(generated.contains(&"cuport/blas.h"), "{generated:?}");
}

#[test]
fn dual_in_place_writes_the_shim_into_the_tree_and_never_overwrites_foreign_files() {
    let (_dir, root) = scratch("nccl_allreduce");
    migrate(&root, &["--dual", "--to", "ascend", "--in-place"]).expect_code(0);
    let tree = read_tree(&root);
    assert!(tree.contains_key("cuport/ccl.h"), "{:?}", tree.keys());
    assert!(tree.contains_key("allreduce.cu.cuport.orig"));

    let (_dir2, root2) = scratch("nccl_allreduce");
    std::fs::create_dir_all(root2.join("cuport")).unwrap();
    std::fs::write(
        root2.join("cuport/runtime.h"),
        "// the project's own file\n",
    )
    .unwrap();
    let refused = migrate(
        &root2,
        &["--dual", "--to", "ascend", "--in-place", "--no-backup"],
    )
    .expect_code(2);
    refused.assert_stderr_contains("cuport/runtime.h");
    refused.assert_stderr_contains("cuport did not generate it");
    assert_eq!(
        std::fs::read_to_string(root2.join("cuport/runtime.h")).unwrap(),
        "// the project's own file\n"
    );
}

#[test]
fn flags_that_do_not_fit_dual_mode_are_refused() {
    let (dir, root) = scratch("vector_add");
    let several = migrate(&root, &["--to", "ascend,hip"]).expect_code(2);
    several.assert_stderr_contains("need --dual");
    let rename = migrate(
        &root,
        &["--dual", "--to", "hip", "--in-place", "--rename-sources"],
    )
    .expect_code(2);
    assert!(
        rename
            .stderr
            .contains("--rename-sources cannot be used with --dual"),
        "{}",
        rename.stderr
    );
    let one_file = dir.path().join("one.cu");
    let single = migrate(
        &root.join("vector_add.cu"),
        &["--dual", "--to", "hip", "-o", one_file.to_str().unwrap()],
    )
    .expect_code(2);
    single.assert_stderr_contains("--dual writes the cuport/ shim");
    assert!(!one_file.exists());
    let settings = migrate(&root, &["--dual", "--to", "mlu,hip", "--show-settings"]).expect_code(0);
    settings.assert_stdout_contains("mlu, hip");
    settings.assert_stdout_contains("dual               true");
}

/// A Python-only project gets the device module and no C headers.
#[test]
fn a_python_only_project_gets_no_c_shim() {
    let (dir, root) = scratch("pytorch_train");
    let out = dir.path().join("out");
    let run = dual_out(&root, &out);
    run.assert_stdout_contains("Generated 1 shim file: cuport_device.py");
    let tree = read_tree(&out);
    assert!(
        tree.keys().all(|k| !k.starts_with("cuport/")),
        "{:?}",
        tree.keys()
    );
    assert!(text(&tree["train.py"]).contains("import cuport_device"));
}

/// Reports of a dual-stack run say so, not just the first target.
#[test]
fn dual_reports_name_every_backend() {
    let (dir, root) = scratch("vector_add");
    let reports = dir.path().join("reports");
    migrate(
        &root,
        &[
            "--dual",
            "--to",
            "ascend,hip",
            "--report",
            reports.to_str().unwrap(),
        ],
    )
    .expect_code(0);
    let summary = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(
        summary.starts_with("# cuport migration report: dual-stack (CUDA + ascend, hip)"),
        "{summary}"
    );
    let html = std::fs::read_to_string(reports.join("report.html")).unwrap();
    assert!(html.contains("<title>cuport report: dual-stack (CUDA + ascend, hip)</title>"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("report.json")).unwrap())
            .unwrap();
    assert_eq!(json["run"]["options"]["dual"], "ascend,hip");
}
