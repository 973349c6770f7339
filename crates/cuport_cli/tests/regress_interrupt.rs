//! Issue 15, a report in every outcome: SIGINT while a leg runs still
//! writes every report file, marked interrupted (exit 130), and a harness
//! error writes a report that says ERROR and why (exit 2).
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A slow first case (its candidate leg says it started, then sleeps) and
/// a second case the interrupt keeps from running.
const SLOW: &str = r#"
[[app]]
name = "slow"
reference = "true"
candidate = "touch started && sleep 60"
timeout_s = 120

[[app]]
name = "after"
reference = "true"
candidate = "true"
"#;

fn wait_for(path: &Path, limit: Duration) {
    let deadline = Instant::now() + limit;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigint_while_a_leg_runs_writes_every_report_marked_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("slow.toml"), SLOW).unwrap();
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_cuport"))
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .args(["regress", "run", "slow.toml", "--json", "r.json"])
        .args(["--junit", "j.xml", "--markdown", "s.md", "--html", "r.html"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&dir.path().join("started"), Duration::from_secs(30));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The 60 s leg was killed, not waited for.
    assert!(started.elapsed() < Duration::from_secs(30), "{stderr}");
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stdout.contains("INTERRUPTED: 2 cases"), "{stdout}");

    let text = std::fs::read_to_string(dir.path().join("r.json")).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["summary"]["verdict"], "interrupted");
    assert_eq!(report["summary"]["exit_code"], 130);
    assert_eq!(report["interrupted"]["signal"], 2);
    assert_eq!(
        report["interrupted"]["reason"],
        "interrupted (SIGINT, Ctrl-C)"
    );
    let slow = &report["cases"][0];
    assert_eq!(slow["outcome"], "error", "{slow:#}");
    let reason = slow["legs"][1]["state"]["reason"].as_str().unwrap();
    assert!(
        reason
            .contains("cuport was interrupted (SIGINT, Ctrl-C) and killed the leg's process group"),
        "{reason}"
    );
    let after = &report["cases"][1];
    assert_eq!(after["name"], "after");
    assert_eq!(after["outcome"], "skipped");
    assert_eq!(
        after["checks"][0]["message"],
        "not run: cuport was interrupted (SIGINT, Ctrl-C) before this case started"
    );

    let junit = std::fs::read_to_string(dir.path().join("j.xml")).unwrap();
    assert!(
        junit.contains("name=\"interrupted\" value=\"interrupted (SIGINT, Ctrl-C)\""),
        "{junit}"
    );
    let md = std::fs::read_to_string(dir.path().join("s.md")).unwrap();
    assert!(md.starts_with("# cuport regress: INTERRUPTED"), "{md}");
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(
        html.contains("Interrupted: cuport was interrupted (SIGINT, Ctrl-C)"),
        "{html}"
    );
}

#[test]
fn a_harness_error_still_writes_report_files_that_say_why() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.toml"),
        "[[case]]\nname = \"x\"\n[case.op]\nkind = \"softmax\"\nrows = 2\ncols = 2\naxis = 0\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cuport"))
        .current_dir(dir.path())
        .args([
            "regress", "run", "bad.toml", "--json", "r.json", "--junit", "j.xml",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.toml") && stderr.contains("axis"),
        "{stderr}"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(report["summary"]["verdict"], "error");
    assert_eq!(report["summary"]["exit_code"], 2);
    assert!(
        report["error"].as_str().unwrap().contains("axis"),
        "{report:#}"
    );
    let junit = std::fs::read_to_string(dir.path().join("j.xml")).unwrap();
    assert!(
        junit.contains("<error message=\"ERROR: 0 cases, 0 checks\""),
        "{junit}"
    );
}
