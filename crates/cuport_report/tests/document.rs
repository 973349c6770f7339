//! report.json: the committed schema matches the types, documents round-trip,
//! every format re-renders identically from the JSON alone, and readers
//! refuse other formats and newer versions with a precise error.
//! Regenerate the schema with `CUPORT_BLESS=1 cargo test -p cuport_report --test document`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use cuport_model::Target;
use cuport_report::{
    render, report_schema, write_reports, Format, ReportDocument, ReportError,
    REPORT_FORMAT_VERSION,
};
use cuport_rewrite::MigrateOptions;

#[test]
fn committed_schema_matches_the_types() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("report.schema.json");
    let generated = report_schema();
    if std::env::var_os("CUPORT_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).expect("report.schema.json is committed");
    assert_eq!(
        committed, generated,
        "report.schema.json is stale: rerun with CUPORT_BLESS=1"
    );
}

#[test]
fn documents_validate_against_the_committed_schema() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("report.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for fixture in ["vector_add", "pytorch_train", "cmake_project"] {
        let document = common::fixture_document(fixture, Target::Ascend);
        let value: serde_json::Value = serde_json::from_str(&document.to_json().unwrap()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{fixture}: {errors:#?}");
        let mut broken = value.clone();
        broken["files"][0]["diagnostics"] = serde_json::json!([{"level": "fatal"}]);
        assert!(
            !validator.is_valid(&broken),
            "a broken document is rejected"
        );
    }
}

#[test]
fn documents_round_trip_and_re_render_identically() {
    for fixture in common::fixture_names() {
        for target in Target::ALL {
            let document = common::fixture_document(&fixture, target);
            let json = document.to_json().unwrap();
            let back = ReportDocument::parse(&json, Path::new("report.json")).unwrap();
            assert_eq!(back, document, "{fixture}/{target}");
            for format in Format::ALL {
                assert_eq!(
                    render(&back, format).unwrap(),
                    render(&document, format).unwrap()
                );
            }
        }
    }
}

#[test]
fn totals_sum_the_files_and_changed_files_keep_their_diff() {
    let document = common::fixture_document("vector_add", Target::Hip);
    let t = &document.totals;
    let sites: usize = document.files.iter().map(|f| f.stats.sites).sum();
    assert_eq!(t.sites, sites);
    assert_eq!(t.converted + t.not_converted, t.sites);
    let hours: f64 = document
        .files
        .iter()
        .flat_map(|f| &f.diagnostics)
        .map(|d| d.effort_hours)
        .fold(0.0, |a, b| a + b);
    assert!((t.effort_hours - hours).abs() < 1e-9);
    for file in &document.files {
        assert_eq!(file.changed, file.diff.is_some(), "{}", file.path);
        assert_eq!(file.changed, !file.edits.is_empty(), "{}", file.path);
    }
    assert!(t.files_changed > 0);
}

#[test]
fn write_reports_writes_every_format_and_report_json_reproduces_them() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = common::fixtures_root().join("vector_add");
    let migration = common::migrate(&fixture, &MigrateOptions::new(Target::Ascend));
    let written = write_reports(
        &migration,
        &common::meta(Target::Ascend),
        dir.path(),
        &Format::ALL,
    )
    .unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "report.json",
            "summary.md",
            "diagnostics.sarif",
            "changes.csv",
            "unsupported.csv"
        ]
    );
    let document = ReportDocument::read(&dir.path().join("report.json")).unwrap();
    for format in Format::ALL {
        for rendered in render(&document, format).unwrap() {
            let on_disk = std::fs::read_to_string(dir.path().join(rendered.file_name)).unwrap();
            assert_eq!(on_disk, rendered.text, "{}", rendered.file_name);
        }
    }
}

#[test]
fn readers_refuse_other_documents_with_the_file_named() {
    let path = Path::new("out/report.json");
    let err = ReportDocument::parse(r#"{"format":"cuport-migrate","version":1}"#, path);
    assert!(matches!(err, Err(ReportError::WrongFormat { .. })));
    let message = err.unwrap_err().to_string();
    assert!(message.contains("out/report.json") && message.contains("cuport-migrate"));
    let newer = format!(
        r#"{{"format":"cuport-report","version":{}}}"#,
        REPORT_FORMAT_VERSION + 1
    );
    let err = ReportDocument::parse(&newer, path).unwrap_err();
    assert!(
        matches!(err, ReportError::UnsupportedVersion { .. }),
        "{err}"
    );
    let err = ReportDocument::parse("{ not json", path).unwrap_err();
    assert!(err.to_string().contains("line 1"), "{err}");
    let missing = ReportDocument::read(Path::new("/nonexistent/report.json")).unwrap_err();
    assert!(missing.to_string().contains("/nonexistent/report.json"));
}
