//! Turns tree-sitter `ERROR`/`MISSING` nodes into reported line regions.
use cuport_model::LineIndex;
use tree_sitter::Tree;

use crate::site::ParseIssue;

/// Parse issues reported per file at most; the rest are summarised.
const MAX_ISSUES: usize = 50;

/// Line ranges of `ERROR` and `MISSING` nodes, merged and capped.
pub(crate) fn error_regions(tree: &Tree, line_index: &LineIndex, grammar: &str) -> Vec<ParseIssue> {
    let mut lines: Vec<(u32, u32)> = Vec::new();
    let mut cursor = tree.walk();
    let mut descend = true;
    loop {
        let node = cursor.node();
        if descend && (node.is_error() || node.is_missing()) {
            let start = line_index.line_col(node.start_byte()).line;
            let end = line_index.line_col(node.end_byte()).line;
            lines.push((start, end.max(start)));
            descend = false;
        }
        if descend && node.has_error() && cursor.goto_first_child() {
            continue;
        }
        if cursor.goto_next_sibling() {
            descend = true;
            continue;
        }
        if !cursor.goto_parent() {
            break;
        }
        descend = false;
    }
    merge(lines, grammar)
}

fn merge(mut lines: Vec<(u32, u32)>, grammar: &str) -> Vec<ParseIssue> {
    lines.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for (start, end) in lines {
        match merged.last_mut() {
            Some(last) if start <= last.1 + 1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let total = merged.len();
    let mut issues: Vec<ParseIssue> = merged
        .into_iter()
        .take(MAX_ISSUES)
        .map(|(line_start, line_end)| ParseIssue {
            line_start,
            line_end,
            message: format!("{grammar} could not parse this region; the file was still analysed"),
        })
        .collect();
    if total > MAX_ISSUES {
        if let Some(last) = issues.last_mut() {
            last.message = format!("{} (and {} more regions)", last.message, total - MAX_ISSUES);
        }
    }
    issues
}
