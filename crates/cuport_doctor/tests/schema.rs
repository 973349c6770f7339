//! The JSON report's schema: recorded as a snapshot (a change there must
//! come with a `SCHEMA_VERSION` bump when a field is renamed or removed), and
//! a real report validates against it.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::collections::BTreeMap;
use std::time::Duration;

use cuport_doctor::{diagnose, json_schema, Config};

#[test]
fn the_schema_is_stable() {
    insta::assert_json_snapshot!(json_schema());
}

#[test]
fn a_report_from_this_machine_validates_against_the_schema() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        timeout: Duration::from_secs(5),
        tool_dirs: vec![dir.path().to_path_buf()],
        env: BTreeMap::from([("CUDA_HOME".to_owned(), "/no/such/cuda".into())]),
        proc_dir: dir.path().to_path_buf(),
    };
    let report = serde_json::to_value(diagnose(&config)).expect("serialize");
    let validator = jsonschema::validator_for(&json_schema()).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let mut broken = report.clone();
    broken["stacks"][0]["checks"][0]["outcome"] = "maybe".into();
    assert!(!validator.is_valid(&broken));
}
