//! A variable whose CUDA type the port changes (`cudnnHandle_t
//! cudnn_handle` becomes a `cuport_dnn_handle_t` on Ascend, a
//! `miopenHandle_t` on HIP), passed to a member call cuport leaves alone
//! (`graph->execute(cudnn_handle, ...)` of cudnn_frontend) in a file that
//! uses a CUDA C++ library cuport cannot port (a name in one of the
//! library's namespaces, `mappings/libraries.toml`, left for a person):
//! that library's members still expect the CUDA type. The call compiles or
//! fails far from the cause, so each one gets a diagnostic at the call
//! (llm.c's `cudnn_att.cpp`). Other files are left alone: there the member
//! calls are the project's own or the standard library's
//! (`events.push_back(event)`), retyped with the variable (cuda-samples had
//! 15 of those).
use cuport_analyze::FileAnalysis;
use cuport_model::{LineIndex, SiteKind, TextRange};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::plan::{unmatched, whole_argument, Planned};

/// Adds one diagnostic per member call that receives a retyped variable.
pub(crate) fn report_retyped_arguments(
    src: &[u8],
    lines: &LineIndex,
    analysis: &FileAnalysis,
    planned: &mut Planned,
) {
    let Some(namespace) = unported_namespace(planned) else {
        return;
    };
    let mut found = Vec::new();
    for site in analysis.sites.iter().filter(|s| s.kind == SiteKind::Type) {
        let renamed = planned.renamed_to(site.range);
        let Some(new_type) = renamed.filter(|to| !to.is_empty() && *to != site.name) else {
            continue;
        };
        let Some(variable) = declared_variable(src, site.range.end) else {
            continue;
        };
        for (callee, range) in member_calls_receiving(src, variable, analysis, planned) {
            if found.iter().any(|(r, _): &(TextRange, _)| *r == range) {
                continue;
            }
            let message = format!(
                "`{variable}` is now a `{new_type}` (it was a `{}`) and is passed to `{callee}`, which cuport does not port; if it belongs to `{namespace}` (no counterpart here) it still expects the CUDA type: port the call with that library's code",
                site.name
            );
            found.push((range, (message, site.library, site.name.clone())));
        }
    }
    for (range, (message, library, type_name)) in found {
        let at = lines.line_col(range.start);
        planned.diagnostics.push(Diagnostic {
            code: codes::RETYPED_ARGUMENT.into(),
            level: Level::Manual,
            effort: Some("low".into()),
            message,
            line: at.line,
            column: at.column,
            range,
            cuda_name: type_name,
            library,
            kind: SiteKind::Type,
            suggestion: None,
            reference: None,
        });
    }
}

/// A CUDA C++ library namespace with a name the port leaves for a person.
fn unported_namespace(planned: &Planned) -> Option<String> {
    planned
        .diagnostics
        .iter()
        .filter(|d| d.level.is_unported())
        .find_map(|d| {
            let (head, _) = d.cuda_name.split_once("::")?;
            let library = d.library.profile();
            let host = !library.device_only;
            (host && library.namespaces.iter().any(|n| n == head)).then(|| head.to_owned())
        })
}

/// `cudnnHandle_t cudnn_handle;`: the name a declaration right after the
/// type declares (`*`, `&` and `const` between them are skipped).
pub(crate) fn declared_variable(src: &[u8], after_type: usize) -> Option<&str> {
    let mut at = after_type;
    loop {
        while src
            .get(at)
            .is_some_and(|b| b.is_ascii_whitespace() || *b == b'*' || *b == b'&')
        {
            at += 1;
        }
        let word = word_at(src, at)?;
        if word != "const" {
            let end = at + word.len();
            let rest = src[end..].iter().find(|b| !b.is_ascii_whitespace());
            return rest.is_some_and(|b| b";=,)[{".contains(b)).then_some(word);
        }
        at += word.len();
    }
}

/// Every name one declaration declares: `cudaDeviceProp prop, props[2];`.
pub(crate) fn declared_variables(src: &[u8], after_type: usize) -> Vec<&str> {
    let mut names = Vec::new();
    let mut at = after_type;
    while let Some(name) = declared_variable(src, at) {
        names.push(name);
        let name_end = name.as_ptr() as usize - src.as_ptr() as usize + name.len();
        match next_declarator(src, name_end) {
            Some(comma) => at = comma + 1,
            None => break,
        }
    }
    names
}

/// The `,` that starts the next declarator of the declaration (brackets
/// and initialisers skipped); `None` at its `;` or at a block.
fn next_declarator(src: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, b) in src.iter().enumerate().skip(from) {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' if depth == 0 => return None,
            b')' | b']' => depth -= 1,
            b',' if depth == 0 => return Some(k),
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

pub(crate) fn is_word(b: &u8) -> bool {
    b.is_ascii_alphanumeric() || *b == b'_'
}

fn word_at(src: &[u8], at: usize) -> Option<&str> {
    src.get(at)
        .filter(|b| b.is_ascii_alphabetic() || **b == b'_')?;
    let len = src[at..].iter().take_while(|b| is_word(b)).count();
    std::str::from_utf8(&src[at..at + len]).ok()
}

/// Every `obj->member(... variable ...)` / `obj.member(...)` call that has
/// `variable` as a whole argument and that no site or edit touches: the
/// callee's text and its range.
fn member_calls_receiving(
    src: &[u8],
    variable: &str,
    analysis: &FileAnalysis,
    planned: &Planned,
) -> Vec<(String, TextRange)> {
    let mut calls = Vec::new();
    for at in memchr::memmem::find_iter(src, variable.as_bytes()) {
        let end = at + variable.len();
        let before = at.checked_sub(1).and_then(|i| src.get(i));
        if before.is_some_and(is_word) || src.get(end).is_some_and(is_word) {
            continue;
        }
        if !whole_argument(src, at, end) || in_line_comment(src, at) {
            continue;
        }
        let Some(open) = unmatched((0..at).rev().map(|k| (k, src[k])), b')', b'(') else {
            continue;
        };
        let Some((callee, range)) = member_callee(src, open) else {
            continue;
        };
        let touched = analysis
            .sites
            .iter()
            .any(|s| s.range.start < range.end && range.start < s.range.end)
            || planned
                .edits
                .iter()
                .any(|e| e.range.start < range.end && range.start < e.range.end);
        if !touched {
            calls.push((callee, range));
        }
    }
    calls
}

pub(crate) fn in_line_comment(src: &[u8], at: usize) -> bool {
    let line_start = src[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    memchr::memmem::find(&src[line_start..at], b"//").is_some()
}

/// `graph->execute` right before the `(` at `open`: the callee when it is
/// a member access.
fn member_callee(src: &[u8], open: usize) -> Option<(String, TextRange)> {
    let end = src[..open].iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
    let member_start = end - src[..end].iter().rev().take_while(|b| is_word(b)).count();
    if member_start == end {
        return None;
    }
    let before = &src[..member_start];
    let access = if before.ends_with(b"->") {
        2
    } else if before.ends_with(b".") {
        1
    } else {
        return None;
    };
    let object_end = member_start - access;
    let object_start = object_end
        - src[..object_end]
            .iter()
            .rev()
            .take_while(|b| is_word(b))
            .count();
    if object_start == object_end {
        return None;
    }
    let text = std::str::from_utf8(&src[object_start..end]).ok()?;
    Some((text.to_owned(), TextRange::new(object_start, end)))
}
