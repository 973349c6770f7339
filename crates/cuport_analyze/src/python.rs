//! Python through tree-sitter-python: PyTorch's CUDA surface, device
//! strings, the NCCL backend, CUDA extension builds, CUDA environment
//! variables and imports of packages that only run on NVIDIA GPUs.
//! Comments and prose strings never count; import aliases are resolved.
use cuport_model::{dotted_within, Library, LineIndex, SiteKind, TextRange};
use rustc_hash::FxHashMap;
use tree_sitter::{Node, Parser};

use crate::error::AnalyzeError;
use crate::known::KnownNames;
use crate::site::{FileAnalysis, Site};
use crate::ts_errors::error_regions;

/// Packages (dotted prefixes) that need an NVIDIA GPU to do anything.
const CUDA_ONLY_PACKAGES: &[&str] = &[
    "cupy",
    "numba.cuda",
    "pycuda",
    "triton",
    "apex",
    "flash_attn",
    "bitsandbytes",
    "pynvml",
    "nvidia.dali",
    "tensorrt",
    "torch_tensorrt",
    "xformers",
    "cudf",
    "cuml",
    "cuda",
    "cuda.cudart",
    "nvidia_smi",
    "gpustat",
    "deepspeed.ops.op_builder",
];

/// Dotted prefixes of PyTorch's CUDA-specific API.
const TORCH_CUDA_PREFIXES: &[&str] = &[
    "torch.cuda",
    "torch.backends.cudnn",
    "torch.backends.cuda",
    "torch.profiler.ProfilerActivity.CUDA",
    "torch.autograd.profiler.ProfilerActivity.CUDA",
    "torch.utils.cpp_extension.CUDA_HOME",
];

const CPP_EXTENSION: &str = "torch.utils.cpp_extension.";

/// Methods of `logging` and of its loggers that take a message.
const LOGGING_METHODS: &[&str] = &[
    "debug",
    "info",
    "warning",
    "warn",
    "error",
    "critical",
    "exception",
    "log",
    "fatal",
];

/// Words one of which every Python site contains. A file with none of them
/// cannot have a site and is not parsed (most Python in a code base is not
/// GPU code, and tree-sitter-python is the slowest part of a scan).
const TRIGGER_WORDS: &[&str] = &[
    "cud",
    "CUD",
    "nccl",
    "NCCL",
    "cupy",
    "cuml",
    "triton",
    "apex",
    "flash_attn",
    "bitsandbytes",
    "nvml",
    "nvidia",
    "NVIDIA",
    "tensorrt",
    "xformers",
    "gpustat",
    "op_builder",
    "cpp_extension",
];

static TRIGGERS: std::sync::LazyLock<Option<aho_corasick::AhoCorasick>> =
    std::sync::LazyLock::new(|| aho_corasick::AhoCorasick::new(TRIGGER_WORDS).ok());

/// Whether `src` may contain a Python site (see [`TRIGGER_WORDS`]).
pub(crate) fn may_have_sites(src: &[u8]) -> bool {
    TRIGGERS
        .as_ref()
        .is_none_or(|triggers| triggers.is_match(src))
}

pub(crate) struct PythonParser {
    parser: Parser,
}

impl PythonParser {
    pub(crate) fn new() -> Result<Self, AnalyzeError> {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .map_err(|e| AnalyzeError::Grammar(e.to_string()))?;
        Ok(Self { parser })
    }

    pub(crate) fn analyze(
        &mut self,
        src: &[u8],
        line_index: &LineIndex,
        known: Option<&KnownNames>,
    ) -> FileAnalysis {
        let Some(tree) = self.parser.parse(src, None) else {
            return FileAnalysis {
                warnings: vec!["tree-sitter-python gave up on this file".into()],
                ..FileAnalysis::default()
            };
        };
        let mut visitor = Visitor {
            src,
            known,
            aliases: FxHashMap::default(),
            messages: Vec::new(),
            sites: Vec::new(),
        };
        visitor.walk(tree.root_node());
        visitor.sites.sort_by_key(|s| s.range.start);
        FileAnalysis {
            sites: visitor.sites,
            parse_issues: error_regions(&tree, line_index, "tree-sitter-python"),
            ..FileAnalysis::default()
        }
    }
}

struct Visitor<'a> {
    src: &'a [u8],
    /// The rule tables' names: a dotted path a table knows is a site even
    /// outside PyTorch's CUDA namespaces (`torch.version.cuda`,
    /// `torch.distributed.is_nccl_available`).
    known: Option<&'a KnownNames>,
    /// Local name → the dotted path it was imported as.
    aliases: FxHashMap<String, String>,
    /// Byte ranges of messages (the arguments of `print`, logging calls,
    /// `raise`): a device string there is text for a person, not a device.
    messages: Vec<(usize, usize)>,
    sites: Vec<Site>,
}

impl<'a> Visitor<'a> {
    fn text(&self, node: Node<'_>) -> &'a str {
        node_text(node, self.src)
    }

    fn site(&mut self, kind: SiteKind, library: Library, name: impl Into<String>, node: Node<'_>) {
        let range = TextRange::new(node.start_byte(), node.end_byte());
        self.sites.push(Site::new(kind, library, name, range));
    }

    /// Depth-first over the tree without recursion (files may nest deeply).
    /// The cursor knows each node's field in its parent and a stack keeps
    /// the parents' kinds: `Node::parent` is a walk from the root in
    /// tree-sitter and would make the visit quadratic.
    fn walk(&mut self, root: Node<'_>) {
        let mut cursor = root.walk();
        let mut parents: Vec<&'static str> = Vec::new();
        loop {
            let node = cursor.node();
            let place = Place {
                parent: parents.last().copied().unwrap_or(""),
                field: cursor.field_name().unwrap_or(""),
            };
            let descend = self.visit(node, place);
            if descend && cursor.goto_first_child() {
                parents.push(node.kind());
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
                parents.pop();
            }
        }
    }

    /// Handles `node`; returns whether its children still need a visit.
    fn visit(&mut self, node: Node<'_>, place: Place) -> bool {
        match node.kind() {
            "comment" => false,
            "import_statement" | "import_from_statement" => {
                self.import(node);
                false
            }
            // The member name in `f().amp` is no use of a name `amp` an
            // import bound (a fuzzing finding: `fuzz_regressions::
            // member_name_is_not_the_imported_name`).
            "identifier" if place.is_member_name() => false,
            "attribute" | "identifier" if !place.is_chain_inner() => {
                self.reference(node, place.is_called())
            }
            "string" => {
                self.string(node);
                false
            }
            "call" => {
                self.device_call(node);
                self.message_call(node);
                true
            }
            "raise_statement" => {
                self.messages.push((node.start_byte(), node.end_byte()));
                true
            }
            "keyword_argument" => {
                self.keyword(node);
                true
            }
            _ => true,
        }
    }

    fn import(&mut self, node: Node<'_>) {
        for binding in import_bindings(node, self.src) {
            self.aliases.insert(binding.local, binding.bound);
            // The site is the dotted path (`torch.cuda.nccl` in `import
            // torch.cuda.nccl as nccl`), which a rename replaces.
            self.import_site(&binding.full, binding.path);
        }
    }

    fn import_site(&mut self, full: &str, node: Node<'_>) {
        let cuda_only = CUDA_ONLY_PACKAGES.iter().any(|p| dotted_within(full, p));
        if cuda_only {
            self.site(
                SiteKind::CudaOnlyImport,
                Library::PythonCudaPackage,
                full,
                node,
            );
        } else if let Some((kind, library)) = torch_kind(full) {
            self.site(kind, library, full, node);
        } else if let Some(library) = self.known_path(full).filter(|_| names_cuda(full)) {
            // Only a name that says CUDA is a touchpoint where it is
            // imported (`from torch.distributed import is_nccl_available`);
            // `from torch.profiler import profile` is ported at its uses.
            self.site(SiteKind::FrameworkCall, library, full, node);
        }
    }

    /// The library of a dotted path the rule tables know. Only dotted
    /// paths: a bare name the C tables know (`cudaMalloc`) in a Python file
    /// is no PyTorch API, and porting it as one generated C shim code (a
    /// fuzzing finding: `fuzz_regressions::c_names_in_python_are_not_framework_calls`).
    fn known_path(&self, path: &str) -> Option<Library> {
        let known = self.known.filter(|_| path.contains('.'))?;
        (known.site_of)(path).map(|(library, _)| library)
    }

    /// A name or an attribute chain (`torch.cuda.amp.GradScaler`). Returns
    /// whether to look inside (only when the chain contains calls or
    /// subscripts that may hold more sites).
    fn reference(&mut self, node: Node<'_>, called: bool) -> bool {
        let Some(segments) = self.chain(node) else {
            self.method(node, called);
            return true;
        };
        let resolved = self.resolve(&segments);
        if let Some((kind, library)) = torch_kind(&resolved) {
            self.used_site(kind, library, resolved, node);
        } else if let Some(library) = self.known_path(&resolved) {
            self.used_site(SiteKind::FrameworkCall, library, resolved, node);
        } else if let Some((prefix, inner, library)) = self.known_cuda_prefix(node, &segments) {
            self.used_site(SiteKind::FrameworkCall, library, prefix, inner);
        } else if let Some(last) = segments.last().filter(|_| node.kind() == "attribute") {
            self.tensor_method(last, node, called);
        }
        false
    }

    /// The longest leading part of a chain that the tables know and that
    /// names CUDA, with its node: `torch.version.cuda` in
    /// `torch.version.cuda.split(".")` (a corpus finding in
    /// flash-attention: the longer chain was no touchpoint at all).
    fn known_cuda_prefix<'t>(
        &self,
        node: Node<'t>,
        segments: &[&str],
    ) -> Option<(String, Node<'t>, Library)> {
        let mut inner = node;
        let mut len = segments.len();
        while inner.kind() == "attribute" && len > 2 {
            inner = inner.child_by_field_name("object")?;
            len -= 1;
            let prefix = self.resolve(&segments[..len]);
            if !names_cuda(&prefix) {
                continue;
            }
            if let Some(library) = self.known_path(&prefix) {
                return Some((prefix, inner, library));
            }
        }
        None
    }

    /// A name used in code, with the statement a template rewrite replaces:
    /// its call (`torch.cuda.amp.custom_fwd(...)`) or the assignment
    /// statement it is the target of (`cudnn.deterministic = True`).
    fn used_site(&mut self, kind: SiteKind, library: Library, name: String, node: Node<'_>) {
        let mut site = Site::new(kind, library, name, range_of(node));
        if let Some((statement, args)) = call_or_assignment(node) {
            site.call = Some(statement);
            site.args = args;
        }
        self.sites.push(site);
    }

    /// `x.cuda()`, `t.is_cuda`: methods on tensors and modules, whatever `x` is.
    fn method(&mut self, node: Node<'_>, called: bool) {
        if node.kind() != "attribute" {
            return;
        }
        if let Some(attr) = node.child_by_field_name("attribute") {
            let name = self.text(attr);
            self.tensor_method(name, node, called);
        }
    }

    fn tensor_method(&mut self, name: &str, node: Node<'_>, called: bool) {
        let label = match name {
            "cuda" if called => "torch.Tensor.cuda",
            "is_cuda" => "torch.Tensor.is_cuda",
            _ => return,
        };
        let attr = node.child_by_field_name("attribute").unwrap_or(node);
        self.site(SiteKind::FrameworkCall, Library::Torch, label, attr);
    }

    /// The identifiers of a pure `a.b.c` chain, outermost last; `None` when a
    /// call, subscript or literal sits inside it.
    fn chain(&self, node: Node<'_>) -> Option<Vec<&'a str>> {
        chain_segments(node, self.src)
    }

    fn resolve(&self, segments: &[&str]) -> String {
        let head = segments.first().copied().unwrap_or("");
        let base = self.aliases.get(head).map_or(head, String::as_str);
        let mut path = base.to_owned();
        for segment in segments.iter().skip(1) {
            path.push('.');
            path.push_str(segment);
        }
        path
    }

    fn string(&mut self, node: Node<'_>) {
        let StringLiteral {
            content,
            interpolated,
            ..
        } = string_literal(node, self.src);
        let in_message = self
            .messages
            .iter()
            .any(|&(start, end)| start <= node.start_byte() && node.end_byte() <= end);
        if in_message {
            return;
        }
        if is_device_string(&content, interpolated) {
            let kind = SiteKind::DeviceString;
            self.site(kind, Library::Torch, content, node);
        } else if !interpolated && content == "nccl" {
            self.site(SiteKind::DistributedBackend, Library::Nccl, content, node);
        } else if !interpolated && is_cuda_env_var(&content) {
            self.site(
                SiteKind::EnvironmentVariable,
                Library::Runtime,
                content,
                node,
            );
        }
    }

    /// `torch.autocast(device_type="cuda")`, `torch.amp.GradScaler("cuda")`:
    /// device-generic APIs pointed at CUDA.
    fn device_call(&mut self, node: Node<'_>) {
        let Some(function) = node.child_by_field_name("function") else {
            return;
        };
        let Some(segments) = self.chain(function) else {
            return;
        };
        let resolved = self.resolve(&segments);
        let generic = matches!(
            resolved.as_str(),
            "torch.autocast"
                | "torch.amp.autocast"
                | "torch.amp.GradScaler"
                | "torch.cpu.amp.autocast"
        );
        let args = node
            .child_by_field_name("arguments")
            .map_or("", |a| self.text(a));
        if generic && (args.contains("\"cuda") || args.contains("'cuda")) {
            self.site(
                SiteKind::FrameworkCall,
                Library::Torch,
                format!("{resolved}[cuda]"),
                function,
            );
        }
    }

    /// `print(...)`, `logger.info(...)`, `warnings.warn(...)`: the
    /// arguments are a message (see [`Visitor::messages`]).
    fn message_call(&mut self, node: Node<'_>) {
        let Some(function) = node.child_by_field_name("function") else {
            return;
        };
        let Some(segments) = self.chain(function) else {
            return;
        };
        let resolved = self.resolve(&segments);
        let last = segments.last().copied().unwrap_or("");
        let logging_method = segments.len() > 1 && LOGGING_METHODS.contains(&last);
        if resolved == "print" || resolved == "warnings.warn" || logging_method {
            if let Some(arguments) = node.child_by_field_name("arguments") {
                self.messages
                    .push((arguments.start_byte(), arguments.end_byte()));
            }
        }
    }

    /// `use_cuda=True` (old profiler) and CUDA sources passed to
    /// `cpp_extension.load(...)`.
    fn keyword(&mut self, node: Node<'_>) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let key = self.text(name);
        if key == "use_cuda" {
            self.site(SiteKind::FrameworkCall, Library::Torch, "use_cuda=", name);
        } else if key == "cuda_sources" || key == "with_cuda" {
            self.site(SiteKind::BuildRule, Library::Build, format!("{key}="), name);
        } else if key == "sources" {
            let value = node
                .child_by_field_name("value")
                .map_or("", |v| self.text(v));
            if value.contains(".cu\"") || value.contains(".cu'") {
                self.site(SiteKind::BuildRule, Library::Build, "sources=[*.cu]", name);
            }
        }
    }
}

/// `name = value` (or `name += value`): the assigned identifier and the
/// value; `None` for any other target (`a.b = ...`, `a, b = ...`).
pub(crate) fn simple_assignment(assignment: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    let left = assignment.child_by_field_name("left")?;
    let right = assignment.child_by_field_name("right")?;
    (left.kind() == "identifier").then_some((left, right))
}

/// A node's source text ("" where it is not UTF-8).
pub(crate) fn node_text<'s>(node: Node<'_>, src: &'s [u8]) -> &'s str {
    std::str::from_utf8(&src[node.start_byte()..node.end_byte()]).unwrap_or("")
}

/// What a string literal holds: its content parts joined (escape
/// sequences left out), and whether it has `{...}` interpolations or
/// escape sequences.
pub(crate) struct StringLiteral {
    pub(crate) content: String,
    pub(crate) interpolated: bool,
    pub(crate) escaped: bool,
}

pub(crate) fn string_literal(node: Node<'_>, src: &[u8]) -> StringLiteral {
    let mut literal = StringLiteral {
        content: String::new(),
        interpolated: false,
        escaped: false,
    };
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "string_content" => literal.content.push_str(node_text(child, src)),
            "interpolation" => literal.interpolated = true,
            "escape_sequence" => literal.escaped = true,
            _ => {}
        }
    }
    literal
}

/// The identifiers of a pure `a.b.c` chain, outermost last; `None` when a
/// call, subscript or literal sits inside it.
pub(crate) fn chain_segments<'s>(node: Node<'_>, src: &'s [u8]) -> Option<Vec<&'s str>> {
    let text = |n: Node<'_>| node_text(n, src);
    let mut segments = Vec::new();
    let mut current = node;
    loop {
        match current.kind() {
            "identifier" => {
                segments.push(text(current));
                segments.reverse();
                return Some(segments);
            }
            "attribute" => {
                segments.push(text(current.child_by_field_name("attribute")?));
                current = current.child_by_field_name("object")?;
            }
            _ => return None,
        }
    }
}

/// One name an import statement binds.
pub(crate) struct ImportBinding<'t> {
    /// The local name (`dist` in `import torch.distributed as dist`).
    pub(crate) local: String,
    /// The dotted path the local name stands for (`torch` for a plain
    /// `import torch.cuda`, which binds `torch`).
    pub(crate) bound: String,
    /// The dotted path imported (`torch.cuda`).
    pub(crate) full: String,
    /// The imported path's node.
    pub(crate) path: Node<'t>,
}

/// The names an `import` or `from ... import` statement binds.
pub(crate) fn import_bindings<'t>(node: Node<'t>, src: &[u8]) -> Vec<ImportBinding<'t>> {
    let text = |n: Node<'_>| node_text(n, src);
    let module = node
        .child_by_field_name("module_name")
        .map(|m| text(m).to_owned());
    let mut cursor = node.walk();
    let mut bindings = Vec::new();
    for child in node.children_by_field_name("name", &mut cursor) {
        let (path_node, alias) = match child.kind() {
            "aliased_import" => (
                child.child_by_field_name("name"),
                child.child_by_field_name("alias"),
            ),
            _ => (Some(child), None),
        };
        let Some(path) = path_node else { continue };
        let written = text(path);
        let full = module
            .as_ref()
            .map_or_else(|| written.to_owned(), |m| format!("{m}.{written}"));
        let local = match (alias, &module) {
            (Some(alias), _) => text(alias).to_owned(),
            (None, Some(_)) => written.to_owned(),
            (None, None) => written.split('.').next().unwrap_or(written).to_owned(),
        };
        let bound = if alias.is_none() && module.is_none() {
            local.clone()
        } else {
            full.clone()
        };
        bindings.push(ImportBinding {
            local,
            bound,
            full,
            path,
        });
    }
    bindings
}

/// Where a node sits: its parent's kind and its field in the parent.
#[derive(Clone, Copy)]
struct Place {
    parent: &'static str,
    field: &'static str,
}

impl Place {
    /// The object of an enclosing attribute: the chain is handled once, at
    /// its outermost attribute.
    fn is_chain_inner(self) -> bool {
        self.parent == "attribute" && self.field == "object"
    }

    fn is_member_name(self) -> bool {
        self.parent == "attribute" && self.field == "attribute"
    }

    fn is_called(self) -> bool {
        self.parent == "call" && self.field == "function"
    }
}

fn range_of(node: Node<'_>) -> TextRange {
    TextRange::new(node.start_byte(), node.end_byte())
}

/// The call `node` is the function of, or the assignment statement it is
/// the single target of, with the argument (assigned value) ranges.
/// `Node::parent` walks from the root; it runs for sites only.
fn call_or_assignment(node: Node<'_>) -> Option<(TextRange, Vec<TextRange>)> {
    let parent = node.parent()?;
    let is_field = |field: &str| parent.child_by_field_name(field) == Some(node);
    match parent.kind() {
        "call" if is_field("function") => {
            let arguments = parent.child_by_field_name("arguments")?;
            let mut cursor = arguments.walk();
            let args = arguments
                .named_children(&mut cursor)
                .filter(|a| a.kind() != "comment")
                .map(range_of)
                .collect();
            Some((range_of(parent), args))
        }
        "assignment" if is_field("left") && parent.child_by_field_name("type").is_none() => {
            let statement = parent.parent()?;
            let right = parent.child_by_field_name("right")?;
            (statement.kind() == "expression_statement" && right.kind() != "assignment")
                .then(|| (range_of(parent), vec![range_of(right)]))
        }
        _ => None,
    }
}

/// Whether a dotted path says CUDA (`torch.version.cuda`,
/// `is_nccl_available`), as `torch.profiler.profile` does not.
pub fn names_cuda(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    ["cuda", "cudnn", "nccl", "nvtx", "nvml"]
        .iter()
        .any(|word| lower.contains(word))
}

fn torch_kind(path: &str) -> Option<(SiteKind, Library)> {
    if TORCH_CUDA_PREFIXES.iter().any(|p| dotted_within(path, p)) {
        return Some((SiteKind::FrameworkCall, Library::Torch));
    }
    let rest = path.strip_prefix(CPP_EXTENSION)?;
    matches!(
        rest,
        "CUDAExtension" | "BuildExtension" | "load" | "load_inline" | "CUDA_HOME"
    )
    .then_some((SiteKind::BuildRule, Library::Build))
}

/// `"cuda"`, `"cuda:1"`, `f"cuda:{rank}"`, and the pieces a device name
/// is built from: `"cuda:"` (`"cuda:" + str(rank)`), `"cuda:{}"`
/// (`.format`) and `"cuda:%d"` (`%`).
fn is_device_string(content: &str, interpolated: bool) -> bool {
    let Some(rest) = content.strip_prefix("cuda") else {
        return false;
    };
    let Some(index) = rest.strip_prefix(':') else {
        return rest.is_empty() && !interpolated;
    };
    if interpolated {
        return index.is_empty();
    }
    let number = !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit());
    let placeholder = index
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .is_some_and(|field| {
            field
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
        });
    let percent = matches!(index, "%d" | "%i" | "%s" | "%u");
    index.is_empty() || number || placeholder || percent
}

fn is_cuda_env_var(content: &str) -> bool {
    let looks_like_var = !content.is_empty()
        && content
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    looks_like_var
        && (content.starts_with("CUDA_")
            || content.starts_with("NCCL_")
            || content.starts_with("CUDNN_")
            || content.starts_with("PYTORCH_CUDA_")
            || content.starts_with("PYTORCH_NVML_")
            || content == "NVIDIA_VISIBLE_DEVICES")
}
