//! What a set of C headers declares: functions with their parameter types,
//! enumerators, constants and macros with their values, and type names.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::lex::{lex, Token};
use super::HeaderError;

/// A function as a header declares it, its types normalised
/// ([`normalise_type`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredFunction {
    pub returns: String,
    pub params: Vec<String>,
    /// The header, relative to the include directory it was found under.
    pub header: String,
}

/// Everything one release's headers declare.
#[derive(Debug, Clone, Default)]
pub struct HeaderFacts {
    /// Every declaration of each function (a header may declare one under
    /// `#if` branches twice).
    pub functions: BTreeMap<String, Vec<DeclaredFunction>>,
    /// Enumerators, `static const` integers and object-like macros, with
    /// their value where it is an integer expression of known names.
    pub constants: BTreeMap<String, Option<i64>>,
    /// typedef names, struct, union and enum tags.
    pub types: BTreeSet<String>,
    /// How many header files were read.
    pub files: usize,
}

impl HeaderFacts {
    /// Reads every `.h` file under each of `dirs` (recursively).
    pub fn scan(dirs: &[PathBuf]) -> Result<HeaderFacts, HeaderError> {
        let mut facts = HeaderFacts::default();
        for dir in dirs {
            let mut files = Vec::new();
            collect_headers(dir, &mut files)?;
            files.sort();
            for path in files {
                let text = std::fs::read(&path).map_err(|source| HeaderError::Read {
                    path: path.clone(),
                    source,
                })?;
                let relative = path.strip_prefix(dir).unwrap_or(&path);
                facts.add(
                    &String::from_utf8_lossy(&text),
                    &relative.display().to_string(),
                );
            }
        }
        Ok(facts)
    }

    /// Adds what `text` (the header `header`) declares.
    pub fn add(&mut self, text: &str, header: &str) {
        self.files += 1;
        let lexed = lex(text);
        for (name, body) in &lexed.defines {
            let value = evaluate(body, &self.constants);
            self.constants.entry(name.clone()).or_insert(value);
        }
        for statement in statements(&lexed.tokens) {
            self.statement(statement, header);
        }
    }

    /// Whether `name` is declared as anything.
    pub fn declares(&self, name: &str) -> bool {
        self.functions.contains_key(name)
            || self.constants.contains_key(name)
            || self.types.contains(name)
    }

    fn statement(&mut self, tokens: &[Token], header: &str) {
        self.enums(tokens);
        let first = tokens.first().and_then(Token::ident);
        match first {
            Some("typedef") => self.typedef(tokens),
            Some("struct" | "union" | "enum") => self.tag(tokens),
            Some("static") if is_constant(tokens) => self.constant(tokens),
            _ => {
                if let Some((name, function)) = function(tokens, header) {
                    self.functions.entry(name).or_default().push(function);
                }
            }
        }
    }

    /// The enumerators of every `enum { ... }` in the statement.
    fn enums(&mut self, tokens: &[Token]) {
        for (i, token) in tokens.iter().enumerate() {
            if token.ident() != Some("enum") {
                continue;
            }
            let mut open = i + 1;
            if tokens.get(open).and_then(Token::ident).is_some() {
                open += 1;
            }
            if !tokens.get(open).is_some_and(|t| t.is('{')) {
                continue;
            }
            let close = matching(tokens, open).unwrap_or(tokens.len());
            let mut next = Some(0i64);
            for item in split_top(&tokens[open + 1..close], ',') {
                let Some(name) = item.first().and_then(Token::ident) else {
                    continue;
                };
                let value = if item.get(1).is_some_and(|t| t.is('=')) {
                    evaluate(&item[2..], &self.constants)
                } else {
                    next
                };
                self.constants.entry(name.to_owned()).or_insert(value);
                next = value.and_then(|v| v.checked_add(1));
            }
        }
    }

    fn typedef(&mut self, tokens: &[Token]) {
        self.tag(&tokens[1..]);
        // `typedef R (*NAME)(...)`: the name is inside the first parentheses.
        if let Some(open) = tokens.iter().position(|t| t.is('(')) {
            if tokens.get(open + 1).is_some_and(|t| t.is('*')) {
                if let Some(name) = tokens.get(open + 2).and_then(Token::ident) {
                    self.types.insert(name.to_owned());
                    return;
                }
            }
        }
        // `typedef ... { ... } NAME, *PNAME;` or `typedef T NAME;`.
        let after_body = tokens
            .iter()
            .rposition(|t| t.is('}'))
            .map_or(1, |close| close + 1);
        for part in split_top(&tokens[after_body.min(tokens.len())..], ',') {
            if let Some(name) = part
                .iter()
                .rev()
                .find_map(Token::ident)
                .filter(|n| !is_keyword(n))
            {
                self.types.insert(name.to_owned());
            }
        }
    }

    /// `struct TAG`, `enum TAG` at the start of a declaration.
    fn tag(&mut self, tokens: &[Token]) {
        if let (Some("struct" | "union" | "enum"), Some(tag)) = (
            tokens.first().and_then(Token::ident),
            tokens.get(1).and_then(Token::ident),
        ) {
            self.types.insert(tag.to_owned());
        }
    }

    /// `static const int NAME = VALUE;`
    fn constant(&mut self, tokens: &[Token]) {
        let Some(eq) = tokens.iter().position(|t| t.is('=')) else {
            return;
        };
        if let Some(name) = tokens[..eq].iter().rev().find_map(Token::ident) {
            let value = evaluate(&tokens[eq + 1..], &self.constants);
            self.constants.entry(name.to_owned()).or_insert(value);
        }
    }
}

fn collect_headers(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), HeaderError> {
    let entries = std::fs::read_dir(dir).map_err(|source| HeaderError::Read {
        path: dir.to_owned(),
        source,
    })?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_headers(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "h" || e == "hpp") {
            out.push(path);
        }
    }
    Ok(())
}

/// `static const T NAME = ...;` (an `=` before any parenthesis).
fn is_constant(tokens: &[Token]) -> bool {
    let eq = tokens.iter().position(|t| t.is('='));
    let paren = tokens.iter().position(|t| t.is('('));
    eq.is_some_and(|e| paren.is_none_or(|p| e < p))
}

fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "typedef" | "struct" | "union" | "enum" | "const" | "volatile" | "extern" | "static"
    )
}

/// Top-level declarations: `;`-terminated, or a `{ ... }` body that ends a
/// function definition or a namespace/`extern "C"` block's content.
fn statements(tokens: &[Token]) -> Vec<&[Token]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        if token.is(';') {
            out.push(&tokens[start..i]);
            start = i + 1;
        } else if token.is('}') {
            // The end of an `extern "C"` or namespace block.
            start = i + 1;
        } else if token.is('{') {
            let head = &tokens[start..i];
            if opens_block(head) {
                start = i + 1;
            } else {
                let close = matching(tokens, i).unwrap_or(tokens.len() - 1);
                let is_definition =
                    head.last().is_some_and(|t| t.is(')')) && !head.iter().any(|t| t.is('='));
                if is_definition {
                    out.push(&tokens[start..i]);
                    start = close + 1;
                }
                i = close;
            }
        }
        i += 1;
    }
    out
}

/// `extern "C"` or `namespace NAME` before a `{`.
fn opens_block(head: &[Token]) -> bool {
    match head {
        [Token::Ident(e), Token::Str(_)] => e == "extern",
        [Token::Ident(n), ..] => n == "namespace",
        _ => false,
    }
}

/// The index of the bracket closing the one at `open`.
fn matching(tokens: &[Token], open: usize) -> Option<usize> {
    let (o, c) = match tokens.get(open)? {
        Token::Punct('{') => ('{', '}'),
        Token::Punct('(') => ('(', ')'),
        Token::Punct('[') => ('[', ']'),
        _ => return None,
    };
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate().skip(open) {
        if token.is(o) {
            depth += 1;
        } else if token.is(c) {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// `tokens` split at `sep` outside brackets.
fn split_top(tokens: &[Token], sep: char) -> Vec<&[Token]> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Punct('(' | '[' | '{') => depth += 1,
            Token::Punct(')' | ']' | '}') => depth -= 1,
            Token::Punct(c) if *c == sep && depth == 0 => {
                out.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < tokens.len() {
        out.push(&tokens[start..]);
    }
    out
}

/// A function declaration `[MACROS] RET NAME(PARAMS) [attributes]`.
fn function(tokens: &[Token], header: &str) -> Option<(String, DeclaredFunction)> {
    let mut i = 0;
    let mut returns = Vec::new();
    while i < tokens.len() {
        let token = &tokens[i];
        let next_is_paren = tokens.get(i + 1).is_some_and(|t| t.is('('));
        match token.ident() {
            // An attribute or visibility macro with arguments.
            Some(word) if next_is_paren && is_annotation(word) => {
                i = matching(tokens, i + 1)? + 1;
                continue;
            }
            Some(name) if next_is_paren => {
                if returns.is_empty() {
                    return None;
                }
                let close = matching(tokens, i + 1)?;
                let params = split_top(&tokens[i + 2..close], ',')
                    .into_iter()
                    .map(parameter_type)
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>();
                let params = if params == ["void"] {
                    Vec::new()
                } else {
                    params
                };
                return Some((
                    name.to_owned(),
                    DeclaredFunction {
                        returns: normalise(&returns),
                        params,
                        header: header.to_owned(),
                    },
                ));
            }
            Some(word) if is_annotation(word) || matches!(word, "extern" | "inline") => {}
            _ => returns.push(token.clone()),
        }
        i += 1;
    }
    None
}

/// A visibility or attribute macro: all capitals (`ACL_FUNC_VISIBILITY`,
/// `ACLNN_API`, `ACL_DEPRECATED_MESSAGE("...")`) or `__attribute__`.
fn is_annotation(word: &str) -> bool {
    word.starts_with("__")
        || (word.len() > 1
            && word.contains('_')
            && word
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
}

/// The type of one parameter, its name dropped (`const char *path` →
/// `const char*`; `int64_t dims[]` → `int64_t*`).
fn parameter_type(tokens: &[Token]) -> String {
    let mut tokens: Vec<Token> = tokens.to_vec();
    let mut array = false;
    if let Some(open) = tokens.iter().position(|t| t.is('[')) {
        tokens.truncate(open);
        array = true;
    }
    let words = tokens.iter().filter(|t| t.ident().is_some()).count();
    let named = tokens
        .last()
        .and_then(Token::ident)
        .is_some_and(|last| words > 1 && !is_type_word(last));
    if named {
        tokens.pop();
    }
    if array {
        tokens.push(Token::Punct('*'));
    }
    // A top-level `const` (`const aclrtStream stream`, `char *const p`) is
    // not part of a function's type in C.
    let pointer = tokens.iter().any(|t| t.is('*') || t.is('&'));
    if tokens.last().and_then(Token::ident) == Some("const") && pointer {
        tokens.pop();
    } else if !pointer && tokens.first().and_then(Token::ident) == Some("const") && tokens.len() > 1
    {
        tokens.remove(0);
    }
    normalise(&tokens)
}

fn is_type_word(word: &str) -> bool {
    matches!(
        word,
        "int"
            | "char"
            | "short"
            | "long"
            | "float"
            | "double"
            | "void"
            | "bool"
            | "unsigned"
            | "signed"
            | "const"
            | "volatile"
    )
}

/// Type tokens as one spelling: single spaces between words, `*` and `&`
/// attached to what they follow, `struct`/`enum` keywords dropped.
fn normalise(tokens: &[Token]) -> String {
    let mut out = String::new();
    for token in tokens {
        match token {
            Token::Ident(word) if matches!(word.as_str(), "struct" | "enum" | "union") => {}
            Token::Ident(word) | Token::Number(word) => {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(word);
            }
            Token::Punct(c) => out.push(*c),
            Token::Ellipsis => out.push_str("..."),
            Token::Str(s) => out.push_str(s),
            Token::Shift(c) => {
                out.push(*c);
                out.push(*c);
            }
        }
    }
    out
}

/// The normalised spelling of a C type or parameter as a table writes it
/// (`const char *configPath` → `const char*`).
pub fn normalise_type(text: &str) -> String {
    let lexed = lex(text);
    parameter_type(&lexed.tokens)
}

/// The value of an integer constant expression over `known` names.
fn evaluate(tokens: &[Token], known: &BTreeMap<String, Option<i64>>) -> Option<i64> {
    let mut parser = Expr {
        tokens,
        at: 0,
        known,
    };
    let value = parser.binary(0)?;
    (parser.at == tokens.len()).then_some(value)
}

struct Expr<'a> {
    tokens: &'a [Token],
    at: usize,
    known: &'a BTreeMap<String, Option<i64>>,
}

impl Expr<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn binary(&mut self, min: u8) -> Option<i64> {
        let mut left = self.unary()?;
        loop {
            let (op, power) = match self.peek() {
                Some(Token::Punct('|')) => ('|', 1),
                Some(Token::Punct('^')) => ('^', 2),
                Some(Token::Punct('&')) => ('&', 3),
                Some(Token::Shift(c)) => (*c, 4),
                Some(Token::Punct('+')) => ('+', 5),
                Some(Token::Punct('-')) => ('-', 5),
                Some(Token::Punct('*')) => ('*', 6),
                _ => return Some(left),
            };
            if power < min {
                return Some(left);
            }
            self.at += 1;
            let right = self.binary(power + 1)?;
            left = match op {
                '|' => left | right,
                '^' => left ^ right,
                '&' => left & right,
                '<' => left.checked_shl(u32::try_from(right).ok()?)?,
                '>' => left.checked_shr(u32::try_from(right).ok()?)?,
                '+' => left.checked_add(right)?,
                '-' => left.checked_sub(right)?,
                _ => left.checked_mul(right)?,
            };
        }
    }

    fn unary(&mut self) -> Option<i64> {
        let token = self.peek()?.clone();
        self.at += 1;
        match token {
            Token::Punct('-') => self.unary()?.checked_neg(),
            Token::Punct('~') => Some(!self.unary()?),
            Token::Punct('+') => self.unary(),
            Token::Punct('(') => {
                // A cast `(type)` is skipped; otherwise a parenthesised value.
                let is_cast = matches!(
                    (self.peek(), self.tokens.get(self.at + 1)),
                    (Some(Token::Ident(_)), Some(Token::Punct(')')))
                ) && self
                    .peek()
                    .and_then(Token::ident)
                    .is_some_and(|w| !self.known.contains_key(w));
                if is_cast {
                    self.at += 2;
                    return self.unary();
                }
                let value = self.binary(0)?;
                self.peek()
                    .is_some_and(|t| t.is(')'))
                    .then(|| self.at += 1)?;
                Some(value)
            }
            Token::Number(text) => number(&text),
            Token::Ident(name) => self.known.get(&name).copied().flatten(),
            _ => None,
        }
    }
}

fn number(text: &str) -> Option<i64> {
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        return u64::from_str_radix(hex, 16)
            .ok()
            .and_then(|v| i64::try_from(v).ok());
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return i64::from_str_radix(&digits[1..], 8).ok();
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(text: &str) -> HeaderFacts {
        let mut facts = HeaderFacts::default();
        facts.add(text, "t.h");
        facts
    }

    #[test]
    fn functions_keep_their_parameter_types() {
        let f = facts(
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\
             ACL_DEPRECATED_MESSAGE(\"use g\") ACL_FUNC_VISIBILITY aclError aclrtFoo(const char *path, void **p, int64_t dims[], unsigned int n);\n\
             ACLNN_API aclnnStatus aclnnX(void);\n\
             #ifdef __cplusplus\n}\n#endif\n",
        );
        let foo = &f.functions["aclrtFoo"][0];
        assert_eq!(foo.returns, "aclError");
        assert_eq!(
            foo.params,
            ["const char*", "void**", "int64_t*", "unsigned int"]
        );
        assert!(f.functions["aclnnX"][0].params.is_empty());
    }

    #[test]
    fn enumerators_constants_and_macros_have_values() {
        let f = facts(
            "#define ACL_EVENT_SYNC 0x00000001u\n#define ACL_X (ACL_EVENT_SYNC << 3)\n\
             static const int ACL_ERROR_NONE = 0;\n\
             typedef enum aclTag { A = -1, B, C = 1 << 4, D } aclE;\n\
             typedef void (*aclrtCb)(void *arg);\ntypedef struct S S;\n\
             static inline int helper(int a) { return a; }\nint after(int b);\n",
        );
        assert_eq!(f.constants["ACL_EVENT_SYNC"], Some(1));
        assert_eq!(f.constants["ACL_X"], Some(8));
        assert_eq!(f.constants["ACL_ERROR_NONE"], Some(0));
        assert_eq!(f.constants["B"], Some(0));
        assert_eq!(f.constants["D"], Some(17));
        for ty in ["aclTag", "aclE", "aclrtCb", "S"] {
            assert!(f.types.contains(ty), "{ty}");
        }
        assert!(f.functions.contains_key("helper"));
        assert_eq!(f.functions["after"][0].params, ["int"]);
    }

    #[test]
    fn table_parameters_normalise_like_header_ones() {
        assert_eq!(normalise_type("const aclTensor *self"), "const aclTensor*");
        assert_eq!(normalise_type("aclrtStream stream"), "aclrtStream");
        assert_eq!(normalise_type("uint64_t"), "uint64_t");
        assert_eq!(normalise_type("struct aclX * x"), "aclX*");
        assert_eq!(normalise_type("const aclrtStream stream"), "aclrtStream");
        assert_eq!(normalise_type("char * const p"), "char*");
        assert_eq!(normalise_type("const char *p"), "const char*");
    }
}
