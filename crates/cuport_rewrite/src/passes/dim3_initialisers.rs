//! `dim3 grid = make_uint3(a, b, c);`: CUDA's `dim3` converts from a
//! `uint3`, the target's may not (HIP's has only `dim3(x, y, z)`;
//! `[vector-types] dim3-from-values` in `mappings/<target>/target.toml`).
//! A `make_uint3(...)` that initialises or is assigned to a `dim3`
//! variable is written with the target's constructor, which takes the
//! same three values; a `uint3` variable `u` there is written
//! `dim3(u.x, u.y, u.z)`; the `uint3` a call returns is reported (CP1095):
//! spelling out its three members would call it three times.
use cuport_model::{Library, LineIndex, SiteKind, TextRange};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::edit::{Edit, EditKind};
use crate::plan::{FileInput, Planned};
use crate::source_text::{declared_variables, is_word, trim_end, word_start};
use cuport_model::Effort;

/// One edit per `make_uint3` whose value goes straight into a `dim3`.
pub(super) fn construct_dim3_from_values(input: &FileInput<'_>, planned: &mut Planned) {
    let (src, lines, analysis, targets) = (
        input.src,
        input.lines,
        input.analysis,
        input.options.targets(),
    );
    let Some(constructor) = targets
        .iter()
        .find_map(|t| t.profile().vector_types.dim3_from_values.as_deref())
    else {
        return;
    };
    let variables: Vec<&str> = analysis
        .sites
        .iter()
        .filter(|s| s.name == "dim3")
        .flat_map(|s| declared_variables(src, s.range.end))
        .collect();
    for site in analysis.sites.iter().filter(|s| s.name == "make_uint3") {
        let into_dim3 = initialised_variable(src, site.range.start)
            .is_some_and(|v| v == "dim3" || variables.contains(&v));
        let overlaps = planned
            .edits
            .iter()
            .any(|e| e.range.start < site.range.end && site.range.start < e.range.end);
        if into_dim3 && !overlaps {
            planned.edits.push(Edit {
                range: site.range,
                replacement: constructor.to_owned(),
                code: codes::DIM3_CONSTRUCTOR,
                cuda_name: site.name.clone(),
                kind: EditKind::Port,
            });
        }
    }
    // Variables of type uint3, and functions that return one
    // (`__device__ uint3 idx()`).
    let mut uint3_names: Vec<&str> = analysis
        .sites
        .iter()
        .filter(|s| s.name == "uint3")
        .flat_map(|s| {
            let mut names = declared_variables(src, s.range.end);
            names.extend(declared_function(src, s.range.end));
            names
        })
        .collect();
    uint3_names.sort_unstable();
    uint3_names.dedup();
    for name in uint3_names {
        for at in memchr::memmem::find_iter(src, name.as_bytes()) {
            let end = at + name.len();
            let whole = word_start(src, end) == at && src.get(end).is_none_or(|b| !is_word(b));
            let into_dim3 = whole
                && initialised_variable(src, at)
                    .is_some_and(|v| v == "dim3" || variables.contains(&v));
            if !into_dim3 {
                continue;
            }
            match src[end..].iter().find(|b| !b.is_ascii_whitespace()) {
                Some(b';' | b')' | b'}' | b',') => planned.edits.push(Edit {
                    range: TextRange::new(at, end),
                    replacement: format!("{constructor}({name}.x, {name}.y, {name}.z)"),
                    code: codes::DIM3_CONSTRUCTOR,
                    cuda_name: "uint3".into(),
                    kind: EditKind::Port,
                }),
                Some(b'(') => {
                    report_call(lines, TextRange::new(at, end), name, constructor, planned)
                }
                _ => {}
            }
        }
    }
}

/// The function a declaration right after a return type declares
/// (`uint3 idx(`).
fn declared_function(src: &[u8], after_type: usize) -> Option<&str> {
    let at = after_type
        + src[after_type..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
    let name = crate::source_text::word_at(src, at)?;
    let rest = src[at + name.len()..]
        .iter()
        .find(|b| !b.is_ascii_whitespace());
    (rest == Some(&b'(')).then_some(name)
}

fn report_call(
    lines: &LineIndex,
    range: TextRange,
    name: &str,
    constructor: &str,
    planned: &mut Planned,
) {
    let at = lines.line_col(range.start);
    planned.diagnostics.push(Diagnostic {
        code: codes::DIM3_FROM_UINT3_CALL,
        level: Level::Manual,
        effort: Some(Effort::Low),
        message: format!("`{name}(...)` returns a uint3, which initialises a dim3 here; the target's dim3 does not convert from uint3"),
        line: at.line,
        column: at.column,
        range,
        cuda_name: "dim3".into(),
        library: Library::Runtime,
        kind: SiteKind::Type,
        suggestion: Some(format!("keep the value in a uint3 variable `v` and write `{constructor}(v.x, v.y, v.z)`")),
        reference: None,
    });
}

/// `v = make_uint3(`, `v(make_uint3(` or `v{make_uint3(` with the call at
/// `at`: the variable `v` (`dim3` itself when the text declares `dim3 v(`).
fn initialised_variable(src: &[u8], at: usize) -> Option<&str> {
    let sign_at = trim_end(src, at).checked_sub(1)?;
    let sign = src[sign_at];
    if !matches!(sign, b'=' | b'(' | b'{') {
        return None;
    }
    // `a == make_uint3(...)`, `a += ...`: only a plain `=` assigns.
    let compound = sign == b'=' && sign_at > 0 && b"=!<>+-*/%&|^".contains(&src[sign_at - 1]);
    if compound {
        return None;
    }
    let name_end = trim_end(src, sign_at);
    let name_start = word_start(src, name_end);
    if name_start == name_end {
        return None;
    }
    // `dim3 block(make_uint3(...))`: a declaration with a constructor
    // argument, which declared_variables does not list.
    let type_end = trim_end(src, name_start);
    if sign != b'=' && &src[word_start(src, type_end)..type_end] == b"dim3" {
        return Some("dim3");
    }
    std::str::from_utf8(&src[name_start..name_end]).ok()
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::diagnostic::codes;
    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;

    #[test]
    fn a_dim3_from_make_uint3_is_constructed_from_the_values_on_hip() {
        let src = "void f(unsigned a) { dim3 grid = make_uint3(a, 1, 1); }\n";
        let hip = run_pass(
            &CONSTRUCT_DIM3,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Hip),
        );
        assert!(
            hip.edits.iter().any(|e| e.code == codes::DIM3_CONSTRUCTOR),
            "{:?}",
            hip.edits
        );
        let from_call = "uint3 g(); void f() { dim3 grid = g(); }\n";
        let hip = run_pass(
            &CONSTRUCT_DIM3,
            Language::Cuda,
            from_call,
            &MigrateOptions::new(Target::Hip),
        );
        assert_eq!(hip.codes(), [codes::DIM3_FROM_UINT3_CALL]);
    }
}
