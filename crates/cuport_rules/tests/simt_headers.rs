//! The Ascend C SIMT tables agree with the real asc-devkit headers of every
//! release that has the SIMT API (CANN 9.0.0 and 9.1.0, from
//! `../shared/vendor`): `tools/gen_ascend_simt.py --check` regenerates the
//! generated files in memory (they must be unchanged) and checks each
//! hand-written row's target name and release against the headers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `$CUPORT_CANN_VENDOR`, else what `../shared/vendor/unpack-cann-headers.sh`
/// prints; skipped loudly without them, unless `.ci/run` found the archive.
fn cann_vendor() -> Option<PathBuf> {
    let from_env = std::env::var_os("CUPORT_CANN_VENDOR").map(PathBuf::from);
    let script = workspace().join("../shared/vendor/unpack-cann-headers.sh");
    let unpacked = || {
        let out = Command::new("bash").arg(&script).output().ok()?;
        out.status
            .success()
            .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    };
    let root = from_env.or_else(|| script.is_file().then(unpacked).flatten());
    let found = root.filter(|r| r.join("cann-9.1.0/asc-devkit").is_dir());
    if found.is_none() {
        assert!(
            std::env::var_os("CUPORT_REQUIRE_CANN_VENDOR").is_none(),
            "the CANN header archive is required here (.ci/run found it)"
        );
        eprintln!("\n!!! SKIPPED: no CANN headers (../shared/vendor or $CUPORT_CANN_VENDOR); the SIMT tables were not checked !!!\n");
    }
    found
}

#[test]
fn simt_tables_match_the_asc_devkit_headers() {
    let Some(vendor) = cann_vendor() else { return };
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
