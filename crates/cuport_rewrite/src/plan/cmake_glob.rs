//! `.cu` sources a CMake file lists through `file(GLOB ...)` or
//! `file(GLOB_RECURSE ...)`: CMake's HIP language compiles only `.hip`
//! files by default, so, as for `.cu` files named one by one
//! (`mark_cuda_sources`), the glob's variable gets `LANGUAGE HIP`:
//!
//! ```cmake
//! file(GLOB SRCS src/*.cu)
//! set_source_files_properties(${SRCS} PROPERTIES LANGUAGE HIP)
//! ```
//!
//! A glob that also matches other files (`*.cpp *.cu`, `*.cu *.cuh`) cannot
//! mark its variable: a C++ file or header marked `LANGUAGE HIP` would be
//! compiled as HIP (CMake policy CMP0119). Its `.cu` patterns are globbed
//! again, with the same options, into a list of their own that is marked:
//!
//! ```cmake
//! file(GLOB SRCS src/*.cpp src/*.cu)
//! file(GLOB SRCS_CU src/*.cu)
//! set_source_files_properties(${SRCS_CU} PROPERTIES LANGUAGE HIP)
//! ```
//!
//! A glob whose paths are `RELATIVE` to another directory (the property
//! would name files of the current source directory), or whose `_CU` name
//! the file already uses, is reported on its line instead (CP1093).
use cuport_analyze::{cmake_arguments, CmakeCommand};
use cuport_model::{Library, SiteKind, TextRange};

use super::Planner;
use crate::diagnostic::{codes, Diagnostic, Level};

/// What `file(GLOB ...)` of `.cu` sources becomes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum GlobPort {
    /// Not a glob with `.cu` patterns: nothing to do.
    NoCudaSources,
    /// Every pattern matches `.cu` files only: the variable is marked.
    Mark { variable: String },
    /// `.cu` patterns among others: `glob` (the same call with the `.cu`
    /// patterns only, into `variable`) is added, and `variable` marked.
    Split { variable: String, glob: String },
    /// `RELATIVE` paths.
    Report { variable: String, why: &'static str },
}

/// Keywords of `file(GLOB <variable> ...)` that are not patterns; the
/// value after each one that takes one is kept with it.
const FLAGS: &[&str] = &["CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"];
const WITH_VALUE: &[&str] = &["LIST_DIRECTORIES", "RELATIVE"];

/// Reads a `file()` call's argument words (as written, quotes included).
pub(super) fn glob_port(words: &[&str]) -> GlobPort {
    let (Some(mode), Some(variable)) = (words.first(), words.get(1)) else {
        return GlobPort::NoCudaSources;
    };
    if !matches!(*mode, "GLOB" | "GLOB_RECURSE") {
        return GlobPort::NoCudaSources;
    }
    let mut relative = false;
    let mut options = Vec::new();
    let mut cuda = Vec::new();
    let mut others = 0;
    let mut rest = words[2..].iter();
    while let Some(&word) = rest.next() {
        if WITH_VALUE.contains(&word) {
            relative |= word == "RELATIVE";
            options.push(word);
            options.extend(rest.next());
        } else if FLAGS.contains(&word) {
            options.push(word);
        } else if word.trim_matches('"').ends_with(".cu") {
            cuda.push(word);
        } else {
            others += 1;
        }
    }
    let variable = (*variable).to_owned();
    if cuda.is_empty() {
        GlobPort::NoCudaSources
    } else if relative {
        GlobPort::Report {
            variable,
            why: "its paths are RELATIVE to another directory, so the property would name other files",
        }
    } else if others > 0 {
        let own = format!("{variable}_CU");
        let glob = format!("file({mode} {own} {})", [options, cuda].concat().join(" "));
        GlobPort::Split {
            variable: own,
            glob,
        }
    } else {
        GlobPort::Mark { variable }
    }
}

impl Planner<'_> {
    /// Marks or reports the `.cu` sources of one `file(GLOB ...)` call;
    /// `next` is the command after it (a mark already there is kept).
    pub(super) fn cuda_glob(
        &mut self,
        command: &CmakeCommand,
        next: Option<&CmakeCommand>,
        language: &str,
        indent: &str,
    ) {
        let words: Vec<&str> = cmake_arguments(self.src, command.open + 1, command.close)
            .iter()
            .map(|&(s, e)| self.text(TextRange::new(s, e)))
            .collect();
        let mark = |variable: &str| {
            format!("set_source_files_properties(${{{variable}}} PROPERTIES LANGUAGE {language})")
        };
        let port = glob_port(&words);
        let variable = match &port {
            GlobPort::NoCudaSources => return,
            GlobPort::Mark { variable }
            | GlobPort::Split { variable, .. }
            | GlobPort::Report { variable, .. } => variable.clone(),
        };
        if self.glob_marked(next, &variable, language) {
            return;
        }
        let added = match port {
            GlobPort::NoCudaSources => return,
            GlobPort::Mark { .. } => mark(&variable),
            GlobPort::Split { glob, .. } => {
                if self
                    .text(TextRange::new(0, self.src.len()))
                    .contains(&variable)
                {
                    let why = "the name its .cu files would be listed under is taken";
                    self.glob_report(command, &variable, why, language, &mark("CUDA_SOURCES"));
                    return;
                }
                format!("{glob}\n{indent}{}", mark(&variable))
            }
            GlobPort::Report { why, .. } => {
                self.glob_report(command, &variable, why, language, &mark("CUDA_SOURCES"));
                return;
            }
        };
        let at = TextRange::new(command.close + 1, command.close + 1);
        let name = format!("(.cu sources of file({}))", words[0]);
        self.edit(
            at,
            format!("\n{indent}{added}"),
            codes::HIP_SOURCE_LANGUAGE,
            &name,
        );
    }

    /// Whether `next` marks `variable` already, or globs it (the `.cu` list
    /// a split glob added): a second run adds nothing.
    fn glob_marked(&self, next: Option<&CmakeCommand>, variable: &str, language: &str) -> bool {
        next.is_some_and(|next| {
            let text = self.text(TextRange::new(next.start, next.close + 1));
            let sets_it = next
                .name
                .eq_ignore_ascii_case("set_source_files_properties")
                && text.contains(&format!("LANGUAGE {language}"))
                && text.contains(&format!("${{{variable}}}"));
            let globs_it = next.name.eq_ignore_ascii_case("file")
                && cmake_arguments(self.src, next.open + 1, next.close)
                    .get(1)
                    .is_some_and(|&(s, e)| self.text(TextRange::new(s, e)) == variable);
            sets_it || globs_it
        })
    }

    /// CP1093 on the glob's command name.
    fn glob_report(
        &mut self,
        command: &CmakeCommand,
        variable: &str,
        why: &str,
        language: &str,
        suggestion: &str,
    ) {
        let message = format!(
            "the .cu files `{variable}` holds must be compiled as {language} (CMake's {language} language compiles only .{ext} files by default), but cuport does not mark this glob: {why}. Glob the .cu files into a list of their own and mark it",
            ext = language.to_ascii_lowercase(),
        );
        let at = self.lines.line_col(command.start);
        self.out.diagnostics.push(Diagnostic {
            code: codes::CMAKE_GLOB_SOURCES,
            level: Level::Manual,
            effort: None,
            message,
            line: at.line,
            column: at.column,
            range: TextRange::new(command.start, command.start + command.name.len()),
            cuda_name: command.name.clone(),
            library: Library::Build,
            kind: SiteKind::BuildRule,
            suggestion: Some(suggestion.to_owned()),
            reference: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(call: &str) -> GlobPort {
        glob_port(&call.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn a_glob_of_cu_patterns_only_is_marked() {
        let mark = GlobPort::Mark {
            variable: "SRCS".into(),
        };
        assert_eq!(port("GLOB SRCS *.cu"), mark);
        assert_eq!(
            port("GLOB_RECURSE SRCS CONFIGURE_DEPENDS \"${DIR}/src/*.cu\" kernels/*.cu"),
            mark
        );
        assert_eq!(port("GLOB SRCS LIST_DIRECTORIES false *.cu"), mark);
    }

    #[test]
    fn a_glob_without_cu_patterns_is_left() {
        assert_eq!(port("GLOB SRCS *.cpp *.h"), GlobPort::NoCudaSources);
        assert_eq!(
            port("GLOB REF_DATA \"teapot512*\""),
            GlobPort::NoCudaSources
        );
        assert_eq!(port("READ a.cu CONTENT"), GlobPort::NoCudaSources);
        assert_eq!(port("GLOB"), GlobPort::NoCudaSources);
    }

    #[test]
    fn a_mixed_glob_is_split() {
        assert_eq!(
            port("GLOB_RECURSE SRCS CONFIGURE_DEPENDS \"${DIR}/*.cpp\" \"${DIR}/*.c\" \"${DIR}/*.cu\""),
            GlobPort::Split {
                variable: "SRCS_CU".into(),
                glob: "file(GLOB_RECURSE SRCS_CU CONFIGURE_DEPENDS \"${DIR}/*.cu\")".into(),
            }
        );
        assert!(matches!(
            port("GLOB SRCS src/*.cu src/*.cuh"),
            GlobPort::Split { .. }
        ));
    }

    #[test]
    fn a_relative_glob_is_reported() {
        for call in [
            "GLOB SRCS RELATIVE ${CMAKE_SOURCE_DIR} *.cu",
            "GLOB SRCS RELATIVE ${CMAKE_SOURCE_DIR} *.cu *.cpp",
        ] {
            assert!(matches!(port(call), GlobPort::Report { .. }), "{call}");
        }
    }
}
