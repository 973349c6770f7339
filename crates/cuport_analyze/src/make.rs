//! Makefiles: the `nvcc` compiler (also as the end of a path,
//! `$(CUDA_PATH)/bin/nvcc`), nvcc's options the rule tables know, link
//! libraries the tables know (`-lcublas`), NVIDIA's install prefix
//! (`/usr/local/cuda`, `/usr/local/cuda-12.4`) and `lib64` under a CUDA
//! root (`$(CUDA_HOME)/lib64`). Comments are skipped; a line continued with
//! `\` is read with its continuation.
//!
//! An option is read as nvcc's on a line that names nvcc or CUDA, or, in a
//! file that calls nvcc, on a line that names no host compiler: short
//! options such as `-G`, `-t` or `-arch` mean something else to g++, ld or
//! Apple's clang. Link libraries are CUDA's wherever they are written.
use cuport_model::{Library, SiteKind, TextRange};

use crate::known::KnownNames;
use crate::site::{FileAnalysis, Site};

/// NVIDIA's default install prefix, as the tables name it.
pub const CUDA_PREFIX: &str = "/usr/local/cuda";

/// Words naming a host compiler or its flags: a line holding one passes
/// options to it, not to nvcc.
const HOST_COMPILERS: &[&[u8]] = &[
    b"$(CC)",
    b"$(CXX)",
    b"${CC}",
    b"${CXX}",
    b"CXXFLAGS",
    b"CPPFLAGS",
    b"gcc",
    b"g++",
    b"clang",
    b"mpicc",
    b"mpicxx",
    b"HOST_COMPILER",
];

pub(crate) fn analyze(src: &[u8], known: Option<&KnownNames>) -> FileAnalysis {
    let lines: Vec<(usize, usize)> = logical_lines(src)
        .into_iter()
        .map(|(start, end)| (start, code_end(src, start, end)))
        .collect();
    let calls_nvcc = lines
        .iter()
        .any(|&(s, e)| !bounded(&src[s..e], b"nvcc").is_empty());
    let mut sites = Vec::new();
    for &(start, end) in &lines {
        let line = &src[start..end];
        let nvcc_line = names_nvcc(line) || (calls_nvcc && !names_host_compiler(line));
        let at = |(s, e): (usize, usize)| (start + s, start + e);
        for (s, e) in bounded(line, b"nvcc").into_iter().map(at) {
            sites.push(site("nvcc", TextRange::new(s, e)));
        }
        for (s, e) in prefixes(line).into_iter().map(at) {
            sites.push(site(CUDA_PREFIX, TextRange::new(s, e)));
        }
        for (s, e) in cuda_lib64(line).into_iter().map(at) {
            sites.push(site("lib64", TextRange::new(s, e)));
        }
        if let Some(known) = known {
            sites.extend(flag_sites(src, start, end, nvcc_line, known));
        }
    }
    sites.sort_by_key(|site| site.range.start);
    sites.dedup_by_key(|site| site.range);
    FileAnalysis {
        sites,
        ..FileAnalysis::default()
    }
}

fn site(name: &str, range: TextRange) -> Site {
    Site::new(SiteKind::BuildRule, Library::Build, name, range)
}

/// The logical lines of `src` (a line ending in `\` goes on with the
/// next): their byte ranges, line breaks left out.
fn logical_lines(src: &[u8]) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut k = 0;
    while k < src.len() {
        if src[k] == b'\n' {
            let continued = src[start..k]
                .strip_suffix(b"\r")
                .unwrap_or(&src[start..k])
                .ends_with(b"\\");
            if !continued {
                lines.push((start, k));
                start = k + 1;
            }
        }
        k += 1;
    }
    if start < src.len() {
        lines.push((start, src.len()));
    }
    lines
}

/// Where the code of the line `src[start..end]` ends: at a `#` that is
/// neither escaped (`\#`) nor quoted (a shell string in a recipe).
fn code_end(src: &[u8], start: usize, end: usize) -> usize {
    let mut quote = None;
    let mut k = start;
    while k < end {
        match (src[k], quote) {
            (b'\\', _) => k += 1,
            (b'"' | b'\'', None) => quote = Some(src[k]),
            (q, Some(open)) if q == open => quote = None,
            (b'#', None) => return k,
            _ => {}
        }
        k += 1;
    }
    end
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Where `word` occurs in `line` as a word of its own (`which nvcc`,
/// `$(CUDA)/bin/nvcc`, not `__nvcc_device_query`).
fn bounded(line: &[u8], word: &[u8]) -> Vec<(usize, usize)> {
    memchr::memmem::find_iter(line, word)
        .filter(|&at| {
            let before = at.checked_sub(1).map(|k| line[k]);
            let after = line.get(at + word.len()).copied();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
        .map(|at| (at, at + word.len()))
        .collect()
}

fn names_nvcc(line: &[u8]) -> bool {
    let lower = line.to_ascii_lowercase();
    ["nvcc", "cuda", "gencode"]
        .iter()
        .any(|w| memchr::memmem::find(&lower, w.as_bytes()).is_some())
        || assigned_variable(line).is_some_and(|v| v.starts_with(b"CU"))
}

fn names_host_compiler(line: &[u8]) -> bool {
    HOST_COMPILERS
        .iter()
        .any(|w| !bounded_word(line, w).is_empty())
}

/// [`bounded`] for words that may start or end with punctuation
/// (`$(CXX)`, `g++`).
fn bounded_word(line: &[u8], word: &[u8]) -> Vec<(usize, usize)> {
    memchr::memmem::find_iter(line, word)
        .filter(|&at| {
            let before = at.checked_sub(1).map(|k| line[k]);
            let after = line.get(at + word.len()).copied();
            let edge = |b: Option<u8>| !b.is_some_and(|b| is_ident(b) || b == b'-');
            edge(before) && edge(after)
        })
        .map(|at| (at, at + word.len()))
        .collect()
}

/// The variable a line assigns (`NVCCFLAGS += ...` → `NVCCFLAGS`).
fn assigned_variable(line: &[u8]) -> Option<&[u8]> {
    let trimmed = line.trim_ascii_start();
    let end = trimmed.iter().position(|b| !is_ident(*b))?;
    let rest = trimmed[end..].trim_ascii_start();
    let assigns = [&b"="[..], b":=", b"::=", b"+=", b"?=", b"!="]
        .iter()
        .any(|op| rest.starts_with(op));
    (end > 0 && assigns).then_some(&trimmed[..end])
}

/// `/usr/local/cuda` and a version after it (`-12.4`), where the path ends
/// or goes on with `/`.
fn prefixes(line: &[u8]) -> Vec<(usize, usize)> {
    memchr::memmem::find_iter(line, CUDA_PREFIX.as_bytes())
        .filter_map(|at| {
            let mut end = at + CUDA_PREFIX.len();
            if line.get(end) == Some(&b'-') && line.get(end + 1).is_some_and(u8::is_ascii_digit) {
                end += 1 + line[end + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit() || **b == b'.')
                    .count();
            }
            let after = line.get(end).copied();
            (!after.is_some_and(|b| is_ident(b) || b == b'-' || b == b'.')).then_some((at, end))
        })
        .collect()
}

/// `lib64` right after a CUDA root: `/usr/local/cuda[-x.y]/lib64` or a
/// variable whose name says CUDA (`$(CUDA_HOME)/lib64`, `${CUDA_PATH}/lib64`).
fn cuda_lib64(line: &[u8]) -> Vec<(usize, usize)> {
    memchr::memmem::find_iter(line, b"/lib64")
        .filter(|&at| !line.get(at + 6).is_some_and(|b| is_ident(*b)))
        .filter(|&at| {
            let before = &line[..at];
            prefixes(before).last().is_some_and(|&(_, e)| e == at) || cuda_variable_ends(before)
        })
        .map(|at| (at + 1, at + 6))
        .collect()
}

/// Whether `text` ends with a `$(VAR)`/`${VAR}` reference whose name
/// holds `CUDA`.
fn cuda_variable_ends(text: &[u8]) -> bool {
    let (open, close) = match text.last() {
        Some(b')') => (b'(', b')'),
        Some(b'}') => (b'{', b'}'),
        _ => return false,
    };
    let Some(start) = text.iter().rposition(|&b| b == open) else {
        return false;
    };
    let name = &text[start + 1..text.len() - 1];
    start > 0
        && text[start - 1] == b'$'
        && !name.contains(&close)
        && name.iter().all(|b| is_ident(*b))
        && memchr::memmem::find(&name.to_ascii_uppercase(), b"CUDA").is_some()
}

/// Sites for the options in the line `src[start..end]` the tables know:
/// link libraries anywhere, nvcc's options where the line passes options
/// to nvcc.
fn flag_sites(
    src: &[u8],
    start: usize,
    end: usize,
    nvcc_line: bool,
    known: &KnownNames,
) -> Vec<Site> {
    let mut sites = Vec::new();
    let mut k = start;
    while k < end {
        let word_start = k == start || is_separator(src[k - 1]);
        if src[k] != b'-' || !word_start {
            k += 1;
            continue;
        }
        let word_end = k + src[k..end]
            .iter()
            .position(|&b| b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b')' | b';'))
            .unwrap_or(end - k);
        let Ok(word) = std::str::from_utf8(&src[k..word_end]) else {
            k = word_end;
            continue;
        };
        let option = word.split_once('=').map_or(word, |(option, _)| option);
        let library = word.starts_with("-l");
        let name = [word, option]
            .into_iter()
            .find(|name| (library || nvcc_line) && (known.is_known)(name));
        if let Some(name) = name {
            sites.push(site(name, TextRange::new(k, k + name.len())));
        }
        k = word_end.max(k + 1);
    }
    sites
}

/// What may come before an option: blanks, quotes, `(` of a function call
/// (`$(addprefix -Xlinker ,...)`) and `=` of an assignment without blanks.
fn is_separator(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'(' | b'=')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn known() -> KnownNames {
        KnownNames::new(
            |name| {
                matches!(
                    name,
                    "-lcublas" | "--use_fast_math" | "-arch" | "-G" | "-Xcompiler" | "-t"
                )
            },
            |_| None,
        )
    }

    fn names(src: &str) -> Vec<(String, String)> {
        analyze(src.as_bytes(), Some(&known()))
            .sites
            .into_iter()
            .map(|s| (s.name, src[s.range.start..s.range.end].to_owned()))
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn the_compiler_is_found_as_a_word_and_at_the_end_of_a_path() {
        let src = "NVCC := $(CUDA_PATH)/bin/nvcc\nQ := $(shell __nvcc_device_query)\nX := nvcc_wrapper\n# nvcc in a comment\nY := $(shell which nvcc)\n";
        assert_eq!(
            names(src),
            pairs(&[("nvcc", "nvcc"), ("nvcc", "nvcc")]),
            "{src}"
        );
    }

    #[test]
    fn install_prefix_and_lib64_under_a_cuda_root_are_found() {
        let src = "CUDA_PATH ?= /usr/local/cuda-12.4\nLDFLAGS := -L$(CUDA_PATH)/lib64 -L${CUDA_HOME}/lib64 -L/usr/local/cuda/lib64 -L$(MPI)/lib64\nX := /usr/local/cudax\n";
        assert_eq!(
            names(src),
            pairs(&[
                (CUDA_PREFIX, "/usr/local/cuda-12.4"),
                ("lib64", "lib64"),
                ("lib64", "lib64"),
                (CUDA_PREFIX, "/usr/local/cuda"),
                ("lib64", "lib64"),
            ])
        );
    }

    #[test]
    fn nvcc_options_are_read_on_lines_that_pass_options_to_nvcc() {
        let src = "NVCC := nvcc\nNVCCFLAGS = -O3 --use_fast_math -arch=sm_80\nFLAGS = -G\nCXXFLAGS = -G -t\nLDLIBS = -lcublas\n\t$(CXX) -arch x86_64 -o $@ $^ -lcublas\n";
        assert_eq!(
            names(src),
            pairs(&[
                ("nvcc", "nvcc"),
                ("--use_fast_math", "--use_fast_math"),
                ("-arch", "-arch"),
                ("-G", "-G"),
                ("-lcublas", "-lcublas"),
                ("-lcublas", "-lcublas"),
            ])
        );
    }

    #[test]
    fn without_nvcc_only_lines_naming_cuda_pass_nvcc_options() {
        let src = "CFLAGS = -G -O2\nCUFLAGS = -G\n";
        assert_eq!(names(src), pairs(&[("-G", "-G")]));
    }

    #[test]
    fn a_continued_line_is_one_line_and_a_quoted_hash_is_no_comment() {
        let src = "NVCCFLAGS = -O3 \\\n  --use_fast_math # -G\n\t@echo \"#\" nvcc -G\n";
        assert_eq!(
            names(src),
            pairs(&[
                ("--use_fast_math", "--use_fast_math"),
                ("nvcc", "nvcc"),
                ("-G", "-G")
            ])
        );
    }

    #[test]
    fn bad_input_is_read_without_panicking() {
        for src in [
            &b"\\"[..],
            b"-",
            b"/usr/local/cuda-",
            b"$(\n)/lib64",
            b"\xff-arch=\xfe",
            b"a=-",
        ] {
            let _ = analyze(src, Some(&known()));
        }
    }
}
