//! A CUDA file as the recogniser sees it: tree-sitter-cpp's tree of a copy
//! with CUDA-only words blanked (offsets stay), its `__global__` functions,
//! the one-line `__device__` functions kernels call, and object-like
//! `#define`s.
use std::collections::HashMap;

use tree_sitter::{Node, Parser, Tree};

use crate::error::AnalyzeError;

/// Words tree-sitter-cpp does not know that carry no arithmetic.
const BLANKED: &[&str] = &[
    "__global__",
    "__device__",
    "__host__",
    "__forceinline__",
    "__noinline__",
    "__restrict__",
    "__shared__",
    "__constant__",
];

pub(super) struct CudaFile<'s> {
    pub(super) text: &'s str,
    pub(super) tree: Tree,
    /// Byte offsets of `__global__` in the text.
    globals: Vec<usize>,
}

/// A one-statement `__device__` function (`return expr;`) the evaluator
/// can inline.
pub(super) struct Inline<'t> {
    pub(super) params: Vec<String>,
    pub(super) value: Node<'t>,
}

impl<'s> CudaFile<'s> {
    pub(super) fn parse(text: &'s str) -> Result<Self, AnalyzeError> {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_cpp::LANGUAGE.into())
            .map_err(|e| AnalyzeError::Grammar(e.to_string()))?;
        let masked = blank_cuda_words(text);
        let tree = parser
            .parse(&masked, None)
            .ok_or_else(|| AnalyzeError::Grammar("tree-sitter-cpp gave up".into()))?;
        let globals = text.match_indices("__global__").map(|(i, _)| i).collect();
        Ok(CudaFile {
            text,
            tree,
            globals,
        })
    }

    pub(super) fn text_of(&self, node: Node<'_>) -> &'s str {
        self.text.get(node.byte_range()).unwrap_or("")
    }

    /// Every function definition marked `__global__`, with its body.
    pub(super) fn kernels(&self) -> Vec<Node<'_>> {
        let mut found = Vec::new();
        visit(self.tree.root_node(), &mut |node| {
            if node.kind() != "function_definition" {
                return;
            }
            let Some(body) = node.child_by_field_name("body") else {
                return;
            };
            let start = self.declaration_start(node);
            if self
                .globals
                .iter()
                .any(|&g| start <= g && g < body.start_byte())
            {
                found.push(node);
            }
        });
        found
    }

    /// Where a definition's specifiers begin: a template's `template <...>`
    /// or the definition itself.
    fn declaration_start(&self, node: Node<'_>) -> usize {
        let mut start = node.start_byte();
        // `__global__` may sit before the return type that tree-sitter
        // took as the node's start: look back over blanks to the line start.
        let before = &self.text[..start];
        let line_start = before.rfind(['\n', ';', '}']).map_or(0, |i| i + 1);
        if before[line_start..].trim().is_empty() || before[line_start..].contains("__global__") {
            start = line_start;
        }
        start
    }

    /// `__device__` functions whose body is one `return` statement.
    pub(super) fn inlines(&self) -> HashMap<String, Inline<'_>> {
        let mut found = HashMap::new();
        visit(self.tree.root_node(), &mut |node| {
            if let Some((name, inline)) = self.inline(node) {
                found.insert(name, inline);
            }
        });
        found
    }

    fn inline<'t>(&self, node: Node<'t>) -> Option<(String, Inline<'t>)> {
        if node.kind() != "function_definition" {
            return None;
        }
        let declarator = node.child_by_field_name("declarator")?;
        let name = self.text_of(declarator.child_by_field_name("declarator")?);
        let body = node.child_by_field_name("body")?;
        let statements: Vec<Node<'t>> = named_children(body);
        let [ret] = statements.as_slice() else {
            return None;
        };
        if ret.kind() != "return_statement" {
            return None;
        }
        let value = ret.named_child(0)?;
        let list = declarator.child_by_field_name("parameters")?;
        let params = named_children(list)
            .into_iter()
            .filter_map(|p| p.child_by_field_name("declarator"))
            .map(|d| self.text_of(innermost_name(d)).to_string())
            .collect();
        Some((name.to_string(), Inline { params, value }))
    }

    /// Object-like `#define NAME value`, value as its source text.
    pub(super) fn defines(&self) -> HashMap<String, String> {
        let mut found = HashMap::new();
        visit(self.tree.root_node(), &mut |node| {
            if node.kind() != "preproc_def" {
                return;
            }
            let name = node.child_by_field_name("name").map(|n| self.text_of(n));
            let value = node.child_by_field_name("value").map(|n| self.text_of(n));
            if let (Some(name), Some(value)) = (name, value) {
                found.insert(name.to_string(), value.trim().to_string());
            }
        });
        found
    }
}

/// The identifier a declarator declares (`*p`, `p[4]`, `&r` → the name).
pub(super) fn innermost_name(mut node: Node<'_>) -> Node<'_> {
    while let Some(inner) = node.child_by_field_name("declarator") {
        node = inner;
    }
    node
}

pub(super) fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .collect()
}

pub(super) fn visit<'t>(node: Node<'t>, f: &mut dyn FnMut(Node<'t>)) {
    f(node);
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        visit(child, f);
    }
}

/// The text with every CUDA-only word and `__launch_bounds__(...)` turned
/// into spaces, so that byte offsets are the original's.
fn blank_cuda_words(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for word in BLANKED {
        for (at, _) in text.match_indices(word) {
            bytes[at..at + word.len()].fill(b' ');
        }
    }
    for (at, _) in text.match_indices("__launch_bounds__") {
        let end = text[at..]
            .find(')')
            .map_or(at + "__launch_bounds__".len(), |i| at + i + 1);
        for byte in &mut bytes[at..end] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    }
    String::from_utf8(bytes).unwrap_or_default()
}
