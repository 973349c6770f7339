//! Tensors a kernel takes as CUDA vector pointers (`float4*`: llm.c's
//! encoder loads 128 bits at a time) when a `[[kernel]]` rule replaces the
//! kernel with operator calls. The target's host code has no vector types,
//! so the operator function takes such a buffer as `void*` (its tensor reads
//! it as scalars) and a launch's cast to the vector pointer is dropped.
use cuport_model::TextRange;

use crate::source_text::{closing_bracket, is_word};

/// How one launch argument reaches a `vector*` parameter of the operator
/// function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VectorArg {
    /// The vector type does not occur in it: passed as written.
    AsWritten,
    /// `(float4*) out` or `reinterpret_cast<float4*>(out)`: deleting these
    /// ranges passes the operand, the same address.
    Cast(Vec<TextRange>),
    /// The vector type is part of a larger expression (`(float4*) out + 1`
    /// steps in vectors): without the type there is no way to pass it.
    Entangled,
}

/// What to do with the launch argument at `arg` for a parameter of type
/// `vector*`.
pub(crate) fn vector_arg(src: &[u8], arg: TextRange, vector: &str) -> VectorArg {
    let Some(bytes) = src.get(arg.start..arg.end) else {
        return VectorArg::Entangled;
    };
    let text = String::from_utf8_lossy(bytes);
    if !has_word(&text, vector) {
        return VectorArg::AsWritten;
    }
    let lead = text.len() - text.trim_start().len();
    let trimmed = text.trim();
    let at = |r: std::ops::Range<usize>| {
        TextRange::new(arg.start + lead + r.start, arg.start + lead + r.end)
    };
    let removed = c_style_cast(trimmed, vector)
        .map(|r| vec![at(r)])
        .or_else(|| named_cast(trimmed, vector).map(|(open, close)| vec![at(open), at(close)]));
    match removed {
        Some(ranges) if !has_word(&remaining(trimmed, &ranges, arg.start + lead), vector) => {
            VectorArg::Cast(ranges)
        }
        _ => VectorArg::Entangled,
    }
}

/// `const float4* __restrict__ wte` → `const void* __restrict__ wte`: the
/// declaration of an operator function's parameter for a `vector*` one.
pub(crate) fn void_param(declaration: &str, vector: &str) -> String {
    match word_position(declaration, vector) {
        Some(at) => format!(
            "{}void{}",
            &declaration[..at],
            &declaration[at + vector.len()..]
        ),
        None => declaration.to_owned(),
    }
}

/// `(float4*) rest` where `rest` is a postfix expression (a name, member
/// accesses, subscripts, calls, a parenthesised expression): the range of
/// `(float4*) `.
fn c_style_cast(text: &str, vector: &str) -> Option<std::ops::Range<usize>> {
    if !text.starts_with('(') {
        return None;
    }
    let close = closing_bracket(text.as_bytes(), 0, b'(', b')')?;
    if !is_vector_pointer(&text[1..close], vector) {
        return None;
    }
    let rest = &text[close + 1..];
    let operand = close + 1 + (rest.len() - rest.trim_start().len());
    is_postfix_expression(&text[operand..]).then_some(0..operand)
}

/// `reinterpret_cast<float4*>(expr)` (or `static_cast`) spanning the whole
/// argument: the ranges of `reinterpret_cast<float4*>(` and of its `)`.
fn named_cast(
    text: &str,
    vector: &str,
) -> Option<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let after = ["reinterpret_cast", "static_cast"]
        .iter()
        .find_map(|c| text.strip_prefix(c))?;
    let angle = text.len() - after.len() + after.find('<')?;
    if !text[text.len() - after.len()..angle].trim().is_empty() {
        return None;
    }
    let close_angle = angle + text[angle..].find('>')?;
    if !is_vector_pointer(&text[angle + 1..close_angle], vector) {
        return None;
    }
    let open = close_angle + 1 + text[close_angle + 1..].find('(')?;
    if !text[close_angle + 1..open].trim().is_empty() {
        return None;
    }
    let close = closing_bracket(text.as_bytes(), open, b'(', b')')?;
    (close == text.len() - 1).then_some((0..open + 1, close..close + 1))
}

/// `float4*`, `const float4 *`, `float4 const*`.
fn is_vector_pointer(inside: &str, vector: &str) -> bool {
    let squeezed: String = inside.chars().filter(|c| !c.is_whitespace()).collect();
    [
        format!("{vector}*"),
        format!("const{vector}*"),
        format!("{vector}const*"),
    ]
    .contains(&squeezed)
}

/// A name, `::`, member accesses, subscripts and calls, or a parenthesised
/// expression, with nothing at the top level that would bind looser than
/// a cast.
fn is_postfix_expression(text: &str) -> bool {
    let bytes = text.trim_end().as_bytes();
    let starts_well = bytes
        .first()
        .is_some_and(|b| is_word(b) || *b == b'(' || *b == b':');
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => {
                depth = match depth.checked_sub(1) {
                    Some(d) => d,
                    None => return false,
                }
            }
            _ if depth > 0 => {}
            b'-' if bytes.get(i + 1) == Some(&b'>') => i += 1,
            b'.' | b':' => {}
            b if is_word(&b) => {}
            _ => return false,
        }
        i += 1;
    }
    starts_well && depth == 0
}

/// `text` (starting at absolute offset `base`) without `ranges`.
fn remaining(text: &str, ranges: &[TextRange], base: usize) -> String {
    text.char_indices()
        .filter(|(i, _)| {
            !ranges
                .iter()
                .any(|r| r.start <= base + i && base + i < r.end)
        })
        .map(|(_, c)| c)
        .collect()
}

fn has_word(text: &str, word: &str) -> bool {
    word_position(text, word).is_some()
}

/// Where `word` first occurs in `text` as a whole word.
fn word_position(text: &str, word: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        !before.is_some_and(|b| is_word(&b)) && !bytes.get(at + word.len()).is_some_and(is_word)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn form(arg: &str) -> VectorArg {
        vector_arg(arg.as_bytes(), TextRange::new(0, arg.len()), "float4")
    }

    fn passed(arg: &str) -> String {
        match form(arg) {
            VectorArg::Cast(ranges) => remaining(arg, &ranges, 0),
            other => panic!("{arg}: {other:?}"),
        }
    }

    #[test]
    fn casts_of_a_whole_operand_are_dropped() {
        assert_eq!(passed("(float4*) out"), "out");
        assert_eq!(
            passed(" (const float4 *)model->params.wte"),
            " model->params.wte"
        );
        assert_eq!(passed("(float4*)(base + off)"), "(base + off)");
        assert_eq!(passed("(float4*) bufs[i]"), "bufs[i]");
        assert_eq!(passed("reinterpret_cast<float4*>(a + 4 * n)"), "a + 4 * n");
        assert_eq!(passed("static_cast< const float4* >( p )"), " p ");
    }

    #[test]
    fn a_cast_inside_a_larger_expression_is_entangled() {
        assert_eq!(form("(float4*) out + 1"), VectorArg::Entangled);
        assert_eq!(form("(float4*) a ? b : c"), VectorArg::Entangled);
        assert_eq!(
            form("reinterpret_cast<float4*>(a) + 1"),
            VectorArg::Entangled
        );
        assert_eq!(form("(float4*) (float4*) a"), VectorArg::Entangled);
        assert_eq!(form("sizeof(float4) + p"), VectorArg::Entangled);
    }

    #[test]
    fn other_arguments_pass_as_written() {
        assert_eq!(form("out"), VectorArg::AsWritten);
        assert_eq!(form("(float*) my_float4s"), VectorArg::AsWritten);
        assert_eq!(form("(float2*) out"), VectorArg::AsWritten);
    }

    #[test]
    fn a_vector_parameter_becomes_void() {
        assert_eq!(
            void_param("const float4* __restrict__ wte", "float4"),
            "const void* __restrict__ wte"
        );
        assert_eq!(void_param("float4 *out", "float4"), "void *out");
        assert_eq!(void_param("float *out", "float4"), "float *out");
    }
}
