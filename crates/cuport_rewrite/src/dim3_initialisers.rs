//! `dim3 grid = make_uint3(a, b, c);`: CUDA's `dim3` converts from a
//! `uint3`, the target's may not (HIP's has only `dim3(x, y, z)`;
//! `[vector-types] dim3-from-values` in `mappings/<target>/target.toml`).
//! A `make_uint3(...)` that initialises or is assigned to a `dim3`
//! variable is written with the target's constructor, which takes the
//! same three values.
use cuport_analyze::FileAnalysis;
use cuport_model::Target;

use crate::diagnostic::codes;
use crate::edit::Edit;
use crate::plan::Planned;
use crate::source_text::{declared_variables, trim_end, word_start};

/// One edit per `make_uint3` whose value goes straight into a `dim3`.
pub(crate) fn construct_dim3_from_values(
    src: &[u8],
    analysis: &FileAnalysis,
    targets: &[Target],
    planned: &mut Planned,
) {
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
                code: codes::DIM3_CONSTRUCTOR.into(),
                cuda_name: site.name.clone(),
            });
        }
    }
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
