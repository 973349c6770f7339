//! The real CANN headers the vendor checks read (`../shared/vendor`).
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `$CUPORT_CANN_VENDOR`, else what `../shared/vendor/unpack-cann-headers.sh`
/// prints, when it holds `marker` (a directory below the root); skipped
/// loudly without them, saying that `unchecked` was not checked, unless
/// `CUPORT_REQUIRE_CANN_VENDOR` is set (`.ci/run` sets it when it found the
/// archive).
pub(crate) fn cann_vendor(marker: &str, unchecked: &str) -> Option<PathBuf> {
    let from_env = std::env::var_os("CUPORT_CANN_VENDOR").map(PathBuf::from);
    let script = workspace().join("../shared/vendor/unpack-cann-headers.sh");
    let unpacked = || {
        let out = Command::new("bash").arg(&script).output().ok()?;
        out.status
            .success()
            .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    };
    let root = from_env.or_else(|| script.is_file().then(unpacked).flatten());
    let found = root.filter(|r| r.join(marker).is_dir());
    if found.is_none() {
        assert!(
            std::env::var_os("CUPORT_REQUIRE_CANN_VENDOR").is_none(),
            "CUPORT_REQUIRE_CANN_VENDOR is set but no CANN headers were found"
        );
        eprintln!("\n!!! SKIPPED: no CANN headers (../shared/vendor or $CUPORT_CANN_VENDOR); {unchecked} not checked !!!\n");
    }
    found
}
