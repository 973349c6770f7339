//! `cuport report` (issue 6): re-render a migration's report.json as
//! Markdown, SARIF, CSV, JSON or HTML without running the migration again; and
//! the glue that lets `cuport migrate --report DIR` write every format.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use cuport_report::{
    changes_csv, render, summary_markdown_within, summary_text, unsupported_csv, write_rendered,
    Emphasis, Format, ReportDocument, SUMMARY_LIMIT,
};

use crate::output::Output;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FormatArg {
    /// summary.md: totals, share per library, effort, top unsupported APIs, diagnostics.
    Md,
    /// diagnostics.sarif: SARIF 2.1.0 for code-scanning UIs.
    Sarif,
    /// changes.csv and unsupported.csv (one table on stdout or -o; see --table).
    Csv,
    /// report.json itself, normalised.
    Json,
    /// report.html: the self-contained review page (dashboard and diffs).
    Html,
    /// The text summary `cuport migrate` printed (summary.txt).
    Text,
}

impl FormatArg {
    /// The report crate's format; none for the text summary, which has no
    /// file among the report files.
    fn format(self) -> Option<Format> {
        match self {
            FormatArg::Md => Some(Format::Markdown),
            FormatArg::Sarif => Some(Format::Sarif),
            FormatArg::Csv => Some(Format::Csv),
            FormatArg::Json => Some(Format::Json),
            FormatArg::Html => Some(Format::Html),
            FormatArg::Text => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CsvTable {
    /// One row per applied edit.
    Changes,
    /// One row per site left for a person.
    Unsupported,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
cuport migrate --to ascend src/ --report review/\n  \
cuport report review/report.json --format md > summary.md\n  \
cuport report review/report.json --format text\n  \
cuport report review/report.json --format sarif -o cuport.sarif\n  \
cuport report review/report.json --format html -o report.html\n  \
cuport report review/report.json --format csv --table unsupported\n  \
cuport report review/report.json --format csv --out-dir review/")]
pub(crate) struct ReportArgs {
    /// The report.json that `cuport migrate --report DIR` wrote.
    #[arg(value_name = "REPORT_JSON")]
    report: PathBuf,
    /// What to render.
    #[arg(long, value_enum, default_value_t = FormatArg::Md)]
    format: FormatArg,
    /// Write to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE", conflicts_with = "out_dir")]
    output: Option<PathBuf>,
    /// Write the format's usual file names into DIR (both tables for csv).
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// With --format csv: the table to print or write with -o [default: changes].
    #[arg(long, value_enum, conflicts_with = "out_dir")]
    table: Option<CsvTable>,
    /// With --format md: the largest summary in bytes; longer ones are cut
    /// with a note (GitHub comments take 65536 characters, job summaries
    /// 1 MiB) [default: 1000000].
    #[arg(long, value_name = "BYTES")]
    max_bytes: Option<usize>,
}

impl ReportArgs {
    fn check(&self) -> anyhow::Result<()> {
        if self.table.is_some() && self.format != FormatArg::Csv {
            anyhow::bail!("--table chooses a CSV table; use it with --format csv");
        }
        if self.max_bytes.is_some() && self.format != FormatArg::Md {
            anyhow::bail!("--max-bytes limits the Markdown summary; use it with --format md");
        }
        Ok(())
    }

    fn max_bytes(&self) -> usize {
        self.max_bytes.unwrap_or(SUMMARY_LIMIT)
    }
}

pub(crate) fn run(args: &ReportArgs, out: &Output) -> anyhow::Result<ExitCode> {
    args.check()?;
    let document = ReportDocument::read(&args.report)?;
    if let Some(dir) = &args.out_dir {
        let written = match args.format.format() {
            Some(Format::Markdown) => write_markdown(&document, dir, args.max_bytes())?,
            Some(format) => write_rendered(&document, dir, &[format])?,
            None => write_text_summary(&document, dir)?,
        };
        for path in written {
            out.info(&format!("wrote {}", path.display()));
        }
        return Ok(crate::exit::success());
    }
    let text = render_one(&document, args, out)?;
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("could not write {}", path.display()))?,
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
                .context("could not write to standard output")?;
        }
    }
    Ok(crate::exit::success())
}

fn render_one(
    document: &ReportDocument,
    args: &ReportArgs,
    out: &Output,
) -> anyhow::Result<String> {
    Ok(match args.format {
        FormatArg::Md => summary_markdown_within(document, args.max_bytes()),
        FormatArg::Csv => match args.table.unwrap_or(CsvTable::Changes) {
            CsvTable::Changes => changes_csv(document)?,
            CsvTable::Unsupported => unsupported_csv(document)?,
        },
        FormatArg::Text => summary_text(document, out.emphasis()),
        other => other
            .format()
            .map(|format| render(document, format))
            .transpose()?
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.text)
            .collect(),
    })
}

/// `DIR/summary.txt`: the text summary, without terminal emphasis.
fn write_text_summary(document: &ReportDocument, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create {}; check the path and permissions",
            dir.display()
        )
    })?;
    let path = dir.join("summary.txt");
    std::fs::write(&path, summary_text(document, Emphasis::default()))
        .with_context(|| format!("could not write {}", path.display()))?;
    Ok(vec![path])
}

fn write_markdown(
    document: &ReportDocument,
    dir: &Path,
    max_bytes: usize,
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let path = dir.join(Format::Markdown.file_names().concat());
    std::fs::write(&path, summary_markdown_within(document, max_bytes))
        .with_context(|| format!("could not write {}", path.display()))?;
    Ok(vec![path])
}
