//! A small C lexer for vendor headers: comments and preprocessor lines out,
//! `#define`s kept apart, the rest as tokens.

/// One token of C code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    Ident(String),
    Number(String),
    Str(String),
    Punct(char),
    /// `...`
    Ellipsis,
    /// `<<` or `>>`
    Shift(char),
}

impl Token {
    pub(crate) fn ident(&self) -> Option<&str> {
        match self {
            Token::Ident(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn is(&self, c: char) -> bool {
        *self == Token::Punct(c)
    }
}

/// A header split into its `#define NAME body` lines (object-like macros
/// only) and the tokens of everything that is not a preprocessor line.
pub(crate) struct Lexed {
    pub(crate) defines: Vec<(String, Vec<Token>)>,
    pub(crate) tokens: Vec<Token>,
}

pub(crate) fn lex(text: &str) -> Lexed {
    let code = strip_comments(text);
    let mut defines = Vec::new();
    let mut body = String::with_capacity(code.len());
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        if !line.trim_start().starts_with('#') {
            body.push_str(line);
            body.push('\n');
            continue;
        }
        let mut directive = line.trim_start()[1..].to_owned();
        while directive.ends_with('\\') {
            directive.pop();
            directive.push(' ');
            directive.push_str(lines.next().unwrap_or_default());
        }
        let directive = directive.trim_start();
        if let Some(rest) = directive.strip_prefix("define") {
            if rest.starts_with([' ', '\t']) {
                if let Some(define) = object_macro(rest.trim_start()) {
                    defines.push(define);
                }
            }
        }
    }
    Lexed {
        defines,
        tokens: tokens(&body),
    }
}

/// `NAME body` of an object-like macro (a function-like one is `NAME(`).
fn object_macro(text: &str) -> Option<(String, Vec<Token>)> {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let (name, rest) = text.split_at(end);
    if name.is_empty() || rest.starts_with('(') {
        return None;
    }
    Some((name.to_owned(), tokens(rest)))
}

/// The text with comments replaced by a space (strings kept whole).
pub(crate) fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'\'' => i = skip_quoted(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[copied..i]);
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
                // Keep the line breaks so that directives stay on their lines.
                let newlines = text[i..end].matches('\n').count();
                out.push(' ');
                out.extend(std::iter::repeat_n('\n', newlines));
                i = end;
                copied = i;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[copied..i]);
                i = text[i..].find('\n').map_or(bytes.len(), |e| i + e);
                copied = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The index after the string or character literal starting at `start`.
fn skip_quoted(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    (i + 1).min(bytes.len())
}

fn tokens(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let end = scan_while(bytes, i, |b| b.is_ascii_alphanumeric() || b == b'_');
            out.push(Token::Ident(text[i..end].to_owned()));
            i = end;
        } else if c.is_ascii_digit() {
            let end = scan_while(bytes, i, |b| b.is_ascii_alphanumeric() || b == b'.');
            out.push(Token::Number(text[i..end].to_owned()));
            i = end;
        } else if c == b'"' || c == b'\'' {
            let end = skip_quoted(bytes, i);
            out.push(Token::Str(text[i..end].to_owned()));
            i = end;
        } else if text[i..].starts_with("...") {
            out.push(Token::Ellipsis);
            i += 3;
        } else if text[i..].starts_with("<<") || text[i..].starts_with(">>") {
            out.push(Token::Shift(char::from(c)));
            i += 2;
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(Token::Punct(ch));
            i += ch.len_utf8();
        }
    }
    out
}

fn scan_while(bytes: &[u8], start: usize, keep: impl Fn(u8) -> bool) -> usize {
    let mut end = start;
    while end < bytes.len() && keep(bytes[end]) {
        end += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_go_and_directives_stay_on_their_lines() {
        let lexed = lex("/* a\n b */ #define X 0x1u // one\n#define F(a) a\nint f(void); // f(\n");
        assert_eq!(lexed.defines.len(), 1);
        assert_eq!(lexed.defines[0].0, "X");
        assert_eq!(lexed.defines[0].1, vec![Token::Number("0x1u".into())]);
        let idents: Vec<&str> = lexed.tokens.iter().filter_map(Token::ident).collect();
        assert_eq!(idents, ["int", "f", "void"]);
    }

    #[test]
    fn a_comment_marker_inside_a_string_is_text() {
        let lexed = lex("M(\"http://x\") int g(int a);");
        assert!(lexed.tokens.contains(&Token::Str("\"http://x\"".into())));
        assert!(lexed.tokens.contains(&Token::Ident("g".into())));
    }
}
