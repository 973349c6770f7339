//! `cuport regress` (issue 7): run cases on several backends, compare
//! accuracy and performance, gate CI. Exit 0 pass, 1 regression, 2 harness
//! or usage error (an `Err` here; `main` maps it to 2).
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anstyle::AnsiColor;
use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use cuport_regress::backend::Perturbation;
use cuport_regress::baseline::{self, BaselineFile};
use cuport_regress::case;
use cuport_regress::exec::{CommandSpec, OUT_ENV};
use cuport_regress::policy::AccuracyConfig;
use cuport_regress::render;
use cuport_regress::report::{LegState, Outcome, RunReport};
use cuport_regress::run::{self, ExecCase, RunOptions};
use cuport_regress::sampling::PerfSettings;

use crate::output::Output;

mod slurm_cli;

/// Test-only seam: `[INDEX:]rel=R,slow=S` damages the `cpu` backend's leg
/// number INDEX (all legs without it), so tests can prove the gate works.
const PERTURB_ENV: &str = "CUPORT_REGRESS_TEST_PERTURB";

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  cuport regress run regress/\n  cuport regress run regress/ --baseline base.json --junit junit.xml --markdown summary.md\n  cuport regress exec --reference './app_cuda' --candidate './app_hip' --timeout 600\n  cuport regress run regress/ --slurm --slurm-concurrency 4 --junit junit.xml\n  cuport regress baseline save --report report.json --to base.json"
)]
pub(crate) struct RegressArgs {
    // Boxed: the argument structs are large and `Command` is an enum.
    #[command(subcommand)]
    command: Box<RegressCommand>,
}

#[derive(Debug, Subcommand)]
enum RegressCommand {
    /// Run the cases in case files (or every *.toml in a folder).
    Run(RunArgs),
    /// Compare two commands (reference and candidate) without a case file.
    Exec(ExecArgs),
    /// Save, show or compare stored performance baselines.
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Run one op-case leg (used by `run`, which re-executes itself).
    #[command(hide = true)]
    Leg(LegArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
    Markdown,
    Junit,
    Html,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum UncertainPolicy {
    /// UNCERTAIN checks do not fail the gate.
    Pass,
    /// UNCERTAIN checks fail the gate (exit 1).
    Fail,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// Format printed on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also write the canonical JSON report here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write a Markdown summary here (e.g. $GITHUB_STEP_SUMMARY).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Also write JUnit XML here (one test case per case × check).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Also write an HTML report with SVG plots here.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Compare timings against this baseline file (same device only).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Write (or update) a baseline file from this run's timings.
    #[arg(long, value_name = "FILE")]
    save_baseline: Option<PathBuf>,
    /// Whether UNCERTAIN performance verdicts fail the gate.
    #[arg(long, value_enum, default_value_t = UncertainPolicy::Pass)]
    uncertain: UncertainPolicy,
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Case files or folders of *.toml case files.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Only run cases whose name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Seconds before an op leg is killed.
    #[arg(long, default_value_t = 600.0)]
    timeout: f64,
    #[command(flatten)]
    slurm: slurm_cli::SlurmArgs,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Debug, Args)]
struct ExecArgs {
    /// Shell command of the reference leg (e.g. the CUDA build).
    #[arg(long)]
    reference: String,
    /// Shell command of the candidate leg (e.g. the ported build).
    #[arg(long)]
    candidate: String,
    /// Name of the case in reports and baselines.
    #[arg(long, default_value = "exec")]
    name: String,
    /// Seconds before a leg's process group is killed.
    #[arg(long, default_value_t = run::DEFAULT_TIMEOUT_S)]
    timeout: f64,
    /// Relative tolerance for every tensor (default: by dtype, torch's table).
    #[arg(long)]
    rtol: Option<f64>,
    /// Absolute tolerance for every tensor.
    #[arg(long)]
    atol: Option<f64>,
    /// Relative slowdown of the candidate that fails the gate.
    #[arg(long)]
    threshold: Option<f64>,
    /// Report candidate-vs-reference speed without gating on it.
    #[arg(long)]
    no_cross_gate: bool,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Debug, Subcommand)]
enum BaselineCommand {
    /// Store the timings of a JSON report as a baseline.
    Save {
        /// A report written with `--json` or `--format json`.
        #[arg(long)]
        report: PathBuf,
        /// Baseline file to write; existing entries for other keys are kept.
        #[arg(long)]
        to: PathBuf,
    },
    /// List a baseline's entries.
    Show { file: PathBuf },
    /// Judge a JSON report's timings against a baseline.
    Compare {
        #[arg(long)]
        baseline: PathBuf,
        #[arg(long)]
        report: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

#[derive(Debug, Args)]
struct LegArgs {
    #[arg(long)]
    case_file: PathBuf,
    #[arg(long)]
    case: String,
    #[arg(long)]
    backend: String,
    #[arg(long, default_value_t = 0)]
    index: usize,
}

pub(crate) fn run(args: &RegressArgs, out: &Output) -> anyhow::Result<ExitCode> {
    match args.command.as_ref() {
        RegressCommand::Run(a) => run_cases(a, out),
        RegressCommand::Exec(a) => run_exec(a, out),
        RegressCommand::Baseline(b) => run_baseline(b, out),
        RegressCommand::Leg(a) => run_leg(a),
    }
}

fn run_cases(args: &RunArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let mut files = Vec::new();
    for path in &args.paths {
        files.extend(case::load(path)?);
    }
    let total = run::count_cases(&files, args.filter.as_deref());
    if total == 0 {
        bail!(
            "no cases to run in {} (check --filter and the [[case]]/[[app]] tables)",
            display_paths(&args.paths)
        );
    }
    let exe =
        std::env::current_exe().context("cannot find the cuport executable to run op legs")?;
    let launcher = move |file: &Path, case: &str, backend: &str, index: usize| {
        leg_command(&exe, file, case, backend, index)
    };
    let opts = RunOptions {
        launcher: &launcher,
        baseline: load_baseline(args.report.baseline.as_deref())?,
        uncertain_fails: args.report.uncertain == UncertainPolicy::Fail,
        op_timeout: Duration::from_secs_f64(args.timeout.max(0.001)),
        filter: args.filter.clone(),
    };
    let bar = out.progress(total as u64, "regress");
    let mut on_case = |case: &cuport_regress::report::CaseReport| {
        bar.set_message(case.name.clone());
        bar.inc(1);
    };
    let report = if args.slurm.enabled() {
        slurm_cli::run_slurm(&files, &opts, &args.slurm, out, &mut on_case)?
    } else {
        run::run_files(&files, &opts, &mut on_case)
    };
    bar.finish_and_clear();
    emit(&report, &args.report, out)
}

fn leg_command(exe: &Path, file: &Path, case: &str, backend: &str, index: usize) -> CommandSpec {
    let mut argv: Vec<OsString> = vec![
        exe.into(),
        "regress".into(),
        "leg".into(),
        "--case-file".into(),
    ];
    argv.extend([
        file.into(),
        "--case".into(),
        case.into(),
        "--backend".into(),
        backend.into(),
    ]);
    argv.extend(["--index".into(), index.to_string().into()]);
    CommandSpec::Argv(argv)
}

fn run_exec(args: &ExecArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let case = ExecCase {
        name: args.name.clone(),
        file: "(command line)".into(),
        reference: CommandSpec::Shell(args.reference.clone()),
        candidate: CommandSpec::Shell(args.candidate.clone()),
        cwd: None,
        timeout: Duration::from_secs_f64(args.timeout.max(0.001)),
        accuracy: AccuracyConfig {
            rtol: args.rtol,
            atol: args.atol,
            ..AccuracyConfig::default()
        },
        perf: PerfSettings {
            threshold: args.threshold,
            ..PerfSettings::default()
        },
        gate_cross: !args.no_cross_gate,
    };
    let baseline = load_baseline(args.report.baseline.as_deref())?;
    let (report, cross) = run::exec_case(&case);
    let report = run::finish(
        vec![report],
        cross,
        baseline.as_ref(),
        args.report.uncertain == UncertainPolicy::Fail,
    );
    emit(&report, &args.report, out)
}

fn load_baseline(path: Option<&Path>) -> anyhow::Result<Option<BaselineFile>> {
    path.map(BaselineFile::load).transpose().map_err(Into::into)
}

/// Print the chosen format, write the side files, save the baseline, and
/// turn the gate's verdict into the exit code.
fn emit(report: &RunReport, args: &ReportArgs, out: &Output) -> anyhow::Result<ExitCode> {
    print_report(report, args.format, out)?;
    let skipped = report
        .cases
        .iter()
        .flat_map(|c| &c.legs)
        .filter(|l| matches!(l.state, LegState::Skipped { .. }))
        .count();
    if skipped > 0 {
        out.warn(&format!("{skipped} legs skipped: their backend is unavailable here or does not support the case (see the leg:* checks, or --verbose)"));
    }
    let sides: [(&Option<PathBuf>, Format); 4] = [
        (&args.json, Format::Json),
        (&args.markdown, Format::Markdown),
        (&args.junit, Format::Junit),
        (&args.html, Format::Html),
    ];
    for (path, format) in sides {
        if let Some(path) = path {
            let text = rendered(report, format)?;
            std::fs::write(path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    if let Some(path) = &args.save_baseline {
        let mut file = if path.exists() {
            BaselineFile::load(path)?
        } else {
            BaselineFile::default()
        };
        file.merge(BaselineFile::from_report(report));
        file.save(path)?;
        out.info(&format!("baseline written to {}", path.display()));
    }
    Ok(gate(report))
}

fn gate(report: &RunReport) -> ExitCode {
    crate::exit::gate(report.summary.exit_code != 0)
}

fn rendered(report: &RunReport, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Json | Format::Text => serde_json::to_string_pretty(report)? + "\n",
        Format::Markdown => render::markdown::render(report),
        Format::Junit => render::junit::render(report).context("cannot serialise JUnit XML")?,
        Format::Html => render::html::render(report),
    })
}

fn print_report(report: &RunReport, format: Format, out: &Output) -> anyhow::Result<()> {
    if format != Format::Text {
        print!("{}", rendered(report, format)?);
        return Ok(());
    }
    for case in &report.cases {
        let colour = match case.outcome {
            Outcome::Pass => AnsiColor::Green,
            Outcome::Skipped => AnsiColor::BrightBlack,
            Outcome::Uncertain => AnsiColor::Yellow,
            Outcome::Fail | Outcome::Error => AnsiColor::Red,
        };
        let style = out.style(colour, true);
        println!("{style}{:<9}{style:#} {}", case.outcome.label(), case.name);
        for check in case
            .checks
            .iter()
            .filter(|c| out.verbose || !matches!(c.outcome, Outcome::Pass | Outcome::Skipped))
        {
            let mut lines = check.message.lines();
            println!(
                "    {:<9} {}: {}",
                check.outcome.label(),
                check.name,
                lines.next().unwrap_or("")
            );
            if matches!(check.outcome, Outcome::Fail | Outcome::Error) {
                lines.for_each(|l| println!("              {l}"));
            }
        }
    }
    for (pair, g) in &report.cross_geomean {
        println!("cross-backend geometric mean {pair}: {g:.3}");
    }
    for p in &report.placement {
        let by = p
            .speedup
            .map(|s| {
                format!(
                    ", {s:.2}× faster than {}",
                    p.runner_up.as_deref().unwrap_or("?")
                )
            })
            .unwrap_or_default();
        println!(
            "placement {} [{}]: {}{by} (accuracy {})",
            p.op,
            p.shape_class,
            p.fastest,
            p.accuracy.label()
        );
    }
    let verdict = report.summary.verdict();
    let bold = out.bold();
    println!(
        "{bold}{verdict}{bold:#}: {} cases, {} checks ({})",
        report.summary.cases,
        report.summary.checks,
        report.summary.counts_text()
    );
    Ok(())
}

fn run_baseline(cmd: &BaselineCommand, out: &Output) -> anyhow::Result<ExitCode> {
    match cmd {
        BaselineCommand::Save { report, to } => {
            let report = read_report(report)?;
            let mut file = if to.exists() {
                BaselineFile::load(to)?
            } else {
                BaselineFile::default()
            };
            let fresh = BaselineFile::from_report(&report);
            let count = fresh.entries.len();
            file.merge(fresh);
            file.save(to)?;
            println!(
                "saved {count} entries to {} ({} in total)",
                to.display(),
                file.entries.len()
            );
        }
        BaselineCommand::Show { file } => {
            let file = BaselineFile::load(file)?;
            for e in &file.entries {
                println!(
                    "{} · {} · {} · {} samples · median {} · {}",
                    e.case,
                    e.backend,
                    e.region,
                    e.samples.len(),
                    render::seconds(e.median),
                    e.device.fingerprint()
                );
            }
        }
        BaselineCommand::Compare {
            baseline: path,
            report,
            format,
        } => {
            let mut report = read_report(report)?;
            baseline::apply(&mut report, &BaselineFile::load(path)?, &Default::default());
            print_report(&report, *format, out)?;
            return Ok(gate(&report));
        }
    }
    Ok(crate::exit::success())
}

fn read_report(path: &Path) -> anyhow::Result<RunReport> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let report: RunReport = serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not a cuport regress JSON report (write one with --json FILE)",
            path.display()
        )
    })?;
    if report.version != cuport_regress::report::REPORT_VERSION {
        bail!(
            "{}: report version {} is not supported; re-run with this cuport",
            path.display(),
            report.version
        );
    }
    Ok(report)
}

fn run_leg(args: &LegArgs) -> anyhow::Result<ExitCode> {
    let out_dir = std::env::var_os(OUT_ENV)
        .map(PathBuf::from)
        .with_context(|| {
            format!("{OUT_ENV} is not set; `regress leg` is run by `cuport regress run`")
        })?;
    let file = case::load_file(&args.case_file)?;
    let perturb = std::env::var(PERTURB_ENV)
        .ok()
        .map(|v| perturbation_for(&v, args.index))
        .transpose()?
        .flatten();
    cuport_regress::leg::run_op_leg(&file, &args.case, &args.backend, perturb, &out_dir)?;
    Ok(crate::exit::success())
}

fn perturbation_for(value: &str, index: usize) -> anyhow::Result<Option<Perturbation>> {
    let (target, spec) = match value.split_once(':') {
        Some((i, rest)) => (
            Some(
                i.trim()
                    .parse::<usize>()
                    .with_context(|| format!("{PERTURB_ENV}: bad leg index `{i}`"))?,
            ),
            rest,
        ),
        None => (None, value),
    };
    let p = Perturbation::parse(spec).with_context(|| {
        format!("{PERTURB_ENV}: expected `[INDEX:]rel=R,slow=S`, got `{value}`")
    })?;
    Ok((target.is_none_or(|t| t == index)).then_some(p))
}

fn display_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
