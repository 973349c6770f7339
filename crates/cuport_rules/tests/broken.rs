//! Deliberately broken rule files produce precise errors (file:line:column).
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::borrow::Cow;

use cuport_rules::{build, RuleSet, Source};

/// Builds the built-ins plus one broken user file and renders its problems.
fn problems(file: &str) -> String {
    let path = format!("{}/tests/broken/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture exists");
    let mut sources = RuleSet::builtin_sources();
    sources.push(Source {
        name: format!("broken/{file}"),
        text: Cow::Owned(text),
        priority: 1,
        builtin: false,
    });
    let (_, diags) = build(sources);
    diags.iter().map(|d| format!("{d}\n")).collect()
}

#[test]
fn unknown_field() {
    insta::assert_snapshot!(problems("unknown_field.toml"));
}

#[test]
fn duplicate_key() {
    insta::assert_snapshot!(problems("duplicate_key.toml"));
}

#[test]
fn duplicates_conflicts_and_missing_fields() {
    insta::assert_snapshot!(problems("conflicts.toml"));
}

#[test]
fn template_arity_range_and_syntax() {
    insta::assert_snapshot!(problems("templates.toml"));
}

#[test]
fn patterns_shadowing_and_dangling_exceptions() {
    insta::assert_snapshot!(problems("patterns.toml"));
}

#[test]
fn enum_maps_with_gaps() {
    insta::assert_snapshot!(problems("enum_gap.toml"));
}

#[test]
fn rule_codes() {
    insta::assert_snapshot!(problems("bad_code.toml"));
}

#[test]
fn user_file_overrides_builtin_without_a_duplicate_error() {
    let text = "[meta]\ntarget = \"hip\"\nsource = \"test\"\ncode = \"CP9000\"\n\n[[entry]]\ncuda = \"cudaMalloc\"\nstatus = \"renamed\"\nto = \"hipMallocManaged\"\n";
    let mut sources = RuleSet::builtin_sources();
    sources.push(Source {
        name: "user.toml".into(),
        text: Cow::Owned(text.into()),
        priority: 5,
        builtin: false,
    });
    let set = RuleSet::from_sources(sources).expect("valid");
    let r = set
        .lookup(cuport_model::Target::Hip, "cudaMalloc")
        .expect("maps");
    assert_eq!(r.target_name.as_deref(), Some("hipMallocManaged"));
}

#[test]
fn enum_map_values_outside_the_target_enum_and_misplaced_flavour() {
    insta::assert_snapshot!(problems("target_enum.toml"));
}

#[test]
fn names_and_templates_must_be_code_of_the_right_shape() {
    insta::assert_snapshot!(problems("code_generators.toml"));
}

#[test]
fn a_missing_source_is_a_missing_field_with_what_to_write() {
    insta::assert_snapshot!(problems("missing_source.toml"));
}

#[test]
fn included_is_not_a_table_effort() {
    insta::assert_snapshot!(problems("included_effort.toml"));
}

#[test]
fn an_unknown_effort_is_named_with_the_choices() {
    insta::assert_snapshot!(problems("unknown_effort.toml"));
}
