//! A standalone HTML report with inline SVG: per-case sample distributions
//! (with the baseline median marked), and cross-backend ratios.
use std::fmt::Write;

use super::{first_line, seconds};
use crate::report::{CaseReport, CheckKind, RunReport};

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}.pass{color:#176f2c}.fail,.error,.incomplete{color:#b3261e;font-weight:bold}.uncertain{color:#8a6d00}.skipped{color:#666}svg{background:#fafafa;border:1px solid #ddd}";

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub fn render(report: &RunReport) -> String {
    let mut h = String::new();
    let verdict = report.summary.verdict();
    let _ = write!(h, "<!doctype html><html><head><meta charset=\"utf-8\"><title>cuport regress: {verdict}</title><style>{STYLE}</style></head><body>");
    let _ = write!(
        h,
        "<h1>cuport regress: {verdict}</h1><p>host {} · {} cases · {} checks ({})</p>",
        esc(&report.host),
        report.summary.cases,
        report.summary.checks,
        esc(&report.summary.counts_text())
    );
    let coverage = report.summary.coverage_text();
    if !coverage.is_empty() {
        let _ = write!(
            h,
            "<p class=\"incomplete\">Not fully compared: {}</p>",
            esc(&coverage)
        );
    }
    if let Some(why) = &report.interrupted {
        let _ = write!(h, "<p class=\"error\">Interrupted: cuport was {}; cases it did not start are listed as skipped.</p>", esc(&why.reason));
    }
    if let Some(error) = &report.error {
        let _ = write!(
            h,
            "<p class=\"error\">Harness error:</p><pre>{}</pre>",
            esc(error)
        );
    }
    cross_chart(report, &mut h);
    placement(report, &mut h);
    for case in &report.cases {
        case_section(case, &mut h);
    }
    h.push_str("</body></html>\n");
    h
}

fn case_section(case: &CaseReport, h: &mut String) {
    let _ = write!(
        h,
        "<h2 id=\"{0}\">{0} <span class=\"{1}\">{1}</span></h2>",
        esc(&case.name),
        case.outcome.label().to_lowercase()
    );
    h.push_str("<table><tr><th>check</th><th>outcome</th><th>detail</th></tr>");
    for c in &case.checks {
        let cls = c.outcome.label().to_lowercase();
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"{cls}\">{cls}</td><td title=\"{}\">{}</td></tr>",
            esc(&c.name),
            esc(&c.message),
            esc(first_line(&c.message))
        );
    }
    h.push_str("</table>");
    let baseline_medians: Vec<(String, f64)> = case
        .checks
        .iter()
        .filter(|c| c.kind == CheckKind::PerfBaseline)
        .filter_map(|c| c.perf.as_ref().map(|p| (c.name.clone(), p.base_median)))
        .collect();
    let series: Vec<(String, &[f64], Option<f64>)> = case
        .legs
        .iter()
        .flat_map(|leg| {
            let medians = &baseline_medians;
            leg.regions.iter().map(move |(region, stats)| {
                let key = format!("perf:baseline:{}:{region}", leg.baseline_backend());
                let base = medians.iter().find(|(n, _)| *n == key).map(|(_, m)| *m);
                (
                    format!("{} {region}", leg.backend),
                    stats.samples.as_slice(),
                    base,
                )
            })
        })
        .collect();
    if !series.is_empty() {
        strip_plot(&series, h);
    }
}

/// One row per series: each sample a dot, the median a bar, the baseline
/// median (if any) a dashed red line.
fn strip_plot(series: &[(String, &[f64], Option<f64>)], h: &mut String) {
    let values = series
        .iter()
        .flat_map(|(_, s, b)| s.iter().copied().chain(*b));
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo * 0.9, lo * 1.1 + 1e-12)
    };
    let (left, width, row) = (180.0, 560.0, 28.0);
    let x = |v: f64| left + (v - lo) / (hi - lo) * width;
    let height = row * series.len() as f64 + 30.0;
    let _ = write!(
        h,
        "<p><svg width=\"{}\" height=\"{height}\" role=\"img\">",
        left + width + 20.0
    );
    for (i, (label, samples, base)) in series.iter().enumerate() {
        let y = 20.0 + row * i as f64;
        let _ = write!(
            h,
            "<text x=\"4\" y=\"{}\" font-size=\"11\">{}</text>",
            y + 4.0,
            esc(label)
        );
        for s in samples.iter() {
            let _ = write!(
                h,
                "<circle cx=\"{:.1}\" cy=\"{y}\" r=\"3\" fill=\"#1f6fb2\" fill-opacity=\"0.5\"/>",
                x(*s)
            );
        }
        let med = crate::stats::median(samples);
        let _ = write!(h, "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#000\" stroke-width=\"2\"/>", x(med), y - 9.0, y + 9.0);
        if let Some(b) = base {
            let _ = write!(h, "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#b3261e\" stroke-dasharray=\"3,2\" stroke-width=\"2\"><title>baseline median {3}</title></line>", x(*b), y - 11.0, y + 11.0, seconds(*b));
        }
    }
    let _ = write!(h, "<text x=\"{left}\" y=\"{0}\" font-size=\"10\">{1}</text><text x=\"{2}\" y=\"{0}\" font-size=\"10\" text-anchor=\"end\">{3}</text></svg></p>", height - 4.0, seconds(lo), left + width, seconds(hi));
}

/// Horizontal bars of candidate/reference ratios on a log scale around 1.
fn cross_chart(report: &RunReport, h: &mut String) {
    if report.cross_backend.is_empty() {
        return;
    }
    h.push_str("<h2>Cross-backend ratios (candidate / reference)</h2>");
    for (pair, g) in &report.cross_geomean {
        let _ = write!(h, "<p>geometric mean {}: <b>{g:.3}</b></p>", esc(pair));
    }
    let (left, half, row) = (260.0, 250.0, 22.0);
    let max_log = report
        .cross_backend
        .iter()
        .map(|c| c.ratio.ln().abs())
        .fold(0.1f64, f64::max);
    let height = row * report.cross_backend.len() as f64 + 10.0;
    let _ = write!(
        h,
        "<svg width=\"{}\" height=\"{height}\">",
        left + 2.0 * half + 70.0
    );
    let mid = left + half;
    for (i, c) in report.cross_backend.iter().enumerate() {
        let y = 5.0 + row * i as f64;
        let len = c.ratio.ln() / max_log * half;
        let (x0, w) = if len >= 0.0 {
            (mid, len)
        } else {
            (mid + len, -len)
        };
        let colour = if c.ratio > 1.0 { "#b3261e" } else { "#176f2c" };
        let _ = write!(h, "<text x=\"4\" y=\"{}\" font-size=\"11\">{} · {}</text><rect x=\"{x0:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"14\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"11\">×{:.3}</text>", y + 11.0, esc(&c.case), esc(&c.candidate), mid + half + 8.0, y + 11.0, c.ratio);
    }
    let _ = write!(
        h,
        "<line x1=\"{mid}\" x2=\"{mid}\" y1=\"0\" y2=\"{height}\" stroke=\"#000\"/></svg>"
    );
}

fn placement(report: &RunReport, h: &mut String) {
    if report.placement.is_empty() {
        return;
    }
    h.push_str("<h2>Placement</h2><table><tr><th>op</th><th>shape class</th><th>fastest</th><th>median</th><th>vs runner-up</th><th>accuracy</th></tr>");
    for p in &report.placement {
        let by = match (&p.runner_up, p.speedup) {
            (Some(r), Some(s)) => format!("{s:.2}× faster than {}", esc(r)),
            _ => "only backend".into(),
        };
        let cls = p.accuracy.label().to_lowercase();
        let _ = write!(h, "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{by}</td><td class=\"{cls}\">{cls}</td></tr>", esc(&p.op), esc(&p.shape_class), esc(&p.fastest), seconds(p.median_s));
    }
    h.push_str("</table>");
}
