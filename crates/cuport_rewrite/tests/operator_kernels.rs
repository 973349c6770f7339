//! Kernels that `[[kernel]]` rules map to aclnn operators (issue 27 item 4):
//! a one-way Ascend port replaces each mapped kernel's definition with the
//! function that runs its operators and each launch with a call of it; the
//! result compiles with g++ against the real CANN headers of 8.5.0, 9.0.0
//! and 9.1.0 (`../shared/vendor`, `CUPORT_CANN_VENDOR`). Every operator row
//! of the tables gets a generated call compiled the same way. A compile
//! check, not a run: no Ascend NPU was used.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::simt::{cann_vendor, rewrite_launches, simt_flags};
use common::{for_installed_hip, migrate_dir, require, write_output};
use cuport_model::{SdkVersion, Target};
use cuport_rewrite::{codes, Disposition, MigrateOptions, Migration};
use cuport_rules::kernel_rules::{load_kernel_rules, KernelRule, OperatorTable, ParamRole};

const RELEASES: [&str; 3] = ["8.5.0", "9.0.0", "9.1.0"];

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/operator_kernels/llm")
}

fn table() -> OperatorTable {
    let (table, problems) = OperatorTable::builtin("ascend");
    assert!(problems.is_empty(), "{problems:?}");
    table
}

fn fixture_rules() -> Vec<KernelRule> {
    let path = fixture().join("kernels.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let (rules, problems) = load_kernel_rules("kernels.toml", &text, &table());
    assert!(problems.is_empty(), "{problems:?}");
    rules
}

fn options(rules: Vec<KernelRule>, release: &str) -> MigrateOptions {
    let mut options = MigrateOptions::new(Target::Ascend);
    options.kernel_rules = rules;
    options
        .sdk_versions
        .insert(Target::Ascend, SdkVersion::parse(release).unwrap());
    options
}

fn ported(migration: &Migration, path: &str) -> String {
    let file = migration.files.iter().find(|f| f.path == path).unwrap();
    String::from_utf8(file.result.output.clone()).unwrap()
}

#[test]
fn mapped_kernels_become_operator_calls_and_the_rest_stay_manual() {
    let migration = migrate_dir(&fixture(), &options(fixture_rules(), "9.1.0"));
    let text = ported(&migration, "ops.cu");
    for kernel in [
        "residual_forward_kernel",
        "gelu_forward_kernel",
        "softmax_rows_kernel",
    ] {
        assert!(
            !text.contains(&format!("__global__ void {kernel}")),
            "{kernel} is still a kernel:\n{text}"
        );
        assert!(text.contains(&format!(
            "aclError cuport_kernel_{kernel}(aclrtStream cuport_stream"
        )));
    }
    // The launch's stream is kept; a launch without one uses the default.
    assert!(text.contains("cuport_kernel_gelu_forward_kernel(stream, out, inp, N);"));
    assert!(text.contains("cuport_kernel_residual_forward_kernel(nullptr, out, inp1, inp2, N);"));
    assert!(text.contains("cuport_kernel_softmax_rows_kernel(nullptr, out, inp + 0, N, C);"));
    // The kernel whose rule is stale stays a manual port, and says why.
    let scale = ported(&migration, "scale.cu");
    assert!(scale.contains("__global__ void scale_kernel"));
    let file = migration
        .files
        .iter()
        .find(|f| f.path == "scale.cu")
        .unwrap();
    let stale = file
        .result
        .diagnostics
        .iter()
        .find(|d| d.code == codes::KERNEL_RULE_NOT_APPLIED)
        .expect("a CP0037 on scale_kernel");
    assert!(stale
        .message
        .contains("its parameters are (x, N), the kernel's (x, s, N)"));
    assert!(file
        .result
        .diagnostics
        .iter()
        .any(|d| d.code == codes::LAUNCH_MANUAL && d.cuda_name == "scale_kernel"));
    assert_eq!(file.result.kernels[0].disposition, Disposition::Skeleton);
    let file = migration.files.iter().find(|f| f.path == "ops.cu").unwrap();
    let records: Vec<(&str, Disposition, String)> = file
        .result
        .kernels
        .iter()
        .map(|k| (k.name.as_str(), k.disposition, k.operators.join("+")))
        .collect();
    assert_eq!(
        records,
        [
            (
                "residual_forward_kernel",
                Disposition::Operator,
                "aclnnAdd".into()
            ),
            (
                "gelu_forward_kernel",
                Disposition::Operator,
                "aclnnGeluV2".into()
            ),
            (
                "softmax_rows_kernel",
                Disposition::Operator,
                "aclnnSoftmax".into()
            ),
        ]
    );
    assert!(migration
        .generated
        .iter()
        .any(|g| g.path == "cuport_kernel_ops.h"));
    insta::assert_snapshot!("operator_kernels_ops_cu", text);
}

/// Under Ascend C SIMT (CANN 9.1.0) the rules still apply: a mapped kernel
/// becomes its operator calls, the one whose rule is stale stays a SIMT
/// kernel (launched with chevrons) and says why the rule was not applied.
#[test]
fn under_simt_mapped_kernels_become_operator_calls_and_the_rest_stay_simt() {
    let mut simt = options(fixture_rules(), "9.1.0");
    simt.kernel_models
        .insert(Target::Ascend, cuport_model::KernelModel::Simt);
    let migration = migrate_dir(&fixture(), &simt);
    let text = ported(&migration, "ops.cu");
    assert!(
        !text.contains("__global__ void gelu_forward_kernel"),
        "{text}"
    );
    assert!(text.contains("cuport_kernel_gelu_forward_kernel(stream, out, inp, N);"));
    let file = migration
        .files
        .iter()
        .find(|f| f.path == "scale.cu")
        .unwrap();
    let scale = String::from_utf8(file.result.output.clone()).unwrap();
    assert!(scale.contains("__global__ void scale_kernel"), "{scale}");
    assert!(scale.contains("scale_kernel<<<"), "{scale}");
    assert!(file.result.diagnostics.iter().any(|d| {
        d.code == codes::KERNEL_RULE_NOT_APPLIED && d.message.contains("its parameters are")
    }));
    assert_eq!(file.result.kernels[0].disposition, Disposition::Simt);
    let ops = migration.files.iter().find(|f| f.path == "ops.cu").unwrap();
    assert!(ops
        .result
        .kernels
        .iter()
        .all(|k| k.disposition == Disposition::Operator));
    // Both files, the operator functions and the SIMT kernel, pass the
    // SIMT syntax check against 9.1.0's devkit and aclnn headers.
    let Some(vendor) = cann_vendor() else { return };
    if !require("g++") {
        return;
    }
    let out = write_output(&migration);
    let tree = out.path().join("tree");
    for file in ["ops.cu", "scale.cu"] {
        let text = std::fs::read_to_string(tree.join(file)).unwrap();
        let checked = tree.join(format!("{file}.simt-check.cpp"));
        std::fs::write(&checked, rewrite_launches(&text)).unwrap();
        let output = Command::new("g++")
            .args(simt_flags(&vendor, "9.1.0"))
            .arg(format!("-I{}", tree.display()))
            .arg(&checked)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn a_release_not_known_to_have_the_operator_keeps_the_kernel() {
    let migration = migrate_dir(&fixture(), &options(fixture_rules(), "8.3.RC1"));
    let text = ported(&migration, "ops.cu");
    assert!(text.contains("__global__ void gelu_forward_kernel"));
    let file = migration.files.iter().find(|f| f.path == "ops.cu").unwrap();
    let why: Vec<&str> = file
        .result
        .diagnostics
        .iter()
        .filter(|d| d.code == codes::KERNEL_RULE_NOT_APPLIED)
        .map(|d| d.message.as_str())
        .collect();
    assert!(
        why.iter()
            .any(|m| m
                .contains("`aclnnGeluV2` is not known to be declared by the headers of 8.3.RC1")),
        "{why:?}"
    );
    assert!(!migration
        .generated
        .iter()
        .any(|g| g.path == "cuport_kernel_ops.h"));
}

/// g++'s errors for `file` of the ported tree, against one release.
fn syntax_errors(vendor: &Path, release: &str, root: &Path, file: &str) -> Vec<String> {
    let include = vendor.join(format!("cann-{release}/include"));
    let out = Command::new("g++")
        .args(["-std=c++17", "-fsyntax-only", "-x", "c++"])
        .arg(format!("-I{}", include.display()))
        .arg(format!("-I{}", root.display()))
        .arg(root.join(file))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut errors: Vec<String> = stderr
        .lines()
        .filter(|l| l.contains("error"))
        .map(str::to_owned)
        .collect();
    if !out.status.success() && errors.is_empty() {
        errors.push(stderr.into_owned());
    }
    errors
}

/// Ports `dir` with `rules` for each release and asserts that g++ finds no
/// error in the ported `file` against that release's headers; says so and
/// returns where the headers or g++ are missing.
fn assert_port_compiles(dir: &Path, rules: &[KernelRule], file: &str) {
    let Some(vendor) = cann_vendor() else { return };
    if !require("g++") {
        return;
    }
    for release in RELEASES {
        let migration = migrate_dir(dir, &options(rules.to_vec(), release));
        let out = write_output(&migration);
        let errors = syntax_errors(&vendor, release, &out.path().join("tree"), file);
        assert!(errors.is_empty(), "CANN {release}:\n{}", errors.join("\n"));
    }
}

#[test]
fn the_port_compiles_against_the_real_headers_of_each_release() {
    let Some(vendor) = cann_vendor() else { return };
    if !require("g++") {
        return;
    }
    let mut rules = fixture_rules();
    rules.retain(|r| r.name != "scale_kernel");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture().join("ops.cu"), dir.path().join("ops.cu")).unwrap();
    for release in RELEASES {
        let migration = migrate_dir(dir.path(), &options(rules.clone(), release));
        let out = write_output(&migration);
        let errors = syntax_errors(&vendor, release, &out.path().join("tree"), "ops.cu");
        assert!(errors.is_empty(), "CANN {release}:\n{}", errors.join("\n"));
        eprintln!("CANN {release}: the port with 3 operator kernels compiles");
    }
}

/// A kernel of one pointer parameter per tensor parameter of `op`, and a
/// rule binding every parameter: tensors to the pointers, attributes to a
/// value of their type.
/// Strided views of one parameter (a tensor with `name`, `strides` and
/// `offset`) become `CuportOpCall::view` calls that compile against each
/// release.
#[test]
fn strided_views_compile_against_the_real_headers_of_each_release() {
    let Some(vendor) = cann_vendor() else { return };
    if !require("g++") {
        return;
    }
    let views = fixture().with_file_name("views");
    let text = std::fs::read_to_string(views.join("split.toml")).unwrap();
    let (rules, problems) = load_kernel_rules("split.toml", &text, &table());
    assert!(problems.is_empty(), "{problems:?}");
    for release in RELEASES {
        let migration = migrate_dir(&views, &options(rules.clone(), release));
        let ported_text = ported(&migration, "split.cu");
        assert!(ported_text.contains("cuport_call.view(pairs, ACL_FLOAT, cuport_dims_pairs_right, cuport_strides_pairs_right, 2, static_cast<int64_t>(C))"), "{ported_text}");
        assert!(
            ported_text.contains("cuport_kernel_split_kernel(stream, left, right, pairs, R, C);")
        );
        let out = write_output(&migration);
        let errors = syntax_errors(&vendor, release, &out.path().join("tree"), "split.cu");
        assert!(errors.is_empty(), "CANN {release}:\n{}", errors.join("\n"));
    }
}

/// A rule with a launch value (the rows, which the kernel only sees as its
/// grid) and an optional bias: the function takes the rows after the
/// kernel's parameters, each launch passes `B * T`, the bias tensor and its
/// call exist only when the pointer is not null; one way and dual-stack,
/// compiled against the real headers of each release.
#[test]
fn launch_values_and_an_optional_bias_compile_against_each_release() {
    let shared = evidence_fixture("linear");
    let linear = shared.path();
    let text = std::fs::read_to_string(linear.join("linear.toml")).unwrap();
    let (rules, problems) = load_kernel_rules("linear.toml", &text, &table());
    assert!(problems.is_empty(), "{problems:?}");
    let mut dual = MigrateOptions::dual_stack(vec![Target::Ascend, Target::Hip]);
    dual.kernel_rules = rules.clone();
    let dual_migration = migrate_dir(linear, &dual);
    let dual_text = ported(&dual_migration, "linear.cu");
    assert!(dual_text.contains(
        "CUPORT_OPERATOR_LAUNCH_VALUES(cuport_kernel_linear_kernel, (stream), (linear_kernel), (B * T, 128, 0, stream), (static_cast<int64_t>(B * T)), out, inp, weight, bias, C, OC);"
    ), "{dual_text}");
    let dual_out = write_output(&dual_migration);
    let Some(vendor) = cann_vendor() else { return };
    if !require("g++") {
        return;
    }
    for release in RELEASES {
        let migration = migrate_dir(linear, &options(rules.clone(), release));
        let ported_text = ported(&migration, "linear.cu");
        for expected in [
            "int C, int OC, int64_t rows)",
            "aclTensor *cuport_bias = bias == nullptr ? nullptr : cuport_call.tensor(bias, ACL_FLOAT, cuport_dims_bias, 1);",
            "if (cuport_status == 0 && bias != nullptr) {",
            "cuport_kernel_linear_kernel(stream, out, inp, weight, bias, C, OC, static_cast<int64_t>(B * T));",
        ] {
            assert!(ported_text.contains(expected), "{expected}\n{ported_text}");
        }
        if release == RELEASES[0] {
            insta::assert_snapshot!("operator_kernels_linear_cu", ported_text);
        }
        let out = write_output(&migration);
        let errors = syntax_errors(&vendor, release, &out.path().join("tree"), "linear.cu");
        assert!(errors.is_empty(), "CANN {release}:\n{}", errors.join("\n"));
        let Some(hccl) = hccl_includes() else {
            continue;
        };
        let errors = dual_ascend_errors(
            &vendor,
            release,
            &hccl,
            &dual_out.path().join("tree"),
            "linear.cu",
        );
        assert!(errors.is_empty(), "dual, CANN {release}: {errors}");
    }
}

/// g++'s errors on the Ascend path (`CUPORT_BACKEND_ASCEND`) of `file` in
/// the dual-stack tree `root`, against the headers of `release` and HCCL's.
fn dual_ascend_errors(
    vendor: &Path,
    release: &str,
    hccl: &[PathBuf],
    root: &Path,
    file: &str,
) -> String {
    let output = Command::new("g++")
        .args([
            "-std=c++17",
            "-fsyntax-only",
            "-x",
            "c++",
            "-DCUPORT_BACKEND_ASCEND",
        ])
        .arg(format!(
            "-I{}",
            vendor.join(format!("cann-{release}/include")).display()
        ))
        .args(hccl.iter().map(|d| format!("-I{}", d.display())))
        .arg(format!("-I{}", root.display()))
        .arg(root.join(file))
        .output()
        .unwrap();
    if output.status.success() {
        String::new()
    } else {
        String::from_utf8_lossy(&output.stderr).into_owned()
    }
}

/// A folder holding only `STEM.cu` and `STEM.toml` of the CLI's evidence
/// fixtures: the kernels whose rules the evidence tests confirm are the
/// ones whose ports are compiled here.
fn evidence_fixture(stem: &str) -> tempfile::TempDir {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuport_cli/tests/kernels/evidence");
    let dir = tempfile::tempdir().unwrap();
    for ext in ["cu", "toml"] {
        let name = format!("{stem}.{ext}");
        std::fs::copy(from.join(&name), dir.path().join(&name)).unwrap();
    }
    dir
}

/// The CLI's `linear` evidence fixture in a folder of its own: the folder,
/// `linear.cu` as shipped and the rules of `linear.toml`.
fn linear_fixture() -> (tempfile::TempDir, String, Vec<KernelRule>) {
    let shared = evidence_fixture("linear");
    let source = std::fs::read_to_string(shared.path().join("linear.cu")).unwrap();
    let text = std::fs::read_to_string(shared.path().join("linear.toml")).unwrap();
    let (rules, problems) = load_kernel_rules("linear.toml", &text, &table());
    assert!(problems.is_empty(), "{problems:?}");
    (shared, source, rules)
}

/// A launch value the launching function cannot see (linear.cu's
/// `rows = "B * T"` where a second launcher has only the row count: no B,
/// no T): the
/// rule is not applied in that file, the kernel and its launches stay, and
/// CP0037 names the missing name, the function and the launch's line;
/// where both launchers have B and T, it is applied.
#[test]
fn a_launch_value_out_of_scope_at_a_launch_keeps_the_kernel_and_says_what_is_missing() {
    let (shared, source, rules) = linear_fixture();
    let dir = shared.path();
    let second = "\nvoid linear_rows(float* out, const float* inp, const float* weight, int rows, int C, int OC) {\n    linear_kernel<<<rows, 128>>>(out, inp, weight, nullptr, C, OC);\n}\n";
    std::fs::write(dir.join("linear.cu"), format!("{source}{second}")).unwrap();
    let migration = migrate_dir(dir, &options(rules.clone(), RELEASES[2]));
    let ported_text = ported(&migration, "linear.cu");
    assert!(
        ported_text.contains("__global__ void linear_kernel"),
        "{ported_text}"
    );
    assert!(
        !ported_text.contains("cuport_kernel_linear_kernel"),
        "{ported_text}"
    );
    let file = &migration.files[0];
    let launch_line = source.lines().count() + 3;
    let not_applied = file
        .result
        .diagnostics
        .iter()
        .find(|d| d.code == codes::KERNEL_RULE_NOT_APPLIED)
        .expect("a CP0037 on linear_kernel");
    assert_eq!(
        not_applied.message,
        format!("the [[kernel]] rule for `linear_kernel` was not applied: its launch value `rows = B * T` uses `B`, which nothing declares in `linear_rows` before the launch on line {launch_line}, and cuport cannot pass it down: nothing in this file calls `linear_rows`; pass it to that function (or write the launch value over what is there) and run again")
    );
    let fixed = second
        .replace("int rows, int C", "int B, int T, int C")
        .replace("<<<rows,", "<<<B * T,");
    std::fs::write(dir.join("linear.cu"), format!("{source}{fixed}")).unwrap();
    let migration = migrate_dir(dir, &options(rules, RELEASES[2]));
    let ported_text = ported(&migration, "linear.cu");
    assert!(
        ported_text.contains("cuport_kernel_linear_kernel(nullptr, out, inp, weight, nullptr, C, OC, static_cast<int64_t>(B * T));"),
        "{ported_text}"
    );
}

/// A launch value the launching function lacks but each of its callers
/// has (llm.c's `encoder_forward` has no vocabulary size, `gpt2_forward`
/// has): the function takes the names as new parameters, its call passes
/// them, and the port compiles against each release. A caller that lacks
/// them too keeps the kernel, and CP0037 names that call.
#[test]
fn a_launch_value_the_callers_have_is_passed_down_one_function() {
    let (shared, source, rules) = linear_fixture();
    let dir = shared.path();
    let rows = "\nvoid linear_rows(float* out, const float* inp, const float* weight, int rows, int C, int OC) {\n    linear_kernel<<<rows, 128>>>(out, inp, weight, nullptr, C, OC);\n}\n";
    let caller = "void forward(float* out, const float* inp, const float* weight, int C, int OC) {\n    int B = 4, T = 64;\n    linear_rows(out, inp, weight, B * T, C, OC);\n}\n";
    std::fs::write(dir.join("linear.cu"), format!("{source}{rows}{caller}")).unwrap();
    let migration = migrate_dir(dir, &options(rules.clone(), RELEASES[2]));
    let ported_text = ported(&migration, "linear.cu");
    for line in [
        "void linear_rows(float* out, const float* inp, const float* weight, int rows, int C, int OC, int64_t B, int64_t T) {",
        "    cuport_kernel_linear_kernel(nullptr, out, inp, weight, nullptr, C, OC, static_cast<int64_t>(B * T));",
        "    linear_rows(out, inp, weight, B * T, C, OC, B, T);",
    ] {
        assert!(ported_text.contains(line), "{line}\n{ported_text}");
    }
    let note = &migration.files[0]
        .result
        .diagnostics
        .iter()
        .filter(|d| d.code == codes::KERNEL_OPERATOR)
        .map(|d| d.message.as_str())
        .collect::<Vec<_>>();
    assert!(
        note.iter().any(|m| m.ends_with("; `linear_rows` takes `B`, `T` as new parameters (`int64_t B, int64_t T`), which its 1 call(s) in this file pass; a call from another file must pass them too")),
        "{note:#?}"
    );
    assert_port_compiles(dir, &rules, "linear.cu");
    let lacking = "void backward(float* out, const float* inp, const float* weight, int C, int OC, int rows) {\n    linear_rows(out, inp, weight, rows, C, OC);\n}\n";
    let full = format!("{source}{rows}{caller}{lacking}");
    std::fs::write(dir.join("linear.cu"), &full).unwrap();
    let migration = migrate_dir(dir, &options(rules, RELEASES[2]));
    let ported_text = ported(&migration, "linear.cu");
    assert!(
        !ported_text.contains("cuport_kernel_linear_kernel"),
        "{ported_text}"
    );
    let not_applied = migration.files[0]
        .result
        .diagnostics
        .iter()
        .find(|d| d.code == codes::KERNEL_RULE_NOT_APPLIED)
        .expect("a CP0037 on linear_kernel");
    let backward_call = 1 + full
        .lines()
        .position(|l| l.contains("linear_rows(out, inp, weight, rows, C, OC);"))
        .unwrap();
    assert!(
        not_applied.message.contains(&format!("cuport cannot pass it down: its call of `linear_rows` on line {backward_call} has no `B` either")),
        "{}",
        not_applied.message
    );
}

const ADD4: &str = "__global__ void add4_kernel(float4* out, const float4* a, const float4* b, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n / 4) out[i] = make_float4(a[i].x + b[i].x, a[i].y + b[i].y, a[i].z + b[i].z, a[i].w + b[i].w);\n}\nvoid add4(float* out, const float* a, const float* b, int n) {\n    add4_kernel<<<(n / 4 + 255) / 256, 256>>>((float4*) out, (const float4*) a, reinterpret_cast<const float4*>(b), n);\n}\n";

/// A rule computing kernel `name(out, a, b, n)` as aclnnAdd over n floats.
fn add_rule(name: &str) -> String {
    format!(
        r#"
[[kernel]]
name = "{name}"
target = "ascend"
params = ["out", "a", "b", "n"]
tensors = [
    {{ param = "a", role = "input", shape = "n", dtype = "float" }},
    {{ param = "b", role = "input", shape = "n", dtype = "float" }},
    {{ param = "out", role = "output", shape = "n", dtype = "float" }},
]
calls = [{{ operator = "aclnnAdd", args = {{ self = "a", other = "b", alpha = "1", out = "out" }} }}]
"#
    )
}

/// A rule over a kernel that takes `float4*` (llm.c's encoder_forward_kernel3
/// loads 128 bits at a time): the Ascend port has no `float4`, so the
/// function takes the buffers as `void*` (its tensors count floats), the
/// launch's casts to `float4*` go, and the port compiles against each
/// release.
#[test]
fn a_rule_over_vector_pointers_takes_the_buffers_as_void_and_compiles() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("add4.cu"), ADD4).unwrap();
    let (rules, problems) = load_kernel_rules("add4.toml", &add_rule("add4_kernel"), &table());
    assert!(problems.is_empty(), "{problems:?}");
    let migration = migrate_dir(dir.path(), &options(rules.clone(), RELEASES[2]));
    let ported_text = ported(&migration, "add4.cu");
    for line in [
        "aclError cuport_kernel_add4_kernel(aclrtStream cuport_stream, void* out, const void* a, const void* b, int n) {",
        "    cuport_kernel_add4_kernel(nullptr, out, a, b, n);",
    ] {
        assert!(ported_text.contains(line), "{line}\n{ported_text}");
    }
    assert!(!ported_text.contains("float4"), "{ported_text}");
    assert_port_compiles(dir.path(), &rules, "add4.cu");
}

/// Dual-stack: the CUDA launch and the operator call share the arguments,
/// and the Ascend branch has no `float4`, so the kernel stays for every
/// backend and CP0037 says why (a finding of this test: the per-target
/// planning once saw no other site of the file and reported the launch as
/// an operator call).
#[test]
fn dual_stack_keeps_a_kernel_over_vector_pointers_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("add4.cu"), ADD4).unwrap();
    let (rules, problems) = load_kernel_rules("add4.toml", &add_rule("add4_kernel"), &table());
    assert!(problems.is_empty(), "{problems:?}");
    let mut options = MigrateOptions::dual_stack(vec![Target::Ascend, Target::Hip]);
    options.kernel_rules = rules;
    let migration = migrate_dir(dir.path(), &options);
    let text = ported(&migration, "add4.cu");
    assert!(
        text.contains("CUPORT_KERNEL_LAUNCH((add4_kernel)"),
        "{text}"
    );
    assert!(!text.contains("cuport_kernel_add4_kernel"), "{text}");
    let diagnostics = &migration.files[0].result.diagnostics;
    assert!(
        !diagnostics.iter().any(|d| d.code == codes::KERNEL_OPERATOR),
        "{diagnostics:#?}"
    );
    let not_applied = diagnostics
        .iter()
        .find(|d| d.code == codes::KERNEL_RULE_NOT_APPLIED)
        .expect("a CP0037 on add4_kernel");
    assert!(
        not_applied.message.ends_with("its tensor `out` is a `float4*` in the kernel; a dual-stack launch passes the same arguments to the kernel and to the operators, and the target has no `float4` (a one-way port passes the buffer as `void*`)"),
        "{}",
        not_applied.message
    );
}

/// A launch whose cast to `float4*` is part of a larger expression (`(float4*)
/// out + 1` steps in vectors) cannot pass its buffer without the type: the
/// rule is not applied, and CP0037 says which launch and what to do.
#[test]
fn a_vector_cast_inside_an_expression_keeps_the_kernel_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let source = ADD4.replace("((float4*) out,", "((float4*) out + 1,");
    std::fs::write(dir.path().join("add4.cu"), &source).unwrap();
    let (rules, problems) = load_kernel_rules("add4.toml", &add_rule("add4_kernel"), &table());
    assert!(problems.is_empty(), "{problems:?}");
    let migration = migrate_dir(dir.path(), &options(rules, RELEASES[2]));
    let ported_text = ported(&migration, "add4.cu");
    assert!(
        !ported_text.contains("cuport_kernel_add4_kernel"),
        "{ported_text}"
    );
    let diagnostics = &migration.files[0].result.diagnostics;
    let not_applied = diagnostics
        .iter()
        .find(|d| d.code == codes::KERNEL_RULE_NOT_APPLIED)
        .expect("a CP0037 on add4_kernel");
    assert!(
        not_applied.message.ends_with("the launch on line 6 passes `(float4*) out + 1` for its `float4*` tensor `out`; the target has no `float4`, and the cast is part of a larger expression (it steps in vectors); compute the address as a `float*` first"),
        "{}",
        not_applied.message
    );
    assert!(diagnostics
        .iter()
        .any(|d| d.code == codes::LAUNCH_MANUAL && d.cuda_name == "add4_kernel"));
}

const HELPED: &str = "#include <cooperative_groups.h>\n#include <cstdio>\nnamespace cg = cooperative_groups;\n\n__device__ inline float plus(float a, float b) { return a + b; }\n\n__global__ void add_kernel(float* out, const float* a, const float* b, int n) {\n    cg::thread_block block = cg::this_thread_block();\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) out[i] = plus(a[i], b[i]);\n    block.sync();\n}\n\nvoid add(float* out, const float* a, const float* b, int n) {\n    dim3 grid((n + 255) / 256);\n    dim3 block(256);\n    add_kernel<<<grid, block>>>(out, a, b, n);\n    printf(\"%d\\n\", n);\n}\n";

/// What only a replaced kernel needed goes with it: the `__device__`
/// function it called, the `dim3` variables of its launch, and the
/// cooperative-groups include and alias; each says so, and the whole port
/// compiles against each release.
#[test]
fn what_only_a_replaced_kernel_needed_goes_with_it_and_the_port_compiles() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("add.cu"), HELPED).unwrap();
    let (rules, problems) = load_kernel_rules("add.toml", &add_rule("add_kernel"), &table());
    assert!(problems.is_empty(), "{problems:?}");
    let migration = migrate_dir(dir.path(), &options(rules.clone(), RELEASES[2]));
    let text = ported(&migration, "add.cu");
    for gone in ["cooperative_groups", "dim3", "__device__ inline float plus"] {
        assert!(!text.contains(gone), "{gone}\n{text}");
    }
    assert!(
        text.contains("// cuport: `__device__` function `plus` is gone: only kernels that [[kernel]] rules replace with operator calls called it.\n"),
        "{text}"
    );
    assert!(text.contains("void add(float* out, const float* a, const float* b, int n) {\n    cuport_kernel_add_kernel(nullptr, out, a, b, n);\n"), "{text}");
    let notes: Vec<&str> = migration.files[0]
        .result
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    for note in [
        "`dim3 grid` is gone: only the configuration of a launch that became an operator call read it",
        "`dim3 block` is gone: only the configuration of a launch that became an operator call read it",
        "`#include <cooperative_groups.h>` is gone, with any namespace alias of cooperative groups: only kernels that [[kernel]] rules replace with operator calls used the library",
    ] {
        assert!(notes.contains(&note), "{note}\n{notes:#?}");
    }
    assert_port_compiles(dir.path(), &rules, "add.cu");
}

/// A `__device__` function a kept kernel still calls stays, and so do the
/// cooperative groups a kept kernel uses; a `dim3` another launch reads
/// stays too.
#[test]
fn what_kept_code_still_uses_stays() {
    let dir = tempfile::tempdir().unwrap();
    let kept = "\n__global__ void double_kernel(float* x, int n) {\n    cg::thread_block block = cg::this_thread_block();\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] = plus(x[i], x[i]);\n}\nvoid twice(float* x, int n) {\n    dim3 grid((n + 255) / 256);\n    double_kernel<<<grid, 256>>>(x, n);\n}\n";
    let shared_grid = HELPED.replace("    dim3 block(256);\n    add_kernel<<<grid, block>>>(out, a, b, n);", "    dim3 block(256);\n    add_kernel<<<grid, block>>>(out, a, b, n);\n    double_kernel<<<grid, block>>>(out, n);");
    let source = format!(
        "{}{kept}",
        shared_grid.replace(
            "void add(",
            "__global__ void double_kernel(float* x, int n);\nvoid add("
        )
    );
    std::fs::write(dir.path().join("add.cu"), &source).unwrap();
    let (rules, problems) = load_kernel_rules("add.toml", &add_rule("add_kernel"), &table());
    assert!(problems.is_empty(), "{problems:?}");
    let migration = migrate_dir(dir.path(), &options(rules, RELEASES[2]));
    let text = ported(&migration, "add.cu");
    for stays in [
        "#include <cooperative_groups.h>",
        "namespace cg = cooperative_groups;",
        "__device__ inline float plus(float a, float b)",
        "    dim3 grid((n + 255) / 256);\n    dim3 block(256);",
        "    cuport_kernel_add_kernel(nullptr, out, a, b, n);",
    ] {
        assert!(text.contains(stays), "{stays}\n{text}");
    }
}

/// Ports the evidence fixture `STEM.cu` with the rules of `STEM.toml`: the
/// port holds each of `expected` and compiles against the real headers of
/// each release.
fn port_compiles_against_each_release(stem: &str, expected: &[&str]) {
    let shared = evidence_fixture(stem);
    let dir = shared.path();
    let (rules_file, source) = (format!("{stem}.toml"), format!("{stem}.cu"));
    let text = std::fs::read_to_string(dir.join(&rules_file)).unwrap();
    let (rules, problems) = load_kernel_rules(&rules_file, &text, &table());
    assert!(problems.is_empty(), "{problems:?}");
    let migration = migrate_dir(dir, &options(rules.clone(), RELEASES[0]));
    let ported_text = ported(&migration, &source);
    for line in expected {
        assert!(ported_text.contains(line), "{line}\n{ported_text}");
    }
    assert_port_compiles(dir, &rules, &source);
}

/// A scratch tensor (memory of the function's own between two calls)
/// becomes `CuportOpCall::scratch`.
#[test]
fn scratch_tensors_compile_against_the_real_headers_of_each_release() {
    port_compiles_against_each_release(
        "bias_grad",
        &["aclTensor *cuport_column_sums = cuport_call.scratch(ACL_FLOAT, cuport_dims_column_sums, 1);"],
    );
}

/// A value tensor (a host value the function copies into a one-element
/// tensor: aclnnApplyAdamWV2's step, from the launch value `t`) becomes
/// `CuportOpCall::value`, and each launch passes `t`.
#[test]
fn value_tensors_compile_against_the_real_headers_of_each_release() {
    port_compiles_against_each_release(
        "adamw",
        &[
            "aclTensor *cuport_step = cuport_call.value(static_cast<double>(t - 1), ACL_FLOAT, cuport_dims_step, 1);",
            "beta2, c1, c2, eps, weight_decay, static_cast<int64_t>(t));",
        ],
    );
}

/// A bool scratch mask (filled, then its lower triangle cleared) for
/// aclnnScaledMaskedSoftmax.
#[test]
fn a_causal_mask_in_scratch_compiles_against_the_real_headers_of_each_release() {
    port_compiles_against_each_release(
        "causal_softmax",
        &["aclTensor *cuport_future = cuport_call.scratch(ACL_BOOL, cuport_dims_future, 4);"],
    );
}

/// aclnnLayerNormBackward's outputMask becomes an aclBoolArray, and its
/// three gradients go through scratch memory into in-place adds.
#[test]
fn a_layer_norm_gradient_with_an_output_mask_compiles_against_each_release() {
    port_compiles_against_each_release(
        "layernorm_backward",
        &[
            "const bool cuport_a0_outputMask_values[] = {static_cast<bool>(true), static_cast<bool>(true), static_cast<bool>(true)};",
            "aclBoolArray *cuport_a0_outputMask = cuport_call.bools(cuport_a0_outputMask_values, 3);",
            "cuport_mean, cuport_rstd, cuport_w, nullptr, cuport_a0_outputMask, cuport_grad_x, cuport_grad_w, cuport_grad_b,",
        ],
    );
}

fn kernel_and_rule(op: &cuport_rules::kernel_rules::Operator) -> (String, String) {
    let kernel = format!("k_{}", op.name);
    let tensors: Vec<&str> = op
        .params
        .iter()
        .filter(|p| p.role != ParamRole::Attribute)
        .map(|p| p.name.as_str())
        .collect();
    let mut params: Vec<String> = tensors.iter().map(|t| format!("t_{t}")).collect();
    params.push("n".into());
    let decls: Vec<String> = tensors
        .iter()
        .map(|t| format!("float* t_{t}"))
        .chain(["int n".to_owned()])
        .collect();
    let mut source = format!(
        "__global__ void {kernel}({}) {{}}\nvoid launch_{kernel}({}) {{ {kernel}<<<1, 1>>>({}); }}\n",
        decls.join(", "),
        decls.join(", "),
        params.join(", ")
    );
    source.push('\n');
    let mut rule = format!(
        "[[kernel]]\nname = \"{kernel}\"\ntarget = \"ascend\"\nparams = [{}]\ntensors = [\n",
        params
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for param in op.params.iter().filter(|p| p.role != ParamRole::Attribute) {
        let role = if param.role == ParamRole::Input {
            "input"
        } else {
            "output"
        };
        let _ = writeln!(
            rule,
            "    {{ param = \"t_{}\", role = \"{role}\", shape = \"n\", dtype = \"float\" }},",
            param.name
        );
    }
    rule.push_str("]\n");
    let args: Vec<String> = op
        .params
        .iter()
        .map(|p| {
            let value = match (p.role, p.c_type.trim_start_matches("const ").trim()) {
                (ParamRole::Attribute, "aclIntArray*") => "[-1]".to_owned(),
                (ParamRole::Attribute, "aclBoolArray*") => "[true, true, true]".to_owned(),
                (ParamRole::Attribute, "aclDataType") => "float".to_owned(),
                (ParamRole::Attribute, "bool") => "0".to_owned(),
                (ParamRole::Attribute, "char*") => "'tanh'".to_owned(),
                (ParamRole::Attribute, _) => "1".to_owned(),
                _ => format!("t_{}", p.name),
            };
            format!("{} = \"{value}\"", p.name)
        })
        .collect();
    let _ = writeln!(
        rule,
        "calls = [{{ operator = \"{}\", args = {{ {} }} }}]\n",
        op.name,
        args.join(", ")
    );
    (source, rule)
}

#[test]
fn every_operator_row_generates_a_call_that_compiles_against_each_release() {
    let Some(vendor) = cann_vendor() else { return };
    if !require("g++") {
        return;
    }
    let table = table();
    let (mut source, mut rules_text) = (String::new(), String::new());
    for op in &table.operators {
        let (kernel, rule) = kernel_and_rule(op);
        source.push_str(&kernel);
        rules_text.push_str(&rule);
    }
    let (rules, problems) = load_kernel_rules("every.toml", &rules_text, &table);
    assert!(problems.is_empty(), "{problems:?}\n{rules_text}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("every.cu"), &source).unwrap();
    for release in RELEASES {
        let claimed: Vec<KernelRule> = rules
            .iter()
            .filter(|r| {
                table
                    .operator(&r.calls[0].operator)
                    .is_some_and(|op| op.releases.iter().any(|x| x == release))
            })
            .cloned()
            .collect();
        let count = claimed.len();
        let migration = migrate_dir(dir.path(), &options(claimed, release));
        let replaced = ported(&migration, "every.cu")
            .matches("aclError cuport_kernel_")
            .count();
        assert_eq!(
            replaced, count,
            "CANN {release}: every claimed operator is used"
        );
        let out = write_output(&migration);
        let errors = syntax_errors(&vendor, release, &out.path().join("tree"), "every.cu");
        assert!(errors.is_empty(), "CANN {release}:\n{}", errors.join("\n"));
        eprintln!(
            "CANN {release}: {count} operators, each called from a generated function, compile"
        );
    }
}

/// The torch-npu 2.14.0 wheel's include root and its HCCL directory (the
/// dual-stack shim includes `hccl/hccl.h`, which no open CANN repository
/// holds); `tests/corpus/fetch_toolchains.sh` and `.ci/run` set it.
fn hccl_includes() -> Option<Vec<PathBuf>> {
    let Some(root) = std::env::var_os("CUPORT_CANN_2_14_0_INCLUDE").map(PathBuf::from) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CUPORT_CANN_2_14_0_INCLUDE is required in CI (.ci/run sets it)"
        );
        eprintln!("\n!!! SKIPPED: CUPORT_CANN_2_14_0_INCLUDE is not set; the dual-stack Ascend compile check did not run !!!\n");
        return None;
    };
    Some(vec![root.join("third_party/hccl/inc"), root])
}

#[test]
fn dual_stack_keeps_the_kernels_for_cuda_and_calls_the_operators_on_ascend() {
    // Made for the installed HIP, which hipcc checks below.
    let mut options = for_installed_hip(MigrateOptions::dual_stack(vec![
        Target::Ascend,
        Target::Hip,
    ]));
    options.kernel_rules = fixture_rules();
    let migration = migrate_dir(&fixture(), &options);
    let text = ported(&migration, "ops.cu");
    assert!(text.contains("__global__ void gelu_forward_kernel"));
    assert!(text.contains("#if CUPORT_KERNEL_OPERATORS\n// cuport: kernel `gelu_forward_kernel`"));
    assert!(text.contains(
        "CUPORT_OPERATOR_LAUNCH(cuport_kernel_gelu_forward_kernel, (stream), (gelu_forward_kernel), (CEIL_DIV(N, block_size), block_size, 0, stream), out, inp, N);"
    ));
    assert!(migration
        .generated
        .iter()
        .any(|g| g.path == "cuport/cuport_kernel_ops.h"));
    insta::assert_snapshot!("operator_kernels_dual_ops_cu", text);
    let out = write_output(&migration);
    let root = out.path().join("tree");
    if require("hipcc") {
        let hip = Command::new("hipcc")
            .args([
                "-fsyntax-only",
                "--offload-arch=gfx90a",
                "-DCUPORT_BACKEND_HIP",
                "-x",
                "hip",
            ])
            .arg(format!("-I{}", root.display()))
            .arg(root.join("ops.cu"))
            .output()
            .unwrap();
        assert!(
            hip.status.success(),
            "hipcc: {}",
            String::from_utf8_lossy(&hip.stderr)
        );
    }
    // The CUDA path: the launches are CUDA launches again (nvcc from the
    // PyPI wheels, `tests/corpus/fetch_toolchains.sh`).
    if let Some(nvcc) = std::env::var_os("CUPORT_NVCC") {
        let object = out.path().join("ops.o");
        let cuda = Command::new(nvcc)
            .args(["-c", "-o"])
            .arg(&object)
            .arg(root.join("ops.cu"))
            .output()
            .unwrap();
        assert!(
            cuda.status.success(),
            "nvcc: {}",
            String::from_utf8_lossy(&cuda.stderr)
        );
    }
    let (Some(vendor), Some(hccl)) = (cann_vendor(), hccl_includes()) else {
        return;
    };
    for release in RELEASES {
        let errors = dual_ascend_errors(&vendor, release, &hccl, &root, "ops.cu");
        assert!(errors.is_empty(), "CANN {release}: {errors}");
        eprintln!(
            "CANN {release}: the dual-stack source builds its Ascend path with 3 operator kernels"
        );
    }
}

#[test]
fn a_rule_for_one_file_applies_there_only() {
    // Two files of one name in two directories, as llm.c's dev/cuda holds
    // kernels of one name in several files.
    let dir = tempfile::tempdir().unwrap();
    for sub in ["a", "b"] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        std::fs::copy(
            fixture().join("ops.cu"),
            dir.path().join(sub).join("ops.cu"),
        )
        .unwrap();
    }
    let mut rules = fixture_rules();
    for rule in &mut rules {
        // As `cuport kernels` spells a file it was given.
        rule.file = Some("../project/b/ops.cu".to_owned());
    }
    let migration = migrate_dir(dir.path(), &options(rules, "9.1.0"));
    assert!(ported(&migration, "b/ops.cu").contains("aclError cuport_kernel_gelu_forward_kernel("));
    let a = ported(&migration, "a/ops.cu");
    assert!(a.contains("__global__ void gelu_forward_kernel"));
    assert!(!a.contains("cuport_kernel_"));
}
