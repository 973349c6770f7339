//! Launch values passed down one host function. A `[[kernel]]` rule's
//! launch value may name what the launching function lacks: llm.c's
//! `encoder_forward` has no vocabulary size, which `aclnnEmbedding`'s
//! weight shape needs, while its caller `gpt2_forward` has it. The one-way
//! port then gives the launching function the names as new `int64_t`
//! parameters and every call of it in the file passes them, as a porting
//! engineer would. It does so only when every call in the file has the
//! names in scope and nothing else uses the function's name (no prototype,
//! no address taken); otherwise the rule is not applied and says why.
use crate::scope::scope_at;
use crate::source_text::{closing_bracket, code_words};

/// Where a launching function gets new parameters and its calls pass
/// them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PassDown<'s> {
    pub(crate) function: &'s str,
    pub(crate) names: Vec<&'s str>,
    /// The `)` that closes the definition's parameters, and whether the
    /// list is empty.
    pub(crate) params_close: usize,
    pub(crate) params_empty: bool,
    /// The `)` that closes each call's arguments, and whether they are
    /// empty.
    pub(crate) calls: Vec<(usize, bool)>,
}

impl PassDown<'_> {
    /// The text the definition's parameter list gets before its `)`.
    pub(crate) fn parameters_text(&self) -> String {
        let list: Vec<String> = self.names.iter().map(|n| format!("int64_t {n}")).collect();
        joined(&list.join(", "), self.params_empty)
    }

    /// The text a call's argument list (empty or not) gets before its `)`.
    pub(crate) fn arguments_text(&self, empty: bool) -> String {
        joined(&self.names.join(", "), empty)
    }
}

fn joined(items: &str, empty: bool) -> String {
    if empty {
        items.to_owned()
    } else {
        format!(", {items}")
    }
}

/// How the function that holds the launch at `launch_at` can take
/// `missing` from its callers, or why it cannot (a sentence for CP0037).
pub(crate) fn pass_down<'s>(
    src: &'s [u8],
    launch_at: usize,
    missing: Vec<&'s str>,
) -> Result<PassDown<'s>, String> {
    let function = scope_at(src, launch_at)
        .function
        .ok_or_else(|| "the launch is not inside a function".to_owned())?;
    let mut definition = None;
    let mut calls = Vec::new();
    for (at, _) in code_words(src, 0, src.len())
        .into_iter()
        .filter(|&(_, w)| w == function)
    {
        let line = line_of(src, at);
        let use_ = parenthesised_use(src, at + function.len())
            .ok_or_else(|| format!("`{function}` is used on line {line} other than by a call"))?;
        if qualified(src, at) {
            return Err(format!(
                "`{function}` on line {line} is a member or qualified name"
            ));
        }
        match (use_.body_follows, scope_at(src, at).function) {
            (true, _) if use_.close < launch_at => definition = Some(use_),
            (true, _) => {
                return Err(format!("`{function}` is defined again on line {line}"))
            }
            (false, None) => {
                return Err(format!(
                    "`{function}` is declared on line {line}; its declarations would need the parameter too"
                ))
            }
            (false, Some(_)) => {
                let scope = scope_at(src, at);
                if let Some(name) = missing.iter().find(|n| !scope.names.contains(*n)) {
                    return Err(format!(
                        "its call of `{function}` on line {line} has no `{name}` either"
                    ));
                }
                calls.push((use_.close, use_.empty));
            }
        }
    }
    let definition =
        definition.ok_or_else(|| format!("`{function}` is not defined in this file"))?;
    if calls.is_empty() {
        return Err(format!("nothing in this file calls `{function}`"));
    }
    Ok(PassDown {
        function,
        names: missing,
        params_close: definition.close,
        params_empty: definition.empty,
        calls,
    })
}

/// A name followed by a parenthesised list: where the list closes,
/// whether it is empty, and whether a body (`{`) follows it.
struct ParenthesisedUse {
    close: usize,
    empty: bool,
    body_follows: bool,
}

fn parenthesised_use(src: &[u8], after_name: usize) -> Option<ParenthesisedUse> {
    let open = after_name
        + src
            .get(after_name..)?
            .iter()
            .position(|b| !b.is_ascii_whitespace())?;
    if src[open] != b'(' {
        return None;
    }
    let close = closing_bracket(src, open, b'(', b')')?;
    let inside = &src[open + 1..close];
    let next = src[close + 1..].iter().find(|b| !b.is_ascii_whitespace());
    Some(ParenthesisedUse {
        close,
        empty: inside.iter().all(u8::is_ascii_whitespace),
        body_follows: next == Some(&b'{'),
    })
}

/// Whether the name at `at` follows `.`, `->` or `::`.
fn qualified(src: &[u8], at: usize) -> bool {
    let before = src[..at]
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map(|end| &src[..=end]);
    before.is_some_and(|b| b.ends_with(b".") || b.ends_with(b"->") || b.ends_with(b"::"))
}

fn line_of(src: &[u8], at: usize) -> usize {
    memchr::memchr_iter(b'\n', &src[..at]).count() + 1
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    const LLMC: &str = "void encoder(float* out, int B, int T) {\n  LAUNCH;\n}\n\
                        void forward(int V, int B, int T) {\n  float* p = 0;\n  encoder(p, B, T); // encoder(\n}\n";

    fn passing<'a>(src: &'a str, names: Vec<&'static str>) -> Result<PassDown<'a>, String> {
        pass_down(src.as_bytes(), src.find("LAUNCH").unwrap(), names)
    }

    #[test]
    fn a_name_every_caller_has_becomes_a_parameter() {
        let plan = passing(LLMC, vec!["V"]).unwrap();
        assert_eq!(plan.function, "encoder");
        assert_eq!(&LLMC[plan.params_close..=plan.params_close], ")");
        assert_eq!(plan.calls.len(), 1);
        assert_eq!(&LLMC[plan.calls[0].0 - 1..=plan.calls[0].0], "T)");
        assert_eq!(plan.parameters_text(), ", int64_t V");
        assert_eq!(plan.arguments_text(true), "V");
    }

    #[test]
    fn a_caller_without_the_name_refuses() {
        let src = format!("{LLMC}void backward(int B) {{ encoder(0, B, B); }}\n");
        let why = passing(&src, vec!["V"]).unwrap_err();
        assert!(why.contains("line 8 has no `V`"), "{why}");
    }

    #[test]
    fn a_prototype_an_address_or_no_caller_refuses() {
        let prototype = format!("void encoder(float* out, int B, int T);\n{LLMC}");
        assert!(passing(&prototype, vec!["V"])
            .unwrap_err()
            .contains("declared on line 1"));
        let address = format!("{LLMC}void (*f)(float*, int, int) = encoder;\n");
        assert!(passing(&address, vec!["V"])
            .unwrap_err()
            .contains("other than by a call"));
        let alone = "void encoder(int B) {\n  LAUNCH;\n}\n";
        assert!(passing(alone, vec!["V"])
            .unwrap_err()
            .contains("nothing in this file calls"));
    }
}
