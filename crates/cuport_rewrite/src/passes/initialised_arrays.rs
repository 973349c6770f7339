//! `T a[n] = {0};` with a run-time `n` (cuda-samples' Tegra imageKernels:
//! `cudaSurfaceObject_t surfObject[numPlanes] = {0};`): g++, nvcc's host
//! compiler, accepts an initialised variable-length array as an extension;
//! clang, which hipcc and mcc are, rejects it ("variable-sized object may
//! not be initialized"). Reported where the target's compiler is
//! clang-based (`[kernels] clang-frontend` in `mappings/<target>/target.toml`).
use cuport_model::{Library, SiteKind, TextRange};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::plan::{FileInput, Planned};
use crate::source_text::{in_line_comment, is_word, trim_end, word_start};
use cuport_model::Effort;

/// Integer types a run-time bound is declared with.
const INTEGER_TYPES: &[&str] = &[
    "int", "unsigned", "long", "short", "size_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
    "uint", "ssize_t",
];

/// One diagnostic per initialised array whose bound is a non-constant
/// integer variable of the file.
pub(super) fn report_initialised_vlas(input: &FileInput<'_>, planned: &mut Planned) {
    let (src, lines, targets) = (input.src, input.lines, input.options.targets());
    let Some(target) = targets.iter().find(|t| t.profile().kernels.clang_frontend) else {
        return;
    };
    for open in memchr::memchr_iter(b'[', src) {
        let Some((bound, range)) = initialised_array(src, open) else {
            continue;
        };
        if in_line_comment(src, open) || !is_runtime_integer(src, bound) {
            continue;
        }
        let at = lines.line_col(range.start);
        planned.diagnostics.push(Diagnostic {
            code: codes::INITIALISED_VLA,
            level: Level::Manual,
            effort: Some(Effort::Low),
            message: format!("an array sized by the variable `{bound}` with an initialiser: g++ (under nvcc) accepts it, the clang-based compiler of {target} does not"),
            line: at.line,
            column: at.column,
            range,
            cuda_name: bound.to_owned(),
            library: Library::Runtime,
            kind: SiteKind::Type,
            suggestion: Some(format!("drop the initialiser and fill the array in a loop, or size it with a constant (a `std::vector` of `{bound}` elements on the host)")),
            reference: None,
        });
    }
}

/// `name[bound] = {` with `[` at `open`: the bound and the range `[bound]`.
fn initialised_array(src: &[u8], open: usize) -> Option<(&str, TextRange)> {
    if !declares_array(src, open) {
        return None;
    }
    // Past the end stays past the end: `t s[s]` ends the file right after
    // its `]` (a fuzzing finding: `fuzz_regressions::an_array_at_the_end_of_the_file_is_read_safely`).
    let skip = |at: usize| {
        at + src
            .get(at..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count()
    };
    let start = skip(open + 1);
    let len = src[start..].iter().take_while(|b| is_word(b)).count();
    let close = skip(start + len);
    if len == 0 || src.get(close) != Some(&b']') {
        return None;
    }
    let equals = skip(close + 1);
    let brace = skip(equals + 1);
    let initialised = src.get(equals) == Some(&b'=') && src.get(brace) == Some(&b'{');
    let bound = std::str::from_utf8(&src[start..start + len]).ok()?;
    let variable = bound.starts_with(|c: char| c.is_ascii_lowercase() || c == '_');
    (initialised && variable).then_some((bound, TextRange::new(open, close + 1)))
}

/// `T name[`, `T *name[` or `, name[` before `open`: a declaration, not an
/// assignment to an element (`infos[i] = {};`).
fn declares_array(src: &[u8], open: usize) -> bool {
    let name_end = trim_end(src, open);
    let name_start = word_start(src, name_end);
    let before = src[..name_start]
        .iter()
        .rposition(|b| !b.is_ascii_whitespace());
    name_start < name_end
        && before.is_some_and(|i| is_word(&src[i]) || matches!(src[i], b'*' | b'&' | b','))
}

/// Whether the file declares `name` as a non-const integer (`int n`,
/// `int32_t numPlanes`, a parameter or a local).
fn is_runtime_integer(src: &[u8], name: &str) -> bool {
    memchr::memmem::find_iter(src, name.as_bytes()).any(|at| {
        let end = at + name.len();
        let whole = !src.get(end).is_some_and(is_word) && at > 0 && !is_word(&src[at - 1]);
        let words = words_before(src, at, 3);
        whole
            && words.first().is_some_and(|w| INTEGER_TYPES.contains(w))
            && !words
                .iter()
                .any(|w| *w == "const" || *w == "constexpr" || *w == "define")
    })
}

/// Up to `count` words right before `at`, nearest first (stops at anything
/// that is not a word or a space).
fn words_before(src: &[u8], at: usize, count: usize) -> Vec<&str> {
    let mut words = Vec::new();
    let mut end = at;
    while words.len() < count {
        let trimmed = src[..end]
            .iter()
            .rposition(|b| *b != b' ' && *b != b'\t')
            .map_or(0, |i| i + 1);
        let start = word_start(src, trimmed);
        if start == trimmed {
            break;
        }
        match std::str::from_utf8(&src[start..trimmed]) {
            Ok(word) => words.push(word),
            Err(_) => break,
        }
        end = start;
    }
    words
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::diagnostic::codes;
    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;

    #[test]
    fn an_initialised_variable_length_array_is_reported_for_clang_targets_only() {
        let src = "void f(int n) { cudaSurfaceObject_t s[n] = {0}; }\n";
        let hip = run_pass(
            &REPORT_INITIALISED_VLAS,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Hip),
        );
        assert_eq!(hip.codes(), [codes::INITIALISED_VLA]);
        let fixed = "void f() { cudaSurfaceObject_t s[4] = {0}; }\n";
        let none = run_pass(
            &REPORT_INITIALISED_VLAS,
            Language::Cuda,
            fixed,
            &MigrateOptions::new(Target::Hip),
        );
        assert!(none.diagnostics.is_empty(), "{:?}", none.diagnostics);
    }
}
