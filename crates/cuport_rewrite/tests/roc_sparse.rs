//! cuSPARSE calls ported to rocSPARSE (`--hip-libs roc`) with the argument
//! lists rocSPARSE declares (`mappings/hip/roc/cusparse-manual.toml`, read in
//! rocSPARSE 5.3.0's rocsparse-functions.h): the solve policy becomes
//! rocSPARSE's one value, the analysis policy is added, parameters rocSPARSE
//! lacks are dropped and those it adds are written. Where the port would be
//! wrong (a size written through an `int*`) the call keeps its report.
//! The real-valued port is compiled with hipcc against rocSPARSE's header
//! where both are installed (Debian: hipcc, librocsparse-dev).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use common::migrate_dir;
use cuport_model::Target;
use cuport_rewrite::{FileMigration, Level, MigrateOptions};
use cuport_rules::Flavour;

fn roc() -> MigrateOptions {
    let mut options = MigrateOptions::new(Target::Hip);
    options.flavours = Flavour::Roc.into();
    options
}

/// Migrates `src` as `k.cu` of a tree with `--hip-libs roc` and checks that a
/// second run changes nothing.
fn port(src: &str) -> FileMigration {
    let run = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.cu"), text).unwrap();
        migrate_dir(dir.path(), &roc())
            .files
            .into_iter()
            .find(|f| f.path == "k.cu")
            .map(|f| f.result)
            .unwrap()
    };
    let first = run(src);
    let again = run(&String::from_utf8_lossy(&first.output));
    assert!(
        again.edits.is_empty(),
        "second run edited: {:#?}",
        again.edits
    );
    first
}

fn text(m: &FileMigration) -> String {
    String::from_utf8_lossy(&m.output).into_owned()
}

/// Real-valued calls of each rewritten family, as a project writes them.
const REAL: &str = r#"#include <cusparse.h>
void f(cusparseHandle_t h, cusparseMatDescr_t descr, cusparseDirection_t dir,
       cusparseOperation_t op, cusparseSolvePolicy_t policy, int m, int n, int k,
       int nnz, int mb, int nnzb, int block, int ldb, int ldc, float* val,
       const int* rows, const int* cols, int* rows_c, int* cols_c, float* cval,
       double* dval, const float* alpha, const float* beta, const double* dalpha,
       const float* x, float* y, const double* dx, double* dy, float* B,
       const float* cB, float* C, int* nnz_c, void* buffer,
       csrilu02Info_t ilu, csric02Info_t ic, bsrilu02Info_t bilu,
       bsric02Info_t bic, bsrsv2Info_t bsv, csrsv2Info_t sv, csrsm2Info_t sm,
       csrgemm2Info_t gemm, size_t* size) {
  cusparseScsrilu02(h, m, nnz, descr, val, rows, cols, ilu, policy, buffer);
  cusparseDcsrilu02_analysis(h, m, nnz, descr, dval, rows, cols, ilu, policy, buffer);
  cusparseScsric02_analysis(h, m, nnz, descr, val, rows, cols, ic, policy, buffer);
  cusparseSbsrilu02(h, dir, mb, nnzb, descr, val, rows, cols, block, bilu, policy, buffer);
  cusparseSbsrilu02_analysis(h, dir, mb, nnzb, descr, val, rows, cols, block, bilu, policy, buffer);
  cusparseDbsric02(h, dir, mb, nnzb, descr, dval, rows, cols, block, bic, policy, buffer);
  cusparseSbsric02_analysis(h, dir, mb, nnzb, descr, val, rows, cols, block, bic, policy, buffer);
  cusparseSbsrsv2_solve(h, dir, op, mb, nnzb, alpha, descr, val, rows, cols, block, bsv, x, y, policy, buffer);
  cusparseSbsrsv2_analysis(h, dir, op, mb, nnzb, descr, val, rows, cols, block, bsv, policy, buffer);
  cusparseDcsrsv2_solve(h, op, m, nnz, dalpha, descr, dval, rows, cols, sv, dx, dy, policy, buffer);
  cusparseScsrsv2_analysis(h, op, m, nnz, descr, val, rows, cols, sv, policy, buffer);
  cusparseScsrsm2_bufferSizeExt(h, 0, op, op, m, n, nnz, alpha, descr, val, rows, cols, cB, ldb, sm, policy, size);
  cusparseScsrsm2_analysis(h, 0, op, op, m, n, nnz, alpha, descr, val, rows, cols, cB, ldb, sm, policy, buffer);
  cusparseScsrsm2_solve(h, 1, op, op, m, n, nnz, alpha, descr, val, rows, cols, B, ldb, sm, policy, buffer);
  cusparseScsrmv(h, op, m, n, nnz, alpha, descr, val, rows, cols, x, beta, y);
  cusparseScsrmm(h, op, m, n, k, nnz, alpha, descr, val, rows, cols, cB, ldb, beta, C, ldc);
  cusparseScsrgemm2(h, m, n, k, alpha, descr, nnz, val, rows, cols, descr, nnz, val, rows, cols,
                    beta, descr, nnz, val, rows, cols, descr, cval, rows_c, cols_c, gemm, buffer);
  cusparseScsrgeam2(h, m, n, alpha, descr, nnz, val, rows, cols, beta, descr, nnz, val, rows, cols,
                    descr, cval, rows_c, cols_c, buffer);
  cusparseXcsrgeam2Nnz(h, m, n, descr, nnz, rows, cols, descr, nnz, rows, cols, descr, rows_c, nnz_c, buffer);
}
"#;

#[test]
fn real_calls_get_rocsparse_argument_lists() {
    let m = port(REAL);
    let out = text(&m);
    for expected in [
        "rocsparse_scsrilu0(h, m, nnz, descr, val, rows, cols, ilu, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_dcsrilu0_analysis(h, m, nnz, descr, dval, rows, cols, ilu, rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_scsric0_analysis(h, m, nnz, descr, val, rows, cols, ic, rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_sbsrilu0(h, dir, mb, nnzb, descr, val, rows, cols, block, bilu, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_sbsrilu0_analysis(h, dir, mb, nnzb, descr, val, rows, cols, block, bilu, rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_dbsric0(h, dir, mb, nnzb, descr, dval, rows, cols, block, bic, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_sbsric0_analysis(h, dir, mb, nnzb, descr, val, rows, cols, block, bic, rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_sbsrsv_solve(h, dir, op, mb, nnzb, alpha, descr, val, rows, cols, block, bsv, x, y, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_sbsrsv_analysis(h, dir, op, mb, nnzb, descr, val, rows, cols, block, bsv, rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_dcsrsv_solve(h, op, m, nnz, dalpha, descr, dval, rows, cols, sv, dx, dy, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_scsrsv_analysis(h, op, m, nnz, descr, val, rows, cols, sv, rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, buffer);",
        // cuSPARSE's `algo` (0, 1) has no rocSPARSE parameter.
        "rocsparse_scsrsm_buffer_size(h, op, op, m, n, nnz, alpha, descr, val, rows, cols, cB, ldb, sm, rocsparse_solve_policy_auto, size);",
        "rocsparse_scsrsm_analysis(h, op, op, m, n, nnz, alpha, descr, val, rows, cols, cB, ldb, sm, rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_scsrsm_solve(h, op, op, m, n, nnz, alpha, descr, val, rows, cols, B, ldb, sm, rocsparse_solve_policy_auto, buffer);",
        "rocsparse_scsrmv(h, op, m, n, nnz, alpha, descr, val, rows, cols, nullptr, x, beta, y);",
        "rocsparse_scsrmm(h, op, rocsparse_operation_none, m, n, k, nnz, alpha, descr, val, rows, cols, cB, ldb, beta, C, ldc);",
        "rocsparse_scsrgemm(h, rocsparse_operation_none, rocsparse_operation_none, m, n, k, alpha, descr, nnz, val, rows, cols, descr, nnz, val, rows, cols, beta, descr, nnz, val, rows, cols, descr, cval, rows_c, cols_c, gemm, buffer);",
        "rocsparse_scsrgeam(h, m, n, alpha, descr, nnz, val, rows, cols, beta, descr, nnz, val, rows, cols, descr, cval, rows_c, cols_c);",
        "rocsparse_csrgeam_nnz(h, m, n, descr, nnz, rows, cols, descr, nnz, rows, cols, descr, rows_c, nnz_c);",
    ] {
        assert!(out.contains(expected), "missing `{expected}` in\n{out}");
    }
    // The calls (not the types, which keep their generated reports).
    let reported: Vec<_> = m
        .diagnostics
        .iter()
        .filter(|d| REAL.contains(&format!("{}(", d.cuda_name)) && d.level >= Level::Approximate)
        .map(|d| d.cuda_name.as_str())
        .collect();
    assert!(reported.is_empty(), "{reported:?}\n{out}");
    compile(&out);
}

/// The complex forms get the same argument list and a report: rocSPARSE
/// takes rocsparse_double_complex, cuport keeps HIP's hipDoubleComplex.
#[test]
fn complex_calls_are_rewritten_and_reported() {
    let src = "#include <cusparse.h>\nvoid f(cusparseHandle_t h, cusparseMatDescr_t d, cusparseSolvePolicy_t p, int m, int nnz, cuDoubleComplex* v, const int* r, const int* c, csrilu02Info_t i, void* b) {\n  cusparseZcsrilu02(h, m, nnz, d, v, r, c, i, p, b);\n}\n";
    let m = port(src);
    let out = text(&m);
    assert!(
        out.contains(
            "rocsparse_zcsrilu0(h, m, nnz, d, v, r, c, i, rocsparse_solve_policy_auto, b);"
        ),
        "{out}"
    );
    let report = m
        .diagnostics
        .iter()
        .find(|d| d.cuda_name == "cusparseZcsrilu02")
        .unwrap_or_else(|| panic!("no report: {:#?}", m.diagnostics));
    assert_eq!(report.level, Level::Approximate);
    let says = report.suggestion.as_deref().unwrap_or(&report.message);
    assert!(
        format!("{} {says}", report.message).contains("rocsparse_double_complex"),
        "{report:#?}"
    );
}

/// cuSPARSE's ilu0 buffer size is an `int*`, rocSPARSE writes a size_t:
/// HIPIFY's `reinterpret_cast<size_t*>(&n)` writes eight bytes into four, so
/// the call is renamed and stays reported for a person to give it a size_t.
#[test]
fn an_int_buffer_size_stays_reported() {
    let src = "#include <cusparse.h>\nvoid f(cusparseHandle_t h, cusparseMatDescr_t d, int m, int nnz, float* v, const int* r, const int* c, csrilu02Info_t i) {\n  int bytes = 0;\n  cusparseScsrilu02_bufferSize(h, m, nnz, d, v, r, c, i, &bytes);\n}\n";
    let m = port(src);
    let out = text(&m);
    assert!(
        out.contains("rocsparse_scsrilu0_buffer_size(h, m, nnz, d, v, r, c, i, &bytes);"),
        "{out}"
    );
    assert!(!out.contains("reinterpret_cast"), "{out}");
    assert!(
        m.diagnostics
            .iter()
            .any(|d| d.cuda_name == "cusparseScsrilu02_bufferSize" && d.level == Level::Approximate),
        "{:#?}",
        m.diagnostics
    );
}

/// The port of `REAL` compiles against rocSPARSE's own declarations.
fn compile(out: &str) {
    if !common::require("hipcc") {
        return;
    }
    let found = std::process::Command::new("hipcc")
        .args(["-E", "-x", "c++", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"#include <rocsparse/rocsparse.h>\n")?;
            child.wait()
        })
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "rocSPARSE's header is required in CI (.ci/run installs librocsparse-dev)"
        );
        eprintln!("\n!!! SKIPPED: rocsparse/rocsparse.h is not installed; the compile check did not run !!!\n");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.hip");
    std::fs::write(&path, out).unwrap();
    let compiled = std::process::Command::new("hipcc")
        .args(["-fsyntax-only", "--offload-arch=gfx90a", "-w"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        compiled.status.success(),
        "{}\n{out}",
        String::from_utf8_lossy(&compiled.stderr)
    );
}
