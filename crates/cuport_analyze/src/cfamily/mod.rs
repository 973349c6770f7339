//! C, C++ and CUDA analysis: a token pass finds every site; bracket matching
//! gives argument and launch-configuration spans; tree-sitter is only asked
//! for a syntax check where the caller wants one.

mod brackets;
mod classify;
pub use classify::library_of;
mod constructs;
mod directives;
mod lexer;
mod operators;
mod preprocessor;
mod syntax;

use cuport_model::{Library, LineIndex, SiteKind, TextRange};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::known::KnownNames;
use crate::site::{FileAnalysis, ParseIssue, Site};
use brackets::{match_brackets, UNMATCHED};
use classify::{classify, namespace_library, Usage};
use lexer::{lex, TokKind, Token};
use preprocessor::ConditionTracker;

pub(crate) use syntax::SyntaxChecker;

/// One C-family file's bytes, its text when they are valid UTF-8 (checked
/// once by the caller), and its line index.
#[derive(Clone, Copy)]
pub(crate) struct FileSource<'a> {
    pub(crate) src: &'a [u8],
    pub(crate) text: Option<&'a str>,
    pub(crate) line_index: &'a LineIndex,
}

/// Analyses one C-family file. `cuda_file` is true for `.cu`/`.cuh`.
/// With a `checker`, tree-sitter-cpp also reports regions it cannot parse.
pub(crate) fn analyze(
    source: FileSource<'_>,
    cuda_file: bool,
    checker: Option<&mut SyntaxChecker>,
    known: Option<&KnownNames>,
) -> FileAnalysis {
    let FileSource {
        src,
        text,
        line_index,
    } = source;
    debug_assert!(text.is_none_or(|text| std::ptr::eq(text.as_bytes(), src)));
    let lexed = lex(src);
    let matches = match_brackets(&lexed.tokens);
    let mut scanner = Scanner {
        src,
        text,
        line_index,
        tokens: &lexed.tokens,
        matches: &matches,
        cuda_file,
        known,
        sites: Vec::new(),
        conditions: ConditionTracker::default(),
        defined_names: Vec::new(),
        variables: FxHashSet::default(),
        namespace_aliases: FxHashMap::default(),
        used_namespaces: Vec::new(),
        directive: None,
    };
    scanner.run();
    let function_definitions =
        operators::function_definitions(src, &lexed.tokens, &matches, &scanner.defined_names);
    let mut analysis = FileAnalysis {
        sites: scanner.sites,
        conditions: scanner.conditions.conditions,
        defined_names: scanner.defined_names,
        vector_operators: operators::vector_operator_definitions(src, &lexed.tokens, &matches),
        function_definitions,
        ..FileAnalysis::default()
    };
    analysis.parse_issues = lexed
        .problems
        .iter()
        .map(|p| lexical_issue(line_index, p.offset, p.message))
        .collect();
    if let Some(checker) = checker {
        let regions = checker.check(src, &lexed.tokens, &matches, line_index);
        analysis.parse_issues.extend(regions);
    }
    analysis
}

fn lexical_issue(line_index: &LineIndex, offset: u32, message: &str) -> ParseIssue {
    let line = line_index.line_col(offset as usize).line;
    ParseIssue {
        line_start: line,
        line_end: line,
        message: message.to_owned(),
    }
}

/// Whether the naming conventions alone say `name` is CUDA's (`cudaMalloc`,
/// `atomicAdd`, `CUBLAS_OP_N`), in any position, as opposed to a plain name
/// only the rule tables know (`umin`).
pub(crate) fn follows_naming_conventions(name: &str) -> bool {
    [Usage::Call, Usage::TypeLike, Usage::Other]
        .into_iter()
        .any(|usage| classify(name, usage, true).is_some())
}

/// Whether `needle` occurs anywhere in `src` (comments included): a cheap
/// pre-filter before heavier work.
pub(crate) fn contains(src: &[u8], needle: &[u8]) -> bool {
    lexer::memfind(src, needle).is_some()
}

/// Which directive the scanner is inside, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Directive {
    /// `#define`: the body is code and is scanned as such.
    Define,
    /// Everything else (`#pragma`, `#error`, `#line`, ...): not code.
    Other,
}

pub(crate) struct Scanner<'a> {
    src: &'a [u8],
    /// `src` as text when it is valid UTF-8 (nearly always): token texts are
    /// then slices, not a UTF-8 check per token.
    text: Option<&'a str>,
    line_index: &'a LineIndex,
    tokens: &'a [Token],
    matches: &'a [u32],
    cuda_file: bool,
    known: Option<&'a KnownNames>,
    sites: Vec<Site>,
    conditions: ConditionTracker,
    defined_names: Vec<String>,
    /// Variables this file declares with a name that looks like (or is) a
    /// CUDA API's (`cublasStatus_t cublasStatus;`): its other uses that are
    /// not calls are the variable, not the API.
    variables: FxHashSet<&'a str>,
    /// `namespace cg = cooperative_groups;`: alias → (namespace, library).
    namespace_aliases: FxHashMap<&'a str, (&'a str, Library)>,
    /// `using namespace cub;`: library namespaces whose names the file
    /// may then write unqualified (`BLOCK_LOAD_WARP_TRANSPOSE`).
    used_namespaces: Vec<&'a str>,
    directive: Option<Directive>,
}

impl<'a> Scanner<'a> {
    fn run(&mut self) {
        self.collect_namespace_aliases();
        let mut i = 0;
        while i < self.tokens.len() {
            i = self.step(i);
        }
    }

    /// Handles the token at `i`; returns the index of the next token to visit.
    fn step(&mut self, i: usize) -> usize {
        let token = self.tokens[i];
        match token.kind {
            TokKind::Directive => self.directive(i),
            TokKind::DirectiveEnd => {
                self.directive = None;
                i + 1
            }
            _ if matches!(self.directive, Some(Directive::Other)) => i + 1,
            TokKind::Ident => self.identifier(i),
            TokKind::LaunchOpen => {
                self.launch(i);
                i + 1
            }
            TokKind::Number if self.cuda_file => {
                self.warp_literal(i);
                i + 1
            }
            _ => i + 1,
        }
    }

    fn text(&self, index: usize) -> &'a str {
        let token = self.tokens[index];
        let range = token.start as usize..token.end as usize;
        match self.text {
            Some(text) => text.get(range).unwrap_or(""),
            None => std::str::from_utf8(token.text(self.src)).unwrap_or(""),
        }
    }

    fn kind_at(&self, index: usize) -> Option<TokKind> {
        self.tokens.get(index).map(|t| t.kind)
    }

    fn matching(&self, index: usize) -> Option<usize> {
        let m = *self.matches.get(index)?;
        (m != UNMATCHED).then_some(m as usize)
    }

    fn range(&self, first: usize, last: usize) -> TextRange {
        TextRange::new(
            self.tokens[first].start as usize,
            self.tokens[last].end as usize,
        )
    }

    fn push(&mut self, mut site: Site) -> usize {
        site.condition = self.conditions.current();
        self.sites.push(site);
        self.sites.len() - 1
    }

    /// How the name ending at token `last` is used.
    fn usage_after(&self, last: usize) -> Usage {
        match self.kind_at(last + 1) {
            Some(TokKind::Punct(b'(')) => Usage::Call,
            Some(TokKind::Ident | TokKind::Scope) => Usage::TypeLike,
            Some(TokKind::Punct(b'*' | b'&')) => match self.kind_at(last + 2) {
                Some(TokKind::Ident | TokKind::Punct(b'*' | b'&' | b')' | b',')) => Usage::TypeLike,
                _ => Usage::Other,
            },
            Some(TokKind::Punct(b'>' | b')')) if self.is_in_template_or_cast(last) => {
                Usage::TypeLike
            }
            _ => Usage::Other,
        }
    }

    /// `static_cast<cudaStream_t>(x)`, `sizeof(cudaEvent_t)`: the name is a type.
    fn is_in_template_or_cast(&self, index: usize) -> bool {
        index > 0
            && matches!(self.kind_at(index - 1), Some(TokKind::Punct(b'<' | b'(')))
            && index > 1
            && matches!(
                self.text(index - 2),
                "static_cast" | "reinterpret_cast" | "sizeof" | "const_cast"
            )
    }

    fn identifier(&mut self, i: usize) -> usize {
        // CUDA's qualifiers are keywords to nvcc, never members: in
        // `x.\n__global__ void k()` (a fuzz finding) the kernel is one
        // whatever stray `.` precedes it.
        let after_member = i > 0
            && matches!(
                self.kind_at(i - 1),
                Some(TokKind::Punct(b'.') | TokKind::Arrow)
            )
            && !classify::is_qualifier(self.text(i));
        if after_member {
            self.member(i);
            return i + 1;
        }
        if self.opens_namespace(i) {
            // `namespace cudaTimeCalculator {` (CX9898/cmake-cuda-sample):
            // the project's own namespace, whatever its name looks like.
            self.defined_names.push(self.text(i).to_owned());
            return i + 1;
        }
        // A keyword before `::` (`typedef ::cub::BlockLoad<...>`, `return
        // ::f()`) starts no qualified name: the `::` after it is the global
        // scope of the name that follows.
        let after_keyword =
            |k: usize| self.kind_at(k) == Some(TokKind::Ident) && is_keyword(self.text(k));
        let leading_scope = i > 0
            && self.kind_at(i - 1) == Some(TokKind::Scope)
            && !(i > 1 && self.kind_at(i - 2) == Some(TokKind::Ident) && !after_keyword(i - 2));
        // `::cub::BlockLoad` names the library's namespace from the global
        // scope; any other `::a::b` is left to the name's own rules.
        let library_from_global = leading_scope && namespace_library(self.text(i)).is_some();
        let qualified_start = !is_keyword(self.text(i)) && (!leading_scope || library_from_global);
        if self.kind_at(i + 1) == Some(TokKind::Scope) && qualified_start {
            return self.qualified(i);
        }
        let name = self.text(i);
        // Aliases were collected before the scan; what a using directive
        // brings unqualified applies from here on.
        if name == "using" {
            self.using_namespace(i);
        }
        let usage = self.usage_after(i);
        let classified = classify(name, usage, self.cuda_file);
        let declarable = classified.is_some_and(|(_, kind)| is_callable(kind))
            && !classify::is_builtin_variable(name);
        if declarable && usage == Usage::Call && self.is_function_declaration(i) {
            self.defined_names.push(name.to_owned());
            return i + 1;
        }
        let table_known = classified.is_some() || self.table_name(name).is_some();
        if table_known && self.declares_a_type(i) && !self.is_real_api(name) {
            self.defined_names.push(name.to_owned());
            return i + 1;
        }
        if table_known && self.is_variable_definition(i) {
            // `const ncclDataType_t ncclFloatX = ncclFloat;` (llm.c): the
            // project's own name that only looks like a library's.
            self.defined_names.push(name.to_owned());
            self.variables.insert(name);
            for k in self.more_declarators(i) {
                let more = self.text(k);
                self.defined_names.push(more.to_owned());
                self.variables.insert(more);
            }
            return i + 1;
        }
        if usage != Usage::Call && self.variables.contains(name) {
            // `cublasStatus = cublasCreate(&h);` after `cublasStatus_t
            // cublasStatus;` (cuda-samples conjugateGradient): the variable,
            // which a rename to the legacy type's HIP name broke.
            return i + 1;
        }
        if let Some((library, kind)) = classified {
            let index = self.name_site(i, i, name, library, kind);
            if kind == SiteKind::Qualifier && name == "__global__" {
                self.kernel_definition(i);
            }
            if kind == SiteKind::Qualifier && name == "__device__" {
                self.sites[index].body = self.function_body(i);
            }
        } else if let Some(library) = self.torch_name(name) {
            let kind = if usage == Usage::Call {
                SiteKind::FrameworkCall
            } else {
                SiteKind::EnumConstant
            };
            self.name_site(i, i, name, library, kind);
        } else if let Some((library, kind)) = self.table_name(name) {
            // A project's own function of a name the tables know (`umin`
            // in a helper header) is recorded as defined, like a
            // convention-named one, and its uses are the project's.
            if is_callable(kind) && usage == Usage::Call && self.is_function_declaration(i) {
                self.defined_names.push(name.to_owned());
            } else {
                self.name_site(i, i, name, library, kind);
            }
        } else if !self.used_namespaces.is_empty() {
            self.name_through_using(i, usage);
        }
        i + 1
    }

    /// An unqualified name at `i` that a `using namespace` of a library
    /// brought in (`BLOCK_LOAD_WARP_TRANSPOSE` after `using namespace cub;`,
    /// HeCBench blockScan) is recorded under its full name. Only names the
    /// tables know; one the project declares here (its own `reduce`, a
    /// variable `plus`) is its own from then on.
    fn name_through_using(&mut self, i: usize, usage: Usage) {
        if i > 0 && self.kind_at(i - 1) == Some(TokKind::Scope) {
            return;
        }
        let name = self.text(i);
        if self.variables.contains(name) || self.defined_names.iter().any(|d| d == name) {
            return;
        }
        let Some((full, library, kind)) = self.used_namespaces.iter().find_map(|namespace| {
            let full = format!("{namespace}::{name}");
            self.table_name(&full)
                .map(|(library, kind)| (full, library, kind))
        }) else {
            return;
        };
        if self.is_variable_definition(i) {
            self.variables.insert(name);
            self.defined_names.push(name.to_owned());
        } else if self.declares_a_type(i)
            || (usage == Usage::Call && self.is_function_declaration(i))
        {
            self.defined_names.push(name.to_owned());
        } else {
            self.name_site(i, i, &full, library, kind);
        }
    }

    /// Whether the name at `i`, followed by `(`, is declared or defined
    /// here (`void cudaCheck(cudaError_t e) {`) rather than called: a type
    /// name before it, or a body after its parameter list.
    fn is_function_declaration(&self, i: usize) -> bool {
        self.follows_a_type_name(i) || self.body_follows(i + 1)
    }

    /// The token before `i` is a name that is no keyword starting an
    /// expression (`int f`, `cudaError_t e`; not `return f`).
    /// A CUDA qualifier before the name is no type (`__forceinline__
    /// cublasAlloc(...)`): the port rewrites it, and a rerun would read the
    /// name otherwise (a fuzzing finding:
    /// `fuzz_regressions::a_name_after_a_cuda_qualifier_is_read_the_same_after_the_port`).
    fn follows_a_type_name(&self, i: usize) -> bool {
        i > 0
            && self.kind_at(i - 1) == Some(TokKind::Ident)
            && !is_keyword(self.text(i - 1))
            && !classify::is_qualifier(self.text(i - 1))
    }

    /// `TYPE NAME =` or `TYPE NAME;`: the name at token `i` is a variable
    /// (or typedef) being defined, after a type name that is no keyword
    /// starting an expression (`return NAME;` uses a name).
    /// A call's argument list declares nothing, however malformed: in
    /// `cublasGemmEx(..., t CUBLAS_COMPUTE_32F, x)` (a fuzz finding) the
    /// constant is the API's, and reading it as a definition left it for
    /// a second run to rename.
    /// `TYPE NAME >= 800` compares (the lexer reads `>=` as `=` too): only
    /// a plain `=` defines.
    fn is_variable_definition(&self, i: usize) -> bool {
        let defines = match self.kind_at(i + 1) {
            Some(TokKind::Punct(b';' | b',')) => true,
            Some(TokKind::Punct(b'=')) => self.text(i + 1) == "=",
            _ => false,
        };
        defines && self.follows_a_type_name(i) && !self.in_call_arguments(i)
    }

    /// Whether token `i` is in the argument list of a call: the innermost
    /// `(` around it follows a name that is called there, not declared
    /// (`void f(cudaStream_t s, ...)`, `T x(...)`) and not a statement
    /// keyword (`for (T x = ...;`), or closes a launch's configuration
    /// (`k<<<g, b>>>(...)`).
    fn in_call_arguments(&self, i: usize) -> bool {
        let Some(open) = self.enclosing_parenthesis(i) else {
            return false;
        };
        if open > 0 && self.kind_at(open - 1) == Some(TokKind::LaunchClose) {
            return true;
        }
        open > 0
            && self.kind_at(open - 1) == Some(TokKind::Ident)
            && !is_keyword(self.text(open - 1))
            && !matches!(
                self.text(open - 1),
                "for" | "if" | "while" | "switch" | "catch"
            )
            && !self.is_function_declaration(open - 1)
    }

    /// The innermost `(` still open at token `i` within its statement.
    fn enclosing_parenthesis(&self, i: usize) -> Option<usize> {
        let mut k = i;
        while k > 0 {
            k -= 1;
            match self.kind_at(k)? {
                TokKind::Punct(b'(') => return Some(k),
                TokKind::Punct(b')' | b']' | b'}') => match self.matching(k) {
                    Some(open) if open < k => k = open,
                    _ => return None,
                },
                TokKind::Punct(b';' | b'{') => return None,
                _ => {}
            }
        }
        None
    }

    /// The names a declaration goes on to declare after its first one, at
    /// `i`: `cudaError_t cudaStat1, cudaStat2;` (HeCBench ge-spmm). A name
    /// after a comma counts only when `,`, `;`, `=` or `[` follows it: in a
    /// parameter list a type follows the comma, and its parameter name.
    fn more_declarators(&self, i: usize) -> Vec<usize> {
        let mut names = Vec::new();
        let mut k = i + 1;
        while let Some(kind) = self.kind_at(k) {
            match kind {
                TokKind::Punct(b';' | b')' | b'}') => break,
                TokKind::Punct(b'(' | b'[' | b'{') => k = self.matching(k).unwrap_or(k),
                TokKind::Punct(b',')
                    if self.kind_at(k + 1) == Some(TokKind::Ident)
                        && matches!(
                            self.kind_at(k + 2),
                            Some(TokKind::Punct(b',' | b';' | b'=' | b'['))
                        ) =>
                {
                    names.push(k + 1);
                }
                _ => {}
            }
            k += 1;
        }
        names
    }

    /// Whether the rule tables know `name` as a real API: a project that
    /// declares one (cuda-samples' `cuda_drvapi_dynlink_cuda.h` redeclares
    /// the driver API's `CUarray_format_enum`) still uses CUDA through it.
    fn is_real_api(&self, name: &str) -> bool {
        self.known.is_some_and(|known| (known.is_known)(name))
    }

    /// `struct NAME {`, `class NAME : base`, `struct NAME;`: the project
    /// declares its own type, though its name looks like CUDA's (HeCBench
    /// bmf's `template <...> struct cuBool_config {`).
    fn declares_a_type(&self, i: usize) -> bool {
        i > 0
            && self.kind_at(i - 1) == Some(TokKind::Ident)
            && matches!(self.text(i - 1), "struct" | "class" | "union" | "enum")
            && matches!(
                self.kind_at(i + 1),
                Some(TokKind::Punct(b'{' | b':' | b';'))
            )
    }

    fn body_follows(&self, open: usize) -> bool {
        let Some(close) = self.matching(open) else {
            return false;
        };
        let mut k = close + 1;
        while let Some(kind) = self.kind_at(k) {
            match kind {
                TokKind::Punct(b'{') => return true,
                TokKind::Ident
                    if matches!(
                        self.text(k),
                        "const" | "noexcept" | "override" | "final" | "volatile"
                    ) =>
                {
                    k += 1
                }
                _ => return false,
            }
        }
        false
    }

    fn torch_name(&self, name: &str) -> Option<Library> {
        matches!(
            name,
            "kCUDA"
                | "getCurrentCUDAStream"
                | "getDefaultCUDAStream"
                | "CUDAGuard"
                | "OptionalCUDAGuard"
                | "CUDAStreamGuard"
                | "getCurrentCUDABlasHandle"
        )
        .then_some(Library::Torch)
    }

    /// `x.is_cuda()`, `t.cuda()`: PyTorch C++ tensor methods.
    fn member(&mut self, i: usize) {
        let name = self.text(i);
        if matches!(name, "is_cuda" | "cuda") && self.kind_at(i + 1) == Some(TokKind::Punct(b'(')) {
            self.name_site(i, i, name, Library::Torch, SiteKind::FrameworkCall);
        }
    }

    /// A `a::b::c` chain starting at identifier `i`.
    fn qualified(&mut self, i: usize) -> usize {
        let mut last = i;
        while self.kind_at(last + 1) == Some(TokKind::Scope)
            && self.kind_at(last + 2) == Some(TokKind::Ident)
        {
            last += 2;
        }
        let first = self.text(i);
        let second = if last > i { self.text(i + 2) } else { "" };
        let library = namespace_library(first)
            .or_else(|| {
                self.namespace_aliases
                    .get(first)
                    .map(|(_, library)| *library)
            })
            .or_else(|| {
                (matches!(first, "at" | "c10" | "torch") && second == "cuda")
                    .then_some(Library::Torch)
            })
            .or_else(|| {
                // `at::hip::getCurrentHIPStreamMasqueradingAsCUDA` is ROCm
                // PyTorch's own name (what the HIP port writes), not CUDA's.
                (matches!(first, "at" | "c10" | "torch")
                    && second != "hip"
                    && self.text(last).contains("CUDA"))
                .then_some(Library::Torch)
            });
        let Some(library) = library else {
            return last + 1;
        };
        // Sites are named with the real namespace (`cg::reduce` is
        // `cooperative_groups::reduce`) so the rule tables see one name.
        let canonical = |k: usize| match self.namespace_aliases.get(self.text(k)) {
            Some((namespace, _)) if k == i => *namespace,
            _ => self.text(k),
        };
        let name: String = (i..=last)
            .step_by(2)
            .map(canonical)
            .collect::<Vec<_>>()
            .join("::");
        let kind = match self.kind_at(last + 1) {
            Some(TokKind::Punct(b'(')) if library == Library::Torch => SiteKind::FrameworkCall,
            Some(TokKind::Punct(b'(')) => SiteKind::LibraryCall,
            Some(TokKind::Punct(b'<') | TokKind::Ident | TokKind::Punct(b'*' | b'&')) => {
                SiteKind::Type
            }
            _ if library == Library::Torch => SiteKind::EnumConstant,
            _ => SiteKind::Type,
        };
        self.name_site(i, last, &name, library, kind);
        last + 1
    }

    /// `namespace cg = cooperative_groups;`, `namespace wmma =
    /// nvcuda::wmma;`
    /// Whether `i` is the name in `namespace NAME {`.
    fn opens_namespace(&self, i: usize) -> bool {
        i > 0
            && self.kind_at(i - 1) == Some(TokKind::Ident)
            && self.text(i - 1) == "namespace"
            && self.kind_at(i + 1) == Some(TokKind::Punct(b'{'))
    }

    fn namespace_alias(&mut self, i: usize) {
        if self.kind_at(i + 1) == Some(TokKind::Ident)
            && self.kind_at(i + 2) == Some(TokKind::Punct(b'='))
            && self.kind_at(i + 3) == Some(TokKind::Ident)
        {
            let Some(library) = namespace_library(self.text(i + 3)) else {
                return;
            };
            let nested = (self.kind_at(i + 4) == Some(TokKind::Scope))
                .then(|| nested_namespace(self.text(i + 3), self.text(i + 5)))
                .flatten();
            let target = nested.unwrap_or(self.text(i + 3));
            self.namespace_aliases
                .insert(self.text(i + 1), (target, library));
        }
    }

    /// The file's namespace aliases (`namespace cg = cooperative_groups;`)
    /// and the nested namespaces a `using namespace nvcuda;` brings
    /// (`wmma`), known before the scan: a macro body is expanded where it
    /// is used, so `#define C_LAYOUT wmma::mem_row_major` above the using
    /// directive (cuda-samples cudaTensorCoreGemm) names nvcuda::wmma too.
    fn collect_namespace_aliases(&mut self) {
        // Every file is scanned: skip the extra pass where nothing can match.
        if memchr::memmem::find(self.src, b"namespace").is_none() {
            return;
        }
        for i in 0..self.tokens.len() {
            if self.tokens[i].kind != TokKind::Ident {
                continue;
            }
            match self.text(i) {
                "namespace" => self.namespace_alias(i),
                "using" => {
                    if let Some((outer, library)) = self.used_library_namespace(i) {
                        self.alias_nested_namespaces(outer, library);
                    }
                }
                _ => {}
            }
        }
    }

    /// `using namespace cub;`: the library's own names are then written
    /// unqualified (its nested namespaces, `wmma` of `nvcuda`, were aliased
    /// before the scan).
    fn using_namespace(&mut self, i: usize) {
        let Some((outer, _)) = self.used_library_namespace(i) else {
            return;
        };
        if !self.used_namespaces.contains(&outer) {
            self.used_namespaces.push(outer);
        }
    }

    /// The library namespace of `using namespace X;` at `i`.
    fn used_library_namespace(&self, i: usize) -> Option<(&'a str, Library)> {
        if self.kind_at(i + 1) != Some(TokKind::Ident)
            || self.text(i + 1) != "namespace"
            || self.kind_at(i + 2) != Some(TokKind::Ident)
        {
            return None;
        }
        let outer = self.text(i + 2);
        namespace_library(outer).map(|library| (outer, library))
    }

    fn alias_nested_namespaces(&mut self, outer: &str, library: Library) {
        for (parent, inner, full) in NESTED_NAMESPACES {
            if *parent == outer {
                self.namespace_aliases.insert(inner, (full, library));
            }
        }
    }

    /// Records a site for the name spanning tokens `first..=last`, with its
    /// call arguments when the name is called.
    /// A name the rule tables know although the naming conventions do not
    /// say it is CUDA's (`make_cuComplex`, `curand_init`, `CUaddress_mode`).
    fn table_name(&self, name: &str) -> Option<(Library, SiteKind)> {
        (self.known?.site_of)(name)
    }

    fn name_site(
        &mut self,
        first: usize,
        last: usize,
        name: &str,
        library: Library,
        kind: SiteKind,
    ) -> usize {
        let mut site = Site::new(kind, library, name, self.range(first, last));
        if self.kind_at(last + 1) == Some(TokKind::Punct(b'(')) {
            if let Some(close) = self.matching(last + 1) {
                site.call = Some(self.range(first, close));
                site.args = self.arguments(last + 1, close);
            }
        }
        let index = self.push(site);
        if kind == SiteKind::DeviceIntrinsic && self.cuda_file {
            self.warp_mask(index);
        }
        index
    }

    fn arguments(&self, open: usize, close: usize) -> Vec<TextRange> {
        brackets::split_commas(self.tokens, self.matches, open, close, |t| t.is_punct(b','))
            .into_iter()
            .map(|(s, e)| TextRange::new(s, e))
            .collect()
    }
}

/// Kinds of names a project could declare a function (or macro) of.
fn is_callable(kind: SiteKind) -> bool {
    matches!(
        kind,
        SiteKind::RuntimeApi
            | SiteKind::DriverApi
            | SiteKind::LibraryCall
            | SiteKind::DeviceIntrinsic
            | SiteKind::Macro
    )
}

/// Keywords after which a name followed by `(` is a call, not a declaration.
/// CUDA namespaces nested in a library's namespace, as `(parent, name,
/// full name)`: after `using namespace nvcuda;`, `wmma::fragment` is
/// `nvcuda::wmma::fragment` (CUDA's mma.h).
const NESTED_NAMESPACES: &[(&str, &str, &str)] = &[("nvcuda", "wmma", "nvcuda::wmma")];

/// The full name of the namespace `inner` nested in `outer`, if CUDA has it.
fn nested_namespace(outer: &str, inner: &str) -> Option<&'static str> {
    NESTED_NAMESPACES
        .iter()
        .find(|(parent, name, _)| *parent == outer && *name == inner)
        .map(|(_, _, full)| *full)
}

/// A C++ keyword that may stand right before `::` (so never the first
/// part of a qualified name).
fn is_keyword(word: &str) -> bool {
    is_expression_keyword(word)
        || matches!(
            word,
            "typedef"
                | "using"
                | "namespace"
                | "goto"
                | "typename"
                | "template"
                | "const"
                | "constexpr"
                | "static"
                | "extern"
                | "inline"
                | "volatile"
                | "struct"
                | "class"
                | "enum"
                | "union"
                | "friend"
                | "virtual"
                | "public"
                | "private"
                | "protected"
                | "sizeof"
                | "decltype"
        )
}

fn is_expression_keyword(word: &str) -> bool {
    matches!(
        word,
        "return"
            | "else"
            | "case"
            | "do"
            | "throw"
            | "co_return"
            | "co_yield"
            | "co_await"
            | "new"
            | "delete"
            | "sizeof"
            | "typeid"
            | "decltype"
            | "alignof"
            | "noexcept"
            | "and"
            | "or"
            | "not"
            | "goto"
    )
}

#[cfg(test)]
mod tests;
