//! diagnostics.sarif: SARIF 2.1.0 for code-scanning UIs. One rule per code
//! that occurs, one result per diagnostic, locations relative to the
//! migrated root.
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::document::ReportDocument;
use crate::error::ReportError;
use cuport_model::Code;
use cuport_rewrite::Level;

use crate::record::DiagnosticRecord;

const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The SARIF log of `document`'s diagnostics, pretty-printed.
pub fn sarif(document: &ReportDocument) -> Result<String, ReportError> {
    let rules = rules(document);
    let index: BTreeMap<Code, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, (code, _))| (*code, i))
        .collect();
    let results: Vec<Value> = document
        .files
        .iter()
        .flat_map(|f| f.diagnostics.iter().map(move |d| (f.path.as_str(), d)))
        .map(|(path, d)| result(path, d, index.get(&d.code).copied()))
        .collect();
    let log = json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "cuport",
                "version": document.run.cuport_version,
                "rules": rules.into_iter().map(|(_, rule)| rule).collect::<Vec<_>>(),
            }},
            "invocations": [{
                "executionSuccessful": true,
                "endTimeUtc": document.run.generated_at,
                "properties": {
                    "target": document.run.target,
                    "rules": document.run.rules.hash,
                    "options": document.run.options,
                },
            }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).map_err(|error| ReportError::Encode {
        what: "SARIF log",
        error: error.to_string(),
    })?;
    text.push('\n');
    Ok(text)
}

fn sarif_level(level: Level) -> &'static str {
    match level {
        Level::Unsupported => "error",
        Level::Manual | Level::Approximate => "warning",
        Level::Note => "note",
    }
}

/// The diagnostics of one code in this run.
struct CodeUse<'a> {
    first: &'a DiagnosticRecord,
    names: BTreeSet<&'a str>,
}

/// Names listed in a rule's description; more are summarised.
const NAMES_LISTED: usize = 12;

/// `reportingDescriptor`s, one per code, sorted by code.
fn rules(document: &ReportDocument) -> Vec<(Code, Value)> {
    let mut uses: BTreeMap<Code, CodeUse> = BTreeMap::new();
    for d in document.files.iter().flat_map(|f| &f.diagnostics) {
        uses.entry(d.code)
            .or_insert_with(|| CodeUse {
                first: d,
                names: BTreeSet::new(),
            })
            .names
            .insert(&d.cuda_name);
    }
    uses.into_iter()
        .map(|(code, u)| (code, rule(code, &u)))
        .collect()
}

/// A code covers many CUDA names (one table code per library block), so
/// the rule describes the code and lists the names; each result carries
/// its own name's message and suggestion.
fn rule(code: Code, used: &CodeUse) -> Value {
    let first = used.first;
    let short = own_code_help(code).map_or_else(
        || format!("Rule table entry {code} ({})", first.library.name()),
        str::to_owned,
    );
    let mut names: Vec<String> = used
        .names
        .iter()
        .take(NAMES_LISTED)
        .map(|n| format!("`{n}`"))
        .collect();
    if used.names.len() > NAMES_LISTED {
        names.push(format!("and {} more", used.names.len() - NAMES_LISTED));
    }
    let full = format!("{short}. Reported in this run for {}.", names.join(", "));
    let help = match (&first.suggestion, used.names.len()) {
        (Some(suggestion), 1) => format!("{full} {suggestion}"),
        _ => format!("{full} Each result names the CUDA API and what to do about it."),
    };
    let mut rule = json!({
        "id": code,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": help},
        "defaultConfiguration": {"level": sarif_level(first.level)},
        "properties": {"tags": [first.library.id(), first.level.id()]},
    });
    if let Some(uri) = first.reference.as_deref().filter(|r| is_uri(r)) {
        rule["helpUri"] = json!(uri);
    }
    rule
}

fn is_uri(text: &str) -> bool {
    (text.starts_with("https://") || text.starts_with("http://"))
        && !text.contains(char::is_whitespace)
}

/// Help for the codes cuport itself gives (`cuport_rewrite::CODES`).
fn own_code_help(code: Code) -> Option<&'static str> {
    cuport_rewrite::code_info(code).map(|c| c.summary)
}

fn result(path: &str, d: &DiagnosticRecord, rule_index: Option<usize>) -> Value {
    let mut message = d.message.clone();
    if let Some(suggestion) = &d.suggestion {
        let stop = if message.ends_with('.') { "" } else { "." };
        message = format!("{message}{stop} Suggestion: {suggestion}");
    }
    let mut result = json!({
        "ruleId": d.code,
        "level": sarif_level(d.level),
        "message": {"text": message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": relative_uri(path)},
            "region": {"startLine": d.line.max(1), "startColumn": d.char_column.max(1)},
        }}],
        "properties": {
            "cuportLevel": d.level.id(),
            "cudaName": d.cuda_name,
            "library": d.library.id(),
            "effortHours": d.effort_hours,
        },
    });
    if let Some(i) = rule_index {
        result["ruleIndex"] = json!(i);
    }
    if let Some(effort) = &d.effort {
        result["properties"]["effort"] = json!(effort);
    }
    result
}

/// A relative URI reference: `/`-separated, with characters outside the
/// unreserved and path sets percent-encoded (`:` too, so that no first
/// segment reads as a scheme).
fn relative_uri(path: &str) -> String {
    let mut uri = String::with_capacity(path.len());
    for byte in path.replace('\\', "/").bytes() {
        let keep = byte.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&byte);
        if keep {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_escape_spaces_and_non_ascii() {
        assert_eq!(relative_uri("src/a b/ü.cu"), "src/a%20b/%C3%BC.cu");
        assert_eq!(relative_uri("kernels\\add.cu"), "kernels/add.cu");
    }
}
