//! `cuport kernels --verify`: evidence by execution (issue 27 item 3). The
//! fixtures' kernels run on the CPU runner and are compared with ONNX
//! Runtime, or with JAX for gradients. Needs g++ and a Python with
//! `onnxruntime onnx numpy` (and `jax` for the gradient tests;
//! `CUPORT_PYTHON`, else `python3`): without them each test says so and
//! passes, unless `CUPORT_REQUIRE_EVIDENCE=1` (set by .ci/run), where a
//! missing tool fails it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
use std::path::{Path, PathBuf};
use std::process::Command as Std;
use std::sync::OnceLock;

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
    // Asked once per test binary: each ask starts Python and imports
    // onnxruntime (about a second of CPU).
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(ask_tools_available)
}

fn ask_tools_available() -> bool {
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
/// a matrix product and an AdamW step (by optax, on JAX).
#[test]
fn every_operator_reference_confirms_a_kernel_that_computes_it() {
    if !jax_available() {
        return;
    }
    let (file, rules) = (fixture("ops.cu"), fixture("ops.toml"));
    let (json, err, code) = run(&[
        "kernels", "--to", "ascend", "--verify", "--format", "json", &file, "--rules", &rules,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("evidence: 10 confirmed, 0 refuted, 0 not run"),
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

/// All kernels of a run share one reference process. A case that the
/// reference cannot compute (here AdamW with amsgrad, which has no JAX
/// form) leaves that kernel not run with the reference's own words; the
/// other nine kernels of the batch are still confirmed.
#[test]
fn a_kernel_the_reference_cannot_compute_does_not_stop_the_others() {
    if !jax_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("ops-amsgrad.toml");
    let text = std::fs::read_to_string(fixture("ops.toml")).unwrap();
    assert!(text.contains("amsgrad = \"false\""));
    std::fs::write(
        &rules,
        text.replace("amsgrad = \"false\"", "amsgrad = \"true\""),
    )
    .unwrap();
    let (json, err, _) = run(&[
        "kernels",
        "--to",
        "ascend",
        "--verify",
        "--format",
        "json",
        &fixture("ops.cu"),
        "--rules",
        rules.to_str().unwrap(),
    ]);
    assert!(
        err.contains("evidence: 9 confirmed, 0 refuted, 1 not run"),
        "{err}"
    );
    let kernels: Vec<Value> = serde_json::from_str(&json).unwrap();
    let adamw = kernels
        .iter()
        .find(|k| k["name"] == "adamw_step_kernel")
        .unwrap();
    let why = adamw["evidence"]["why"].as_str().unwrap();
    assert!(
        why.contains("amsgrad = true has no JAX form"),
        "the reference's own message: {why}"
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

/// Strided views of one parameter (views.cu): two interleaved slices read
/// transposed and two inputs written into the slices of one output are
/// confirmed as declared (views.toml) and refuted with the slices swapped
/// (views-wrong.toml), so a view's offset and strides are checked by
/// execution, not taken on trust.
#[test]
fn strided_views_of_one_parameter_are_confirmed_and_a_swapped_slice_refuted() {
    if !tools_available() {
        return;
    }
    verdicts_for(
        "views.cu",
        &["split_kernel", "join_kernel"],
        &[
            ("views.toml", Some(0), "confirmed"),
            ("views-wrong.toml", Some(1), "refuted"),
        ],
    );
}

/// Runs `cuport kernels --verify` on fixture `file` once per rule file of
/// `expected` (rules, exit status, verdict): every kernel of `kernels`
/// gets that verdict. Returns each run's kernels, in `expected`'s order.
fn verdicts_for(
    file: &str,
    kernels: &[&str],
    expected: &[(&str, Option<i32>, &str)],
) -> Vec<Vec<Value>> {
    let file = fixture(file);
    let mut runs = Vec::new();
    for (rules, code, verdict) in expected {
        let rules = fixture(rules);
        let (json, err, status) = run(&[
            "kernels", "--to", "ascend", "--verify", "--format", "json", &file, "--rules", &rules,
        ]);
        assert_eq!(status, *code, "{rules}: {err}");
        let found: Vec<Value> = serde_json::from_str(&json).unwrap();
        for name in kernels {
            let k = found.iter().find(|k| k["name"] == *name).unwrap();
            assert_eq!(k["evidence"]["verdict"], *verdict, "{rules}: {k}");
        }
        runs.push(found);
    }
    runs
}

/// A kernel over float4 pointers (add4.cu): the runner passes its float
/// buffers as float4, and the rule over n floats is confirmed when n is
/// whole float4s (`size-multiples`); without that, the run stops with the
/// reason before the kernel could read past a buffer.
#[test]
fn a_kernel_over_float4_runs_on_whole_vectors_only() {
    if !tools_available() {
        return;
    }
    let runs = verdicts_for(
        "add4.cu",
        &["add4_kernel"],
        &[
            ("add4.toml", Some(0), "confirmed"),
            ("add4-partial.toml", Some(0), "not-run"),
        ],
    );
    let why = runs[1][0]["evidence"]["why"].as_str().unwrap();
    assert!(
        why.contains("`out` has 1 elements, no multiple of 4 (float4)"),
        "{why}"
    );
}

/// Whether the evidence Python also has JAX (the reference for operators
/// ONNX has no form for); a loud skip when not, a failure when CI requires
/// it (.ci/run installs it).
fn jax_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    tools_available() && *AVAILABLE.get_or_init(ask_jax_available)
}

fn ask_jax_available() -> bool {
    let ok = Std::new(python())
        .args(["-c", "import jax, optax"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let why = format!(
            "gradient and optimizer evidence tests need `{}` with jax and optax",
            python()
        );
        assert!(
            std::env::var("CUPORT_REQUIRE_EVIDENCE").as_deref() != Ok("1"),
            "CUPORT_REQUIRE_EVIDENCE=1 but {why}"
        );
        eprintln!("!!! SKIPPED: {why} !!!");
    }
    ok
}

/// Runs `file` against each rules file and checks the kernel's verdict and
/// that JAX, not ONNX Runtime, was the reference.
fn verdicts_against_jax(file: &str, kernel: &str, expected: &[(&str, Option<i32>, &str)]) {
    for (found, (rules, ..)) in verdicts_for(file, &[kernel], expected).iter().zip(expected) {
        let k = found.iter().find(|k| k["name"] == kernel).unwrap();
        let evidence = &k["evidence"];
        assert!(
            evidence["reference"].as_str().unwrap().starts_with("jax "),
            "{rules}: {k}"
        );
        assert_eq!(evidence["cases"].as_array().unwrap().len(), 4, "{k}");
    }
}

/// A hand-written tanh-gelu gradient (gelu_backward.cu) is confirmed as
/// aclnnGeluBackwardV2 with approximate 'tanh' and refuted with 'none':
/// the reference is jax.vjp of jax.nn.gelu, since ONNX has no gradient.
#[test]
fn a_gelu_gradient_is_confirmed_against_jax_and_the_erf_form_refuted() {
    if !jax_available() {
        return;
    }
    verdicts_against_jax(
        "gelu_backward.cu",
        "gelu_grad",
        &[
            ("gelu_backward.toml", Some(0), "confirmed"),
            ("gelu_backward-wrong.toml", Some(1), "refuted"),
        ],
    );
}

/// A row softmax gradient (softmax_backward.cu) is confirmed as
/// aclnnSoftmaxBackward over the last dimension and refuted over the
/// first; its `output` input is drawn as a softmax output along the
/// declared dimension, the operator's precondition.
#[test]
fn a_softmax_gradient_is_confirmed_against_jax_and_the_wrong_dim_refuted() {
    if !jax_available() {
        return;
    }
    verdicts_against_jax(
        "softmax_backward.cu",
        "softmax_grad_rows",
        &[
            ("softmax_backward.toml", Some(0), "confirmed"),
            ("softmax_backward-wrong.toml", Some(1), "refuted"),
        ],
    );
}

/// An embedding gradient summed per table row (embedding_backward.cu) is
/// confirmed as aclnnEmbeddingDenseBackward with no padding row and
/// refuted with row 0 as the padding row; its indices are drawn inside the
/// table of `numWeights` rows.
#[test]
fn an_embedding_gradient_is_confirmed_against_jax_and_a_padding_row_refuted() {
    if !jax_available() {
        return;
    }
    verdicts_against_jax(
        "embedding_backward.cu",
        "embedding_grad",
        &[
            ("embedding_backward.toml", Some(0), "confirmed"),
            ("embedding_backward-wrong.toml", Some(1), "refuted"),
        ],
    );
}

/// A layer norm's gradient from saved statistics, added to dx, dw and db
/// (layernorm_backward.cu) as aclnnLayerNormBackward into scratch memory
/// and three in-place adds: the evidence draws mean and rstd as the
/// input's own, and JAX differentiates its layer norm there. Confirmed;
/// refuted when the input gradient overwrites dx or the weight is left out.
#[test]
fn a_layer_norm_gradient_is_confirmed_against_jax_and_wrong_rules_refuted() {
    if !jax_available() {
        return;
    }
    verdicts_against_jax(
        "layernorm_backward.cu",
        "layernorm_grad_kernel",
        &[
            ("layernorm_backward.toml", Some(0), "confirmed"),
            ("layernorm_backward-overwrites.toml", Some(1), "refuted"),
            ("layernorm_backward-no-weight.toml", Some(1), "refuted"),
        ],
    );
}

/// Without jax (an import of it that fails, placed first on PYTHONPATH) a
/// rule that needs JAX is "not run" with the pip line, and a rule whose
/// calls all have ONNX forms still runs on ONNX Runtime.
#[test]
fn without_jax_a_gradient_rule_is_not_run_and_names_the_pip_line() {
    if !tools_available() {
        return;
    }
    let fake = tempfile::tempdir().unwrap();
    std::fs::create_dir(fake.path().join("jax")).unwrap();
    std::fs::write(
        fake.path().join("jax/__init__.py"),
        "raise ImportError('no jax here', name='jax')\n",
    )
    .unwrap();
    let (file, rules) = (fixture("gelu_backward.cu"), fixture("gelu_backward.toml"));
    let add = fixture("add.cu");
    let out = Command::cargo_bin("cuport")
        .unwrap()
        .env("NO_COLOR", "1")
        .env_remove("HIP_CPU_ROOT")
        .env("CUPORT_PYTHON", python())
        .env("PYTHONPATH", fake.path())
        .args([
            "kernels", "--to", "ascend", "--verify", "--format", "json", &file, &add, "--rules",
            &rules,
        ])
        .output()
        .unwrap();
    let json = String::from_utf8_lossy(&out.stdout);
    let kernels: Vec<Value> = serde_json::from_str(&json).unwrap();
    let evidence = |name: &str| {
        let k = kernels.iter().find(|k| k["name"] == name).unwrap();
        k["evidence"].clone()
    };
    let gelu = evidence("gelu_grad");
    assert_eq!(gelu["verdict"], "not-run", "{gelu}");
    let why = gelu["why"].as_str().unwrap();
    assert!(
        why.contains("pip install jax==0.10.2 jaxlib==0.10.2"),
        "{why}"
    );
    let add = kernels
        .iter()
        .filter_map(|k| k.get("evidence"))
        .find(|e| e["verdict"] == "confirmed")
        .unwrap_or_else(|| panic!("add.cu's rule is confirmed without jax: {json}"));
    assert!(add["reference"]
        .as_str()
        .unwrap()
        .starts_with("onnxruntime "));
}

/// CUPORT_REFERENCE=jax runs every rule in JAX: the JAX forms of the
/// operators ONNX also has confirm the same kernels (ops.cu: all ten,
/// AdamW by optax; add, gelu and softmax) and refute the same
/// wrong declarations (ops-wrong.toml) as their ONNX forms.
#[test]
fn the_jax_forms_of_the_onnx_operators_give_the_onnx_verdicts() {
    if !jax_available() {
        return;
    }
    let ops = vec![fixture("ops.cu")];
    let fwd: Vec<String> = ["add.cu", "gelu.cu", "softmax.cu"].map(fixture).into();
    let runs = [
        (&ops, "ops.toml", "10 confirmed, 0 refuted, 0 not run"),
        (&ops, "ops-wrong.toml", "4 confirmed, 2 refuted, 0 not run"),
        (&fwd, "declared.toml", "3 confirmed, 0 refuted, 0 not run"),
    ];
    for (inputs, rules, counts) in runs {
        let rules = fixture(rules);
        let mut args = vec!["kernels", "--to", "ascend", "--verify", "--format", "json"];
        args.extend(inputs.iter().map(String::as_str));
        args.extend(["--rules", &rules]);
        let out = Command::cargo_bin("cuport")
            .unwrap()
            .env("NO_COLOR", "1")
            .env_remove("HIP_CPU_ROOT")
            .env("CUPORT_PYTHON", python())
            .env("CUPORT_REFERENCE", "jax")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("evidence: {counts}")),
            "{rules}: {err}"
        );
        let kernels: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        for e in kernels.iter().filter_map(|k| k.get("evidence")) {
            if e["verdict"] != "not-run" {
                assert!(e["reference"].as_str().unwrap().starts_with("jax "), "{e}");
            }
        }
    }
}

/// A launch value and an optional pointer (linear.cu): the rows exist only
/// in the launch, so the cases generate them like a size parameter; one
/// more case passes the bias as null, where the reference leaves out the
/// call that runs `when = "bias"`. Confirmed as declared (linear.toml),
/// refuted with the weight read untransposed (linear-wrong.toml).
#[test]
fn launch_values_and_a_null_bias_are_run_and_a_wrong_layout_refuted() {
    if !tools_available() {
        return;
    }
    let runs = verdicts_for(
        "linear.cu",
        &["linear_kernel"],
        &[
            ("linear.toml", Some(0), "confirmed"),
            ("linear-wrong.toml", Some(1), "refuted"),
        ],
    );
    let confirmed = runs[0]
        .iter()
        .find(|k| k["name"] == "linear_kernel")
        .unwrap();
    let cases = confirmed["evidence"]["cases"].as_array().unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"without-bias"), "{names:?}");
    let odd = cases.iter().find(|c| c["name"] == "odd").unwrap();
    assert!(odd["sizes"]["rows"].as_i64().unwrap() > 1, "{odd}");
}

/// A kernel that accumulates (bias_grad.cu: `dbias[col] += sum`): the rule
/// sums into a scratch tensor and adds it in place, and is confirmed; the
/// rule that lets the sum overwrite dbias is refuted, because the evidence
/// starts an inout tensor with generated values, not zeros.
#[test]
fn an_accumulating_kernel_needs_scratch_and_an_in_place_add() {
    if !tools_available() {
        return;
    }
    verdicts_for(
        "bias_grad.cu",
        &["bias_grad_kernel"],
        &[
            ("bias_grad.toml", Some(0), "confirmed"),
            ("bias_grad-overwrites.toml", Some(1), "refuted"),
        ],
    );
}

/// A causal softmax that writes only the lower triangle (causal_softmax.cu)
/// as aclnnScaledMaskedSoftmax with a mask made in scratch memory (bool,
/// fill then triu): confirmed on the elements the kernel writes
/// (`partial`), refuted when the mask also hides the diagonal.
#[test]
fn a_causal_softmax_is_compared_where_the_kernel_writes_and_a_wrong_mask_refuted() {
    if !tools_available() {
        return;
    }
    verdicts_for(
        "causal_softmax.cu",
        &["causal_softmax_kernel"],
        &[
            ("causal_softmax.toml", Some(0), "confirmed"),
            ("causal_softmax-diagonal.toml", Some(1), "refuted"),
        ],
    );
}

/// One AdamW step (adamw.cu) as aclnnApplyAdamWV2 against optax.adamw:
/// the step tensor is made from the launch value `t` and the bias
/// corrections from t (case-values). Confirmed with the step tensor at
/// t - 1 (the operator's kernel corrects at step + 1); refuted at t (the
/// doc's formula, one step late) and with v left uncorrected.
#[test]
fn an_adamw_step_is_confirmed_against_optax_and_an_off_by_one_step_refuted() {
    if !jax_available() {
        return;
    }
    verdicts_against_jax(
        "adamw.cu",
        "adamw_step_kernel",
        &[
            ("adamw.toml", Some(0), "confirmed"),
            ("adamw-step-off-by-one.toml", Some(1), "refuted"),
            ("adamw-uncorrected.toml", Some(1), "refuted"),
        ],
    );
}

/// The causal softmax's gradient (causal_softmax_backward.cu) as
/// aclnnScaledMaskedSoftmaxBackward: confirmed when the rule states the
/// callers' contract that y is zero above the diagonal
/// (`lower-triangular`), refuted without it (the operator sums whole rows).
#[test]
fn a_causal_softmax_gradient_needs_the_callers_lower_triangular_contract() {
    if !tools_available() {
        return;
    }
    verdicts_for(
        "causal_softmax_backward.cu",
        &["causal_softmax_backward_kernel"],
        &[
            ("causal_softmax_backward.toml", Some(0), "confirmed"),
            ("causal_softmax_backward-full-rows.toml", Some(1), "refuted"),
        ],
    );
}

/// A softmax cross-entropy that writes its gradient over the logits
/// (classifier.cu), with optional probabilities and an optional loss
/// gradient: one-hot labels in scratch from one-element on/off value
/// tensors, calls that run `when` a pointer is given and `unless` it is;
/// confirmed with and without the pointers, refuted when the default scale
/// is wrong (only the case with null pointers can tell).
#[test]
fn a_fused_classifier_runs_its_calls_by_which_pointers_are_given() {
    if !tools_available() {
        return;
    }
    let runs = verdicts_for(
        "classifier.cu",
        &["classifier_kernel"],
        &[
            ("classifier.toml", Some(0), "confirmed"),
            ("classifier-default-scale.toml", Some(1), "refuted"),
        ],
    );
    let refuted = &runs[1][0]["evidence"];
    let why = refuted["why"].as_str().unwrap_or_default();
    assert!(why.contains("without-probs-dlosses"), "{why}");
    // A wrong rule for a kernel without a race: the rerun in the other
    // thread order finds nothing to blame on the kernel.
    assert!(refuted.get("schedule_dependent").is_none(), "{refuted}");
    assert!(!why.contains("data race"), "{why}");
}

/// The same rule for a kernel with llm.c's fused-classifier race
/// (classifier_racy.cu: thread 0 reads the target's logit while another
/// thread overwrites it): refuted, and the refuted cases, run again with
/// each block's threads in the opposite order, give other losses, which
/// the evidence reports as the kernel's own race; the gradients it writes
/// over the logits do not change.
#[test]
fn a_kernel_whose_outputs_depend_on_the_thread_order_is_reported_as_racy() {
    if !tools_available() {
        return;
    }
    let (file, rules) = (
        fixture("classifier_racy.cu"),
        fixture("classifier_racy.toml"),
    );
    let (json, err, status) = run(&[
        "kernels", "--to", "ascend", "--verify", "--format", "json", &file, "--rules", &rules,
    ]);
    assert_eq!(status, Some(1), "{err}");
    let kernels: Vec<Value> = serde_json::from_str(&json).unwrap();
    let evidence = &kernels[0]["evidence"];
    assert_eq!(evidence["verdict"], "refuted", "{evidence}");
    let why = evidence["why"].as_str().unwrap();
    assert!(why.contains("a data race in the kernel"), "{why}");
    let racy: Vec<&str> = evidence["schedule_dependent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        !racy.is_empty() && racy.iter().all(|s| s.contains("`losses`")),
        "{racy:?}"
    );
}
