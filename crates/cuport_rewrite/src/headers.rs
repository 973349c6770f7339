//! Lines a migration adds around its edits: the target headers and Python
//! imports the rewritten names need (placed where the compiler sees them on
//! every configuration), and `--annotate`'s `CUPORT CPxxxx` comments. Both
//! one-way and dual-stack runs use them.
use cuport_analyze::FileAnalysis;
use cuport_model::{Language, Library, LineIndex, SiteKind, TextRange};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::edit::{Edit, EditKind};
use crate::plan::Planned;

/// The runtime header added to `.cu` files that rely on nvcc's implicit one.
pub(crate) struct MainHeader<'a> {
    pub(crate) spelled: &'a str,
    /// The file already includes target (or shim) headers and no CUDA one:
    /// its runtime header was decided when it was ported.
    pub(crate) already_ported: bool,
    /// A project header the file includes before anything CUDA gives it
    /// the runtime header (`crate::runtime_providers`).
    pub(crate) provided_by_project_header: bool,
    /// A `.cu` file includes this header, which has no runtime header of
    /// its own: nvcc's implicit include served it there.
    pub(crate) included_by_cuda_source: bool,
    pub(crate) placement: HeaderPlacement<'a>,
}

/// Where and when the run adds the runtime and device headers (the mode's
/// choice, `crate::mode::header_placement`).
pub(crate) struct HeaderPlacement<'a> {
    /// The header that declares the target's device API, where nvcc's
    /// implicit device declarations were relied on (Ascend C SIMT's
    /// `simt_api/asc_simt.h`): added to a CUDA-language file with device
    /// code that does not include it.
    pub(crate) device: Option<&'a str>,
    /// Added even to a file the migration does not otherwise change.
    pub(crate) even_without_edits: bool,
    /// Put the runtime header before a cooperative-groups include that
    /// came first (one-way HIP/MUSA; a dual-stack switch already does).
    pub(crate) before_cooperative_groups: bool,
    /// Put the runtime header before a first include that is no CUDA one
    /// (dual-stack: a project header included first, such as cuda-samples'
    /// `helper_cuda.h`, may use the portable names, which nvcc's implicit
    /// runtime include once made available).
    pub(crate) before_project_headers: bool,
}

/// Includes (C family) or imports (Python) the planned edits need, and
/// the runtime header a `.cu` file relied on nvcc for.
pub(crate) fn header_edits(
    src: &[u8],
    language: Language,
    analysis: &FileAnalysis,
    planned: &Planned,
    main_header: &MainHeader<'_>,
) -> Vec<Edit> {
    match language {
        Language::Cuda | Language::Cpp => {}
        Language::Python => return python_import_edits(src, planned),
        _ => return Vec::new(),
    }
    // Include policy: a target header comes only (a) in place of a CUDA
    // header the file includes (the include rules rename those), (b) as the
    // runtime header of a CUDA-language file that relied on nvcc's implicit
    // one, or (c) as one of cuport's own generated headers the rewrites call
    // into (`planned.headers`). Names used without an include of their own
    // (a helper header's cuBLAS code under `#ifdef CUBLAS_API_H_`) get their
    // declarations from whoever includes the library, as before the port.
    let mut wanted: Vec<String> = planned.headers.clone();
    let at = include_insertion_point(src);
    let runtime = runtime_header_wanted(src, at, language, analysis, planned, main_header);
    if runtime != RuntimeHeader::NotWanted {
        wanted.insert(0, main_header.spelled.to_owned());
    }
    if let Some(device) = main_header
        .placement
        .device
        .filter(|_| has_device_code(language, analysis))
    {
        let after_runtime = usize::from(runtime != RuntimeHeader::NotWanted);
        wanted.insert(after_runtime, device.to_owned());
    }
    wanted.dedup();
    let newline = line_ending(src);
    // After a guard's `#define` on the last line, which has no line break.
    let lead = if at > 0 && at == src.len() && src[at - 1] != b'\n' {
        newline
    } else {
        ""
    };
    let present = present_headers(src, planned);
    let mut seen = std::collections::HashSet::new();
    wanted
        .into_iter()
        .filter(|h| {
            // The runtime header goes first even when the file includes it
            // later: HIP's cooperative-groups header needs it before.
            let first_anyway = runtime == RuntimeHeader::BeforeOthers && *h == main_header.spelled;
            seen.insert(header_base(h)) && (first_anyway || !present(h))
        })
        .map(|header| Edit {
            range: TextRange::new(at, at),
            replacement: if header.starts_with('"') {
                format!("{lead}#include {header}{newline}")
            } else {
                format!("{lead}#include <{header}>{newline}")
            },
            code: codes::HEADER_ADDED,
            cuda_name: "(implicit CUDA runtime header)".into(),
            kind: EditKind::Header,
        })
        .collect()
}

/// Whether a CUDA or C++ file (a header of `__device__` helpers included
/// by `.cu` files, as llm.c's dev/cuda/common.h) defines kernels or device
/// functions, or calls device intrinsics: what nvcc declared for it
/// implicitly.
fn has_device_code(language: Language, analysis: &FileAnalysis) -> bool {
    matches!(language, Language::Cuda | Language::Cpp)
        && analysis.sites.iter().any(|s| {
            matches!(
                s.kind,
                SiteKind::KernelDefinition | SiteKind::DeviceIntrinsic
            ) || (s.kind == SiteKind::Qualifier && s.name == "__device__")
        })
}

/// Whether a CUDA-language file needs the target's runtime header added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RuntimeHeader {
    NotWanted,
    /// Add it unless the file has it (`present_headers`).
    Missing,
    /// The file's first include is cooperative groups, or (dual-stack) a
    /// project header (nvcc put the runtime before it implicitly): add it
    /// first.
    BeforeOthers,
}

/// Whether a file names anything of the CUDA runtime or device API, which
/// its runtime header declares; a qualifier (`__device__`) counts only
/// `with_qualifiers` (where the header is added even without edits).
pub(crate) fn uses_runtime(analysis: &FileAnalysis, with_qualifiers: bool) -> bool {
    analysis.sites.iter().any(|s| {
        matches!(s.library, Library::Runtime | Library::Device)
            && (s.kind != SiteKind::Qualifier || with_qualifiers)
    })
}

/// `first_line` is where added includes go (`include_insertion_point`).
fn runtime_header_wanted(
    src: &[u8],
    first_line: usize,
    language: Language,
    analysis: &FileAnalysis,
    planned: &Planned,
    main_header: &MainHeader<'_>,
) -> RuntimeHeader {
    // Where kernels compile as they are, a file with only `__device__`
    // functions needs the header for its qualifiers (CMake's HIP language
    // compiles it with clang, which does not include it either).
    let uses_runtime = uses_runtime(analysis, main_header.placement.even_without_edits);
    let edited = !planned.edits.is_empty() || main_header.placement.even_without_edits;
    // A C++ file with kernels was compiled as CUDA (`nvcc -x cu`, CMake's
    // LANGUAGE CUDA): it relied on the implicit header as a `.cu` file does
    // (HIPIFY's samples/MallocManaged.cpp). So did a header a `.cu` file
    // includes (HeCBench local-ht's helper.hpp declares a function taking
    // `cudaError_t` and includes nothing CUDA; its expert port adds the
    // runtime header to it, since hipcc has no implicit one).
    let compiled_as_cuda = language == Language::Cuda
        || main_header.included_by_cuda_source
        || (language == Language::Cpp
            && analysis
                .sites
                .iter()
                .any(|s| matches!(s.kind, SiteKind::KernelDefinition | SiteKind::KernelLaunch)));
    if !compiled_as_cuda
        || !uses_runtime
        || !edited
        || main_header.already_ported
        || main_header.provided_by_project_header
    {
        return RuntimeHeader::NotWanted;
    }
    let first_include = analysis
        .sites
        .iter()
        .filter(|s| s.kind == SiteKind::Include)
        .min_by_key(|s| s.range.start);
    // Whether the file already has the runtime header is decided by its
    // target spelling (present, renamed to, or written by an edit; see
    // `present_headers`), as a rerun sees it: another CUDA include
    // (`cuda.h`, `cuda_fp16.h`) once taken as standing in for it left the
    // header to the rerun (fuzzing findings: `fuzz_regressions::
    // runtime_header_is_added_in_the_first_run_next_to_any_cuda_include`).
    // HIP's cooperative-groups header needs the runtime before it; nvcc
    // included the runtime first, so the port must too.
    let cuda_include_first = first_include.is_some_and(|site| {
        site.range.start >= first_line && !src[first_line..site.range.start].contains(&b'\n')
    });
    match first_include {
        Some(first)
            if first.library == Library::CooperativeGroups
                && main_header.placement.before_cooperative_groups =>
        {
            RuntimeHeader::BeforeOthers
        }
        _ if main_header.placement.before_project_headers && !cuda_include_first => {
            RuntimeHeader::BeforeOthers
        }
        _ => RuntimeHeader::Missing,
    }
}

/// The file name of a header as written (`<hip/hip_runtime.h>` → `hip_runtime.h`).
fn header_base(path: &str) -> String {
    path.trim_matches(['<', '>', '"'])
        .rsplit('/')
        .next()
        .unwrap_or("")
        .to_owned()
}

/// Whether a header is already there: an `#include` line names it, a
/// rewrite renamed an include into it (`cuda_runtime.h` → `hip/hip_runtime.h`),
/// or an edit writes the include itself (the dual-stack switch around a CUDA
/// include starts with the runtime header). Only `#include` lines count: a
/// comment naming the header does not. A block comment may come first on
/// the line (`/**/#include <x.h>`), as the analyser also reads it (a fuzzing
/// finding: `fuzz_regressions::include_after_a_block_comment_counts_as_present`).
fn present_headers<'a>(src: &'a [u8], planned: &'a Planned) -> impl Fn(&str) -> bool + 'a {
    let include_lines: Vec<String> = directive_candidates(src)
        .iter()
        .map(|line| after_leading_block_comments(line))
        .filter(|l| l.starts_with('#') && l[1..].trim_start().starts_with("include"))
        .map(str::to_owned)
        .collect();
    let renamed: Vec<String> = planned
        .edits
        .iter()
        .map(|e| e.replacement.as_str())
        .filter(|r| r.starts_with('<') || r.starts_with('"'))
        .map(header_base)
        .collect();
    let written = move |header: &str| {
        let line = if header.starts_with('"') {
            format!("#include {header}")
        } else {
            format!("#include <{header}>")
        };
        planned.edits.iter().any(|e| e.replacement.contains(&line))
    };
    move |header: &str| {
        let bare = header.trim_matches('"');
        include_lines.iter().any(|l| l.contains(bare))
            || renamed.contains(&header_base(header))
            || written(header)
    }
}

/// `line` from its first byte that is neither blank nor in a `/* */`
/// comment closed on the line.
fn after_leading_block_comments(line: &str) -> &str {
    let mut rest = line.trim_start();
    while let Some(comment) = rest.strip_prefix("/*") {
        match comment.find("*/") {
            Some(end) => rest = comment[end + 2..].trim_start(),
            None => break,
        }
    }
    rest
}

/// The lines (as `str::lines` splits them, without a byte-order mark) that
/// can hold a directive: their first byte after ASCII blanks is `#`, `/` (a
/// block comment may come first) or not ASCII (other white space). Only
/// those are decoded: the callers run over every line of every file.
fn directive_candidates(src: &[u8]) -> Vec<std::borrow::Cow<'_, str>> {
    let body = &src[bom_len(src)..];
    let body = body.strip_suffix(b"\n").unwrap_or(body);
    if body.is_empty() {
        return Vec::new();
    }
    // A comment line holds a directive only after a block comment that
    // closes on it: only where a `#` follows.
    lines_with_hash(body)
        .filter(|line| {
            let first = line.iter().find(|b| !b.is_ascii_whitespace());
            first.is_some_and(|&b| b == b'#' || b == b'/' || !b.is_ascii())
        })
        .map(|line| decode(line.strip_suffix(b"\r").unwrap_or(line)))
        .collect()
}

/// `line` as text, invalid bytes replaced. A directive line is nearly
/// always valid: checked whole first, which costs a tenth of decoding it
/// piece by piece (`from_utf8_lossy`) as the callers did for every one.
fn decode(line: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(line) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(line),
    }
}

/// The lines of `body` (split at each `\n`, as `split` would) that hold a
/// `#`, found by memchr for the `#`: the callers read every file for its
/// directives, and a search for each line's end was most of their time
/// (callgrind on cuda-samples: over a million searches).
fn lines_with_hash(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut past = 0;
    memchr::memchr_iter(b'#', body).filter_map(move |hash| {
        if hash < past {
            return None;
        }
        let start = memchr::memrchr(b'\n', &body[..hash]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &body[hash..]).map_or(body.len(), |i| hash + i);
        past = end + 1;
        Some(&body[start..end])
    })
}

/// `\r\n` for files whose first line ends that way, so inserted lines match.
pub(crate) fn line_ending(src: &[u8]) -> &'static str {
    match memchr::memchr(b'\n', src) {
        Some(i) if i > 0 && src[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// Before the first `#include` outside any `#if` block (an include guard
/// does not count), else right after the guard's `#define` or a `#pragma
/// once`, else at the top. An include inside `#ifdef _WIN32` would only be
/// seen on Windows; one above `#pragma once` is what a reviewer moves.
fn include_insertion_point(src: &[u8]) -> usize {
    let bom = bom_len(src);
    let lines = directive_lines(src, bom);
    let guard = include_guard(&lines);
    let top = usize::from(guard.is_some());
    let mut depth = 0usize;
    let mut code = CodeDepth::default();
    let mut pragma_once = None;
    for (offset, end, directive) in &lines {
        // A directive inside a call's parentheses (malformed code, or a
        // macro's arguments) is no place for a file-level include: the
        // call's rewrite would swallow it (a fuzzing finding:
        // `fuzz_regressions::headers_are_not_added_inside_a_rewritten_call`).
        let inside_call = code.advance(src, *offset) > 0;
        code.skip_to(*end);
        let word = directive.split_whitespace().next().unwrap_or("");
        match word {
            "if" | "ifdef" | "ifndef" => depth += 1,
            "endif" => depth = depth.saturating_sub(1),
            "include" if depth == top && !inside_call => return *offset,
            // A last line without its newline is no place to insert after.
            "pragma"
                if depth == 0
                    && pragma_once.is_none()
                    && is_pragma_once(directive)
                    && src.get(end.wrapping_sub(1)) == Some(&b'\n') =>
            {
                pragma_once = Some(*end);
            }
            _ => {}
        }
    }
    guard
        .or(pragma_once)
        .unwrap_or_else(|| after_leading_comments(src, bom))
}

/// An `#include` line of a file.
#[derive(Clone)]
pub(crate) struct IncludeLine {
    /// Where the `#include` line starts.
    pub(crate) offset: usize,
    /// The path between the quotes or angle brackets.
    pub(crate) path: String,
    /// Written with quotes (searched first next to the including file).
    pub(crate) quoted: bool,
    /// Outside every `#if` block (an include guard does not count): the
    /// file always includes it.
    pub(crate) top_level: bool,
}

/// The file's `#include` lines, in order.
pub(crate) fn include_lines(src: &[u8]) -> Vec<IncludeLine> {
    let lines = directive_lines(src, bom_len(src));
    let top = usize::from(include_guard(&lines).is_some());
    let mut depth = 0usize;
    let mut out = Vec::new();
    for (offset, _, directive) in &lines {
        match directive.split_whitespace().next().unwrap_or("") {
            "if" | "ifdef" | "ifndef" => depth += 1,
            "endif" => depth = depth.saturating_sub(1),
            "include" => {
                let rest = directive["include".len()..].trim_start();
                let (quoted, close) = match rest.chars().next() {
                    Some('"') => (true, '"'),
                    Some('<') => (false, '>'),
                    _ => continue,
                };
                if let Some(end) = rest[1..].find(close) {
                    out.push(IncludeLine {
                        offset: *offset,
                        path: rest[1..=end].to_owned(),
                        quoted,
                        top_level: depth == top,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// `pragma once` (the text after `#`), comments after it aside.
fn is_pragma_once(directive: &str) -> bool {
    let mut words = directive.split_whitespace();
    words.next() == Some("pragma") && words.next() == Some("once")
}

/// The start of the first line after the file's opening comment block
/// (licence headers, file descriptions). A `//` comment ending in a
/// backslash goes on over the next line: an include written there would be
/// commented out (a fuzzing finding:
/// `fuzz_regressions::header_is_not_added_inside_a_continued_comment`).
fn after_leading_comments(src: &[u8], from: usize) -> usize {
    let mut offset = from;
    // Where the line that opened the block comment still open starts.
    let mut block_opened: Option<usize> = None;
    let mut continued = false;
    for line in src[from..].split_inclusive(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let trimmed = text.trim();
        let mut opens_block = false;
        let after_open_block = match block_opened {
            None => Some(trimmed).filter(|t| !t.is_empty()),
            Some(_) => trimmed.find("*/").map(|close| &trimmed[close + 2..]),
        };
        if !continued {
            let Some(rest) = after_open_block else {
                // A blank line ends the opening comments; a line inside
                // the open block comment is one of them.
                if block_opened.is_none() {
                    return offset;
                }
                offset += line.len();
                continue;
            };
            if !only_comments(rest, &mut opens_block) {
                // Code after a block comment's close: the line starts
                // inside the comment, so the include goes before it.
                return block_opened.unwrap_or(offset);
            }
            block_opened = opens_block.then_some(offset);
        }
        continued = block_opened.is_none() && trimmed.ends_with('\\');
        offset += line.len();
    }
    offset
}

/// Whether `text` (a line, or what follows a comment's close on it) holds
/// comments only; sets `in_block` when a block comment it opens goes on
/// past it. `/**/ code` is code: an include put after that line would land
/// inside the code (a fuzz finding:
/// `fuzz_regressions::no_header_after_a_line_of_code_that_starts_with_a_comment`).
fn only_comments(text: &str, in_block: &mut bool) -> bool {
    let mut rest = text.trim_start();
    loop {
        if rest.is_empty() || rest.starts_with("//") {
            return true;
        }
        let Some(inside) = rest.strip_prefix("/*") else {
            return false;
        };
        match inside.find("*/") {
            None => {
                *in_block = true;
                return true;
            }
            Some(close) => rest = inside[close + 2..].trim_start(),
        }
    }
}

/// `(line start, line end, directive text after '#')` for each
/// preprocessor line; the end is the logical line's (backslash-continued
/// lines included), the text the first line's.
///
/// Runs over every file, twice (the include scan of the whole tree, then
/// each file's header edits), so it looks only at the lines a `#` is on:
/// one whose `#` comes after nothing but white space and whose line before
/// does not end in a backslash (a line spliced onto the one before starts
/// no directive: a fuzzing finding,
/// `fuzz_regressions::no_header_after_a_line_continued_by_a_backslash`).
fn directive_lines(src: &[u8], from: usize) -> Vec<(usize, usize, String)> {
    let mut out: Vec<(usize, usize, String)> = Vec::new();
    let mut past = from;
    for hash in memchr::memchr_iter(b'#', &src[from..]).map(|i| from + i) {
        if hash < past {
            continue;
        }
        let start = src[from..hash]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(from, |i| from + i + 1);
        let indented = src[start..hash].iter().all(u8::is_ascii_whitespace);
        if !indented || (start > from && line_continues(&src[from..start])) {
            continue;
        }
        let first_end = line_end(src, hash);
        let text = decode(&src[hash + 1..first_end]);
        // The directive goes on over every line its lines continue onto:
        // it ends where its logical line does, and nothing may be inserted
        // before that (a fuzzing finding:
        // `fuzz_regressions::no_header_inside_a_continued_pragma_once`).
        let mut end = first_end;
        while end < src.len() && line_continues(&src[from..end]) {
            end = line_end(src, end);
        }
        out.push((start, end, text.trim().to_owned()));
        past = end;
    }
    out
}

/// The offset after the line `at` is on (after its `\n`, or the end).
fn line_end(src: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &src[at..]).map_or(src.len(), |i| at + i + 1)
}

/// Whether the last line of `text` (which ends where a line starts) ends
/// in a backslash, its line end (`\n`, `\r\n`) aside: the next line
/// continues it.
pub(crate) fn line_continues(text: &[u8]) -> bool {
    let mut body = text.strip_suffix(b"\n").unwrap_or(text);
    while let [rest @ .., b'\r'] = body {
        body = rest;
    }
    body.ends_with(b"\\")
}

/// The parenthesis depth of the code between directive lines, read up to
/// each directive (comments and literals skipped).
#[derive(Default)]
struct CodeDepth {
    at: usize,
    depth: i64,
}

impl CodeDepth {
    /// The depth at `to`, reading the code from where the last call ended.
    fn advance(&mut self, src: &[u8], to: usize) -> i64 {
        let mut i = self.at;
        while i < to {
            match src[i] {
                b'/' if src.get(i + 1) == Some(&b'/') => {
                    i = memchr::memchr(b'\n', &src[i..to]).map_or(to, |n| i + n);
                }
                b'/' if src.get(i + 1) == Some(&b'*') => {
                    i = memchr::memmem::find(&src[i + 2..to], b"*/").map_or(to, |n| i + n + 4);
                }
                quote @ (b'"' | b'\'') => {
                    i += 1;
                    while i < to && src[i] != quote && src[i] != b'\n' {
                        i += if src[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                b'(' => {
                    self.depth += 1;
                    i += 1;
                }
                b')' => {
                    self.depth -= 1;
                    i += 1;
                }
                _ => i += 1,
            }
        }
        self.at = to.max(self.at);
        self.depth
    }

    /// Skips a directive line: its text is not code.
    fn skip_to(&mut self, end: usize) {
        self.at = end.max(self.at);
    }
}

/// The end of an include guard's `#define` line (`#ifndef X` followed by
/// `#define X` as the first two directives), where includes may go.
fn include_guard(lines: &[(usize, usize, String)]) -> Option<usize> {
    let [(_, _, first), (_, define_end, second), ..] = lines else {
        return None;
    };
    // `#ifndefX` is no directive `ifndef` (a fuzzing finding:
    // `fuzz_regressions::guard_directives_need_their_space`).
    let name = first.strip_prefix("ifndef")?;
    let defined = second.strip_prefix("define")?;
    if !name.starts_with([' ', '\t']) || !defined.starts_with([' ', '\t']) {
        return None;
    }
    let (name, defined) = (name.trim(), defined.trim());
    (!name.is_empty() && defined == name).then_some(*define_end)
}

const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// The length of the UTF-8 byte-order mark `src` starts with (0 without one).
fn bom_len(src: &[u8]) -> usize {
    if src.starts_with(UTF8_BOM) {
        UTF8_BOM.len()
    } else {
        0
    }
}

/// `import torch_npu` right after the first `import torch` line.
fn python_import_edits(src: &[u8], planned: &Planned) -> Vec<Edit> {
    let mut imports = planned.imports.clone();
    imports.sort();
    imports.dedup();
    // A byte-order mark stays the file's first bytes (Python accepts it
    // nowhere else).
    let bom = bom_len(src);
    let text = String::from_utf8_lossy(src);
    let mut offset = bom;
    let mut after_torch = None;
    for line in text[bom..].split_inclusive('\n') {
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
    let at = after_torch.unwrap_or_else(|| bom + crate::pysource::import_point(&src[bom..]));
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
            code: codes::IMPORT_ADDED,
            cuda_name: "import torch".into(),
            kind: EditKind::Import,
        })
        .collect()
}

/// Where the logical line that `text` is the rest of ends: at the first
/// line break that no backslash continues.
pub(crate) fn logical_line_end(text: &[u8]) -> usize {
    let mut from = 0;
    while let Some(k) = memchr::memchr(b'\n', &text[from..]).map(|k| from + k) {
        let line = &text[..k];
        if !line.strip_suffix(b"\r").unwrap_or(line).ends_with(b"\\") {
            return k;
        }
        from = k + 1;
    }
    text.len()
}

/// The first physical line of the logical line holding `line`: a comment
/// inside a backslash-continued line (a multi-line `#define`) would end it.
pub(crate) fn logical_line_start(src: &[u8], lines: &LineIndex, mut line: usize) -> usize {
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
pub(crate) fn annotation_edits(
    src: &[u8],
    lines: &LineIndex,
    language: Language,
    diagnostics: &[Diagnostic],
    planned: &[Edit],
) -> Vec<Edit> {
    let prefix = match language {
        Language::Cuda | Language::Cpp | Language::Rust => "//",
        _ => "#",
    };
    let mut edits: Vec<Edit> = Vec::new();
    for diagnostic in diagnostics.iter().filter(|d| d.level >= Level::Approximate) {
        let line = note_line(src, lines, diagnostic.range.start, planned);
        let Some(range) = lines.line_range(line) else {
            continue;
        };
        // A note above the first line goes after the file's byte-order
        // mark, which must stay the file's first bytes (a fuzz finding: the
        // include added after the mark was then not seen by a rerun).
        let start = if range.start == 0 {
            bom_len(src)
        } else {
            range.start
        };
        let marker = format!("CUPORT {}: ", diagnostic.code);
        let note = format!("{prefix} {marker}{}", diagnostic.message.replace('\n', " "));
        let already = notes_above(src, lines, line).any(|n| contains(n, &marker))
            || noted_nearby(src, lines, line, &marker, &diagnostic.cuda_name);
        // One note per code and name on a line: a later copy of the same
        // name (an argument a template writes twice, over several lines)
        // must find its note, or a rerun adds one (a fuzzing finding:
        // `fuzz_regressions::each_name_of_a_line_gets_its_note`).
        let duplicate = edits.iter().any(|e| {
            e.range.start == start
                && e.replacement.contains(&marker)
                && e.cuda_name == diagnostic.cuda_name
        });
        if already || duplicate {
            continue;
        }
        let indent: String = src[start..range.end.max(start)]
            .iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .map(|&b| b as char)
            .collect();
        edits.push(Edit {
            range: TextRange::new(start, start),
            replacement: format!("{indent}{note}{}", line_ending(src)),
            code: diagnostic.code,
            cuda_name: diagnostic.cuda_name.clone(),
            kind: EditKind::Annotation,
        });
    }
    edits
}

/// The paths the file's `#include` lines name (`<a/b.h>` → `a/b.h`).
pub(crate) fn included_paths(src: &[u8]) -> Vec<String> {
    // The lines of `directive_candidates` that can hold a directive: a
    // line whose first byte is `/` cannot (every file has many comments).
    let body = &src[bom_len(src)..];
    let body = body.strip_suffix(b"\n").unwrap_or(body);
    lines_with_hash(body)
        .filter(|line| {
            let first = line.iter().find(|b| !b.is_ascii_whitespace());
            first.is_some_and(|&b| b == b'#' || !b.is_ascii())
        })
        .map(|line| decode(line.strip_suffix(b"\r").unwrap_or(line)))
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("include")?.trim_start();
            let close = match rest.chars().next()? {
                '<' => '>',
                '"' => '"',
                _ => return None,
            };
            let inner = &rest[1..];
            inner.find(close).map(|end| inner[..end].to_owned())
        })
        .collect()
}

/// The line a note about the text at `at` goes above: the first line of
/// its logical line, or of the planned edit that spans that line's start
/// (a call rewritten as a whole from the line above): a note inside that
/// edit would overlap it and be dropped as a conflict (a fuzzing finding:
/// `fuzz_regressions::note_on_a_continuation_line_of_a_rewritten_call`).
fn note_line(src: &[u8], lines: &LineIndex, at: usize, planned: &[Edit]) -> usize {
    let mut line = logical_line_start(src, lines, lines.line_of(at));
    while let Some(start) = lines.line_range(line).map(|r| r.start) {
        let Some(spanning) = planned
            .iter()
            .find(|e| e.range.start < start && start < e.range.end)
        else {
            break;
        };
        line = logical_line_start(src, lines, lines.line_of(spanning.range.start));
    }
    line
}

/// The `CUPORT` notes directly above `line`, nearest first. A line with
/// several diagnostics gets one note per code, stacked, so a rerun must
/// look at the whole stack, not only the line above (a fuzzing finding:
/// `fuzz_regressions::annotations_of_one_line_are_not_added_again`).
fn notes_above<'s>(
    src: &'s [u8],
    lines: &'s LineIndex,
    line: usize,
) -> impl Iterator<Item = &'s [u8]> {
    (0..line)
        .rev()
        .map_while(move |l| lines.line_range(l).map(|r| &src[r.start..r.end]))
        .take_while(|text| is_annotation(text))
}

/// How far above its line a note may end up. cuport's own rewrites can put
/// lines between a note and the line it is about: the note goes above the
/// line as the first run reads it, and a dual-stack include switch (two
/// lines per target around the original `#include`) or a CMake rewrite
/// that writes two commands for one moves the noted text down.
const NOTE_REACH: usize = 16;

/// Whether a note with `marker` (the code) about `cuda_name` is one of the
/// lines up to [`NOTE_REACH`] above `line`: the rerun of a line that
/// cuport's first run moved below its note (fuzzing findings:
/// `fuzz_regressions::note_above_a_rewrite_that_adds_lines_is_not_repeated`).
/// The first run writes one note per code and line, so the name, not the
/// whole message, identifies it (dual-stack messages differ per target).
fn noted_nearby(src: &[u8], lines: &LineIndex, line: usize, marker: &str, cuda_name: &str) -> bool {
    let name = format!("`{cuda_name}`");
    (line.saturating_sub(NOTE_REACH)..line)
        .filter_map(|l| lines.line_range(l))
        .map(|r| &src[r.start..r.end])
        .any(|text| is_annotation(text) && contains(text, marker) && contains(text, &name))
}

/// Whether `line` is one of `--annotate`'s notes (`// CUPORT CP0010: ...`,
/// or `# CUPORT ...` in Python and CMake).
pub(crate) fn is_annotation(line: &[u8]) -> bool {
    // The first line's note follows the byte-order mark.
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    let line = line.trim_ascii_start();
    line.starts_with(b"// CUPORT ") || line.starts_with(b"# CUPORT ")
}

fn contains(text: &[u8], needle: &str) -> bool {
    memchr::memmem::find(text, needle.as_bytes()).is_some()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{directive_lines, lines_with_hash};

    /// The reading `directive_lines` must agree with: every line in turn,
    /// a directive where a line's first non-blank byte is `#` and the line
    /// before does not end in a backslash; a directive's end moves over
    /// each line its lines continue onto.
    fn line_by_line(src: &[u8], from: usize) -> Vec<(usize, usize, String)> {
        let mut out: Vec<(usize, usize, String)> = Vec::new();
        let (mut continued, mut in_directive, mut offset) = (false, false, from);
        for line in src[from..].split_inclusive(|&b| b == b'\n') {
            let end = offset + line.len();
            let indent = line.iter().take_while(|b| b.is_ascii_whitespace()).count();
            if !continued {
                in_directive = line.get(indent) == Some(&b'#');
                if in_directive {
                    let text = String::from_utf8_lossy(&line[indent + 1..]);
                    out.push((offset, end, text.trim().to_owned()));
                }
            } else if let Some(last) = out.last_mut().filter(|_| in_directive) {
                last.1 = end;
            }
            let mut body = line;
            while let [rest @ .., b'\n' | b'\r'] = body {
                body = rest;
            }
            continued = body.ends_with(b"\\");
            offset = end;
        }
        out
    }

    proptest! {
        #[test]
        fn directive_lines_agree_with_a_line_by_line_reading(
            bytes in proptest::collection::vec(
                prop::sample::select(&b"#\\\n\r \t\x0cai\"/"[..]), 0..80),
            from in 0usize..3,
        ) {
            let from = from.min(bytes.len());
            prop_assert_eq!(directive_lines(&bytes, from), line_by_line(&bytes, from));
        }

        #[test]
        fn lines_with_hash_are_the_split_lines_that_hold_one(
            bytes in proptest::collection::vec(prop::sample::select(&b"\n\ra#"[..]), 0..30),
        ) {
            let ours: Vec<&[u8]> = lines_with_hash(&bytes).collect();
            let split: Vec<&[u8]> = bytes
                .split(|&b| b == b'\n')
                .filter(|line| line.contains(&b'#'))
                .collect();
            prop_assert_eq!(ours, split);
        }
    }

    #[test]
    fn directive_lines_at_a_glance() {
        let src = b"#include <a.h>\nx = 1; // #not\n  #  define M \\\n  (2) \\\r\n  + 3\n#\\\n#pragma once";
        let lines = directive_lines(src, 0);
        let got: Vec<(&[u8], &str)> = lines
            .iter()
            .map(|(start, end, text)| (&src[*start..*end], text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (&b"#include <a.h>\n"[..], "include <a.h>"),
                (&b"  #  define M \\\n  (2) \\\r\n  + 3\n"[..], "define M \\"),
                (&b"#\\\n#pragma once"[..], "\\"),
            ]
        );
    }
}
