//! Migrating one file: plan every site (`crate::mode` picks the planner),
//! add the headers or imports the target needs, optionally annotate, then
//! apply all edits in one pass.
use cuport_analyze::FileAnalysis;
use cuport_model::{KernelModel, Language, Library, LineIndex, SiteKind, TextRange};
use cuport_rules::RuleSet;

use crate::coordinate_casts::cast_coordinate_arguments;
use crate::diagnostic::{codes, effort_hours, Diagnostic, Level};
use crate::dim3_initialisers::construct_dim3_from_values;
use crate::edit::{apply_edits, Edit};
use crate::headers::{annotation_edits, header_edits, included_paths, MainHeader};
use crate::implicit_std_headers::add_implicit_std_headers;
use crate::initialised_arrays::report_initialised_vlas;
use crate::integer_handles::report_integer_handles;
use crate::kernel_stage::kernel_records;
use crate::member_versions::report_members_too_new;
use crate::options::MigrateOptions;
use crate::plan::{FileInput, Planned, PlannedFile};
use crate::result::{FileMigration, FileStats};
use crate::retyped_handles::report_retyped_arguments;
use crate::simt_build::add_simt_cmake_prelude;
use crate::simt_limits::report_simt_limits;
use crate::suppress::Suppressions;
use crate::target_provided::guard_target_provided;

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
    };
    let PlannedFile {
        mut planned,
        stats,
        runtime_header,
    } = crate::mode::plan_file(&input);
    fold_effort_into_kernels(&mut planned.diagnostics, analysis);
    if !options.is_dual() && !options.kernels_compile(options.target) {
        fold_effort_into_device_functions(&mut planned.diagnostics, analysis);
    }
    guard_target_provided(src, &lines, analysis, options.targets(), &mut planned);
    if matches!(language, Language::Cuda | Language::Cpp) {
        cast_coordinate_arguments(src, analysis, options.targets(), &mut planned);
        construct_dim3_from_values(src, &lines, analysis, options.targets(), &mut planned);
    }
    if matches!(language, Language::Cuda | Language::Cpp) {
        report_retyped_arguments(src, &lines, analysis, &mut planned);
        if !options.is_dual() {
            report_members_too_new(src, &lines, analysis, rules, options, &mut planned);
        }
        for target in options.targets() {
            report_integer_handles(src, &lines, analysis, *target, &mut planned);
        }
        report_initialised_vlas(src, &lines, options.targets(), &mut planned);
        report_simt_limits(src, &lines, analysis, rules, options, &mut planned);
    }
    add_simt_cmake_prelude(src, &lines, language, analysis, options, &mut planned);
    add_implicit_std_headers(src, language, analysis, options, &mut planned);
    // Where this source's kernels compile as they are (HIP, MUSA, and every
    // dual-stack backend that builds them), a kernel-only .cu file needs
    // the runtime header too: only nvcc includes it implicitly.
    let kernels_compile_here = options.is_dual() || options.kernels_compile(options.target);
    let simt = (!options.is_dual() && options.kernel_model(options.target) == KernelModel::Simt)
        .then(|| options.target.profile().kernels.simt.as_ref())
        .flatten();
    let main = MainHeader {
        spelled: &runtime_header,
        device: simt.map(|s| s.device_header.as_str()),
        even_without_edits: kernels_compile_here,
        already_ported: already_ported(src, rules, options),
        before_cooperative_groups: !options.is_dual() && kernels_compile_here,
        before_project_headers: options.is_dual(),
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
    migration.kernels = kernel_records(analysis, &lines, &migration.diagnostics, options);
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

/// Inside a kernel that must be rewritten by hand (Ascend C, BANG C), the
/// kernel's own diagnostic carries the effort; what is inside it is listed
/// for the engineer but not counted again.
fn fold_effort_into_kernels(diagnostics: &mut [Diagnostic], analysis: &FileAnalysis) {
    let manual_kernels: Vec<TextRange> = analysis
        .sites
        .iter()
        .filter(|s| s.kind == SiteKind::KernelDefinition)
        .filter(|s| {
            diagnostics
                .iter()
                .any(|d| d.code == codes::KERNEL_MANUAL && d.range == s.range)
        })
        .filter_map(|s| s.body)
        .collect();
    for diagnostic in diagnostics.iter_mut() {
        let inside = manual_kernels
            .iter()
            .any(|body| body.start <= diagnostic.range.start && diagnostic.range.end <= body.end);
        if inside && diagnostic.level >= Level::Approximate {
            diagnostic.effort = Some("included".into());
        }
    }
}
/// Where kernels are rewritten by hand (Ascend C, BANG C), a `__device__`
/// helper is rewritten with them and costs once: what the diagnostic on its
/// `__device__` carries (else its most expensive diagnostic), not once per
/// built-in variable or intrinsic in it. The rest inside it is listed for
/// the engineer but not counted again.
fn fold_effort_into_device_functions(diagnostics: &mut [Diagnostic], analysis: &FileAnalysis) {
    let helpers = analysis
        .sites
        .iter()
        .filter(|s| s.kind == SiteKind::Qualifier && s.name == "__device__");
    for helper in helpers {
        let Some(body) = helper.body else {
            continue;
        };
        let counted = |d: &Diagnostic| {
            d.level >= Level::Approximate && d.effort.as_deref() != Some("included")
        };
        let inside: Vec<usize> = (0..diagnostics.len())
            .filter(|&i| {
                let d = &diagnostics[i];
                body.start <= d.range.start && d.range.end <= body.end && counted(d)
            })
            .collect();
        let on_qualifier = diagnostics
            .iter()
            .any(|d| d.range == helper.range && counted(d));
        // The first of the costliest (`max_by` keeps the last of equals).
        let costliest = inside.iter().rev().copied().max_by(|&a, &b| {
            effort_hours(&diagnostics[a]).total_cmp(&effort_hours(&diagnostics[b]))
        });
        let kept = if on_qualifier { None } else { costliest };
        for i in inside {
            if Some(i) != kept {
                diagnostics[i].effort = Some("included".into());
            }
        }
    }
}

fn finish(src: &[u8], lines: &LineIndex, planned: Planned, mut stats: FileStats) -> FileMigration {
    let (output, applied, conflicts) = apply_edits(src, planned.edits);
    let mut diagnostics = planned.diagnostics;
    for conflict in conflicts {
        let at = lines.line_col(conflict.rejected.range.start);
        diagnostics.push(Diagnostic {
            code: codes::EDIT_CONFLICT.into(),
            level: Level::Manual,
            effort: Some("low".into()),
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
