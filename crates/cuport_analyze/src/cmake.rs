//! CMake: the CUDA language, the toolkit package, `CUDA::` targets,
//! `CMAKE_CUDA_*` settings (also as `${...}` inside strings), CUDA target
//! properties, NVIDIA architecture lists, nvcc flags the rule tables know
//! and legacy FindCUDA commands. Comments (`#`, `#[[...]]`) are skipped.
use cuport_model::{Library, SiteKind, TextRange};

use crate::known::KnownNames;
use crate::site::{FileAnalysis, Site};

/// The name of the site for the values of `CMAKE_CUDA_ARCHITECTURES` or the
/// `CUDA_ARCHITECTURES` property when they are NVIDIA architecture numbers.
pub const CUDA_ARCHITECTURE_VALUES: &str = "CUDA_ARCHITECTURES values";

/// Commands whose arguments are compiler options whatever language they
/// name.
const OPTION_COMMANDS: &[&str] = &[
    "target_compile_options",
    "add_compile_options",
    "target_link_options",
    "add_link_options",
];

pub(crate) fn analyze(src: &[u8], known: Option<&KnownNames>) -> FileAnalysis {
    let mut sites = Vec::new();
    let mut i = 0;
    // Where the arguments of the command being read end: a word followed
    // by `(` inside them is an argument, not a command (CMake has no
    // nested commands; a fuzzing finding:
    // `fuzz_regressions::cmake_word_inside_arguments_is_no_command`).
    let mut arguments_end = 0;
    // Whether the command being read passes options to nvcc, so that a
    // word like `-G` in it is nvcc's flag (elsewhere it may be CMake's).
    let mut nvcc_options = false;
    while i < src.len() {
        match src[i] {
            b'#' => i = skip_comment(src, i),
            b'"' => {
                let end = skip_string(src, i);
                if i < arguments_end {
                    sites.extend(string_sites(src, i + 1, end, nvcc_options, known));
                }
                i = end;
            }
            b'-' if i < arguments_end && nvcc_options => {
                let end = argument_end(src, i);
                sites.extend(flag_site(src, i, end, known));
                i = end;
            }
            b if b.is_ascii_alphabetic() || b == b'_' || b == b'$' => {
                let end = word_end(src, i);
                let command = i >= arguments_end;
                if command {
                    if let Some(open) = opening_paren(src, end) {
                        arguments_end = cmake_closing_paren(src, open + 1).unwrap_or(src.len());
                        nvcc_options = passes_nvcc_options(&src[i..end], &src[open..arguments_end]);
                        sites.extend(architecture_values(src, open + 1, arguments_end));
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

/// Whether a command invocation starts at `at`, as CMake reads the file:
/// a word followed by `(` outside comments, quoted arguments and the
/// arguments of another command (`find_package(X #\n f(y))` holds no `f`
/// command).
pub fn is_cmake_command_at(src: &[u8], at: usize) -> bool {
    let mut i = 0;
    let mut arguments_end = 0;
    while i < src.len() && i <= at {
        match src[i] {
            b'#' => i = skip_comment(src, i),
            b'"' => i = skip_string(src, i),
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let end = word_end(src, i);
                if i >= arguments_end {
                    if let Some(open) = opening_paren(src, end) {
                        if i == at {
                            return true;
                        }
                        arguments_end = cmake_closing_paren(src, open + 1).unwrap_or(src.len());
                    }
                }
                i = end.max(i + 1);
            }
            _ => i += 1,
        }
    }
    false
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

/// One CMake command call: its name as written, where it starts, and its
/// parentheses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmakeCommand {
    pub name: String,
    pub start: usize,
    pub open: usize,
    pub close: usize,
}

/// Every command call in `src`, read as CMake reads it (comments and
/// quoted arguments skipped, no line break between a name and its `(`).
pub fn cmake_commands(src: &[u8]) -> Vec<CmakeCommand> {
    let mut commands = Vec::new();
    let mut k = 0;
    while k < src.len() {
        match src[k] {
            b'#' => k = skip_comment(src, k),
            b'"' => k = skip_string(src, k),
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let end = k + src[k..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                    .count();
                let call = opening_paren(src, end)
                    .and_then(|open| Some((open, cmake_closing_paren(src, open + 1)?)));
                match call {
                    Some((open, close)) => {
                        commands.push(CmakeCommand {
                            name: String::from_utf8_lossy(&src[k..end]).into_owned(),
                            start: k,
                            open,
                            close,
                        });
                        k = close + 1;
                    }
                    None => k = end,
                }
            }
            _ => k += 1,
        }
    }
    commands
}

/// The byte ranges of a command's arguments between `from` and `to`
/// (quoted ones with their quotes), comments left out.
pub fn cmake_arguments(src: &[u8], from: usize, to: usize) -> Vec<(usize, usize)> {
    argument_words(src, from, to)
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

/// Whether a command's arguments are options for nvcc: it names CUDA (a
/// `CMAKE_CUDA_FLAGS*` variable, `CUDA_NVCC_FLAGS`, a
/// `$<COMPILE_LANGUAGE:CUDA>` expression, a `cuda_add_*` command) or it is
/// one of the [`OPTION_COMMANDS`]. `CMAKE_HIP_FLAGS*` counts too: an nvcc
/// flag left there (by hand, or by an earlier run) is still reported.
fn passes_nvcc_options(command: &[u8], arguments: &[u8]) -> bool {
    // A word in a comment names nothing: a `# CUPORT ... project(CUDA)`
    // note inside an argument list made a rerun report what the first run
    // had not (a fuzzing finding:
    // `fuzz_regressions::a_comment_in_cmake_arguments_does_not_make_them_nvcc_options`).
    let arguments = without_comments(arguments);
    let arguments = arguments.as_slice();
    let command = String::from_utf8_lossy(command).to_ascii_lowercase();
    OPTION_COMMANDS.contains(&command.as_str())
        || command.starts_with("cuda_")
        || memchr::memmem::find(arguments, b"CUDA").is_some()
        || memchr::memmem::find(arguments, b"NVCC").is_some()
        || memchr::memmem::find(arguments, b"CMAKE_HIP_FLAGS").is_some()
}

/// Where an unquoted argument starting at `start` ends.
fn argument_end(src: &[u8], start: usize) -> usize {
    start
        + src[start..]
            .iter()
            .position(|&b| b.is_ascii_whitespace() || matches!(b, b')' | b'(' | b'"' | b'#' | b';'))
            .unwrap_or(src.len() - start)
}

/// The sites inside the quoted argument `src[start..end]` (its closing quote
/// at `end - 1`): `${CMAKE_CUDA_*}` references, and nvcc flags when the
/// command passes options to nvcc.
fn string_sites(
    src: &[u8],
    start: usize,
    end: usize,
    nvcc_options: bool,
    known: Option<&KnownNames>,
) -> Vec<Site> {
    let mut sites = Vec::new();
    let body_end = end.saturating_sub(1).max(start);
    let mut k = start;
    while k < body_end {
        match src[k] {
            b'$' if src.get(k + 1) == Some(&b'{') => {
                // An unterminated string may end right after `${`.
                let name_start = (k + 2).min(body_end);
                let name_end = word_end(src, name_start).min(body_end);
                if name_end > name_start {
                    let (site, _) = word_site(src, name_start, name_end, false);
                    sites.extend(site);
                }
                k = name_end.max(k + 2);
            }
            b'-' if nvcc_options
                && (k == start || src[k - 1].is_ascii_whitespace() || src[k - 1] == b';') =>
            {
                let flag_end = argument_end(src, k).min(body_end);
                sites.extend(flag_site(src, k, flag_end, known));
                k = flag_end.max(k + 1);
            }
            b'\\' => k += 2,
            _ => k += 1,
        }
    }
    sites
}

/// A site for the flag `src[start..end]` when the rule tables know it: the
/// whole word (`-rdc=true`) or else its option (`-Xcompiler` of
/// `-Xcompiler=-Wall`).
fn flag_site(src: &[u8], start: usize, end: usize, known: Option<&KnownNames>) -> Option<Site> {
    let known = known?;
    // `$<$<COMPILE_LANGUAGE:CUDA>:-G>`: the expression's `>` is not the flag's.
    let word = std::str::from_utf8(&src[start..end])
        .ok()?
        .trim_end_matches('>');
    let option = word.split_once('=').map_or(word, |(option, _)| option);
    let (name, range) = if (known.is_known)(word) {
        (word, TextRange::new(start, start + word.len()))
    } else if (known.is_known)(option) {
        (option, TextRange::new(start, start + option.len()))
    } else {
        return None;
    };
    Some(Site::new(SiteKind::BuildRule, Library::Build, name, range))
}

/// `set(CMAKE_CUDA_ARCHITECTURES 80 90)`, `set_target_properties(t
/// PROPERTIES CUDA_ARCHITECTURES "75;86")`: one site over the values when
/// any is an NVIDIA architecture number (`native`, `all` and variables are
/// left alone).
fn architecture_values(src: &[u8], from: usize, to: usize) -> Option<Site> {
    let words = argument_words(src, from, to);
    let at = words.iter().position(|&(s, e)| {
        matches!(
            &src[s..e],
            b"CMAKE_CUDA_ARCHITECTURES" | b"CUDA_ARCHITECTURES"
        )
    })?;
    let values: Vec<(usize, usize)> = words[at + 1..]
        .iter()
        .copied()
        .take_while(|&(s, e)| !is_keyword(&src[s..e]))
        .collect();
    // A value with parentheses is not an architecture list (unbalanced
    // input or a nested group): rewriting part of it would move the
    // command's closing parenthesis (a fuzzing finding).
    if values
        .iter()
        .any(|&(s, e)| src[s..e].iter().any(|b| matches!(b, b'(' | b')')))
    {
        return None;
    }
    let numeric = values.iter().any(|&(s, e)| {
        src[s..e]
            .split(|&b| b == b';' || b == b'"')
            .any(|v| v.first().is_some_and(u8::is_ascii_digit))
    });
    let (first, last) = (values.first()?, values.last()?);
    numeric.then(|| {
        Site::new(
            SiteKind::BuildRule,
            Library::Build,
            CUDA_ARCHITECTURE_VALUES,
            TextRange::new(first.0, last.1),
        )
    })
}

/// The byte ranges of the arguments in `src[from..to]` (quoted ones with
/// their quotes), comments left out.
fn argument_words(src: &[u8], from: usize, to: usize) -> Vec<(usize, usize)> {
    let mut words = Vec::new();
    let mut k = from;
    while k < to {
        match src[k] {
            b'#' => k = skip_comment(src, k),
            b'"' => {
                let end = skip_string(src, k).min(to);
                words.push((k, end));
                k = end;
            }
            b if b.is_ascii_whitespace() => k += 1,
            _ => {
                let end = argument_end(src, k).min(to).max(k + 1);
                words.push((k, end));
                k = end;
            }
        }
    }
    words
}

/// `CACHE`, `PARENT_SCOPE`, `PROPERTIES`, a property name: an upper-case
/// word that ends a list of values.
fn is_keyword(word: &[u8]) -> bool {
    word.first().is_some_and(u8::is_ascii_uppercase)
        && word
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
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
fn word_site(src: &[u8], start: usize, end: usize, top_level: bool) -> (Vec<Site>, usize) {
    if src[start..end].starts_with(b"${") {
        // `${CMAKE_CUDA_FLAGS}` as an argument: the variable is the site.
        let (site, _) = word_site(src, start + 2, end, false);
        return (site, end);
    }
    let Ok(word) = std::str::from_utf8(&src[start..end]) else {
        return (Vec::new(), end);
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
    // The range ends with the name: `}` of `${CMAKE_CUDA_FLAGS}` or `>` of a
    // generator expression are not part of what a rule renames.
    let site = |name: &str| {
        Some(Site::new(
            SiteKind::BuildRule,
            Library::Build,
            name,
            TextRange::new(start, (start + name.len()).min(end)),
        ))
    };
    if cuda_command {
        let Some((found, next)) = command_site(src, end, &lower, start, end) else {
            return (Vec::new(), end);
        };
        let sites = found
            .into_iter()
            .map(|(name, range)| Site::new(SiteKind::BuildRule, Library::Build, name, range))
            .collect();
        return (sites, next);
    }
    let interesting = word.starts_with("CUDA::")
        || word.starts_with("CMAKE_CUDA")
        || word.starts_with("CUDAToolkit")
        || word.contains("COMPILE_LANGUAGE:CUDA")
        || (word.starts_with("CUDA_")
            && word
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'))
        || word.starts_with("cuda_std_")
        || word == "CUDA"
        || matches!(word, "CUDNN" | "NCCL" | "nvcc" | "NVCC");
    let found = interesting
        .then(|| word.trim_end_matches(['>', '}']).to_owned())
        .and_then(|name| site(&name));
    (found.into_iter().collect(), end)
}

/// For `project(...)`/`enable_language(...)`/`find_package(...)`, a site
/// only when CUDA is involved, whose range is the CUDA argument itself (so
/// a rewrite replaces that word); `cuda_add_*` (FindCUDA) always is one.
/// Where CUDA is involved is read as CMake does: the package of
/// `find_package` is its first argument, the first argument of `project`
/// is the project's name, languages come after it. Returns each site's
/// name and byte range (every CUDA argument: `project(p CUDA ... CUDA)`
/// must not keep one for a rerun to port; a fuzzing finding) and where
/// scanning resumes: inside the arguments, so the
/// other words there are found whether or not the command is CUDA's (a
/// rerun over `find_package(hip CMAKE_CUDA_FLAGS)` sees what the first run
/// saw; fuzzing findings in `fuzz_regressions::cmake_*`).
fn command_site(
    src: &[u8],
    open_from: usize,
    command: &str,
    start: usize,
    end: usize,
) -> Option<(Vec<(String, TextRange)>, usize)> {
    let open = open_from + src[open_from..].iter().position(|&b| b == b'(')?;
    if command.starts_with("cuda_") {
        return Some((
            vec![(format!("{command}()"), TextRange::new(start, end))],
            open + 1,
        ));
    }
    let close = cmake_closing_paren(src, open + 1)?;
    let mut at = open + 1;
    let mut position = 0;
    let mut found = Vec::new();
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
            found.push((
                format!("{command}({text})"),
                TextRange::new(at, at + word.len()),
            ));
        }
        position += 1;
        at += word.len() + 1;
    }
    (!found.is_empty()).then_some((found, open + 1))
}
