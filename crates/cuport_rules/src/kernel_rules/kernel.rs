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
    /// Values the kernel's parameters do not carry but its shapes need
    /// (llm.c's `matmul_forward_kernel4` gets `C` and `OC` but its rows
    /// only through the grid): name = a C++ expression in the scope of
    /// each launch (`BT = "B * T"`). The helper takes each as an extra
    /// `int64_t` parameter after the kernel's, and each launch passes the
    /// expression; a wrong expression fails where the port is compiled.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub launch_values: BTreeMap<String, String>,
    /// Sizes the kernel only handles in whole tiles (`BT = 128`): the
    /// evidence generates a number of tiles for each and multiplies.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub size_multiples: BTreeMap<String, u64>,
    /// Values the evidence gives parameters or launch values instead of
    /// generated ones, as expressions over the others: the kernel's
    /// contract with its callers (llm.c's AdamW takes `beta1_correction`,
    /// which its caller computes as `1 - pow(beta1, t)`), or realistic
    /// hyperparameters (`beta1 = "0.9"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub case_values: BTreeMap<String, String>,
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

/// A pointer parameter of the kernel seen as a tensor: row-major and
/// contiguous from the pointer, or a strided view of it (`strides`,
/// `offset`). One parameter may be seen as several views, each with its
/// own `name` (llm.c's `permute_kernel` reads q, k and v as three
/// interleaved slices of one buffer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KernelTensor {
    /// The name calls bind the tensor by; the parameter's name without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The kernel parameter; empty for a scratch tensor.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub param: String,
    /// What the kernel does with it; a scratch tensor is written by one
    /// call and read by a later one (`inout`, the default for them).
    #[serde(default = "scratch_role")]
    pub role: ParamRole,
    /// Comma-separated extents over the kernel's parameters (`B*T, C`).
    pub shape: String,
    /// Comma-separated element strides, one per extent; row-major without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strides: Option<String>,
    /// Elements from the parameter's pointer to the view's first element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<String>,
    /// The pointer's element type in C (`float`).
    pub dtype: String,
    /// The kernel accepts a null pointer here (a bias it skips when
    /// absent). Calls that bind the tensor must say `when` it is present.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// Memory of the generated function's own (no kernel parameter) that
    /// holds a result between calls: an accumulating kernel (`dbias +=
    /// column sums`) becomes a reduction into scratch and an in-place add.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scratch: bool,
    /// The kernel writes only part of this output (llm.c's causal softmax
    /// leaves the upper triangle): the port writes the operators' values
    /// everywhere, and the evidence compares only what the kernel wrote.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// Its callers give it zeros above the diagonal of its last two axes
    /// (a causal softmax's output): the evidence draws it so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lower_triangular: bool,
    /// A host value (an expression over parameters and launch values) the
    /// function copies into this one-element tensor before the calls: an
    /// operator that takes a scalar as a tensor (aclnnApplyAdamWV2's
    /// `step`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

fn scratch_role() -> ParamRole {
    ParamRole::Inout
}

impl KernelTensor {
    /// The name calls bind the tensor by.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.param)
    }

    /// Whether the tensor is a strided view rather than the row-major
    /// extent of its parameter.
    pub fn is_view(&self) -> bool {
        self.strides.is_some() || self.offset.is_some()
    }
}

/// One operator call: each operator parameter bound to a tensor (by the
/// kernel parameter's name) or to an expression over kernel parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KernelCall {
    pub operator: String,
    pub args: BTreeMap<String, String>,
    /// An optional tensor's name: the call runs only when that pointer is
    /// not null (the kernel's `if (bias != NULL)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// An optional tensor's name: the call runs only when that pointer is
    /// null (the kernel's default, `dlosses != NULL ? ... : 1.0f / (B*T)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unless: Option<String>,
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
    for (i, tensor) in rule.tensors.iter().enumerate() {
        for (kind, message) in tensor_problems(tensor, rule, table) {
            say(kind, message);
        }
        if rule.tensors[..i].iter().any(|t| t.name() == tensor.name()) {
            say(
                DiagKind::Duplicate,
                format!(
                    "two tensors are named `{}` (give each view of a parameter its own `name`)",
                    tensor.name()
                ),
            );
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
    for (kind, message) in launch_value_problems(rule) {
        say(kind, message);
    }
    problems
}

/// Launch values are new names with a C++ expression, and a size multiple
/// names a size the rule has.
fn launch_value_problems(rule: &KernelRule) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (name, text) in &rule.launch_values {
        if rule.params.contains(name) {
            problems.push((
                DiagKind::Duplicate,
                format!("launch value `{name}` is a parameter of the kernel already"),
            ));
        }
        if let Err(err) = names_in(text) {
            problems.push((
                DiagKind::BadTemplate,
                format!("launch value `{name}` = `{text}`: {err}"),
            ));
        }
    }
    for (name, text) in &rule.case_values {
        if !rule.knows(name) {
            problems.push((
                DiagKind::UnknownName,
                format!("case value `{name}` is no parameter or launch value"),
            ));
        }
        for word in words(text) {
            if !rule.knows(&word) && !LAUNCH_FUNCTIONS.contains(&word.as_str()) {
                problems.push((
                    DiagKind::UnknownName,
                    format!("case value `{name}` = `{text}`: `{word}` is not one of its parameters or launch values"),
                ));
            }
        }
    }
    for (name, multiple) in &rule.size_multiples {
        if !rule.knows(name) || *multiple == 0 {
            problems.push((
                DiagKind::UnknownName,
                format!("size multiple `{name} = {multiple}`: name a parameter or launch value and a multiple of at least 1"),
            ));
        }
    }
    problems
}

/// Functions a launch expression may call (`ceil_div(N, 256)`).
const LAUNCH_FUNCTIONS: [&str; 7] = [
    "ceil_div", "CEIL_DIV", "cdiv", "div_ceil", "min", "max", "pow",
];

/// The words of an expression that may be names (numbers and operators
/// left out; `1e-8` is a number).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .filter(|w| w.starts_with(|c: char| c.is_alphabetic() || c == '_'))
        .map(str::to_string)
        .collect()
}

/// A launch names only the kernel's parameters and the launch functions.
fn launch_problems(launch: &KernelLaunch, rule: &KernelRule) -> Vec<Problem> {
    let fields = [
        Some(&launch.grid),
        Some(&launch.block),
        launch.shared.as_ref(),
    ];
    let mut problems = Vec::new();
    for text in fields.into_iter().flatten() {
        for word in words(text) {
            let word = word.as_str();
            let known = rule.knows(word) || LAUNCH_FUNCTIONS.contains(&word) || word == "dim3";
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
    if let Some(value) = &tensor.value {
        problems.extend(value_problems(tensor, value, rule));
    } else if tensor.scratch {
        problems.extend(scratch_problems(tensor));
    } else if tensor.param.is_empty() {
        problems.push((
            DiagKind::MissingField,
            format!(
                "tensor `{}` names no `param` (memory of the function's own is `scratch = true`)",
                tensor.name()
            ),
        ));
    } else if !rule.params.contains(&tensor.param) {
        problems.push((
            DiagKind::UnknownName,
            format!("tensor `{}` is not one of its parameters", tensor.param),
        ));
    }
    if tensor.partial && !matches!(tensor.role, ParamRole::Output | ParamRole::Inout) {
        problems.push((
            DiagKind::Conflict,
            format!(
                "tensor `{}` is `partial` but the kernel does not write it",
                tensor.name()
            ),
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
        &format!("shape of `{}`", tensor.name()),
    ));
    if let Some(strides) = &tensor.strides {
        problems.extend(expression_problems(
            strides,
            rule,
            &format!("strides of `{}`", tensor.name()),
        ));
        let (dims, steps) = (list_len(&tensor.shape), list_len(strides));
        if dims != steps {
            problems.push((
                DiagKind::Conflict,
                format!(
                    "tensor `{}` has {dims} extents and {steps} strides",
                    tensor.name()
                ),
            ));
        }
    }
    if let Some(offset) = &tensor.offset {
        problems.extend(expression_problems(
            offset,
            rule,
            &format!("offset of `{}`", tensor.name()),
        ));
    }
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

/// A value tensor is a named one-element input of no parameter, holding
/// an expression the rule's names make.
fn value_problems(tensor: &KernelTensor, value: &str, rule: &KernelRule) -> Vec<Problem> {
    let mut problems = Vec::new();
    let plain = tensor.name.is_some()
        && tensor.param.is_empty()
        && !tensor.scratch
        && !tensor.optional
        && !tensor.is_view()
        && tensor.role == ParamRole::Input
        && tensor.shape.trim() == "1";
    if !plain {
        problems.push((
            DiagKind::BadName,
            format!(
                "value tensor `{}` needs a `name`, no `param`, the role `input` and the shape `1`",
                tensor.name()
            ),
        ));
    }
    problems.extend(expression_problems(
        value,
        rule,
        &format!("value of `{}`", tensor.name()),
    ));
    problems
}

/// A scratch tensor has a name, no parameter, and is a plain row-major
/// extent (nothing else points into it).
fn scratch_problems(tensor: &KernelTensor) -> Vec<Problem> {
    let mut problems = Vec::new();
    if tensor.name.is_none() || !tensor.param.is_empty() {
        problems.push((
            DiagKind::BadName,
            format!(
                "scratch tensor `{}` needs a `name` and no `param`",
                tensor.name()
            ),
        ));
    }
    if tensor.is_view() || tensor.optional {
        problems.push((
            DiagKind::Conflict,
            format!(
                "scratch tensor `{}` cannot be a view or optional",
                tensor.name()
            ),
        ));
    }
    problems
}

/// How many comma-separated items `B*T, C` has (brackets ignored).
fn list_len(text: &str) -> usize {
    text.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .count()
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
            .filter(|n| !rule.knows(n) && !known(n))
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
    problems.extend(presence_problems(call, rule, &op.name));
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
            Some(value) if is_string_param(&param.c_type) => {
                if string_literal(value).is_none() {
                    problems.push((
                        DiagKind::BadTemplate,
                        format!("{what} takes a string: write it in single quotes (`'tanh'`), not `{value}`"),
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

/// A call's `when` names an optional tensor, and a call that binds an
/// optional tensor runs only when it is present.
fn presence_problems(call: &KernelCall, rule: &KernelRule, operator: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (key, named) in [("when", &call.when), ("unless", &call.unless)] {
        let Some(named) = named else { continue };
        if !rule.tensors.iter().any(|t| t.name() == named && t.optional) {
            problems.push((
                DiagKind::UnknownName,
                format!("`{operator}` runs `{key} = \"{named}\"`, which is no optional tensor of the rule"),
            ));
        }
    }
    for value in call.args.values() {
        let optional = rule.tensors.iter().any(|t| t.name() == value && t.optional);
        if optional && call.when.as_deref() != Some(value) {
            problems.push((
                DiagKind::MissingField,
                format!("`{operator}` binds optional tensor `{value}`: add `when = \"{value}\"` so it runs only when the pointer is not null"),
            ));
        }
    }
    problems
}

/// An operator parameter that takes a C string (`char* approximate`).
pub fn is_string_param(c_type: &str) -> bool {
    matches!(c_type.replace(' ', "").as_str(), "char*" | "constchar*")
}

/// The text of a rule's string value `'tanh'` (None: not quoted, or a
/// character C would need escaped).
pub fn string_literal(value: &str) -> Option<&str> {
    let inner = value.trim().strip_prefix('\'')?.strip_suffix('\'')?;
    inner
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == ' ')
        .then_some(inner)
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
    let Some(tensor) = rule.tensors.iter().find(|t| t.name() == value) else {
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
    /// Whether `name` is a kernel parameter or a launch value, the names
    /// a rule's expressions may use.
    pub fn knows(&self, name: &str) -> bool {
        self.params.iter().any(|p| p == name) || self.launch_values.contains_key(name)
    }

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
