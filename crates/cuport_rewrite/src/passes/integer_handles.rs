//! Handles that CUDA declares as integers and the target as pointers
//! (`cudaTextureObject_t`: `unsigned long long` in CUDA, `struct
//! __hip_texture *` on HIP; `mappings/<target>/target.toml`,
//! `[integer-handles]`). Packing one into integers with bit operations
//! (`obj & 0xFFFFFFFF`, `obj >> 32`, `(cudaTextureObject_t)lo | hi << 32`:
//! cuda-samples bindlessTexture) does not compile there, and no rename
//! fixes it; each such use is reported where it is.
use cuport_analyze::FileAnalysis;
use cuport_model::{LineIndex, SiteKind, Target, TextRange};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::plan::{FileInput, Planned};
use crate::source_text::{declared_variables, in_line_comment, is_word, trim_end};
use cuport_model::Effort;

/// One diagnostic per bit operation on a variable or cast of such a type,
/// for each target of the run.
pub(super) fn report_integer_handles(input: &FileInput<'_>, planned: &mut Planned) {
    for &target in input.options.targets() {
        report_for_target(input.src, input.lines, input.analysis, target, planned);
    }
}

fn report_for_target(
    src: &[u8],
    lines: &LineIndex,
    analysis: &FileAnalysis,
    target: Target,
    planned: &mut Planned,
) {
    let facts = &target.profile().integer_handles;
    for site in analysis.sites.iter().filter(|s| s.kind == SiteKind::Type) {
        if !facts.types.contains(&site.name) {
            continue;
        }
        let mut operands: Vec<TextRange> = cast_operand(src, site.range).into_iter().collect();
        for variable in declared_variables(src, site.range.end) {
            operands.extend(uses_of(src, variable));
        }
        for operand in operands {
            if !next_to_bit_operator(src, operand)
                || planned.diagnostics.iter().any(|d| d.range == operand)
            {
                continue;
            }
            let at = lines.line_col(operand.start);
            let text = String::from_utf8_lossy(&src[operand.start..operand.end]);
            planned.diagnostics.push(Diagnostic {
                code: codes::INTEGER_HANDLE,
                level: Level::Manual,
                effort: Some(Effort::Low),
                message: format!(
                    "`{text}` is a `{}`, an integer in CUDA but a pointer on {target}; the bit operation here does not compile there",
                    site.name
                ),
                line: at.line,
                column: at.column,
                range: operand,
                cuda_name: site.name.clone(),
                library: site.library,
                kind: SiteKind::Type,
                suggestion: Some("keep the handle whole (pass it as it is, or store it in a struct or array of handles) instead of packing it into integers".into()),
                reference: facts.reference.clone(),
            });
        }
    }
}

/// `((T)x)` with the type at `ty`: the parenthesised cast expression.
fn cast_operand(src: &[u8], ty: TextRange) -> Option<TextRange> {
    let open = src[..ty.start]
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())?;
    let close = ty.end
        + src[ty.end..]
            .iter()
            .position(|b| !b.is_ascii_whitespace())?;
    if src[open] != b'(' || src[close] != b')' {
        return None;
    }
    let outer = src[..open].iter().rposition(|b| !b.is_ascii_whitespace())?;
    if src[outer] != b'(' {
        return None;
    }
    let mut depth = 0usize;
    for (k, b) in src.iter().enumerate().skip(outer) {
        match b {
            b'(' => depth += 1,
            b')' if depth == 1 => return Some(TextRange::new(outer, k + 1)),
            b')' => depth -= 1,
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

/// Whole-word uses of `variable` outside line comments.
fn uses_of(src: &[u8], variable: &str) -> Vec<TextRange> {
    memchr::memmem::find_iter(src, variable.as_bytes())
        .map(|at| TextRange::new(at, at + variable.len()))
        .filter(|r| {
            let before = r.start.checked_sub(1).map(|i| src[i]);
            !before.is_some_and(|b| is_word(&b) || b == b'.')
                && !src.get(r.end).is_some_and(is_word)
                && !in_line_comment(src, r.start)
        })
        .collect()
}

/// `x & m`, `x | y`, `x ^ y`, `x >> n`, `x << n`, `x % n` with the operand
/// on either side (`&&`, `||`, address-of and stream output excluded).
fn next_to_bit_operator(src: &[u8], operand: TextRange) -> bool {
    let after: Vec<u8> = src[operand.end..]
        .iter()
        .copied()
        .skip_while(u8::is_ascii_whitespace)
        .take(2)
        .collect();
    let follows = match after.as_slice() {
        [b'&' | b'|', second] => second != &after[0] && *second != b'=',
        [b'^' | b'%', second] => *second != b'=',
        [b'>', b'>'] | [b'<', b'<'] => true,
        _ => false,
    };
    let end = trim_end(src, operand.start);
    let before = &src[end.saturating_sub(2)..end];
    let precedes = match before {
        [first, b'|'] => *first != b'|',
        [_, b'^' | b'%'] => true,
        [b'>', b'>'] => true,
        _ => false,
    };
    follows || precedes
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::diagnostic::codes;
    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;

    #[test]
    fn bit_operations_on_a_texture_object_are_reported_on_hip() {
        let src = "unsigned lo(cudaTextureObject_t tex) { return tex & 0xFFFFFFFF; }\n";
        let hip = run_pass(
            &REPORT_INTEGER_HANDLES,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Hip),
        );
        assert_eq!(hip.codes(), [codes::INTEGER_HANDLE]);
        let passed =
            "void use(cudaTextureObject_t tex); void f(cudaTextureObject_t tex) { use(tex); }\n";
        let none = run_pass(
            &REPORT_INTEGER_HANDLES,
            Language::Cuda,
            passed,
            &MigrateOptions::new(Target::Hip),
        );
        assert!(none.diagnostics.is_empty(), "{:?}", none.diagnostics);
    }
}
