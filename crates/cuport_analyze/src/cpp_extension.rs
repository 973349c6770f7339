//! CUDA operators a PyTorch project builds itself: the calls of
//! `torch.utils.cpp_extension` that compile CUDA sources
//! (`CUDAExtension(name, sources=[...])`, `load(name, sources)`,
//! `load_inline(name, cpp_sources, cuda_sources=...)`). Each of them needs
//! a kernel implementation on the target, so the analysis lists them with
//! the source files they name.
use cuport_model::LineIndex;
use rustc_hash::FxHashMap;
use serde::Serialize;
use tree_sitter::Node;

use crate::python::{node_text, simple_assignment, string_literal};

/// The builders whose calls compile CUDA code.
pub(crate) const EXTENSION_BUILDERS: &[&str] = &[
    "torch.utils.cpp_extension.CUDAExtension",
    "torch.utils.cpp_extension.load",
    "torch.utils.cpp_extension.load_inline",
];

/// One extension build in a Python file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExtensionBuild {
    /// The builder called (`torch.utils.cpp_extension.CUDAExtension`).
    pub builder: String,
    /// The extension's name when written as a literal.
    pub name: Option<String>,
    /// Source paths as the build names them, relative to the directory of
    /// the Python file when built with `os.path.join(<dir>, "a", "b.cu")`;
    /// a `glob.glob("csrc/*.cu")` argument is kept as its pattern.
    pub sources: Vec<String>,
    /// Sources given by an expression cuport cannot evaluate (`glob(...)`,
    /// a variable); the report says so instead of guessing.
    pub unresolved_sources: usize,
    /// `load_inline` with `cuda_sources`: the CUDA code is a string in the
    /// Python file.
    pub inline_cuda: bool,
    pub line: u32,
    pub column: u32,
}

/// What the file's simple assignments give its names: paths and lists of
/// paths (`extensions_dir = os.path.join(this_dir, "csrc")`,
/// `sources = glob.glob(...)`, `sources += cuda_sources`), and builders
/// chosen at run time (`extension = CUDAExtension if use_cuda else
/// CppExtension`). Flow-insensitive: the last assignment in the file wins,
/// `+=` appends.
#[derive(Default)]
pub(crate) struct Bindings {
    values: FxHashMap<String, Value>,
    builders: FxHashMap<String, &'static str>,
}

#[derive(Clone)]
enum Value {
    /// A path relative to the build file's folder ("" is the folder).
    Path(String),
    /// Source paths and glob patterns.
    Paths(Vec<String>),
}

impl Bindings {
    /// Reads the file's assignments (in any order); `resolve` gives the
    /// dotted path a name or attribute chain stands for through the imports.
    pub(crate) fn from_assignments(
        mut assignments: Vec<Node<'_>>,
        src: &[u8],
        resolve: &dyn Fn(Node<'_>) -> Option<String>,
    ) -> Bindings {
        let mut bindings = Bindings::default();
        assignments.sort_by_key(Node::start_byte);
        for assignment in assignments {
            bindings.assign(assignment, src, resolve);
        }
        bindings
    }

    fn assign(
        &mut self,
        assignment: Node<'_>,
        src: &[u8],
        resolve: &dyn Fn(Node<'_>) -> Option<String>,
    ) {
        let Some((left, right)) = simple_assignment(assignment) else {
            return;
        };
        let name = node_text(left, src).to_owned();
        if assignment.kind() == "augmented_assignment" {
            let added = self.paths(right, src);
            if let (Some(Value::Paths(list)), Some(added)) = (self.values.get_mut(&name), added) {
                list.extend(added);
            }
            return;
        }
        if let Some(builder) = chosen_builder(right, resolve) {
            self.builders.insert(name.clone(), builder);
        }
        match self.value(right, src) {
            Some(value) => self.values.insert(name, value),
            None => self.values.remove(&name),
        };
    }

    /// The builder a called name was bound to.
    pub(crate) fn builder(&self, name: &str) -> Option<&'static str> {
        self.builders.get(name).copied()
    }

    fn value(&self, node: Node<'_>, src: &[u8]) -> Option<Value> {
        match node.kind() {
            "string" => string_value(node, src).map(Value::Path),
            "identifier" => self.values.get(node_text(node, src)).cloned(),
            "list" | "tuple" | "binary_operator" => self.paths(node, src).map(Value::Paths),
            "call" => self.call_value(node, src),
            _ => None,
        }
    }

    fn call_value(&self, node: Node<'_>, src: &[u8]) -> Option<Value> {
        let function = node_text(node.child_by_field_name("function")?, src);
        let arguments = call_arguments(node, src, "")?;
        let called = function.rsplit('.').next().unwrap_or(function);
        match called {
            // The build file's own folder (a build runs from there).
            "dirname" | "abspath" | "realpath"
                if ["__file__", "curdir"]
                    .iter()
                    .any(|w| node_text(node, src).contains(w)) =>
            {
                Some(Value::Path(String::new()))
            }
            "getcwd" => Some(Value::Path(String::new())),
            "join" if function.ends_with("path.join") => {
                let parts: Option<Vec<String>> =
                    arguments.iter().map(|&a| self.path(a, src)).collect();
                let parts = parts?;
                let joined: Vec<&str> = parts
                    .iter()
                    .map(String::as_str)
                    .filter(|p| !p.is_empty())
                    .collect();
                Some(Value::Path(joined.join("/")))
            }
            "glob" => {
                let pattern = self.path(*arguments.first()?, src)?;
                Some(Value::Paths(vec![pattern]))
            }
            "list" | "sorted" => self.paths(*arguments.first()?, src).map(Value::Paths),
            _ => None,
        }
    }

    fn path(&self, node: Node<'_>, src: &[u8]) -> Option<String> {
        match self.value(node, src)? {
            Value::Path(path) => Some(path),
            Value::Paths(_) => None,
        }
    }

    /// A list of source paths: a list literal, a glob, a name bound to one,
    /// or the sum of such.
    fn paths(&self, node: Node<'_>, src: &[u8]) -> Option<Vec<String>> {
        match node.kind() {
            "list" | "tuple" => {
                let mut cursor = node.walk();
                let mut paths = Vec::new();
                for element in node.named_children(&mut cursor) {
                    let element = match element.kind() {
                        "list_splat" => element.named_child(0)?,
                        _ => element,
                    };
                    match self.value(element, src)? {
                        Value::Path(path) => paths.push(path),
                        Value::Paths(more) => paths.extend(more),
                    }
                }
                Some(paths)
            }
            "binary_operator" => {
                let mut left = self.paths(node.child_by_field_name("left")?, src)?;
                left.extend(self.paths(node.child_by_field_name("right")?, src)?);
                Some(left)
            }
            _ => match self.value(node, src)? {
                Value::Paths(paths) => Some(paths),
                Value::Path(_) => None,
            },
        }
    }
}

/// `CUDAExtension`, or `CUDAExtension if use_cuda else CppExtension`: the
/// CUDA builder an expression may evaluate to.
fn chosen_builder(
    node: Node<'_>,
    resolve: &dyn Fn(Node<'_>) -> Option<String>,
) -> Option<&'static str> {
    let candidates: Vec<Node<'_>> = if node.kind() == "conditional_expression" {
        let mut cursor = node.walk();
        node.named_children(&mut cursor).collect()
    } else {
        vec![node]
    };
    candidates.into_iter().find_map(|candidate| {
        let path = resolve(candidate)?;
        EXTENSION_BUILDERS.iter().copied().find(|b| *b == path)
    })
}

/// The build a builder's call describes.
pub(crate) fn extension_build(
    builder: &str,
    call: Node<'_>,
    src: &[u8],
    lines: &LineIndex,
    bindings: &Bindings,
) -> ExtensionBuild {
    let at = lines.line_col(call.start_byte());
    let mut build = ExtensionBuild {
        builder: builder.to_owned(),
        name: None,
        sources: Vec::new(),
        unresolved_sources: 0,
        inline_cuda: false,
        line: at.line,
        column: at.column,
    };
    let Some(arguments) = call.child_by_field_name("arguments") else {
        return build;
    };
    let inline = builder.ends_with("load_inline");
    let mut positional = 0;
    let mut cursor = arguments.walk();
    for argument in arguments.named_children(&mut cursor) {
        let (slot, value) = if argument.kind() == "keyword_argument" {
            let name = argument.child_by_field_name("name");
            let name = name.map_or("", |n| node_text(n, src));
            (name, argument.child_by_field_name("value"))
        } else {
            positional += 1;
            // name, then sources (cpp_sources for load_inline).
            let slot = match positional {
                1 => "name",
                2 if !inline => "sources",
                _ => "",
            };
            (slot, Some(argument))
        };
        let Some(value) = value else { continue };
        match slot {
            "name" => build.name = string_value(value, src),
            "sources" => match bindings.paths(value, src) {
                Some(paths) => build.sources.extend(paths),
                None => add_sources(&mut build, value, src),
            },
            "cuda_sources" => build.inline_cuda = true,
            _ => {}
        }
    }
    build
}

/// The paths of a `sources` argument: a list or tuple of literals or of
/// `os.path.join(<dir>, "literal", ...)` calls.
fn add_sources(build: &mut ExtensionBuild, value: Node<'_>, src: &[u8]) {
    if !matches!(value.kind(), "list" | "tuple") {
        match glob_pattern(value, src) {
            Some(pattern) => build.sources.push(pattern),
            None => build.unresolved_sources += 1,
        }
        return;
    }
    let mut cursor = value.walk();
    for element in value.named_children(&mut cursor) {
        // `*glob.glob("csrc/*.cu")` spreads a pattern's matches.
        let element = match element.kind() {
            "list_splat" => element.named_child(0).unwrap_or(element),
            _ => element,
        };
        match source_path(element, src).or_else(|| glob_pattern(element, src)) {
            Some(path) => build.sources.push(path),
            None => build.unresolved_sources += 1,
        }
    }
}

fn source_path(node: Node<'_>, src: &[u8]) -> Option<String> {
    if let Some(literal) = string_value(node, src) {
        return Some(literal);
    }
    // `os.path.join(this_dir, "csrc", "k.cu")`: the directory is the
    // build file's own (the idiom's `os.path.dirname(__file__)`).
    let parts = call_arguments(node, src, "path.join")?;
    let literals: Option<Vec<String>> = parts
        .iter()
        .skip(1)
        .map(|&p| string_value(p, src))
        .collect();
    let literals = literals.filter(|l| !l.is_empty())?;
    Some(literals.join("/"))
}

/// `glob.glob("csrc/*.cu")` or `glob(os.path.join(here, "csrc", "*.cu"))`:
/// the pattern.
fn glob_pattern(node: Node<'_>, src: &[u8]) -> Option<String> {
    let arguments = call_arguments(node, src, "glob")?;
    let pattern = arguments.first()?;
    source_path(*pattern, src)
}

/// The arguments of a call of a function whose name ends with `name`
/// (any call when `name` is empty).
fn call_arguments<'t>(node: Node<'t>, src: &[u8], name: &str) -> Option<Vec<Node<'t>>> {
    if node.kind() != "call" {
        return None;
    }
    let function = node.child_by_field_name("function")?;
    if !node_text(function, src).ends_with(name) {
        return None;
    }
    let arguments = node.child_by_field_name("arguments")?;
    let mut cursor = arguments.walk();
    let parts = arguments.named_children(&mut cursor).collect();
    Some(parts)
}

/// The text of a plain string literal (no interpolation, no escapes, no
/// concatenation).
fn string_value(node: Node<'_>, src: &[u8]) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let literal = string_literal(node, src);
    (!literal.interpolated && !literal.escaped).then_some(literal.content)
}
