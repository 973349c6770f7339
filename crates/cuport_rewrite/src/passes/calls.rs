//! Where a file calls a function by its plain name, and which of its code
//! is device code: what the passes that rewrite or report calls of names
//! the rule tables do not hold (`min`, `max`, C library functions) and
//! runtime calls in kernels read. A token walk over the text, as the rest
//! of `source_text`.
use cuport_analyze::FileAnalysis;
use cuport_model::{SiteKind, TextRange};

use crate::plan::FileInput;

/// Which functions count as device code for [`host_calls`]: a
/// `__host__ __device__` function is compiled for the host too, which
/// matters where the host pass would reject the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HostDevice {
    /// Its calls are device calls (left to the kernel port).
    Device,
    /// Its calls are host calls as well.
    Host,
}

/// The bodies of kernels and `__device__` functions; with
/// [`HostDevice::Host`], `__host__ __device__` ones are left out (they are
/// host code too).
pub(super) fn device_bodies(
    src: &[u8],
    analysis: &FileAnalysis,
    host_device: HostDevice,
) -> Vec<TextRange> {
    device_functions(analysis)
        .filter(|&(s, body)| {
            host_device == HostDevice::Device || !declared_host(src, s.range.start, body)
        })
        .map(|(_, body)| body)
        .collect()
}

/// Kernels and `__device__` functions with a body: the function's site
/// and its body.
pub(super) fn device_functions(
    analysis: &FileAnalysis,
) -> impl Iterator<Item = (&cuport_analyze::Site, TextRange)> {
    analysis
        .sites
        .iter()
        .filter(|s| {
            s.kind == SiteKind::KernelDefinition
                || (s.kind == SiteKind::Qualifier && s.name == "__device__")
        })
        .filter_map(|s| Some((s, s.body?)))
}

/// Whether the declaration around a qualifier at `at`, up to its `body`,
/// also says `__host__`.
fn declared_host(src: &[u8], at: usize, body: TextRange) -> bool {
    let head_start = src[..at]
        .iter()
        .rposition(|b| matches!(b, b';' | b'}' | b'{'))
        .map_or(0, |i| i + 1);
    let head = &src[head_start..body.start.max(head_start)];
    memchr::memmem::find(head, b"__host__").is_some()
}

/// The calls of the names `wanted` accepts in host code: not in a kernel
/// or `__device__` function (see [`HostDevice`]), not a member or
/// qualified name, not in a directive line; none where the file declares
/// such a name itself.
pub(super) fn host_calls<'s>(
    input: &FileInput<'s>,
    host_device: HostDevice,
    wanted: impl Fn(&str) -> bool,
) -> Vec<(TextRange, &'s str)> {
    let device = device_bodies(input.src, input.analysis, host_device);
    let mut calls = plain_calls(input, wanted);
    calls.retain(|(range, _)| {
        !device
            .iter()
            .any(|b| b.start <= range.start && range.start < b.end)
    });
    calls
}

/// The calls of the names `wanted` accepts, in host and device code alike:
/// not a member or qualified name, not in a directive line; none where the
/// file declares such a name itself.
/// The words read are the file's [`FileInput::code_words`].
pub(super) fn plain_calls<'s>(
    input: &FileInput<'s>,
    wanted: impl Fn(&str) -> bool,
) -> Vec<(TextRange, &'s str)> {
    let src = input.src;
    let mut calls = Vec::new();
    for &(at, word) in input.code_words() {
        if !wanted(word) {
            continue;
        }
        let before = previous_token(src, at, input.valid_up_to());
        if declares(before) || in_directive(src, at) {
            return Vec::new();
        }
        let end = at + word.len();
        let called = src[end..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'(');
        let member = matches!(before, Some(".") | Some("->") | Some("::") | Some("~"));
        if called && !member {
            calls.push((TextRange::new(at, end), word));
        }
    }
    calls
}

/// The token before `at`: an identifier, or one of `.`, `->`, `::`, `~`
/// (anything else as `Some("")`); None at the start of the file, or past
/// `valid_up_to`, the end of the file's valid UTF-8 (the text before `at`
/// is not read as words there).
fn previous_token(src: &[u8], at: usize, valid_up_to: usize) -> Option<&str> {
    let end = src[..at].iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
    if end > valid_up_to {
        return None;
    }
    let before = &src[..end];
    for token in ["->", "::", ".", "~"] {
        if before.ends_with(token.as_bytes()) {
            return Some(token);
        }
    }
    // Only the text after the last ASCII byte that ends a word is decoded
    // (a letter outside ASCII may be part of the word): decoding all of
    // it for each call made this quadratic in the file's length.
    let from = before
        .iter()
        .rposition(|b| b.is_ascii() && !(b.is_ascii_alphanumeric() || *b == b'_'))
        .unwrap_or(0);
    let text = std::str::from_utf8(&before[from..]).ok()?;
    // After the whole character that ends the word before: one of more
    // than a byte (`·max(`) made the slice panic before.
    let word_start = text
        .char_indices()
        .rfind(|&(_, c)| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    Some(&text[word_start..])
}

/// Whether a name after `before` is being declared (`int max(`,
/// `#define max`): a type or specifier word, not a keyword that starts an
/// expression.
fn declares(before: Option<&str>) -> bool {
    const EXPRESSION_KEYWORDS: [&str; 6] = ["return", "else", "case", "throw", "co_return", "do"];
    before.is_some_and(|w| {
        w.starts_with(|c: char| c.is_alphabetic() || c == '_') && !EXPRESSION_KEYWORDS.contains(&w)
    })
}

/// Whether `at` is on a preprocessor directive line.
fn in_directive(src: &[u8], at: usize) -> bool {
    let start = src[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |n| n + 1);
    src[start..at]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'#')
}

#[cfg(test)]
mod tests {
    use super::previous_token;

    fn before(src: &str, name: &str) -> Option<String> {
        let at = src.rfind(name).unwrap_or_default();
        previous_token(src.as_bytes(), at, src.len()).map(str::to_owned)
    }

    #[test]
    fn the_token_before_a_name() {
        assert_eq!(before("x = a->max(1, 2);", "max").as_deref(), Some("->"));
        assert_eq!(
            before("return max(1, 2);", "max").as_deref(),
            Some("return")
        );
        assert_eq!(
            before("int naïve_max(int)", "_max").as_deref(),
            Some("naïve")
        );
        assert_eq!(before("f(1, ·max(2));", "max").as_deref(), Some(""));
        assert_eq!(before("max(1)", "max"), None);
    }

    /// Text that is not UTF-8 before the name is not read as words.
    #[test]
    fn no_token_past_the_valid_text() {
        let src = b"int \xff max(";
        assert_eq!(previous_token(src, 6, 4), None);
        assert_eq!(previous_token(b"int \xc3\xa9 max(", 7, 7), Some("\u{e9}"));
    }
}
