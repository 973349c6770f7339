//! summary.md: for pull-request comments and CI job summaries. Bounded in
//! size: the top-N tables are capped, and when the whole would pass the
//! limit the output stops at a row boundary and says what it left out.
use cuport_model::Code;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use cuport_model::Library;

use crate::document::ReportDocument;
use cuport_rewrite::{Level, Tally};

use crate::record::DiagnosticRecord;

/// GitHub job summaries take up to 1 MiB; stay a little under it.
pub const SUMMARY_LIMIT: usize = 1_000_000;
/// How the estimate is computed, said where it is shown.
const EFFORT_METHOD: &str = "How it is counted: each diagnostic by its effort level (low 0.25 h, medium 2 h, high 16 h; without one: approximate 0.25 h, manual 1 h, unsupported 4 h; notes 0 h). Where kernels are rewritten by hand (Ascend C, BANG C), a kernel counts once with its definition and a `__device__` helper once with its `__device__`; what is inside them is marked `included` and not counted again.";
const TOP_APIS: usize = 20;
const TOP_FILES: usize = 100;
const CELL_CHARS: usize = 200;
/// Room kept for the truncation note, so the result stays under the limit.
const NOTE_ROOM: usize = 400;

/// The summary, under [`SUMMARY_LIMIT`] bytes.
pub fn summary_markdown(document: &ReportDocument) -> String {
    summary_markdown_within(document, SUMMARY_LIMIT)
}

/// The summary, under `limit` bytes (at least the header).
pub fn summary_markdown_within(document: &ReportDocument, limit: usize) -> String {
    let mut out = Budget::new(limit);
    header(&mut out, document);
    library_table(&mut out, document);
    top_unported(&mut out, document);
    files_by_work_left(&mut out, document);
    diagnostics_table(&mut out, document);
    out.finish()
}

/// Appends whole lines while they fit; counts the ones that did not.
struct Budget {
    text: String,
    limit: usize,
    omitted_lines: usize,
}

impl Budget {
    fn new(limit: usize) -> Self {
        Self {
            text: String::new(),
            limit,
            omitted_lines: 0,
        }
    }

    fn line(&mut self, line: &str) {
        let fits = self.text.len() + line.len() + 1 + NOTE_ROOM <= self.limit;
        if self.omitted_lines == 0 && fits {
            self.text.push_str(line);
            self.text.push('\n');
        } else {
            self.omitted_lines += 1;
        }
    }

    fn finish(mut self) -> String {
        if self.omitted_lines > 0 {
            let note = format!(
                "\n> **Truncated:** {} more lines did not fit in {} bytes. The full record is report.json; \
                 diagnostics.sarif and the CSV files list every site.\n",
                self.omitted_lines, self.limit
            );
            self.text.push_str(&note);
        }
        self.text
    }
}

fn header(out: &mut Budget, doc: &ReportDocument) {
    let t = &doc.totals;
    out.line(&format!(
        "# cuport migration report: {}",
        doc.run.describe_target()
    ));
    out.line("");
    out.line(&format!(
        "{} of {} files changed ({} edits, {} lines). **{} of {} sites ({}) converted automatically**, \
         {} left for a person, {} approximate, {} suppressed.",
        t.files_changed,
        t.files,
        t.edits,
        t.changed_lines,
        t.converted,
        t.sites,
        share(t.converted, t.sites),
        t.not_converted,
        t.approximate,
        t.suppressed
    ));
    out.line("");
    let split: Vec<String> = t
        .effort_by_level
        .iter()
        .rev()
        .filter(|(_, hours)| **hours > 0.0)
        .map(|(level, h)| format!("{} h {}", hours(*h), level.id()))
        .collect();
    let split = if split.is_empty() {
        String::new()
    } else {
        format!(": {}", split.join(", "))
    };
    out.line(&format!(
        "**Estimated manual effort: {} hours** (about {:.1} engineer-days of 8 hours){split}.",
        hours(t.effort_hours),
        t.effort_hours / 8.0
    ));
    out.line("");
    out.line(EFFORT_METHOD);
    let levels: Vec<String> = t
        .diagnostics
        .iter()
        .rev()
        .map(|(level, n)| format!("{n} {}", level.id()))
        .collect();
    if !levels.is_empty() {
        out.line("");
        out.line(&format!("Diagnostics: {}.", levels.join(", ")));
    }
    out.line("");
    out.line(&format!(
        "<sub>cuport {} · rules {} · root {} · {}</sub>",
        doc.run.cuport_version,
        doc.run.rules.hash,
        code(&doc.root),
        doc.run.generated_at
    ));
}

fn library_table(out: &mut Budget, doc: &ReportDocument) {
    if doc.totals.by_library.is_empty() {
        return;
    }
    let mut rows: Vec<(&Library, &Tally)> = doc.totals.by_library.iter().collect();
    rows.sort_by_key(|(library, t)| (std::cmp::Reverse(t.converted + t.not_converted), **library));
    section(out, "Converted share per library");
    out.line("| Library | Sites | Converted | Left | Share |");
    out.line("|---|---:|---:|---:|---:|");
    for (library, t) in rows {
        let sites = t.converted + t.not_converted;
        out.line(&format!(
            "| {} | {sites} | {} | {} | {} |",
            library.name(),
            t.converted,
            t.not_converted,
            share(t.converted, sites)
        ));
    }
}

/// One unported API, summed over its sites.
#[derive(Default)]
struct Unported<'a> {
    sites: usize,
    hours: f64,
    worst: Option<Level>,
    codes: BTreeSet<Code>,
    guidance: &'a str,
}

fn top_unported(out: &mut Budget, doc: &ReportDocument) {
    let mut by_name: BTreeMap<&str, Unported> = BTreeMap::new();
    for d in all_diagnostics(doc).filter(|(_, d)| d.level.is_unported()) {
        let entry = by_name.entry(d.1.cuda_name.as_str()).or_default();
        entry.sites += 1;
        entry.hours += d.1.effort_hours;
        entry.worst = entry.worst.max(Some(d.1.level));
        entry.codes.insert(d.1.code);
        if entry.guidance.is_empty() {
            entry.guidance = d.1.guidance();
        }
    }
    if by_name.is_empty() {
        return;
    }
    let mut rows: Vec<(&str, Unported)> = by_name.into_iter().collect();
    rows.sort_by(|a, b| {
        b.1.sites
            .cmp(&a.1.sites)
            .then(b.1.hours.total_cmp(&a.1.hours))
    });
    section(out, "Top unsupported APIs");
    out.line("| CUDA API | Sites | Level | Codes | Effort (h) | Guidance |");
    out.line("|---|---:|---|---|---:|---|");
    let total = rows.len();
    for (name, u) in rows.iter().take(TOP_APIS) {
        let codes: Vec<String> = u.codes.iter().map(Code::to_string).collect();
        out.line(&format!(
            "| {} | {} | {} | {} | {:.2} | {} |",
            code(name),
            u.sites,
            u.worst.map_or("", Level::id),
            codes.join(", "),
            u.hours,
            cell(u.guidance)
        ));
    }
    more(out, total, TOP_APIS, "APIs");
}

fn files_by_work_left(out: &mut Budget, doc: &ReportDocument) {
    let mut files: Vec<_> = doc
        .files
        .iter()
        .filter(|f| f.stats.not_converted > 0 || f.stats.effort_hours > 0.0)
        .collect();
    if files.is_empty() {
        return;
    }
    files.sort_by(|a, b| {
        b.stats
            .effort_hours
            .total_cmp(&a.stats.effort_hours)
            .then(b.stats.not_converted.cmp(&a.stats.not_converted))
            .then(a.path.cmp(&b.path))
    });
    section(out, "Files by work left");
    out.line("| File | Effort (h) | Left | Converted | Diagnostics |");
    out.line("|---|---:|---:|---:|---:|");
    for f in files.iter().take(TOP_FILES) {
        out.line(&format!(
            "| {} | {:.2} | {} | {} | {} |",
            code(&f.path),
            f.stats.effort_hours,
            f.stats.not_converted,
            f.stats.converted,
            f.diagnostics.len()
        ));
    }
    more(out, files.len(), TOP_FILES, "files");
}

fn diagnostics_table(out: &mut Budget, doc: &ReportDocument) {
    let mut rows: Vec<_> = all_diagnostics(doc).collect();
    if rows.is_empty() {
        return;
    }
    rows.sort_by(|a, b| {
        (b.1.level, a.0, a.1.line, a.1.column).cmp(&(a.1.level, b.0, b.1.line, b.1.column))
    });
    section(out, "Diagnostics");
    out.line("| Level | Location | Code | CUDA name | Message |");
    out.line("|---|---|---|---|---|");
    for (path, d) in rows {
        out.line(&format!(
            "| {} | {} | {} | {} | {} |",
            d.level.id(),
            code(&format!("{path}:{}:{}", d.line, d.column)),
            d.code,
            code(&d.cuda_name),
            cell(&d.message)
        ));
    }
}

fn all_diagnostics(doc: &ReportDocument) -> impl Iterator<Item = (&str, &DiagnosticRecord)> {
    doc.files
        .iter()
        .flat_map(|f| f.diagnostics.iter().map(|d| (f.path.as_str(), d)))
}

fn section(out: &mut Budget, title: &str) {
    out.line("");
    out.line(&format!("## {title}"));
    out.line("");
}

fn more(out: &mut Budget, total: usize, shown: usize, what: &str) {
    if total > shown {
        out.line("");
        out.line(&format!(
            "…and {} more {what} (all of them are in report.json).",
            total - shown
        ));
    }
}

fn share(part: usize, whole: usize) -> String {
    if whole == 0 {
        return "n/a".to_owned();
    }
    let mut text = String::new();
    let _ = write!(text, "{:.1}%", 100.0 * part as f64 / whole as f64);
    text
}

/// Hours to at most two decimals, without trailing zeros (`9.75`, `78`).
fn hours(h: f64) -> String {
    format!("{}", (h * 100.0).round() / 100.0)
}

/// Text for a table cell: one line, no table or HTML syntax, bounded length.
fn cell(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    shorten(&one_line)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
}

/// A code span for a table cell.
fn code(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| match c {
            '\n' | '\r' => ' ',
            '`' => '\'',
            c => c,
        })
        .collect();
    format!("`{}`", shorten(&one_line).replace('|', "\\|"))
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= CELL_CHARS {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(CELL_CHARS - 1).collect();
    short.push('…');
    short
}
