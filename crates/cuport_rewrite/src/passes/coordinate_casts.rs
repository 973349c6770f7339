//! A built-in coordinate passed straight to `min`/`max` (`min(rem,
//! blockDim.x)`, cuda-samples eigenvalues) where the target's coordinates
//! are proxy objects rather than CUDA's `unsigned int`
//! (`mappings/<target>/target.toml`, `[builtin-coordinates]`): overload
//! resolution that is exact on CUDA becomes ambiguous there. The member is
//! cast to CUDA's type, so the call resolves as it does on CUDA.
use cuport_model::{CoordinateFacts, TextRange};

use crate::diagnostic::codes;
use crate::edit::{Edit, EditKind};
use crate::plan::{unmatched, FileInput, Planned};
use crate::source_text::{trim_end, whole_argument, word_start};

/// One cast edit per coordinate member that is a whole argument of one of
/// the profile's calls, for the first of `targets` whose profile asks.
pub(super) fn cast_coordinate_arguments(input: &FileInput<'_>, planned: &mut Planned) {
    let (src, analysis, targets) = (input.src, input.analysis, input.options.targets());
    let Some(facts) = targets
        .iter()
        .map(|t| &t.profile().builtin_coordinates)
        .find(|f| f.cast.is_some())
    else {
        return;
    };
    for site in &analysis.sites {
        if !facts.variables.contains(&site.name) {
            continue;
        }
        let Some(end) = member_end(src, site.range.end) else {
            continue;
        };
        let range = TextRange::new(site.range.start, end);
        if !casts_here(src, range, facts) || planned.overlaps_an_edit(range) {
            continue;
        }
        let member = String::from_utf8_lossy(&src[range.start..range.end]).into_owned();
        planned.edits.push(Edit {
            range,
            replacement: format!("{}({member})", facts.cast.as_deref().unwrap_or_default()),
            code: codes::COORDINATE_CAST,
            cuda_name: site.name.clone(),
            kind: EditKind::Port,
        });
    }
}

/// The end of `.x`, `.y` or `.z` right after the variable (spaces allowed).
fn member_end(src: &[u8], after: usize) -> Option<usize> {
    let skip = |at: usize| {
        at + src[at..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count()
    };
    let dot = skip(after);
    if src.get(dot) != Some(&b'.') {
        return None;
    }
    let letter = skip(dot + 1);
    let end = letter + 1;
    let single = matches!(src.get(letter), Some(b'x' | b'y' | b'z'))
        && !src
            .get(end)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
    single.then_some(end)
}

/// Whether `range` is a whole argument of a call to one of `facts.calls`
/// (plain or `std::` qualified, never a member function).
fn casts_here(src: &[u8], range: TextRange, facts: &CoordinateFacts) -> bool {
    if !whole_argument(src, range.start, range.end) {
        return false;
    }
    let Some(open) = unmatched((0..range.start).rev().map(|k| (k, src[k])), b')', b'(') else {
        return false;
    };
    let name_end = trim_end(src, open);
    let name_start = word_start(src, name_end);
    let callee = &src[name_start..name_end];
    let before = &src[..name_start];
    let member_call = before.ends_with(b".") || before.ends_with(b"->");
    let qualified = before.ends_with(b"::") && !before.ends_with(b"std::");
    !member_call && !qualified && facts.calls.iter().any(|c| c.as_bytes() == callee)
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::diagnostic::codes;
    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;

    #[test]
    fn a_coordinate_passed_to_min_is_cast_where_the_target_has_proxy_coordinates() {
        let src = "__global__ void k(unsigned rem) { unsigned n = min(rem, blockDim.x); }\n";
        let hip = run_pass(
            &CAST_COORDINATE_ARGUMENTS,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Hip),
        );
        assert!(!hip.edits.is_empty(), "{:?}", hip.edits);
        assert!(hip.edits.iter().all(|e| e.code == codes::COORDINATE_CAST));
        let plain = "__global__ void k(unsigned rem) { unsigned n = min(rem, 4u); }\n";
        let none = run_pass(
            &CAST_COORDINATE_ARGUMENTS,
            Language::Cuda,
            plain,
            &MigrateOptions::new(Target::Hip),
        );
        assert!(none.edits.is_empty(), "{:?}", none.edits);
    }
}
