//! `cuport analyze`: which PyTorch APIs a project calls, and what the
//! vendor's per-version support list says of each on the chip in use.
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use cuport_analyze::{scan_tree, ScanOptions, ScanReport};
use cuport_model::Target;
use cuport_report::{api_support_csv, ApiSupportReport};
use cuport_rules::api_support::{SupportLists, SupportStatus};
use cuport_rules::RuleSet;

use crate::api_support::{default_chip, inventories, support_report, write_report_files};
use crate::output::Output;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SupportTarget {
    /// Huawei Ascend through torch_npu.
    Ascend,
    /// Cambricon MLU through torch_mlu.
    Mlu,
}

impl SupportTarget {
    fn target(self) -> Target {
        match self {
            SupportTarget::Ascend => Target::Ascend,
            SupportTarget::Mlu => Target::Mlu,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AnalyzeFormat {
    /// A summary for people.
    Text,
    /// Every use with its status (format `cuport-api-support`).
    Json,
    /// `api_support.csv` on stdout.
    Csv,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  cuport analyze . --to ascend                      newest torch_npu list, Atlas A2
  cuport analyze src --to ascend --torch-npu 2.7.1 --chip A3
  cuport analyze . --to mlu --torch-mlu 2.1          torch_mlu's list for PyTorch 2.1
  cuport analyze . --to ascend --format csv > api_support.csv
  cuport analyze . --to ascend --report review/      also writes the tables and api_support.html

Every `torch.*` API the Python files reach (through imports and aliases,
methods on values that are evidently tensors, nn.Module methods on self)
gets a status from the vendor's published support list: supported, restricted
(with what the restriction is about), unsupported, or unknown (not in the
list). Method calls on receivers whose type the file does not show are
counted as unresolved. The analysis also lists the CUDA-only packages the
project uses with the target's documented alternative, the kernels of the
CUDA extensions it builds (with their Ascend C skeletons), and precision,
performance and porting advice its API uses and keyword arguments, and the
CUDA libraries its C/C++/CUDA sources use (cuBLAS: --ascend-blas), trigger;
alternatives and advice name the aclnn operators behind them where known.

Exit status: 0 when the tree was analysed; 2 on a usage error (an unknown
--torch-npu version or --chip) or when the root cannot be read.")]
pub(crate) struct AnalyzeArgs {
    /// Directory or file to analyse.
    #[arg(default_value = ".")]
    pub(crate) path: PathBuf,
    /// The target whose support lists to use.
    #[arg(long, value_enum)]
    pub(crate) to: SupportTarget,
    /// With --to ascend: the torch_npu version (default: the newest list cuport has).
    #[arg(long, value_name = "VERSION", conflicts_with = "torch_mlu")]
    pub(crate) torch_npu: Option<String>,
    /// With --to mlu: the torch_mlu release (default: the newest list cuport has).
    #[arg(long, value_name = "VERSION")]
    pub(crate) torch_mlu: Option<String>,
    /// The chip the lists are read for (Ascend: A2, A3, 950DT; default A2;
    /// torch_mlu's lists hold for every MLU).
    #[arg(long)]
    pub(crate) chip: Option<String>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = AnalyzeFormat::Text)]
    pub(crate) format: AnalyzeFormat,
    /// Also write api_support.csv/.json/.html, third_party.csv,
    /// custom_ops.csv and advice.csv into this directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) report: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) walk: crate::walk_args::WalkArgs,
    /// How many APIs to list per status in the text summary.
    #[arg(long, default_value_t = 10)]
    pub(crate) top: usize,
}

pub(crate) fn run(args: &AnalyzeArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let target = args.to.target();
    let (release, flag) = match args.to {
        SupportTarget::Ascend if args.torch_mlu.is_some() => {
            anyhow::bail!("--torch-mlu goes with --to mlu; for Ascend pass --torch-npu")
        }
        SupportTarget::Mlu if args.torch_npu.is_some() => {
            anyhow::bail!("--torch-npu goes with --to ascend; for Cambricon pass --torch-mlu")
        }
        SupportTarget::Ascend => (args.torch_npu.as_deref(), "--torch-npu"),
        SupportTarget::Mlu => (args.torch_mlu.as_deref(), "--torch-mlu"),
    };
    let lists = SupportLists::builtin(target)?;
    let version = lists
        .version(release)
        .with_context(|| format!("pass one of the listed versions to {flag}"))?;
    let chip = lists
        .chip(args.chip.as_deref().unwrap_or(default_chip(&lists)))
        .context("pass one of the listed chips to --chip")?;
    let scanned = scan(args, out)?;
    let files = inventories(&scanned, &lists, out)?;
    let rules = RuleSet::builtin()?;
    let report = support_report(&scanned, &files, &lists, (version, chip), &rules);
    if let Some(dir) = &args.report {
        write_report_files(dir, "", &report)?;
    }
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        AnalyzeFormat::Json => {
            serde_json::to_writer_pretty(&mut stdout, &report)?;
            writeln!(stdout)?;
        }
        AnalyzeFormat::Csv => write!(stdout, "{}", api_support_csv(&report)?)?,
        AnalyzeFormat::Text => write_text(&mut stdout, &report, args.top)?,
    }
    stdout.flush()?;
    Ok(crate::exit::success())
}

/// Every file under the root, sources kept.
fn scan(args: &AnalyzeArgs, out: &Output) -> anyhow::Result<ScanReport> {
    let options = ScanOptions {
        excludes: args.walk.exclude.clone(),
        include_hidden: args.walk.hidden,
        no_ignore: args.walk.no_ignore,
        keep_sources: true,
        ..ScanOptions::default()
    };
    let scanned = scan_tree(&args.path, &options, cuport_analyze::NO_PROGRESS)
        .with_context(|| format!("cannot read {}; check the path", args.path.display()))?;
    for skipped in &scanned.skipped {
        out.warn(&format!("{}: skipped: {}", skipped.path, skipped.reason));
    }
    Ok(scanned)
}

fn write_text(w: &mut impl Write, report: &ApiSupportReport, top: usize) -> std::io::Result<()> {
    let counts = report.counts();
    let count = |s: SupportStatus| counts.get(&s).copied().unwrap_or(0);
    let distinct: std::collections::BTreeSet<&str> =
        report.records.iter().map(|r| r.api.as_str()).collect();
    writeln!(
        w,
        "PyTorch API support on {} {}, {} {} ({})",
        report.target, report.chip, report.adapter, report.release, report.lists_source
    )?;
    writeln!(
        w,
        "{} Python files: {} uses of {} torch APIs: {} supported, {} restricted, {} unsupported, {} unknown (not in the vendor's list)",
        report.files,
        report.records.len(),
        distinct.len(),
        count(SupportStatus::Supported),
        count(SupportStatus::Restricted),
        count(SupportStatus::Unsupported),
        count(SupportStatus::Unknown),
    )?;
    writeln!(
        w,
        "{} method calls not resolved (a torch.Tensor method name on a receiver whose type the file does not show)",
        report.unresolved.len()
    )?;
    for status in [
        SupportStatus::Unsupported,
        SupportStatus::Restricted,
        SupportStatus::Unknown,
    ] {
        let apis = report.apis_with(status);
        if apis.is_empty() {
            continue;
        }
        writeln!(w, "\n{} ({} APIs):", status.id(), apis.len())?;
        for (api, uses, first) in apis.iter().take(top) {
            let note = if first.note.is_empty() {
                String::new()
            } else {
                format!(": {}", first.note)
            };
            writeln!(
                w,
                "  {api} ×{uses} (first {}:{}){note}",
                first.file, first.line
            )?;
        }
        if apis.len() > top {
            writeln!(
                w,
                "  ... and {} more (--format csv lists every use)",
                apis.len() - top
            )?;
        }
    }
    write_guidance_text(w, report)
}

/// The packages, extension kernels and advice parts of the text summary.
fn write_guidance_text(w: &mut impl Write, report: &ApiSupportReport) -> std::io::Result<()> {
    let mut packages: std::collections::BTreeMap<&str, (usize, &cuport_report::ThirdPartyRecord)> =
        std::collections::BTreeMap::new();
    for record in &report.third_party {
        packages.entry(&record.package).or_insert((0, record)).0 += 1;
    }
    if !packages.is_empty() {
        writeln!(w, "\nCUDA-only packages ({}):", packages.len())?;
        for (package, (uses, first)) in &packages {
            let instead = match (first.alternative.is_empty(), first.operators.is_empty()) {
                (true, _) => String::new(),
                (false, true) => format!(" -> {}", first.alternative),
                (false, false) => format!(" -> {} (runs {})", first.alternative, first.operators),
            };
            writeln!(
                w,
                "  {package} ×{uses} (first {}:{}): {}{instead}",
                first.file,
                first.line,
                first.status.id()
            )?;
        }
    }
    if !report.custom_ops.is_empty() {
        let kernels: std::collections::BTreeSet<(&str, &str)> = report
            .custom_ops
            .iter()
            .filter(|r| !r.kernel.is_empty())
            .map(|r| (r.source.as_str(), r.kernel.as_str()))
            .collect();
        writeln!(
            w,
            "\nCUDA extensions built: {} kernels need an implementation on {} (custom_ops.csv):",
            kernels.len(),
            report.target
        )?;
        for op in &report.custom_ops {
            let what = if op.kernel.is_empty() {
                op.note.clone()
            } else if op.skeleton.is_empty() {
                format!("{} ({}:{})", op.kernel, op.source, op.kernel_line)
            } else {
                format!(
                    "{} ({}:{}) -> {}",
                    op.kernel, op.source, op.kernel_line, op.skeleton
                )
            };
            writeln!(w, "  {} {}:{}: {what}", op.extension, op.file, op.line)?;
        }
    }
    let mut advice: std::collections::BTreeMap<&str, (usize, &cuport_report::AdviceRecord)> =
        std::collections::BTreeMap::new();
    for record in &report.advice {
        advice.entry(&record.id).or_insert((0, record)).0 += 1;
    }
    if !advice.is_empty() {
        writeln!(
            w,
            "\nAdvice ({} kinds, advice.csv lists every use):",
            advice.len()
        )?;
        for (id, (uses, first)) in &advice {
            let operators = if first.operators.is_empty() {
                String::new()
            } else {
                format!(" [aclnn: {}]", first.operators)
            };
            writeln!(
                w,
                "  [{}] {id} ×{uses} (first {}:{} `{}`): {}{operators}",
                first.kind.id(),
                first.file,
                first.line,
                first.trigger,
                first.advice
            )?;
        }
    }
    Ok(())
}
