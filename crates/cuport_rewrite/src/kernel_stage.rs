//! The kernel stage: the one place that decides what becomes of each CUDA
//! kernel on each target of a run, from the target's profile and the kernel
//! model the run chose. The planner asks it how to treat a kernel's
//! definition, launches and device names; the result model records its
//! decision per kernel ([`KernelRecord`]) for the reports.
use cuport_analyze::FileAnalysis;
use cuport_model::{Code, KernelModel, LineIndex, SiteKind, Target, TextRange};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diagnostic::Diagnostic;
use crate::operator_helper::Linkage;
use crate::options::MigrateOptions;
use cuport_rules::kernel_rules::{EvidenceVerdict, KernelRule, RuleEvidence};

/// What becomes of one CUDA kernel on one target.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Disposition {
    /// The target compiles CUDA kernels (HIP, MUSA, MACA): the kernel stays,
    /// its device names renamed where the target spells them differently.
    Kept,
    /// The kernel stays in CUDA's shape for the target's SIMT model
    /// (Ascend C SIMT), its device names renamed through the SIMT tables.
    Simt,
    /// Launches call vendor operators instead of the kernel.
    Operator,
    /// The kernel is rewritten by hand in the target's kernel language
    /// (Ascend C vector, BANG C); its definition and launches are manual
    /// diagnostics, with a skeleton on request.
    Skeleton,
}

impl Disposition {
    pub fn id(self) -> &'static str {
        match self {
            Disposition::Kept => "kept",
            Disposition::Simt => "simt",
            Disposition::Operator => "operator",
            Disposition::Skeleton => "skeleton",
        }
    }

    /// Whether the kernel's code is ported with the file (its launches and
    /// device names stay kernel code the target compiles).
    pub fn compiles(self) -> bool {
        matches!(self, Disposition::Kept | Disposition::Simt)
    }
}

/// The disposition of every kernel on `target` in this run: kernels a
/// target compiles (natively or through its SIMT model) stay, the others
/// need a hand port. Operator mappings (a kernel's launches replaced by
/// vendor operators) are decided per kernel by rules, which no run has yet.
pub(crate) fn disposition(options: &MigrateOptions, target: Target) -> Disposition {
    match options.kernel_model(target) {
        KernelModel::Native => Disposition::Kept,
        KernelModel::Simt => Disposition::Simt,
        KernelModel::Port => Disposition::Skeleton,
    }
}

/// What the run's `[[kernel]]` rules say of one kernel on one target.
#[derive(Debug, Clone, Copy)]
pub(crate) enum OperatorMapping<'o> {
    /// No rule names it (or the target has no operator tables).
    None,
    /// A rule maps it, and the selected release has every operator.
    Applies(&'o KernelRule),
    /// A rule names it, but its parameters are not the kernel's.
    Stale(&'o KernelRule),
    /// A rule names it, but running the kernel refuted it.
    Refuted,
    /// A proposed rule whose evidence could not run.
    Unconfirmed,
    /// A rule maps it, but the selected release's headers are not known to
    /// declare this operator with the rule's parameters.
    NotInRelease(&'o str),
}

/// The rule for kernel `name`, whose parameters are named `params` (the
/// last identifier of each declaration; `None` at a launch, where only the
/// count of arguments is known).
pub(crate) fn operator_mapping<'o>(
    options: &'o MigrateOptions,
    target: Target,
    kernel: KernelAt<'_>,
    params: ParamsSeen<'_>,
) -> OperatorMapping<'o> {
    let Some(rule) = options
        .kernel_rules
        .iter()
        .find(|r| r.name == kernel.name && r.target == target.id() && r.is_for_file(kernel.file))
    else {
        return OperatorMapping::None;
    };
    match rule.evidence.as_ref().map(|e| e.verdict) {
        Some(EvidenceVerdict::Refuted) => return OperatorMapping::Refuted,
        // A proposal is applied once confirmed; a declared rule (no
        // confidence) unless refuted.
        Some(EvidenceVerdict::NotRun) if rule.confidence.is_some() => {
            return OperatorMapping::Unconfirmed
        }
        _ => {}
    }
    let matches = match params {
        ParamsSeen::Names(names) => {
            names.len() == rule.params.len() && names.iter().zip(&rule.params).all(|(a, b)| a == b)
        }
        ParamsSeen::Count(count) => count == rule.params.len(),
    };
    if !matches {
        return OperatorMapping::Stale(rule);
    }
    let Some(table) = crate::kernels::operator_table(target) else {
        return OperatorMapping::None;
    };
    // An unchecked table (CNNL) claims no release: nothing to gate by.
    let release = match table.unchecked {
        true => None,
        false => options.sdk_version(target).map(|v| v.to_string()),
    };
    for call in &rule.calls {
        let known = table.operator(&call.operator).is_some_and(|op| {
            release
                .as_ref()
                .is_none_or(|r| op.releases.iter().any(|have| have == r))
        });
        if !known {
            return OperatorMapping::NotInRelease(&call.operator);
        }
    }
    OperatorMapping::Applies(rule)
}

/// Whether kernels that rules map become operator calls on `target`:
/// where the kernel would otherwise be ported by hand, and under Ascend C
/// SIMT too (a vendor operator for a standard operation, SIMT for the
/// rest). A target that compiles CUDA kernels keeps them.
pub(crate) fn takes_operators(options: &MigrateOptions, target: Target) -> bool {
    matches!(
        disposition(options, target),
        Disposition::Skeleton | Disposition::Simt
    )
}

/// Whether rules for `target` become generated code: only against
/// header-checked operator tables, since what calls an unchecked one (CNNL)
/// could not be compile-checked.
pub(crate) fn generates_code(target: Target) -> bool {
    crate::kernels::operator_table(target).is_some_and(|t| !t.unchecked)
}

/// The names a launch value of `rule` uses that nothing declares before
/// `launch` (`V = "V"` where the launching function has no `V`).
pub(crate) fn missing_launch_names<'r>(
    src: &[u8],
    launch: &cuport_analyze::Site,
    rule: &'r KernelRule,
) -> Vec<&'r str> {
    let scope = crate::scope::scope_at(src, launch.range.start);
    let mut missing: Vec<&str> = rule
        .launch_values
        .values()
        .flat_map(|expr| crate::scope::free_names(expr))
        .filter(|name| !scope.names.contains(name))
        .collect();
    missing.sort_unstable();
    missing.dedup();
    missing
}

/// Why a launch of `kernel` among `sites` cannot pass a launch value of
/// `rule`: the first such value, the name it misses, where, and (one-way)
/// why the launching function cannot take the name from its callers
/// (`crate::pass_down`).
fn launch_value_out_of_scope(
    src: &[u8],
    sites: &[cuport_analyze::Site],
    kernel: &str,
    rule: &KernelRule,
    args: LaunchArgs,
) -> Option<String> {
    let launches = sites
        .iter()
        .filter(|s| s.kind == SiteKind::KernelLaunch && s.name == kernel);
    for launch in launches {
        let missing = missing_launch_names(src, launch, rule);
        let Some(&first) = missing.first() else {
            continue;
        };
        let not_passed = match args {
            LaunchArgs::Own => {
                match crate::pass_down::pass_down(src, launch.range.start, missing) {
                    Ok(_) => continue,
                    Err(why) => why,
                }
            }
            LaunchArgs::SharedWithCuda => {
                "a dual-stack port does not add parameters to host functions".to_owned()
            }
        };
        let (value, expr) = rule
            .launch_values
            .iter()
            .find(|(_, expr)| crate::scope::free_names(expr).contains(&first))?;
        let function = crate::scope::scope_at(src, launch.range.start).function;
        let place = function.map_or_else(String::new, |name| format!(" in `{name}`"));
        return Some(format!(
            "its launch value `{value} = {expr}` uses `{first}`, which nothing declares{place} before the launch on line {}, and cuport cannot pass it down: {not_passed}; pass it to that function (or write the launch value over what is there) and run again",
            launch.line
        ));
    }
    None
}

/// How a port passes a launch's arguments to the function that runs a
/// rule's operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LaunchArgs {
    /// One-way: the launch becomes the call, and a cast to a vector
    /// pointer (`(float4*) out`) can go.
    Own,
    /// Dual-stack: the CUDA launch and the call share the argument text,
    /// so a vector-typed tensor would need the vector type on the target.
    SharedWithCuda,
}

/// Why a rule that maps `kernel` cannot be applied in this file, though
/// its operators and parameters match: a launch value out of scope at a
/// launch, or a tensor parameter whose element type the port cannot pass
/// (one with no `aclDataType`, or a vector type where a launch needs it).
/// None when it can.
pub(crate) fn blocked_here(
    src: &[u8],
    sites: &[cuport_analyze::Site],
    kernel: &str,
    rule: &KernelRule,
    target: Target,
    args: LaunchArgs,
) -> Option<String> {
    if let Some(out_of_scope) = launch_value_out_of_scope(src, sites, kernel, rule, args) {
        return Some(out_of_scope);
    }
    let table = crate::kernels::operator_table(target)?;
    tensor_params(src, sites, kernel, rule)
        .into_iter()
        .find_map(|param| match table.vector(&param.element) {
            _ if table.dtype(&param.element).is_some() => None,
            Some(vector) => vector_blocked(src, sites, kernel, &param, &vector.scalar, args),
            None => Some(format!(
                "its tensor `{}` is a `{}*` in the kernel, an element type with no aclDataType (the port has no `{}`); declare the kernel over plain element pointers first",
                param.name, param.element, param.element
            )),
        })
}

/// A tensor parameter of a kernel definition: its position, name and
/// element type.
pub(crate) struct TensorParam {
    pub(crate) index: usize,
    pub(crate) name: String,
    pub(crate) element: String,
}

/// The parameters of `kernel`'s definition that `rule` reads or writes as
/// tensors (not its scratch or value tensors).
pub(crate) fn tensor_params(
    src: &[u8],
    sites: &[cuport_analyze::Site],
    kernel: &str,
    rule: &KernelRule,
) -> Vec<TensorParam> {
    let Some(definition) = sites
        .iter()
        .find(|s| s.kind == SiteKind::KernelDefinition && s.name == kernel)
    else {
        return Vec::new();
    };
    let tensors: Vec<&str> = rule
        .tensors
        .iter()
        .filter(|t| !t.scratch && t.value.is_none())
        .map(|t| t.param.as_str())
        .collect();
    definition
        .args
        .iter()
        .enumerate()
        .filter_map(|(index, range)| {
            let text = String::from_utf8_lossy(src.get(range.start..range.end)?);
            let name = declared_name(&text);
            tensors.contains(&name.as_str()).then(|| TensorParam {
                index,
                element: pointee(&text, &name),
                name,
            })
        })
        .collect()
}

/// The tensors of `rule` that `kernel` takes as vector pointers
/// (`float4*`), which the operator function takes as `void*`.
pub(crate) fn vector_tensors(
    src: &[u8],
    sites: &[cuport_analyze::Site],
    kernel: &str,
    rule: &KernelRule,
    target: Target,
) -> Vec<TensorParam> {
    let Some(table) = crate::kernels::operator_table(target) else {
        return Vec::new();
    };
    tensor_params(src, sites, kernel, rule)
        .into_iter()
        .filter(|p| table.dtype(&p.element).is_none() && table.vector(&p.element).is_some())
        .collect()
}

/// Why a `float4*` tensor cannot be passed: in a dual-stack source at all,
/// one-way where a launch casts to the vector type inside a larger
/// expression.
fn vector_blocked(
    src: &[u8],
    sites: &[cuport_analyze::Site],
    kernel: &str,
    param: &TensorParam,
    scalar: &str,
    args: LaunchArgs,
) -> Option<String> {
    let element = &param.element;
    if args == LaunchArgs::SharedWithCuda {
        return Some(format!(
            "its tensor `{}` is a `{element}*` in the kernel; a dual-stack launch passes the same arguments to the kernel and to the operators, and the target has no `{element}` (a one-way port passes the buffer as `void*`)",
            param.name
        ));
    }
    sites
        .iter()
        .filter(|s| s.kind == SiteKind::KernelLaunch && s.name == kernel)
        .find_map(|launch| {
            let arg = *launch.args.get(param.index)?;
            let entangled = crate::vector_args::vector_arg(src, arg, element)
                == crate::vector_args::VectorArg::Entangled;
            entangled.then(|| {
                let text = String::from_utf8_lossy(src.get(arg.start..arg.end).unwrap_or_default());
                format!(
                    "the launch on line {} passes `{}` for its `{element}*` tensor `{}`; the target has no `{element}`, and the cast is part of a larger expression (it steps in vectors); compute the address as a `{scalar}*` first",
                    launch.line,
                    text.trim(),
                    param.name,
                )
            })
        })
}

/// The element type of pointer parameter `text` named `name`:
/// `const float4* __restrict__ wte` gives `float4`.
fn pointee(text: &str, name: &str) -> String {
    let without_name = text.trim().strip_suffix(name).unwrap_or(text);
    without_name
        .split(|c: char| c == '*' || c == '&' || c.is_whitespace())
        .filter(|word| {
            !matches!(
                *word,
                "" | "const" | "__restrict__" | "__restrict" | "volatile"
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A kernel definition an applied rule replaces with the function that
/// runs its operators: the text from its `__global__` to the end of its
/// body (or declaration).
#[derive(Debug, Clone)]
pub(crate) struct ReplacedKernel<'o> {
    /// Where the kernel's name starts (the definition site's range).
    pub(crate) name_at: usize,
    pub(crate) span: TextRange,
    pub(crate) rule: &'o KernelRule,
    pub(crate) linkage: Linkage,
    /// The target whose operators replace it.
    pub(crate) target: Target,
}

/// The kernels of `analysis` that applied rules replace on `target`: only
/// where the target cannot compile CUDA kernels, and not templates (one
/// function per instantiation would be needed).
pub(crate) fn replaced_kernels<'o>(
    analysis: &FileAnalysis,
    src: &[u8],
    path: &str,
    options: &'o MigrateOptions,
    target: Target,
    args: LaunchArgs,
) -> Vec<ReplacedKernel<'o>> {
    // A dual-stack run asks per target (`options.one_way_to`): its own
    // options plan the CUDA source, which keeps every kernel.
    let one_way = matches!(options.mode, crate::options::Mode::OneWay(_));
    if !one_way
        || !generates_code(target)
        || !takes_operators(options, target)
        || options.kernel_rules.is_empty()
    {
        return Vec::new();
    }
    let globals: Vec<usize> = analysis
        .sites
        .iter()
        .filter(|s| s.kind == SiteKind::Qualifier && s.name == "__global__")
        .map(|s| s.range.start)
        .collect();
    let mut replaced = Vec::new();
    for kernel in analysis
        .sites
        .iter()
        .filter(|s| s.kind == SiteKind::KernelDefinition)
    {
        if kernel.template_args.is_some() {
            continue;
        }
        let names = param_names(src, kernel);
        let OperatorMapping::Applies(rule) = operator_mapping(
            options,
            target,
            KernelAt {
                name: &kernel.name,
                file: path,
            },
            ParamsSeen::Names(&names),
        ) else {
            continue;
        };
        if blocked_here(src, &analysis.sites, &kernel.name, rule, target, args).is_some() {
            continue;
        }
        let Some(&start) = globals.iter().rev().find(|&&g| g < kernel.range.start) else {
            continue;
        };
        let between = src.get(start..kernel.range.start).unwrap_or_default();
        if between
            .iter()
            .any(|b| matches!(b, b';' | b'{' | b'}' | b'#'))
        {
            continue;
        }
        let end = kernel
            .body
            .map_or_else(|| declaration_end(src, kernel), |b| b.end);
        replaced.push(ReplacedKernel {
            name_at: kernel.range.start,
            span: TextRange::new(start, end),
            rule,
            linkage: match kernel.body {
                None => Linkage::Declaration,
                Some(_) if cuport_analyze::is_header_path(path) => Linkage::Header,
                Some(_) => Linkage::Source,
            },
            target,
        });
    }
    replaced
}

/// The parameter names of a kernel definition site.
pub(crate) fn param_names(src: &[u8], kernel: &cuport_analyze::Site) -> Vec<String> {
    kernel
        .args
        .iter()
        .filter_map(|r| src.get(r.start..r.end))
        .map(|b| declared_name(&String::from_utf8_lossy(b)))
        .filter(|n| !n.is_empty())
        .collect()
}

/// After the `;` that ends a kernel's declaration.
fn declaration_end(src: &[u8], kernel: &cuport_analyze::Site) -> usize {
    let from = kernel.args.last().map_or(kernel.range.end, |r| r.end);
    src.get(from..)
        .and_then(|rest| rest.iter().position(|&b| b == b';'))
        .map_or(from, |at| from + at + 1)
}

/// A kernel by name, in the file (relative to the migrated root) where
/// it is defined or launched.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelAt<'k> {
    pub(crate) name: &'k str,
    pub(crate) file: &'k str,
}

/// What is known of a kernel's parameters where it is looked up.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ParamsSeen<'p> {
    Names(&'p [String]),
    Count(usize),
}

/// The name a parameter declaration declares: its last identifier, before
/// any array extent or default value (`const float* __restrict__ inp` →
/// `inp`).
pub(crate) fn declared_name(declaration: &str) -> String {
    let head = declaration.split(['=', '[']).next().unwrap_or(declaration);
    head.rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_owned()
}

/// One kernel as the result model records it: where it is defined, what
/// the run made of it on one target, and the codes of the diagnostics on
/// its definition and body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KernelRecord {
    pub name: String,
    /// 1-based line and byte column of the kernel's name.
    pub line: u32,
    pub column: u32,
    pub target: Target,
    pub disposition: Disposition,
    /// The vendor operators its launches call (disposition `operator`), or
    /// those its rule names for a manual port when no header checked them
    /// (a `skeleton` with CP0038: CNNL).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operators: Vec<String>,
    /// What running the kernel against a reference showed, as the applied
    /// rule records it (`cuport kernels --verify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<RuleEvidence>,
    /// Codes of the diagnostics on the definition and inside the body, in
    /// source order, each once.
    pub diagnostics: Vec<Code>,
}

/// The records of every kernel `analysis` defines, one per kernel and
/// target of the run.
pub(crate) fn kernel_records(
    path: &str,
    analysis: &FileAnalysis,
    lines: &LineIndex,
    diagnostics: &[Diagnostic],
    options: &MigrateOptions,
) -> Vec<KernelRecord> {
    let kernels = analysis
        .sites
        .iter()
        .filter(|s| s.kind == SiteKind::KernelDefinition);
    let mut records = Vec::new();
    for kernel in kernels {
        let at = lines.line_col(kernel.range.start);
        let span = TextRange::new(
            kernel.range.start,
            kernel.body.map_or(kernel.range.end, |b| b.end),
        );
        let mut codes: Vec<Code> = Vec::new();
        for d in diagnostics
            .iter()
            .filter(|d| span.start <= d.range.start && d.range.end <= span.end)
        {
            if !codes.contains(&d.code) {
                codes.push(d.code);
            }
        }
        let replaced = codes.contains(&crate::diagnostic::codes::KERNEL_OPERATOR);
        // A rule naming operators no header checked (CNNL, CP0038): the
        // kernel stays a manual port, but the record names the calls.
        let named = codes.contains(&crate::diagnostic::codes::KERNEL_OPERATOR_UNCHECKED);
        for &target in options.targets() {
            let mut record = KernelRecord {
                name: kernel.name.clone(),
                line: at.line,
                column: at.column,
                target,
                disposition: disposition(options, target),
                operators: Vec::new(),
                evidence: None,
                diagnostics: codes.clone(),
            };
            // Looked up only for a kernel the planner replaced.
            if !((replaced || named) && takes_operators(options, target)) {
                records.push(record);
                continue;
            }
            let mapping = operator_mapping(
                options,
                target,
                KernelAt {
                    name: &kernel.name,
                    file: path,
                },
                ParamsSeen::Count(kernel.args.len()),
            );
            if let OperatorMapping::Applies(rule) = mapping {
                if replaced && generates_code(target) {
                    record.disposition = Disposition::Operator;
                }
                record.operators = rule.calls.iter().map(|c| c.operator.clone()).collect();
                record.evidence.clone_from(&rule.evidence);
            }
            records.push(record);
        }
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pointee_of_a_parameter_is_its_type_without_qualifiers() {
        assert_eq!(pointee("const float4* __restrict__ wte", "wte"), "float4");
        assert_eq!(pointee("float *out", "out"), "float");
        assert_eq!(pointee("const unsigned int* p", "p"), "unsigned int");
    }

    #[test]
    fn the_kernel_model_decides_the_disposition() {
        let mut options = MigrateOptions::new(Target::Ascend);
        assert_eq!(disposition(&options, Target::Ascend), Disposition::Skeleton);
        options
            .kernel_models
            .insert(Target::Ascend, KernelModel::Simt);
        assert_eq!(disposition(&options, Target::Ascend), Disposition::Simt);
        assert_eq!(disposition(&options, Target::Hip), Disposition::Kept);
        assert!(Disposition::Simt.compiles() && !Disposition::Skeleton.compiles());
    }
}
