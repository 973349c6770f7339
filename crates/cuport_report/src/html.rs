//! report.html: one self-contained page a reviewer opens in a browser. The
//! dashboard is rendered here (so it shows even before scripts run); the
//! per-file diffs are rendered by the inline script from the document,
//! embedded as JSON, and only when a file scrolls into view, so that a
//! 5,000-file migration opens fast.
use std::collections::BTreeMap;
use std::fmt::Write;

mod data;
mod support;

pub use support::{api_support_html, api_support_section};

use crate::document::ReportDocument;
use crate::error::ReportError;
use cuport_rewrite::Level;

const STYLE: &str = include_str!("html/page.css");
const SCRIPT: &str = include_str!("html/page.js");
const SCRIPT_SUPPORT: &str = include_str!("html/support.js");
/// Rows in the "top unsupported APIs" and "files by work left" tables.
const TOP_ROWS: usize = 15;

/// The whole page.
pub fn report_html(document: &ReportDocument) -> Result<String, ReportError> {
    report_html_with(document, &[])
}

/// The whole page with more sections (already rendered HTML, such as
/// [`api_support_section`]) after the dashboard.
pub fn report_html_with(
    document: &ReportDocument,
    sections: &[String],
) -> Result<String, ReportError> {
    let data = embedded_json(document)?;
    let mut page = String::with_capacity(data.len() + STYLE.len() + SCRIPT.len() + 16_384);
    let title = escape(&format!(
        "cuport report: {}",
        document.run.describe_target()
    ));
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <div id=\"page-errors\" hidden></div>\n<header><h1>{title}</h1>{}</header>\n",
        run_line(document)
    );
    page.push_str(&dashboard(document));
    for section in sections {
        page.push_str(section);
    }
    page.push_str(FILTERS);
    page.push_str("<main id=\"files\"></main>\n");
    let _ = write!(
        page,
        "<script type=\"application/json\" id=\"report-data\">{data}</script>\n\
         <script>\n{SCRIPT}</script>\n</body>\n</html>\n"
    );
    Ok(page)
}

/// The page's data (see `html/data.rs`) as JSON that is safe inside a
/// `<script>` element: every
/// `<`, `>` and `&` (which JSON only has inside strings) becomes a `\u`
/// escape, so no `</script>` or `<!--` in migrated code can end the element.
pub(crate) fn embedded_json(document: &ReportDocument) -> Result<String, ReportError> {
    let json =
        serde_json::to_string(&data::page_data(document)).map_err(|error| ReportError::Encode {
            what: "report page data",
            error: error.to_string(),
        })?;
    Ok(json
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026"))
}

/// HTML-escapes text for element content and quoted attributes.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const FILTERS: &str = "<nav id=\"filters\">\
<input id=\"search\" type=\"search\" placeholder=\"Search code, names, messages (/)\">\
<select id=\"f-level\"><option value=\"\">all statuses</option></select>\
<select id=\"f-library\"><option value=\"\">all libraries</option></select>\
<select id=\"f-code\"><option value=\"\">all rule codes</option></select>\
<input id=\"f-file\" type=\"search\" placeholder=\"file path contains\">\
<span id=\"f-count\"></span>\
<span class=\"keys\"><kbd>j</kbd>/<kbd>k</kbd> next/previous hunk, <kbd>/</kbd> search</span>\
</nav>\n";

fn run_line(doc: &ReportDocument) -> String {
    let run = &doc.run;
    format!(
        "<p class=\"run\">root <code>{}</code> · cuport {} · rules {} · generated {}</p>",
        escape(&doc.root),
        escape(&run.cuport_version),
        escape(run.rules.version.as_deref().unwrap_or(&run.rules.hash)),
        escape(&run.generated_at)
    )
}

fn dashboard(doc: &ReportDocument) -> String {
    let mut out = String::from("<section id=\"dashboard\">\n");
    out.push_str(&cards(doc));
    out.push_str("<div class=\"panels\">\n");
    out.push_str(&library_chart(doc));
    out.push_str(&top_unsupported(doc));
    out.push_str(&files_by_work_left(doc));
    out.push_str(&kernels_panel(doc));
    out.push_str("</div>\n</section>\n");
    out
}

fn cards(doc: &ReportDocument) -> String {
    let t = &doc.totals;
    let level = |l: Level| t.diagnostics.get(&l).copied().unwrap_or(0);
    let cards = [
        (
            "converted",
            t.converted.to_string(),
            "sites converted",
            share(t.converted, t.sites),
        ),
        (
            "manual",
            level(Level::Manual).to_string(),
            "manual",
            String::new(),
        ),
        (
            "unsupported",
            level(Level::Unsupported).to_string(),
            "unsupported",
            String::new(),
        ),
        (
            "approximate",
            t.approximate.to_string(),
            "approximate",
            String::new(),
        ),
        (
            "effort",
            format!("{:.1} h", t.effort_hours),
            "estimated effort",
            format!("≈ {:.1} engineer-days", t.effort_hours / 8.0),
        ),
        (
            "files",
            format!("{} / {}", t.files_changed, t.files),
            "files changed",
            format!("{} edits, {} lines", t.edits, t.changed_lines),
        ),
    ];
    let mut out = String::from("<div class=\"cards\">");
    for (class, value, label, sub) in cards {
        let _ = write!(
            out,
            "<div class=\"card {class}\"><b>{}</b><span>{}</span><small>{}</small></div>",
            escape(&value),
            escape(label),
            escape(&sub)
        );
    }
    out.push_str("</div>\n");
    out
}

fn share(part: usize, whole: usize) -> String {
    if whole == 0 {
        return "no sites".to_owned();
    }
    format!("{:.0}% of {whole}", part as f64 * 100.0 / whole as f64)
}

/// Converted share per library as horizontal stacked bars.
fn library_chart(doc: &ReportDocument) -> String {
    let rows = &doc.totals.by_library;
    let height = 28 * rows.len().max(1) + 10;
    let mut svg = format!(
        "<div class=\"panel\"><h2>Converted per library</h2>\
         <svg id=\"library-chart\" role=\"img\" viewBox=\"0 0 420 {height}\" width=\"100%\">"
    );
    for (i, (library, tally)) in rows.iter().enumerate() {
        let y = 5 + 28 * i;
        let total = tally.converted + tally.not_converted;
        let width = if total == 0 {
            0.0
        } else {
            200.0 * tally.converted as f64 / total as f64
        };
        let _ = write!(
            svg,
            "<g class=\"bar\"><text x=\"0\" y=\"{}\">{}</text>\
             <rect class=\"left\" x=\"130\" y=\"{y}\" width=\"200\" height=\"20\"/>\
             <rect class=\"done\" x=\"130\" y=\"{y}\" width=\"{width:.1}\" height=\"20\"/>\
             <text x=\"336\" y=\"{}\">{}/{} ({})</text></g>",
            y + 15,
            escape(library.name()),
            y + 15,
            tally.converted,
            total,
            share(tally.converted, total)
                .split(' ')
                .next()
                .unwrap_or_default()
        );
    }
    if rows.is_empty() {
        svg.push_str("<text x=\"0\" y=\"20\">no library calls found</text>");
    }
    svg.push_str("</svg></div>\n");
    svg
}

fn top_unsupported(doc: &ReportDocument) -> String {
    let mut apis: BTreeMap<&str, (usize, f64, &str)> = BTreeMap::new();
    for d in doc.files.iter().flat_map(|f| &f.diagnostics) {
        if d.level.is_unported() {
            let entry = apis.entry(&d.cuda_name).or_insert((0, 0.0, d.guidance()));
            entry.0 += 1;
            entry.1 += d.effort_hours;
        }
    }
    let mut rows: Vec<_> = apis.into_iter().collect();
    rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
    let mut out = String::from(
        "<div class=\"panel\"><h2>Top APIs left for a person</h2><table id=\"top-apis\">\
         <tr><th>API</th><th>sites</th><th>hours</th><th>guidance</th></tr>",
    );
    for (name, (sites, hours, guidance)) in rows.into_iter().take(TOP_ROWS) {
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{sites}</td><td>{hours:.1}</td><td>{}</td></tr>",
            escape(name),
            escape(guidance)
        );
    }
    out.push_str("</table></div>\n");
    out
}

/// Every kernel of the run and what became of it on each target: the
/// operators that replace it and the evidence for the rule, where a
/// `[[kernel]]` rule was applied. Nothing when the run has no kernels.
fn kernels_panel(doc: &ReportDocument) -> String {
    if doc.kernels.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<div class=\"panel\"><h2>Kernels</h2><table id=\"kernels\">\
         <tr><th>kernel</th><th>file</th><th>target</th><th>disposition</th><th>operators</th><th>evidence</th></tr>",
    );
    for entry in &doc.kernels {
        let k = &entry.kernel;
        let evidence = k.evidence.as_ref().map_or_else(
            || "none".to_owned(),
            |e| match (e.max_abs, e.max_rel) {
                (Some(abs), Some(rel)) => format!(
                    "{} ({} cases; max abs {abs:.2e}, max rel {rel:.2e}; {})",
                    verdict_word(e.verdict),
                    e.cases,
                    e.reference.as_deref().unwrap_or("no reference")
                ),
                _ => format!("{}: {}", verdict_word(e.verdict), e.summary),
            },
        );
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td><a href=\"#file={1}\" data-file=\"{1}\">{1}:{2}</a></td><td>{3}</td><td>{4}</td><td>{5}</td><td>{6}</td></tr>",
            escape(&k.name),
            escape(&entry.file),
            k.line,
            k.target,
            k.disposition.id(),
            escape(&k.operators.join(" + ")),
            escape(&evidence)
        );
    }
    out.push_str("</table></div>\n");
    out
}

fn verdict_word(verdict: cuport_rules::kernel_rules::EvidenceVerdict) -> &'static str {
    use cuport_rules::kernel_rules::EvidenceVerdict;
    match verdict {
        EvidenceVerdict::Confirmed => "confirmed",
        EvidenceVerdict::Refuted => "refuted",
        EvidenceVerdict::NotRun => "not run",
    }
}

fn files_by_work_left(doc: &ReportDocument) -> String {
    let mut files: Vec<_> = doc
        .files
        .iter()
        .filter(|f| f.stats.not_converted > 0)
        .collect();
    files.sort_by(|a, b| {
        b.stats
            .effort_hours
            .total_cmp(&a.stats.effort_hours)
            .then(a.path.cmp(&b.path))
    });
    let mut out = String::from(
        "<div class=\"panel\"><h2>Files by work left</h2><table id=\"work-left\">\
         <tr><th>file</th><th>left</th><th>hours</th></tr>",
    );
    for file in files.into_iter().take(TOP_ROWS) {
        let _ = write!(
            out,
            "<tr><td><a href=\"#file={0}\" data-file=\"{0}\">{0}</a></td><td>{1}</td><td>{2:.1}</td></tr>",
            escape(&file.path),
            file.stats.not_converted,
            file.stats.effort_hours
        );
    }
    out.push_str("</table></div>\n");
    out
}
