//! `cuport kernels`: recognise what each CUDA kernel of a tree computes from
//! its body and propose `[[kernel]]` rules mapping it to the target's vendor
//! operators (docs/kernel-rules.md); `--check FILE` validates declared rules.
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use cuport_model::Target;
use cuport_regress::evidence::{Toolchain, Verdict};
use cuport_rules::kernel_rules::{kernel_rules_toml, load_kernel_rules, OperatorTable};

use crate::kernel_outcomes::{
    apply_declared, confidence, declared_rules, kernel_outcomes, mark_unconfirmed, verify_all,
    KernelOutcome,
};
use crate::output::Output;

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
    /// onnxruntime onnx numpy`), or with JAX for rules with operators ONNX has
    /// no form for, such as gradients (`pip install jax==0.10.2
    /// jaxlib==0.10.2`). Exit 1 when a declared rule is refuted.
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
    if args.verify && table.unchecked {
        anyhow::bail!(
            "--verify runs rules against ONNX Runtime forms of the aclnn operators; the {} operators have none (and are unconfirmed), so run without --verify",
            args.to.id()
        );
    }
    // Checked before anything runs, so a missing tool leaves nothing half-done.
    let tools = match args.verify {
        true => Some(Toolchain::from_env().context("--verify cannot run")?),
        false => None,
    };
    let declared = declared_rules(&args.rules, &table)?;
    let mut outcomes = kernel_outcomes(&args.paths, &table)?;
    apply_declared(&mut outcomes, &declared);
    mark_unconfirmed(&mut outcomes, &table);
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
                for status in &o.unconfirmed {
                    text.push_str(&format!("# {status}\n"));
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
                one_line(why.as_deref().unwrap_or(""))
            )),
            (None, None, why) => text.push_str(&format!(
                "# {}:{} {}: {}\n",
                o.file,
                o.line,
                o.name,
                one_line(why.as_deref().unwrap_or("unclassified"))
            )),
        }
    }
    Ok(text)
}

/// `text` with its line breaks and runs of blanks as single spaces: a
/// reason that quotes a statement spread over lines stays one comment
/// line (llm.c's adamw_kernel3 quoted a call of eleven lines, and the
/// rest of it broke the TOML).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
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
