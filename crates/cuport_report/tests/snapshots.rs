//! Snapshots of every rendered format for two fixtures ported to Ascend:
//! a CUDA C++ program and a PyTorch training script.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use cuport_model::Target;
use cuport_report::{changes_csv, sarif, summary_markdown, unsupported_csv};

fn snapshot_all(fixture: &str) {
    let document = common::fixture_document(fixture, Target::Ascend);
    assert!(!document.files.is_empty(), "{fixture} has files to migrate");
    common::settings().bind(|| {
        insta::assert_snapshot!(format!("{fixture}_summary_md"), summary_markdown(&document));
        insta::assert_snapshot!(
            format!("{fixture}_changes_csv"),
            changes_csv(&document).unwrap()
        );
        insta::assert_snapshot!(
            format!("{fixture}_unsupported_csv"),
            unsupported_csv(&document).unwrap()
        );
        insta::assert_snapshot!(format!("{fixture}_sarif"), sarif(&document).unwrap());
    });
}

#[test]
fn vector_add_to_ascend() {
    snapshot_all("vector_add");
}

#[test]
fn pytorch_train_to_ascend() {
    snapshot_all("pytorch_train");
}
