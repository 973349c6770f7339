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

use crate::headers::{include_lines, IncludeLine};
use crate::options::{MigrateOptions, Mode};

/// The scanned files that include the target's runtime header outside any
/// `#if`, once ported: directly (the header itself, or a CUDA header the
/// tables rename to it) or through such a project header of their own.
#[derive(Debug, Default)]
pub(crate) struct RuntimeProviders {
    files: HashSet<String>,
}

impl RuntimeProviders {
    /// Empty for dual-stack runs: their switch puts the runtime header in
    /// every file on purpose (`crate::mode::header_placement`).
    pub(crate) fn find(report: &ScanReport, rules: &RuleSet, options: &MigrateOptions) -> Self {
        let Mode::OneWay(target) = options.mode else {
            return Self::default();
        };
        let runtime = &target.profile().target.runtime_header;
        let includes: HashMap<&str, Vec<IncludeLine>> = report
            .files
            .iter()
            .filter(|f| matches!(f.language, Language::Cuda | Language::Cpp))
            .filter_map(|f| {
                Some((
                    f.path.as_str(),
                    top_level(include_lines(&source_of(report, f)?)),
                ))
            })
            .collect();
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
                .filter(|(path, list)| list.iter().any(|i| provider_of(path, i, &files).is_some()))
                .map(|(path, _)| (*path).to_owned())
                .collect();
            if joining.is_empty() {
                break;
            }
            files.extend(joining);
        }
        Self { files }
    }

    /// Whether the first include of `path` is a provider, outside any `#if`
    /// and before anything CUDA (HIP's cooperative-groups header needs the
    /// runtime before it). Only the first, conditional ones counted: a
    /// header included before it may need the runtime too (cuda-samples'
    /// `<helper_cuda.h>`, which nvcc's implicit include served, comes
    /// before `"convolutionTexture_common.h"`).
    pub(crate) fn provide_before_use(
        &self,
        path: &str,
        src: &[u8],
        analysis: &FileAnalysis,
    ) -> bool {
        let first_use = analysis
            .sites
            .iter()
            .map(|s| s.range.start)
            .min()
            .unwrap_or(usize::MAX);
        include_lines(src)
            .first()
            .filter(|i| i.top_level && i.offset < first_use)
            .is_some_and(|i| provider_of(path, i, &self.files).is_some())
    }
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

/// The includes outside every `#if`: what the file always includes.
fn top_level(lines: Vec<IncludeLine>) -> Vec<IncludeLine> {
    lines.into_iter().filter(|i| i.top_level).collect()
}

/// The provider a quoted include of `includer` names, looked up next to
/// the including file (where the compiler looks first).
fn provider_of<'a>(
    includer: &str,
    include: &IncludeLine,
    files: &'a HashSet<String>,
) -> Option<&'a String> {
    if !include.quoted {
        return None;
    }
    let dir = includer.rsplit_once('/').map_or("", |(dir, _)| dir);
    files.get(&normalized(dir, &include.path)?)
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
