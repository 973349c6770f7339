//! `cuport migrate --ascend-blas aclblas`, run as the real binary: cuBLAS
//! calls become CANN ops-blas calls, the helper header is written with the
//! port, the report records the choice, and what it cannot do is an error
//! that says so.
#![allow(clippy::expect_used)]

mod common;

use common::*;

#[test]
fn aclblas_writes_ops_blas_calls_and_the_helper_header() {
    let (scratch, tree) = scratch("ascend_host");
    let out = scratch.path().join("out");
    let report = scratch.path().join("report");
    let out_arg = out.to_str().expect("utf-8");
    let report_arg = report.to_str().expect("utf-8");
    let run = migrate(
        &tree,
        &[
            "--to",
            "ascend",
            "--ascend-blas",
            "aclblas",
            "--out",
            out_arg,
            "--report",
            report_arg,
        ],
    )
    .expect_code(0);
    run.assert_stdout_contains("cuport_aclblas.h");
    let blas = std::fs::read_to_string(out.join("blas.cpp")).expect("ported blas.cpp");
    assert!(blas.contains("aclblasSgemmEx("), "{blas}");
    assert!(!blas.contains("cuport_blas_"), "{blas}");
    let helper = std::fs::read_to_string(out.join("cuport_aclblas.h")).expect("helper header");
    assert!(helper.contains("#include <cann_ops_blas.h>"), "{helper}");
    let json = std::fs::read_to_string(report.join("report.json")).expect("report.json");
    assert!(json.contains("\"ascend-blas\": \"aclblas\""), "{json}");
}

#[test]
fn aclblas_with_dual_is_refused_with_what_to_do() {
    let (_scratch, tree) = scratch("ascend_host");
    let run = migrate(
        &tree,
        &[
            "--to",
            "ascend,hip",
            "--dual",
            "--ascend-blas",
            "aclblas",
            "--diff",
        ],
    )
    .expect_code(2);
    run.assert_stderr_contains("--ascend-blas aclblas ports cuBLAS one way only");
    run.assert_stderr_contains("--ascend-blas aclnn");
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

#[test]
fn cuport_toml_chooses_the_blas_library_and_rejects_unknown_values() {
    let (_scratch, tree) = scratch("ascend_host");
    let config = tree.join("cuport.toml");
    std::fs::write(&config, "[migrate]\nascend-blas = \"aclblas\"\n").expect("write");
    let run = migrate(&tree, &["--to", "ascend", "--show-settings"]).expect_code(0);
    run.assert_stdout_contains("ascend-blas        aclblas");
    std::fs::write(&config, "[migrate]\nascend-blas = \"cublas\"\n").expect("write");
    let run = migrate(&tree, &["--to", "ascend", "--diff"]).expect_code(2);
    run.assert_stderr_contains("cuport.toml");
    run.assert_stderr_contains("use aclnn or aclblas");
}
