//! One file in, one [`FileAnalysis`] out, whatever the bytes look like.
use std::cell::RefCell;

use cuport_model::{Language, LineIndex};

use crate::cfamily::{self, SyntaxChecker};
use crate::known::KnownNames;
use crate::site::FileAnalysis;
use crate::{cmake, make, pyproject, python, rust};

/// Which C-family files tree-sitter-cpp also parses, to report regions it
/// cannot parse. The token pass finds the sites either way; parsing every
/// byte costs about ten times the token pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyntaxCheck {
    /// No syntax check (fastest; what `migrate` uses).
    Off,
    /// `.cu`/`.cuh` files that define or launch kernels.
    #[default]
    Kernels,
    /// Every C, C++ and CUDA file.
    All,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct AnalyzeOptions {
    pub syntax_check: SyntaxCheck,
}

/// Parsers are expensive to build: one set per worker thread.
#[derive(Default)]
struct ThreadParsers {
    cpp: Option<SyntaxChecker>,
    python: Option<python::PythonParser>,
}

thread_local! {
    static PARSERS: RefCell<ThreadParsers> = RefCell::new(ThreadParsers::default());
}

/// Analyses `src` as `language`. Never fails: unreadable regions become
/// parse issues and decoding problems become warnings.
pub fn analyze_source(language: Language, src: &[u8], options: &AnalyzeOptions) -> FileAnalysis {
    analyze_known(language, src, options, None)
}

/// [`analyze_source`] that also finds the names `known` tables know where
/// the naming conventions do not recognise them.
pub(crate) fn analyze_known(
    language: Language,
    src: &[u8],
    options: &AnalyzeOptions,
    known: Option<&KnownNames>,
) -> FileAnalysis {
    let line_index = LineIndex::new(src);
    // Checked once here: the C-family scan reads names from the text.
    let utf8 = std::str::from_utf8(src);
    let input = Input {
        language,
        src,
        text: utf8.ok(),
        line_index: &line_index,
        options,
        known,
    };
    let mut analysis = PARSERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut parsers) => dispatch(&input, &mut parsers),
        Err(_) => dispatch(&input, &mut ThreadParsers::default()),
    });
    if let Err(error) = utf8 {
        let line = line_index.line_col(error.valid_up_to()).line;
        analysis.warnings.insert(
            0,
            format!("invalid UTF-8 at line {line}; analysed byte-wise, bytes kept as they are"),
        );
    }
    for site in &mut analysis.sites {
        let at = line_index.line_col(site.range.start);
        site.line = at.line;
        site.column = at.column;
    }
    analysis
}

/// One file to analyse.
struct Input<'a> {
    language: Language,
    src: &'a [u8],
    /// `src` when it is valid UTF-8.
    text: Option<&'a str>,
    line_index: &'a LineIndex,
    options: &'a AnalyzeOptions,
    known: Option<&'a KnownNames>,
}

fn dispatch(input: &Input<'_>, parsers: &mut ThreadParsers) -> FileAnalysis {
    let Input {
        language,
        src,
        text,
        line_index,
        options,
        known,
    } = *input;
    match language {
        Language::Cuda | Language::Cpp => {
            let wants_check = match options.syntax_check {
                SyntaxCheck::Off => false,
                SyntaxCheck::Kernels => language == Language::Cuda && has_kernel_syntax(src),
                SyntaxCheck::All => true,
            };
            let mut analysis = FileAnalysis::default();
            let checker = if wants_check {
                cpp_checker(parsers, &mut analysis)
            } else {
                None
            };
            let source = cfamily::FileSource {
                src,
                text,
                line_index,
            };
            let found = cfamily::analyze(source, language == Language::Cuda, checker, known);
            merge_warnings(found, analysis)
        }
        Language::Python if !python::may_have_sites(src) => FileAnalysis::default(),
        Language::Python => match python_parser(parsers) {
            Ok(parser) => parser.analyze(src, line_index, known),
            Err(message) => FileAnalysis {
                warnings: vec![message],
                ..FileAnalysis::default()
            },
        },
        Language::Cmake => cmake::analyze(src, known),
        Language::PyprojectToml => pyproject::analyze(src),
        Language::Rust => rust::analyze(src, line_index),
        Language::Makefile => make::analyze(src, known),
    }
}

fn merge_warnings(mut found: FileAnalysis, earlier: FileAnalysis) -> FileAnalysis {
    let mut warnings = earlier.warnings;
    warnings.append(&mut found.warnings);
    found.warnings = warnings;
    found
}

fn has_kernel_syntax(src: &[u8]) -> bool {
    cfamily::contains(src, b"__global__") || cfamily::contains(src, b"<<<")
}

fn cpp_checker<'p>(
    parsers: &'p mut ThreadParsers,
    analysis: &mut FileAnalysis,
) -> Option<&'p mut SyntaxChecker> {
    if parsers.cpp.is_none() {
        match SyntaxChecker::new() {
            Ok(checker) => parsers.cpp = Some(checker),
            Err(error) => {
                analysis
                    .warnings
                    .push(format!("syntax check skipped: {error}"));
                return None;
            }
        }
    }
    parsers.cpp.as_mut()
}

fn python_parser(parsers: &mut ThreadParsers) -> Result<&mut python::PythonParser, String> {
    if parsers.python.is_none() {
        let parser =
            python::PythonParser::new().map_err(|e| format!("Python not analysed: {e}"))?;
        parsers.python = Some(parser);
    }
    parsers
        .python
        .as_mut()
        .ok_or_else(|| "Python parser unavailable".to_owned())
}
