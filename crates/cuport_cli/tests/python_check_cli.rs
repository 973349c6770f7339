//! `tests/corpus/python_check.py`, the corpus check for PyTorch code, run
//! on the bundled PyTorch fixtures with the real binary: the Ascend port
//! leaves no CUDA use without a diagnostic, and the check does see the
//! ones a target keeps on purpose (ROCm keeps the "cuda" device type).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python_check(fixture: &str, target: &str) -> (bool, String) {
    let root = workspace_root();
    let output = Command::new("python3")
        .arg(root.join("tests/corpus/python_check.py"))
        .arg("--src")
        .arg(root.join("fixtures").join(fixture))
        .args(["--to", target, "--cuport", env!("CARGO_BIN_EXE_cuport")])
        .output()
        .expect("python3 runs (CI installs it)");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

#[test]
fn ascend_and_mlu_ports_of_the_pytorch_fixtures_leave_nothing_silent() {
    for fixture in ["pytorch_ddp", "pytorch_train"] {
        for target in ["ascend", "mlu"] {
            let (ok, text) = python_check(fixture, target);
            assert!(ok, "{fixture} --to {target}:\n{text}");
            assert!(text.contains("0 do not compile"), "{text}");
            assert!(text.contains("0 lost their byte-order mark"), "{text}");
            assert!(text.contains("CUDA uses left: 0 silent"), "{text}");
        }
    }
}

#[test]
fn the_check_sees_device_strings_a_target_keeps() {
    let (ok, text) = python_check("pytorch_ddp", "hip");
    assert!(!ok, "{text}");
    assert!(text.contains("device string 'cuda:{}'"), "{text}");
    assert!(!text.contains("CUDA uses left: 0 silent"), "{text}");
}
