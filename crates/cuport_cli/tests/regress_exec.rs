//! `cuport regress` with application legs: real programs (a small Python
//! script using only the standard library) write `.npy` tensors and
//! `timings.json` into `$CUPORT_OUT`.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

/// One script, many behaviours: `ok`, `perturbed`, `slow`, `crash`, `hang`,
/// `truncated`. Timings are reported by the program itself (synthetic but
/// deterministic, with ±2 % spread), as a real app would report its own.
const LEG: &str = r#"
import os, struct, sys, json, time
mode = sys.argv[1]
out = os.environ["CUPORT_OUT"]
n = 1000
vals = [((i * 37) % 101) / 50.0 - 1.0 for i in range(n)]
if mode == "perturbed":
    vals = [v * 1.01 for v in vals]
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
data = struct.pack("<%df" % n, *vals)
if mode == "truncated":
    data = data[: len(data) // 2]
with open(os.path.join(out, "y.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
scale = 1.3 if mode == "slow" else 1.0
samples = [0.010 * scale * (1 + 0.01 * (((i * 7) % 5) - 2)) for i in range(15)]
with open(os.path.join(out, "timings.json"), "w") as f:
    json.dump({"regions": {"main": samples}}, f)
print("leg", mode, "done writing")
if mode == "crash":
    print("about to abort", flush=True)
    os.abort()
if mode == "hang":
    print("hanging", flush=True)
    time.sleep(60)
"#;

fn setup(dir: &Path) {
    std::fs::write(dir.join("leg.py"), LEG).unwrap();
    let mut cases = String::from("[defaults]\ntimeout_s = 3\n");
    for mode in ["ok", "perturbed", "slow", "crash", "hang", "truncated"] {
        cases.push_str(&format!(
            "\n[[app]]\nname = \"{mode}\"\nreference = \"python3 leg.py ok\"\ncandidate = \"python3 leg.py {mode}\"\n"
        ));
    }
    std::fs::write(dir.join("apps.toml"), cases).unwrap();
}

fn cuport() -> Command {
    Command::cargo_bin("cuport").unwrap()
}

#[test]
fn every_failure_mode_fails_its_own_case_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let output = cuport()
        .args(["regress", "run", "--format", "json"])
        .arg(dir.path().join("apps.toml"))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let outcome = |name: &str| {
        let case = report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap();
        (
            case["outcome"].as_str().unwrap().to_owned(),
            case.to_string(),
        )
    };
    assert_eq!(outcome("ok").0, "pass");
    // (case, outcome, what its report must say)
    let expected = [
        ("perturbed", "fail", ["accuracy:y", "mismatched elements"]),
        ("slow", "fail", ["perf:cross:main", "SLOWER"]),
        (
            "crash",
            "error",
            ["aborted (signal 6, SIGABRT)", "about to abort"],
        ),
        ("hang", "error", ["timed out", "hanging"]),
        (
            "truncated",
            "error",
            ["truncated tensor", "truncated tensor"],
        ),
    ];
    for (name, want, needles) in expected {
        let (got, text) = outcome(name);
        assert_eq!(got, want, "{name}: {text}");
        assert!(needles.iter().all(|n| text.contains(n)), "{name}: {text}");
    }
}

/// `cuport regress exec --reference REFERENCE --candidate CANDIDATE`.
fn exec(reference: &str, candidate: &str) -> Command {
    let mut command = cuport();
    command.args([
        "regress",
        "exec",
        "--reference",
        reference,
        "--candidate",
        candidate,
    ]);
    command
}

#[test]
fn exec_identical_legs_pass_and_baseline_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let base = dir.path().join("base.json");
    let leg = |mode: &str| format!("python3 {} {mode}", dir.path().join("leg.py").display());
    exec(&leg("ok"), &leg("ok"))
        .arg("--save-baseline")
        .arg(&base)
        .assert()
        .success();
    cuport()
        .args(["regress", "baseline", "show"])
        .arg(&base)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "exec:candidate · main · 15 samples",
        ));
    let junit = dir.path().join("junit.xml");
    exec(&leg("ok"), &leg("slow"))
        .args(["--no-cross-gate", "--baseline"])
        .arg(&base)
        .arg("--junit")
        .arg(&junit)
        .assert()
        .code(1)
        .stdout(predicates::str::contains(
            "perf:baseline:exec:candidate:main",
        ));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<failure") && xml.contains("perf:baseline:exec:candidate:main"),
        "{xml}"
    );
}
