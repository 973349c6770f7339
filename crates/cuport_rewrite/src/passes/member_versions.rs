//! Members the target lacks (`cudaDeviceProp::maxThreadsPerMultiProcessor`
//! on Ascend, whose property struct has six fields), has with a difference
//! (HIP's tile shuffles take scalars only), or gained later than
//! their struct or class (`hipDeviceProp_t::asyncEngineCount` from HIP 6.0,
//! `thread_block_tile::meta_group_rank()` from HIP 5.7; rules of kind
//! `member`): each use is reported, with the rule's note, or in a port made
//! for an older release (`--rocm-version 5.2.3`) with the release it needs,
//! as a name of its own would be (CP0016). Uses are
//! found through the owner: a variable declared with the struct's type
//! (`cudaDeviceProp prop;` then `prop.uuid`, `props[i].uuid`, `p->uuid`),
//! or, for a class in a namespace, any member call in a file that uses
//! that namespace's library (`tile.meta_group_rank()`).
use cuport_analyze::FileAnalysis;
use cuport_model::Code;
use cuport_model::{LineIndex, SiteKind, TextRange};
use cuport_rules::{Resolved, Status};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::options::Mode;
use crate::plan::{FileInput, Planned};
use crate::sdk::newer_release_needed;
use crate::source_text::{declared_variables, in_line_comment, is_word, trim_end, word_start};
use cuport_model::Effort;

/// Adds a diagnostic for each use of a member the target lacks (the rule's
/// own) or the selected release lacks (CP0016).
pub(super) fn report_members_too_new(input: &FileInput<'_>, planned: &mut Planned) {
    let (rules, options) = (input.rules, input.options);
    let Mode::OneWay(target) = options.mode else {
        return;
    };
    for (name, resolved) in rules.members(target) {
        if matches!(
            resolved.status(),
            Status::Manual | Status::Unsupported | Status::Approximate
        ) {
            report_missing_member(
                input.src,
                input.lines,
                input.analysis,
                name,
                &resolved,
                planned,
            );
        }
    }
    let Some(selected) = options.sdk_version(target) else {
        return;
    };
    let versions = &target.profile().versions;
    for (name, resolved) in rules.members(target) {
        let Some(minimum) = newer_release_needed(&resolved, target, Some(selected)) else {
            continue;
        };
        let Some((owner, member)) = name.rsplit_once("::") else {
            continue;
        };
        for (range, object) in member_uses(input.src, input.analysis, owner, member, &resolved) {
            if planned.diagnostics.iter().any(|d| d.range == range) {
                continue;
            }
            planned.diagnostics.push(Diagnostic {
                message: format!(
                    "`{object}.{member}` ({name}) needs {minimum}; this port is for {}",
                    versions.describe(selected)
                ),
                suggestion: Some(format!(
                    "port it by hand for {selected}, or make the port for {} {} or newer",
                    minimum.product, minimum.version
                )),
                ..on_member_use(input.lines, range, name, &resolved, codes::SDK_TOO_OLD)
            });
        }
    }
}

/// Each use of a member the target does not have, with the rule's level,
/// code and note.
fn report_missing_member(
    src: &[u8],
    lines: &LineIndex,
    analysis: &FileAnalysis,
    name: &str,
    resolved: &Resolved<'_>,
    planned: &mut Planned,
) {
    let Some((owner, member)) = name.rsplit_once("::") else {
        return;
    };
    let (level, what) = match resolved.status() {
        Status::Unsupported => (Level::Unsupported, "has no counterpart"),
        Status::Approximate => (
            Level::Approximate,
            "is kept but does not behave exactly the same",
        ),
        _ => (Level::Manual, "has no automatic equivalent"),
    };
    for (range, object) in member_uses(src, analysis, owner, member, resolved) {
        if planned.diagnostics.iter().any(|d| d.range == range) {
            continue;
        }
        planned.diagnostics.push(Diagnostic {
            level,
            message: format!("`{object}.{member}` ({name}) {what} on {}", resolved.target),
            suggestion: resolved.note().map(str::to_owned),
            ..on_member_use(
                lines,
                range,
                name,
                resolved,
                resolved.code().unwrap_or(codes::UNKNOWN_NAME),
            )
        });
    }
}

/// A manual, low-effort diagnostic on a use of the member rule `name` at
/// `range`; the caller fills in the message and suggestion.
fn on_member_use(
    lines: &LineIndex,
    range: TextRange,
    name: &str,
    resolved: &Resolved<'_>,
    code: Code,
) -> Diagnostic {
    let at = lines.line_col(range.start);
    Diagnostic {
        code,
        level: Level::Manual,
        effort: Some(Effort::Low),
        message: String::new(),
        line: at.line,
        column: at.column,
        range,
        cuda_name: name.to_owned(),
        library: resolved.library().unwrap_or(cuport_model::Library::Runtime),
        kind: SiteKind::Type,
        suggestion: None,
        reference: resolved.reference().map(str::to_owned),
    }
}

/// Each use of `member` on an object of `owner`: the member's range and
/// the object's text.
fn member_uses(
    src: &[u8],
    analysis: &FileAnalysis,
    owner: &str,
    member: &str,
    resolved: &Resolved<'_>,
) -> Vec<(TextRange, String)> {
    if owner.contains("::") {
        let library = resolved.library();
        let uses_library = analysis.sites.iter().any(|s| Some(s.library) == library);
        return if uses_library {
            accesses(src, member, None)
        } else {
            Vec::new()
        };
    }
    let mut uses = Vec::new();
    for site in analysis.sites.iter().filter(|s| s.name == owner) {
        for variable in declared_variables(src, site.range.end) {
            for found in accesses(src, member, Some(variable)) {
                if !uses.contains(&found) {
                    uses.push(found);
                }
            }
        }
    }
    uses
}

/// `object.member`, `object->member` and `object[i].member` outside line
/// comments, where the object is `variable` (any object when `None`).
fn accesses(src: &[u8], member: &str, variable: Option<&str>) -> Vec<(TextRange, String)> {
    let mut found = Vec::new();
    for at in memchr::memmem::find_iter(src, member.as_bytes()) {
        let end = at + member.len();
        let bounded = !src.get(end).is_some_and(is_word) && at > 0 && !is_word(&src[at - 1]);
        if !bounded || in_line_comment(src, at) {
            continue;
        }
        let Some(object) = object_before(src, at) else {
            continue;
        };
        if variable.is_none_or(|v| v == object) {
            found.push((TextRange::new(at, end), object.to_owned()));
        }
    }
    found
}

/// The identifier before `.`, `->` or `[...].` that ends right before `at`.
fn object_before(src: &[u8], at: usize) -> Option<&str> {
    let before = trim_end(src, at);
    let mut end = if before >= 2 && &src[before - 2..before] == b"->" {
        before - 2
    } else if before >= 1 && src[before - 1] == b'.' {
        before - 1
    } else {
        return None;
    };
    end = trim_end(src, end);
    if end >= 1 && src[end - 1] == b']' {
        let open = src[..end].iter().rposition(|b| *b == b'[')?;
        end = trim_end(src, open);
    }
    let start = word_start(src, end);
    (start < end)
        .then(|| std::str::from_utf8(&src[start..end]).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;

    #[test]
    fn a_device_property_ascend_lacks_is_reported_where_it_is_read() {
        let src = "int f(int d) { cudaDeviceProp p; cudaGetDeviceProperties(&p, d); return p.maxThreadsPerMultiProcessor; }\n";
        let ascend = run_pass(
            &REPORT_MEMBERS_TOO_NEW,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Ascend),
        );
        assert!(
            ascend
                .diagnostics
                .iter()
                .any(|d| d.cuda_name.contains("maxThreadsPerMultiProcessor")),
            "{:?}",
            ascend.diagnostics
        );
        let hip = run_pass(
            &REPORT_MEMBERS_TOO_NEW,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Hip),
        );
        assert!(hip.diagnostics.is_empty(), "{:?}", hip.diagnostics);
    }
}
