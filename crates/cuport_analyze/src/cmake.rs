//! CMake: the CUDA language, the toolkit package, `CUDA::` targets,
//! `CMAKE_CUDA_*` settings, CUDA target properties and legacy FindCUDA
//! commands. Comments (`#`, `#[[...]]`) are skipped.
use cuport_model::{Library, SiteKind, TextRange};

use crate::site::{FileAnalysis, Site};

pub(crate) fn analyze(src: &[u8]) -> FileAnalysis {
    let mut sites = Vec::new();
    let mut i = 0;
    // Where the arguments of the command being read end: a word followed
    // by `(` inside them is an argument, not a command (CMake has no
    // nested commands; a fuzzing finding:
    // `fuzz_regressions::cmake_word_inside_arguments_is_no_command`).
    let mut arguments_end = 0;
    while i < src.len() {
        match src[i] {
            b'#' => i = skip_comment(src, i),
            b'"' => i = skip_string(src, i),
            b if b.is_ascii_alphabetic() || b == b'_' || b == b'$' => {
                let end = word_end(src, i);
                let command = i >= arguments_end;
                if command {
                    if let Some(open) = opening_paren(src, end) {
                        arguments_end = cmake_closing_paren(src, open + 1).unwrap_or(src.len());
                    }
                }
                let (site, next) = word_site(src, i, end, command);
                sites.extend(site);
                i = next.max(end);
            }
            _ => i += 1,
        }
    }
    // A command's CUDA argument is its site; the same word met again when
    // the scan goes on through the arguments is not a second one.
    sites.sort_by_key(|site| site.range.start);
    sites.dedup_by_key(|site| site.range);
    FileAnalysis {
        sites,
        ..FileAnalysis::default()
    }
}

fn skip_comment(src: &[u8], i: usize) -> usize {
    if src[i..].starts_with(b"#[[") || src[i..].starts_with(b"#[=") {
        let close = if src[i..].starts_with(b"#[[") {
            &b"]]"[..]
        } else {
            &b"]=]"[..]
        };
        return memchr::memmem::find(&src[i..], close).map_or(src.len(), |k| i + k + close.len());
    }
    memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |k| i + k)
}

fn skip_string(src: &[u8], i: usize) -> usize {
    let mut k = i + 1;
    while k < src.len() {
        match src[k] {
            b'\\' => k += 2,
            b'"' => return k + 1,
            _ => k += 1,
        }
    }
    src.len()
}

/// The `)` that closes the CMake arguments starting at `from`: nested
/// parentheses count, those in quoted arguments and comments do not.
pub fn cmake_closing_paren(src: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut k = from;
    while k < src.len() {
        match src[k] {
            b'"' => k = skip_string(src, k),
            b'#' => k = skip_comment(src, k),
            b'(' => {
                depth += 1;
                k += 1;
            }
            b')' if depth == 0 => return Some(k),
            b')' => {
                depth -= 1;
                k += 1;
            }
            _ => k += 1,
        }
    }
    None
}

/// `arguments` with each `#` comment blanked out (same length, so offsets
/// hold): a word in a comment is no argument.
fn without_comments(arguments: &[u8]) -> Vec<u8> {
    let mut out = arguments.to_vec();
    let mut k = 0;
    while k < out.len() {
        match out[k] {
            b'"' => k = skip_string(&out, k),
            b'#' => {
                let end = skip_comment(&out, k);
                out[k..end].fill(b' ');
                k = end;
            }
            _ => k += 1,
        }
    }
    out
}

/// The `(` after the word ending at `end`, when only spaces and tabs come
/// between: CMake's grammar allows no line break there, so a word ending a
/// line is an argument, never a command.
fn opening_paren(src: &[u8], end: usize) -> Option<usize> {
    let at = end + src[end..].iter().position(|b| *b != b' ' && *b != b'\t')?;
    (src[at] == b'(').then_some(at)
}

fn word_end(src: &[u8], start: usize) -> usize {
    let mut k = start;
    while k < src.len()
        && (src[k].is_ascii_alphanumeric()
            || matches!(src[k], b'_' | b':' | b'$' | b'<' | b'>' | b'{' | b'}'))
    {
        k += 1;
    }
    k
}

/// The CMake word `src[start..end]`, if it is a CUDA build touchpoint, and
/// where scanning resumes (after the arguments of a command reported whole).
fn word_site(src: &[u8], start: usize, end: usize, top_level: bool) -> (Option<Site>, usize) {
    let Ok(word) = std::str::from_utf8(&src[start..end]) else {
        return (None, end);
    };
    let next = opening_paren(src, end).map(|_| b'(');
    let lower = word.to_ascii_lowercase();
    let is_command = top_level && next == Some(b'(');
    let cuda_command = is_command
        && (lower.starts_with("cuda_")
            || matches!(
                lower.as_str(),
                "enable_language" | "project" | "find_package" | "check_language"
            ));
    let site = |name: &str| {
        Some(Site::new(
            SiteKind::BuildRule,
            Library::Build,
            name,
            TextRange::new(start, end),
        ))
    };
    if cuda_command {
        if let Some((name, range, next)) = command_site(src, end, &lower, start, end) {
            return (
                Some(Site::new(SiteKind::BuildRule, Library::Build, name, range)),
                next,
            );
        }
        return (None, end);
    }
    let interesting = word.starts_with("CUDA::")
        || word.starts_with("CMAKE_CUDA")
        || word.starts_with("CUDAToolkit")
        || word.contains("COMPILE_LANGUAGE:CUDA")
        || (word.starts_with("CUDA_")
            && word
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'))
        || word == "CUDA"
        || matches!(word, "CUDNN" | "NCCL" | "nvcc" | "NVCC");
    let found = interesting
        .then(|| word.trim_end_matches(['>', '}']).to_owned())
        .and_then(|name| site(&name));
    (found, end)
}

/// For `project(...)`/`enable_language(...)`/`find_package(...)`, a site
/// only when CUDA is involved, whose range is the CUDA argument itself (so
/// a rewrite replaces that word); `cuda_add_*` (FindCUDA) always is one.
/// Where CUDA is involved is read as CMake does: the package of
/// `find_package` is its first argument, the first argument of `project`
/// is the project's name, languages come after it. Returns the site's name,
/// its byte range and where scanning resumes: inside the arguments, so the
/// other words there are found whether or not the command is CUDA's (a
/// rerun over `find_package(hip CMAKE_CUDA_FLAGS)` sees what the first run
/// saw; fuzzing findings in `fuzz_regressions::cmake_*`).
fn command_site(
    src: &[u8],
    open_from: usize,
    command: &str,
    start: usize,
    end: usize,
) -> Option<(String, TextRange, usize)> {
    let open = open_from + src[open_from..].iter().position(|&b| b == b'(')?;
    if command.starts_with("cuda_") {
        return Some((format!("{command}()"), TextRange::new(start, end), open + 1));
    }
    let close = cmake_closing_paren(src, open + 1)?;
    let mut at = open + 1;
    let mut position = 0;
    for word in without_comments(&src[open + 1..close]).split(|b| b.is_ascii_whitespace()) {
        if word.is_empty() {
            at += 1;
            continue;
        }
        let text = std::str::from_utf8(word).unwrap_or("");
        let cuda = match command {
            "find_package" => {
                position == 0 && matches!(text, "CUDA" | "CUDAToolkit" | "CUDNN" | "NCCL" | "cuDNN")
            }
            "project" => position > 0 && text == "CUDA",
            _ => text == "CUDA",
        };
        if cuda {
            let range = TextRange::new(at, at + word.len());
            return Some((format!("{command}({text})"), range, open + 1));
        }
        position += 1;
        at += word.len() + 1;
    }
    None
}
