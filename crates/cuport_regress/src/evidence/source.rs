//! The device part of a CUDA file, for the CPU runner: the file with its
//! host functions, host globals and `#include`s removed (local headers are
//! inlined the same way), and `extern __shared__` arrays turned into
//! pointers to the launch's dynamic shared memory. Kernels, `__device__`
//! functions, macros, types and constants stay as written.
use std::path::{Path, PathBuf};

use super::EvidenceError;

/// Words that mark device code.
const DEVICE: [&str; 3] = ["__global__", "__device__", "__constant__"];

/// Words that keep a top-level item as a type or constant.
const KEEP: [&str; 9] = [
    "typedef",
    "using",
    "struct",
    "class",
    "enum",
    "union",
    "constexpr",
    "namespace",
    "static_assert",
];

/// The kept text of a file, in pieces: everything but the kernel under test
/// is `removable`, so a compile error inside another piece (a struct of
/// host types such as `FILE*`, another kernel using what the runner lacks)
/// removes it and the runner is compiled again; an error the kernel itself
/// (or something it needs) causes remains and is reported.
pub(super) struct DeviceSource {
    pieces: Vec<Piece>,
}

struct Piece {
    text: String,
    removable: bool,
}

impl DeviceSource {
    pub(super) fn render(&self) -> String {
        self.pieces.iter().map(|p| p.text.as_str()).collect()
    }

    /// Blanks the removable piece that holds 1-based `line`; false when
    /// that line is the kernel under test or a directive (nothing to
    /// remove).
    pub(super) fn remove_at_line(&mut self, line: usize) -> bool {
        let mut first = 1;
        for piece in &mut self.pieces {
            let lines = piece.text.matches('\n').count();
            if line >= first && line <= first + lines {
                if !piece.removable {
                    return false;
                }
                piece.text = "\n".repeat(lines);
                piece.removable = false;
                return true;
            }
            first += lines;
        }
        false
    }
}

/// The device code of `file` and of the local headers it includes.
pub(super) fn device_source(file: &Path, kernel: &str) -> Result<DeviceSource, EvidenceError> {
    let mut seen = Vec::new();
    let mut pieces = Vec::new();
    device_source_of(file, &mut seen, &mut pieces)?;
    for piece in &mut pieces {
        if piece.removable && defines_kernel(&piece.text, kernel) {
            piece.removable = false;
        }
    }
    Ok(DeviceSource { pieces })
}

/// Whether `code` is the `__global__` definition of `kernel`.
fn defines_kernel(code: &str, kernel: &str) -> bool {
    let head = code.split('{').next().unwrap_or(code);
    head.contains("__global__")
        && head
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == kernel)
}

fn device_source_of(
    file: &Path,
    seen: &mut Vec<PathBuf>,
    pieces: &mut Vec<Piece>,
) -> Result<(), EvidenceError> {
    seen.push(file.to_path_buf());
    let text = std::fs::read_to_string(file).map_err(EvidenceError::io(file))?;
    let dir = file.parent().unwrap_or(Path::new("."));
    for item in top_level_items(&text) {
        match item {
            Item::Preprocessor(line) => preprocessor(&line, dir, seen, pieces)?,
            Item::Code(code) => pieces.push(code_piece(&code)),
        }
    }
    Ok(())
}

fn code_piece(code: &str) -> Piece {
    match keep(code) {
        Some(_) => Piece {
            text: shared_arrays(code),
            removable: true,
        },
        None => Piece {
            text: "\n".repeat(code.matches('\n').count()),
            removable: false,
        },
    }
}

/// An `#include "local.h"` is replaced by that header's device code; other
/// includes are dropped (the runner's prelude has the C library); other
/// directives stay.
fn preprocessor(
    line: &str,
    dir: &Path,
    seen: &mut Vec<PathBuf>,
    pieces: &mut Vec<Piece>,
) -> Result<(), EvidenceError> {
    let newlines = "\n".repeat(line.matches('\n').count());
    let directive = line.trim_start().trim_start_matches('#').trim_start();
    let Some(rest) = directive.strip_prefix("include") else {
        pieces.push(Piece {
            text: line.to_string(),
            removable: false,
        });
        return Ok(());
    };
    let local = rest
        .trim()
        .strip_prefix('"')
        .and_then(|r| r.split('"').next());
    if let Some(path) = local.map(|name| dir.join(name)) {
        if path.is_file() && !seen.contains(&path) {
            device_source_of(&path, seen, pieces)?;
        }
    }
    pieces.push(Piece {
        text: newlines,
        removable: false,
    });
    Ok(())
}

/// Whether a top-level item stays: `Some(true)` for device code,
/// `Some(false)` for a type or a constant, `None` for host functions,
/// prototypes and host globals.
fn keep(code: &str) -> Option<bool> {
    let head = code.split('{').next().unwrap_or(code);
    let words: Vec<&str> = head
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    if DEVICE.iter().any(|k| words.contains(k)) {
        return Some(true);
    }
    // `const int N = 4;` and `static const float k = ...;` (no call, no body).
    let constant =
        words.contains(&"const") && !head.contains('(') && code.trim_end().ends_with(';');
    (constant || KEEP.iter().any(|k| words.contains(k))).then_some(false)
}

/// `extern __shared__ float buf[];` -> a pointer into the launch's dynamic
/// shared memory (a function-local static array cannot be unsized).
fn shared_arrays(code: &str) -> String {
    let mut out = String::new();
    for line in code.split_inclusive('\n') {
        out.push_str(&shared_array(line).unwrap_or_else(|| line.to_string()));
    }
    out
}

fn shared_array(line: &str) -> Option<String> {
    let at = line.find("extern")?;
    let rest = line[at + "extern".len()..].trim_start();
    let rest = rest.strip_prefix("__shared__")?.trim_start();
    let rest = match rest.strip_prefix("__align__") {
        Some(r) => r
            .trim_start()
            .strip_prefix('(')?
            .split_once(')')?
            .1
            .trim_start(),
        None => rest,
    };
    let (decl, _) = rest.split_once("[]")?;
    let name_at = decl.rfind(|c: char| !(c.is_alphanumeric() || c == '_'))? + 1;
    let (ty, name) = decl.split_at(name_at);
    let ty = ty.trim();
    Some(format!(
        "{}{ty}* {name} = reinterpret_cast<{ty}*>(cuport::dynamic_shared());\n",
        &line[..at]
    ))
}

enum Item {
    Preprocessor(String),
    Code(String),
}

/// Splits a file into preprocessor lines (with continuations) and top-level
/// items: text up to a `;` or a balanced `{...}` (plus a trailing `;`) at
/// brace depth 0, skipping comments, strings and character literals.
fn top_level_items(text: &str) -> Vec<Item> {
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut depth = 0usize;
    while i < bytes.len() {
        let at_line_start = i == 0 || bytes[i - 1] == b'\n';
        if depth == 0 && at_line_start && text[i..].trim_start_matches([' ', '\t']).starts_with('#')
        {
            push_code(&mut items, &text[start..i]);
            let end = directive_end(text, i);
            items.push(Item::Preprocessor(text[i..end].to_string()));
            start = end;
            i = end;
            continue;
        }
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => i = line_end(text, i),
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2)
            }
            b'"' | b'\'' => i = literal_end(bytes, i),
            b'{' => {
                depth += 1;
                i += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
                if depth == 0 && !is_declaration(&text[start..i]) {
                    let end = item_end_after_brace(text, i);
                    push_code(&mut items, &text[start..end]);
                    start = end;
                    i = end;
                }
            }
            b';' if depth == 0 => {
                i += 1;
                push_code(&mut items, &text[start..i]);
                start = i;
            }
            _ => i += 1,
        }
    }
    push_code(&mut items, &text[start..]);
    items
}

fn push_code(items: &mut Vec<Item>, code: &str) {
    if !code.is_empty() {
        items.push(Item::Code(code.to_string()));
    }
}

/// A braced item that a `;` ends (`typedef struct {..} T;`, an initialised
/// array) rather than its `}` (a function, a namespace).
fn is_declaration(item: &str) -> bool {
    let code = without_comments(item);
    let head = code.split('{').next().unwrap_or(&code);
    if head.contains('(') && !head.contains('=') {
        return false; // a function definition
    }
    head.trim_end().ends_with('=')
        || head
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| matches!(w, "struct" | "class" | "enum" | "union" | "typedef"))
}

/// `text` without `//` and `/* */` comments (a comment's words are no
/// code: "a struct of ..." in one must not make a function a declaration).
fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('/') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        rest = if tail.starts_with("//") {
            tail.find('\n').map_or("", |e| &tail[e..])
        } else if tail.starts_with("/*") {
            tail.find("*/").map_or("", |e| &tail[e + 2..])
        } else {
            out.push('/');
            &tail[1..]
        };
    }
    out.push_str(rest);
    out
}

/// A struct's closing `};` ends with its `;`; a function's `}` alone.
fn item_end_after_brace(text: &str, i: usize) -> usize {
    let rest = &text[i..];
    let trimmed = rest.trim_start_matches([' ', '\t']);
    if trimmed.starts_with(';') {
        i + (rest.len() - trimmed.len()) + 1
    } else {
        i
    }
}

fn line_end(text: &str, i: usize) -> usize {
    text[i..].find('\n').map_or(text.len(), |e| i + e)
}

/// The end of a directive, following `\` continuations, after its newline.
fn directive_end(text: &str, mut i: usize) -> usize {
    loop {
        let end = line_end(text, i);
        if end >= text.len() {
            return text.len();
        }
        if !text[i..end].trim_end().ends_with('\\') {
            return end + 1;
        }
        i = end + 1;
    }
}

fn literal_end(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    (i + 1).min(bytes.len())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn device(text: &str) -> String {
        let mut out = String::new();
        for item in top_level_items(text) {
            if let Item::Code(code) = item {
                out.push_str(&code_piece(&code).text);
            }
        }
        out
    }

    #[test]
    fn host_functions_and_globals_go_device_code_stays() {
        let text = "cublasHandle_t h;\n__device__ float sq(float x) { return x * x; }\n\
                    __global__ void k(float* o) { o[0] = sq(2.f); }\n\
                    void host(int n) { k<<<1, 1>>>(0); }\nint main() { return 0; }\n\
                    struct S { int a; };\nconst int K = 3;\n";
        let kept = device(text);
        assert!(kept.contains("sq(float x)") && kept.contains("__global__ void k"));
        assert!(kept.contains("struct S") && kept.contains("const int K"));
        assert!(!kept.contains("main") && !kept.contains("host(") && !kept.contains("cublas"));
    }

    #[test]
    fn a_comment_before_a_kernel_does_not_make_it_a_declaration() {
        let text = "// a struct = x\n__global__ void k(float* o) { o[0] = 1.f; }\n\
                    void host() { k<<<1, 1>>>(0); }\n";
        let kept = device(text);
        assert!(
            kept.contains("__global__ void k") && !kept.contains("host()"),
            "{kept}"
        );
    }

    #[test]
    fn extern_shared_arrays_become_pointers() {
        let line = "    extern __shared__ float shared[];\n";
        assert_eq!(
            shared_array(line).unwrap(),
            "    float* shared = reinterpret_cast<float*>(cuport::dynamic_shared());\n"
        );
    }
}
