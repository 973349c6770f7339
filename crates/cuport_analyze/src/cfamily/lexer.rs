//! A comment-, string- and preprocessor-aware token scanner for C, C++ and
//! CUDA. It is the fast path of the analyser: one pass over the bytes, no
//! allocation per token beyond the token vector, and it never fails. Invalid
//! UTF-8 and stray bytes become `Other` tokens; unterminated comments and
//! strings end at the end of the file and are reported as lexical problems.

/// What a token is. Punctuation the analyser does not care about is `Punct`
/// with its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokKind {
    Ident,
    Number,
    /// A string literal (any prefix, raw strings included).
    Str,
    Char,
    /// `<path>` after `#include`.
    HeaderName,
    /// `#` at the start of a line; the directive's name is the next token.
    Directive,
    /// The end of a preprocessor directive's logical line.
    DirectiveEnd,
    /// `::`
    Scope,
    /// `->`
    Arrow,
    /// `<<<` (kernel launch configuration opens); also `<< <`, which nvcc
    /// accepts and editors' formatters produce (Visual Studio writes
    /// `k << <g, b >> > (x)`). The token then spans the blanks too.
    LaunchOpen,
    /// `>>>` (kernel launch configuration closes, or three template closers);
    /// also `>> >` while a launch configuration is open.
    LaunchClose,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    Punct(u8),
    /// A byte that starts no C token (non-ASCII outside literals, `@`, `$`, ...).
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) kind: TokKind,
    pub(crate) start: u32,
    pub(crate) end: u32,
}

impl Token {
    pub(crate) fn text<'a>(&self, src: &'a [u8]) -> &'a [u8] {
        &src[self.start as usize..self.end as usize]
    }

    pub(crate) fn is_punct(&self, byte: u8) -> bool {
        self.kind == TokKind::Punct(byte)
    }
}

/// A problem the scanner noticed; the scan goes on regardless.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LexProblem {
    pub(crate) offset: u32,
    pub(crate) message: &'static str,
}

/// A comment's byte range; kept so that suppression markers can be found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Comment {
    pub(crate) start: u32,
    pub(crate) end: u32,
}

#[derive(Debug, Default)]
pub(crate) struct Lexed {
    pub(crate) tokens: Vec<Token>,
    pub(crate) comments: Vec<Comment>,
    pub(crate) problems: Vec<LexProblem>,
}

/// Scans `src` into tokens. `src.len()` must fit in `u32` (callers enforce
/// a file size limit far below that).
pub(crate) fn lex(src: &[u8]) -> Lexed {
    let mut lexer = Lexer {
        src,
        pos: bom_len(src),
        at_line_start: true,
        in_directive: false,
        after_include: false,
        in_launch: false,
        out: Lexed {
            tokens: Vec::with_capacity(src.len() / 5),
            ..Lexed::default()
        },
    };
    lexer.run();
    lexer.out
}

/// A blank other than a line break: indentation is a large share of the
/// bytes, skipped a run at a time.
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c')
}

/// The bytes an identifier continues with (ASCII letters, digits, `_`), by
/// table: a word's bytes are the scan's most frequent.
static IDENT_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || b == b'_';
        byte += 1;
    }
    table
};

fn bom_len(src: &[u8]) -> usize {
    if src.starts_with(&[0xEF, 0xBB, 0xBF]) {
        3
    } else {
        0
    }
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    at_line_start: bool,
    in_directive: bool,
    after_include: bool,
    /// Between a `<<<` and its `>>>`: only there is `>> >` a launch close
    /// (elsewhere it closes three templates).
    in_launch: bool,
    out: Lexed,
}

impl Lexer<'_> {
    fn run(&mut self) {
        while self.pos < self.src.len() {
            self.step();
        }
        if self.in_directive {
            self.push(TokKind::DirectiveEnd, self.pos, self.pos);
        }
    }

    fn peek(&self, ahead: usize) -> u8 {
        self.src.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn push(&mut self, kind: TokKind, start: usize, end: usize) {
        self.out.tokens.push(Token {
            kind,
            start: start as u32,
            end: end as u32,
        });
    }

    fn problem(&mut self, offset: usize, message: &'static str) {
        self.out.problems.push(LexProblem {
            offset: offset as u32,
            message,
        });
    }

    fn step(&mut self) {
        let byte = self.src[self.pos];
        match byte {
            b'\n' => self.newline(),
            b if is_blank(b) => self.skip_while(is_blank),
            b'\\' if self.is_line_continuation() => self.skip_continuation(),
            b'/' if self.peek(1) == b'/' => self.line_comment(),
            b'/' if self.peek(1) == b'*' => self.block_comment(),
            b'#' if self.at_line_start && !self.in_directive => self.directive(),
            b'"' => self.string(self.pos),
            b'\'' => self.char_literal(),
            b'<' if self.after_include => self.header_name(),
            b'0'..=b'9' => self.number(),
            b'.' if self.peek(1).is_ascii_digit() => self.number(),
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.ident_or_prefixed_literal(),
            0x80..=0xFF => self.non_ascii(),
            _ => self.punct(byte),
        }
    }

    /// Moves past the run of bytes `keep` accepts at once: blanks and
    /// words are most of a file's bytes.
    fn skip_while(&mut self, keep: impl Fn(u8) -> bool) {
        self.pos += self.src[self.pos..]
            .iter()
            .position(|&b| !keep(b))
            .unwrap_or(self.src.len() - self.pos);
    }

    fn newline(&mut self) {
        if self.in_directive {
            self.push(TokKind::DirectiveEnd, self.pos, self.pos);
            self.in_directive = false;
            self.after_include = false;
        }
        self.pos += 1;
        self.at_line_start = true;
    }

    fn is_line_continuation(&self) -> bool {
        match self.peek(1) {
            b'\n' => true,
            b'\r' => self.peek(2) == b'\n',
            _ => false,
        }
    }

    fn skip_continuation(&mut self) {
        self.pos += if self.peek(1) == b'\r' { 3 } else { 2 };
    }

    fn line_comment(&mut self) {
        let start = self.pos;
        // Only a line break ends the comment, and only a backslash before
        // one continues it: the bytes between are skipped by memchr.
        loop {
            let Some(i) = memchr::memchr2(b'\n', b'\\', &self.src[self.pos..]) else {
                self.pos = self.src.len();
                break;
            };
            self.pos += i;
            if self.src[self.pos] == b'\n' {
                break;
            }
            if self.is_line_continuation() {
                self.skip_continuation();
            } else {
                self.pos += 1;
            }
        }
        self.out.comments.push(Comment {
            start: start as u32,
            end: self.pos as u32,
        });
    }

    fn block_comment(&mut self) {
        let start = self.pos;
        match memfind(&self.src[self.pos + 2..], b"*/") {
            Some(i) => self.pos += 2 + i + 2,
            None => {
                self.problem(start, "unterminated block comment");
                self.pos = self.src.len();
            }
        }
        self.out.comments.push(Comment {
            start: start as u32,
            end: self.pos as u32,
        });
    }

    fn directive(&mut self) {
        let start = self.pos;
        self.pos += 1;
        self.push(TokKind::Directive, start, self.pos);
        self.in_directive = true;
        self.at_line_start = false;
        while matches!(self.peek(0), b' ' | b'\t') {
            self.pos += 1;
        }
        let name_start = self.pos;
        while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
            self.pos += 1;
        }
        if self.pos > name_start {
            self.push(TokKind::Ident, name_start, self.pos);
        }
        let name = &self.src[name_start..self.pos];
        self.after_include = matches!(name, b"include" | b"include_next" | b"import");
    }

    /// A string literal whose opening quote is at `self.pos`; `start`
    /// includes any encoding prefix already consumed.
    fn string(&mut self, start: usize) {
        self.at_line_start = false;
        self.after_include = false;
        self.pos += 1;
        while self.pos < self.src.len() {
            match self.src[self.pos] {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    self.push(TokKind::Str, start, self.pos);
                    return;
                }
                b'\n' => break,
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.src.len());
        self.problem(start, "unterminated string literal");
        self.push(TokKind::Str, start, self.pos);
    }

    /// `R"delim( ... )delim"`; the `R` (and any prefix) is already consumed.
    fn raw_string(&mut self, start: usize) {
        self.at_line_start = false;
        let open = self.pos + 1;
        let paren = self.src[open..]
            .iter()
            .take(17)
            .position(|&b| b == b'(')
            .map(|i| open + i);
        let Some(paren) = paren else {
            self.string(start);
            return;
        };
        let mut closing = Vec::with_capacity(paren - open + 2);
        closing.push(b')');
        closing.extend_from_slice(&self.src[open..paren]);
        closing.push(b'"');
        match memfind(&self.src[paren..], &closing) {
            Some(i) => self.pos = paren + i + closing.len(),
            None => {
                self.problem(start, "unterminated raw string literal");
                self.pos = self.src.len();
            }
        }
        self.push(TokKind::Str, start, self.pos);
    }

    fn char_literal(&mut self) {
        let start = self.pos;
        self.at_line_start = false;
        self.pos += 1;
        while self.pos < self.src.len() {
            match self.src[self.pos] {
                b'\\' => self.pos += 2,
                b'\'' => {
                    self.pos += 1;
                    self.push(TokKind::Char, start, self.pos);
                    return;
                }
                b'\n' => break,
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.src.len());
        self.problem(start, "unterminated character literal");
        self.push(TokKind::Char, start, self.pos);
    }

    fn header_name(&mut self) {
        let start = self.pos;
        let end = self.src[start..]
            .iter()
            .position(|&b| b == b'>' || b == b'\n')
            .map_or(self.src.len(), |i| start + i);
        self.pos = if self.src.get(end) == Some(&b'>') {
            end + 1
        } else {
            end
        };
        self.after_include = false;
        self.push(TokKind::HeaderName, start, self.pos);
    }

    /// Numbers, including digit separators (`1'000`), exponents and suffixes.
    fn number(&mut self) {
        let start = self.pos;
        self.at_line_start = false;
        self.pos += 1;
        while self.pos < self.src.len() {
            let b = self.src[self.pos];
            let prev = self.src[self.pos - 1];
            let continues = b.is_ascii_alphanumeric()
                || b == b'.'
                || b == b'_'
                || (b == b'\'' && self.peek(1).is_ascii_alphanumeric())
                || ((b == b'+' || b == b'-') && matches!(prev, b'e' | b'E' | b'p' | b'P'));
            if !continues {
                break;
            }
            self.pos += 1;
        }
        self.push(TokKind::Number, start, self.pos);
    }

    fn ident_or_prefixed_literal(&mut self) {
        let start = self.pos;
        self.at_line_start = false;
        self.skip_while(|b| IDENT_BYTE[usize::from(b)]);
        let word = &self.src[start..self.pos];
        let next = self.peek(0);
        if next == b'"' && is_string_prefix(word) {
            if word.ends_with(b"R") {
                self.raw_string(start);
            } else {
                self.string(start);
            }
        } else if next == b'\'' && is_char_prefix(word) {
            self.pos = start + word.len();
            let lit_start = start;
            self.char_literal();
            if let Some(last) = self.out.tokens.last_mut() {
                last.start = lit_start as u32;
            }
        } else {
            self.push(TokKind::Ident, start, self.pos);
        }
    }

    fn non_ascii(&mut self) {
        let start = self.pos;
        self.at_line_start = false;
        while self.pos < self.src.len() && self.src[self.pos] >= 0x80 {
            self.pos += 1;
        }
        self.push(TokKind::Other, start, self.pos);
    }

    fn punct(&mut self, byte: u8) {
        let start = self.pos;
        self.at_line_start = false;
        let spaced_launch = match (byte, self.peek(1)) {
            (b'<', b'<') if !self.after_operator_keyword() => self
                .spaced_third(b'<')
                .map(|len| (TokKind::LaunchOpen, len)),
            (b'>', b'>') if self.in_launch => self
                .spaced_third(b'>')
                .map(|len| (TokKind::LaunchClose, len)),
            _ => None,
        };
        let (kind, len) = spaced_launch.unwrap_or_else(|| self.plain_punct(byte));
        self.pos += len;
        self.in_launch = match kind {
            TokKind::LaunchOpen => true,
            TokKind::LaunchClose | TokKind::Punct(b';' | b'{' | b'}') => false,
            _ => self.in_launch,
        };
        self.push(kind, start, self.pos);
    }

    /// The punctuation token starting with `byte` and its length.
    fn plain_punct(&self, byte: u8) -> (TokKind, usize) {
        match (byte, self.peek(1), self.peek(2)) {
            (b':', b':', _) => (TokKind::Scope, 2),
            (b'-', b'>', _) => (TokKind::Arrow, 2),
            (b'<', b'<', b'<') => (TokKind::LaunchOpen, 3),
            (b'>', b'>', b'>') => (TokKind::LaunchClose, 3),
            (b'<', b'<', b'=') => (TokKind::Punct(b'='), 3),
            (b'>', b'>', b'=') => (TokKind::Punct(b'='), 3),
            (b'<', b'<', _) => (TokKind::Shl, 2),
            (b'>', b'>', _) => (TokKind::Shr, 2),
            (b'<' | b'>' | b'=' | b'!', b'=', _) => (TokKind::Punct(b'='), 2),
            (b'&', b'&', _) | (b'|', b'|', _) => (TokKind::Punct(byte), 2),
            (b, _, _) if b.is_ascii_graphic() => (TokKind::Punct(b), 1),
            _ => (TokKind::Other, 1),
        }
    }

    /// `operator<< <T>(...)` names a template specialisation, not a launch.
    fn after_operator_keyword(&self) -> bool {
        self.out
            .tokens
            .last()
            .is_some_and(|t| t.kind == TokKind::Ident && t.text(self.src) == b"operator")
    }

    /// For `<< <` / `>> >` at the current position (`<<` or `>>` then
    /// blanks on the same line, then `third`): the length up to and including
    /// `third`. `a << <` cannot be a shift (no expression starts with `<`),
    /// so outside `operator<< <T>` the spelling is a launch.
    fn spaced_third(&self, third: u8) -> Option<usize> {
        let blanks = self.src[self.pos + 2..]
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let at = self.pos + 2 + blanks;
        (blanks > 0 && self.src.get(at) == Some(&third) && self.src.get(at + 1) != Some(&b'='))
            .then_some(at + 1 - self.pos)
    }
}

fn is_string_prefix(word: &[u8]) -> bool {
    matches!(
        word,
        b"L" | b"u" | b"U" | b"u8" | b"R" | b"LR" | b"uR" | b"UR" | b"u8R"
    )
}

fn is_char_prefix(word: &[u8]) -> bool {
    matches!(word, b"L" | b"u" | b"U" | b"u8")
}

/// First index of `needle` in `haystack`.
pub(crate) fn memfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds_and_text(src: &str) -> Vec<(TokKind, String)> {
        lex(src.as_bytes())
            .tokens
            .iter()
            .map(|t| {
                (
                    t.kind,
                    String::from_utf8_lossy(t.text(src.as_bytes())).into_owned(),
                )
            })
            .collect()
    }

    fn idents(src: &str) -> Vec<String> {
        kinds_and_text(src)
            .into_iter()
            .filter(|(k, _)| *k == TokKind::Ident)
            .map(|(_, t)| t)
            .collect()
    }

    #[test]
    fn comments_and_strings_hide_identifiers() {
        let src = "a /* cudaMalloc */ b // cudaFree\n\"cudaMemcpy\" R\"x(cudaSetDevice)x\" c";
        assert_eq!(idents(src), ["a", "b", "c"]);
    }

    #[test]
    fn spaced_launch_tokens_are_recognised() {
        let toks = kinds_and_text("k << <g, b >> > (x); v<w<u<int>> > y;");
        let friend = kinds_and_text("friend S& operator<< <T>(S&, X<T>);");
        assert_eq!(friend[4].0, TokKind::Shl, "{friend:?}");
        assert_eq!(toks[1], (TokKind::LaunchOpen, "<< <".to_owned()));
        assert_eq!(toks[5], (TokKind::LaunchClose, ">> >".to_owned()));
        let closers: Vec<_> = toks[13..].iter().map(|t| t.0).collect();
        assert!(closers.contains(&TokKind::Shr), "{toks:?}");
        assert!(!closers.contains(&TokKind::LaunchClose), "{toks:?}");
    }

    #[test]
    fn launch_tokens_are_recognised() {
        let toks = kinds_and_text("k<<<g, b>>>(x);");
        assert_eq!(toks[1].0, TokKind::LaunchOpen);
        assert_eq!(toks[5].0, TokKind::LaunchClose);
    }

    #[test]
    fn directives_end_at_unescaped_newlines() {
        let toks = kinds_and_text("#define F(x) \\\n  cudaFree(x)\nint y;");
        let end = toks
            .iter()
            .position(|(k, _)| *k == TokKind::DirectiveEnd)
            .unwrap_or_default();
        assert!(toks[..end].iter().any(|(_, t)| t == "cudaFree"));
        assert_eq!(toks[end + 1].1, "int");
    }

    #[test]
    fn include_paths_are_header_names() {
        let toks = kinds_and_text("#include <cuda_runtime.h>\n#include \"my.cuh\"\n");
        assert_eq!(toks[2], (TokKind::HeaderName, "<cuda_runtime.h>".into()));
        assert_eq!(toks[6], (TokKind::Str, "\"my.cuh\"".into()));
    }

    #[test]
    fn less_than_outside_include_is_punctuation() {
        let toks = kinds_and_text("if (a < b) {}");
        assert!(toks.iter().any(|(k, _)| *k == TokKind::Punct(b'<')));
    }

    #[test]
    fn digit_separators_and_char_literals() {
        assert_eq!(
            idents("int x = 1'000'000; char c = 'a'; y"),
            ["int", "x", "char", "c", "y"]
        );
    }

    #[test]
    fn unterminated_comment_is_a_problem_not_a_panic() {
        let lexed = lex(b"int a; /* never closed");
        assert_eq!(lexed.problems.len(), 1);
        assert_eq!(lexed.problems[0].message, "unterminated block comment");
    }

    #[test]
    fn bom_and_crlf_are_transparent() {
        assert_eq!(
            idents("\u{feff}int a;\r\n#define X 1\r\nint b;"),
            ["int", "a", "define", "X", "int", "b"]
        );
    }

    #[test]
    fn hash_inside_a_line_is_not_a_directive() {
        let toks = kinds_and_text("a # b");
        assert!(!toks.iter().any(|(k, _)| *k == TokKind::Directive));
    }

    /// Where a `//` comment starting at `start` ends, read a byte at a
    /// time: at the first line break no backslash continues.
    fn line_comment_end(src: &[u8], start: usize) -> usize {
        let mut at = start;
        while at < src.len() && src[at] != b'\n' {
            let continued = src[at] == b'\\'
                && (src.get(at + 1) == Some(&b'\n')
                    || (src.get(at + 1) == Some(&b'\r') && src.get(at + 2) == Some(&b'\n')));
            at += if !continued {
                1
            } else if src[at + 1] == b'\r' {
                3
            } else {
                2
            };
        }
        at
    }

    proptest::proptest! {
        /// The runs the scanner skips at once (blanks, words, line
        /// comments) end where a byte-by-byte reading ends them.
        #[test]
        fn runs_end_where_a_bytewise_reading_ends_them(
            src in proptest::collection::vec(
                proptest::sample::select(b"/\\\n\r \tab_1*\"#".to_vec()),
                0..80,
            )
        ) {
            let lexed = lex(&src);
            for comment in &lexed.comments {
                let (start, end) = (comment.start as usize, comment.end as usize);
                if src[start..].starts_with(b"//") {
                    proptest::prop_assert_eq!(end, line_comment_end(&src, start));
                }
            }
            for token in &lexed.tokens {
                let text = token.text(&src);
                proptest::prop_assert!(!text.iter().any(|b| matches!(b, b' ' | b'\t')) || token.kind != TokKind::Ident);
                if token.kind == TokKind::Ident {
                    let whole = text.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_');
                    let ends = src.get(token.end as usize).is_none_or(|&b| !(b.is_ascii_alphanumeric() || b == b'_'));
                    proptest::prop_assert!(whole && ends, "{:?}", String::from_utf8_lossy(text));
                }
            }
        }
    }
}
