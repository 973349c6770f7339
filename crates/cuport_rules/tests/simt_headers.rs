//! The Ascend C SIMT tables agree with the real asc-devkit headers of every
//! release that has the SIMT API (CANN 9.0.0 and 9.1.0, from
//! `../shared/vendor`): `tools/gen_ascend_simt.py --check` regenerates the
//! generated files in memory (they must be unchanged) and checks each
//! hand-written row's target name and release against the headers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod vendor;

use std::process::Command;

use vendor::{cann_vendor, workspace};

#[test]
fn simt_tables_match_the_asc_devkit_headers() {
    let Some(vendor) = cann_vendor("cann-9.1.0/asc-devkit", "the SIMT tables were") else {
        return;
    };
    let output = Command::new("python3")
        .arg(workspace().join("crates/cuport_rules/tools/gen_ascend_simt.py"))
        .arg("--check")
        .arg(&vendor)
        .arg(workspace().join("mappings"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
