//! `--ascend-blas aclblas`: cuBLAS and cuBLASLt on Ascend become calls of
//! CANN's ops-blas (mappings/ascend/ops-blas/). What the port writes is a
//! snapshot here; that it compiles against the real ops-blas and ACL headers
//! of each CANN release is `ops_blas_ports_compile_against_the_real_headers`
//! in ascend_real_headers.rs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;

use common::*;
use cuport_model::{Library, Target};
use cuport_rewrite::MigrateOptions;
use cuport_rules::{Flavour, NameKind};

fn aclblas() -> MigrateOptions {
    let mut options = MigrateOptions::new(Target::Ascend);
    options.flavours = Flavour::Aclblas.into();
    options
}

fn blas_tree() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ascend_blas")
}

/// The aclnn helpers take cuport's own handle, which an aclblas handle is
/// not: with ops-blas chosen, every cuBLAS/cuBLASLt name the default Ascend
/// tables turn into a cuport helper or type must be decided by the ops-blas
/// tables (a mapping or a manual diagnostic), never fall through to the
/// aclnn shim. (Data types such as CUDA_R_32F → ACL_FLOAT are shared.)
#[test]
fn no_aclnn_helper_shows_through_when_ops_blas_is_chosen() {
    let set = rules();
    let blas = [Library::Cublas, Library::CublasLt];
    let mut through = Vec::new();
    for name in set.known_cuda_names(Target::Ascend) {
        let Some(default) = set.lookup(Target::Ascend, name) else {
            continue;
        };
        let writes_shim = default
            .target_name
            .as_deref()
            .into_iter()
            .chain(default.template().map(|t| t.source()))
            .any(|text| text.to_lowercase().contains("cuport"));
        if !writes_shim
            || !default.library().is_some_and(|l| blas.contains(&l))
            || default.kind() == NameKind::Header
        {
            continue;
        }
        let chosen = set
            .lookup_flavour(Target::Ascend, Flavour::Aclblas, name)
            .unwrap();
        if chosen.rule.flavour != Flavour::Aclblas {
            through.push(name.to_owned());
        }
    }
    assert!(
        through.is_empty(),
        "cuBLAS names that would still become aclnn helpers with --ascend-blas aclblas: {through:?}"
    );
}

/// Levels 1-3, Ex and batched GEMMs, a triangular solve, status text, math
/// mode and a cuBLASLt GEMM with a bias epilogue, as the port writes them.
#[test]
fn cublas_calls_become_ops_blas_calls() {
    let migration = migrate_dir(&blas_tree(), &aclblas());
    let generated: Vec<&str> = migration
        .generated
        .iter()
        .map(|g| g.path.as_str())
        .collect();
    assert_eq!(generated, ["cuport_aclblas.h"]);
    insta::assert_snapshot!(render(&migration));
}

/// The default keeps the aclnn helpers, now with cuBLAS's status text.
#[test]
fn the_aclnn_choice_names_status_codes_with_the_runtime_helper() {
    let set = rules();
    let status = set.lookup(Target::Ascend, "cublasGetStatusString").unwrap();
    assert_eq!(status.target_name.as_deref(), Some("cuport_acl_error_name"));
    let chosen = set
        .lookup_flavour(Target::Ascend, Flavour::Aclblas, "cublasGetStatusString")
        .unwrap();
    assert_eq!(
        chosen.target_name.as_deref(),
        Some("cuport_aclblas_status_string")
    );
}
