//! The CNNL operator table (`mappings/mlu/operators/`): it loads without
//! problems, every row stands on a cited call (no CNNL header can check
//! it), every recipe calls a row, and a broken row is reported with its
//! file and line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cuport_rules::kernel_rules::{load_kernel_rules, OperatorTable};

#[test]
fn the_cnnl_table_loads_unchecked_with_a_cited_call_per_row() {
    let (table, diags) = OperatorTable::builtin("mlu");
    assert!(diags.is_empty(), "{diags:#?}");
    assert!(
        table.unchecked,
        "no CNNL header was read: the table says so"
    );
    assert!(table.note.is_some());
    assert!(table.operators.len() >= 12, "{}", table.operators.len());
    for op in &table.operators {
        assert_eq!(op.header, "cnnl.h", "{}", op.name);
        assert!(op.releases.is_empty(), "{} claims releases", op.name);
        let source = op.header_sources().next().expect("a source");
        assert_eq!(source.repository, "Cambricon/torch_mlu", "{}", op.name);
        assert_eq!(source.commit.as_deref().map(str::len), Some(40));
        assert!(table.status(op).starts_with("unconfirmed"), "{}", op.name);
        // Every operand a rule binds is an argument of the cited call or
        // of the descriptor calls before it.
        let seen = format!(
            "{} {}",
            op.call.as_deref().unwrap_or_default(),
            op.setup.as_deref().unwrap_or_default()
        );
        let words: Vec<&str> = seen
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .collect();
        for param in &op.params {
            assert!(
                words.contains(&param.name.as_str()),
                "{}: `{}` is not in `{seen}`",
                op.name,
                param.name
            );
        }
    }
    for recipe in &table.recipes {
        for call in &recipe.calls {
            assert!(
                table.operator(&call.operator).is_some(),
                "{}",
                call.operator
            );
        }
    }
    assert_eq!(table.dtype("float"), Some("CNNL_DTYPE_FLOAT"));
    assert!(table.recipe("relu").is_none(), "no cited CNNL relu");
}

const BROKEN: &str = r#"[meta]
target = "mlu"
library = "cnnl"
header-checked = false

[[operator]]
name = "cnnlNoCall"
header = "cnnl.h"
computes = "y = x"
releases = ["1.0"]
params = [{ name = "x", role = "input" }]
source = { repository = "r", path = "p" }

[[operator]]
name = "cnnlFine"
header = "cnnl.h"
computes = "y = x"
releases = []
call = "handle, x_desc, x, y_desc, y"
params = [{ name = "x", role = "input" }, { name = "y", role = "output" }]
source = { repository = "r", path = "p", commit = "c", line = 3 }

[[recipe]]
pattern = "copy"
calls = [{ operator = "cnnlFine", args = { x = "$x", out = "$out" } }]
"#;

#[test]
fn an_unchecked_row_without_its_call_is_reported_at_its_line() {
    let mut table = OperatorTable {
        target: "mlu".into(),
        ..OperatorTable::default()
    };
    let diags = table.add_file("cnnl.toml", BROKEN);
    let rendered: Vec<String> = diags.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!(rendered.join("\n"));
}

const RULES: &str = r#"[[kernel]]
name = "residual"
target = "mlu"
params = ["out", "a", "b", "N"]
tensors = [
    { param = "out", role = "output", shape = "N", dtype = "float" },
    { param = "a", role = "input", shape = "N", dtype = "float" },
    { param = "b", role = "input", shape = "N", dtype = "float" },
]
calls = [{ operator = "cnnlOpTensor", args = { op = "CNNL_OP_TENSOR_ADD", alpha1 = "1", self = "a", alpha2 = "1", other = "b", beta = "0", output = "out" } }]

[[kernel]]
name = "gelu"
target = "mlu"
params = ["out", "inp", "N"]
tensors = [
    { param = "out", role = "output", shape = "N", dtype = "float" },
    { param = "inp", role = "input", shape = "N", dtype = "float" },
]
calls = [{ operator = "aclnnGeluV2", args = { x = "inp", y = "out" } }]
"#;

#[test]
fn a_kernel_rule_may_call_cnnl_operators_and_is_checked_like_any_other() {
    let (table, _) = OperatorTable::builtin("mlu");
    let (rules, diags) = load_kernel_rules("mlu.toml", RULES, &table);
    assert_eq!(rules.len(), 1, "{diags:#?}");
    assert_eq!(rules[0].calls[0].operator, "cnnlOpTensor");
    let rendered: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert_eq!(
        rendered,
        ["mlu.toml:12:1: error[unknown-name]: kernel `gelu`: no mlu operator `aclnnGeluV2`"]
    );
}
