//! `cuport kernels --verify`: turns each proposed or declared `[[kernel]]`
//! rule into the evidence runner's terms and runs it
//! (cuport_regress::evidence). Opt-in because it compiles and runs code
//! from the scanned tree.
use std::path::Path;

use cuport_analyze::KernelPattern;
use cuport_regress::dtype::DType;
use cuport_regress::evidence::{
    launch_from_source, verify, CallSpec, Evidence, KernelSpec, LaunchSpec, ParamKind, ParamSpec,
    TensorRole, Toolchain, Verdict, RUNNER,
};
use cuport_rules::kernel_rules::{EvidenceVerdict, KernelRule, ParamRole, RuleEvidence};

/// The evidence for `rule` on `kernel` of `file` (whose text is `text`).
pub(crate) fn evidence_for(
    file: &Path,
    text: &str,
    kernel: &KernelPattern,
    rule: &KernelRule,
    tools: &Toolchain,
) -> Evidence {
    match spec_for(file, text, kernel, rule) {
        Ok(spec) => verify(&spec, tools),
        Err(why) => not_run(why),
    }
}

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
    }
}

fn spec_for(
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
            })
            .collect(),
        launch,
    })
}

fn param(rule: &KernelRule, name: &str, c_type: &str) -> Result<ParamSpec, String> {
    let kind = match rule.tensors.iter().find(|t| t.param == name) {
        None => ParamKind::Scalar,
        Some(t) => ParamKind::Tensor {
            role: match t.role {
                ParamRole::Output => TensorRole::Output,
                ParamRole::Input => TensorRole::Input,
                ParamRole::Inout => TensorRole::Inout,
                other => {
                    return Err(format!(
                        "tensor `{name}` has role `{}`; the evidence compares tensors only",
                        other.id()
                    ))
                }
            },
            shape: t.shape.clone(),
            dtype: dtype(&t.dtype).ok_or_else(|| {
                format!(
                    "tensor `{name}` has element type `{}`; the evidence handles float and int",
                    t.dtype
                )
            })?,
        },
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
