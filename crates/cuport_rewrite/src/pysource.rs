//! Just enough Python lexing to rewrite around a site: the call after a
//! name, the object before an attribute, the statement a name sits in,
//! and which bytes are code (not strings or comments). Everything here
//! gives up (None) rather than guess on input it does not understand.
use cuport_model::TextRange;

/// A call's parentheses and its top-level arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    pub(crate) open: usize,
    pub(crate) close: usize,
    pub(crate) args: Vec<Arg>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Arg {
    /// Trimmed text range of the argument.
    pub(crate) range: TextRange,
    /// `name` for `name=value`.
    pub(crate) keyword: Option<String>,
    /// `*args` or `**kwargs`.
    pub(crate) starred: bool,
}

impl Call {
    pub(crate) fn positional(&self) -> impl Iterator<Item = &Arg> {
        self.args
            .iter()
            .filter(|a| a.keyword.is_none() && !a.starred)
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `r`, `b`, `f`, `u` and their two-letter mixes: a string prefix.
fn is_string_prefix(word: &[u8]) -> bool {
    word.len() <= 2
        && !word.is_empty()
        && word
            .iter()
            .all(|b| matches!(b.to_ascii_lowercase(), b'r' | b'b' | b'f' | b'u'))
}

/// The end of the string literal whose quote is at `at`.
fn string_end(src: &[u8], at: usize) -> Option<usize> {
    let quote = *src.get(at)?;
    let triple = src.get(at..at + 3) == Some(&[quote, quote, quote][..]);
    let (mut i, closing) = if triple { (at + 3, 3) } else { (at + 1, 1) };
    while i < src.len() {
        match src[i] {
            b'\\' => i += 2,
            b'\n' if !triple => return None,
            b if b == quote && src[i..].iter().take(closing).all(|&c| c == quote) => {
                return (src.len() >= i + closing).then_some(i + closing)
            }
            _ => i += 1,
        }
    }
    None
}

/// Skips one token-ish unit at `i` that needs care (a string, with its
/// prefix, or a comment); returns where scanning continues, or None when
/// `i` holds neither.
fn skip_literal(src: &[u8], i: usize) -> Option<Option<usize>> {
    match src[i] {
        b'"' | b'\'' => Some(string_end(src, i)),
        b'#' => Some(Some(
            memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |n| i + n),
        )),
        b if is_ident(b) && (i == 0 || !is_ident(src[i - 1])) => {
            let end = i + src[i..].iter().take_while(|&&c| is_ident(c)).count();
            let quoted = matches!(src.get(end), Some(b'"' | b'\''));
            (quoted && is_string_prefix(&src[i..end])).then(|| string_end(src, end))
        }
        _ => None,
    }
}

/// Ranges of code, i.e. everything outside strings and comments.
pub(crate) fn code_ranges(src: &[u8]) -> Vec<TextRange> {
    let mut ranges = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < src.len() {
        match skip_literal(src, i) {
            Some(end) => {
                if start < i {
                    ranges.push(TextRange::new(start, i));
                }
                let end = end.unwrap_or(src.len());
                i = end.max(i + 1);
                start = i;
            }
            None => i += 1,
        }
    }
    if start < src.len() {
        ranges.push(TextRange::new(start, src.len()));
    }
    ranges
}

/// The call that follows `at` (spaces allowed before `(`), with its
/// arguments split at top-level commas.
pub(crate) fn call_after(src: &[u8], at: usize) -> Option<Call> {
    let open = at
        + src
            .get(at..)?
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
    if src.get(open) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut arg_start = open + 1;
    let mut i = open + 1;
    while i < src.len() {
        if let Some(end) = skip_literal(src, i) {
            i = end?;
            continue;
        }
        match src[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth > 0 => depth -= 1,
            b')' => {
                push_arg(src, &mut args, arg_start, i);
                return Some(Call {
                    open,
                    close: i,
                    args,
                });
            }
            b']' | b'}' => return None,
            b',' if depth == 0 => {
                push_arg(src, &mut args, arg_start, i);
                arg_start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn push_arg(src: &[u8], args: &mut Vec<Arg>, start: usize, end: usize) {
    let text = &src[start..end];
    let lead = text.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let trail = text
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    if lead == text.len() {
        return; // the empty slot after a trailing comma
    }
    let range = TextRange::new(start + lead, end - trail);
    let body = &src[range.start..range.end];
    let name_len = body.iter().take_while(|&&b| is_ident(b)).count();
    let after = &body[name_len..];
    let after = &after[after.iter().take_while(|b| **b == b' ').count()..];
    let keyword = (name_len > 0 && after.starts_with(b"=") && !after.starts_with(b"=="))
        .then(|| String::from_utf8_lossy(&body[..name_len]).into_owned());
    args.push(Arg {
        range,
        keyword,
        starred: body.starts_with(b"*"),
    });
}

/// Where the primary expression ending just before `dot` starts
/// (`model(x)[0]` in `model(x)[0].is_cuda`). None for anything but names,
/// calls, subscripts and attribute chains, or brackets holding strings.
pub(crate) fn object_start(src: &[u8], dot: usize) -> Option<usize> {
    let mut i = dot;
    loop {
        let before = *src.get(i.checked_sub(1)?)?;
        if is_ident(before) {
            let start = i - src[..i].iter().rev().take_while(|&&b| is_ident(b)).count();
            if src[start].is_ascii_digit() {
                return None;
            }
            i = start;
            if start > 0 && src[start - 1] == b'.' {
                i = start - 1;
                continue;
            }
            return Some(i);
        }
        if before == b')' || before == b']' {
            i = matching_open(src, i - 1)?;
            let prev = i.checked_sub(1).map(|p| src[p]);
            if prev.is_some_and(|b| is_ident(b) || b == b')' || b == b']') {
                continue;
            }
            return Some(i);
        }
        return None;
    }
}

/// The opening bracket matching the closing one at `close`, scanning
/// backwards; None if a quote or comment sign is in the way.
fn matching_open(src: &[u8], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = close;
    loop {
        match src[i] {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'"' | b'\'' | b'#' => return None,
            _ => {}
        }
        i = i.checked_sub(1)?;
    }
}

/// Whether `at` lies in an `import` or `from ... import` statement
/// (including a parenthesised, multi-line name list).
pub(crate) fn in_import_statement(src: &[u8], at: usize) -> bool {
    let statement = statement_start(src, at);
    let line = &src[statement..at.min(src.len())];
    let text = &line[line.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
    text.starts_with(b"import ") || text.starts_with(b"from ")
}

/// The start of the line holding the unclosed `(` around `at`, or of
/// `at`'s own line. Looks back at most a few kilobytes; a `(` inside an
/// earlier string can mislead it, which only matters if that line is an
/// import.
fn statement_start(src: &[u8], at: usize) -> usize {
    const LIMIT: usize = 4096;
    let line_start = |i: usize| memchr::memrchr(b'\n', &src[..i]).map_or(0, |n| n + 1);
    let mut depth = 0usize;
    let floor = at.saturating_sub(LIMIT);
    let mut i = at.min(src.len());
    while i > floor {
        i -= 1;
        // A bracket in a comment or a one-line string is no bracket (a
        // fuzzing finding: `fuzz_regressions::a_bracket_in_a_comment_opens_no_import`).
        let in_text = |i: usize| quoted_or_commented(&src[line_start(i)..i]);
        match src[i] {
            b')' if !in_text(i) => depth += 1,
            b'(' if depth == 0 && !in_text(i) => return line_start(i),
            b'(' if !in_text(i) => depth -= 1,
            _ => {}
        }
    }
    line_start(at.min(src.len()))
}

/// Whether the end of `line_prefix` (a line up to some byte) lies in a
/// comment or an open quote of that line.
fn quoted_or_commented(line_prefix: &[u8]) -> bool {
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < line_prefix.len() {
        match (quote, line_prefix[i]) {
            (Some(_), b'\\') => i += 1,
            (Some(q), b) if b == q => quote = None,
            (None, b'"' | b'\'') => quote = Some(line_prefix[i]),
            (None, b'#') => return true,
            _ => {}
        }
        i += 1;
    }
    quote.is_some()
}

/// The byte before `at`, skipping spaces, tabs and line breaks.
pub(crate) fn previous_byte(src: &[u8], at: usize) -> Option<(usize, u8)> {
    src[..at.min(src.len())]
        .iter()
        .enumerate()
        .rev()
        .find(|(_, b)| !b.is_ascii_whitespace() && **b != b'\\')
        .map(|(i, b)| (i, *b))
}

/// The text from `at` on, after spaces and tabs.
pub(crate) fn rest_of_line(src: &[u8], at: usize) -> &[u8] {
    let tail = src.get(at..).unwrap_or(&[]);
    let end = memchr::memchr(b'\n', tail).unwrap_or(tail.len());
    let line = &tail[..end];
    &line[line
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count()..]
}

/// Whether `after`, the text following a name, makes the name a call or
/// an assignment target (`=`, `+=`, `//=`, `<<=`; not `==`, `<=`, `>=`),
/// where an expression cannot replace it.
pub(crate) fn called_or_assigned(after: &[u8]) -> bool {
    if after.starts_with(b"(") {
        return true;
    }
    let operator = after
        .iter()
        .take_while(|b| b"+-*/%&|^@<>".contains(b))
        .count();
    let comparison = operator == 1 && matches!(after[0], b'<' | b'>');
    let rest = &after[operator..];
    rest.starts_with(b"=") && !rest.starts_with(b"==") && !comparison
}

/// How many brackets are open at `at`, strings and comments skipped: a
/// line break inside brackets continues the statement; outside, it ends it
/// (`""` and `"cuda"` on two lines are two statements, not one string).
pub(crate) fn bracket_depth(src: &[u8], at: usize) -> usize {
    let end = at.min(src.len());
    let mut depth = 0usize;
    let mut i = 0;
    while i < end {
        match src[i] {
            b'#' => i = memchr::memchr(b'\n', &src[i..end]).map_or(end, |n| i + n),
            b'"' | b'\'' => i = string_end(src, i).unwrap_or(i + 1),
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    depth
}

/// Whether the text between two tokens keeps them in one statement: no
/// line break, a backslash continuation, or open brackets at `at`.
pub(crate) fn same_statement(src: &[u8], between: TextRange, at: usize) -> bool {
    let text = src.get(between.start..between.end).unwrap_or(&[]);
    !text.contains(&b'\n') || text.contains(&b'\\') || bracket_depth(src, at) > 0
}

/// Where the string literal starting at `at`, after spaces, line breaks
/// and backslash continuations, begins (its prefix letters included).
pub(crate) fn string_after(src: &[u8], at: usize) -> Option<usize> {
    let tail = src.get(at..).unwrap_or(&[]);
    let skip = tail
        .iter()
        .take_while(|b| b.is_ascii_whitespace() || **b == b'\\')
        .count();
    let tail = &tail[skip..];
    let word = tail.iter().take_while(|&&b| is_ident(b)).count();
    let string = matches!(tail.get(word), Some(b'"' | b'\''))
        && (word == 0 || is_string_prefix(&tail[..word]));
    string.then_some(at + skip)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn texts<'a>(src: &'a str, call: &Call) -> Vec<&'a str> {
        call.args
            .iter()
            .map(|a| &src[a.range.start..a.range.end])
            .collect()
    }

    #[test]
    fn call_arguments_split_at_top_level_commas_only() {
        let src = "x.cuda(f(a, b), \"),\", non_blocking=True,)";
        let call = call_after(src.as_bytes(), 6).unwrap();
        assert_eq!(
            texts(src, &call),
            ["f(a, b)", "\"),\"", "non_blocking=True"]
        );
        assert_eq!(call.close, src.len() - 1);
        assert_eq!(call.args[2].keyword.as_deref(), Some("non_blocking"));
        assert_eq!(call.positional().count(), 2);
    }

    #[test]
    fn empty_calls_and_comparisons_are_not_keywords() {
        let src = "f( ) + g(a == b, **kw)";
        assert!(call_after(src.as_bytes(), 1).unwrap().args.is_empty());
        let call = call_after(src.as_bytes(), 8).unwrap();
        assert_eq!(call.args[0].keyword, None);
        assert!(call.args[1].starred);
        assert!(call_after(b"x.cuda", 6).is_none());
    }

    #[test]
    fn object_start_walks_names_calls_and_subscripts() {
        let src = "assert model(x)[0].out.is_cuda or y";
        let dot = src.find(".is_cuda").unwrap();
        assert_eq!(object_start(src.as_bytes(), dot), Some(7));
        let src = "ok = not t.is_cuda";
        assert_eq!(
            object_start(src.as_bytes(), src.find(".is").unwrap()),
            Some(9)
        );
        let src = "f(\")\").is_cuda";
        assert_eq!(object_start(src.as_bytes(), src.find(".is").unwrap()), None);
    }

    #[test]
    fn import_statements_are_recognised_across_lines() {
        let src = "from torch.cuda import (\n    amp,\n    nvtx,\n)\nx = amp.GradScaler()\n";
        assert!(in_import_statement(
            src.as_bytes(),
            src.find("nvtx").unwrap()
        ));
        assert!(!in_import_statement(
            src.as_bytes(),
            src.find("amp.Grad").unwrap()
        ));
        assert!(in_import_statement(b"import torch.cuda", 7));
    }

    #[test]
    fn code_ranges_leave_out_strings_and_comments() {
        let src = "a = 'x' # c\nb = rb\"\"\"y\n\"\"\"\nc";
        let code: String = code_ranges(src.as_bytes())
            .iter()
            .map(|r| &src[r.start..r.end])
            .collect();
        assert_eq!(code, "a =  \nb = \nc");
    }

    #[test]
    fn assignments_and_calls_are_told_from_comparisons() {
        for after in ["= 1", "+= 1", "//= 2", "<<= 1", "()"] {
            assert!(called_or_assigned(after.as_bytes()), "{after}");
        }
        for after in ["== 1", "<= 1", ">= 1", "!= 1", "or x", ""] {
            assert!(!called_or_assigned(after.as_bytes()), "{after}");
        }
    }

    #[test]
    fn adjacent_strings_are_seen() {
        assert_eq!(string_after(b" f'x'", 0), Some(1));
        assert_eq!(string_after(b"\n  \"y\"", 0), Some(3));
        assert_eq!(string_after(b" if x", 0), None);
        assert_eq!(previous_byte(b"'a' ", 4), Some((2, b'\'')));
    }
}

/// Where a new top-level import can go when the file has no `import
/// torch` to follow: after a shebang, the leading comments, the module
/// docstring and `from __future__` imports (which must come first), i.e.
/// at the start of the first other statement.
pub(crate) fn import_point(src: &[u8]) -> usize {
    let mut at = 0;
    while at < src.len() {
        let line_end = memchr::memchr(b'\n', &src[at..]).map_or(src.len(), |n| at + n + 1);
        let line = &src[at..line_end];
        let text = &line[line
            .iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .count()..];
        let blank = text.is_empty() || text.starts_with(b"\r") || text == b"\n";
        let skip = if blank || text.starts_with(b"#") || text.starts_with(b"from __future__ ") {
            Some(line_end)
        } else if at == first_statement(src) && starts_string(text) {
            string_statement_end(src, at + (line.len() - text.len()))
        } else {
            None
        };
        match skip {
            Some(next) if next > at => at = next,
            _ => return at,
        }
    }
    src.len()
}

/// The offset of the first line that is not blank or a comment.
fn first_statement(src: &[u8]) -> usize {
    let mut at = 0;
    for line in src.split_inclusive(|&b| b == b'\n') {
        let text = line.trim_ascii_start();
        if !(text.is_empty() || text.starts_with(b"#")) {
            return at;
        }
        at += line.len();
    }
    at
}

fn starts_string(text: &[u8]) -> bool {
    let word = text.iter().take_while(|&&b| is_ident(b)).count();
    matches!(text.get(word), Some(b'"' | b'\'')) && (word == 0 || is_string_prefix(&text[..word]))
}

/// The start of the line after the string literal (a docstring) at `at`.
fn string_statement_end(src: &[u8], at: usize) -> Option<usize> {
    let quote = at + src[at..].iter().take_while(|&&b| is_ident(b)).count();
    let end = string_end(src, quote)?;
    Some(memchr::memchr(b'\n', &src[end..]).map_or(src.len(), |n| end + n + 1))
}

#[cfg(test)]
mod import_point_tests {
    use super::import_point;

    fn rest(src: &str) -> &str {
        &src[import_point(src.as_bytes())..]
    }

    #[test]
    fn new_imports_go_after_docstrings_and_future_imports() {
        assert_eq!(rest("#!/usr/bin/env python\n# c\n\"\"\"Doc\nmore\"\"\"\nfrom __future__ import annotations\nimport os\n"), "import os\n");
        assert_eq!(rest("x = 1\n"), "x = 1\n");
        assert_eq!(rest("# only a comment\n"), "");
        assert_eq!(rest("'''doc'''\n\nimport os\n"), "import os\n");
    }
}
