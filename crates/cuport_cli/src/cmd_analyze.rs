//! `cuport analyze`: which PyTorch APIs a project calls, and what the
//! vendor's per-version support list says of each on the chip in use.
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use cuport_analyze::{
    scan_tree, torch_api_uses, ApiQuery, ScanOptions, ScanReport, TorchApiInventory,
};
use cuport_model::{Language, SiteKind, Target};
use cuport_report::{
    advice_csv, api_support_csv, api_support_html, api_support_report, custom_ops_csv,
    third_party_csv, ApiSupportReport, CudaSources, KernelRef,
};
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
  cuport analyze . --to ascend --report review/      also writes the tables and api_support.html

Every `torch.*` API the Python files reach (through imports and aliases,
methods on values that are evidently tensors, nn.Module methods on self)
gets a status from the vendor's published support list: supported, restricted
(with what the restriction is about), unsupported, or unknown (not in the
list). Method calls on receivers whose type the file does not show are
counted as unresolved. The analysis also lists the CUDA-only packages the
project uses with the target's documented alternative, the kernels of the
CUDA extensions it builds (with their Ascend C skeletons), and precision and
performance advice its API uses and keyword arguments trigger.

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

/// The API uses of the Python files of a scan (made with `keep_sources`).
pub(crate) fn inventories(
    scanned: &ScanReport,
    lists: &SupportLists,
    out: &Output,
) -> anyhow::Result<Vec<(String, TorchApiInventory)>> {
    let guidance = &lists.guidance;
    let advice_apis: std::collections::HashSet<&str> = guidance.advice_apis().collect();
    let is_api = |api: &str| advice_apis.contains(api) || lists.lists(api);
    let packages: Vec<String> = guidance.packages.iter().map(|p| p.module.clone()).collect();
    let keywords = guidance.advice_keywords();
    let query = ApiQuery {
        is_api: &is_api,
        packages: &packages,
        keywords: &keywords,
    };
    let mut files = Vec::new();
    for file in &scanned.files {
        let (Language::Python, Some(source)) = (file.language, file.source.as_ref()) else {
            continue;
        };
        let inventory = torch_api_uses(source, &query)?;
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
/// rule tables port each API to and the kernels of the CUDA extensions the
/// project builds (from the scan of its CUDA sources).
pub(crate) fn support_report(
    scanned: &ScanReport,
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
    let paths: Vec<String> = scanned
        .files
        .iter()
        .filter(|f| f.language == Language::Cuda)
        .map(|f| f.path.clone())
        .collect();
    let kernels = |path: &str| kernels_of(scanned, path, lists.target);
    // cuport writes Ascend C skeletons only (`--ascend-kernel-skeletons`).
    let no_skeleton_note = (lists.target != Target::Ascend).then_some(
        "cuport generates no kernel skeletons for this target: write the kernel by hand (`cuport migrate` reports it, CP0010)",
    );
    let cuda_sources = CudaSources {
        paths: &paths,
        kernels: &kernels,
        no_skeleton_note,
    };
    api_support_report(files, lists, selected, &port_of, &cuda_sources)
}

/// The kernels defined in one scanned CUDA file; on Ascend with the
/// skeleton `cuport migrate --ascend-kernel-skeletons` writes for each.
fn kernels_of(scanned: &ScanReport, path: &str, target: Target) -> Vec<KernelRef> {
    let Some(file) = scanned.files.iter().find(|f| f.path == path) else {
        return Vec::new();
    };
    if target == Target::Ascend {
        if let Some(source) = &file.source {
            return cuport_rewrite::file_skeletons(path, source, &file.analysis)
                .into_iter()
                .map(|s| KernelRef {
                    name: s.kernel,
                    line: s.line,
                    skeleton: Some(s.path),
                    operator: s.operator,
                })
                .collect();
        }
    }
    file.analysis
        .sites
        .iter()
        .filter(|s| s.kind == SiteKind::KernelDefinition && s.body.is_some())
        .map(|s| KernelRef {
            name: s.name.clone(),
            line: s.line,
            skeleton: None,
            operator: None,
        })
        .collect()
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
) -> anyhow::Result<Vec<ApiSupportReport>> {
    let mut listed = Vec::new();
    for &target in targets {
        match SupportLists::builtin(target) {
            Ok(lists) => listed.push(lists),
            Err(SupportError::NoLists(_)) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let mut reports = Vec::new();
    for lists in &listed {
        let files = inventories(scanned, lists, out)?;
        if files.is_empty() {
            continue;
        }
        let version = lists.version(None)?;
        let chip = lists.chip(default_chip(lists))?;
        let report = support_report(scanned, &files, lists, (version, chip), rules);
        let suffix = if listed.len() > 1 {
            format!("-{}", lists.target)
        } else {
            String::new()
        };
        write_report_files(dir, &suffix, &report)?;
        reports.push(report);
    }
    Ok(reports)
}

/// `DIR/api_support{suffix}.csv`, `.json` and `.html`,
/// `DIR/third_party{suffix}.csv`, `DIR/custom_ops{suffix}.csv` and
/// `DIR/advice{suffix}.csv`.
fn write_report_files(
    dir: &std::path::Path,
    suffix: &str,
    report: &ApiSupportReport,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create {}; check the path and permissions",
            dir.display()
        )
    })?;
    let files = [
        (format!("api_support{suffix}.csv"), api_support_csv(report)?),
        (
            format!("api_support{suffix}.json"),
            serde_json::to_string_pretty(report)? + "\n",
        ),
        (
            format!("third_party{suffix}.csv"),
            third_party_csv(&report.third_party)?,
        ),
        (
            format!("custom_ops{suffix}.csv"),
            custom_ops_csv(&report.custom_ops)?,
        ),
        (format!("advice{suffix}.csv"), advice_csv(&report.advice)?),
        (
            format!("api_support{suffix}.html"),
            api_support_html(report),
        ),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
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
            let instead = if first.alternative.is_empty() {
                String::new()
            } else {
                format!(" -> {}", first.alternative)
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
            writeln!(
                w,
                "  [{}] {id} ×{uses} (first {}:{} `{}`): {}",
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
