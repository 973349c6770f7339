//! Bracket matching over a token stream, computed once per file so that
//! argument lists and launch configurations are found in O(1) per site.
use super::lexer::{TokKind, Token};

pub(crate) const UNMATCHED: u32 = u32::MAX;

/// For each token, the index of its matching bracket (or `UNMATCHED`).
/// Brackets inside a preprocessor directive only match within it, so a
/// macro body's parentheses cannot pair with code outside the macro.
pub(crate) fn match_brackets(tokens: &[Token]) -> Vec<u32> {
    let mut matches = vec![UNMATCHED; tokens.len()];
    let mut code_stack: Vec<u32> = Vec::new();
    let mut directive_stack: Vec<u32> = Vec::new();
    let mut in_directive = false;
    for (index, token) in tokens.iter().enumerate() {
        match token.kind {
            TokKind::Directive => in_directive = true,
            TokKind::DirectiveEnd => {
                in_directive = false;
                directive_stack.clear();
            }
            _ => {
                let stack = if in_directive {
                    &mut directive_stack
                } else {
                    &mut code_stack
                };
                pair(tokens, &mut matches, stack, index);
            }
        }
    }
    matches
}

fn pair(tokens: &[Token], matches: &mut [u32], stack: &mut Vec<u32>, index: usize) {
    let kind = tokens[index].kind;
    if let Some(open) = opener_of(kind) {
        let found = stack
            .iter()
            .rposition(|&i| tokens[i as usize].kind == TokKind::Punct(open));
        if let Some(depth) = found {
            // Unclosed openers above the match (from `#if` branches that each
            // open a brace) are abandoned rather than mis-paired.
            let open_index = stack[depth];
            stack.truncate(depth);
            matches[open_index as usize] = index as u32;
            matches[index] = open_index;
        }
    } else if matches!(kind, TokKind::Punct(b'(' | b'[' | b'{')) {
        stack.push(index as u32);
    }
}

fn opener_of(kind: TokKind) -> Option<u8> {
    match kind {
        TokKind::Punct(b')') => Some(b'('),
        TokKind::Punct(b']') => Some(b'['),
        TokKind::Punct(b'}') => Some(b'{'),
        _ => None,
    }
}

/// Splits the tokens strictly between `open` and `close` at top-level commas
/// and returns the byte range of each piece (empty list for `()`).
pub(crate) fn split_commas(
    tokens: &[Token],
    matches: &[u32],
    open: usize,
    close: usize,
    is_separator: impl Fn(&Token) -> bool,
) -> Vec<(usize, usize)> {
    let mut pieces = Vec::new();
    let mut piece_start: Option<usize> = None;
    let mut last_end = 0;
    let mut k = open + 1;
    while k < close {
        let token = &tokens[k];
        if is_separator(token) {
            if let Some(start) = piece_start.take() {
                pieces.push((start, last_end));
            }
            k += 1;
            continue;
        }
        piece_start.get_or_insert(token.start as usize);
        let jump = matches[k];
        let next = if jump != UNMATCHED && (jump as usize) > k && (jump as usize) < close {
            jump as usize
        } else {
            k
        };
        last_end = tokens[next].end as usize;
        k = next + 1;
    }
    if let Some(start) = piece_start {
        pieces.push((start, last_end));
    }
    pieces
}
