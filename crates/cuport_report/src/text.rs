//! The text summary `cuport migrate` prints and `cuport report --format
//! text` reproduces: rendered from the report document alone, like the
//! other formats.
use std::fmt::Write;

use cuport_rewrite::Level;

use crate::document::ReportDocument;

/// How the heading is emphasised: ANSI bold on a terminal, nothing in a
/// file or pipe.
#[derive(Debug, Clone, Copy, Default)]
pub struct Emphasis<'a> {
    pub start: &'a str,
    pub end: &'a str,
}

/// The text summary of a migration.
pub fn summary_text(document: &ReportDocument, emphasis: Emphasis<'_>) -> String {
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = write_summary(&mut text, document, emphasis);
    text
}

fn write_summary(
    w: &mut String,
    document: &ReportDocument,
    emphasis: Emphasis<'_>,
) -> std::fmt::Result {
    let t = &document.totals;
    let run = &document.run;
    writeln!(w)?;
    let heading = match run.dual_targets() {
        Some(targets) => format!("Dual-stack migration (CUDA + {targets})"),
        None => format!("Migration to {}", run.target),
    };
    writeln!(
        w,
        "{}{heading}{}: {} files analysed, {} {} ({} edits, {} lines)",
        emphasis.start,
        emphasis.end,
        t.files,
        t.files_changed,
        if run.written {
            "changed"
        } else {
            "would change"
        },
        t.edits,
        t.changed_lines
    )?;
    write_sites(w, document)?;
    write_generated(w, document)?;
    write_libraries(w, document)
}

fn write_sites(w: &mut String, document: &ReportDocument) -> std::fmt::Result {
    let t = &document.totals;
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
    writeln!(w, "Estimated manual effort: {:.1} hours", t.effort_hours)
}

fn write_generated(w: &mut String, document: &ReportDocument) -> std::fmt::Result {
    if document.generated.is_empty() {
        return Ok(());
    }
    let paths: Vec<&str> = document.generated.iter().map(String::as_str).collect();
    let verb = if document.run.written {
        "Generated"
    } else {
        "Would generate"
    };
    if document.run.dual_targets().is_some() {
        let files = if paths.len() == 1 { "file" } else { "files" };
        writeln!(
            w,
            "{verb} {} shim {files}: {}",
            paths.len(),
            paths.join(", ")
        )?;
        writeln!(w, "Build with -DCUPORT_BACKEND_<TARGET> (CUDA is the default), or include cuport/cuport.cmake and call cuport_target(<target>)")
    } else {
        writeln!(
            w,
            "{verb} {} helper files: {}",
            paths.len(),
            paths.join(", ")
        )?;
        // Header-only helpers need only the include path; a helper source
        // file must also be compiled in.
        match paths
            .iter()
            .find(|p| p.ends_with(".cpp") || p.ends_with(".c"))
        {
            Some(source) => writeln!(
                w,
                "Compile {source} into the program and add the output root to the include path"
            ),
            None => writeln!(w, "Add the output root to the include path"),
        }
    }
}

fn write_libraries(w: &mut String, document: &ReportDocument) -> std::fmt::Result {
    writeln!(w, "\nBy library (converted / left):")?;
    let mut libraries: Vec<_> = document.totals.by_library.iter().collect();
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
