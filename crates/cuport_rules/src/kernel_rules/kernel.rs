//! `[[kernel]]` rules: what a CUDA kernel computes, as calls of the target's
//! vendor operators. A person declares one in a rule file or `cuport
//! kernels` proposes one from the kernel's body; both are checked here
//! against the operator tables, with file:line:column for every problem.
use std::collections::BTreeMap;

use cuport_model::LineIndex;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::expr::names_in;
use super::operators::{diag, location, syntax_error, OperatorTable, ParamRole};
use crate::diag::{DiagKind, Diagnostic, Location};

/// How sure the recognition that proposed a rule is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Confidence {
    /// A structural guess (loops and accumulations of the right shape).
    Low,
    /// The structure and the arithmetic match, with parts left unchecked.
    Medium,
    /// The stored value was evaluated on probe inputs and equals the pattern.
    High,
}

impl Confidence {
    pub fn id(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// One kernel rule, as written to and read from TOML.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KernelRule {
    /// The `__global__` function's name.
    pub name: String,
    /// The file that defines the kernel, as `cuport kernels` was given it:
    /// the rule applies only to the kernel of that name defined there
    /// (matched by path suffix). Without it, to every kernel of that name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The target whose operators the calls name (`ascend`).
    pub target: String,
    /// The kernel's parameter names in order: shapes and attribute values
    /// may use them, and a rule whose list no longer matches the kernel is
    /// stale.
    pub params: Vec<String>,
    /// The pattern recognition found (`add`, `layer-norm`), on proposals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// Why the kernel computes what the calls compute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The kernel's pointer parameters the calls read or write, as tensors.
    pub tensors: Vec<KernelTensor>,
    /// The operator calls, in order, that together do what one launch does.
    pub calls: Vec<KernelCall>,
    /// How the evidence step launches the kernel; without it, the launch
    /// is read from the kernel's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<KernelLaunch>,
    /// What running the kernel against a reference implementation showed
    /// (`cuport kernels --verify` writes it). A refuted rule is never
    /// applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<RuleEvidence>,
}

/// The outcome of `cuport kernels --verify` for one rule, as the rule file
/// and the reports carry it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RuleEvidence {
    pub verdict: EvidenceVerdict,
    /// Over every generated case and output, against the reference's
    /// float32 output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_abs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rel: Option<f64>,
    /// The reference implementation and its version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// How many generated cases ran.
    #[serde(default)]
    pub cases: usize,
    /// The cases, the tolerance policy and the launch, in words.
    pub summary: String,
}

/// What the evidence decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceVerdict {
    Confirmed,
    Refuted,
    NotRun,
}

/// A launch configuration as expressions over the kernel's parameters
/// (`ceil_div(N, 256)`, `256`, `dim3(32, 4)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KernelLaunch {
    pub grid: String,
    pub block: String,
    /// Dynamic shared memory in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<String>,
}

/// A pointer parameter of the kernel seen as a tensor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KernelTensor {
    pub param: String,
    pub role: ParamRole,
    /// Comma-separated extents over the kernel's parameters (`B*T, C`).
    pub shape: String,
    /// The pointer's element type in C (`float`).
    pub dtype: String,
}

/// One operator call: each operator parameter bound to a tensor (by the
/// kernel parameter's name) or to an expression over kernel parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KernelCall {
    pub operator: String,
    pub args: BTreeMap<String, String>,
}

/// A file's `[[kernel]]` entries; every other key belongs to other readers
/// (rule-file entries, cuport.toml settings). Entries are read one by one so
/// that one malformed entry costs only itself.
#[derive(Debug, Deserialize)]
struct KernelSection {
    #[serde(default)]
    kernel: Vec<Spanned<toml::Value>>,
}

/// The file's valid kernel rules and the problems of the others.
pub fn load_kernel_rules(
    file: &str,
    text: &str,
    table: &OperatorTable,
) -> (Vec<KernelRule>, Vec<Diagnostic>) {
    let index = LineIndex::new(text.as_bytes());
    let at = |offset: usize| location(file, &index, offset);
    let section: KernelSection = match toml::from_str(text) {
        Ok(section) => section,
        Err(err) => return (Vec::new(), vec![syntax_error(&at, &err)]),
    };
    let mut rules: Vec<KernelRule> = Vec::new();
    let mut diags = Vec::new();
    for spanned in section.kernel {
        let place = at(spanned.span().start);
        let rule = match KernelRule::deserialize(spanned.into_inner()) {
            Ok(rule) => rule,
            Err(err) => {
                diags.push(diag(place, DiagKind::Syntax, err.message().to_string()));
                continue;
            }
        };
        let mut found = check_rule(&rule, table, &place);
        if rules
            .iter()
            .any(|r| r.name == rule.name && r.file == rule.file)
        {
            found.push(diag(
                place,
                DiagKind::Duplicate,
                format!("kernel `{}` has two rules for the same file", rule.name),
            ));
        }
        if found.is_empty() {
            rules.push(rule);
        }
        diags.extend(found);
    }
    (rules, diags)
}

/// The problems of one rule (none: every call is complete and every name
/// it uses exists).
pub fn check_rule(rule: &KernelRule, table: &OperatorTable, at: &Location) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    let mut say = |kind: DiagKind, message: String| {
        problems.push(diag(
            at.clone(),
            kind,
            format!("kernel `{}`: {message}", rule.name),
        ));
    };
    if rule.target != table.target {
        say(
            DiagKind::Conflict,
            format!(
                "target `{}`, but these operators are {}'s",
                rule.target, table.target
            ),
        );
    }
    for tensor in &rule.tensors {
        for (kind, message) in tensor_problems(tensor, rule, table) {
            say(kind, message);
        }
    }
    if rule.calls.is_empty() {
        say(DiagKind::MissingField, "no operator call".into());
    }
    for call in &rule.calls {
        for (kind, message) in call_problems(call, rule, table) {
            say(kind, message);
        }
    }
    if let Some(launch) = &rule.launch {
        for (kind, message) in launch_problems(launch, rule) {
            say(kind, message);
        }
    }
    problems
}

/// Functions a launch expression may call (`ceil_div(N, 256)`).
const LAUNCH_FUNCTIONS: [&str; 6] = ["ceil_div", "CEIL_DIV", "cdiv", "div_ceil", "min", "max"];

/// A launch names only the kernel's parameters and the launch functions.
fn launch_problems(launch: &KernelLaunch, rule: &KernelRule) -> Vec<Problem> {
    let fields = [
        Some(&launch.grid),
        Some(&launch.block),
        launch.shared.as_ref(),
    ];
    let mut problems = Vec::new();
    for text in fields.into_iter().flatten() {
        let words = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .filter(|w| w.starts_with(|c: char| c.is_alphabetic() || c == '_'));
        for word in words {
            let known = rule.params.iter().any(|p| p == word)
                || LAUNCH_FUNCTIONS.contains(&word)
                || word == "dim3";
            if !known {
                problems.push((
                    DiagKind::UnknownName,
                    format!("launch `{text}`: `{word}` is not one of its parameters"),
                ));
            }
        }
    }
    problems
}

type Problem = (DiagKind, String);

fn tensor_problems(
    tensor: &KernelTensor,
    rule: &KernelRule,
    table: &OperatorTable,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    if !rule.params.contains(&tensor.param) {
        problems.push((
            DiagKind::UnknownName,
            format!("tensor `{}` is not one of its parameters", tensor.param),
        ));
    }
    if !tensor.role.is_tensor() {
        problems.push((
            DiagKind::BadName,
            format!("tensor `{}` has the role `attribute`", tensor.param),
        ));
    }
    problems.extend(expression_problems(
        &tensor.shape,
        rule,
        &format!("shape of `{}`", tensor.param),
    ));
    if table.dtype(&tensor.dtype).is_none() {
        problems.push((
            DiagKind::UnknownName,
            format!(
                "tensor `{}`: no {} dtype for `{}`",
                tensor.param, table.target, tensor.dtype
            ),
        ));
    }
    problems
}

fn expression_problems(text: &str, rule: &KernelRule, what: &str) -> Vec<Problem> {
    names_problems(text, rule, what, |_| false)
}

/// The problems of an expression whose names must be the rule's
/// parameters, or names `known` accepts (a vendor's enum constants).
fn names_problems(
    text: &str,
    rule: &KernelRule,
    what: &str,
    known: impl Fn(&str) -> bool,
) -> Vec<Problem> {
    match names_in(text) {
        Err(err) => vec![(DiagKind::BadTemplate, format!("{what} `{text}`: {err}"))],
        Ok(names) => names
            .into_iter()
            .filter(|n| !rule.params.contains(n) && !known(n))
            .map(|n| {
                (
                    DiagKind::UnknownName,
                    format!("{what} uses `{n}`, not a parameter"),
                )
            })
            .collect(),
    }
}

fn call_problems(call: &KernelCall, rule: &KernelRule, table: &OperatorTable) -> Vec<Problem> {
    let Some(op) = table.operator(&call.operator) else {
        return vec![(
            DiagKind::UnknownName,
            format!("no {} operator `{}`", table.target, call.operator),
        )];
    };
    let mut problems: Vec<Problem> = call
        .args
        .keys()
        .filter(|arg| op.param(arg).is_none())
        .map(|arg| {
            (
                DiagKind::UnknownName,
                format!("`{}` has no parameter `{arg}`", op.name),
            )
        })
        .collect();
    for param in &op.params {
        let what = format!("`{}` of `{}`", param.name, op.name);
        match call.args.get(&param.name) {
            None if param.optional => {}
            None => problems.push((DiagKind::MissingField, format!("{what} is not bound"))),
            Some(value) if param.role.is_tensor() => {
                problems.extend(tensor_binding_problems(value, param.role, rule, &what));
            }
            Some(value) if is_dtype_param(&param.c_type) => {
                if !table.is_dtype(value) {
                    problems.push((
                        DiagKind::UnknownName,
                        format!("{what} is `{value}`, not an element type of the tables (a C type such as `float`, or its `ACL_*` name)"),
                    ));
                }
            }
            Some(value) => {
                problems.extend(names_problems(value, rule, &what, |n| table.is_constant(n)))
            }
        }
    }
    problems
}

/// An operator parameter that takes an element type (`aclDataType`).
fn is_dtype_param(c_type: &str) -> bool {
    c_type.trim().trim_start_matches("const ").trim() == "aclDataType"
}

/// A tensor parameter takes one of the rule's tensors, and an operator
/// that writes it needs a tensor the kernel writes.
fn tensor_binding_problems(
    value: &str,
    role: ParamRole,
    rule: &KernelRule,
    what: &str,
) -> Vec<Problem> {
    let Some(tensor) = rule.tensors.iter().find(|t| t.param == value) else {
        return vec![(
            DiagKind::UnknownName,
            format!("{what} is `{value}`, not one of its tensors"),
        )];
    };
    let writes = matches!(role, ParamRole::Output | ParamRole::Inout);
    let written = matches!(tensor.role, ParamRole::Output | ParamRole::Inout);
    if writes && !written {
        return vec![(
            DiagKind::Conflict,
            format!(
                "{what} is written, but tensor `{value}` is an {}",
                tensor.role.id()
            ),
        )];
    }
    Vec::new()
}

/// The rules as a TOML document of `[[kernel]]` entries.
pub fn kernel_rules_toml(rules: &[KernelRule]) -> Result<String, toml::ser::Error> {
    #[derive(Serialize)]
    struct Out<'a> {
        kernel: &'a [KernelRule],
    }
    toml::to_string(&Out { kernel: rules })
}

impl KernelRule {
    /// Whether the rule is for the kernel of its name defined in `file`
    /// (a path as the run spells it: relative to the migrated root, or as
    /// `cuport kernels` was given it).
    pub fn is_for_file(&self, file: &str) -> bool {
        self.file.as_deref().is_none_or(|own| same_file(own, file))
    }
}

/// Whether two spellings of a path name the same file: equal, or one ends
/// with the other after a `/` (`../llm.c/train.cu` and `train.cu`).
pub fn same_file(a: &str, b: &str) -> bool {
    let (a, b) = (a.replace('\\', "/"), b.replace('\\', "/"));
    let (a, b) = (a.trim_start_matches("./"), b.trim_start_matches("./"));
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}
