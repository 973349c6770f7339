//! `cuport analyze`: which PyTorch APIs a project calls, and what the
//! vendor's per-version support list says of each on the chip in use.
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use cuport_analyze::{scan_tree, torch_api_uses, ScanOptions, ScanReport, TorchApiInventory};
use cuport_model::{Language, Target};
use cuport_report::{api_support_csv, api_support_report, ApiSupportReport};
use cuport_rules::api_support::{SupportError, SupportLists, SupportStatus, VersionList};
use cuport_rules::RuleSet;

use crate::output::Output;

/// The chip the analysis reads the lists for unless told otherwise:
/// Atlas A2 on Ascend, the lists' only chip class elsewhere.
fn default_chip(lists: &SupportLists) -> &str {
    if lists.chips.iter().any(|c| c == "A2") {
        "A2"
    } else {
        lists.chips.first().map_or("", String::as_str)
    }
}

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
  cuport analyze . --to ascend --report review/      also writes review/api_support.csv

Every `torch.*` API the Python files reach (through imports and aliases,
methods on values that are evidently tensors, nn.Module methods on self)
gets a status from the vendor's published support list: supported, restricted
(with what the restriction is about), unsupported, or unknown (not in the
list). Method calls on receivers whose type the file does not show are
counted as unresolved.

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
    /// Also write api_support.csv and api_support.json into this directory.
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
    let files = python_inventories(args, &lists, out)?;
    let rules = RuleSet::builtin()?;
    let report = support_report(&files, &lists, (version, chip), &rules);
    if let Some(dir) = &args.report {
        write_report_files(dir, "api_support", &report)?;
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

/// The API uses of every Python file under the root.
fn python_inventories(
    args: &AnalyzeArgs,
    lists: &SupportLists,
    out: &Output,
) -> anyhow::Result<Vec<(String, TorchApiInventory)>> {
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
    inventories(&scanned, lists, out)
}

/// The API uses of the Python files of a scan (made with `keep_sources`).
pub(crate) fn inventories(
    scanned: &ScanReport,
    lists: &SupportLists,
    out: &Output,
) -> anyhow::Result<Vec<(String, TorchApiInventory)>> {
    let is_api = |api: &str| lists.versions().iter().any(|v| v.row(api).is_some());
    let mut files = Vec::new();
    for file in &scanned.files {
        let (Language::Python, Some(source)) = (file.language, file.source.as_ref()) else {
            continue;
        };
        let inventory = torch_api_uses(source, &is_api)?;
        if inventory.unparsed {
            out.warn(&format!(
                "{}: tree-sitter-python could not parse it; its APIs are not counted",
                file.path
            ));
        }
        files.push((file.path.clone(), inventory));
    }
    Ok(files)
}

/// The support report of `files` for `version` on `chip`, with what the
/// Ascend rule tables port each API to.
pub(crate) fn support_report(
    files: &[(String, TorchApiInventory)],
    lists: &SupportLists,
    selected: (&VersionList, &str),
    rules: &RuleSet,
) -> ApiSupportReport {
    let port_of = |api: &str| {
        let resolved = rules.lookup(lists.target, api)?;
        let to = resolved.target_name.as_deref()?;
        (to != api).then(|| to.to_owned())
    };
    api_support_report(files, lists, selected, &port_of)
}

/// `cuport migrate --report DIR`: for each target with support lists
/// (which ones is data: `mappings/<target>/api-support/`), the analysis of
/// the newest list on the default chip, next to the migration's reports;
/// `api_support-<target>.*` when several targets have lists.
pub(crate) fn write_migration_support(
    dir: &std::path::Path,
    targets: &[Target],
    scanned: &ScanReport,
    rules: &RuleSet,
    out: &Output,
) -> anyhow::Result<()> {
    let mut listed = Vec::new();
    for &target in targets {
        match SupportLists::builtin(target) {
            Ok(lists) => listed.push(lists),
            Err(SupportError::NoLists(_)) => {}
            Err(error) => return Err(error.into()),
        }
    }
    for lists in &listed {
        let files = inventories(scanned, lists, out)?;
        if files.is_empty() {
            continue;
        }
        let version = lists.version(None)?;
        let chip = lists.chip(default_chip(lists))?;
        let report = support_report(&files, lists, (version, chip), rules);
        let name = if listed.len() > 1 {
            format!("api_support-{}", lists.target)
        } else {
            "api_support".to_owned()
        };
        write_report_files(dir, &name, &report)?;
    }
    Ok(())
}

/// `DIR/NAME.csv` and `DIR/NAME.json`.
fn write_report_files(
    dir: &std::path::Path,
    name: &str,
    report: &ApiSupportReport,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create {}; check the path and permissions",
            dir.display()
        )
    })?;
    let csv_path = dir.join(format!("{name}.csv"));
    std::fs::write(&csv_path, api_support_csv(report)?)
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    let json_path = dir.join(format!("{name}.json"));
    std::fs::write(&json_path, serde_json::to_string_pretty(report)? + "\n")
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    Ok(())
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
    Ok(())
}
