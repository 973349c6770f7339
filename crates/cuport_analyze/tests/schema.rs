//! The scan document's JSON schema is generated from the types and committed
//! as `scan.schema.json`; consumers rely on it, so drift fails this test.
//! Regenerate with `CUPORT_BLESS=1 cargo test -p cuport_analyze --test schema`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use cuport_analyze::{
    scan_schema, scan_tree, ScanDocument, ScanOptions, NO_PROGRESS, SCAN_FORMAT_VERSION,
};

#[test]
fn committed_schema_matches_the_types() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scan.schema.json");
    let generated = scan_schema();
    if std::env::var_os("CUPORT_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).expect("scan.schema.json is committed");
    assert_eq!(
        committed, generated,
        "scan.schema.json is stale: rerun with CUPORT_BLESS=1"
    );
}

#[test]
fn documents_round_trip_through_the_strict_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let report = scan_tree(&root, &ScanOptions::default(), NO_PROGRESS).unwrap();
    let document = ScanDocument::new("fixtures", "test", report);
    let json = serde_json::to_string(&document).unwrap();
    let back: ScanDocument = serde_json::from_str(&json).unwrap();
    assert_eq!(back, document);
    assert_eq!(back.version, SCAN_FORMAT_VERSION);
    assert_eq!(
        back.summary.sites,
        back.files
            .iter()
            .map(|f| f.analysis.sites.len())
            .sum::<usize>()
    );
}
