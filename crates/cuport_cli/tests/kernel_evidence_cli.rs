//! `cuport kernels --verify`: evidence by execution (issue 27 item 3). The
//! fixtures' kernels run on the CPU runner and are compared with ONNX
//! Runtime. Needs g++ and a Python with `onnxruntime onnx numpy`
//! (`CUPORT_PYTHON`, else `python3`): without them each test says so and
//! passes, unless `CUPORT_REQUIRE_EVIDENCE=1` (set by .ci/run), where a
//! missing tool fails it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
use std::path::{Path, PathBuf};
use std::process::Command as Std;

use assert_cmd::Command;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/evidence")
}

fn fixture(name: &str) -> String {
    fixtures().join(name).to_string_lossy().into_owned()
}

fn python() -> String {
    std::env::var("CUPORT_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether the tools are here; a loud skip message when not, a failure
/// when CI requires them.
fn tools_available() -> bool {
    let python_ok = Std::new(python())
        .args(["-c", "import numpy, onnx, onnxruntime"])
        .output()
        .is_ok_and(|o| o.status.success());
    let cxx_ok = Std::new("g++")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if python_ok && cxx_ok {
        return true;
    }
    let why = format!(
        "evidence tests need g++ and `{}` with onnxruntime, onnx, numpy (g++: {cxx_ok}, python packages: {python_ok})",
        python()
    );
    assert!(
        std::env::var("CUPORT_REQUIRE_EVIDENCE").as_deref() != Ok("1"),
        "CUPORT_REQUIRE_EVIDENCE=1 but {why}"
    );
    eprintln!("!!! SKIPPED: {why} !!!");
    false
}

fn run(args: &[&str]) -> (String, String, Option<i32>) {
    let mut cmd = Command::cargo_bin("cuport").expect("binary builds");
    // cuport's own runner: HIP-CPU has its own test below.
    let out = cmd
        .env("NO_COLOR", "1")
        .env_remove("HIP_CPU_ROOT")
        .env("CUPORT_PYTHON", python())
        .args(args)
        .output()
        .expect("runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// Name, verdict, case names and each case's pass for every kernel with
/// evidence: the stable part of the report (errors depend on libm).
fn verdicts(json: &str) -> String {
    let kernels: Vec<Value> = serde_json::from_str(json).expect("json");
    let mut lines = Vec::new();
    for k in &kernels {
        let Some(e) = k.get("evidence") else { continue };
        let cases: Vec<String> = e["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|c| format!("{}={}", c["name"].as_str().unwrap(), c["passed"]))
            .collect();
        lines.push(format!(
            "{} ({}): {} [{}] applies={}",
            k["name"].as_str().unwrap(),
            if k.get("declared").is_some() {
                "declared"
            } else {
                "proposed"
            },
            e["verdict"].as_str().unwrap(),
            cases.join(", "),
            k["applies"]
        ));
    }
    lines.join("\n") + "\n"
}

#[test]
fn add_gelu_softmax_and_layer_norm_are_confirmed_by_execution() {
    if !tools_available() {
        return;
    }
    let files = ["add.cu", "gelu.cu", "softmax.cu", "layernorm.cu"].map(fixture);
    let rules = fixture("declared.toml");
    let mut args = vec!["kernels", "--to", "ascend", "--verify", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--rules", &rules]);
    let (json, err, code) = run(&args);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("evidence: 4 confirmed, 0 refuted, 0 not run"),
        "{err}"
    );
    insta::assert_snapshot!(verdicts(&json));
    // Every confirmed output stayed well inside float32 error.
    let kernels: Vec<Value> = serde_json::from_str(&json).unwrap();
    for k in kernels.iter().filter_map(|k| k.get("evidence")) {
        assert!(k["max_rel"].as_f64().unwrap() < 0.05, "{k}");
        assert!(k["reference"].as_str().unwrap().starts_with("onnxruntime "));
    }
}

#[test]
fn a_wrong_declared_mapping_is_refuted_with_the_failing_case() {
    if !tools_available() {
        return;
    }
    let (files, rules) = (
        [fixture("mul.cu"), fixture("gelu.cu")],
        fixture("declared-wrong.toml"),
    );
    let (json, err, code) = run(&[
        "kernels", "--to", "ascend", "--verify", "--format", "json", &files[0], &files[1],
        "--rules", &rules,
    ]);
    assert_eq!(
        code,
        Some(1),
        "a refuted declared rule fails the command: {err}"
    );
    assert!(err.contains("0 confirmed, 2 refuted"), "{err}");
    let kernels: Vec<Value> = serde_json::from_str(&json).unwrap();
    for k in &kernels {
        let why = k["evidence"]["why"].as_str().unwrap();
        assert!(why.starts_with("case `one`"), "{why}");
        assert!(
            why.contains("`out` fails the ratio policy: max_abs"),
            "{why}"
        );
    }
    insta::assert_snapshot!(verdicts(&json));
}

/// One kernel per operator reference.py gained after the elementwise ones
/// (ops.cu, declared in ops.toml): fill, copy, cast to int, row sum, row
/// max, row max with its index (an int output), a 3-D permutation (three
/// size parameters), an embedding gather (indices drawn inside the table),
/// and a matrix product. The AdamW step has no independent reference
/// (ONNX Runtime's CPU build has no optimizer operator): not run.
#[test]
fn every_operator_reference_confirms_a_kernel_that_computes_it() {
    if !tools_available() {
        return;
    }
    let (file, rules) = (fixture("ops.cu"), fixture("ops.toml"));
    let (json, err, code) = run(&[
        "kernels", "--to", "ascend", "--verify", "--format", "json", &file, "--rules", &rules,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("evidence: 9 confirmed, 0 refuted, 1 not run"),
        "{err}"
    );
    insta::assert_snapshot!(verdicts(&json));
    let kernels: Vec<Value> = serde_json::from_str(&json).unwrap();
    let outputs = |name: &str| -> Vec<String> {
        let k = kernels.iter().find(|k| k["name"] == name).unwrap();
        k["evidence"]["cases"][1]["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["tensor"].as_str().unwrap().to_string())
            .collect()
    };
    // The index output is compared too.
    assert_eq!(outputs("row_argmax_kernel"), ["out", "index"]);
    let permute = kernels
        .iter()
        .find(|k| k["name"] == "permute3_kernel")
        .unwrap();
    let sizes = &permute["evidence"]["cases"][1]["sizes"];
    assert!(
        sizes["a"] != sizes["b"] && sizes["b"] != sizes["c"] && sizes["a"] != sizes["c"],
        "distinct extents, so a wrong axis order cannot pass: {sizes}"
    );
}

/// A permutation declared with the wrong axis order and a row sum declared
/// as a mean are refuted; the kernels recognition proposes rules for
/// (fill, copy, cast, row max) are confirmed.
#[test]
fn wrong_permutation_and_reduction_declarations_are_refuted() {
    if !tools_available() {
        return;
    }
    let (file, rules) = (fixture("ops.cu"), fixture("ops-wrong.toml"));
    let (json, err, code) = run(&[
        "kernels", "--to", "ascend", "--verify", "--format", "json", &file, "--rules", &rules,
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("2 refuted"), "{err}");
    let kernels: Vec<Value> = serde_json::from_str(&json).unwrap();
    for name in ["permute3_kernel", "row_sum_kernel"] {
        let k = kernels.iter().find(|k| k["name"] == name).unwrap();
        assert_eq!(k["evidence"]["verdict"], "refuted", "{k}");
        let why = k["evidence"]["why"].as_str().unwrap();
        assert!(why.contains("`out` fails the ratio policy"), "{why}");
    }
    insta::assert_snapshot!(verdicts(&json));
}

#[test]
fn a_missing_reference_stops_before_anything_runs_or_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("rules.toml");
    let add = fixture("add.cu");
    let err = refused_without_python(
        dir.path(),
        &["kernels", "--to", "ascend", "--verify", &add, "--out"],
        &out,
    );
    assert!(err.contains("pip install onnxruntime onnx numpy"), "{err}");
    assert!(err.contains("CUPORT_PYTHON"), "{err}");
    assert!(!out.exists(), "nothing is written when a tool is missing");
}

#[test]
fn help_says_verify_compiles_and_runs_the_scanned_code() {
    let (help, _, code) = run(&["kernels", "--help"]);
    assert_eq!(code, Some(0));
    assert!(help.contains("COMPILES AND RUNS"), "{help}");
}

/// With `HIP_CPU_ROOT` (a HIP-CPU checkout; CI cannot fetch one, so this
/// test only runs where a developer has it), AMD's runtime executes the
/// kernels instead: the same verdicts where it can run them, and "not run"
/// with the compile error where the kernel needs cooperative groups.
#[test]
fn hip_cpu_runs_the_kernels_it_can_and_says_why_not_for_the_rest() {
    let Some(root) = std::env::var_os("HIP_CPU_ROOT") else {
        eprintln!(
            "!!! SKIPPED: HIP_CPU_ROOT is not set (a checkout of github.com/ROCm/HIP-CPU) !!!"
        );
        return;
    };
    if !tools_available() {
        return;
    }
    let files = ["add.cu", "softmax.cu", "layernorm.cu"].map(fixture);
    let rules = fixture("declared.toml");
    let mut cmd = Command::cargo_bin("cuport").expect("binary builds");
    let out = cmd
        .env("HIP_CPU_ROOT", root)
        .env("CUPORT_PYTHON", python())
        .args(["kernels", "--to", "ascend", "--verify", "--format", "json"])
        .args(&files)
        .args(["--rules", &rules])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let kernels: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    for k in &kernels {
        let e = &k["evidence"];
        assert!(e["runner"].as_str().unwrap().starts_with("HIP-CPU"), "{e}");
        let expected = match k["name"].as_str().unwrap() {
            "layernorm_kernel" => "not-run",
            _ => "confirmed",
        };
        assert_eq!(e["verdict"], expected, "{e}");
    }
    let layernorm = kernels
        .iter()
        .find(|k| k["name"] == "layernorm_kernel")
        .unwrap();
    let why = layernorm["evidence"]["why"].as_str().unwrap();
    assert!(why.contains("cooperative_groups"), "{why}");
}

/// `cuport migrate TREE --to ascend --verify-kernels --rules RULES --out OUT`.
fn verify_and_migrate(tree: &Path, rules: &str, out: &Path) -> (String, String, Option<i32>) {
    run(&[
        "migrate",
        tree.to_str().unwrap(),
        "--to",
        "ascend",
        "--verify-kernels",
        "--rules",
        rules,
        "--out",
        out.to_str().unwrap(),
    ])
}

/// `migrate --verify-kernels`: one run recognises, verifies and applies.
/// add_kernel's proposed rule is confirmed and applied; the two wrong
/// declared rules (declared-wrong.toml) are refuted and not applied.
#[test]
fn migrate_verify_kernels_applies_what_is_confirmed_and_nothing_refuted() {
    if !tools_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    for name in ["add.cu", "mul.cu", "gelu.cu"] {
        std::fs::copy(fixtures().join(name), tree.join(name)).unwrap();
    }
    let out = dir.path().join("out");
    let (stdout, err, code) = verify_and_migrate(&tree, &fixture("declared-wrong.toml"), &out);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("kernel evidence: 3 kernels, 1 rules apply"),
        "{err}"
    );
    let add = std::fs::read_to_string(out.join("add.cu")).unwrap();
    assert!(add.contains("aclError cuport_kernel_add_kernel("), "{add}");
    for (file, kernel) in [("mul.cu", "mul_kernel"), ("gelu.cu", "gelu_kernel")] {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        assert!(
            text.contains(&format!("__global__ void {kernel}")),
            "{text}"
        );
        assert!(
            stdout.contains(&format!(
                "the [[kernel]] rule for `{kernel}` was not applied: its evidence refuted it"
            )),
            "{stdout}"
        );
    }
}

#[test]
fn migrate_verify_kernels_without_the_reference_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let err = refused_without_python(
        dir.path(),
        &[
            "migrate",
            fixtures().to_str().unwrap(),
            "--to",
            "ascend",
            "--verify-kernels",
            "--out",
        ],
        &out,
    );
    assert!(err.contains("--verify-kernels cannot run"), "{err}");
    assert!(err.contains("pip install onnxruntime onnx numpy"), "{err}");
    assert!(!out.exists(), "nothing is written when a tool is missing");
}

/// Two kernels of one name in two files, one that accumulates into its
/// output (as llm.c's two `unpermute_kernel_backward`s): a rule declared by
/// name is verified per file, and only the kernel it describes is replaced.
#[test]
fn a_rule_declared_by_name_is_applied_only_where_the_evidence_confirms_it() {
    if !tools_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tree = dir.path().join("tree");
    let add = std::fs::read_to_string(fixtures().join("add.cu")).unwrap();
    for (sub, text) in [
        ("assigns", add.clone()),
        (
            "accumulates",
            add.replace("out[i] = a[i] + b[i];", "out[i] += a[i] + b[i];"),
        ),
    ] {
        std::fs::create_dir_all(tree.join(sub)).unwrap();
        std::fs::write(tree.join(sub).join("add.cu"), text).unwrap();
    }
    let rules = dir.path().join("add.toml");
    std::fs::write(
        &rules,
        "[[kernel]]\nname = \"add_kernel\"\ntarget = \"ascend\"\nparams = [\"out\", \"a\", \"b\", \"n\"]\ntensors = [\n    { param = \"a\", role = \"input\", shape = \"n\", dtype = \"float\" },\n    { param = \"b\", role = \"input\", shape = \"n\", dtype = \"float\" },\n    { param = \"out\", role = \"output\", shape = \"n\", dtype = \"float\" },\n]\ncalls = [{ operator = \"aclnnAdd\", args = { self = \"a\", other = \"b\", alpha = \"1\", out = \"out\" } }]\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let (stdout, err, code) = verify_and_migrate(&tree, rules.to_str().unwrap(), &out);
    assert_eq!(code, Some(0), "{err}");
    let assigns = std::fs::read_to_string(out.join("assigns/add.cu")).unwrap();
    assert!(
        assigns.contains("aclError cuport_kernel_add_kernel("),
        "{assigns}"
    );
    let accumulates = std::fs::read_to_string(out.join("accumulates/add.cu")).unwrap();
    assert!(
        accumulates.contains("__global__ void add_kernel"),
        "{accumulates}"
    );
    assert!(
        stdout.contains("accumulates/add.cu:5:17: manual CP0037: the [[kernel]] rule for `add_kernel` was not applied: its evidence refuted it"),
        "{stdout}"
    );
}

/// Runs `cuport ARGS OUT` with `CUPORT_PYTHON` naming no interpreter under
/// `dir`; checks it exits 2 and returns its stderr.
fn refused_without_python(dir: &std::path::Path, args: &[&str], out: &std::path::Path) -> String {
    let output = Command::cargo_bin("cuport")
        .expect("binary builds")
        .env("CUPORT_PYTHON", dir.join("no-python"))
        .args(args)
        .arg(out)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{err}");
    err
}
