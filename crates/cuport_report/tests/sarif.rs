//! The SARIF output is checked two ways. Always: a structural check of the
//! properties SARIF 2.1.0 requires and that code-scanning UIs rely on. When
//! `CUPORT_SARIF_SCHEMA` names a local copy of the official
//! `sarif-schema-2.1.0.json` (OASIS sarif-spec; its licence does not let us
//! vendor it): full JSON-schema validation as well.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeSet;

use cuport_model::Target;
use serde_json::Value;

const FIXTURES: [&str; 4] = [
    "vector_add",
    "pytorch_train",
    "cublas_gemm",
    "nccl_allreduce",
];

fn logs() -> Vec<(String, Value)> {
    let mut logs = Vec::new();
    for fixture in FIXTURES {
        for target in Target::ALL {
            let document = common::fixture_document(fixture, target);
            let text = cuport_report::sarif(&document).unwrap();
            logs.push((
                format!("{fixture}/{target}"),
                serde_json::from_str(&text).unwrap(),
            ));
        }
    }
    logs
}

fn text(value: &Value, what: &str) -> String {
    value
        .as_str()
        .unwrap_or_else(|| panic!("{what} is a string: {value}"))
        .to_owned()
}

fn check_result(result: &Value, rules: &[Value], name: &str) {
    let rule_id = text(&result["ruleId"], "ruleId");
    let index = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
    assert_eq!(rules[index]["id"], rule_id.as_str(), "{name}: ruleIndex");
    let level = text(&result["level"], "level");
    assert!(["error", "warning", "note", "none"].contains(&level.as_str()));
    assert!(!text(&result["message"]["text"], "message").is_empty());
    let location = &result["locations"][0]["physicalLocation"];
    let uri = text(&location["artifactLocation"]["uri"], "uri");
    assert!(
        !uri.is_empty() && !uri.starts_with('/') && !uri.contains(':') && !uri.contains(' '),
        "{name}: {uri} is a relative URI reference"
    );
    assert!(location["region"]["startLine"].as_u64().expect("startLine") >= 1);
    assert!(
        location["region"]["startColumn"]
            .as_u64()
            .expect("startColumn")
            >= 1
    );
}

fn check_structure(name: &str, log: &Value) {
    assert_eq!(log["version"], "2.1.0", "{name}");
    let runs = log["runs"].as_array().expect("runs is an array");
    assert_eq!(runs.len(), 1, "{name}");
    let run = &runs[0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "cuport");
    assert!(!text(&driver["version"], "version").is_empty());
    let rules = driver["rules"].as_array().expect("rules");
    let ids: BTreeSet<String> = rules.iter().map(|r| text(&r["id"], "id")).collect();
    assert_eq!(ids.len(), rules.len(), "{name}: rule ids are unique");
    for rule in rules {
        assert!(!text(&rule["shortDescription"]["text"], "short").is_empty());
        assert!(!text(&rule["help"]["text"], "help").is_empty());
    }
    let invocation = &run["invocations"][0];
    assert!(invocation["executionSuccessful"].is_boolean(), "{name}");
    assert!(["utf16CodeUnits", "unicodeCodePoints"].contains(&run["columnKind"].as_str().unwrap()));
    for result in run["results"].as_array().expect("results") {
        check_result(result, rules, name);
    }
}

#[test]
fn sarif_has_the_required_structure() {
    let logs = logs();
    let results: usize = logs
        .iter()
        .map(|(_, log)| log["runs"][0]["results"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(results > 50, "the fixtures produce diagnostics ({results})");
    for (name, log) in &logs {
        check_structure(name, log);
    }
}

#[test]
fn levels_map_from_cuport_levels() {
    for (name, log) in logs() {
        for result in log["runs"][0]["results"].as_array().unwrap() {
            let expected = match result["properties"]["cuportLevel"].as_str().unwrap() {
                "unsupported" => "error",
                "manual" | "approximate" => "warning",
                "note" => "note",
                other => panic!("{name}: unknown level {other}"),
            };
            assert_eq!(result["level"], expected, "{name}");
        }
    }
}

/// The 2.1.0-rtm.5 schema's `language` patterns have a stray `]` that Rust
/// regex engines reject; their intent (`en` or `en-US`) is kept.
fn fix_language_patterns(value: &mut Value) {
    const BROKEN: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key == "pattern" && child.as_str() == Some(BROKEN) {
                    *child = Value::from("^[a-zA-Z]{2}(-[a-zA-Z]{2})?$");
                } else {
                    fix_language_patterns(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(fix_language_patterns),
        _ => {}
    }
}

#[test]
fn sarif_validates_against_the_official_schema_when_given() {
    let Some(path) = std::env::var_os("CUPORT_SARIF_SCHEMA") else {
        return;
    };
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    fix_language_patterns(&mut schema);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let logs = logs();
    // The validator must see a broken log as broken, or this test proves nothing.
    let mut broken = logs
        .iter()
        .map(|(_, log)| log.clone())
        .find(|log| log["runs"][0]["results"][0].is_object())
        .expect("a log with results");
    broken["runs"][0]["results"][0]["level"] = Value::from("fatal");
    assert!(!validator.is_valid(&broken), "an invalid level is rejected");
    for (name, log) in logs {
        let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
    }
}
