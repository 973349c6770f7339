//! `cuport kernels --verify`: turns each proposed or declared `[[kernel]]`
//! rule into the evidence runner's terms and runs it
//! (cuport_regress::evidence). Opt-in because it compiles and runs code
//! from the scanned tree.
use std::path::Path;

use cuport_analyze::KernelPattern;
use cuport_regress::dtype::DType;
use cuport_regress::evidence::{
    launch_from_source, CallSpec, Evidence, KernelSpec, LaunchSpec, ParamKind, ParamSpec,
    ScratchSpec, TensorRole, ValueSpec, Verdict, ViewSpec, RUNNER,
};
use cuport_rules::kernel_rules::{
    list_items, EvidenceVerdict, KernelRule, KernelTensor, ParamRole, RuleEvidence,
};

/// Evidence that says why nothing ran.
pub(crate) fn not_run(why: String) -> Evidence {
    Evidence {
        verdict: Verdict::NotRun,
        why,
        reference: None,
        runner: RUNNER.to_string(),
        tolerance: DType::F32.default_tolerance(),
        launch: String::new(),
        max_abs: 0.0,
        max_rel: 0.0,
        cases: Vec::new(),
        schedule_dependent: Vec::new(),
    }
}

/// What the evidence runner needs to run `rule` on `kernel` of `file`
/// (whose text is `text`), or why it cannot.
pub(crate) fn spec_for(
    file: &Path,
    text: &str,
    kernel: &KernelPattern,
    rule: &KernelRule,
) -> Result<KernelSpec, String> {
    let names: Vec<String> = kernel.params.iter().map(|p| p.name.clone()).collect();
    if names != rule.params {
        return Err(format!(
            "the rule's params ({}) are not the kernel's ({}): the rule is stale",
            rule.params.join(", "),
            names.join(", ")
        ));
    }
    let params = kernel
        .params
        .iter()
        .map(|p| param(rule, &p.name, &p.c_type))
        .collect::<Result<Vec<_>, String>>()?;
    let launch = match &rule.launch {
        Some(l) => LaunchSpec {
            grid: l.grid.clone(),
            block: l.block.clone(),
            shared: l.shared.clone().unwrap_or_else(|| "0".into()),
            origin: "declared in the rule".into(),
        },
        None => launch_from_source(text, &kernel.name, &names).map_err(|e| e.to_string())?,
    };
    Ok(KernelSpec {
        file: file.to_path_buf(),
        kernel: kernel.name.clone(),
        params,
        calls: rule
            .calls
            .iter()
            .map(|c| CallSpec {
                operator: c.operator.clone(),
                args: c.args.clone(),
                when: c.when.as_ref().map(|w| param_of(rule, w)),
                unless: c.unless.as_ref().map(|w| param_of(rule, w)),
            })
            .collect(),
        launch,
        views: views(rule)?,
        launch_values: rule.launch_values.keys().cloned().collect(),
        scratch: scratch(rule)?,
        values: values(rule)?,
        case_values: rule.case_values.clone(),
        size_multiples: rule.size_multiples.clone(),
    })
}

fn values(rule: &KernelRule) -> Result<Vec<ValueSpec>, String> {
    rule.tensors
        .iter()
        .filter_map(|t| t.value.as_ref().map(|v| (t, v)))
        .map(|(t, value)| {
            Ok(ValueSpec {
                name: t.name().to_string(),
                value: value.clone(),
                dtype: dtype(&t.dtype).ok_or_else(|| {
                    format!(
                        "value tensor `{}` has element type `{}`; the evidence handles float and int",
                        t.name(),
                        t.dtype
                    )
                })?,
            })
        })
        .collect()
}

fn scratch(rule: &KernelRule) -> Result<Vec<ScratchSpec>, String> {
    rule.tensors
        .iter()
        .filter(|t| t.scratch)
        .map(|t| {
            let dtype = match t.dtype.trim() {
                "bool" => "bool",
                other => dtype(other)
                    .ok_or_else(|| {
                        format!(
                            "scratch tensor `{}` has element type `{other}`; the evidence handles float, int and bool",
                            t.name()
                        )
                    })?
                    .name(),
            };
            Ok(ScratchSpec {
                name: t.name().to_string(),
                shape: t.shape.clone(),
                dtype: dtype.to_string(),
            })
        })
        .collect()
}

/// The kernel parameter behind a tensor name of the rule.
fn param_of(rule: &KernelRule, tensor: &str) -> String {
    rule.tensors
        .iter()
        .find(|t| t.name() == tensor)
        .map_or_else(|| tensor.to_string(), |t| t.param.clone())
}

/// A parameter seen through strided views (or several of them) is one
/// buffer to the runner, as long as the farthest element a view reaches.
fn is_viewed(rule: &KernelRule, name: &str) -> bool {
    let seen: Vec<&KernelTensor> = rule.tensors.iter().filter(|t| t.param == name).collect();
    seen.len() > 1 || seen.iter().any(|t| t.is_view() || t.name() != name)
}

fn views(rule: &KernelRule) -> Result<Vec<ViewSpec>, String> {
    rule.tensors
        .iter()
        .filter(|t| !t.scratch && t.value.is_none() && is_viewed(rule, &t.param))
        .map(|t| {
            Ok(ViewSpec {
                name: t.name().to_string(),
                param: t.param.clone(),
                role: role(t)?,
                shape: t.shape.clone(),
                strides: t.strides.clone().unwrap_or_else(|| row_major(&t.shape)),
                offset: t.offset.clone().unwrap_or_else(|| "0".into()),
            })
        })
        .collect()
}

/// The row-major strides of `shape` as expressions.
fn row_major(shape: &str) -> String {
    let dims = list_items(shape);
    let mut strides = vec!["1".to_string(); dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = format!("({}) * ({})", strides[i + 1], dims[i + 1]);
    }
    strides.join(", ")
}

/// One past the last element the view reaches from its parameter's
/// pointer: offset + sum of (extent - 1) * stride, plus one.
fn view_end(t: &KernelTensor) -> String {
    let strides = list_items(&t.strides.clone().unwrap_or_else(|| row_major(&t.shape)));
    let mut end = format!("({}) + 1", t.offset.as_deref().unwrap_or("0"));
    for (dim, stride) in list_items(&t.shape).iter().zip(&strides) {
        end.push_str(&format!(" + (({dim}) - 1) * ({stride})"));
    }
    end
}

fn role(t: &KernelTensor) -> Result<TensorRole, String> {
    match t.role {
        ParamRole::Output => Ok(TensorRole::Output),
        ParamRole::Input => Ok(TensorRole::Input),
        ParamRole::Inout => Ok(TensorRole::Inout),
        other => Err(format!(
            "tensor `{}` has role `{}`; the evidence compares tensors only",
            t.name(),
            other.id()
        )),
    }
}

fn param(rule: &KernelRule, name: &str, c_type: &str) -> Result<ParamSpec, String> {
    let seen: Vec<&KernelTensor> = rule.tensors.iter().filter(|t| t.param == name).collect();
    let kind = match seen.first() {
        None => ParamKind::Scalar,
        Some(t) => {
            let roles = seen
                .iter()
                .map(|t| role(t))
                .collect::<Result<Vec<_>, _>>()?;
            let role = if roles.iter().all(|r| *r == roles[0]) {
                roles[0]
            } else {
                TensorRole::Inout
            };
            let shape = if is_viewed(rule, name) {
                seen.iter()
                    .map(|t| view_end(t))
                    .reduce(|a, b| format!("max({a}, {b})"))
                    .unwrap_or_default()
            } else {
                t.shape.clone()
            };
            ParamKind::Tensor {
                role,
                optional: seen.iter().any(|t| t.optional),
                partial: seen.iter().any(|t| t.partial),
                lower_triangular: seen.iter().any(|t| t.lower_triangular),
                shape,
                dtype: dtype(&t.dtype).ok_or_else(|| {
                    format!(
                        "tensor `{name}` has element type `{}`; the evidence handles float and int",
                        t.dtype
                    )
                })?,
            }
        }
    };
    Ok(ParamSpec {
        name: name.to_string(),
        c_type: c_type.to_string(),
        kind,
    })
}

fn dtype(c_type: &str) -> Option<DType> {
    match c_type.trim() {
        "float" => Some(DType::F32),
        "int" => Some(DType::I32),
        _ => None,
    }
}

/// The evidence as the rule file and the reports carry it.
pub(crate) fn rule_evidence(e: &Evidence) -> RuleEvidence {
    let ran = e.verdict != Verdict::NotRun;
    RuleEvidence {
        verdict: match e.verdict {
            Verdict::Confirmed => EvidenceVerdict::Confirmed,
            Verdict::Refuted => EvidenceVerdict::Refuted,
            Verdict::NotRun => EvidenceVerdict::NotRun,
        },
        max_abs: ran.then_some(e.max_abs),
        max_rel: ran.then_some(e.max_rel),
        reference: e.reference.clone(),
        cases: e.cases.len(),
        summary: summary_line(e),
    }
}

/// The verdict, its numbers and where they come from, in words.
fn summary_line(e: &Evidence) -> String {
    if e.verdict == Verdict::NotRun {
        return e.why.clone();
    }
    format!(
        "{}; max abs error {:.3e}, max rel error {:.3e} (vs the reference's float32 output); reference {}; policy: the harness's ratio policy against an f64 oracle (else rtol {:e}, atol {:e}), atol widened by (K-1)·u·max|x| for reductions over K; launch {}",
        e.why,
        e.max_abs,
        e.max_rel,
        e.reference.as_deref().unwrap_or("?"),
        e.tolerance.rtol,
        e.tolerance.atol,
        e.launch
    )
}
