//! Reading a few bytes of C/C++ source around a site, for the passes
//! after planning that look at the tokens next to one (declarations,
//! arguments, member accesses) where no parse tree is at hand.
use cuport_model::TextRange;

/// `cudnnHandle_t cudnn_handle;`: the name a declaration right after the
/// type declares (`*`, `&` and `const` between them are skipped).
pub(crate) fn declared_variable(src: &[u8], after_type: usize) -> Option<&str> {
    let mut at = after_type;
    loop {
        while src
            .get(at)
            .is_some_and(|b| b.is_ascii_whitespace() || *b == b'*' || *b == b'&')
        {
            at += 1;
        }
        let word = word_at(src, at)?;
        if word != "const" {
            let end = at + word.len();
            let rest = src[end..].iter().find(|b| !b.is_ascii_whitespace());
            return rest.is_some_and(|b| b";=,)[{".contains(b)).then_some(word);
        }
        at += word.len();
    }
}

/// Every name one declaration declares: `cudaDeviceProp prop, props[2];`.
pub(crate) fn declared_variables(src: &[u8], after_type: usize) -> Vec<&str> {
    let mut names = Vec::new();
    let mut at = after_type;
    while let Some(name) = declared_variable(src, at) {
        names.push(name);
        let name_end = name.as_ptr() as usize - src.as_ptr() as usize + name.len();
        match next_declarator(src, name_end) {
            Some(comma) => at = comma + 1,
            None => break,
        }
    }
    names
}

/// The `,` that starts the next declarator of the declaration (brackets
/// and initialisers skipped); `None` at its `;` or at a block.
fn next_declarator(src: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, b) in src.iter().enumerate().skip(from) {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' if depth == 0 => return None,
            b')' | b']' => depth -= 1,
            b',' if depth == 0 => return Some(k),
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

pub(crate) fn is_word(b: &u8) -> bool {
    b.is_ascii_alphanumeric() || *b == b'_'
}

pub(crate) fn word_at(src: &[u8], at: usize) -> Option<&str> {
    src.get(at)
        .filter(|b| b.is_ascii_alphabetic() || **b == b'_')?;
    std::str::from_utf8(&src[at..at + word_len(src, at)]).ok()
}

pub(crate) fn in_line_comment(src: &[u8], at: usize) -> bool {
    let line_start = src[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    memchr::memmem::find(&src[line_start..at], b"//").is_some()
}

/// Preceded by `(` or `,` and followed by `,` or `)` (spaces aside): the
/// text between `start` and `end` is one whole argument of a call.
pub(crate) fn whole_argument(src: &[u8], start: usize, end: usize) -> bool {
    let before = src[..start].iter().rev().find(|b| !b.is_ascii_whitespace());
    let after = src[end..].iter().find(|b| !b.is_ascii_whitespace());
    matches!(before, Some(b'(' | b',')) && matches!(after, Some(b',' | b')'))
}

/// `end` without the whitespace before it.
pub(crate) fn trim_end(src: &[u8], end: usize) -> usize {
    src[..end]
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1)
}

/// Where the identifier that ends at `end` starts (`end` when none does).
pub(crate) fn word_start(src: &[u8], end: usize) -> usize {
    end - src[..end].iter().rev().take_while(|b| is_word(b)).count()
}

/// What [`code_words`] does at a byte.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ByteRole {
    /// Starts nothing: a space, an operator, a byte of a wide character.
    Passed,
    /// Starts an identifier: an ASCII letter or `_`.
    Word,
    /// Starts a number, read past with its suffix (`1e5f`, `0x1F`).
    Number,
    /// May start a comment or a literal: `/`, `"`, `'`.
    CommentOrLiteral,
}

/// [`ByteRole`] of each byte value, by table: the scan decides every byte
/// of every file, most of them `Passed`.
static BYTE_ROLE: [ByteRole; 256] = {
    let mut roles = [ByteRole::Passed; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        roles[b] = if byte.is_ascii_alphabetic() || byte == b'_' {
            ByteRole::Word
        } else if byte.is_ascii_digit() {
            ByteRole::Number
        } else if byte == b'/' || byte == b'"' || byte == b'\'' {
            ByteRole::CommentOrLiteral
        } else {
            ByteRole::Passed
        };
        b += 1;
    }
    roles
};

/// Every identifier in `src[start..end]` outside comments, string and
/// character literals, with its offset: for passes that look for a word in
/// a function body (`double`, `printf`).
pub(crate) fn code_words(src: &[u8], start: usize, end: usize) -> Vec<(usize, &str)> {
    let end = end.min(src.len());
    let decoded = valid_prefix(src.get(start..end).unwrap_or_default());
    code_words_decoded(src, start, end, decoded)
}

/// [`code_words`] where the valid text at the start of the range
/// (`decoded`, from [`valid_prefix`]) is at hand already.
pub(crate) fn code_words_decoded<'s>(
    src: &'s [u8],
    start: usize,
    end: usize,
    decoded: &'s str,
) -> Vec<(usize, &'s str)> {
    let end = end.min(src.len());
    // The range is decoded once; a word is then a slice of that text.
    // Decoding each word on its own was a sixth of this scan
    // (callgrind on cuda-samples), and the scan is now half as long.
    let decoded = DecodedRange {
        start,
        text: decoded,
    };
    // About one word in fourteen bytes of C++, comments included
    // (cuda-samples: 715 k in 9.7 MB): room for most at once, rather than
    // a dozen copies while the list grows.
    let mut words = Vec::with_capacity(end.saturating_sub(start) / 16);
    let mut at = start;
    while at < end {
        match BYTE_ROLE[usize::from(src[at])] {
            ByteRole::Passed => at += 1,
            ByteRole::Word => {
                // A word runs on past `end`, as `word_at` reads it.
                let len = word_len(src, at);
                if let Some(word) = decoded.word(src, at, len) {
                    words.push((at, word));
                }
                at += len;
            }
            ByteRole::Number => at += word_len(&src[..end], at),
            ByteRole::CommentOrLiteral => {
                at = past_comment_or_literal(src, at, end).unwrap_or(at + 1);
            }
        }
    }
    words
}

/// The valid UTF-8 text at the start of a range of `src`, from which
/// [`code_words`] slices its words.
struct DecodedRange<'s> {
    start: usize,
    text: &'s str,
}

impl<'s> DecodedRange<'s> {
    /// The word of `len` bytes at `at` (ASCII word bytes, so always text):
    /// a slice of the decoded range where it lies inside, else decoded on
    /// its own (past an invalid byte, or running on past the range).
    fn word(&self, src: &'s [u8], at: usize, len: usize) -> Option<&'s str> {
        let inside = at
            .checked_sub(self.start)
            .and_then(|from| self.text.get(from..from + len));
        inside.or_else(|| word_at(src, at))
    }
}

/// The longest valid UTF-8 text at the start of `bytes` (all of it for
/// valid text).
pub(crate) fn valid_prefix(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&bytes[..error.valid_up_to()]).unwrap_or_default(),
    }
}

/// The length of the run of identifier bytes at `at`.
fn word_len(src: &[u8], at: usize) -> usize {
    src[at..].iter().take_while(|b| is_word(b)).count()
}

/// The byte that closes the bracket `open_b` at `open`, skipping comments
/// and literals.
pub(crate) fn closing_bracket(src: &[u8], open: usize, open_b: u8, close_b: u8) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < src.len() {
        if let Some(past) = past_comment_or_literal(src, i, src.len()) {
            i = past;
            continue;
        }
        match src[i] {
            b if b == open_b => depth += 1,
            b if b == close_b => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where a comment or a string or character literal that starts at `at`
/// ends (before `end`), or None where none starts there.
#[inline]
pub(crate) fn past_comment_or_literal(src: &[u8], at: usize, end: usize) -> Option<usize> {
    // Called for every byte of a scan: most bytes start nothing.
    if !matches!(src[at], b'/' | b'"' | b'\'') {
        return None;
    }
    match (src[at], src.get(at + 1).copied()) {
        (b'/', Some(b'/')) => Some(memchr::memchr(b'\n', &src[at..end]).map_or(end, |n| at + n)),
        (b'/', Some(b'*')) => {
            let rest = src.get(at + 2..end).unwrap_or_default();
            Some(memchr::memmem::find(rest, b"*/").map_or(end, |n| at + n + 4))
        }
        (quote @ (b'"' | b'\''), _) => Some(after_literal(src, at, end, quote)),
        _ => None,
    }
}

/// The offset after the string or character literal opening at `at`.
pub(crate) fn after_literal(src: &[u8], at: usize, end: usize, quote: u8) -> usize {
    let mut k = at + 1;
    while k < end {
        match src[k] {
            b'\\' => k += 2,
            b'\n' => return k,
            b if b == quote => return k + 1,
            _ => k += 1,
        }
    }
    end
}

/// Whether `text`, which starts inside a line (a call's or a launch's
/// text after its first byte), holds a preprocessor directive line.
pub(crate) fn holds_directive_line(text: &str) -> bool {
    text.lines()
        .skip(1)
        .any(|line| line.trim_start().starts_with('#'))
}

/// Whether `src[start..end]` (a call's argument) ends a statement with a
/// `;` of its own, outside brackets, comments and literals: malformed code
/// (`f(a, (());c X)`) that a template would rebuild into something else.
/// A lambda's body (`[] (T x) { return x; }`) is inside braces.
pub(crate) fn ends_a_statement(src: &[u8], start: usize, end: usize) -> bool {
    let mut depth = 0usize;
    let mut at = start;
    while at < end {
        if let Some(next) = past_comment_or_literal(src, at, end) {
            at = next;
            continue;
        }
        match src[at] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b';' if depth == 0 => return true,
            _ => {}
        }
        at += 1;
    }
    false
}

/// Where the qualified name whose last part starts at `at` starts: `ns::k`
/// and `::k` are launched and called as written, qualifier included.
pub(crate) fn qualified_name_start(src: &[u8], at: usize) -> usize {
    let mut start = at;
    loop {
        let before = trim_end(src, start);
        if before < 2 || &src[before - 2..before] != b"::" {
            return start;
        }
        let name_end = trim_end(src, before - 2);
        let name_start = word_start(src, name_end);
        if name_start == name_end {
            return before - 2;
        }
        start = name_start;
    }
}

/// Whether `text` is one call of `callee` and nothing else (`dim3(1, 2)`,
/// not `dim3(1) + d` or `dim3`).
pub(crate) fn is_one_call_of(text: &str, callee: &str) -> bool {
    let Some(rest) = text.trim().strip_prefix(callee) else {
        return false;
    };
    let rest = rest.trim_start();
    if !rest.starts_with('(') || !rest.ends_with(')') {
        return false;
    }
    // The `(` after the callee must close at the very end.
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1 == rest.len();
                }
            }
            _ => {}
        }
    }
    false
}

/// The functions of a file, each from the `(` of its parameter list to the
/// `}` of its body, in order: the outermost blocks opened right after a
/// `)` (qualifiers such as `const` or `noexcept` between them), outside
/// any other function. A name declared in one of them belongs to it; one
/// declared in none is at file (or namespace, or class) scope. A token
/// walk: a body after an attribute or a constructor's initialiser list
/// starts at that list's last `(`.
pub(crate) fn function_regions(src: &[u8]) -> Vec<TextRange> {
    const QUALIFIERS: [&str; 6] = [
        "const", "noexcept", "override", "final", "mutable", "volatile",
    ];
    let mut regions = Vec::new();
    let mut parens: Vec<usize> = Vec::new();
    let mut last_list: Option<(usize, usize)> = None;
    // Open braces: whether each is the body of a function this walk found.
    let mut braces: Vec<Option<usize>> = Vec::new();
    let mut i = 0;
    while i < src.len() {
        if let Some(past) = past_comment_or_literal(src, i, src.len()) {
            i = past;
            continue;
        }
        match src[i] {
            b'(' => parens.push(i),
            b')' => {
                if let Some(open) = parens.pop() {
                    if parens.is_empty() {
                        last_list = Some((open, i));
                    }
                }
            }
            b'{' => {
                let in_function = braces.iter().any(Option::is_some);
                let between = |close: usize| {
                    code_words(src, close + 1, i)
                        .iter()
                        .all(|(_, w)| QUALIFIERS.contains(w))
                        && src[close + 1..i]
                            .iter()
                            .all(|b| b.is_ascii_whitespace() || is_word(b) || *b == b'&')
                };
                let body = last_list
                    .filter(|&(_, close)| !in_function && parens.is_empty() && between(close))
                    .map(|(open, _)| open);
                braces.push(body);
            }
            b'}' => {
                if let Some(Some(open)) = braces.pop() {
                    regions.push(TextRange::new(open, i + 1));
                }
            }
            _ => {}
        }
        i += 1;
    }
    regions
}

/// The region of `regions` (from [`function_regions`]) that holds `at`.
pub(crate) fn region_at(regions: &[TextRange], at: usize) -> Option<TextRange> {
    regions
        .iter()
        .find(|r| r.start <= at && at < r.end)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::code_words;

    fn words(src: &str, start: usize, end: usize) -> Vec<(usize, &str)> {
        code_words(src.as_bytes(), start, end)
    }

    #[test]
    fn code_words_skip_comments_literals_and_numbers() {
        let src = "a1 /* b */ c // d\n\"e\\\"f\" 'g' 1e5f _h2 0x1F i";
        let found: Vec<&str> = words(src, 0, src.len()).into_iter().map(|w| w.1).collect();
        assert_eq!(found, ["a1", "c", "_h2", "i"]);
    }

    /// The scan as first written: each byte looked at in turn, each word
    /// decoded on its own.
    fn words_byte_by_byte(src: &[u8], start: usize, end: usize) -> Vec<(usize, &str)> {
        let end = end.min(src.len());
        let mut words = Vec::new();
        let mut at = start;
        while at < end {
            if let Some(word) = super::word_at(src, at) {
                words.push((at, word));
                at += word.len();
            } else if src[at].is_ascii_digit() {
                at += src[at..end]
                    .iter()
                    .take_while(|b| super::is_word(b))
                    .count();
            } else if let Some(past) = super::past_comment_or_literal(src, at, end) {
                at = past;
            } else {
                at += 1;
            }
        }
        words
    }

    proptest::proptest! {
        #[test]
        fn code_words_find_what_a_byte_by_byte_scan_finds(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "a", "_b9", " ", "\n", "/", "*", "//", "/*", "*/", "\"", "'", "\\",
                "1e5f", "0x1F", "é", "·", "\u{ff}", "(", ";",
            ]), 0..40),
            invalid in proptest::option::of(0usize..40),
            cut in (0usize..200, 0usize..200),
        ) {
            let mut src: Vec<u8> = pieces.concat().into_bytes();
            // A byte that is never UTF-8, somewhere in the text.
            if let Some(at) = invalid.filter(|&at| at < src.len()) {
                src[at] = 0xff;
            }
            let (start, end) = (cut.0.min(src.len()), cut.1);
            proptest::prop_assert_eq!(
                code_words(&src, start, end),
                words_byte_by_byte(&src, start, end)
            );
        }
    }

    #[test]
    fn code_words_take_a_word_whole_where_the_range_cuts_it() {
        // `end` inside `second`: the word is read whole, as `word_at` reads it.
        assert_eq!(words("first second", 0, 8), [(0, "first"), (6, "second")]);
        // A comment that runs past `end` ends the scan.
        assert_eq!(words("x /* y */ z", 0, 5), [(0, "x")]);
        assert_eq!(words("x y", 1, 3), [(2, "y")]);
    }
}
