//! Problems found in rule files, each with file, line and column.
use serde::Serialize;

/// What kind of problem a diagnostic reports (stable ids for tests and JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiagKind {
    /// TOML syntax, duplicate keys, unknown or missing fields, wrong types.
    Syntax,
    Duplicate,
    Conflict,
    ShadowedByPattern,
    DanglingException,
    TemplateArity,
    ArgOutOfRange,
    BadTemplate,
    EnumGap,
    UnknownName,
    BadCode,
    BadPattern,
    MissingField,
    Unconfirmed,
    /// A generated name or template that is not code of the expected shape.
    BadName,
}

impl DiagKind {
    pub fn id(self) -> &'static str {
        match self {
            DiagKind::Syntax => "syntax",
            DiagKind::Duplicate => "duplicate",
            DiagKind::Conflict => "conflict",
            DiagKind::ShadowedByPattern => "shadowed-by-pattern",
            DiagKind::DanglingException => "dangling-exception",
            DiagKind::TemplateArity => "template-arity",
            DiagKind::ArgOutOfRange => "arg-out-of-range",
            DiagKind::BadTemplate => "bad-template",
            DiagKind::EnumGap => "enum-gap",
            DiagKind::UnknownName => "unknown-name",
            DiagKind::BadName => "bad-name",
            DiagKind::BadCode => "bad-code",
            DiagKind::BadPattern => "bad-pattern",
            DiagKind::MissingField => "missing-field",
            DiagKind::Unconfirmed => "unconfirmed",
        }
    }
}

/// A place in a rule file (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Location {
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One problem in a rule file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub location: Location,
    pub kind: DiagKind,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: error[{}]: {}",
            self.location,
            self.kind.id(),
            self.message
        )
    }
}

/// Why a rule set could not be built.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// The I/O error is part of the message (not a `source`), so chained
    /// printing does not repeat it.
    #[error("cannot read rule file {path}: {error}; check the path")]
    Io { path: String, error: std::io::Error },
    #[error("{}", invalid_message(.0))]
    Invalid(Vec<Diagnostic>),
}

/// The problem (each names its file, line, column and field), or the first
/// of several with the command that lists them all.
fn invalid_message(diagnostics: &[Diagnostic]) -> String {
    match diagnostics {
        [] => "the rule files are invalid".to_owned(),
        [one] => one.to_string(),
        [first, rest @ ..] => format!(
            "{first} (and {} more problem(s): `cuport rules check FILE` lists them all)",
            rest.len()
        ),
    }
}

impl RulesError {
    /// The diagnostics behind an `Invalid` error (empty for I/O errors).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            RulesError::Invalid(d) => d,
            RulesError::Io { .. } => &[],
        }
    }
}
