//! `cuport`: port CUDA code bases to other accelerators.
//!
//! This is the only crate that prints, reads the environment for colour and
//! maps errors to exit codes. Each subcommand lives in its own module.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod api_support;
mod cmd_analyze;
mod cmd_doctor;
mod cmd_kernels;
mod cmd_migrate;
mod cmd_regress;
mod cmd_report;
mod cmd_rules;
mod cmd_scan;
mod exit;
mod kernel_evidence;
mod kernel_outcomes;
mod migrate_args;
mod migration_reports;
mod output;
mod run_plan;
mod scanning;
mod settings;
mod walk_args;

use std::process::ExitCode;

/// A run makes millions of small allocations (tokens, names, edits) across
/// threads: with mimalloc a port of cuda-samples takes 4.5 % fewer
/// instructions than with glibc's malloc (callgrind), and less system time
/// (docs/hip.md, "Speed"). Its v2 line, without transparent huge pages:
/// v3 doubled that run's peak memory (160 against 83 MB), and with huge
/// pages half of a one-file run's time went to zeroing 2 MB pages.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{CommandFactory, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "cuport",
    version,
    about = "Port CUDA code bases to HIP, Ascend, MUSA and Cambricon MLU",
    long_about = "cuport finds every CUDA touchpoint in a code base, maps it to a target \
accelerator through reviewable rule tables, rewrites the code (one-way or dual-stack) and \
checks the result with a regression harness.",
    after_help = "Examples:\n  cuport scan fixtures/\n  cuport scan --format json src/ > sites.json\n  cuport rules show cudaMemcpy\n  cuport regress run regress/"
)]
struct Cli {
    #[command(flatten)]
    global: output::GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Find every CUDA and framework touchpoint in a code base.
    Scan(cmd_scan::ScanArgs),
    /// Which PyTorch APIs a project calls and whether the target's torch adapter supports each.
    Analyze(cmd_analyze::AnalyzeArgs),
    /// Port a code base to a target: diagnostics, statistics, diffs or rewritten files.
    Migrate(migrate_args::MigrateArgs),
    /// Re-render a migration report (report.json) as HTML, Markdown, SARIF, CSV or JSON.
    Report(cmd_report::ReportArgs),
    /// Inspect and validate the rule tables.
    Rules(cmd_rules::RulesArgs),
    /// Recognise what each kernel computes and propose operator rules for it.
    Kernels(cmd_kernels::KernelsArgs),
    /// Run cases on two backends and compare accuracy and performance.
    Regress(cmd_regress::RegressArgs),
    /// Report the accelerator environment (drivers, toolkits, devices) with findings and advice.
    Doctor(cmd_doctor::DoctorArgs),
    /// Print a shell completion script.
    #[command(
        after_help = "Example:\n  cuport completions bash > ~/.local/share/bash-completion/completions/cuport"
    )]
    Completions {
        /// The shell to generate completions for.
        shell: clap_complete::Shell,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let out = output::Output::new(&cli.global);
    let result = match cli.command {
        Command::Scan(args) => cmd_scan::run(&args, &out),
        Command::Analyze(args) => cmd_analyze::run(&args, &out),
        Command::Migrate(args) => cmd_migrate::run(&args, &out),
        Command::Report(args) => cmd_report::run(&args, &out),
        Command::Rules(args) => cmd_rules::run(&args, &out),
        Command::Kernels(args) => cmd_kernels::run(&args, &out),
        Command::Regress(args) => cmd_regress::run(&args, &out),
        Command::Doctor(args) => cmd_doctor::run(&args, &out),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "cuport", &mut std::io::stdout());
            Ok(exit::success())
        }
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            out.error(&format!("{err:#}"));
            exit::error()
        }
    }
}
