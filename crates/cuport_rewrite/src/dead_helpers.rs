//! Code that only the kernels replaced by operator calls needed:
//! `__device__` functions only they called (llm.c's `lerp`, `vec_at`,
//! `prepare_softmax_blockwide_nofloat4`), and `dim3` variables only their
//! launches' configurations read (llm.c's `matmul_forward`). Once the
//! kernels are operator calls nothing uses them, and a port that kept them
//! would hold code the target cannot compile, reported as manual work,
//! which a reviewer would delete. They go with the kernels.
//!
//! Conservative on purpose: only in a source file (a header's function may
//! serve other files), only plain `__device__` functions (not `__host__`
//! ones, not templates), and only those that were called and are now called
//! from nowhere but replaced kernels and other such functions.
use std::collections::HashMap;

use cuport_analyze::Site;
use cuport_model::{Library, SiteKind, TextRange};

use crate::source_text::{closing_bracket, code_words};

/// Code that goes with the replaced kernels: the name it declares, what
/// it is, and its text from the start of its line (a function: to its
/// closing brace; a declaration: through its line's end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeadHelper<'s> {
    pub(crate) name: &'s str,
    pub(crate) kind: DeadKind,
    pub(crate) span: TextRange,
    /// Lines that go with it and hold no site of their own (a
    /// `namespace cg = cooperative_groups;` with the include).
    pub(crate) also: Vec<TextRange>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeadKind {
    DeviceFunction,
    LaunchConfig,
    /// An include of cooperative groups, when only replaced kernels and
    /// functions that went with them used the library.
    Include,
}

impl DeadHelper<'_> {
    /// Why it is gone, for its note.
    pub(crate) fn message(&self) -> String {
        match self.kind {
            DeadKind::DeviceFunction => format!(
                "`__device__` function `{}` is gone: only kernels that [[kernel]] rules replace with operator calls called it",
                self.name
            ),
            DeadKind::LaunchConfig => format!(
                "`dim3 {}` is gone: only the configuration of a launch that became an operator call read it",
                self.name
            ),
            DeadKind::Include => format!(
                "`#include {}` is gone, with any namespace alias of cooperative groups: only kernels that [[kernel]] rules replace with operator calls used the library",
                self.name
            ),
        }
    }

    /// What takes its place: a line that says where a function went;
    /// nothing for a declaration.
    pub(crate) fn replacement(&self) -> String {
        match self.kind {
            DeadKind::DeviceFunction => format!("// cuport: {}.", self.message()),
            DeadKind::LaunchConfig | DeadKind::Include => String::new(),
        }
    }
}

/// The includes of cooperative groups (and the file's aliases of its
/// namespace) when every other use of the library lies in `gone` (kernels
/// replaced by operator calls, code that went with them).
pub(crate) fn dead_cooperative_groups<'s>(
    src: &'s [u8],
    sites: &[Site],
    gone: &[TextRange],
) -> Vec<DeadHelper<'s>> {
    let library = |s: &&Site| s.library == Library::CooperativeGroups;
    let still_used = sites
        .iter()
        .filter(library)
        .any(|s| s.kind != SiteKind::Include && !gone.iter().any(|r| contains(*r, s.range.start)));
    if still_used {
        return Vec::new();
    }
    let aliases = alias_lines(src);
    let mut dead: Vec<DeadHelper<'s>> = sites
        .iter()
        .filter(library)
        .filter(|s| s.kind == SiteKind::Include)
        .filter_map(|s| {
            let line = whole_line(src, s.range)?;
            let name = std::str::from_utf8(&src[s.range.start..s.range.end]).ok()?;
            Some(DeadHelper {
                name,
                kind: DeadKind::Include,
                span: line,
                also: Vec::new(),
            })
        })
        .collect();
    if let Some(first) = dead.first_mut() {
        first.also = aliases;
    }
    dead
}

/// The lines `namespace NAME = cooperative_groups;` of `src`.
fn alias_lines(src: &[u8]) -> Vec<TextRange> {
    let mut lines = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', src).chain(std::iter::once(src.len())) {
        let line = String::from_utf8_lossy(&src[start..end]);
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == '=' || c == ';')
            .filter(|w| !w.is_empty())
            .collect();
        let is_alias = words.len() == 3
            && words[0] == "namespace"
            && words[2] == "cooperative_groups"
            && line.trim_end().ends_with(';');
        if is_alias {
            lines.push(TextRange::new(start, (end + 1).min(src.len())));
        }
        start = end + 1;
    }
    lines
}

/// The line holding `range`, with its line break, when nothing else is on
/// it (an include directive).
fn whole_line(src: &[u8], range: TextRange) -> Option<TextRange> {
    let start = src[..range.start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |n| n + 1);
    let end = src[range.end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |n| range.end + n + 1);
    let text = String::from_utf8_lossy(&src[start..end]);
    text.trim_start()
        .starts_with('#')
        .then(|| TextRange::new(start, end))
}

/// The `dim3` declarations that only `configs` (the grid and block of
/// launches that become operator calls) read: `dim3 grid(...);` right
/// before a launch `k<<<grid, block>>>`.
pub(crate) fn dead_launch_configs<'s>(src: &'s [u8], configs: &[TextRange]) -> Vec<DeadHelper<'s>> {
    let mut dead: Vec<DeadHelper<'s>> = Vec::new();
    for config in configs {
        let Some(name) = std::str::from_utf8(&src[config.start..config.end])
            .ok()
            .map(str::trim)
            .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        else {
            continue;
        };
        let Some(declaration) = dim3_declaration(src, config.start, name) else {
            continue;
        };
        let block_end = enclosing_block_end(src, declaration.end).unwrap_or(src.len());
        let read_elsewhere = code_words(src, declaration.end, block_end)
            .iter()
            .any(|&(at, w)| w == name && !configs.iter().any(|c| contains(*c, at)));
        if !read_elsewhere && !dead.iter().any(|d| d.span == declaration) {
            dead.push(DeadHelper {
                name,
                kind: DeadKind::LaunchConfig,
                span: declaration,
                also: Vec::new(),
            });
        }
    }
    dead
}

/// The whole line(s) of the last `dim3 name ...;` before `before`, when
/// the declaration is alone on its line.
fn dim3_declaration(src: &[u8], before: usize, name: &str) -> Option<TextRange> {
    let words = code_words(src, 0, before);
    let index = words.iter().rposition(|&(_, w)| w == name)?;
    let (dim3_at, dim3) = *words.get(index.checked_sub(1)?)?;
    let name_at = words[index].0;
    if dim3 != "dim3"
        || !src[dim3_at + 4..name_at]
            .iter()
            .all(u8::is_ascii_whitespace)
    {
        return None;
    }
    let line_start = src[..dim3_at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |n| n + 1);
    if !src[line_start..dim3_at].iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let semicolon = statement_end(src, name_at + name.len())?;
    let line_end = src[semicolon + 1..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |n| semicolon + 1 + n + 1);
    let rest = &src[semicolon + 1..line_end];
    rest.iter()
        .all(u8::is_ascii_whitespace)
        .then(|| TextRange::new(line_start, line_end))
}

/// The `;` that ends the statement going on at `from`, at bracket depth 0.
fn statement_end(src: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in src.iter().enumerate().skip(from) {
        match b {
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => depth = depth.checked_sub(1)?,
            b';' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// Where the block holding `at` closes (its `}`).
fn enclosing_block_end(src: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in src.iter().enumerate().skip(at) {
        match b {
            b'{' => depth += 1,
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The `__device__` functions of `src` that only code in `replaced` (the
/// spans of kernels replaced by operator calls) calls, directly or through
/// other such functions.
pub(crate) fn dead_helpers<'s>(
    src: &'s [u8],
    sites: &[Site],
    replaced: &[TextRange],
) -> Vec<DeadHelper<'s>> {
    let candidates: Vec<DeadHelper<'s>> = sites
        .iter()
        .filter(|s| s.kind == SiteKind::Qualifier && s.name == "__device__")
        .filter(|s| !replaced.iter().any(|r| contains(*r, s.range.start)))
        .filter_map(|s| device_function(src, s.range))
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let mut uses: HashMap<&str, Vec<usize>> =
        candidates.iter().map(|c| (c.name, Vec::new())).collect();
    for (at, word) in code_words(src, 0, src.len()) {
        if let Some(list) = uses.get_mut(word) {
            list.push(at);
        }
    }
    let mut dead: Vec<DeadHelper<'s>> = Vec::new();
    loop {
        let gone: Vec<TextRange> = replaced
            .iter()
            .copied()
            .chain(dead.iter().map(|d| d.span))
            .collect();
        let newly: Vec<DeadHelper<'s>> = candidates
            .iter()
            .filter(|c| !dead.contains(c))
            .filter(|c| {
                // Overloads share a name, so they go together or not at all.
                let overloads: Vec<TextRange> = candidates
                    .iter()
                    .filter(|o| o.name == c.name)
                    .map(|o| o.span)
                    .collect();
                let calls: Vec<usize> = uses[c.name]
                    .iter()
                    .copied()
                    .filter(|&at| !overloads.iter().any(|r| contains(*r, at)))
                    .collect();
                !calls.is_empty()
                    && calls
                        .iter()
                        .all(|&at| gone.iter().any(|r| contains(*r, at)))
            })
            .cloned()
            .collect();
        if newly.is_empty() {
            return dead;
        }
        dead.extend(newly);
    }
}

fn contains(range: TextRange, at: usize) -> bool {
    range.start <= at && at < range.end
}

/// The function whose `__device__` qualifier is at `qualifier`, if it is a
/// plain definition: only specifiers before the qualifier on its line, no
/// template header above it, no `__host__`, a name, a parameter list and a
/// body.
fn device_function(src: &[u8], qualifier: TextRange) -> Option<DeadHelper<'_>> {
    let line_start = src[..qualifier.start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |n| n + 1);
    let before = std::str::from_utf8(&src[line_start..qualifier.start]).ok()?;
    const SPECIFIERS: [&str; 5] = [
        "static",
        "inline",
        "__forceinline__",
        "__inline__",
        "__noinline__",
    ];
    if !before.split_whitespace().all(|w| SPECIFIERS.contains(&w))
        || after_template_header(src, line_start)
    {
        return None;
    }
    let open = qualifier.end
        + src[qualifier.end..]
            .iter()
            .position(|&b| matches!(b, b'(' | b';' | b'{' | b'='))?;
    if src[open] != b'(' {
        return None;
    }
    let head = std::str::from_utf8(&src[qualifier.end..open]).ok()?;
    if head
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == "__host__")
    {
        return None;
    }
    let name_end = qualifier.end + head.trim_end().len();
    let name_start = src[..name_end]
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .map_or(0, |n| n + 1);
    let name = std::str::from_utf8(&src[name_start..name_end]).ok()?;
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let close = closing_bracket(src, open, b'(', b')')?;
    let body = close
        + 1
        + src[close + 1..]
            .iter()
            .position(|b| !b.is_ascii_whitespace())?;
    if src[body] != b'{' {
        return None;
    }
    let end = closing_bracket(src, body, b'{', b'}')? + 1;
    Some(DeadHelper {
        name,
        kind: DeadKind::DeviceFunction,
        span: TextRange::new(line_start, end),
        also: Vec::new(),
    })
}

/// Whether the last non-blank line before `line_start` ends a template
/// header (`template <typename T>`).
fn after_template_header(src: &[u8], line_start: usize) -> bool {
    let above = std::str::from_utf8(&src[..line_start]).unwrap_or_default();
    above
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim_start().starts_with("template"))
}
