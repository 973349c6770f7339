//! `mappings/ascend/helpers/ascend_helpers.cpp` implements every `[[helper]]` the Ascend
//! tables declare, with the declared parameter list, and compiles with
//! `g++ -std=c++17 -fsyntax-only` against the declarations header generated
//! from the tables. No CANN install or Ascend hardware exists here: the vendor
//! headers (acl/acl.h, aclnn/acl_meta.h, aclnnop/*.h, hccl/hccl.h) and
//! cuport_shim.h all resolve to that header, so the check is against the
//! recorded declarations only. The cuBLAS, cuBLASLt and cuDNN helpers also
//! run, on a CPU stand-in of the ACL/aclnn calls they make (`tests/ascend_cpu/`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::rules;
use cuport_model::Target;

/// The operator headers ascend_helpers.cpp includes (CANN installs them
/// under aclnnop/).
const VENDOR_HEADERS: &[&str] = &[
    "acl/acl.h",
    "aclnn/acl_meta.h",
    "aclnnop/aclnn_add.h",
    "aclnnop/aclnn_addmm.h",
    "aclnnop/aclnn_batch_matmul.h",
    "aclnnop/aclnn_convolution.h",
    "aclnnop/aclnn_copy.h",
    "aclnnop/aclnn_gelu_backward_v2.h",
    "aclnnop/aclnn_gelu_v2.h",
    "aclnnop/aclnn_logsoftmax.h",
    "aclnnop/aclnn_mm.h",
    "aclnnop/aclnn_mul.h",
    "aclnnop/aclnn_mv.h",
    "aclnnop/aclnn_reduce_sum.h",
    "aclnnop/aclnn_relu.h",
    "aclnnop/aclnn_softmax.h",
    "hccl/hccl.h",
    "cuport_shim.h",
];

fn helpers_source_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../mappings/ascend/helpers/ascend_helpers.cpp")
}

fn helpers_source() -> String {
    std::fs::read_to_string(helpers_source_path()).expect("ascend_helpers.cpp is readable")
}

/// `const float * x` and `const float *x` compare equal; `(void)` is no parameter.
fn normalize(text: &str) -> String {
    let spaced = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let tight = spaced.replace(" *", "*").replace("* ", "*");
    if tight == "void" {
        String::new()
    } else {
        tight
    }
}

/// Return type and parameters of each `extern "C"` definition, by name.
fn definitions(source: &str) -> BTreeMap<String, (String, Vec<String>)> {
    let mut found = BTreeMap::new();
    for (start, _) in source.match_indices("extern \"C\" ") {
        let rest = &source[start + "extern \"C\" ".len()..];
        let Some(open) = rest.find('(') else { continue };
        let Some(close) = rest[open..].find(')') else {
            continue;
        };
        let head = &rest[..open];
        let name_start = head
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let name = head[name_start..].to_owned();
        let returns = normalize(&head[..name_start]);
        let params: Vec<String> = rest[open + 1..open + close]
            .split(',')
            .map(normalize)
            .filter(|p| !p.is_empty())
            .collect();
        found.insert(name, (returns, params));
    }
    found
}

#[test]
fn every_declared_ascend_helper_is_defined_with_its_parameter_list() {
    let defined = definitions(&helpers_source());
    let mut declared = Vec::new();
    for helper in rules().helpers(Target::Ascend) {
        declared.push(helper.name.clone());
        let Some((returns, params)) = defined.get(&helper.name) else {
            panic!(
                "{} (declared in {}) has no definition in {}",
                helper.name,
                helper.origin,
                helpers_source_path().display()
            );
        };
        let expected: Vec<String> = helper.params.iter().map(|p| normalize(p)).collect();
        assert_eq!(
            params, &expected,
            "{}: parameters differ from the declaration in {}",
            helper.name, helper.origin
        );
        assert_eq!(
            returns,
            &normalize(&helper.returns),
            "{}: return type differs from the declaration in {}",
            helper.name,
            helper.origin
        );
    }
    let stray: Vec<&String> = defined.keys().filter(|n| !declared.contains(n)).collect();
    assert!(
        stray.is_empty(),
        "extern \"C\" functions no [[helper]] declares: {stray:?}"
    );
    assert!(
        declared.len() >= 30,
        "only {} helpers declared",
        declared.len()
    );
}

#[test]
fn definitions_parse_names_returns_and_parameters() {
    let source = "extern \"C\" const char *f(aclError  e) {}\nextern \"C\" uint32_t g(void) {}";
    let found = definitions(source);
    assert_eq!(
        found.get("f"),
        Some(&("const char*".to_owned(), vec!["aclError e".to_owned()]))
    );
    assert_eq!(found.get("g"), Some(&("uint32_t".to_owned(), Vec::new())));
}

fn gxx_available() -> bool {
    Command::new("g++")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether g++ is there; without it the test says loudly what it skipped
/// (and fails in CI, where `.ci/run` installs g++).
fn gxx_or_skip(skipped: &str) -> bool {
    if gxx_available() {
        return true;
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "g++ is required in CI (.ci/run installs it)"
    );
    eprintln!("\n!!! SKIPPED: g++ is not installed; {skipped} !!!\n");
    false
}

/// A folder where every vendor header ascend_helpers.cpp includes is the
/// declarations header generated from the tables.
fn declarations_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let declarations = rules().declarations_header(Target::Ascend);
    std::fs::write(dir.path().join("cuport_ascend_decls.h"), declarations).unwrap();
    for header in VENDOR_HEADERS {
        let path = dir.path().join(header);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "#include \"cuport_ascend_decls.h\"\n").unwrap();
    }
    dir
}

/// The cuBLASLt, cuBLAS and cuDNN helpers run on a CPU stand-in of the
/// ACL/aclnn calls they make (`tests/ascend_cpu/fake_acl.cpp`, FP32, written
/// from the documented operator semantics) and match a direct column-major
/// computation: cuBLASLt plain, transposed, accumulating, strided-batch and
/// row-major-A products and the BIAS, GELU_AUX_BIAS, RELU_BIAS, DGELU and
/// BGRADB epilogues (an unsupported epilogue finds no algorithm); cuBLAS
/// sgemm in all four transposes with alpha, beta and ldc > m, the strided
/// batch, sgemv N and T with a strided y; cuDNN convolution forward (groups,
/// stride, padding, dilation, beta != 0, the output dimensions) and softmax
/// per channel, per instance and logarithmic. This checks the helpers' own
/// logic (views, transposes, packing, epilogue order), not Ascend's
/// operators.
#[test]
fn helpers_compute_the_right_results_on_a_cpu_stand_in() {
    if !gxx_or_skip("the helpers were not run") {
        return;
    }
    let dir = declarations_dir();
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ascend_cpu");
    let program = dir.path().join("helpers_check");
    // Functions the cases never reach (the runtime and HCCL helpers' calls)
    // have no stand-in:
    // the link leaves them unresolved, which needs a non-PIE executable.
    let build = Command::new("g++")
        .args(["-std=c++17", "-O1", "-no-pie"])
        .arg(format!("-I{}", dir.path().display()))
        .arg(helpers_source_path())
        .arg(tests.join("fake_acl.cpp"))
        .arg(tests.join("helpers_check.cpp"))
        .args(["-Wl,--unresolved-symbols=ignore-all", "-o"])
        .arg(&program)
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "the CPU check did not build:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let run = Command::new(&program).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    eprintln!("{stdout}");
    assert!(
        run.status.success() && stdout.contains("helpers_check: all passed"),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn ascend_helpers_compile_against_the_generated_declarations() {
    if !gxx_or_skip("ascend_helpers.cpp was not compiled") {
        return;
    }
    let dir = declarations_dir();
    let output = Command::new("g++")
        .args(["-std=c++17", "-fsyntax-only", "-Wall", "-Wextra"])
        .arg(format!("-I{}", dir.path().display()))
        .arg(helpers_source_path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let errors = stderr.lines().filter(|l| l.contains("error:")).count();
    assert!(
        output.status.success() && errors == 0,
        "ascend_helpers.cpp does not compile against the generated declarations ({errors} errors); every Ascend function it calls needs a [[function]] row in mappings/ascend/*.toml:\n{stderr}"
    );
    if !stderr.trim().is_empty() {
        eprintln!("g++ warnings for ascend_helpers.cpp:\n{stderr}");
    }
}
