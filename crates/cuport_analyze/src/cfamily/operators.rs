//! A project's own compound assignments, increments and same-type binary
//! operators on CUDA's vector types (`inline __host__ __device__ void
//! operator+=(float4 &a, float4 b)`, as cuda-samples' `helper_math.h`
//! defines them; `operator++(float4 &a)`; `float2 operator*(float2 a,
//! float2 b)`).
//! CUDA's vector types have no operators; a target whose vector types
//! define the same operator as a non-template member (HIP's
//! `HIP_vector_type`) makes every use of the project's one ambiguous. Which
//! operators those are is the target's data (`member-operators`).
use cuport_model::TextRange;

use super::brackets::UNMATCHED;
use super::lexer::{TokKind, Token};
use crate::site::{FunctionDefinition, OperatorDefinition};

/// Every definition in `tokens` of `operator@=(V&, V)` (or `const V&` as
/// the second parameter) for a CUDA vector type `V`, from the start of its
/// first line to its closing brace.
pub(crate) fn vector_operator_definitions(
    src: &[u8],
    tokens: &[Token],
    matches: &[u32],
) -> Vec<OperatorDefinition> {
    let matching = |i: usize| matching_bracket(matches, i);
    let mut found = Vec::new();
    for i in 0..tokens.len() {
        if tokens[i].kind != TokKind::Ident || tokens[i].text(src) != b"operator" {
            continue;
        }
        let Some((operator, open, form)) = operator_form(src, tokens, i + 1) else {
            continue;
        };
        let Some(close) = matching(open) else {
            continue;
        };
        let vector_type = match form {
            Form::Increment => incremented_vector(tokens, src, open + 1, close),
            Form::Compound => same_vector_parameters(tokens, src, open + 1, close),
            Form::Binary => binary_vector_parameters(tokens, src, open + 1, close),
        };
        let Some(vector_type) = vector_type else {
            continue;
        };
        let Some(body) =
            (close + 1..tokens.len().min(close + 3)).find(|&k| tokens[k].is_punct(b'{'))
        else {
            continue;
        };
        let Some(end) = matching(body) else {
            continue;
        };
        found.push(OperatorDefinition {
            operator: format!("operator{operator}"),
            vector_type,
            range: definition_range(src, tokens, i, end),
        });
    }
    found
}

/// Every definition with a body of a function named in `names` (the CUDA
/// names this file defines itself), with its parameter types.
pub(crate) fn function_definitions(
    src: &[u8],
    tokens: &[Token],
    matches: &[u32],
    names: &[String],
) -> Vec<FunctionDefinition> {
    if names.is_empty() {
        return Vec::new();
    }
    let text = |i: usize| token_text(src, tokens, i);
    let matching = |i: usize| matching_bracket(matches, i);
    let names: rustc_hash::FxHashSet<&str> = names.iter().map(String::as_str).collect();
    let mut found = Vec::new();
    for i in 0..tokens.len().saturating_sub(1) {
        let call_shaped = tokens[i].kind == TokKind::Ident && tokens[i + 1].is_punct(b'(');
        if !call_shaped || !names.contains(text(i)) {
            continue;
        }
        let Some(close) = matching(i + 1) else {
            continue;
        };
        if !tokens.get(close + 1).is_some_and(|t| t.is_punct(b'{')) {
            continue;
        }
        let Some(end) = matching(close + 1) else {
            continue;
        };
        found.push(FunctionDefinition {
            name: text(i).to_owned(),
            parameters: parameter_types(&(i + 2..close).map(text).collect::<Vec<_>>()),
            range: definition_range(src, tokens, i, end),
        });
    }
    found
}

/// `double* address, const double val` → `["double*", "double"]`: each
/// parameter's tokens without its name, `const` and `__restrict__`.
fn parameter_types(words: &[&str]) -> Vec<String> {
    words
        .split(|w| *w == ",")
        .filter(|p| !p.is_empty())
        .map(|parameter| {
            let kept: Vec<&str> = parameter
                .iter()
                .copied()
                .filter(|w| !matches!(*w, "const" | "__restrict__" | "__restrict" | "restrict"))
                .collect();
            let named = kept.len() >= 2
                && kept
                    .last()
                    .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'));
            let ty = if named {
                &kept[..kept.len() - 1]
            } else {
                &kept[..]
            };
            ty.concat()
        })
        .collect()
}

/// From the start of the line where the declaration of the name at token
/// `name` begins to the end of its body's closing brace at token `end`.
fn definition_range(src: &[u8], tokens: &[Token], name: usize, end: usize) -> TextRange {
    let start = declaration_start(tokens, name);
    let line_start = src[..tokens[start].start as usize]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |k| k + 1);
    TextRange::new(line_start, tokens[end].end as usize)
}

fn token_text<'s>(src: &'s [u8], tokens: &[Token], i: usize) -> &'s str {
    std::str::from_utf8(tokens[i].text(src)).unwrap_or("")
}

/// The index of the bracket that closes (or opens) the one at `i`.
fn matching_bracket(matches: &[u32], i: usize) -> Option<usize> {
    matches
        .get(i)
        .filter(|&&m| m != UNMATCHED)
        .map(|&m| m as usize)
}

/// `+=`, `-=`, ..., `<<=` starting at token `at`, and the index of the `(`
/// after it.
/// The operator kinds whose parameters are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `@=(V&, V)`.
    Compound,
    /// `++(V&)`, `--(V&, int)`.
    Increment,
    /// `*(V, V)`, `/(const V&, const V&)`.
    Binary,
}

/// The operator after `operator` at `at`, the index of its `(`, and its form.
fn operator_form(src: &[u8], tokens: &[Token], at: usize) -> Option<(String, usize, Form)> {
    if let Some((operator, open)) = compound_operator(src, tokens, at) {
        return Some((operator, open, Form::Compound));
    }
    if let Some((operator, open)) = increment_operator(tokens, at) {
        return Some((operator.to_owned(), open, Form::Increment));
    }
    binary_operator(tokens, at).map(|(operator, open)| (operator.to_owned(), open, Form::Binary))
}

/// `*` or `/` alone at token `at` (not `*=`), and the index of the `(`
/// after it. `+` and `-` are left out: HIP declares them as templates,
/// which a project's own non-template operator beats.
fn binary_operator(tokens: &[Token], at: usize) -> Option<(&'static str, usize)> {
    let operator = match tokens.get(at)?.kind {
        TokKind::Punct(b'*') => "*",
        TokKind::Punct(b'/') => "/",
        _ => return None,
    };
    tokens
        .get(at + 1)?
        .is_punct(b'(')
        .then_some((operator, at + 1))
}

fn compound_operator(src: &[u8], tokens: &[Token], at: usize) -> Option<(String, usize)> {
    let first = tokens.get(at)?;
    let text = std::str::from_utf8(first.text(src)).ok()?;
    // The lexer reads `<<=` and `>>=` as one token, `+=` as two.
    if matches!(text, "<<=" | ">>=") {
        return tokens
            .get(at + 1)?
            .is_punct(b'(')
            .then(|| (text.to_owned(), at + 1));
    }
    let TokKind::Punct(symbol) = first.kind else {
        return None;
    };
    let equals = tokens.get(at + 1)?;
    let adjacent =
        b"+-*/%^|&".contains(&symbol) && equals.start == first.end && equals.is_punct(b'=');
    let open = at + 2;
    (adjacent && tokens.get(open)?.is_punct(b'(')).then(|| (format!("{}=", symbol as char), open))
}

/// `++` or `--` starting at token `at` (two adjacent `+`/`-` tokens), and
/// the index of the `(` after it.
fn increment_operator(tokens: &[Token], at: usize) -> Option<(&'static str, usize)> {
    let (first, second) = (tokens.get(at)?, tokens.get(at + 1)?);
    let operator = match first.kind {
        TokKind::Punct(b'+') if second.is_punct(b'+') => "++",
        TokKind::Punct(b'-') if second.is_punct(b'-') => "--",
        _ => return None,
    };
    let adjacent = second.start == first.end;
    (adjacent && tokens.get(at + 2)?.is_punct(b'(')).then(|| (operator, at + 2))
}

/// The vector type when the parameters between `from` and `to` are `V &a`
/// (prefix) or `V &a, int` (postfix) of one CUDA vector type `V`.
fn incremented_vector(tokens: &[Token], src: &[u8], from: usize, to: usize) -> Option<String> {
    let words: Vec<&str> = (from..to)
        .map(|k| std::str::from_utf8(tokens[k].text(src)).unwrap_or(""))
        .collect();
    let (first, rest) = match words.iter().position(|w| *w == ",") {
        Some(comma) => (&words[..comma], &words[comma + 1..]),
        None => (&words[..], &[][..]),
    };
    let by_reference = first.len() >= 2 && first[1] == "&";
    let postfix_or_prefix = rest.is_empty() || rest.first() == Some(&"int");
    let vector = *first.first()?;
    (by_reference && is_vector_type(vector) && postfix_or_prefix).then(|| vector.to_owned())
}

/// The vector type when the parameters between `from` and `to` are `V &a`
/// and `V b` / `const V &b` of one CUDA vector type `V`.
fn same_vector_parameters(tokens: &[Token], src: &[u8], from: usize, to: usize) -> Option<String> {
    let words: Vec<&str> = (from..to)
        .map(|k| std::str::from_utf8(tokens[k].text(src)).unwrap_or(""))
        .filter(|w| *w != "const")
        .collect();
    let comma = words.iter().position(|w| *w == ",")?;
    let (first, second) = (&words[..comma], &words[comma + 1..]);
    let by_reference = first.len() >= 2 && first[1] == "&";
    let vector = *first.first()?;
    (by_reference
        && is_vector_type(vector)
        && second.first() == Some(&vector)
        && !second.contains(&","))
    .then(|| vector.to_owned())
}

/// The vector type when the parameters between `from` and `to` are two of
/// one CUDA vector type `V`, each by value or by `const` reference.
fn binary_vector_parameters(
    tokens: &[Token],
    src: &[u8],
    from: usize,
    to: usize,
) -> Option<String> {
    let words: Vec<&str> = (from..to)
        .map(|k| std::str::from_utf8(tokens[k].text(src)).unwrap_or(""))
        .collect();
    let comma = words.iter().position(|w| *w == ",")?;
    let (first, second) = (&words[..comma], &words[comma + 1..]);
    let vector = parameter_vector(first)?;
    (parameter_vector(second) == Some(vector)).then(|| vector.to_owned())
}

/// `V`, `V a`, `const V a` or `const V &a` for a CUDA vector type `V`.
fn parameter_vector<'w>(words: &[&'w str]) -> Option<&'w str> {
    let constant = words.first() == Some(&"const");
    let rest = if constant { &words[1..] } else { words };
    let vector = *rest.first()?;
    let by_reference = rest.get(1) == Some(&"&");
    let name_at = if by_reference { 2 } else { 1 };
    let well_formed = rest.len() <= name_at + 1 && (!by_reference || constant);
    (well_formed && is_vector_type(vector)).then_some(vector)
}

/// CUDA's built-in vector types (`float4`, `uchar2`, `longlong3`, ...).
fn is_vector_type(name: &str) -> bool {
    let Some(base) = name.strip_suffix(['1', '2', '3', '4']) else {
        return false;
    };
    matches!(
        base,
        "char"
            | "uchar"
            | "short"
            | "ushort"
            | "int"
            | "uint"
            | "long"
            | "ulong"
            | "longlong"
            | "ulonglong"
            | "float"
            | "double"
    )
}

/// The first token of the declaration `operator` at `at` belongs to: after
/// the previous `;`, `}`, `{`, `)` of an attribute list is not a stop.
fn declaration_start(tokens: &[Token], at: usize) -> usize {
    let mut k = at;
    while k > 0 {
        let previous = tokens[k - 1];
        let stop = previous.is_punct(b';')
            || previous.is_punct(b'}')
            || previous.is_punct(b'{')
            || previous.kind == TokKind::DirectiveEnd;
        if stop {
            break;
        }
        k -= 1;
    }
    k
}
