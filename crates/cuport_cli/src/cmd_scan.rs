//! `cuport scan`: the inventory of CUDA touchpoints in a code base.
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anstyle::AnsiColor;
use anyhow::Context;
use cuport_analyze::{
    scan_tree, AnalyzeOptions, ScanDocument, ScanOptions, ScanSummary, SyntaxCheck,
};
use cuport_model::{Library, SiteKind};

use crate::output::Output;
use crate::scanning::{known_cuda_names, BarProgress};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ScanFormat {
    /// A summary for people.
    Text,
    /// Every site, as a versioned JSON document (format `cuport-scan`).
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SyntaxCheckArg {
    Off,
    Kernels,
    All,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  cuport scan .                        summary of the current directory
  cuport scan --format json src > sites.json
  cuport scan --exclude 'third_party/**' --exclude '*.py' .
  cuport scan --syntax-check all src   also report regions tree-sitter-cpp cannot parse

Exit status: 0 when the tree was scanned (even if single files were skipped,
which are reported as warnings); 2 on a usage error or when the root cannot be read.")]
pub(crate) struct ScanArgs {
    /// Directory or file to scan.
    #[arg(default_value = ".")]
    pub(crate) path: PathBuf,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = ScanFormat::Text)]
    pub(crate) format: ScanFormat,
    #[command(flatten)]
    pub(crate) walk: crate::walk_args::WalkArgs,
    /// Skip files larger than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 32 * 1024 * 1024)]
    pub(crate) max_file_size: u64,
    /// Which C/C++/CUDA files tree-sitter-cpp also parses to report
    /// regions it cannot parse (the token pass finds sites either way).
    #[arg(long, value_enum, default_value_t = SyntaxCheckArg::Kernels)]
    pub(crate) syntax_check: SyntaxCheckArg,
    /// Worker threads (0: one per core).
    #[arg(long, short = 'j', default_value_t = 0)]
    pub(crate) threads: usize,
    /// How many files to list under "Files with the most sites".
    #[arg(long, default_value_t = 10)]
    pub(crate) top: usize,
}

pub(crate) fn run(args: &ScanArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let options = ScanOptions {
        excludes: args.walk.exclude.clone(),
        include_hidden: args.walk.hidden,
        no_ignore: args.walk.no_ignore,
        max_file_size: args.max_file_size,
        analyze: AnalyzeOptions {
            syntax_check: match args.syntax_check {
                SyntaxCheckArg::Off => SyntaxCheck::Off,
                SyntaxCheckArg::Kernels => SyntaxCheck::Kernels,
                SyntaxCheckArg::All => SyntaxCheck::All,
            },
        },
        threads: args.threads,
        known_names: known_cuda_names(out),
        keep_sources: false,
        inventory: false,
    };
    let started = std::time::Instant::now();
    let bar = BarProgress(out.progress(0, "scanning"));
    let report = scan_tree(&args.path, &options, &bar)
        .with_context(|| "scan failed; check the path and try again")?;
    bar.0.finish_and_clear();
    for skipped in &report.skipped {
        out.warn(&format!("{}: skipped: {}", skipped.path, skipped.reason));
    }
    for file in &report.files {
        for warning in &file.analysis.warnings {
            out.warn(&format!("{}: {warning}", file.path));
        }
    }
    out.info(&format!("scanned in {:.2?}", started.elapsed()));
    let root = args.path.display().to_string();
    let document = ScanDocument::new(&root, env!("CARGO_PKG_VERSION"), report);
    // Buffered: stdout is line-buffered, and a large scan has millions of lines.
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        ScanFormat::Json => {
            serde_json::to_writer_pretty(&mut stdout, &document)?;
            writeln!(stdout)?;
        }
        ScanFormat::Text => write_text(&mut stdout, &document, args.top, out)?,
    }
    stdout.flush()?;
    Ok(crate::exit::success())
}

fn write_text(
    w: &mut impl Write,
    doc: &ScanDocument,
    top: usize,
    out: &Output,
) -> std::io::Result<()> {
    let s = &doc.summary;
    let bold = out.bold();
    writeln!(
        w,
        "{bold}Scanned {} files{bold:#} ({} lines, {}) under {}",
        s.files,
        s.lines,
        human_bytes(s.bytes),
        doc.root
    )?;
    writeln!(
        w,
        "{bold}{} CUDA touchpoints{bold:#} in {} files",
        s.sites, s.files_with_sites
    )?;
    writeln!(
        w,
        "Kernels: {} definitions, {} launches",
        s.kernel_definitions, s.kernel_launches
    )?;
    write_counts(
        w,
        "By library",
        s.by_library
            .iter()
            .map(|(l, n)| (Library::name(*l).to_owned(), *n)),
        out,
    )?;
    write_counts(
        w,
        "By kind",
        s.by_kind
            .iter()
            .map(|(k, n)| (SiteKind::id(*k).to_owned(), *n)),
        out,
    )?;
    write_top_files(w, doc, top)?;
    write_problems(w, doc, s, out)
}

fn write_counts(
    w: &mut impl Write,
    title: &str,
    rows: impl Iterator<Item = (String, usize)>,
    out: &Output,
) -> std::io::Result<()> {
    let mut rows: Vec<_> = rows.collect();
    if rows.is_empty() {
        return Ok(());
    }
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let max = rows.first().map_or(1, |r| r.1.max(1));
    let bar_style = out.style(AnsiColor::Cyan, false);
    writeln!(w, "\n{title}:")?;
    for (name, count) in rows {
        let bar = "#".repeat((count * 30).div_ceil(max));
        writeln!(w, "  {name:<26} {count:>7}  {bar_style}{bar}{bar_style:#}")?;
    }
    Ok(())
}

fn write_top_files(w: &mut impl Write, doc: &ScanDocument, top: usize) -> std::io::Result<()> {
    let mut files: Vec<_> = doc
        .files
        .iter()
        .filter(|f| !f.analysis.sites.is_empty())
        .collect();
    if files.is_empty() || top == 0 {
        return Ok(());
    }
    files.sort_by(|a, b| {
        b.analysis
            .sites
            .len()
            .cmp(&a.analysis.sites.len())
            .then(a.path.cmp(&b.path))
    });
    writeln!(w, "\nFiles with the most sites:")?;
    for file in files.iter().take(top) {
        let kernels = file
            .analysis
            .sites
            .iter()
            .filter(|s| s.kind == SiteKind::KernelDefinition)
            .count();
        let kernel_note = if kernels > 0 {
            format!(", {kernels} kernels")
        } else {
            String::new()
        };
        writeln!(
            w,
            "  {:>6}  {} ({}{kernel_note})",
            file.analysis.sites.len(),
            file.path,
            file.language
        )?;
    }
    if files.len() > top {
        writeln!(w, "  ... and {} more files with sites", files.len() - top)?;
    }
    Ok(())
}

fn write_problems(
    w: &mut impl Write,
    doc: &ScanDocument,
    s: &ScanSummary,
    out: &Output,
) -> std::io::Result<()> {
    let warn = out.style(AnsiColor::Yellow, true);
    if s.files_with_parse_issues > 0 {
        writeln!(
            w,
            "\n{warn}Parse issues{warn:#} ({} files; sites were still found):",
            s.files_with_parse_issues
        )?;
        for file in doc
            .files
            .iter()
            .filter(|f| !f.analysis.parse_issues.is_empty())
        {
            let lines: Vec<String> = file
                .analysis
                .parse_issues
                .iter()
                .map(|p| {
                    if p.line_start == p.line_end {
                        p.line_start.to_string()
                    } else {
                        format!("{}-{}", p.line_start, p.line_end)
                    }
                })
                .collect();
            writeln!(w, "  {}: lines {}", file.path, lines.join(", "))?;
        }
    }
    if !s.project_names.is_empty() {
        let mut names: Vec<_> = s.project_names.iter().collect();
        names.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let listed: Vec<String> = names
            .iter()
            .take(12)
            .map(|(n, c)| format!("{n} ({c})"))
            .collect();
        let more = names.len().saturating_sub(12);
        let more = if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        };
        writeln!(
            w,
            "\nNot counted: CUDA-looking names the project defines itself (uses): {}{more}",
            listed.join(", ")
        )?;
    }
    if !doc.skipped.is_empty() {
        writeln!(w, "\n{warn}Skipped{warn:#} ({} files):", doc.skipped.len())?;
        for skipped in &doc.skipped {
            writeln!(w, "  {}: {}", skipped.path, skipped.reason)?;
        }
    }
    Ok(())
}

fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
