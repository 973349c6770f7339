//! Everything `cuport regress` writes about a run: the chosen format on
//! stdout, the report files (`--json/--markdown/--junit/--html`), the
//! baseline, and the exit status. Report files are written in every
//! outcome: a failing case, an interrupt, and a harness error (a report
//! with verdict ERROR and the message) alike.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anstyle::AnsiColor;
use anyhow::Context;
use cuport_regress::baseline::BaselineFile;
use cuport_regress::render;
use cuport_regress::report::{Outcome, RunReport, Verdict};

use super::{Format, ReportArgs};
use crate::output::Output;

/// Print the chosen format, write the report files, save the baseline,
/// and turn the gate's verdict into the exit status.
pub(super) fn emit(
    report: &RunReport,
    args: &ReportArgs,
    out: &Output,
) -> anyhow::Result<ExitCode> {
    print_report(report, args.format, out)?;
    warn_about_coverage(report, out);
    let written = write_report_files(report, args);
    if let Some(why) = &report.interrupted {
        out.warn(&format!(
            "cuport was {}: the report holds the cases that ran; the others are listed as not run",
            why.reason
        ));
    }
    written?;
    if report.interrupted.is_none() {
        if let Some(path) = &args.save_baseline {
            save_baseline(report, path, out)?;
        }
    }
    Ok(status(report))
}

/// What the run says about legs that did not run here.
fn warn_about_coverage(report: &RunReport, out: &Output) {
    let summary = &report.summary;
    let skipped = summary.with_skipped_legs;
    if skipped == 0 {
        return;
    }
    let failing = skipped - summary.skips_allowed;
    let how = if failing > 0 {
        format!("{failing} of them fail the gate as INCOMPLETE; pass --allow-skip (or set `allow_skip = true` in the case file) where this machine is expected to lack a backend")
    } else {
        "skips are allowed, so they are warnings".to_owned()
    };
    let cases = if skipped == 1 {
        "1 case has legs".to_owned()
    } else {
        format!("{skipped} cases have legs")
    };
    out.warn(&format!(
        "{cases} that did not run here (backend unavailable or unsupported; see the `compared` checks, or --verbose); {how}"
    ));
    if summary.verdict == Verdict::NothingCompared {
        out.warn("no case compared anything, so the run cannot pass, even with --allow-skip");
    }
}

/// The exit status of a finished run (see `crate::exit`).
pub(super) fn status(report: &RunReport) -> ExitCode {
    match (&report.summary.verdict, &report.interrupted) {
        (Verdict::Interrupted, Some(why)) => crate::exit::interrupted(why.signal),
        (Verdict::Error, _) => crate::exit::error(),
        (verdict, _) => crate::exit::gate(*verdict != Verdict::Pass),
    }
}

/// Write every requested report file; a file that cannot be written does
/// not keep the others from being written.
fn write_report_files(report: &RunReport, args: &ReportArgs) -> anyhow::Result<()> {
    let sides: [(&Option<PathBuf>, Format); 4] = [
        (&args.json, Format::Json),
        (&args.markdown, Format::Markdown),
        (&args.junit, Format::Junit),
        (&args.html, Format::Html),
    ];
    let mut first_error = None;
    for (path, format) in sides {
        let Some(path) = path else { continue };
        let written = rendered(report, format).and_then(|text| {
            std::fs::write(path, text).with_context(|| {
                format!(
                    "cannot write the report file {}; check that its folder exists and is writable",
                    path.display()
                )
            })
        });
        if let Err(e) = written {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// After a harness error: the requested report files (and a machine
/// format on stdout) say ERROR with the message, so CI that collects them
/// shows why the run failed. Failures to write them are only warned about.
pub(super) fn emit_harness_error(error: &anyhow::Error, args: &ReportArgs, out: &Output) {
    let report = RunReport::harness_error(format!("{error:#}"));
    if args.format != Format::Text {
        if let Ok(text) = rendered(&report, args.format) {
            print!("{text}");
        }
    }
    if let Err(e) = write_report_files(&report, args) {
        out.warn(&format!("{e:#}"));
    }
}

fn save_baseline(report: &RunReport, path: &Path, out: &Output) -> anyhow::Result<()> {
    let mut file = if path.exists() {
        BaselineFile::load(path)?
    } else {
        BaselineFile::default()
    };
    file.merge(BaselineFile::from_report(report));
    file.save(path)?;
    out.info(&format!("baseline written to {}", path.display()));
    Ok(())
}

pub(super) fn rendered(report: &RunReport, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Json | Format::Text => serde_json::to_string_pretty(report)? + "\n",
        Format::Markdown => render::markdown::render(report),
        Format::Junit => render::junit::render(report).context("cannot serialise JUnit XML")?,
        Format::Html => render::html::render(report),
    })
}

pub(super) fn print_report(report: &RunReport, format: Format, out: &Output) -> anyhow::Result<()> {
    if format != Format::Text {
        print!("{}", rendered(report, format)?);
        return Ok(());
    }
    for case in &report.cases {
        let colour = match case.outcome {
            Outcome::Pass => AnsiColor::Green,
            Outcome::Skipped => AnsiColor::BrightBlack,
            Outcome::Uncertain => AnsiColor::Yellow,
            Outcome::Incomplete | Outcome::Fail | Outcome::Error => AnsiColor::Red,
        };
        let style = out.style(colour, true);
        println!("{style}{:<10}{style:#} {}", case.outcome.label(), case.name);
        for check in case
            .checks
            .iter()
            .filter(|c| out.verbose || !matches!(c.outcome, Outcome::Pass | Outcome::Skipped))
        {
            let mut lines = check.message.lines();
            println!(
                "    {:<10} {}: {}",
                check.outcome.label(),
                check.name,
                lines.next().unwrap_or("")
            );
            if matches!(check.outcome, Outcome::Fail | Outcome::Error) {
                lines.for_each(|l| println!("               {l}"));
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
    let bold = out.bold();
    let line = report.summary.line();
    let (verdict, rest) = line.split_once(':').unwrap_or((&line, ""));
    println!("{bold}{verdict}{bold:#}:{rest}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use cuport_regress::interrupt::Interruption;

    use super::*;

    /// The status cuport exits with is the one the report's summary
    /// records, for every verdict.
    #[test]
    fn exit_status_matches_the_reports_exit_code() {
        let mut reports = vec![
            RunReport::new(Vec::new(), Vec::new(), Vec::new(), false),
            RunReport::harness_error("case file unreadable".to_owned()),
        ];
        let mut stopped = RunReport::new(Vec::new(), Vec::new(), Vec::new(), false);
        stopped.interrupt(Interruption::from_signal(15));
        reports.push(stopped);
        let verdicts: Vec<Verdict> = reports.iter().map(|r| r.summary.verdict).collect();
        assert_eq!(
            verdicts,
            [
                Verdict::NothingCompared,
                Verdict::Error,
                Verdict::Interrupted
            ]
        );
        for report in &reports {
            assert_eq!(
                status(report),
                ExitCode::from(report.summary.exit_code),
                "{:?}",
                report.summary.verdict
            );
        }
    }
}
