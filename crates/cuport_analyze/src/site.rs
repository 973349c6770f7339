//! What the analyser reports: sites (CUDA touchpoints) grouped per file.
use cuport_model::{Language, Library, SiteKind, TextRange};
use serde::{Deserialize, Serialize};

/// One CUDA touchpoint in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Site {
    pub kind: SiteKind,
    pub library: Library,
    /// The CUDA name as written: an identifier, a qualified C++ name
    /// (`thrust::sort`), a dotted Python path (`torch.cuda.synchronize`), a
    /// header path, a device string or a kernel's name.
    pub name: String,
    /// 1-based line of the name.
    pub line: u32,
    /// 1-based column (in bytes) of the name.
    pub column: u32,
    /// Byte range of the name in the original file.
    pub range: TextRange,
    /// For calls (and kernel launches): the whole call, name to closing parenthesis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<TextRange>,
    /// For calls and launches: the byte range of each argument.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<TextRange>,
    /// For kernel launches: grid, block and optionally shared memory and stream.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launch_config: Vec<TextRange>,
    /// For kernel launches of templates (`k<T, 4><<<...>>>`): the template arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_args: Option<TextRange>,
    /// For kernel launches spelled `<< <` ... `>> >` (as Visual Studio's
    /// formatter writes them; nvcc accepts that, clang-based compilers do
    /// not): the two delimiters as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spaced_chevrons: Option<[TextRange; 2]>,
    /// For kernel definitions and the `__device__` qualifier of a function:
    /// the body in braces (absent for declarations and variables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<TextRange>,
    /// Index into the file's `conditions` of the innermost preprocessor
    /// branch this site sits in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<u32>,
}

impl Site {
    pub(crate) fn new(
        kind: SiteKind,
        library: Library,
        name: impl Into<String>,
        range: TextRange,
    ) -> Self {
        Self {
            kind,
            library,
            name: name.into(),
            line: 0,
            column: 0,
            range,
            call: None,
            args: Vec::new(),
            launch_config: Vec::new(),
            template_args: None,
            spaced_chevrons: None,
            body: None,
            condition: None,
        }
    }
}

/// One `#if`-family branch: its condition as normalised text and the branch
/// it is nested in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// The condition under which the branch is compiled, e.g.
    /// `__CUDA_ARCH__ >= 800`, `!(defined(__CUDACC__))`.
    pub text: String,
    /// 1-based line of the directive.
    pub line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
}

/// A region a parser could not make sense of; the file is still analysed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParseIssue {
    pub line_start: u32,
    pub line_end: u32,
    pub message: String,
}

/// Everything found in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileAnalysis {
    /// Sites in source order.
    pub sites: Vec<Site>,
    /// Preprocessor branches referenced by `Site::condition`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Regions that did not parse cleanly (lexical or syntactic).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parse_issues: Vec<ParseIssue>,
    /// Macros this file `#define`s and CUDA-looking functions it declares or
    /// defines (C family). A project's own names are not CUDA touchpoints,
    /// even when they look like CUDA's (`cudaCheck`, `CUDA_CHECK`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defined_names: Vec<String>,
    /// Notes about how the file was read (invalid UTF-8, fallbacks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The project's own compound assignments on CUDA vector types (C
    /// family), which a target's vector types may already define.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vector_operators: Vec<OperatorDefinition>,
    /// The project's own definitions of functions that carry a CUDA name
    /// (`__device__ double atomicMax(double*, double)`), which a target
    /// may already define.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub function_definitions: Vec<FunctionDefinition>,
}

/// A definition (with a body) of a function named like a CUDA one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FunctionDefinition {
    /// `atomicMax`.
    pub name: String,
    /// The parameter types as written, names, `const` and `__restrict__`
    /// left out and spaces removed (`double*`, `double`).
    pub parameters: Vec<String>,
    /// From the start of the definition's first line to its closing brace.
    pub range: TextRange,
}

/// A definition of `operator@=(V&, V)` or `operator++(V&)` for a CUDA vector type `V`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperatorDefinition {
    /// `operator+=`.
    pub operator: String,
    /// `float4`.
    pub vector_type: String,
    /// From the start of the definition's first line to its closing brace.
    pub range: TextRange,
}

impl FileAnalysis {
    /// The conditions a site sits under, outermost first.
    pub fn conditions_of(&self, site: &Site) -> Vec<&str> {
        let mut chain = Vec::new();
        let mut next = site.condition;
        while let Some(index) = next {
            let Some(condition) = self.conditions.get(index as usize) else {
                break;
            };
            chain.push(condition.text.as_str());
            next = condition.parent.filter(|&p| p < index);
        }
        chain.reverse();
        chain
    }
}

/// A file of the tree that was analysed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScannedFile {
    /// Path relative to the scanned root, with `/` separators.
    pub path: String,
    pub language: Language,
    pub bytes: u64,
    pub lines: u64,
    #[serde(flatten)]
    pub analysis: FileAnalysis,
    /// The bytes that were analysed, kept when `ScanOptions::keep_sources`
    /// asks for them (so a migration does not read every file twice).
    /// Shared, not copied, with the migrated files (`cuport_rewrite`): a
    /// copy of every source was a tenth of a port's page faults.
    #[serde(skip)]
    #[schemars(skip)]
    pub source: Option<std::sync::Arc<Vec<u8>>>,
}

/// A file that was not analysed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkippedFile {
    pub path: String,
    pub reason: String,
}
