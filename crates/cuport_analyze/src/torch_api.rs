//! Every PyTorch API a Python file uses, for the per-API support analysis
//! (`cuport analyze`): `torch.*` paths reached through imports and aliases,
//! methods called on values that are evidently tensors, and `nn.Module`
//! methods called on `self` in a module subclass. What cannot be resolved
//! (a tensor method name on a receiver of unknown type) is counted apart.
//! The same walk finds what the caller asks for besides: uses of CUDA-only
//! packages, keyword arguments advice is keyed to, and the CUDA extension
//! builds of `torch.utils.cpp_extension`.
use cuport_model::{dotted_within, LineIndex, TextRange};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use tree_sitter::{Node, Parser};

use crate::cpp_extension::{extension_build, Bindings, ExtensionBuild, EXTENSION_BUILDERS};
use crate::error::AnalyzeError;
use crate::python::{chain_segments, import_bindings, node_text, simple_assignment};

/// How a use was resolved to its API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resolution {
    /// A dotted path through the file's imports (`F.relu` → `torch.nn.functional.relu`).
    Import,
    /// A method on a value that is evidently a tensor (made by a torch
    /// function, or a parameter annotated `torch.Tensor`).
    TensorReceiver,
    /// A method of `torch.nn.Module` called on `self` in a subclass.
    ModuleSelf,
}

/// One use of a PyTorch API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiUse {
    pub api: String,
    pub line: u32,
    pub column: u32,
    pub range: TextRange,
    pub resolution: Resolution,
    /// Called (`torch.zeros(...)`), not only named (`torch.float64`).
    pub called: bool,
}

/// A use of a CUDA-only package the caller tracks: an import or a
/// reference through one (`flash_attn.flash_attn_func`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageUse {
    pub path: String,
    pub line: u32,
    pub column: u32,
}

/// A keyword argument the caller tracks, in any call (`pin_memory=True`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeywordUse {
    pub name: String,
    /// The value as written (shortened).
    pub value: String,
    /// The called API when it resolves (`torch.utils.data.DataLoader`).
    pub callee: Option<String>,
    pub line: u32,
    pub column: u32,
}

/// A method call whose name is a `torch.Tensor` API but whose receiver's
/// type is not evident from the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnresolvedUse {
    pub method: String,
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Default, Serialize)]
pub struct TorchApiInventory {
    pub uses: Vec<ApiUse>,
    pub unresolved: Vec<UnresolvedUse>,
    pub packages: Vec<PackageUse>,
    pub keywords: Vec<KeywordUse>,
    pub extensions: Vec<ExtensionBuild>,
    /// tree-sitter gave up on the file.
    pub unparsed: bool,
}

/// Whether a dotted path is an API of the support lists (the caller's data).
pub type IsApi<'a> = &'a dyn Fn(&str) -> bool;

/// What to look for (the caller's data).
#[derive(Clone, Copy)]
pub struct ApiQuery<'a> {
    /// Whether a `torch.*` path is worth recording even where it is only
    /// named, not called (`torch.float64`).
    pub is_api: IsApi<'a>,
    /// Import names of CUDA-only packages (`flash_attn`, `numba.cuda`).
    pub packages: &'a [String],
    /// Keyword-argument names to record in any call.
    pub keywords: &'a [String],
}

impl ApiQuery<'_> {
    fn tracks_package(&self, path: &str) -> bool {
        self.packages.iter().any(|m| dotted_within(path, m))
    }
}

/// Modules whose lower-case functions return tensors.
const TENSOR_MODULES: &[&str] = &[
    "torch",
    "torch.nn.functional",
    "torch.linalg",
    "torch.fft",
    "torch.special",
];

/// The PyTorch APIs `src` (Python) uses, and what else `query` asks for.
pub fn torch_api_uses(src: &[u8], query: &ApiQuery<'_>) -> Result<TorchApiInventory, AnalyzeError> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .map_err(|e| AnalyzeError::Grammar(e.to_string()))?;
    let Some(tree) = parser.parse(src, None) else {
        return Ok(TorchApiInventory {
            unparsed: true,
            ..TorchApiInventory::default()
        });
    };
    let lines = LineIndex::new(src);
    let mut inventory = Inventory {
        src,
        lines: &lines,
        query,
        aliases: FxHashMap::default(),
        bindings: Bindings::default(),
        torch_file: false,
        out: TorchApiInventory::default(),
    };
    let assignments = inventory.imports(tree.root_node());
    inventory.torch_file = inventory
        .aliases
        .values()
        .any(|p| p == "torch" || p.starts_with("torch."));
    // Every extension builder lives in `torch.utils.cpp_extension`, so a
    // file that never spells that name builds none.
    if inventory.torch_file && memchr::memmem::find(src, b"cpp_extension").is_some() {
        let resolve = |node: Node<'_>| inventory.resolve(node);
        let bindings = Bindings::from_assignments(assignments, src, &resolve);
        inventory.bindings = bindings;
    }
    let packages = inventory.aliases.values().any(|p| query.tracks_package(p));
    // Keyword arguments count in any file (`t.cuda(non_blocking=True)` in a
    // helper module that never imports torch).
    if !inventory.torch_file && !packages && query.keywords.is_empty() {
        return Ok(inventory.out);
    }
    inventory.block(tree.root_node(), &Scope::default());
    inventory.out.uses.sort_by_key(|u| u.range.start);
    inventory.out.unresolved.sort_by_key(|u| (u.line, u.column));
    inventory.out.packages.sort_by_key(|u| (u.line, u.column));
    inventory.out.keywords.sort_by_key(|u| (u.line, u.column));
    inventory.out.extensions.sort_by_key(|u| (u.line, u.column));
    Ok(inventory.out)
}

/// What is known where a node sits: names bound to tensors and whether
/// `self` is an `nn.Module`.
#[derive(Clone, Default)]
struct Scope {
    tensors: FxHashSet<String>,
    module_self: bool,
}

struct Inventory<'a> {
    src: &'a [u8],
    lines: &'a LineIndex,
    query: &'a ApiQuery<'a>,
    aliases: FxHashMap<String, String>,
    /// Values of the file's simple assignments (extension builds' arguments).
    bindings: Bindings,
    /// The file imports torch: method names of torch.Tensor on receivers of
    /// unknown type count as unresolved only then.
    torch_file: bool,
    out: TorchApiInventory,
}

impl<'a> Inventory<'a> {
    fn text(&self, node: Node<'_>) -> &'a str {
        node_text(node, self.src)
    }

    /// Every import in the file, wherever it is (an import inside a
    /// function is rare and binds for the whole file here).
    /// Returns the file's assignments, found on the same walk, for the
    /// extension builds' [`Bindings`].
    fn imports<'t>(&mut self, root: Node<'t>) -> Vec<Node<'t>> {
        let mut assignments = Vec::new();
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if matches!(node.kind(), "assignment" | "augmented_assignment") {
                assignments.push(node);
            }
            if matches!(node.kind(), "import_statement" | "import_from_statement") {
                for binding in import_bindings(node, self.src) {
                    if self.query.tracks_package(&binding.full) {
                        let at = self.lines.line_col(binding.path.start_byte());
                        self.out.packages.push(PackageUse {
                            path: binding.full.clone(),
                            line: at.line,
                            column: at.column,
                        });
                    }
                    self.aliases.insert(binding.local, binding.bound);
                }
                continue;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        assignments
    }

    /// The statements of a block, in order, so an assignment is seen
    /// before the uses below it.
    fn block(&mut self, node: Node<'_>, scope: &Scope) {
        let mut scope = scope.clone();
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.statement(child, &mut scope);
        }
    }

    fn statement(&mut self, node: Node<'_>, scope: &mut Scope) {
        match node.kind() {
            "import_statement" | "import_from_statement" | "comment" => {}
            "function_definition" => self.function(node, scope),
            "class_definition" => self.class(node, scope),
            "decorated_definition" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.statement(child, scope);
                }
            }
            "expression_statement" => {
                self.expressions(node, scope);
                self.bind_assignment(node, scope);
            }
            _ if has_block(node) => {
                // if/for/while/with/try: their expressions, then their
                // blocks with what the enclosing scope knows.
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    if child.kind() == "block" || has_block(child) {
                        self.block_or_statement(child, scope);
                    } else {
                        self.expressions(child, scope);
                    }
                }
            }
            _ => self.expressions(node, scope),
        }
    }

    fn block_or_statement(&mut self, node: Node<'_>, scope: &mut Scope) {
        if node.kind() == "block" {
            self.block(node, scope);
        } else {
            self.statement(node, scope);
        }
    }

    fn function(&mut self, node: Node<'_>, scope: &Scope) {
        let mut inner = Scope {
            tensors: FxHashSet::default(),
            module_self: scope.module_self,
        };
        if let Some(parameters) = node.child_by_field_name("parameters") {
            let mut cursor = parameters.walk();
            for parameter in parameters.named_children(&mut cursor) {
                let annotation = parameter.child_by_field_name("type");
                let tensor = annotation.is_some_and(|t| self.resolves_to(t, "torch.Tensor"));
                if tensor {
                    if let Some(name) = parameter.named_child(0) {
                        inner.tensors.insert(self.text(name).to_owned());
                    }
                }
                if let Some(default) = parameter.child_by_field_name("value") {
                    self.expressions(default, &mut inner);
                }
                if let Some(annotation) = annotation {
                    self.expressions(annotation, &mut inner);
                }
            }
        }
        if let Some(body) = node.child_by_field_name("body") {
            self.block(body, &inner);
        }
    }

    fn class(&mut self, node: Node<'_>, scope: &Scope) {
        let module = node
            .child_by_field_name("superclasses")
            .is_some_and(|bases| {
                let mut cursor = bases.walk();
                let children: Vec<Node<'_>> = bases.named_children(&mut cursor).collect();
                children.into_iter().any(|base| {
                    self.expressions(base, &mut scope.clone());
                    self.resolve(base)
                        .is_some_and(|path| path.starts_with("torch.nn."))
                })
            });
        let inner = Scope {
            tensors: FxHashSet::default(),
            module_self: module,
        };
        if let Some(body) = node.child_by_field_name("body") {
            self.block(body, &inner);
        }
    }

    /// `x = torch.randn(...)`, `y = x.view(...)`: the name now holds a tensor.
    fn bind_assignment(&mut self, statement: Node<'_>, scope: &mut Scope) {
        let Some(assignment) = statement
            .named_child(0)
            .filter(|n| n.kind() == "assignment")
        else {
            return;
        };
        let Some((left, right)) = simple_assignment(assignment) else {
            return;
        };
        let name = self.text(left).to_owned();
        if self.is_tensor(right, scope) {
            scope.tensors.insert(name);
        } else {
            scope.tensors.remove(&name);
        }
    }

    /// Every use inside an expression (or a simple statement).
    fn expressions(&mut self, node: Node<'_>, scope: &mut Scope) {
        let mut stack = vec![node];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "comment" | "string" => continue,
                "function_definition" | "class_definition" => {
                    self.statement(node, scope);
                    continue;
                }
                "attribute" | "identifier" if self.reference(node, scope) => continue,
                "call" => self.call(node),
                _ => {}
            }
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }

    /// Records the API an attribute chain or name stands for. Returns
    /// whether the node is done (its insides hold nothing more).
    fn reference(&mut self, node: Node<'_>, scope: &Scope) -> bool {
        if let Some(path) = self.resolve(node) {
            // A constant (`torch.float32`) or an annotation (`torch.Tensor`)
            // is no API use unless the lists know it.
            let used = is_called(node) || (self.query.is_api)(&path);
            if path.starts_with("torch.") && used {
                self.record(path, node, Resolution::Import);
            } else if self.query.tracks_package(&path) {
                let at = self.lines.line_col(node.start_byte());
                self.out.packages.push(PackageUse {
                    path,
                    line: at.line,
                    column: at.column,
                });
            }
            return true;
        }
        if node.kind() != "attribute" {
            return true;
        }
        let (Some(object), Some(attribute)) = (
            node.child_by_field_name("object"),
            node.child_by_field_name("attribute"),
        ) else {
            return false;
        };
        let method = self.text(attribute);
        let tensor_api = format!("torch.Tensor.{method}");
        let is_api = self.query.is_api;
        if self.is_tensor(object, scope) && is_api(&tensor_api) {
            self.record(tensor_api, attribute, Resolution::TensorReceiver);
        } else if scope.module_self && self.text(object) == "self" {
            let module_api = format!("torch.nn.Module.{method}");
            if is_api(&module_api) {
                self.record(module_api, attribute, Resolution::ModuleSelf);
            }
        } else if self.torch_file && is_api(&tensor_api) && is_called(node) {
            let at = self.lines.line_col(attribute.start_byte());
            self.out.unresolved.push(UnresolvedUse {
                method: method.to_owned(),
                line: at.line,
                column: at.column,
            });
        }
        false
    }

    fn record(&mut self, api: String, node: Node<'_>, resolution: Resolution) {
        let at = self.lines.line_col(node.start_byte());
        self.out.uses.push(ApiUse {
            api,
            line: at.line,
            column: at.column,
            range: TextRange::new(node.start_byte(), node.end_byte()),
            resolution,
            called: is_called(node),
        });
    }

    /// A call's tracked keyword arguments, and the call itself when it
    /// builds a CUDA extension.
    fn call(&mut self, call: Node<'_>) {
        let Some(arguments) = call.child_by_field_name("arguments") else {
            return;
        };
        let function = call.child_by_field_name("function");
        let callee = function.and_then(|f| self.resolve(f));
        let builder = callee
            .as_deref()
            .filter(|c| EXTENSION_BUILDERS.contains(c))
            .or_else(|| {
                let name = function.filter(|f| f.kind() == "identifier")?;
                self.bindings.builder(self.text(name))
            });
        if let Some(builder) = builder {
            let build = extension_build(builder, call, self.src, self.lines, &self.bindings);
            self.out.extensions.push(build);
        }
        let mut cursor = arguments.walk();
        for argument in arguments.named_children(&mut cursor) {
            if argument.kind() != "keyword_argument" {
                continue;
            }
            let (Some(name), Some(value)) = (
                argument.child_by_field_name("name"),
                argument.child_by_field_name("value"),
            ) else {
                continue;
            };
            let name = self.text(name);
            if !self.query.keywords.iter().any(|k| k == name) {
                continue;
            }
            let at = self.lines.line_col(argument.start_byte());
            self.out.keywords.push(KeywordUse {
                name: name.to_owned(),
                value: shorten(self.text(value)),
                callee: callee.clone(),
                line: at.line,
                column: at.column,
            });
        }
    }

    /// The dotted path a pure `a.b.c` chain stands for through the imports.
    fn resolve(&self, node: Node<'_>) -> Option<String> {
        let mut segments = chain_segments(node, self.src)?;
        segments[0] = self.aliases.get(segments[0])?;
        Some(segments.join("."))
    }

    fn resolves_to(&self, node: Node<'_>, path: &str) -> bool {
        self.resolve(node).is_some_and(|p| p == path)
    }

    /// Whether an expression evidently makes a tensor: a name bound to one,
    /// a call of a torch function that returns one, a tensor method's call.
    fn is_tensor(&self, node: Node<'_>, scope: &Scope) -> bool {
        match node.kind() {
            "identifier" => scope.tensors.contains(self.text(node)),
            "parenthesized_expression" => node
                .named_child(0)
                .is_some_and(|inner| self.is_tensor(inner, scope)),
            "call" => {
                let Some(function) = node.child_by_field_name("function") else {
                    return false;
                };
                if let Some(path) = self.resolve(function) {
                    return returns_tensor(&path);
                }
                function.kind() == "attribute"
                    && function
                        .child_by_field_name("object")
                        .is_some_and(|object| self.is_tensor(object, scope))
            }
            _ => false,
        }
    }
}

/// `torch.randn`, `torch.nn.functional.relu`: a lower-case function of a
/// module whose functions return tensors.
fn returns_tensor(path: &str) -> bool {
    let Some((module, function)) = path.rsplit_once('.') else {
        return false;
    };
    TENSOR_MODULES.contains(&module)
        && function.starts_with(|c: char| c.is_ascii_lowercase())
        && !matches!(
            function,
            "device" | "dtype" | "no_grad" | "manual_seed" | "is_tensor" | "numel" | "compile"
        )
}

/// A value as written, on one line and at most 40 characters.
fn shorten(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(40) {
        Some((at, _)) => format!("{}...", &one_line[..at]),
        None => one_line,
    }
}

fn has_block(node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    let found = node
        .named_children(&mut cursor)
        .any(|c| c.kind() == "block");
    found
}

fn is_called(node: Node<'_>) -> bool {
    node.parent()
        .is_some_and(|p| p.kind() == "call" && p.child_by_field_name("function") == Some(node))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn apis(src: &str) -> (Vec<(String, Resolution)>, Vec<String>) {
        let known = |api: &str| {
            matches!(
                api,
                "torch.Tensor.view"
                    | "torch.Tensor.sum"
                    | "torch.nn.Module"
                    | "torch.nn.Module.register_buffer"
            )
        };
        let query = ApiQuery {
            is_api: &known,
            packages: &[],
            keywords: &[],
        };
        let inventory = torch_api_uses(src.as_bytes(), &query).unwrap();
        (
            inventory
                .uses
                .into_iter()
                .map(|u| (u.api, u.resolution))
                .collect(),
            inventory.unresolved.into_iter().map(|u| u.method).collect(),
        )
    }

    #[test]
    fn aliases_tensor_receivers_and_module_self_are_resolved() {
        let src = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.register_buffer('b', torch.zeros(3))\n\n    def forward(self, x: torch.Tensor, y):\n        z = F.relu(x).view(-1)\n        return z.sum() + y.sum()\n";
        let (uses, unresolved) = apis(src);
        let expected = [
            ("torch.nn.Module", Resolution::Import),
            ("torch.nn.Module.register_buffer", Resolution::ModuleSelf),
            ("torch.zeros", Resolution::Import),
            ("torch.nn.functional.relu", Resolution::Import),
            ("torch.Tensor.view", Resolution::TensorReceiver),
            ("torch.Tensor.sum", Resolution::TensorReceiver),
        ];
        for (api, how) in expected {
            assert!(
                uses.iter().any(|(a, r)| a == api && *r == how),
                "{api} {how:?} in {uses:?}"
            );
        }
        assert_eq!(unresolved, ["sum"], "y's type is not evident");
        assert!(
            !uses.iter().any(|(a, _)| a == "torch.Tensor"),
            "an annotation is no use: {uses:?}"
        );
    }

    #[test]
    fn a_file_without_torch_has_no_uses() {
        let (uses, unresolved) = apis("import numpy as np\nx = np.zeros(3).sum()\n");
        assert!(uses.is_empty() && unresolved.is_empty());
    }

    #[test]
    fn packages_keywords_and_extension_builds_are_found() {
        let src = concat!(
            "import torch\n",
            "from flash_attn import flash_attn_func as fa\n",
            "import numba.cuda\n",
            "import numba\n",
            "from torch.utils.cpp_extension import CUDAExtension, load\n",
            "from torch.utils.data import DataLoader\n",
            "import os\n",
            "out = fa(q, k, v)\n",
            "numba.jit(f)\n",
            "loader = DataLoader(ds, pin_memory=True, batch_size=4)\n",
            "x.to(dev, non_blocking = True)\n",
            "ext = CUDAExtension('fused', ['csrc/a.cpp', os.path.join(here, 'csrc', 'k.cu'), *more, *glob.glob('x/*.cu')])\n",
            "mod = load(name='jit', sources=glob.glob('*.cu'))\n",
            "inline = torch.utils.cpp_extension.load_inline('i', cpp_src, cuda_sources=cu)\n",
        );
        let packages = ["flash_attn".to_owned(), "numba.cuda".to_owned()];
        let keywords = ["pin_memory".to_owned(), "non_blocking".to_owned()];
        let query = ApiQuery {
            is_api: &|_| false,
            packages: &packages,
            keywords: &keywords,
        };
        let inventory = torch_api_uses(src.as_bytes(), &query).unwrap();
        let paths: Vec<&str> = inventory.packages.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "flash_attn.flash_attn_func",
                "numba.cuda",
                "flash_attn.flash_attn_func"
            ],
            "numba.jit is not numba.cuda"
        );
        let keywords: Vec<(&str, &str, Option<&str>)> = inventory
            .keywords
            .iter()
            .map(|k| (k.name.as_str(), k.value.as_str(), k.callee.as_deref()))
            .collect();
        assert_eq!(
            keywords,
            [
                ("pin_memory", "True", Some("torch.utils.data.DataLoader")),
                ("non_blocking", "True", None)
            ]
        );
        let builds = &inventory.extensions;
        assert_eq!(builds.len(), 3, "{builds:#?}");
        assert_eq!(builds[0].name.as_deref(), Some("fused"));
        assert_eq!(builds[0].sources, ["csrc/a.cpp", "csrc/k.cu", "x/*.cu"]);
        assert_eq!(builds[0].unresolved_sources, 1);
        assert_eq!(builds[1].name.as_deref(), Some("jit"));
        assert_eq!(builds[1].sources, ["*.cu"]);
        assert!(builds[2].inline_cuda && builds[2].sources.is_empty());
    }

    /// pytorch/extension-cpp's setup.py: the builder chosen at run time and
    /// the sources gathered in variables by globs.
    #[test]
    fn builders_and_sources_bound_to_names_are_followed() {
        let src = concat!(
            "import glob, os\n",
            "import torch\n",
            "from torch.utils.cpp_extension import CppExtension, CUDAExtension\n",
            "library_name = 'extension_cpp'\n",
            "def get_extensions():\n",
            "    extension = CUDAExtension if use_cuda else CppExtension\n",
            "    this_dir = os.path.dirname(os.path.curdir)\n",
            "    extensions_dir = os.path.join(this_dir, library_name, 'csrc')\n",
            "    sources = list(glob.glob(os.path.join(extensions_dir, '*.cpp')))\n",
            "    cuda_dir = os.path.join(extensions_dir, 'cuda')\n",
            "    cuda_sources = list(glob.glob(os.path.join(cuda_dir, '*.cu')))\n",
            "    if use_cuda:\n",
            "        sources += cuda_sources\n",
            "    other = os.path.dirname(some_path)\n",
            "    return [extension(f'{library_name}._C', sources)]\n",
        );
        let query = ApiQuery {
            is_api: &|_| false,
            packages: &[],
            keywords: &[],
        };
        let inventory = torch_api_uses(src.as_bytes(), &query).unwrap();
        let builds = &inventory.extensions;
        assert_eq!(builds.len(), 1, "{builds:#?}");
        assert_eq!(builds[0].builder, "torch.utils.cpp_extension.CUDAExtension");
        assert_eq!(
            builds[0].sources,
            ["extension_cpp/csrc/*.cpp", "extension_cpp/csrc/cuda/*.cu"]
        );
        assert_eq!(builds[0].name, None, "an f-string name is not guessed");
    }
}
