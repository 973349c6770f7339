//! One edit and one diagnostic as report.json stores them: self-contained
//! (line, column and effort resolved), so renderers need nothing else.
use cuport_model::{Code, Effort};
use cuport_model::{Library, SiteKind};
use cuport_rewrite::{Diagnostic, Edit, EditKind, Level};
use serde::{Deserialize, Serialize};

/// What an applied edit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EditStatus {
    /// Ported through a rule table entry.
    Converted,
    /// Ported, but numerics or semantics differ (a diagnostic says how).
    Approximate,
    /// A header the target needs, added at the top.
    Header,
    /// An import the target needs (`import torch_npu`).
    Import,
    /// A `CUPORT CPxxxx:` comment above a line that needs attention.
    Annotation,
}

impl EditStatus {
    pub fn id(self) -> &'static str {
        match self {
            EditStatus::Converted => "converted",
            EditStatus::Approximate => "approximate",
            EditStatus::Header => "header",
            EditStatus::Import => "import",
            EditStatus::Annotation => "annotation",
        }
    }
}

pub(crate) fn edit_status(edit: &Edit, diagnostics: &[Diagnostic]) -> EditStatus {
    match edit.kind {
        EditKind::Header => return EditStatus::Header,
        EditKind::Import => return EditStatus::Import,
        EditKind::Annotation => return EditStatus::Annotation,
        EditKind::Port => {}
    }
    let approximate = diagnostics.iter().any(|d| {
        d.level == cuport_rewrite::Level::Approximate
            && d.range.start < edit.range.end.max(edit.range.start + 1)
            && edit.range.start < d.range.end.max(d.range.start + 1)
    });
    if approximate {
        EditStatus::Approximate
    } else {
        EditStatus::Converted
    }
}

/// An applied edit: bytes `start..end` of the original became `replacement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EditRecord {
    /// 1-based line and byte column of `start` in the original.
    pub line: u32,
    pub column: u32,
    pub start: usize,
    pub end: usize,
    /// The rule code behind the edit (`CP2101`) or cuport's own code.
    pub code: Code,
    /// The CUDA name (or construct) the edit ports.
    pub cuda_name: String,
    /// The original text of `start..end` (lossy UTF-8).
    pub original: String,
    pub replacement: String,
    pub status: EditStatus,
}

/// Something cuport could not port automatically, or wants a person to know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiagnosticRecord {
    pub code: Code,
    pub level: Level,
    /// `low`, `medium` or `high` for manual work; `included` where an
    /// enclosing kernel's or helper's port counts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
    /// This diagnostic's weight in the effort estimate.
    pub effort_hours: f64,
    pub message: String,
    /// 1-based line; `column` counts bytes, `char_column` code points.
    pub line: u32,
    pub column: u32,
    pub char_column: u32,
    pub start: usize,
    pub end: usize,
    pub cuda_name: String,
    pub library: Library,
    pub kind: SiteKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

impl DiagnosticRecord {
    /// What to do about it: the suggestion when there is one, else the message.
    pub fn guidance(&self) -> &str {
        self.suggestion.as_deref().unwrap_or(&self.message)
    }
}
