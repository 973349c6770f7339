//! Migrating one file: plan every site, run the post-plan passes, add the
//! headers or imports the target needs, optionally annotate, then apply all
//! edits in one pass. `crate::mode` picks the planner, the passes and where
//! the runtime header goes; nothing here asks which mode the run is in.
use cuport_analyze::FileAnalysis;
use cuport_model::{Language, Library, LineIndex, SiteKind};
use cuport_rules::RuleSet;

use crate::diagnostic::{codes, effort_hours, Diagnostic, Level};
use crate::edit::{apply_edits, Edit};
use crate::headers::{annotation_edits, header_edits, included_paths, MainHeader};
use crate::kernel_stage::kernel_records;
use crate::options::MigrateOptions;
use crate::plan::{FileInput, Planned, PlannedFile};
use crate::result::{FileMigration, FileStats};
use crate::suppress::Suppressions;
use cuport_model::Effort;

/// Migrates `src` (analysed as `analysis`), the file at `path` (relative to
/// the root, `/`-separated; `""` for a file at the root). Dual-stack output
/// includes the shim relative to it.
pub fn migrate_file(
    path: &str,
    language: Language,
    src: &[u8],
    analysis: &FileAnalysis,
    rules: &RuleSet,
    options: &MigrateOptions,
) -> FileMigration {
    let file = TreeFile {
        path,
        language,
        runtime_provided: false,
        included_by_cuda_source: false,
    };
    migrate_tree_file(&file, src, analysis, rules, options)
}

/// A file as the tree it is migrated with sees it.
pub(crate) struct TreeFile<'a> {
    pub(crate) path: &'a str,
    pub(crate) language: Language,
    /// A project header it includes first gives it the runtime header
    /// (`crate::runtime_providers`).
    pub(crate) runtime_provided: bool,
    /// A `.cu` file includes it, and it gives itself no runtime header: it
    /// relied on the includer's implicit one (`crate::runtime_providers`).
    pub(crate) included_by_cuda_source: bool,
}

/// [`migrate_file`] with what the rest of the tree tells about the file.
pub(crate) fn migrate_tree_file(
    file: &TreeFile<'_>,
    src: &[u8],
    analysis: &FileAnalysis,
    rules: &RuleSet,
    options: &MigrateOptions,
) -> FileMigration {
    let (path, language) = (file.path, file.language);
    let lines = LineIndex::new(src);
    let suppressions = Suppressions::find(src, &lines, language);
    let input = FileInput {
        path,
        language,
        src,
        analysis,
        rules,
        options,
        lines: &lines,
        suppressions: &suppressions,
        words: std::cell::OnceCell::new(),
        valid_text: std::cell::OnceCell::new(),
    };
    let PlannedFile {
        mut planned,
        stats,
        runtime_header,
    } = crate::mode::plan_file(&input);
    for pass in crate::mode::passes(options) {
        pass.run(&input, &mut planned);
    }
    let main = MainHeader {
        spelled: &runtime_header,
        already_ported: already_ported(src, rules, options),
        provided_by_project_header: file.runtime_provided,
        included_by_cuda_source: file.included_by_cuda_source,
        placement: crate::mode::header_placement(options),
    };
    // First in the list: an include inserted where a kernel guard is also
    // inserted must come before the guard (edits at one offset keep their
    // order).
    let headers = header_edits(src, language, analysis, &planned, &main);
    planned.edits.splice(0..0, headers);
    if options.annotate {
        let notes = annotation_edits(src, &lines, language, &planned.diagnostics, &planned.edits);
        planned.edits.extend(notes);
    }
    let mut migration = finish(src, &lines, planned, stats);
    migration.kernels = kernel_records(path, analysis, &lines, &migration.diagnostics, options);
    migration.lines = lines;
    migration
}

/// Whether the file was ported before: it includes a header the tables
/// produce for a target (or the dual-stack shim). Headers a target keeps
/// as they are (`thrust/...`) may still be there.
fn already_ported(src: &[u8], rules: &RuleSet, options: &MigrateOptions) -> bool {
    included_paths(src).iter().any(|path| {
        path.contains("cuport/")
            || options
                .targets()
                .iter()
                .any(|&t| rules.is_target_header(t, path))
    })
}

fn finish(src: &[u8], lines: &LineIndex, planned: Planned, mut stats: FileStats) -> FileMigration {
    let (output, applied, conflicts) = apply_edits(src, planned.edits);
    let mut diagnostics = planned.diagnostics;
    for conflict in conflicts {
        let at = lines.line_col(conflict.rejected.range.start);
        diagnostics.push(Diagnostic {
            code: codes::EDIT_CONFLICT,
            level: Level::Manual,
            effort: Some(Effort::Low),
            message: format!(
                "edit for `{}` overlaps another edit and was not applied; port this spot by hand (would have written `{}`)",
                conflict.rejected.cuda_name, conflict.rejected.replacement
            ),
            line: at.line,
            column: at.column,
            range: conflict.rejected.range,
            cuda_name: conflict.rejected.cuda_name.clone(),
            library: Library::Runtime,
            kind: SiteKind::RuntimeApi,
            suggestion: None,
            reference: None,
        });
    }
    diagnostics.sort_by_key(|d| (d.line, d.column));
    stats.edits = applied.len();
    stats.bytes_removed = applied.iter().map(|e| e.range.len()).sum();
    stats.bytes_added = applied.iter().map(|e| e.replacement.len()).sum();
    stats.changed_lines = changed_lines(lines, &applied);
    // `+ 0.0` turns the -0.0 of an empty float sum into 0.0.
    stats.effort_hours = diagnostics.iter().map(effort_hours).sum::<f64>() + 0.0;
    FileMigration {
        output,
        edits: applied,
        diagnostics,
        stats,
        kernels: Vec::new(),
        lines: LineIndex::default(),
    }
}

fn changed_lines(lines: &LineIndex, edits: &[Edit]) -> usize {
    let mut touched: Vec<usize> = edits
        .iter()
        .flat_map(|e| lines.line_of(e.range.start)..=lines.line_of(e.range.end.max(e.range.start)))
        .collect();
    touched.sort_unstable();
    touched.dedup();
    touched.len()
}
