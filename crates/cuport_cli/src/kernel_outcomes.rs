//! What `cuport kernels` and `cuport migrate --verify-kernels` share: each
//! kernel of a set of CUDA sources with the rule recognition proposes for
//! it (or one declared), and the execution evidence for that rule.
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cuport_analyze::{recognise_kernels, Certainty, KernelPattern, Recognised};
use cuport_regress::evidence::{Evidence, Toolchain, Verdict};
use cuport_rules::kernel_rules::{
    check_rule, load_kernel_rules, propose, Confidence, KernelRule, KernelTensor, OperatorTable,
    ParamRole, Proposal,
};
use serde::Serialize;

use crate::kernel_evidence::{not_run, rule_evidence, spec_for};
use crate::output::Output;

/// One kernel's outcome.
#[derive(Debug, Serialize)]
pub(crate) struct KernelOutcome {
    pub(crate) file: String,
    pub(crate) line: u32,
    pub(crate) name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) recognised: Option<Recognised>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rule: Option<KernelRule>,
    /// Why there is no rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) no_rule: Option<String>,
    /// The rule came from `--rules`, not from recognition.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) declared: bool,
    /// The execution evidence (`--verify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) evidence: Option<Evidence>,
    /// Whether a rewrite may apply the rule without review: confirmed, or
    /// declared and not refuted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) applies: Option<bool>,
    /// How far each operator the rule calls is confirmed, where the
    /// target's table was not checked against headers (CNNL).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) unconfirmed: Vec<String>,
    #[serde(skip)]
    kernel: Option<KernelPattern>,
    #[serde(skip)]
    path: PathBuf,
}

/// Every kernel of the CUDA sources under `paths`, with its proposed rule
/// or why it has none.
pub(crate) fn kernel_outcomes(
    paths: &[PathBuf],
    table: &OperatorTable,
) -> anyhow::Result<Vec<KernelOutcome>> {
    let mut outcomes = Vec::new();
    for file in cuda_files(paths)? {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let kernels =
            recognise_kernels(&text).with_context(|| format!("cannot parse {}", file.display()))?;
        let shown = file.display().to_string();
        outcomes.extend(kernels.into_iter().map(|k| {
            let mut o = outcome(&shown, k, table);
            o.path.clone_from(&file);
            o
        }));
    }
    Ok(outcomes)
}

/// Every rule with its evidence, for a rewrite: it applies those
/// confirmed, or declared and not refuted, and says why not for the rest.
pub(crate) fn rules_with_evidence(outcomes: &[KernelOutcome]) -> Vec<KernelRule> {
    outcomes.iter().filter_map(|o| o.rule.clone()).collect()
}

/// The valid `[[kernel]]` rules of `files`; any problem stops the command.
pub(crate) fn declared_rules(
    files: &[PathBuf],
    table: &OperatorTable,
) -> anyhow::Result<Vec<KernelRule>> {
    let mut rules = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let (found, diags) = load_kernel_rules(&file.display().to_string(), &text, table);
        if let Some(first) = diags.first() {
            anyhow::bail!("{first} (check the file with `cuport kernels --to ascend --check`)");
        }
        rules.extend(found);
    }
    Ok(rules)
}

/// Each outcome's rule's operators with their status, where `table` was
/// not checked against the vendor's headers.
pub(crate) fn mark_unconfirmed(outcomes: &mut [KernelOutcome], table: &OperatorTable) {
    if !table.unchecked {
        return;
    }
    for o in outcomes.iter_mut() {
        let Some(rule) = &o.rule else { continue };
        o.unconfirmed = rule
            .calls
            .iter()
            .filter_map(|c| table.operator(&c.operator))
            .map(|op| format!("{} ({}): {}", op.name, op.header, table.status(op)))
            .collect();
    }
}

pub(crate) fn apply_declared(outcomes: &mut [KernelOutcome], declared: &[KernelRule]) {
    for o in outcomes.iter_mut() {
        let found = declared
            .iter()
            .find(|r| r.name == o.name && r.is_for_file(&o.file));
        if let Some(rule) = found {
            // Each kernel's copy names its file: the evidence is for that
            // kernel, and another kernel of the name may differ.
            let mut rule = rule.clone();
            rule.file.get_or_insert_with(|| o.file.clone());
            o.rule = Some(rule);
            o.no_rule = None;
            o.declared = true;
        }
    }
}

/// Runs the evidence for every kernel with a rule: all at once (the
/// runners in parallel, one reference process), then each outcome takes
/// its kernel's evidence; the report says how far each got.
pub(crate) fn verify_all(
    outcomes: &mut [KernelOutcome],
    tools: &Toolchain,
    out: &Output,
) -> anyhow::Result<()> {
    // Per outcome: no rule (None), or the evidence that nothing can run,
    // or a spec whose evidence comes from the batch, in order.
    let mut specs = Vec::new();
    let mut slots: Vec<Option<Option<Evidence>>> = Vec::new();
    for o in outcomes.iter() {
        let (Some(rule), Some(kernel)) = (&o.rule, &o.kernel) else {
            slots.push(None);
            continue;
        };
        out.status(&format!("verifying {} ({}:{})", o.name, o.file, o.line));
        let text = std::fs::read_to_string(&o.path)
            .with_context(|| format!("cannot read {}", o.path.display()))?;
        match spec_for(&o.path, &text, kernel, rule) {
            Ok(spec) => {
                specs.push(spec);
                slots.push(Some(None));
            }
            Err(why) => slots.push(Some(Some(not_run(why)))),
        }
    }
    let mut verified = cuport_regress::evidence::verify_all(&specs, tools).into_iter();
    for (o, slot) in outcomes.iter_mut().zip(slots) {
        let Some(evidence) = slot.and_then(|e| e.or_else(|| verified.next())) else {
            continue;
        };
        o.applies = Some(match evidence.verdict {
            Verdict::Confirmed => true,
            Verdict::Refuted => false,
            Verdict::NotRun => o.declared,
        });
        if let Some(rule) = &mut o.rule {
            rule.evidence = Some(rule_evidence(&evidence));
        }
        o.evidence = Some(evidence);
    }
    Ok(())
}

fn outcome(file: &str, kernel: KernelPattern, table: &OperatorTable) -> KernelOutcome {
    let (rule, no_rule) = match &kernel.recognised {
        None => (
            None,
            kernel
                .unclassified
                .clone()
                .map(|w| format!("unclassified: {w}")),
        ),
        Some(found) => match rule_for(&kernel, found, table, file) {
            Ok(mut rule) => {
                rule.file = Some(file.to_owned());
                (Some(rule), None)
            }
            Err(why) => (None, Some(why)),
        },
    };
    KernelOutcome {
        file: file.to_string(),
        line: kernel.line,
        name: kernel.name.clone(),
        recognised: kernel.recognised.clone(),
        rule,
        no_rule,
        declared: false,
        evidence: None,
        applies: None,
        unconfirmed: Vec::new(),
        kernel: Some(kernel),
        path: PathBuf::from(file),
    }
}

/// The proposed rule, checked like a declared one.
fn rule_for(
    kernel: &KernelPattern,
    found: &Recognised,
    table: &OperatorTable,
    file: &str,
) -> Result<KernelRule, String> {
    let mut slots = found.slots.clone();
    if let Some(dtype) = slots
        .get("out")
        .and_then(|o| element_type(kernel, o))
        .and_then(|t| table.dtype(&t))
    {
        slots.insert("out_dtype".into(), dtype.to_string());
    }
    let tensors = found
        .tensors
        .iter()
        .map(|t| tensor(kernel, t))
        .collect::<Result<Vec<_>, String>>()?;
    let proposal = Proposal {
        kernel: kernel.name.clone(),
        params: kernel.params.iter().map(|p| p.name.clone()).collect(),
        pattern: found.pattern.clone(),
        confidence: confidence(found.certainty),
        reason: found.reason.clone(),
        slots,
        tensors,
    };
    let rule = propose(&proposal, table).map_err(|e| e.to_string())?;
    let at = cuport_rules::Location {
        file: file.to_string(),
        line: kernel.line,
        column: 1,
    };
    let problems = check_rule(&rule, table, &at);
    match problems.first() {
        None => Ok(rule),
        Some(first) => Err(first.message.clone()),
    }
}

fn tensor(kernel: &KernelPattern, t: &cuport_analyze::TensorUse) -> Result<KernelTensor, String> {
    let role = match (t.reads, t.writes) {
        (true, true) => ParamRole::Inout,
        (false, true) => ParamRole::Output,
        _ => ParamRole::Input,
    };
    let shape = t
        .shape
        .clone()
        .ok_or_else(|| format!("the extent of `{}` is not known", t.param))?;
    Ok(KernelTensor {
        name: None,
        param: t.param.clone(),
        role,
        shape,
        strides: None,
        offset: None,
        dtype: element_type(kernel, &t.param).unwrap_or_default(),
        optional: false,
        scratch: false,
        partial: false,
        lower_triangular: false,
        value: None,
    })
}

fn element_type(kernel: &KernelPattern, param: &str) -> Option<String> {
    let p = kernel.params.iter().find(|p| p.name == param)?;
    Some(p.c_type.trim_start_matches("const ").trim().to_string())
}

pub(crate) fn confidence(certainty: Certainty) -> Confidence {
    match certainty {
        Certainty::High => Confidence::High,
        Certainty::Medium => Confidence::Medium,
        Certainty::Low => Confidence::Low,
    }
}

/// Every .cu and .cuh file under `paths`, sorted; a file given by name is
/// taken whatever its extension.
fn cuda_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            collect(path, &mut files)?;
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            anyhow::bail!("{} does not exist", path.display());
        }
    }
    files.sort();
    Ok(files)
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "cu" || e == "cuh") {
            files.push(path);
        }
    }
    Ok(())
}
