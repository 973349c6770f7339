//! Generated artifacts under mappings/ stay in sync with the code and tables.
//! Regenerate with `CUPORT_BLESS=1 cargo test -p cuport_rules --test generated`.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::path::PathBuf;

use cuport_rules::RuleSet;

fn mappings() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../mappings")
}

fn in_sync(file: &str, expected: &str) {
    let path = mappings().join(file);
    if std::env::var_os("CUPORT_BLESS").is_some() {
        std::fs::write(&path, expected).expect("write generated file");
        return;
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(actual == expected, "mappings/{file} is stale; run `CUPORT_BLESS=1 cargo test -p cuport_rules --test generated`");
}

#[test]
fn schema_json_matches_the_types() {
    in_sync("schema.json", &cuport_rules::json_schema());
}

#[test]
fn support_matrix_matches_the_tables() {
    let stats = RuleSet::builtin().expect("built-ins load").stats();
    in_sync("MATRIX.md", &stats.matrix_markdown());
    in_sync("MATRIX.csv", &stats.matrix_csv());
}
