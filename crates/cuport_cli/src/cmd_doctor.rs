//! `cuport doctor` (issue 8): the accelerator environment with findings.
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anstyle::AnsiColor;
use anyhow::Context;

use crate::output::Output;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DoctorFormat {
    Text,
    /// Versioned JSON (`schema_version`), for CI logs and bug reports.
    Json,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Reports NVIDIA driver/CUDA, GPUs (memory, persistence, MIG), MPS, the CUDA \
toolkit, Ascend driver and CANN, ROCm/HIP, MUSA and Cambricon Neuware. Every probe is read-only and \
bounded by --timeout-ms; a stack that is not installed is reported as \"not found\", not as an error.

Exit status: 0, also when nothing is installed; 1 with --strict when a finding is a warning; \
2 on a usage or output error.

Examples:
  cuport doctor
  cuport doctor --format json > doctor.json
  cuport doctor --strict   # exit 1 on warnings, for CI"
)]
pub(crate) struct DoctorArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = DoctorFormat::Text)]
    format: DoctorFormat,
    /// Exit with status 1 when a finding is at warning level.
    #[arg(long)]
    strict: bool,
    /// Time limit for each external tool and each driver-library probe.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    timeout_ms: u64,
    /// Print the JSON schema of `--format json` and exit without probing.
    #[arg(long)]
    print_schema: bool,
}

pub(crate) fn run(args: &DoctorArgs, out: &Output) -> anyhow::Result<ExitCode> {
    if args.print_schema {
        let schema = serde_json::to_string_pretty(&cuport_doctor::json_schema())
            .context("serializing the doctor report schema")?;
        write_stdout(&(schema + "\n"))?;
        return Ok(crate::exit::success());
    }
    let config = cuport_doctor::Config::from_process(Duration::from_millis(args.timeout_ms));
    let report = cuport_doctor::diagnose(&config);
    let text = match args.format {
        DoctorFormat::Json => {
            let mut json =
                serde_json::to_string_pretty(&report).context("serializing the doctor report")?;
            json.push('\n');
            json
        }
        DoctorFormat::Text => colour_text(&report.to_text(), out),
    };
    write_stdout(&text)?;
    if args.strict && report.has_warnings() {
        return Ok(crate::exit::findings());
    }
    Ok(crate::exit::success())
}

/// Colours the stack headers and finding levels when stdout allows it.
fn colour_text(text: &str, out: &Output) -> String {
    let warning = out.style(AnsiColor::Yellow, true);
    let bold = out.bold();
    text.lines()
        .map(|line| {
            if let Some(rest) = line.strip_prefix("  warning[") {
                format!("  {warning}warning{warning:#}[{rest}")
            } else if !line.starts_with(' ') && !line.is_empty() {
                format!("{bold}{line}{bold:#}")
            } else {
                line.to_owned()
            }
        })
        .map(|line| line + "\n")
        .collect()
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing the doctor report to stdout"),
    }
}
