//! `cuport kernels`: recognise what each CUDA kernel of a tree computes from
//! its body and propose `[[kernel]]` rules mapping it to the target's vendor
//! operators (docs/kernel-rules.md); `--check FILE` validates declared rules.
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use cuport_analyze::{recognise_kernels, Certainty, KernelPattern, Recognised};
use cuport_model::Target;
use cuport_rules::kernel_rules::{
    check_rule, kernel_rules_toml, load_kernel_rules, propose, Confidence, KernelRule,
    KernelTensor, OperatorTable, ParamRole, Proposal,
};
use serde::Serialize;

use crate::kernel_evidence::{evidence_for, summary_line};
use crate::output::Output;
use cuport_regress::evidence::{Evidence, Toolchain, Verdict};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  cuport kernels llm.c/train_gpt2_fp32.cu --to ascend\n  cuport kernels src/ --to ascend --out kernels.toml\n  cuport kernels src/ --to ascend --format json\n  cuport kernels --to ascend --check kernels.toml"
)]
pub(crate) struct KernelsArgs {
    /// CUDA sources or directories (every .cu and .cuh below them).
    paths: Vec<PathBuf>,
    /// The target whose operators the rules call.
    #[arg(long, value_parser = crate::migrate_args::target_parser())]
    to: Target,
    /// Write the proposals here instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = KernelsFormat::Toml)]
    format: KernelsFormat,
    /// Validate the `[[kernel]]` rules of these files instead; exit 1 on any problem.
    #[arg(long, value_name = "FILE")]
    check: Vec<PathBuf>,
    /// Declared `[[kernel]]` rules: they replace the proposal for a kernel of the same name.
    #[arg(long, value_name = "FILE")]
    rules: Vec<PathBuf>,
    /// Confirm or refute each rule by execution: COMPILES AND RUNS the scanned
    /// kernels on this machine's CPU (g++, or CUPORT_CXX) and compares them with
    /// ONNX Runtime (CUPORT_PYTHON, default python3, with `pip install
    /// onnxruntime onnx numpy`). Exit 1 when a declared rule is refuted.
    #[arg(long)]
    verify: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum KernelsFormat {
    /// `[[kernel]]` rules, with every other kernel as a comment saying why it has none.
    Toml,
    /// One object per kernel: where, what was recognised, the rule or why there is none.
    Json,
}

/// One kernel's outcome.
#[derive(Debug, Serialize)]
struct KernelOutcome {
    file: String,
    line: u32,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    recognised: Option<Recognised>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<KernelRule>,
    /// Why there is no rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    no_rule: Option<String>,
    /// The rule came from `--rules`, not from recognition.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    declared: bool,
    /// The execution evidence (`--verify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    evidence: Option<Evidence>,
    /// Whether a rewrite may apply the rule without review: confirmed, or
    /// declared and not refuted.
    #[serde(skip_serializing_if = "Option::is_none")]
    applies: Option<bool>,
    #[serde(skip)]
    kernel: Option<KernelPattern>,
    #[serde(skip)]
    path: PathBuf,
}

pub(crate) fn run(args: &KernelsArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let (table, problems) = OperatorTable::builtin(args.to.id());
    if table.operators.is_empty() {
        anyhow::bail!("cuport has no operator tables for {}", args.to.id());
    }
    anyhow::ensure!(
        problems.is_empty(),
        "built-in operator tables: {}",
        problems[0]
    );
    if !args.check.is_empty() {
        return check(&args.check, &table, out);
    }
    anyhow::ensure!(!args.paths.is_empty(), "no CUDA sources given");
    // Checked before anything runs, so a missing tool leaves nothing half-done.
    let tools = match args.verify {
        true => Some(Toolchain::from_env().context("--verify cannot run")?),
        false => None,
    };
    let declared = declared_rules(&args.rules, &table)?;
    let mut outcomes = Vec::new();
    for file in cuda_files(&args.paths)? {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let kernels =
            recognise_kernels(&text).with_context(|| format!("cannot parse {}", file.display()))?;
        let shown = file.display().to_string();
        outcomes.extend(kernels.into_iter().map(|k| {
            let mut o = outcome(&shown, k, &table);
            o.path.clone_from(&file);
            o
        }));
    }
    apply_declared(&mut outcomes, &declared);
    if let Some(tools) = &tools {
        verify_all(&mut outcomes, tools, out)?;
    }
    let rendered = match args.format {
        KernelsFormat::Toml => render_toml(&outcomes)?,
        KernelsFormat::Json => serde_json::to_string_pretty(&outcomes)? + "\n",
    };
    write(args.out.as_deref(), &rendered)?;
    out.status(&summary(&outcomes));
    let refuted_declared = outcomes.iter().any(|o| {
        o.declared
            && o.evidence
                .as_ref()
                .is_some_and(|e| e.verdict == Verdict::Refuted)
    });
    Ok(crate::exit::gate(refuted_declared))
}

/// The valid `[[kernel]]` rules of `files`; any problem stops the command.
fn declared_rules(files: &[PathBuf], table: &OperatorTable) -> anyhow::Result<Vec<KernelRule>> {
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

fn apply_declared(outcomes: &mut [KernelOutcome], declared: &[KernelRule]) {
    for o in outcomes.iter_mut() {
        if let Some(rule) = declared.iter().find(|r| r.name == o.name) {
            o.rule = Some(rule.clone());
            o.no_rule = None;
            o.declared = true;
        }
    }
}

/// Runs the evidence for every kernel with a rule, one after another (each
/// compiles the kernel's file; the report says how far it got).
fn verify_all(
    outcomes: &mut [KernelOutcome],
    tools: &Toolchain,
    out: &Output,
) -> anyhow::Result<()> {
    for o in outcomes.iter_mut() {
        let (Some(rule), Some(kernel)) = (&o.rule, &o.kernel) else {
            continue;
        };
        out.status(&format!("verifying {} ({}:{})", o.name, o.file, o.line));
        let text = std::fs::read_to_string(&o.path)
            .with_context(|| format!("cannot read {}", o.path.display()))?;
        let evidence = evidence_for(&o.path, &text, kernel, rule, tools);
        o.applies = Some(match evidence.verdict {
            Verdict::Confirmed => true,
            Verdict::Refuted => false,
            Verdict::NotRun => o.declared,
        });
        o.evidence = Some(evidence);
    }
    Ok(())
}

fn check(files: &[PathBuf], table: &OperatorTable, out: &Output) -> anyhow::Result<ExitCode> {
    let mut count = 0;
    for file in files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let (_, diags) = load_kernel_rules(&file.display().to_string(), &text, table);
        for d in &diags {
            out.error(&d.to_string());
        }
        count += diags.len();
    }
    out.status(&format!("{count} problems in {} files", files.len()));
    Ok(crate::exit::gate(count > 0))
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
            Ok(rule) => (Some(rule), None),
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
        param: t.param.clone(),
        role,
        shape,
        dtype: element_type(kernel, &t.param).unwrap_or_default(),
    })
}

fn element_type(kernel: &KernelPattern, param: &str) -> Option<String> {
    let p = kernel.params.iter().find(|p| p.name == param)?;
    Some(p.c_type.trim_start_matches("const ").trim().to_string())
}

fn confidence(certainty: Certainty) -> Confidence {
    match certainty {
        Certainty::High => Confidence::High,
        Certainty::Medium => Confidence::Medium,
        Certainty::Low => Confidence::Low,
    }
}

fn render_toml(outcomes: &[KernelOutcome]) -> anyhow::Result<String> {
    let mut text = format!(
        "# Proposed by `cuport kernels` from the kernels' bodies: review each rule\n# before use. {}\n",
        summary(outcomes)
    );
    for o in outcomes {
        text.push('\n');
        match (&o.rule, &o.recognised, &o.no_rule) {
            (Some(rule), _, _) => {
                text.push_str(&format!("# {}:{}\n", o.file, o.line));
                if let Some(e) = &o.evidence {
                    text.push_str(&format!("# {}\n", summary_line(e)));
                }
                text.push_str(&kernel_rules_toml(std::slice::from_ref(rule))?);
            }
            (None, Some(r), why) => text.push_str(&format!(
                "# {}:{} {}: {} ({}), no rule: {}\n",
                o.file,
                o.line,
                o.name,
                r.pattern,
                confidence(r.certainty).id(),
                why.as_deref().unwrap_or("")
            )),
            (None, None, why) => text.push_str(&format!(
                "# {}:{} {}: {}\n",
                o.file,
                o.line,
                o.name,
                why.as_deref().unwrap_or("unclassified")
            )),
        }
    }
    Ok(text)
}

fn summary(outcomes: &[KernelOutcome]) -> String {
    let classified = outcomes.iter().filter(|o| o.recognised.is_some()).count();
    let rules = outcomes.iter().filter(|o| o.rule.is_some()).count();
    let declared = outcomes.iter().filter(|o| o.declared).count();
    let mut text = format!(
        "{} kernels, {classified} classified, {rules} with a proposed rule",
        outcomes.len()
    );
    if declared > 0 {
        text = format!(
            "{} kernels, {classified} classified, {} with a proposed rule, {declared} with a declared rule",
            outcomes.len(),
            rules - declared
        );
    }
    let verdicts: Vec<&Verdict> = outcomes
        .iter()
        .filter_map(|o| o.evidence.as_ref().map(|e| &e.verdict))
        .collect();
    if !verdicts.is_empty() {
        let count = |v: Verdict| verdicts.iter().filter(|&&x| *x == v).count();
        text.push_str(&format!(
            "; evidence: {} confirmed, {} refuted, {} not run",
            count(Verdict::Confirmed),
            count(Verdict::Refuted),
            count(Verdict::NotRun)
        ));
    }
    text
}

fn write(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match path {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            Ok(())
        }
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
