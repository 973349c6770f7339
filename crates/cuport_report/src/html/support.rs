//! The PyTorch API support section: every API use with its status on the
//! selected adapter release and chip, the CUDA-only packages, the CUDA
//! extension kernels and the advice, with filters by status and file. It is
//! a section of `report.html` (`cuport migrate --report`) and the body of
//! `api_support.html` (`cuport analyze --report`).
use std::collections::BTreeSet;
use std::fmt::Write;

use super::{escape, SCRIPT_SUPPORT, STYLE};
use crate::api_support::ApiSupportReport;

/// The section, with its filter bar and script.
pub fn api_support_section(report: &ApiSupportReport) -> String {
    let mut out = String::from("<section id=\"api-support\">\n");
    let _ = writeln!(
        out,
        "<h2>PyTorch API support on {} {}: {} {}</h2>\n<p class=\"run\">{} Python files · lists: {} · {} method calls not resolved (receiver type not evident)</p>",
        escape(&report.target),
        escape(&report.chip),
        escape(&report.adapter),
        escape(&report.release),
        report.files,
        escape(&report.lists_source),
        report.unresolved.len()
    );
    out.push_str(&filters(report));
    out.push_str(&api_table(report));
    out.push_str(&package_table(report));
    out.push_str(&custom_op_table(report));
    out.push_str(&advice_table(report));
    let _ = write!(out, "<script>\n{SCRIPT_SUPPORT}</script>\n</section>\n");
    out
}

/// `api_support.html`: the section as a page of its own.
pub fn api_support_html(report: &ApiSupportReport) -> String {
    let title = escape(&format!(
        "cuport analyze: {} {} on {}",
        report.adapter, report.release, report.chip
    ));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <header><h1>{title}</h1></header>\n{}</body>\n</html>\n",
        api_support_section(report)
    )
}

fn filters(report: &ApiSupportReport) -> String {
    let statuses = ["supported", "restricted", "unsupported", "unknown"];
    let package_statuses = ["alternative", "partial", "manual"];
    let advice_kinds = cuport_rules::python_guidance::AdviceKind::ALL.map(|k| k.id());
    let mut out = String::from(
        "<nav class=\"as-filters\"><select id=\"as-status\"><option value=\"\">all statuses</option>",
    );
    for (group, options) in [
        ("API", &statuses[..]),
        ("package", &package_statuses[..]),
        ("advice", &advice_kinds[..]),
    ] {
        let _ = write!(out, "<optgroup label=\"{group}\">");
        for option in options {
            let _ = write!(out, "<option value=\"{option}\">{option}</option>");
        }
        out.push_str("</optgroup>");
    }
    out.push_str("</select><select id=\"as-file\"><option value=\"\">all files</option>");
    let files: BTreeSet<&str> = report
        .records
        .iter()
        .map(|r| r.file.as_str())
        .chain(report.third_party.iter().map(|r| r.file.as_str()))
        .chain(report.custom_ops.iter().map(|r| r.file.as_str()))
        .chain(report.advice.iter().map(|r| r.file.as_str()))
        .collect();
    for file in files {
        let file = escape(file);
        let _ = write!(out, "<option value=\"{file}\">{file}</option>");
    }
    out.push_str(
        "</select><input id=\"as-search\" type=\"search\" placeholder=\"text contains\"> <span id=\"as-count\"></span></nav>\n",
    );
    out
}

/// A table whose rows carry the status and file the filters look at.
fn table(id: &str, title: &str, head: &[&str], rows: Vec<(String, String, Vec<String>)>) -> String {
    let mut out = format!("<h3>{title} ({})</h3>\n", rows.len());
    if rows.is_empty() {
        return out + "<p class=\"empty\">none found</p>\n";
    }
    let _ = write!(out, "<table id=\"{id}\"><thead><tr>");
    for h in head {
        let _ = write!(out, "<th>{h}</th>");
    }
    out.push_str("</tr></thead><tbody>\n");
    for (status, file, cells) in rows {
        let _ = write!(
            out,
            "<tr data-status=\"{}\" data-file=\"{}\">",
            escape(&status),
            escape(&file)
        );
        for cell in cells {
            let _ = write!(out, "<td>{}</td>", escape(&cell));
        }
        out.push_str("</tr>\n");
    }
    out + "</tbody></table>\n"
}

fn api_table(report: &ApiSupportReport) -> String {
    let rows = report
        .records
        .iter()
        .map(|r| {
            let status = r.status.id().to_owned();
            let cells = vec![
                format!("{}:{}", r.file, r.line),
                r.api.clone(),
                status.clone(),
                r.versions.replace(';', " "),
                r.chips.replace(';', " "),
                r.note.clone(),
            ];
            (status, r.file.clone(), cells)
        })
        .collect();
    let head = ["where", "API", "status", "versions", "chips", "note"];
    table("as-apis", "API uses", &head, rows)
}

fn package_table(report: &ApiSupportReport) -> String {
    let rows = report
        .third_party
        .iter()
        .map(|r| {
            let status = r.status.id().to_owned();
            let cells = vec![
                format!("{}:{}", r.file, r.line),
                r.used.clone(),
                status.clone(),
                r.alternative.clone(),
                r.operators.clone(),
                r.note.clone(),
                with_operators_source(&r.source, &r.operators_source),
            ];
            (status, r.file.clone(), cells)
        })
        .collect();
    let head = [
        "where",
        "used",
        "status",
        "alternative",
        "operators",
        "note",
        "source",
    ];
    table("as-packages", "CUDA-only packages", &head, rows)
}

fn custom_op_table(report: &ApiSupportReport) -> String {
    let rows = report
        .custom_ops
        .iter()
        .map(|r| {
            let kernel = if r.kernel.is_empty() {
                String::new()
            } else {
                format!("{} ({}:{})", r.kernel, r.source, r.kernel_line)
            };
            let cells = vec![
                format!("{}:{}", r.file, r.line),
                r.extension.clone(),
                kernel,
                r.skeleton.clone(),
                r.operator.clone(),
                r.note.clone(),
            ];
            ("custom".to_owned(), r.file.clone(), cells)
        })
        .collect();
    let head = [
        "build",
        "extension",
        "kernel",
        "skeleton",
        "operator",
        "note",
    ];
    table("as-custom-ops", "CUDA extension kernels", &head, rows)
}

fn advice_table(report: &ApiSupportReport) -> String {
    let rows = report
        .advice
        .iter()
        .map(|r| {
            let kind = r.kind.id().to_owned();
            let cells = vec![
                format!("{}:{}", r.file, r.line),
                r.id.clone(),
                kind.clone(),
                r.trigger.clone(),
                r.advice.clone(),
                r.operators.clone(),
                with_operators_source(&r.source, &r.operators_source),
            ];
            (kind, r.file.clone(), cells)
        })
        .collect();
    let head = [
        "where",
        "advice",
        "kind",
        "trigger",
        "what to do",
        "operators",
        "source",
    ];
    table("as-advice", "Advice", &head, rows)
}

/// The source cell: the entry's source, then where the operators come from.
fn with_operators_source(source: &str, operators_source: &str) -> String {
    if operators_source.is_empty() {
        source.to_owned()
    } else {
        format!("{source} ; operators: {operators_source}")
    }
}
