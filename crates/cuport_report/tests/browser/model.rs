//! What report.html should show, worked out in Rust from the report
//! document alone (not from the page's script): per file its libraries and
//! its hunks, each hunk with the statuses and rule codes of the edits and
//! diagnostics whose original line falls inside it. A filter's expected
//! result is then a plain selection over this model.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use cuport_report::{FileReport, ReportDocument};

/// How the page labels the pseudo-hunk of lines outside the diff.
pub(crate) const OUTSIDE: &str = "outside the diff";

pub(crate) struct ModelFile {
    pub(crate) path: String,
    pub(crate) libraries: BTreeSet<String>,
    pub(crate) hunks: Vec<ModelHunk>,
}

#[derive(Default)]
pub(crate) struct ModelHunk {
    /// The `@@ ... @@` line, or [`OUTSIDE`].
    pub(crate) range: String,
    /// Original lines `first..end`; empty for the outside pseudo-hunk.
    first: u32,
    end: u32,
    pub(crate) statuses: BTreeSet<&'static str>,
    pub(crate) codes: BTreeSet<String>,
}

/// One filter setting, as the page's controls take it.
#[derive(Default, Clone)]
pub(crate) struct Filter {
    pub(crate) status: Option<String>,
    pub(crate) library: Option<String>,
    pub(crate) code: Option<String>,
    pub(crate) path_contains: Option<String>,
}

impl ModelHunk {
    fn shown(&self, filter: &Filter) -> bool {
        filter
            .status
            .as_deref()
            .is_none_or(|s| self.statuses.contains(s))
            && filter.code.as_ref().is_none_or(|c| self.codes.contains(c))
    }
}

impl ModelFile {
    fn shown(&self, filter: &Filter) -> bool {
        let path = self.path.to_lowercase();
        filter
            .path_contains
            .as_ref()
            .is_none_or(|p| path.contains(&p.to_lowercase()))
            && filter
                .library
                .as_ref()
                .is_none_or(|l| self.libraries.contains(l))
    }
}

/// The files the page lists, in order.
pub(crate) fn model(document: &ReportDocument) -> Vec<ModelFile> {
    document
        .files
        .iter()
        .map(model_file)
        .filter(|f| !f.hunks.is_empty())
        .collect()
}

/// `(path, hunk range)` of every hunk `filter` leaves visible, in page order.
pub(crate) fn visible(model: &[ModelFile], filter: &Filter) -> Vec<(String, String)> {
    model
        .iter()
        .filter(|f| f.shown(filter))
        .flat_map(|f| {
            f.hunks
                .iter()
                .filter(|h| h.shown(filter))
                .map(|h| (f.path.clone(), h.range.clone()))
        })
        .collect()
}

/// Paths of the files `filter` leaves visible, in page order.
pub(crate) fn visible_files(model: &[ModelFile], filter: &Filter) -> Vec<String> {
    let hunks = visible(model, filter);
    model
        .iter()
        .filter(|f| hunks.iter().any(|(path, _)| *path == f.path))
        .map(|f| f.path.clone())
        .collect()
}

fn library_id(library: &cuport_model::Library) -> String {
    serde_json::to_value(library)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

fn model_file(file: &FileReport) -> ModelFile {
    let mut hunks: Vec<ModelHunk> = file
        .diff
        .as_deref()
        .unwrap_or_default()
        .lines()
        .filter_map(parse_header)
        .collect();
    let mut outside = ModelHunk {
        range: OUTSIDE.to_owned(),
        ..ModelHunk::default()
    };
    let sites = file
        .edits
        .iter()
        .map(|e| (e.line, e.status.id(), &e.code))
        .chain(
            file.diagnostics
                .iter()
                .map(|d| (d.line, d.level.id(), &d.code)),
        );
    for (line, status, code) in sites {
        let home = hunks
            .iter_mut()
            .find(|h| (h.first..h.end).contains(&line))
            .unwrap_or(&mut outside);
        home.statuses.insert(status);
        home.codes.insert(code.to_string());
    }
    if !outside.statuses.is_empty() {
        hunks.push(outside);
    }
    let libraries = file
        .stats
        .by_library
        .keys()
        .chain(file.diagnostics.iter().map(|d| &d.library))
        .map(library_id)
        .collect();
    ModelFile {
        path: file.path.clone(),
        libraries,
        hunks,
    }
}

/// `@@ -first,len +... @@` as a hunk covering original lines
/// `first..first + max(len, 1)`.
fn parse_header(line: &str) -> Option<ModelHunk> {
    let rest = line.strip_prefix("@@ -")?;
    let old = rest.split(' ').next()?;
    let (first, len) = match old.split_once(',') {
        Some((first, len)) => (first.parse().ok()?, len.parse().ok()?),
        None => (old.parse().ok()?, 1),
    };
    Some(ModelHunk {
        range: line.to_owned(),
        first,
        end: first + u32::max(len, 1),
        ..ModelHunk::default()
    })
}
