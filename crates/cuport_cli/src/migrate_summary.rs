//! The text summary `cuport migrate` prints: a renderer of the run's
//! report document, like report.json, Markdown, SARIF, CSV and HTML.
use std::io::Write;

use cuport_report::ReportDocument;
use cuport_rewrite::Level;

use crate::output::Output;
use crate::settings::Settings;

/// The text summary of a migration, rendered from its report document.
pub(crate) fn write_summary(
    w: &mut impl Write,
    document: &ReportDocument,
    settings: &Settings,
    wrote: bool,
    out: &Output,
) -> std::io::Result<()> {
    let t = &document.totals;
    let bold = out.bold();
    writeln!(w)?;
    let heading = if settings.dual.value {
        format!("Dual-stack migration (CUDA + {})", settings.targets_text())
    } else {
        format!("Migration to {}", settings.target.value)
    };
    writeln!(
        w,
        "{bold}{heading}{bold:#}: {} files analysed, {} {} ({} edits, {} lines)",
        t.files,
        t.files_changed,
        if wrote { "changed" } else { "would change" },
        t.edits,
        t.changed_lines
    )?;
    if t.sites == 0 {
        // No share to report: nothing was there to convert.
        let what = if t.files == 0 {
            "no files cuport analyses (C/C++/CUDA, Python, CMake, Rust) were found"
        } else {
            "no CUDA touchpoints were found in them"
        };
        writeln!(w, "Sites: none; {what}")?;
    } else {
        let share = 100.0 * t.converted as f64 / t.sites as f64;
        writeln!(w, "Sites: {} converted automatically ({share:.1}%), {} left for a person, {} approximate, {} suppressed", t.converted, t.not_converted, t.approximate, t.suppressed)?;
    }
    let levels: Vec<String> = [
        Level::Unsupported,
        Level::Manual,
        Level::Approximate,
        Level::Note,
    ]
    .iter()
    .filter_map(|l| t.diagnostics.get(l).map(|n| format!("{n} {}", l.id())))
    .collect();
    if !levels.is_empty() {
        writeln!(w, "Diagnostics: {}", levels.join(", "))?;
    }
    let kernels: Vec<String> = document
        .kernel_dispositions()
        .iter()
        .map(|(disposition, n)| format!("{n} {}", disposition.id()))
        .collect();
    if !kernels.is_empty() {
        writeln!(w, "Kernels: {}", kernels.join(", "))?;
    }
    writeln!(w, "Estimated manual effort: {:.1} hours", t.effort_hours)?;
    if !document.generated.is_empty() {
        let paths: Vec<&str> = document.generated.iter().map(String::as_str).collect();
        let verb = if wrote { "Generated" } else { "Would generate" };
        if settings.dual.value {
            let files = if paths.len() == 1 { "file" } else { "files" };
            writeln!(
                w,
                "{verb} {} shim {files}: {}",
                paths.len(),
                paths.join(", ")
            )?;
            writeln!(w, "Build with -DCUPORT_BACKEND_<TARGET> (CUDA is the default), or include cuport/cuport.cmake and call cuport_target(<target>)")?;
        } else {
            writeln!(
                w,
                "{verb} {} helper files: {}",
                paths.len(),
                paths.join(", ")
            )?;
            writeln!(w, "Compile cuport_ascend_helpers.cpp into the program and add the output root to the include path")?;
        }
    }
    writeln!(w, "\nBy library (converted / left):")?;
    let mut libraries: Vec<_> = t.by_library.iter().collect();
    libraries.sort_by(|a, b| {
        (b.1.converted + b.1.not_converted).cmp(&(a.1.converted + a.1.not_converted))
    });
    for (library, tally) in libraries {
        writeln!(
            w,
            "  {:<26} {:>7} / {:<7}",
            library.name(),
            tally.converted,
            tally.not_converted
        )?;
    }
    Ok(())
}
