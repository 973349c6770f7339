//! Which names a C/C++ statement can see, roughly: what a `[[kernel]]`
//! rule's launch values (`V = "V"`) may use where a launch becomes a call.
//! A launch value that names nothing in scope would make the port fail to
//! compile; the rule is then not applied there and says what is missing.
//!
//! This is a token walk, not a parser: the names visible at an offset are
//! those written before it outside comments and literals, less those
//! inside blocks that have closed (a function body, an `if` block) and
//! inside parameter lists of functions that do not enclose it. It errs
//! towards "in scope" (a name declared in a closed namespace block or a
//! class stays visible), so that a rule is never refused for a name a
//! compiler would find.
use std::collections::HashSet;

use crate::source_text::{after_literal, is_word, word_at};

/// The names visible at `at`, and the name of the function whose body
/// holds `at` (None at file scope).
pub(crate) struct Scope<'s> {
    pub(crate) names: HashSet<&'s str>,
    pub(crate) function: Option<&'s str>,
}

/// A block opened by `{`: whether a parenthesised list came just before
/// it (a function, `if`, `for`: its names end with it), where its names
/// start in the list of names seen, and the word before that list.
struct Block<'s> {
    closes_names: bool,
    names_from: usize,
    head: Option<&'s str>,
}

/// A parenthesised list closed at block level (a function's parameters,
/// a prototype's, an `if`'s condition): its names wait for what follows.
struct Pending<'s> {
    names_from: usize,
    head: Option<&'s str>,
}

pub(crate) fn scope_at(src: &[u8], at: usize) -> Scope<'_> {
    let at = at.min(src.len());
    let mut names: Vec<&str> = Vec::new();
    let mut blocks: Vec<Block<'_>> = Vec::new();
    let mut parens: Vec<(usize, Option<&str>)> = Vec::new();
    let mut pending: Option<Pending<'_>> = None;
    let mut last_word: Option<&str> = None;
    let mut i = 0;
    while i < at {
        match (src[i], src.get(i + 1).copied()) {
            (b'/', Some(b'/')) => {
                i = memchr::memchr(b'\n', &src[i..at]).map_or(at, |n| i + n);
                continue;
            }
            (b'/', Some(b'*')) => {
                let rest = src.get(i + 2..at).unwrap_or_default();
                i = memchr::memmem::find(rest, b"*/").map_or(at, |n| i + n + 4);
                continue;
            }
            (quote @ (b'"' | b'\''), _) => {
                i = after_literal(src, i, at, quote);
                continue;
            }
            (b, _) if b.is_ascii_alphabetic() || b == b'_' => {
                let word = word_at(src, i).unwrap_or("");
                names.push(word);
                last_word = Some(word);
                i += word.len().max(1);
                continue;
            }
            (b, _) if is_word(&b) => {
                i += src[i..at].iter().take_while(|b| is_word(b)).count();
                continue;
            }
            (b'(', _) => {
                if parens.is_empty() {
                    pending = None;
                }
                parens.push((names.len(), last_word));
            }
            (b')', _) => {
                if let Some((from, head)) = parens.pop() {
                    if parens.is_empty() {
                        pending = Some(Pending {
                            names_from: from,
                            head,
                        });
                    }
                }
            }
            (b'{', _) if parens.is_empty() => {
                let opened = match pending.take() {
                    Some(list) => Block {
                        closes_names: true,
                        names_from: list.names_from,
                        head: list.head,
                    },
                    None => Block {
                        closes_names: false,
                        names_from: names.len(),
                        head: None,
                    },
                };
                blocks.push(opened);
            }
            (b'}', _) if parens.is_empty() => {
                if let Some(block) = blocks.pop() {
                    if block.closes_names {
                        names.truncate(block.names_from);
                    }
                }
                pending = None;
            }
            (b';', _) if parens.is_empty() => {
                // A prototype's or a call's list at block level: its names
                // declare nothing here.
                if let Some(list) = pending.take() {
                    if !inside_function(&blocks) {
                        names.truncate(list.names_from);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    let function = blocks.iter().find(|b| b.closes_names).and_then(|b| b.head);
    Scope {
        names: names.into_iter().collect(),
        function,
    }
}

fn inside_function(blocks: &[Block<'_>]) -> bool {
    blocks.iter().any(|b| b.closes_names)
}

/// The names an expression reads from its scope: its identifiers less
/// members (after `.`, `->`, `::`), called functions (before `(`) and the
/// C++ words of casts and types.
pub(crate) fn free_names(expr: &str) -> Vec<&str> {
    const LANGUAGE: [&str; 12] = [
        "sizeof",
        "static_cast",
        "int",
        "long",
        "unsigned",
        "size_t",
        "int64_t",
        "int32_t",
        "float",
        "double",
        "const",
        "true",
    ];
    let bytes = expr.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b.is_ascii_alphabetic() || b == b'_') {
            i += if is_word(&b) {
                bytes[i..].iter().take_while(|b| is_word(b)).count()
            } else {
                1
            };
            continue;
        }
        let word = word_at(bytes, i).unwrap_or("");
        let before = expr[..i].trim_end();
        let member = before.ends_with('.') || before.ends_with("->") || before.ends_with("::");
        let called = expr[i + word.len()..].trim_start().starts_with('(');
        if !member && !called && !LANGUAGE.contains(&word) && word != "false" {
            found.push(word);
        }
        i += word.len().max(1);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visible<'s>(src: &'s str, marker: &str) -> Scope<'s> {
        let at = src.find(marker).expect("the marker is in the source");
        scope_at(src.as_bytes(), at)
    }

    #[test]
    fn a_launch_sees_its_functions_parameters_and_locals_not_anothers() {
        let src = "#define MAXT 1024\nint global_rows;\nvoid other(int V, int P) { int hidden = V; }\nvoid proto(int W);\n\
                   void encoder(float* out, int B, int T) {\n  int N = B * T;\n  if (N) { int inner = 1; }\n  LAUNCH;\n}\n";
        let scope = visible(src, "LAUNCH");
        for name in ["MAXT", "global_rows", "out", "B", "T", "N"] {
            assert!(scope.names.contains(name), "{name}");
        }
        for name in ["V", "P", "hidden", "W", "inner"] {
            assert!(!scope.names.contains(name), "{name}");
        }
        assert_eq!(scope.function, Some("encoder"));
    }

    #[test]
    fn comments_literals_and_namespaces_are_read_as_a_compiler_would() {
        let src =
            "namespace cfg { constexpr int V = 5; }\n// int C;\nconst char* s = \"int D;\";\n\
                   struct Model { int vocab; };\nvoid f(Model* m) { LAUNCH; }\n";
        let scope = visible(src, "LAUNCH");
        for name in ["V", "cfg", "m", "vocab"] {
            assert!(scope.names.contains(name), "{name}");
        }
        assert!(!scope.names.contains("C") && !scope.names.contains("D"));
    }

    proptest::proptest! {
        /// Any text and any offset: no panic, and the names are words of
        /// the text.
        #[test]
        fn any_text_and_offset_gives_names_from_the_text(text in "[ -~\n\t{}();/*\"'é]{0,200}", at in 0usize..220) {
            let scope = scope_at(text.as_bytes(), at);
            for name in &scope.names {
                proptest::prop_assert!(text.contains(name));
            }
            let _ = free_names(&text);
        }
    }

    #[test]
    fn free_names_skip_members_calls_and_casts() {
        assert_eq!(
            free_names("static_cast<int64_t>(model->config.V) * ceil_div(B, 4) + cfg::W + T"),
            ["model", "B", "cfg", "T"]
        );
    }
}
