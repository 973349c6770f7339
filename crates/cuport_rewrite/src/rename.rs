//! `--rename-sources`: file names in the target's conventions, with the
//! includes and build files that name them following the rename.
//!
//! | target | `.cu` | `.cuh` | basis |
//! |---|---|---|---|
//! | HIP | `.hip` | kept | PyTorch's hipify writes `.cu` → `.hip` and keeps header names; hipcc compiles `.hip` |
//! | MUSA | `.mu` | `.muh` | torch_musa's porting tools and sources (`utils.muh`) |
//! | MLU | `.mlu` | `.mluh` | `.mlu` is BANG C's source suffix; `.mluh` for headers is a convention, not a documented rule |
//! | Ascend | kept | kept | Ascend C kernels are `.cpp` files written by hand; host code keeps its names |
//!
//! References are found without parsing: `#include "..."`/`<...>` lines in
//! C-family files, path-like words outside comments in CMake files, and
//! string literals outside comments in Python files. A reference follows a
//! rename when its path components (after `.`, `..` and `${VAR}`-style
//! components) are a suffix of the renamed file's path.
use std::collections::{BTreeMap, BTreeSet};

use cuport_model::{Language, Target, TextRange};

use crate::diagnostic::codes;
use crate::edit::{apply_edits, Edit, EditKind};
use crate::result::RewriteError;

/// The target's name for a file, or `None` when it keeps its name.
pub fn renamed_path(path: &str, target: Target) -> Option<String> {
    renamed_with(path, &target.profile().target.source_renames)
}

/// `path` with its extension renamed through `extensions` (`cu = "hip"`).
fn renamed_with(path: &str, extensions: &BTreeMap<String, String>) -> Option<String> {
    let (stem, ext) = path.rsplit_once('.')?;
    if stem.is_empty() || stem.ends_with('/') {
        return None;
    }
    let new_ext = extensions.get(ext)?;
    Some(format!("{stem}.{new_ext}"))
}

/// Which files of a tree are renamed, and how references follow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenamePlan {
    /// Old path → new path, relative to the root, `/`-separated.
    pub renames: BTreeMap<String, String>,
}

impl RenamePlan {
    /// Plans the renames of `files` (relative, `/`-separated) for `target`;
    /// refuses when a new name is already taken by another file.
    pub fn new<S: AsRef<str>>(files: &[S], target: Target) -> Result<Self, RewriteError> {
        Self::with_extensions(files, &target.profile().target.source_renames)
    }

    /// Plans the renames of `files` by extension (`cu` → `asc`: the SIMT
    /// model's, which `MigrateOptions::source_renames` gives).
    pub fn with_extensions<S: AsRef<str>>(
        files: &[S],
        extensions: &BTreeMap<String, String>,
    ) -> Result<Self, RewriteError> {
        let existing: BTreeSet<&str> = files.iter().map(AsRef::as_ref).collect();
        let mut renames = BTreeMap::new();
        for file in &existing {
            let Some(new) = renamed_with(file, extensions) else {
                continue;
            };
            if existing.contains(new.as_str()) {
                return Err(RewriteError::RenameCollision {
                    from: (*file).to_owned(),
                    to: new,
                });
            }
            renames.insert((*file).to_owned(), new);
        }
        Ok(Self { renames })
    }

    pub fn is_empty(&self) -> bool {
        self.renames.is_empty()
    }

    /// Where `path` goes: its new name, or itself.
    pub fn new_path<'a>(&'a self, path: &'a str) -> &'a str {
        self.renames.get(path).map_or(path, String::as_str)
    }

    /// `text` (the content of `path`) with every reference to a renamed
    /// file updated, or `None` when nothing refers to one.
    pub fn update_references(&self, path: &str, text: &[u8]) -> Option<Vec<u8>> {
        if self.is_empty() {
            return None;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        let language = Language::from_file_name(name)?;
        let patterns = matches!(language, Language::Cmake | Language::Makefile);
        let references = match language {
            Language::Cuda | Language::Cpp => include_references(text),
            Language::Cmake => cmake_references(text, b""),
            // `%.o: %.cu` and `$(SRCS:.cu=.o)` hold references between `:`
            // and `=` as well.
            Language::Makefile => cmake_references(text, b":=,"),
            Language::Python => python_references(text),
            _ => return None,
        };
        let edits: Vec<Edit> = references
            .into_iter()
            .filter_map(|range| self.extension_edit(text, range, patterns))
            .collect();
        if edits.is_empty() {
            return None;
        }
        let (output, _, _) = apply_edits(text, edits);
        Some(output)
    }

    /// The edit that changes the extension of the reference at `range`
    /// when it names a renamed file.
    fn extension_edit(&self, text: &[u8], range: TextRange, patterns: bool) -> Option<Edit> {
        let reference = std::str::from_utf8(text.get(range.start..range.end)?).ok()?;
        let wanted = significant_components(reference);
        // A make pattern or glob (`%.cu`, `*.cu`, `.cu` of `$(SRCS:.cu=.o)`)
        // follows the rename of any file with its extension.
        let pattern = wanted
            .last()
            .filter(|_| patterns)
            .filter(|name| name.starts_with(['%', '*']) || name.starts_with('.'))
            .and_then(|name| name.rsplit_once('.'))
            .map(|(_, ext)| ext);
        let renamed = self.renames.iter().find(|(old, _)| match pattern {
            Some(ext) => old.rsplit_once('.').is_some_and(|(_, e)| e == ext),
            None => {
                let old: Vec<&str> = old.split('/').collect();
                !wanted.is_empty() && old.ends_with(&wanted)
            }
        })?;
        let dot = reference.rfind('.')?;
        let new_ext = renamed.1.rsplit_once('.')?.1;
        Some(Edit {
            range: TextRange::new(range.start + dot + 1, range.end),
            replacement: new_ext.to_owned(),
            code: codes::RENAMED_SOURCE,
            cuda_name: reference.to_owned(),
            kind: EditKind::Port,
        })
    }
}

/// `../src/./x.cu`, `${DIR}/src/x.cu`, `{HERE}/x.cu` → `["src", "x.cu"]`.
fn significant_components(reference: &str) -> Vec<&str> {
    let parts: Vec<&str> = reference.split(['/', '\\']).collect();
    let first_kept = parts
        .iter()
        .rposition(|p| p.is_empty() || *p == "." || *p == ".." || p.contains(['$', '{', '}']))
        .map_or(0, |at| at + 1);
    parts[first_kept..].to_vec()
}

/// The path of each `#include "..."` / `#include <...>` line.
fn include_references(text: &[u8]) -> Vec<TextRange> {
    let mut found = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive(|&b| b == b'\n') {
        let start = offset;
        offset += line.len();
        let Some(rest) = strip_directive(line) else {
            continue;
        };
        let at = start + (line.len() - rest.len());
        let close = match rest.first() {
            Some(b'"') => b'"',
            Some(b'<') => b'>',
            _ => continue,
        };
        if let Some(len) = rest[1..].iter().position(|&b| b == close) {
            found.push(TextRange::new(at + 1, at + 1 + len));
        }
    }
    found
}

/// The bytes after `#  include  ` on an include line.
fn strip_directive(line: &[u8]) -> Option<&[u8]> {
    let skip_blanks =
        |s: &[u8]| -> usize { s.iter().take_while(|b| matches!(b, b' ' | b'\t')).count() };
    let mut rest = line;
    rest = &rest[skip_blanks(rest)..];
    rest = rest.strip_prefix(b"#")?;
    rest = &rest[skip_blanks(rest)..];
    rest = rest.strip_prefix(b"include")?;
    Some(&rest[skip_blanks(rest)..])
}

/// Words of a CMake file that end in a renamed-looking extension, outside
/// `#` comments.
fn cmake_references(text: &[u8], delimiters: &[u8]) -> Vec<TextRange> {
    let mut found = Vec::new();
    let mut in_string = false;
    let mut word_start: Option<usize> = None;
    let mut at = 0;
    while at < text.len() {
        let b = text[at];
        let delimiter = b.is_ascii_whitespace()
            || matches!(b, b'"' | b'(' | b')' | b';')
            || delimiters.contains(&b);
        if delimiter || (b == b'#' && !in_string) {
            if let Some(start) = word_start.take() {
                push_if_source(&mut found, text, start, at);
            }
        }
        if b == b'"' && (at == 0 || text[at - 1] != b'\\') {
            in_string = !in_string;
        } else if b == b'#' && !in_string {
            at += text[at..]
                .iter()
                .position(|&c| c == b'\n')
                .unwrap_or(text.len() - at);
            continue;
        } else if !delimiter && word_start.is_none() {
            word_start = Some(at);
        }
        at += 1;
    }
    if let Some(start) = word_start {
        push_if_source(&mut found, text, start, text.len());
    }
    found
}

fn push_if_source(found: &mut Vec<TextRange>, text: &[u8], start: usize, end: usize) {
    let word = &text[start..end];
    if word.ends_with(b".cu") || word.ends_with(b".cuh") {
        found.push(TextRange::new(start, end));
    }
}

/// The content of each single-line string literal outside `#` comments;
/// triple-quoted strings (docstrings, embedded sources) are skipped.
fn python_references(text: &[u8]) -> Vec<TextRange> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let b = text[at];
        if b == b'#' {
            at += text[at..]
                .iter()
                .position(|&c| c == b'\n')
                .unwrap_or(text.len() - at);
            continue;
        }
        if b != b'"' && b != b'\'' {
            at += 1;
            continue;
        }
        let triple = [b, b, b];
        if text[at..].starts_with(&triple) {
            let body = at + 3;
            let close = memchr::memmem::find(&text[body..], &triple);
            at = close.map_or(text.len(), |c| body + c + 3);
            continue;
        }
        let body = at + 1;
        let mut end = body;
        while end < text.len() && text[end] != b && text[end] != b'\n' {
            end += if text[end] == b'\\' { 2 } else { 1 };
        }
        let end = end.min(text.len());
        push_if_source(&mut found, text, body, end);
        at = end + 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(files: &[&str], target: Target) -> RenamePlan {
        RenamePlan::new(files, target).unwrap_or_default()
    }

    #[test]
    fn renames_per_target() {
        assert_eq!(
            renamed_path("src/a.cu", Target::Hip).as_deref(),
            Some("src/a.hip")
        );
        assert_eq!(renamed_path("src/a.cuh", Target::Hip), None);
        assert_eq!(
            renamed_path("a.cuh", Target::Musa).as_deref(),
            Some("a.muh")
        );
        assert_eq!(renamed_path("a.cu", Target::Mlu).as_deref(), Some("a.mlu"));
        assert_eq!(renamed_path("a.cu", Target::Ascend), None);
        assert_eq!(renamed_path(".cu", Target::Hip), None);
    }

    #[test]
    fn refuses_a_taken_name() {
        let taken = RenamePlan::new(&["a.cu", "a.hip"], Target::Hip);
        assert!(matches!(taken, Err(RewriteError::RenameCollision { .. })));
    }

    #[test]
    fn includes_cmake_and_python_follow() {
        let p = plan(&["src/k.cuh", "src/k.cu", "CMakeLists.txt"], Target::Musa);
        let c = p.update_references(
            "src/k.cu",
            b"#include \"k.cuh\"\n#include <other.cuh>\n// k.cuh\n",
        );
        assert_eq!(
            c.as_deref(),
            Some(&b"#include \"k.muh\"\n#include <other.cuh>\n// k.cuh\n"[..])
        );
        let cmake = p.update_references(
            "CMakeLists.txt",
            b"# src/k.cu\nadd_library(k ${CMAKE_CURRENT_SOURCE_DIR}/src/k.cu \"src/k.cu\")\n",
        );
        assert_eq!(
            cmake.as_deref(),
            Some(
                &b"# src/k.cu\nadd_library(k ${CMAKE_CURRENT_SOURCE_DIR}/src/k.mu \"src/k.mu\")\n"
                    [..]
            )
        );
        let py = p.update_references(
            "setup.py",
            b"# k.cu\nsources=['src/k.cu', \"x.cu\"]\nDOC = \"\"\"k.cu\"\"\"\n",
        );
        assert_eq!(
            py.as_deref(),
            Some(&b"# k.cu\nsources=['src/k.mu', \"x.cu\"]\nDOC = \"\"\"k.cu\"\"\"\n"[..])
        );
        assert_eq!(p.update_references("README.md", b"k.cu"), None);
    }

    #[test]
    fn makefile_rules_patterns_and_substitutions_follow() {
        let p = plan(&["src/k.cu", "Makefile"], Target::Hip);
        let make = p.update_references(
            "Makefile",
            b"# k.cu
k: src/k.cu
%.o:%.cu
\t$(NVCC) -c $< -o $@
OBJ = $(SRC:.cu=.o) $(wildcard *.cu) other.cu
",
        );
        assert_eq!(
            make.as_deref(),
            Some(
                &b"# k.cu
k: src/k.hip
%.o:%.hip
\t$(NVCC) -c $< -o $@
OBJ = $(SRC:.hip=.o) $(wildcard *.hip) other.cu
"[..]
            )
        );
    }
}
