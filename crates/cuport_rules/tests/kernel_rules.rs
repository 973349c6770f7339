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
