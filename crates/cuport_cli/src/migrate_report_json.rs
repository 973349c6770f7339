//! The versioned JSON document of `cuport migrate --format json` and the
//! text statistics.
use std::collections::BTreeMap;
use std::io::Write;

use cuport_model::{Library, SiteKind};
use cuport_rewrite::{Diagnostic, Edit, FileStats, Level, Migration, Tally};
use serde::Serialize;

use crate::output::Output;
use crate::settings::Settings;

pub(crate) const MIGRATE_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Serialize)]
pub(crate) struct MigrateDocument<'a> {
    format: &'static str,
    version: u32,
    cuport_version: &'static str,
    target: String,
    /// Dual-stack runs: every backend besides CUDA the source builds for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    dual: Vec<String>,
    root: String,
    files: Vec<FileEntry<'a>>,
    /// Files the run generates (the dual-stack shim), relative to the root.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    generated: Vec<&'a str>,
    totals: Totals,
}

#[derive(Debug, Serialize)]
struct FileEntry<'a> {
    path: &'a str,
    language: cuport_model::Language,
    changed: bool,
    edits: &'a [Edit],
    diagnostics: &'a [Diagnostic],
    stats: &'a FileStats,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<String>,
}

/// Sums over all files.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Totals {
    pub(crate) files: usize,
    pub(crate) files_changed: usize,
    pub(crate) sites: usize,
    pub(crate) converted: usize,
    pub(crate) not_converted: usize,
    pub(crate) approximate: usize,
    pub(crate) suppressed: usize,
    pub(crate) edits: usize,
    pub(crate) changed_lines: usize,
    pub(crate) bytes_removed: usize,
    pub(crate) bytes_added: usize,
    pub(crate) effort_hours: f64,
    pub(crate) diagnostics: BTreeMap<String, usize>,
    pub(crate) by_library: BTreeMap<Library, Tally>,
    pub(crate) by_kind: BTreeMap<SiteKind, Tally>,
}

impl Totals {
    pub(crate) fn of(migration: &Migration) -> Self {
        let mut t = Totals {
            files: migration.files.len(),
            ..Totals::default()
        };
        for file in &migration.files {
            let s = &file.result.stats;
            t.files_changed += usize::from(file.result.changed());
            t.sites += s.sites;
            t.converted += s.converted;
            t.not_converted += s.not_converted;
            t.approximate += s.approximate;
            t.suppressed += s.suppressed;
            t.edits += s.edits;
            t.changed_lines += s.changed_lines;
            t.bytes_removed += s.bytes_removed;
            t.bytes_added += s.bytes_added;
            t.effort_hours += s.effort_hours;
            for d in &file.result.diagnostics {
                *t.diagnostics.entry(d.level.id().to_owned()).or_default() += 1;
            }
            add_tallies(&mut t.by_library, &s.by_library);
            add_tallies(&mut t.by_kind, &s.by_kind);
        }
        t
    }
}

fn add_tallies<K: Ord + Copy>(into: &mut BTreeMap<K, Tally>, from: &BTreeMap<K, Tally>) {
    for (key, tally) in from {
        let entry = into.entry(*key).or_default();
        entry.converted += tally.converted;
        entry.not_converted += tally.not_converted;
    }
}

impl<'a> MigrateDocument<'a> {
    pub(crate) fn new(migration: &'a Migration, settings: &Settings, with_diff: bool) -> Self {
        Self {
            format: "cuport-migrate",
            version: MIGRATE_FORMAT_VERSION,
            cuport_version: env!("CARGO_PKG_VERSION"),
            target: settings.target.value.id().to_owned(),
            dual: migration_dual(settings),
            root: migration.root.display().to_string(),
            generated: migration
                .generated
                .iter()
                .map(|g| g.path.as_str())
                .collect(),
            files: migration
                .files
                .iter()
                .map(|f| FileEntry {
                    path: &f.path,
                    language: f.language,
                    changed: f.result.changed(),
                    edits: &f.result.edits,
                    diagnostics: &f.result.diagnostics,
                    stats: &f.result.stats,
                    diff: (with_diff && f.result.changed())
                        .then(|| cuport_rewrite::unified_diff(f)),
                })
                .collect(),
            totals: Totals::of(migration),
        }
    }
}

fn migration_dual(settings: &Settings) -> Vec<String> {
    if !settings.dual.value {
        return Vec::new();
    }
    settings
        .targets
        .value
        .iter()
        .map(|t| t.id().to_owned())
        .collect()
}

pub(crate) fn write_summary(
    w: &mut impl Write,
    migration: &Migration,
    settings: &Settings,
    wrote: bool,
    out: &Output,
) -> std::io::Result<()> {
    let t = Totals::of(migration);
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
    let share = if t.sites == 0 {
        100.0
    } else {
        100.0 * t.converted as f64 / t.sites as f64
    };
    writeln!(w, "Sites: {} converted automatically ({share:.1}%), {} left for a person, {} approximate, {} suppressed", t.converted, t.not_converted, t.approximate, t.suppressed)?;
    let levels: Vec<String> = [
        Level::Unsupported,
        Level::Manual,
        Level::Approximate,
        Level::Note,
    ]
    .iter()
    .filter_map(|l| t.diagnostics.get(l.id()).map(|n| format!("{n} {}", l.id())))
    .collect();
    if !levels.is_empty() {
        writeln!(w, "Diagnostics: {}", levels.join(", "))?;
    }
    writeln!(w, "Estimated manual effort: {:.1} hours", t.effort_hours)?;
    if !migration.generated.is_empty() {
        let paths: Vec<&str> = migration
            .generated
            .iter()
            .map(|g| g.path.as_str())
            .collect();
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
