//! Migrating one file: plan every site, add the headers or imports the
//! target needs, optionally annotate, then apply all edits in one pass.
use std::collections::BTreeMap;

use cuport_analyze::FileAnalysis;
use cuport_model::{Language, Library, LineIndex, SiteKind, Target, TextRange};
use cuport_rules::RuleSet;
use serde::{Deserialize, Serialize};

use crate::diagnostic::{codes, effort_hours, Diagnostic, Level};
use crate::edit::{apply_edits, Edit};
use crate::options::MigrateOptions;
use crate::plan::{Planned, Planner};
use crate::suppress::Suppressions;

/// Converted and not converted sites of one library or kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub converted: usize,
    pub not_converted: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileStats {
    pub sites: usize,
    /// Sites ported automatically (approximate ones included, and reported).
    pub converted: usize,
    /// Sites left for a person (manual, unsupported, unknown).
    pub not_converted: usize,
    pub approximate: usize,
    /// Sites skipped because of `cuport: ignore` / `cuport: off` markers.
    pub suppressed: usize,
    pub edits: usize,
    pub changed_lines: usize,
    pub bytes_removed: usize,
    pub bytes_added: usize,
    /// Estimated hours of manual work (see `effort_hours`).
    pub effort_hours: f64,
    pub by_library: BTreeMap<Library, Tally>,
    pub by_kind: BTreeMap<SiteKind, Tally>,
}

/// The result of migrating one file.
#[derive(Debug, Clone, Default)]
pub struct FileMigration {
    pub output: Vec<u8>,
    pub edits: Vec<Edit>,
    pub diagnostics: Vec<Diagnostic>,
    pub stats: FileStats,
}

impl FileMigration {
    pub fn changed(&self) -> bool {
        !self.edits.is_empty()
    }
}

/// Migrates `src` (analysed as `analysis`) to `options.target`, as a file
/// at the root of the tree.
pub fn migrate_source(
    language: Language,
    src: &[u8],
    analysis: &FileAnalysis,
    rules: &RuleSet,
    options: &MigrateOptions,
) -> FileMigration {
    migrate_file("", language, src, analysis, rules, options)
}

/// Migrates the file at `path` (relative to the root, `/`-separated; dual
/// stack includes the shim relative to it).
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
    let per_target: Vec<MigrateOptions> = options
        .dual
        .iter()
        .map(|&target| MigrateOptions {
            target,
            dual: Vec::new(),
            ..options.clone()
        })
        .collect();
    let mut planner = Planner::new(src, language, rules, options, &lines);
    planner.dual.per_target = &per_target;
    planner.dual.prefix = "../".repeat(path.matches('/').count());
    let mut stats = FileStats::default();
    for site in &analysis.sites {
        if suppressions.covers(lines.line_of(site.range.start)) {
            stats.suppressed += 1;
            continue;
        }
        let diagnostics_before = planner.out.diagnostics.len();
        planner.site(site);
        count_site(
            &mut stats,
            site.library,
            site.kind,
            &planner.out.diagnostics[diagnostics_before..],
        );
    }
    if options.is_dual() && language == Language::Python {
        crate::dual::python::finish_file(&mut planner);
    }
    planner.compose_rewrites();
    crate::dual::c::compose_launches(&mut planner);
    let prefix = std::mem::take(&mut planner.dual.prefix);
    let mut planned = planner.out;
    fold_effort_into_kernels(&mut planned.diagnostics, analysis);
    let main_header = if options.is_dual() {
        crate::dual::c::runtime_include(&prefix)
    } else {
        main_header(options.target).to_owned()
    };
    // Where this source's kernels compile as they are (HIP, MUSA, and every
    // dual-stack backend that builds them), a kernel-only .cu file needs
    // the runtime header too: only nvcc includes it implicitly.
    let kernels_compile_here =
        options.is_dual() || matches!(options.target, Target::Hip | Target::Musa);
    let main = MainHeader {
        spelled: &main_header,
        even_without_edits: kernels_compile_here,
    };
    // First in the list: an include inserted where a kernel guard is also
    // inserted must come before the guard (edits at one offset keep their
    // order).
    let headers = header_edits(src, language, analysis, &planned, &main);
    planned.edits.splice(0..0, headers);
    if options.annotate {
        let notes = annotation_edits(src, &lines, language, &planned.diagnostics);
        planned.edits.extend(notes);
    }
    finish(src, &lines, planned, stats)
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

fn count_site(stats: &mut FileStats, library: Library, kind: SiteKind, new: &[Diagnostic]) {
    stats.sites += 1;
    let worst = new.iter().map(|d| d.level).max();
    let converted = !matches!(worst, Some(Level::Manual | Level::Unsupported));
    stats.approximate += usize::from(worst == Some(Level::Approximate));
    let tally = |t: &mut Tally| {
        if converted {
            t.converted += 1
        } else {
            t.not_converted += 1
        }
    };
    tally(stats.by_library.entry(library).or_default());
    tally(stats.by_kind.entry(kind).or_default());
    if converted {
        stats.converted += 1;
    } else {
        stats.not_converted += 1;
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
    stats.effort_hours = diagnostics.iter().map(effort_hours).sum();
    FileMigration {
        output,
        edits: applied,
        diagnostics,
        stats,
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

/// The target's main runtime header, added to CUDA files that used the
/// runtime without including it (nvcc includes it implicitly).
fn main_header(target: Target) -> &'static str {
    match target {
        Target::Hip => "hip/hip_runtime.h",
        Target::Ascend => "acl/acl.h",
        Target::Musa => "musa_runtime.h",
        Target::Mlu => "cnrt.h",
    }
}

/// The runtime header added to `.cu` files that rely on nvcc's implicit one.
struct MainHeader<'a> {
    spelled: &'a str,
    /// Added even to a file the migration does not otherwise change.
    even_without_edits: bool,
}

fn header_edits(
    src: &[u8],
    language: Language,
    analysis: &FileAnalysis,
    planned: &Planned,
    main_header: &MainHeader<'_>,
) -> Vec<Edit> {
    match language {
        Language::Cuda | Language::Cpp => {
            c_header_edits(src, language, analysis, planned, main_header)
        }
        Language::Python => python_import_edits(src, planned),
        _ => Vec::new(),
    }
}

fn c_header_edits(
    src: &[u8],
    language: Language,
    analysis: &FileAnalysis,
    planned: &Planned,
    main_header: &MainHeader<'_>,
) -> Vec<Edit> {
    let mut wanted: Vec<String> = planned.headers.clone();
    let uses_runtime = analysis.sites.iter().any(|s| {
        matches!(s.library, Library::Runtime | Library::Device) && s.kind != SiteKind::Qualifier
    });
    let includes_runtime = analysis.sites.iter().any(|s| {
        s.kind == SiteKind::Include
            && matches!(
                s.library,
                Library::Runtime | Library::Driver | Library::Device
            )
    });
    let edited = !planned.edits.is_empty() || main_header.even_without_edits;
    if language == Language::Cuda && uses_runtime && !includes_runtime && edited {
        wanted.insert(0, main_header.spelled.to_owned());
    }
    wanted.dedup();
    let at = include_insertion_point(src);
    let newline = line_ending(src);
    // Includes the rewrite renamed count as present (`cuda_runtime.h` became
    // `hip/hip_runtime.h`); headers are compared by file name.
    let renamed: Vec<&str> = planned
        .edits
        .iter()
        .map(|e| e.replacement.as_str())
        .filter(|r| r.starts_with('<') || r.starts_with('"'))
        .collect();
    let base = |path: &str| {
        path.trim_matches(['<', '>', '"'])
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_owned()
    };
    // Only `#include` lines count: a comment naming the header does not.
    let text = String::from_utf8_lossy(src);
    let include_lines: Vec<&str> = text
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('#') && l[1..].trim_start().starts_with("include"))
        .collect();
    let present = |header: &str| {
        let bare = header.trim_matches('"');
        include_lines.iter().any(|l| l.contains(bare))
            || renamed.iter().any(|r| base(r) == base(header))
    };
    let mut seen = std::collections::HashSet::new();
    wanted
        .into_iter()
        .filter(|h| seen.insert(base(h)) && !present(h))
        .map(|header| Edit {
            range: TextRange::new(at, at),
            replacement: if header.starts_with('"') {
                format!("#include {header}{newline}")
            } else {
                format!("#include <{header}>{newline}")
            },
            code: "CP0030".into(),
            cuda_name: "(implicit CUDA runtime header)".into(),
        })
        .collect()
}

/// `\r\n` for files whose first line ends that way, so inserted lines match.
fn line_ending(src: &[u8]) -> &'static str {
    match memchr::memchr(b'\n', src) {
        Some(i) if i > 0 && src[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// Before the first `#include` outside any `#if` block (an include guard
/// does not count), else right after the guard's `#define`, else at the top.
/// An include inside `#ifdef _WIN32` would only be seen on Windows.
fn include_insertion_point(src: &[u8]) -> usize {
    let bom = if src.starts_with(&[0xEF, 0xBB, 0xBF]) {
        3
    } else {
        0
    };
    let lines = directive_lines(src, bom);
    let guard = include_guard(&lines);
    let top = usize::from(guard.is_some());
    let mut depth = 0usize;
    for (offset, _, directive) in &lines {
        let word = directive.split_whitespace().next().unwrap_or("");
        match word {
            "if" | "ifdef" | "ifndef" => depth += 1,
            "endif" => depth = depth.saturating_sub(1),
            "include" if depth == top => return *offset,
            _ => {}
        }
    }
    guard.unwrap_or_else(|| after_leading_comments(src, bom))
}

/// The start of the first line after the file's opening comment block
/// (licence headers, file descriptions).
fn after_leading_comments(src: &[u8], from: usize) -> usize {
    let mut offset = from;
    let mut in_block = false;
    for line in src[from..].split_inclusive(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let trimmed = text.trim();
        let comment = if in_block || trimmed.starts_with("/*") {
            in_block = !trimmed.contains("*/");
            true
        } else {
            trimmed.starts_with("//")
        };
        if !comment {
            return offset;
        }
        offset += line.len();
    }
    offset
}

/// `(line start, line end, directive text after '#')` for each
/// preprocessor line.
fn directive_lines(src: &[u8], from: usize) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut offset = from;
    for line in src[from..].split_inclusive(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        if let Some(rest) = text.trim_start().strip_prefix('#') {
            out.push((offset, offset + line.len(), rest.trim().to_owned()));
        }
        offset += line.len();
    }
    out
}

/// The end of an include guard's `#define` line (`#ifndef X` followed by
/// `#define X` as the first two directives), where includes may go.
fn include_guard(lines: &[(usize, usize, String)]) -> Option<usize> {
    let [(_, _, first), (_, define_end, second), ..] = lines else {
        return None;
    };
    let name = first.strip_prefix("ifndef")?.trim();
    let defined = second.strip_prefix("define")?.trim();
    (!name.is_empty() && defined == name).then_some(*define_end)
}

/// `import torch_npu` right after the first `import torch` line.
fn python_import_edits(src: &[u8], planned: &Planned) -> Vec<Edit> {
    let mut imports = planned.imports.clone();
    imports.sort();
    imports.dedup();
    let text = String::from_utf8_lossy(src);
    let mut offset = 0;
    let mut after_torch = None;
    for line in text.split_inclusive('\n') {
        offset += line.len();
        let trimmed = line.trim_end();
        if trimmed == "import torch"
            || trimmed.starts_with("import torch ")
            || trimmed.starts_with("import torch,")
        {
            after_torch = Some(offset);
            break;
        }
    }
    // Without `import torch`: below a shebang, docstring and `from
    // __future__` imports, which must stay first.
    let at = after_torch.unwrap_or_else(|| crate::dual::python::import_point(src));
    let newline = if after_torch.is_some() && !text[..at].ends_with('\n') {
        "\n"
    } else {
        ""
    };
    imports
        .into_iter()
        .filter(|import| !text.lines().any(|l| l.trim() == import))
        .map(|import| Edit {
            range: TextRange::new(at, at),
            replacement: format!("{newline}{import}{}", line_ending(src)),
            code: "CP0031".into(),
            cuda_name: "import torch".into(),
        })
        .collect()
}

/// The first physical line of the logical line holding `line`: a comment
/// inside a backslash-continued line (a multi-line `#define`) would end it.
fn logical_line_start(src: &[u8], lines: &LineIndex, mut line: usize) -> usize {
    while line > 0 {
        let Some(previous) = lines.line_range(line - 1) else {
            break;
        };
        let text = &src[previous.start..previous.end];
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if !text.ends_with(b"\\") {
            break;
        }
        line -= 1;
    }
    line
}

/// `// CUPORT CP3012: message` above each line with a diagnostic that needs
/// attention, unless the same note is already there (so a rerun adds none).
fn annotation_edits(
    src: &[u8],
    lines: &LineIndex,
    language: Language,
    diagnostics: &[Diagnostic],
) -> Vec<Edit> {
    let prefix = match language {
        Language::Cuda | Language::Cpp | Language::Rust => "//",
        _ => "#",
    };
    let mut edits: Vec<Edit> = Vec::new();
    for diagnostic in diagnostics.iter().filter(|d| d.level >= Level::Approximate) {
        let line = logical_line_start(src, lines, lines.line_of(diagnostic.range.start));
        let Some(range) = lines.line_range(line) else {
            continue;
        };
        let marker = format!("CUPORT {}: ", diagnostic.code);
        let previous = line.checked_sub(1).and_then(|l| lines.line_range(l));
        let already = previous
            .is_some_and(|p| String::from_utf8_lossy(&src[p.start..p.end]).contains(&marker));
        let duplicate = edits
            .iter()
            .any(|e| e.range.start == range.start && e.replacement.contains(&marker));
        if already || duplicate {
            continue;
        }
        let indent: String = src[range.start..range.end]
            .iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .map(|&b| b as char)
            .collect();
        edits.push(Edit {
            range: TextRange::new(range.start, range.start),
            replacement: format!(
                "{indent}{prefix} {marker}{}{}",
                diagnostic.message.replace('\n', " "),
                line_ending(src)
            ),
            code: diagnostic.code.clone(),
            cuda_name: diagnostic.cuda_name.clone(),
        });
    }
    edits
}
