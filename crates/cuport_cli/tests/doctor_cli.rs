//! `cuport doctor` end to end. Machine-specific parts of the text (library
//! paths, version numbers) are filtered out of the snapshot.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use assert_cmd::Command;

/// Variables the probes read; cleared so the host's settings do not leak in.
const PROBED_ENV: [&str; 9] = [
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_MPS_PIPE_DIRECTORY",
    "ASCEND_HOME_PATH",
    "ASCEND_TOOLKIT_HOME",
    "ROCM_PATH",
    "HIP_PATH",
    "NEUWARE_HOME",
    "LD_LIBRARY_PATH",
];

fn cuport() -> Command {
    let mut cmd = Command::cargo_bin("cuport").expect("binary builds");
    cmd.env("NO_COLOR", "1");
    for key in PROBED_ENV {
        cmd.env_remove(key);
    }
    cmd
}

fn run(cmd: &mut Command) -> (String, Option<i32>) {
    let out = cmd.output().expect("runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code(),
    )
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|err| panic!("{err}: {text}"))
}

fn checks<'j>(report: &'j serde_json::Value, stack: &str) -> &'j Vec<serde_json::Value> {
    report["stacks"]
        .as_array()
        .expect("stacks")
        .iter()
        .find(|s| s["id"] == stack)
        .and_then(|s| s["checks"].as_array())
        .expect("checks")
}

fn outcome<'j>(report: &'j serde_json::Value, stack: &str, what: &str) -> &'j str {
    checks(report, stack)
        .iter()
        .find(|c| c["what"] == what)
        .and_then(|c| c["outcome"].as_str())
        .unwrap_or_else(|| panic!("no check {what} in {stack}"))
}

#[test]
fn text_report_on_this_machine() {
    if Path::new("/usr/local/Ascend").exists() || Path::new("/dev/nvidiactl").exists() {
        eprintln!("SKIPPED: the snapshot records a machine without NVIDIA or Ascend");
        return;
    }
    let (text, code) = run(cuport().arg("doctor"));
    assert_eq!(code, Some(0), "{text}");
    insta::with_settings!({filters => vec![
        (r"(found: )/\S+/(lib\w+\.so[.\d]*)", "$1[DIR]/$2"),
        (r"\d+\.\d+\.\d+(-\d+)?", "[VERSION]"),
        // hipInit's error differs with the container's /dev/kfd access.
        (r"returned -?\d+ \(\w+\)", "returned [HIP ERROR]"),
    ]}, {
        insta::assert_snapshot!(text);
    });
}

#[test]
fn json_report_is_versioned_and_says_not_found_for_absent_stacks() {
    let (text, code) = run(cuport().args(["doctor", "--format", "json"]));
    assert_eq!(code, Some(0));
    let report = json(&text);
    assert_eq!(report["schema_version"], 1);
    let ids: Vec<&str> = report["stacks"]
        .as_array()
        .expect("stacks")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(ids, ["cuda", "ascend", "rocm", "musa", "mlu"]);
    if !Path::new("/usr/local/musa").exists() {
        assert_eq!(
            outcome(&report, "musa", "MUSA toolkit /usr/local/musa"),
            "not_found"
        );
    }
    if !Path::new("/usr/local/Ascend").exists() {
        assert_eq!(outcome(&report, "ascend", "CANN toolkit"), "not_found");
    }
}

#[test]
fn strict_exits_1_on_a_warning_and_plain_exits_0() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("no-cuda");
    let (text, code) = run(cuport().args(["doctor"]).env("CUDA_HOME", &missing));
    assert_eq!(code, Some(0));
    assert!(
        text.contains("warning[env-dir-missing]: CUDA_HOME points at"),
        "{text}"
    );
    let (_, code) = run(cuport()
        .args(["doctor", "--strict"])
        .env("CUDA_HOME", &missing));
    assert_eq!(code, Some(1));
}

#[test]
fn a_hanging_tool_is_cut_off_by_timeout_ms() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tool = dir.path().join("npu-smi");
    std::fs::write(&tool, "#!/bin/sh\nexec /bin/sleep 30\n").expect("write fake tool");
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let started = Instant::now();
    let (text, code) = run(cuport()
        .args(["doctor", "--format", "json", "--timeout-ms", "300"])
        .env("PATH", dir.path()));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code, Some(0));
    let report = json(&text);
    assert_eq!(outcome(&report, "ascend", "npu-smi info"), "timed_out");
    let codes: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert!(codes.contains(&"probe-timed-out"), "{codes:?}");
}

#[test]
fn print_schema_describes_the_json_report() {
    let (text, code) = run(cuport().args(["doctor", "--print-schema"]));
    assert_eq!(code, Some(0));
    let schema = json(&text);
    assert_eq!(schema["title"], "Report");
    assert!(
        schema["$defs"]["Finding"]["properties"]["advice"].is_object(),
        "{text}"
    );
}
