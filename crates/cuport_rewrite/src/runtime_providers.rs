//! The project headers that give a file the target's runtime header. A
//! project often includes `cuda.h` once, in its own header, and each `.cu`
//! file includes that header first (HeCBench `morphology`: `main.cu`
//! includes `"morphology.h"`, which includes `<cuda.h>`). The port renames
//! that include to the runtime header; adding the runtime header again to
//! every `.cu` file is a change an expert does not make (issue 29, item 6).
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use cuport_analyze::{FileAnalysis, ScanReport, ScannedFile};
use cuport_model::Language;
use cuport_rules::RuleSet;
use rayon::prelude::*;

use crate::headers::{include_lines, uses_runtime, IncludeLine};
use crate::options::{MigrateOptions, Mode};

/// The scanned files that include the target's runtime header outside any
/// `#if`, once ported: directly (the header itself, or a CUDA header the
/// tables rename to it) or through such a project header of their own.
#[derive(Default)]
pub(crate) struct RuntimeProviders {
    files: HashSet<String>,
    /// The project headers a `.cu` file includes (outside any `#if`) that
    /// are not among `files`: each relied on the includer's implicit
    /// runtime header.
    included_by_cuda_sources: HashSet<String>,
    /// Each C/C++ file's first `#include`, read once here for
    /// [`RuntimeProviders::provide_before_use`].
    first_includes: HashMap<String, IncludeLine>,
}

impl RuntimeProviders {
    /// Empty for dual-stack runs: their switch puts the runtime header in
    /// every file on purpose (`crate::mode::header_placement`).
    pub(crate) fn find(report: &ScanReport, rules: &RuleSet, options: &MigrateOptions) -> Self {
        let Mode::OneWay(target) = options.mode else {
            return Self::default();
        };
        let runtime = &target.profile().target.runtime_header;
        let TreeIncludes {
            always: includes,
            first: first_includes,
        } = read_includes(report);
        let gives_runtime = |path: &str| {
            path == runtime
                || rules
                    .lookup(target, path)
                    .and_then(|r| r.target_name)
                    .is_some_and(|to| to == runtime.as_str())
        };
        let mut files: HashSet<String> = includes
            .iter()
            .filter(|(_, list)| list.iter().any(|i| gives_runtime(&i.path)))
            .map(|(path, _)| (*path).to_owned())
            .collect();
        // Through project headers: grow the set until no file joins (each
        // round adds a file or ends, so at most one round per file).
        loop {
            let joining: Vec<String> = includes
                .iter()
                .filter(|(path, _)| !files.contains(**path))
                .filter(|(path, list)| list.iter().any(|i| is_provider(path, i, &files)))
                .map(|(path, _)| (*path).to_owned())
                .collect();
            if joining.is_empty() {
                break;
            }
            files.extend(joining);
        }
        let included_by_cuda_sources =
            headers_relying_on_includers(report, &includes, &files, gives_runtime);
        Self {
            files,
            included_by_cuda_sources,
            first_includes,
        }
    }

    /// Whether a `.cu` file includes `path`, which gives itself no runtime
    /// header.
    pub(crate) fn relies_on_includer(&self, path: &str) -> bool {
        self.included_by_cuda_sources.contains(path)
    }

    /// Whether the first include of `path` is a provider, outside any `#if`
    /// and before anything CUDA (HIP's cooperative-groups header needs the
    /// runtime before it). Only the first, conditional ones counted: a
    /// header included before it may need the runtime too (cuda-samples'
    /// `<helper_cuda.h>`, which nvcc's implicit include served, comes
    /// before `"convolutionTexture_common.h"`).
    pub(crate) fn provide_before_use(&self, path: &str, analysis: &FileAnalysis) -> bool {
        let first_use = analysis
            .sites
            .iter()
            .map(|s| s.range.start)
            .min()
            .unwrap_or(usize::MAX);
        self.first_includes
            .get(path)
            .filter(|i| i.top_level && i.offset < first_use)
            .is_some_and(|i| is_provider(path, i, &self.files))
    }
}

/// The project headers that relied on a `.cu` file's implicit runtime
/// header: included (quoted, found next to the includer, outside any
/// `#if`) by a `.cu` file that will not get the runtime header itself (it
/// uses nothing of the runtime), before any include that gives it, and
/// not giving it themselves. A header included after the runtime, or by a
/// file that gets it first, is served already (HeCBench warpexchange's
/// `main.cu` includes `<cuda.h>`, then `"warp_exchange.h"`).
fn headers_relying_on_includers(
    report: &ScanReport,
    includes: &HashMap<&str, Vec<IncludeLine>>,
    providers: &HashSet<String>,
    gives_runtime: impl Fn(&str) -> bool,
) -> HashSet<String> {
    let includers = report
        .files
        .iter()
        .filter(|f| f.language == Language::Cuda && !uses_runtime(&f.analysis, false));
    let mut headers = HashSet::new();
    for source in includers {
        let dir = source.path.rsplit_once('/').map_or("", |(dir, _)| dir);
        for include in includes.get(source.path.as_str()).into_iter().flatten() {
            if gives_runtime(&include.path) || is_provider(&source.path, include, providers) {
                break;
            }
            let Some(path) = normalized(dir, &include.path).filter(|_| include.quoted) else {
                continue;
            };
            if includes.contains_key(path.as_str()) {
                headers.insert(path);
            }
        }
    }
    headers
}

/// The includes of the tree's C/C++ files.
struct TreeIncludes<'a> {
    /// Per file, those outside every `#if`: what it always includes.
    always: HashMap<&'a str, Vec<IncludeLine>>,
    /// Per file, its first include.
    first: HashMap<String, IncludeLine>,
}

/// Files are read in parallel: this runs before any file is migrated.
fn read_includes(report: &ScanReport) -> TreeIncludes<'_> {
    let read: Vec<(&str, Vec<IncludeLine>)> = report
        .files
        .par_iter()
        .filter(|f| is_c_family(f.language))
        .filter_map(|f| Some((f.path.as_str(), include_lines(&source_of(report, f)?))))
        .collect();
    let mut always = HashMap::new();
    let mut first = HashMap::new();
    for (path, lines) in read {
        if let Some(line) = lines.first() {
            first.insert(path.to_owned(), line.clone());
        }
        always.insert(path, lines.into_iter().filter(|i| i.top_level).collect());
    }
    TreeIncludes { always, first }
}

/// The file's text: kept by the scan (`ScanOptions::keep_sources`, as
/// `cuport migrate` asks), or read again. A file that cannot be read
/// provides nothing; its migration reports the error.
fn source_of<'a>(report: &ScanReport, file: &'a ScannedFile) -> Option<Cow<'a, [u8]>> {
    if let Some(kept) = &file.source {
        return Some(Cow::Borrowed(kept));
    }
    let path = if report.root_is_file {
        report.root.clone()
    } else {
        report.root.join(&file.path)
    };
    std::fs::read(path).ok().map(Cow::Owned)
}

fn is_c_family(language: Language) -> bool {
    matches!(language, Language::Cuda | Language::Cpp)
}

/// Whether a quoted include of `includer` names one of `files`, looked up
/// next to the including file (where the compiler looks first).
fn is_provider(includer: &str, include: &IncludeLine, files: &HashSet<String>) -> bool {
    let dir = includer.rsplit_once('/').map_or("", |(dir, _)| dir);
    include.quoted && normalized(dir, &include.path).is_some_and(|p| files.contains(&p))
}

/// `dir/path` with `.` and `..` resolved; None when it leaves the root.
fn normalized(dir: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::normalized;

    #[test]
    fn include_paths_resolve_next_to_the_includer() {
        assert_eq!(
            normalized("src", "common.h").as_deref(),
            Some("src/common.h")
        );
        assert_eq!(
            normalized("src/a", "../b/x.h").as_deref(),
            Some("src/b/x.h")
        );
        assert_eq!(normalized("", "./x.h").as_deref(), Some("x.h"));
        assert_eq!(normalized("", "../x.h"), None);
    }
}
