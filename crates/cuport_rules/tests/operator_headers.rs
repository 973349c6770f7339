//! Every aclnn operator row (`mappings/ascend/operators/*.toml`) agrees with
//! the real operator headers of each CANN release it claims (8.5.0, 9.0.0,
//! 9.1.0, from `../shared/vendor`): the header exists at the row's path,
//! declares `<name>GetWorkspaceSize` with exactly the row's parameters
//! followed by the workspace pair, and declares `<name>` itself. A row for a
//! release whose headers lack the operator, or with another signature, fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod vendor;

use std::path::Path;

use cuport_rules::kernel_rules::{declared_parameters, Operator, OperatorTable};
use vendor::cann_vendor;

/// The problems of one row against one release's headers.
fn problems(op: &Operator, include: &Path, release: &str) -> Vec<String> {
    let path = include.join(&op.header);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return vec![format!("{} {release}: no header {}", op.name, op.header)];
    };
    let mut found = Vec::new();
    let workspace_fn = format!("{}GetWorkspaceSize", op.name);
    match declared_parameters(&text, &workspace_fn) {
        None => found.push(format!(
            "{} {release}: {} declares no {workspace_fn}",
            op.name, op.header
        )),
        Some(declared) => {
            let mut expected: Vec<(String, String)> = op
                .params
                .iter()
                .map(|p| (p.c_type.clone(), p.name.clone()))
                .collect();
            expected.push(("uint64_t*".into(), "workspaceSize".into()));
            expected.push(("aclOpExecutor**".into(), "executor".into()));
            if declared != expected {
                found.push(format!(
                    "{} {release}: declared {declared:?}, row says {expected:?}",
                    op.name
                ));
            }
        }
    }
    if declared_parameters(&text, &op.name).is_none() {
        found.push(format!(
            "{} {release}: {} declares no {}",
            op.name, op.header, op.name
        ));
    }
    found
}

#[test]
fn aclnn_operator_rows_match_the_headers_of_every_release_they_claim() {
    let Some(vendor) = cann_vendor("cann-9.1.0/include/aclnnop", "the aclnn operator rows were")
    else {
        return;
    };
    let (table, diags) = OperatorTable::builtin("ascend");
    assert!(diags.is_empty(), "{diags:#?}");
    assert!(
        table.operators.len() >= 25,
        "{} rows",
        table.operators.len()
    );
    let mut all = Vec::new();
    for op in &table.operators {
        assert!(!op.releases.is_empty(), "{}: no release", op.name);
        for release in &op.releases {
            let include = vendor.join(format!("cann-{release}/include"));
            assert!(
                include.is_dir(),
                "{}: no headers of release {release}",
                op.name
            );
            all.extend(problems(op, &include, release));
        }
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}

#[test]
fn dtype_rows_name_members_of_acl_data_type() {
    let Some(vendor) = cann_vendor("cann-9.1.0/include/aclnnop", "the aclnn operator rows were")
    else {
        return;
    };
    let (table, _) = OperatorTable::builtin("ascend");
    for release in ["8.5.0", "9.0.0", "9.1.0"] {
        let header = vendor.join(format!("cann-{release}/include/acl/acl_base_rt.h"));
        let text = std::fs::read_to_string(&header).expect("acl_base_rt.h");
        for dtype in &table.dtypes {
            let member = format!("{} =", dtype.target);
            assert!(text.contains(&member), "{release}: no {}", dtype.target);
        }
    }
}

/// The check fails on a row whose signature differs from the header: a
/// wrong type, a missing parameter or a release without the operator.
#[test]
fn a_row_with_another_signature_fails_the_check() {
    let Some(vendor) = cann_vendor("cann-9.1.0/include/aclnnop", "the aclnn operator rows were")
    else {
        return;
    };
    let (table, _) = OperatorTable::builtin("ascend");
    let include = vendor.join("cann-9.1.0/include");
    let mut add = table.operator("aclnnAdd").cloned().expect("aclnnAdd row");
    add.params.pop();
    assert!(!problems(&add, &include, "9.1.0").is_empty());
    let mut gelu = table
        .operator("aclnnGeluV2")
        .cloned()
        .expect("aclnnGeluV2 row");
    gelu.params[1].c_type = "int32_t".into();
    assert!(!problems(&gelu, &include, "9.1.0").is_empty());
    let mut rms = add.clone();
    rms.name = "aclnnRmsNorm".into();
    rms.header = "aclnnop/aclnn_rms_norm.h".into();
    assert!(!problems(&rms, &include, "9.1.0").is_empty());
}

/// Every `[[vector]]` row is what CUDA's own `vector_types.h` declares:
/// `lanes` members of the scalar type and nothing else in the size. g++
/// checks it against the header of the CUDA 13 wheel that carries
/// `CUPORT_NVCC` (tests/corpus/fetch_toolchains.sh); without one the test
/// says so and passes, as CI always has one.
#[test]
fn vector_rows_match_cuda_vector_types() {
    let Some(nvcc) = std::env::var_os("CUPORT_NVCC") else {
        eprintln!("CUPORT_NVCC unset: the [[vector]] rows were not checked against vector_types.h");
        return;
    };
    let include = Path::new(&nvcc)
        .parent()
        .and_then(Path::parent)
        .expect("nvcc in <toolkit>/bin")
        .join("include");
    let (table, diags) = OperatorTable::builtin("ascend");
    assert!(diags.is_empty(), "{diags:#?}");
    assert!(!table.vectors.is_empty());
    let mut source = String::from("#include <vector_types.h>\n#include <type_traits>\n");
    for v in &table.vectors {
        let members = ["x", "y", "z", "w"];
        let member = members[(v.lanes as usize).min(4) - 1];
        source.push_str(&format!(
            "static_assert(sizeof({t}) == {n} * sizeof({s}), \"{t}\");\n\
             static_assert(std::is_same<decltype({t}::{member}), {s}>::value, \"{t}.{member}\");\n",
            t = v.c_type,
            n = v.lanes,
            s = v.scalar,
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("vectors.cpp");
    std::fs::write(&file, &source).unwrap();
    let out = std::process::Command::new("g++")
        .args(["-std=c++17", "-fsyntax-only", "-I"])
        .arg(&include)
        .arg(&file)
        .output()
        .expect("g++");
    assert!(
        out.status.success(),
        "{}\n{source}",
        String::from_utf8_lossy(&out.stderr)
    );
}
