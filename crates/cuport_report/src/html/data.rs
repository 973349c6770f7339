//! The data the page's script reads: only the fields it shows, with the
//! long, repetitive strings (messages, suggestions, names, replacements)
//! stored once in a table, so that a 5,000-file migration stays small.
use cuport_model::Code;
use std::collections::HashMap;

use serde::Serialize;

use crate::document::{FileReport, ReportDocument};
use crate::record::{DiagnosticRecord, EditRecord};

/// `[line, code, status, cuda_name, replacement]`.
type EditRow = (u32, Code, &'static str, usize, usize);
/// `[line, level, code, library, cuda_name, message, suggestion or -1]`.
type DiagRow = (
    u32,
    &'static str,
    Code,
    cuport_model::Library,
    usize,
    usize,
    i64,
);

#[derive(Serialize)]
pub(crate) struct PageData<'a> {
    files: Vec<PageFile<'a>>,
    /// Every interned string; the numbers in `edits` and `diags` index it.
    strings: Vec<&'a str>,
}

#[derive(Serialize)]
struct PageFile<'a> {
    path: &'a str,
    language: cuport_model::Language,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<&'a str>,
    converted: usize,
    left: usize,
    hours: f64,
    libraries: Vec<cuport_model::Library>,
    edits: Vec<EditRow>,
    diags: Vec<DiagRow>,
}

#[derive(Default)]
struct Interner<'a> {
    strings: Vec<&'a str>,
    index: HashMap<&'a str, usize>,
}

impl<'a> Interner<'a> {
    fn id(&mut self, text: &'a str) -> usize {
        if let Some(&id) = self.index.get(text) {
            return id;
        }
        self.strings.push(text);
        self.index.insert(text, self.strings.len() - 1);
        self.strings.len() - 1
    }
}

/// Files worth showing: changed ones and those with diagnostics.
pub(crate) fn page_data(document: &ReportDocument) -> PageData<'_> {
    let mut strings = Interner::default();
    let files = document
        .files
        .iter()
        .filter(|f| f.diff.is_some() || !f.diagnostics.is_empty() || !f.edits.is_empty())
        .map(|f| page_file(f, &mut strings))
        .collect();
    PageData {
        files,
        strings: strings.strings,
    }
}

fn page_file<'a>(file: &'a FileReport, strings: &mut Interner<'a>) -> PageFile<'a> {
    let mut libraries: Vec<_> = file.stats.by_library.keys().copied().collect();
    libraries.extend(file.diagnostics.iter().map(|d| d.library));
    libraries.sort();
    libraries.dedup();
    PageFile {
        path: &file.path,
        language: file.language,
        diff: file.diff.as_deref(),
        converted: file.stats.converted,
        left: file.stats.not_converted,
        hours: file.stats.effort_hours,
        libraries,
        edits: file.edits.iter().map(|e| edit(e, strings)).collect(),
        diags: file.diagnostics.iter().map(|d| diag(d, strings)).collect(),
    }
}

fn edit<'a>(e: &'a EditRecord, strings: &mut Interner<'a>) -> EditRow {
    let name = strings.id(&e.cuda_name);
    let replacement = strings.id(&e.replacement);
    (e.line, e.code, e.status.id(), name, replacement)
}

fn diag<'a>(d: &'a DiagnosticRecord, strings: &mut Interner<'a>) -> DiagRow {
    let name = strings.id(&d.cuda_name);
    let message = strings.id(&d.message);
    let suggestion = d
        .suggestion
        .as_deref()
        .map_or(-1, |s| i64::try_from(strings.id(s)).unwrap_or(-1));
    (
        d.line,
        d.level.id(),
        d.code,
        d.library,
        name,
        message,
        suggestion,
    )
}
