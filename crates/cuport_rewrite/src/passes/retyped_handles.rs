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
use cuport_model::{SiteKind, TextRange};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::plan::{unmatched, FileInput, Planned};
use crate::source_text::{
    declared_variable, in_line_comment, is_word, trim_end, whole_argument, word_start,
};
use cuport_model::Effort;

/// Adds one diagnostic per member call that receives a retyped variable.
pub(super) fn report_retyped_arguments(input: &FileInput<'_>, planned: &mut Planned) {
    let (src, lines, analysis) = (input.src, input.lines, input.analysis);
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
            code: codes::RETYPED_ARGUMENT,
            level: Level::Manual,
            effort: Some(Effort::Low),
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
            || planned.overlaps_an_edit(range);
        if !touched {
            calls.push((callee, range));
        }
    }
    calls
}

/// `graph->execute` right before the `(` at `open`: the callee when it is
/// a member access.
fn member_callee(src: &[u8], open: usize) -> Option<(String, TextRange)> {
    let end = trim_end(src, open);
    let member_start = word_start(src, end);
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
    let object_start = word_start(src, object_end);
    if object_start == object_end {
        return None;
    }
    let text = std::str::from_utf8(&src[object_start..end]).ok()?;
    Some((text.to_owned(), TextRange::new(object_start, end)))
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::diagnostic::codes;
    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;

    #[test]
    fn a_retyped_handle_passed_to_a_cudnn_frontend_member_call_is_reported() {
        let src = "#include <cudnn.h>\n#include <cudnn_frontend.h>\nvoid f(cudnn_frontend::graph::Graph* graph, cudnnHandle_t cudnn_handle) {\n  graph->execute(cudnn_handle, nullptr, nullptr);\n}\n";
        let added = run_pass(
            &REPORT_RETYPED_ARGUMENTS,
            Language::Cpp,
            src,
            &MigrateOptions::new(Target::Ascend),
        );
        assert_eq!(added.codes(), [codes::RETYPED_ARGUMENT]);
        let plain = "#include <cudnn.h>\nvoid f(cudnnHandle_t cudnn_handle) { cudnnDestroy(cudnn_handle); }\n";
        let none = run_pass(
            &REPORT_RETYPED_ARGUMENTS,
            Language::Cpp,
            plain,
            &MigrateOptions::new(Target::Ascend),
        );
        assert!(none.diagnostics.is_empty(), "{:?}", none.diagnostics);
    }
}
