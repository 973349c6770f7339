//! Rust through syn: an inventory of what a crate uses from `cudarc`
//! (imports and every path that resolves into it), so a porting engineer
//! sees which CUDA services a Rust code base depends on.
use cuport_model::{Library, LineIndex, SiteKind, TextRange};
use proc_macro2::Span;
use rustc_hash::FxHashMap;
use syn::visit::Visit;

use crate::site::{FileAnalysis, Site};

/// syn parses recursively; beyond this bracket depth it could exhaust the
/// stack, so such files get the plain text fallback instead.
const MAX_SYN_DEPTH: usize = 256;

pub(crate) fn analyze(src: &[u8], line_index: &LineIndex) -> FileAnalysis {
    let text = String::from_utf8_lossy(src);
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

fn fallback(text: &str, warning: &str) -> FileAnalysis {
    let sites = text
        .match_indices("cudarc::")
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
