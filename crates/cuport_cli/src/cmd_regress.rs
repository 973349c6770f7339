//! `cuport regress` (issues 7 and 15): run cases on several backends,
//! compare accuracy and performance, gate CI. Exit 0 pass; 1 regression,
//! incomplete or nothing compared; 2 harness or usage error (an `Err`
//! here; `main` maps it to 2); 128 + N when signal N stopped the run.
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use cuport_regress::backend::Perturbation;
use cuport_regress::baseline::{self, BaselineFile};
use cuport_regress::case;
use cuport_regress::exec::{CommandSpec, OUT_ENV};
use cuport_regress::interrupt;
use cuport_regress::memory::{MachineMemory, MemoryLimit};
use cuport_regress::policy::AccuracyConfig;
use cuport_regress::render;
use cuport_regress::report::RunReport;
use cuport_regress::run::{self, ExecCase, GateSettings, RunOptions};
use cuport_regress::sampling::PerfSettings;

use crate::output::Output;

mod emit;
mod slurm_cli;

use emit::{emit, emit_harness_error, print_report, status};

/// Test-only seam: `[INDEX:]rel=R,slow=S` damages the `cpu` backend's leg
/// number INDEX (all legs without it), so tests can prove the gate works.
const PERTURB_ENV: &str = "CUPORT_REGRESS_TEST_PERTURB";

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  cuport regress run regress/\n  cuport regress run regress/ --allow-skip --max-case-memory 8GiB --json report.json\n  cuport regress run regress/ --baseline base.json --junit junit.xml --markdown summary.md\n  cuport regress exec --reference './app_cuda' --candidate './app_hip' --timeout 600\n  cuport regress run regress/ --slurm --slurm-concurrency 4 --junit junit.xml\n  cuport regress baseline save --report report.json --to base.json"
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
    /// Legs whose backend cannot run here are warnings instead of making
    /// their case INCOMPLETE (exit 1); a run that compared nothing still
    /// fails.
    #[arg(long)]
    allow_skip: bool,
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
    /// Host memory one op case may use, computed from its shapes before
    /// anything is allocated (e.g. 8GiB, 500MB, 1.5G, 75%); a case over it
    /// fails alone. Overrides the case files' `max_case_memory`
    /// [default: 50% of this machine's memory].
    #[arg(long, value_name = "SIZE", value_parser = parse_memory_limit)]
    max_case_memory: Option<MemoryLimit>,
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

fn parse_memory_limit(text: &str) -> Result<MemoryLimit, String> {
    text.parse()
}

/// `regress run`: every outcome ends with the report files written, a
/// harness error included (they then say ERROR and why).
fn run_cases(args: &RunArgs, out: &Output) -> anyhow::Result<ExitCode> {
    interrupt::install();
    match run_all(args, out) {
        Ok(report) => emit(&report, &args.report, out),
        Err(e) => {
            emit_harness_error(&e, &args.report, out);
            Err(e)
        }
    }
}

fn run_all(args: &RunArgs, out: &Output) -> anyhow::Result<RunReport> {
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
        allow_skip: args.report.allow_skip,
        max_case_memory: args.max_case_memory,
        machine: MachineMemory::detect(),
        stop: &interrupt::caught,
    };
    let bar = out.progress(total as u64, "regress");
    let mut on_case = |case: &cuport_regress::report::CaseReport| {
        bar.set_message(case.name.clone());
        bar.inc(1);
    };
    let report = if args.slurm.enabled() {
        slurm_cli::run_slurm(&files, &opts, &args.slurm, out, &mut on_case)
    } else {
        Ok(run::run_files(&files, &opts, &mut on_case))
    };
    bar.finish_and_clear();
    report
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
    interrupt::install();
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
        gate: GateSettings::command_line(args.report.allow_skip, &MachineMemory::detect()),
    };
    let baseline = match load_baseline(args.report.baseline.as_deref()) {
        Ok(b) => b,
        Err(e) => {
            emit_harness_error(&e, &args.report, out);
            return Err(e);
        }
    };
    let (report, cross) = run::exec_case(&case, &interrupt::caught);
    let mut report = run::finish(
        vec![report],
        cross,
        baseline.as_ref(),
        args.report.uncertain == UncertainPolicy::Fail,
    );
    if let Some(why) = interrupt::caught() {
        report.interrupt(why);
    }
    emit(&report, &args.report, out)
}

fn load_baseline(path: Option<&Path>) -> anyhow::Result<Option<BaselineFile>> {
    path.map(BaselineFile::load).transpose().map_err(Into::into)
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
            return Ok(status(&report));
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
