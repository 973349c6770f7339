//! Rust through syn: an inventory of what a crate uses from `cudarc`
//! (imports and every path that resolves into it), so a porting engineer
//! sees which CUDA services a Rust code base depends on.
use std::ops::Range;

use cuport_model::{Library, LineIndex, SiteKind, TextRange};
use proc_macro2::Span;
use rustc_hash::FxHashMap;
use syn::visit::Visit;

use crate::site::{FileAnalysis, Site};

/// `src` as text with every byte of an invalid UTF-8 sequence replaced by
/// `?`: the same length, so byte offsets found in the text hold in the file
/// (a lossy conversion writes three bytes per bad byte; a fuzzing finding:
/// `fuzz_regressions::rust_file_with_invalid_utf8_keeps_its_offsets`).
fn same_length_text(src: &[u8]) -> std::borrow::Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(src) {
        return text.into();
    }
    let mut bytes = src.to_vec();
    let mut at = 0;
    while at < bytes.len() {
        match std::str::from_utf8(&bytes[at..]) {
            Ok(_) => break,
            Err(error) => {
                let bad = at + error.valid_up_to();
                let len = error.error_len().unwrap_or(bytes.len() - bad);
                bytes[bad..bad + len].fill(b'?');
                at = bad + len;
            }
        }
    }
    String::from_utf8(bytes).unwrap_or_default().into()
}

/// syn parses recursively; beyond this bracket depth it could exhaust the
/// stack, so such files get the plain text fallback instead.
const MAX_SYN_DEPTH: usize = 256;

pub(crate) fn analyze(src: &[u8], line_index: &LineIndex) -> FileAnalysis {
    let text = same_length_text(src);
    if !text.contains("cudarc") {
        return FileAnalysis::default();
    }
    if bracket_depth(text.as_bytes()) > MAX_SYN_DEPTH {
        return fallback(
            &text,
            "nesting deeper than syn can safely parse; found cudarc paths by text",
        );
    }
    let file = match syn::parse_file(&text) {
        Ok(file) => file,
        Err(error) => {
            let at = error.span().start();
            return fallback(
                &text,
                &format!(
                    "syn could not parse line {}: {error}; found cudarc paths by text",
                    at.line
                ),
            );
        }
    };
    let mut visitor = Inventory {
        line_index,
        text: &text,
        imports: FxHashMap::default(),
        sites: Vec::new(),
    };
    visitor.visit_file(&file);
    visitor.sites.sort_by_key(|s| s.range.start);
    FileAnalysis {
        sites: visitor.sites,
        ..FileAnalysis::default()
    }
}

fn bracket_depth(src: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for &b in src {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Finds `cudarc::` paths by text, outside comments and string literals:
/// a commented-out call or a message naming a path is no use (and
/// `--annotate` writes the path into a comment, which a rerun must not
/// count; a fuzzing finding, see
/// `fuzz_regressions::cudarc_paths_in_comments_are_not_sites`).
fn fallback(text: &str, warning: &str) -> FileAnalysis {
    let not_code = comments_and_strings(text.as_bytes());
    let in_code = |at: usize| {
        let after = not_code.partition_point(|c| c.end <= at);
        not_code.get(after).is_none_or(|c| c.start > at)
    };
    let sites = text
        .match_indices("cudarc::")
        .filter(|(start, _)| in_code(*start))
        .map(|(start, _)| {
            let end = text[start..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(text.len(), |len| start + len);
            let path = &text[start..end];
            Site::new(
                kind_of(path),
                Library::Cudarc,
                path,
                TextRange::new(start, end),
            )
        })
        .collect();
    FileAnalysis {
        sites,
        warnings: vec![warning.to_owned()],
        ..FileAnalysis::default()
    }
}

/// The comments (`//` to the end of the line, nested `/* */`) and string
/// literals (plain and raw; an unterminated one runs to the end) of a Rust
/// source, as sorted byte ranges. A light lexer for the fallback: it steps
/// over character literals so that `'"'` opens no string, and takes
/// anything else byte by byte.
fn comments_and_strings(src: &[u8]) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut at = 0;
    while at < src.len() {
        let ident_before = at > 0 && (src[at - 1].is_ascii_alphanumeric() || src[at - 1] == b'_');
        let end = match &src[at..] {
            [b'/', b'/', ..] => memchr::memchr(b'\n', &src[at..]).map_or(src.len(), |n| at + n),
            [b'/', b'*', ..] => block_comment_end(src, at),
            [b'"', ..] => string_end(src, at + 1),
            [b'r', b'"' | b'#', ..] if !ident_before => raw_string_end(src, at + 1),
            [b'\'', b'\\', _, ..] => {
                at = memchr::memchr(b'\'', &src[at + 3..]).map_or(src.len(), |n| at + 3 + n + 1);
                continue;
            }
            [b'\'', _, b'\'', ..] => {
                at += 3;
                continue;
            }
            _ => {
                at += 1;
                continue;
            }
        };
        // A raw identifier (`r#type`) is no literal: `end` stays at `at + 1`.
        if end > at + 1 {
            spans.push(at..end);
        }
        at = end;
    }
    spans
}

/// The end of the (nested) block comment opened at `start`.
fn block_comment_end(src: &[u8], start: usize) -> usize {
    let (mut depth, mut at) = (0usize, start);
    while at + 1 < src.len() {
        match &src[at..at + 2] {
            b"/*" => depth += 1,
            b"*/" => depth -= 1,
            _ => {
                at += 1;
                continue;
            }
        }
        at += 2;
        if depth == 0 {
            return at;
        }
    }
    src.len()
}

/// The end of a string literal whose text starts at `from`.
fn string_end(src: &[u8], from: usize) -> usize {
    let mut at = from;
    while at < src.len() {
        match src[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    src.len()
}

/// The end of a raw string `r#"..."#` whose hashes start at `from`; just
/// past the `r` when it is a raw identifier (`r#type`) instead.
fn raw_string_end(src: &[u8], from: usize) -> usize {
    let hashes = src[from..].iter().take_while(|&&b| b == b'#').count();
    if src.get(from + hashes) != Some(&b'"') {
        return from;
    }
    let mut closing = vec![b'"'];
    closing.resize(hashes + 1, b'#');
    let text = from + hashes + 1;
    memchr::memmem::find(&src[text..], &closing).map_or(src.len(), |n| text + n + closing.len())
}

/// The kind of a cudarc item from its module and case.
fn kind_of(path: &str) -> SiteKind {
    let last = path.rsplit("::").next().unwrap_or(path);
    if last.chars().next().is_some_and(char::is_uppercase) {
        return SiteKind::Type;
    }
    match path.split("::").nth(1) {
        Some("driver") => SiteKind::DriverApi,
        Some("runtime") => SiteKind::RuntimeApi,
        _ => SiteKind::LibraryCall,
    }
}

struct Inventory<'a> {
    line_index: &'a LineIndex,
    text: &'a str,
    /// Local name → full `cudarc::...` path.
    imports: FxHashMap<String, String>,
    sites: Vec<Site>,
}

impl Inventory<'_> {
    fn offset(&self, span: Span, end: bool) -> usize {
        let at = if end { span.end() } else { span.start() };
        let Some(line) = self.line_index.line_range(at.line.saturating_sub(1)) else {
            return self.text.len();
        };
        let line_text = self.text.get(line.start..line.end).unwrap_or("");
        let within: usize = line_text.chars().take(at.column).map(char::len_utf8).sum();
        line.start + within
    }

    fn record(&mut self, path: String, span: Span) {
        let range = TextRange::new(
            self.offset(span, false),
            self.offset(span, true).max(self.offset(span, false)),
        );
        self.sites
            .push(Site::new(kind_of(&path), Library::Cudarc, path, range));
    }

    fn use_tree(&mut self, prefix: &str, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => self.use_tree(&join(prefix, &p.ident.to_string()), &p.tree),
            syn::UseTree::Name(n) => self.import(
                join(prefix, &n.ident.to_string()),
                n.ident.to_string(),
                n.ident.span(),
            ),
            syn::UseTree::Rename(r) => self.import(
                join(prefix, &r.ident.to_string()),
                r.rename.to_string(),
                r.ident.span(),
            ),
            syn::UseTree::Glob(g) => {
                if prefix.starts_with("cudarc") {
                    self.record(format!("{prefix}::*"), g.star_token.span);
                }
            }
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(prefix, item);
                }
            }
        }
    }

    fn import(&mut self, path: String, local: String, span: Span) {
        if path == "cudarc" || path.starts_with("cudarc::") {
            self.imports.insert(local, path.clone());
            self.record(path, span);
        }
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}::{name}")
    }
}

impl<'ast> Visit<'ast> for Inventory<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree("", &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let Some(first) = path.segments.first() else {
            return;
        };
        let head = first.ident.to_string();
        let base = if head == "cudarc" {
            Some(head.clone())
        } else {
            self.imports.get(&head).cloned()
        };
        if let Some(base) = base {
            let rest: Vec<String> = path
                .segments
                .iter()
                .skip(1)
                .map(|s| s.ident.to_string())
                .collect();
            let full = std::iter::once(base)
                .chain(rest)
                .collect::<Vec<_>>()
                .join("::");
            let span = path
                .segments
                .last()
                .map_or(first.ident.span(), |s| s.ident.span());
            let start = first.ident.span();
            let joined = start.join(span).unwrap_or(start);
            self.record(full, joined);
        }
        syn::visit::visit_path(self, path);
    }
}
