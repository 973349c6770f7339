//! `[[kernel]]` rules are checked against the built-in operator tables with
//! a file:line:column per problem; a valid rule survives a round trip
//! through the TOML cuport writes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cuport_rules::kernel_rules::{kernel_rules_toml, load_kernel_rules, OperatorTable};

const DECLARED: &str = include_str!("kernel_rules/declared.toml");

#[test]
fn every_problem_of_a_declared_rule_file_is_reported_where_it_is() {
    let (table, _) = OperatorTable::builtin("ascend");
    let (rules, diags) = load_kernel_rules("declared.toml", DECLARED, &table);
    let names: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "residual_forward_kernel",
            "layernorm_forward_kernel",
            "to_half_kernel",
            "to_half_acl_kernel"
        ]
    );
    let rendered: Vec<String> = diags.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!(rendered.join("\n"));
}

#[test]
fn an_unknown_field_is_a_syntax_error_at_its_line() {
    let (table, _) = OperatorTable::builtin("ascend");
    let start = DECLARED.find("# A misspelt field.").expect("typo section");
    let text = &DECLARED[start..];
    let (rules, diags) = load_kernel_rules("typo.toml", text, &table);
    assert!(rules.is_empty());
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0].location.line, 2, "the entry's line: {}", diags[0]);
    assert!(diags[0].message.contains("tensor"), "{}", diags[0]);
}

#[test]
fn written_rules_read_back_unchanged() {
    let (table, _) = OperatorTable::builtin("ascend");
    let (rules, _) = load_kernel_rules("declared.toml", DECLARED, &table);
    let text = kernel_rules_toml(&rules).expect("serialises");
    let (again, diags) = load_kernel_rules("written.toml", &text, &table);
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(again, rules);
}

#[test]
fn a_rule_for_one_file_matches_that_file_by_path_suffix_only() {
    use cuport_rules::kernel_rules::same_file;
    assert!(same_file(
        "../llm.c/train_gpt2_fp32.cu",
        "train_gpt2_fp32.cu"
    ));
    assert!(same_file("dev/cuda/x.cu", "/work/llm.c/dev/cuda/x.cu"));
    assert!(same_file("./a.cu", "a.cu"));
    assert!(!same_file("dev/cuda/x.cu", "other/x.cu"));
    assert!(
        !same_file("bx.cu", "x.cu"),
        "a suffix must start at a path separator"
    );
    let (table, _) = OperatorTable::builtin("ascend");
    let rule = |file: &str| {
        format!(
            "[[kernel]]\nname = \"k\"\nfile = \"{file}\"\ntarget = \"ascend\"\nparams = [\"out\", \"n\"]\ntensors = [{{ param = \"out\", role = \"output\", shape = \"n\", dtype = \"float\" }}]\ncalls = [{{ operator = \"aclnnInplaceFillScalar\", args = {{ selfRef = \"out\", value = \"0\" }} }}]\n"
        )
    };
    let two_files = format!("{}\n{}", rule("a/k.cu"), rule("b/k.cu"));
    let (rules, diags) = load_kernel_rules("two.toml", &two_files, &table);
    assert!(diags.is_empty(), "{diags:?}");
    assert!(rules[0].is_for_file("a/k.cu") && !rules[0].is_for_file("b/k.cu"));
    let same_file_twice = format!("{}\n{}", rule("a/k.cu"), rule("a/k.cu"));
    let (_, diags) = load_kernel_rules("twice.toml", &same_file_twice, &table);
    assert_eq!(diags.len(), 1, "{diags:?}");
}

/// Views of one parameter (llm.c's permute_kernel reads q, k and v from one
/// interleaved buffer): each needs its own name, as many strides as
/// extents, and expressions over the kernel's parameters; a string
/// attribute (`char* approximate`) is written in single quotes.
#[test]
fn views_and_string_attributes_are_checked_where_they_are_written() {
    let text = r#"
[[kernel]]
name = "split_kernel"
target = "ascend"
params = ["left", "right", "pairs", "R", "C"]
tensors = [
    { name = "half", param = "pairs", role = "input", shape = "C, R", strides = "1, 2 * C", dtype = "float" },
    { name = "half", param = "pairs", role = "input", shape = "C, R", strides = "1", offset = "W", dtype = "float" },
    { param = "left", role = "output", shape = "C, R", dtype = "float" },
]
calls = [{ operator = "aclnnInplaceCopy", args = { selfRef = "left", src = "half" } }]

[[kernel]]
name = "gelu_backward_kernel"
target = "ascend"
params = ["dinp", "inp", "dout", "N"]
tensors = [
    { param = "inp", role = "input", shape = "N", dtype = "float" },
    { param = "dout", role = "input", shape = "N", dtype = "float" },
    { param = "dinp", role = "output", shape = "N", dtype = "float" },
]
calls = [{ operator = "aclnnGeluBackwardV2", args = { gradOutput = "dout", self = "inp", approximate = "tanh", gradInput = "dinp" } }]

[[kernel]]
name = "gelu_backward_ok"
target = "ascend"
params = ["dinp", "inp", "dout", "N"]
tensors = [
    { param = "inp", role = "input", shape = "N", dtype = "float" },
    { param = "dout", role = "input", shape = "N", dtype = "float" },
    { param = "dinp", role = "output", shape = "N", dtype = "float" },
]
calls = [{ operator = "aclnnGeluBackwardV2", args = { gradOutput = "dout", self = "inp", approximate = "'tanh'", gradInput = "dinp" } }]
"#;
    insta::assert_snapshot!(checked("views.toml", text, &["gelu_backward_ok"]));
}

/// Launch values (sizes only a launch has) are new names with C++
/// expressions; a size multiple names a size; an optional tensor is bound
/// only by calls that run `when` it is present, and `when` names one.
#[test]
fn launch_values_and_optional_tensors_are_checked_where_they_are_written() {
    let text = r#"
[[kernel]]
name = "linear_bad"
target = "ascend"
params = ["out", "inp", "bias", "C", "OC"]
launch-values = { C = "C", rows = "B * (T" }
size-multiples = { K = 32, OC = 0 }
tensors = [
    { param = "inp", role = "input", shape = "rows, C", dtype = "float" },
    { param = "bias", role = "input", shape = "OC", dtype = "float", optional = true },
    { param = "out", role = "output", shape = "rows, OC", dtype = "float" },
]
calls = [
    { operator = "aclnnAdd", when = "inp", args = { self = "inp", other = "inp", alpha = "1", out = "out" } },
    { operator = "aclnnInplaceAdd", args = { selfRef = "out", other = "bias", alpha = "1" } },
]
launch = { grid = "rows", block = "128" }

[[kernel]]
name = "linear_ok"
target = "ascend"
params = ["out", "inp", "bias", "C", "OC"]
launch-values = { rows = "B * T" }
size-multiples = { rows = 128 }
tensors = [
    { param = "inp", role = "input", shape = "rows, C", dtype = "float" },
    { param = "bias", role = "input", shape = "OC", dtype = "float", optional = true },
    { param = "out", role = "output", shape = "rows, OC", dtype = "float" },
]
calls = [{ operator = "aclnnInplaceAdd", when = "bias", args = { selfRef = "out", other = "bias", alpha = "1" } }]
launch = { grid = "ceil_div(rows, 128)", block = "128" }
"#;
    insta::assert_snapshot!(checked("linear.toml", text, &["linear_ok"]));
}

/// A scratch tensor is named, belongs to no parameter and is a plain
/// extent; a tensor without `scratch` must be a parameter.
#[test]
fn scratch_tensors_are_checked_where_they_are_written() {
    let text = r#"
[[kernel]]
name = "bias_grad_bad"
target = "ascend"
params = ["dbias", "dout", "rows", "cols"]
tensors = [
    { param = "dout", role = "input", shape = "rows, cols", dtype = "float" },
    { param = "dbias", role = "inout", shape = "cols", dtype = "float" },
    { param = "dout", scratch = true, shape = "cols", dtype = "float" },
    { name = "sums", scratch = true, shape = "cols", strides = "2", dtype = "float" },
    { name = "lost", param = "", role = "output", shape = "cols", dtype = "float" },
]
calls = [{ operator = "aclnnReduceSum", args = { self = "dout", dims = "[0]", keepDims = "false", dtype = "float", out = "sums" } }]

[[kernel]]
name = "bias_grad_ok"
target = "ascend"
params = ["dbias", "dout", "rows", "cols"]
tensors = [
    { param = "dout", role = "input", shape = "rows, cols", dtype = "float" },
    { param = "dbias", role = "inout", shape = "cols", dtype = "float" },
    { name = "sums", scratch = true, shape = "cols", dtype = "float" },
]
calls = [
    { operator = "aclnnReduceSum", args = { self = "dout", dims = "[0]", keepDims = "false", dtype = "float", out = "sums" } },
    { operator = "aclnnInplaceAdd", args = { selfRef = "dbias", other = "sums", alpha = "1" } },
]
"#;
    insta::assert_snapshot!(checked("scratch.toml", text, &["bias_grad_ok"]));
}

/// A value tensor is a named one-element input holding an expression of
/// the rule's names; case values name parameters or launch values and use
/// only those and the launch functions (`pow`).
#[test]
fn value_tensors_and_case_values_are_checked_where_they_are_written() {
    let text = r#"
[[kernel]]
name = "adamw_bad"
target = "ascend"
params = ["p", "g", "m", "v", "n", "lr"]
case-values = { k = "2", lr = "sqrt(n)" }
tensors = [
    { param = "p", role = "inout", shape = "n", dtype = "float" },
    { param = "g", role = "input", shape = "n", dtype = "float" },
    { param = "m", role = "inout", shape = "n", dtype = "float" },
    { param = "v", role = "inout", shape = "n", dtype = "float" },
    { name = "step", value = "t", role = "input", shape = "n", dtype = "float" },
]
calls = [{ operator = "aclnnApplyAdamWV2", args = { varRef = "p", mRef = "m", vRef = "v", grad = "g", step = "step", lr = "lr", beta1 = "0.9", beta2 = "0.999", weightDecay = "0", eps = "1e-8", amsgrad = "false", maximize = "false" } }]

[[kernel]]
name = "adamw_ok"
target = "ascend"
params = ["p", "g", "m", "v", "n", "lr"]
launch-values = { t = "t" }
case-values = { t = "3", lr = "1e-3 * pow(2, t)" }
tensors = [
    { param = "p", role = "inout", shape = "n", dtype = "float" },
    { param = "g", role = "input", shape = "n", dtype = "float" },
    { param = "m", role = "inout", shape = "n", dtype = "float" },
    { param = "v", role = "inout", shape = "n", dtype = "float" },
    { name = "step", value = "t", role = "input", shape = "1", dtype = "float" },
]
calls = [{ operator = "aclnnApplyAdamWV2", args = { varRef = "p", mRef = "m", vRef = "v", grad = "g", step = "step", lr = "lr", beta1 = "0.9", beta2 = "0.999", weightDecay = "0", eps = "1e-8", amsgrad = "false", maximize = "false" } }]
"#;
    insta::assert_snapshot!(checked("adamw.toml", text, &["adamw_ok"]));
}

/// Loads `text` as rule file `file`: the rules that load are `valid`; the
/// problems, one per line, for the snapshot.
fn checked(file: &str, text: &str, valid: &[&str]) -> String {
    let (table, _) = OperatorTable::builtin("ascend");
    let (rules, diags) = load_kernel_rules(file, text, &table);
    let names: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, valid);
    let rendered: Vec<String> = diags.iter().map(ToString::to_string).collect();
    rendered.join("\n")
}
