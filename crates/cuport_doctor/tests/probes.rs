//! The doctor's probes against a controlled environment: fake tools in a
//! temporary directory (never in the scanned tree), a fake process table,
//! and environment variables set per test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cuport_doctor::{diagnose, Check, Config, Level, Outcome, Report, Stack};

/// A config that sees only `tools` for external tools and `proc` as the
/// process table, with the given environment.
fn config(tools: &Path, proc: &Path, env: &[(&str, &str)]) -> Config {
    let env: BTreeMap<String, OsString> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
        .collect();
    Config {
        timeout: Duration::from_millis(500),
        tool_dirs: vec![tools.to_path_buf()],
        env,
        proc_dir: proc.to_path_buf(),
    }
}

fn write_tool(dir: &Path, name: &str, script: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).expect("write fake tool");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn stack<'r>(report: &'r Report, id: &str) -> &'r Stack {
    report
        .stacks
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no stack {id} in {report:#?}"))
}

fn check<'r>(report: &'r Report, id: &str, what: &str) -> &'r Check {
    stack(report, id)
        .checks
        .iter()
        .find(|c| c.what == what)
        .unwrap_or_else(|| panic!("no check {what} in {:#?}", stack(report, id)))
}

fn has_finding(report: &Report, code: &str, level: Level) -> bool {
    report
        .findings
        .iter()
        .any(|f| f.code == code && f.level == level)
}

fn exists_any(paths: &[&str]) -> bool {
    paths.iter().any(|p| Path::new(p).exists())
}

fn temp() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = dir.path().join("bin");
    let proc = dir.path().join("proc");
    std::fs::create_dir_all(&tools).expect("mkdir bin");
    std::fs::create_dir_all(&proc).expect("mkdir proc");
    (dir, tools, proc)
}

#[test]
fn stacks_that_are_not_installed_are_reported_as_not_found() {
    let (_dir, tools, proc) = temp();
    let report = diagnose(&config(&tools, &proc, &[]));
    let ids: Vec<&str> = report.stacks.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["cuda", "ascend", "rocm", "musa", "mlu"]);
    let installed = [
        (
            "cuda",
            exists_any(&[
                "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                "/usr/lib64/libcuda.so.1",
                "/usr/local/cuda",
            ]),
        ),
        ("ascend", exists_any(&["/usr/local/Ascend"])),
        ("musa", exists_any(&["/usr/local/musa"])),
        ("mlu", exists_any(&["/usr/local/neuware"])),
    ];
    for (id, present) in installed {
        if present {
            eprintln!("SKIPPED: {id} looks installed on this machine");
            continue;
        }
        assert!(!stack(&report, id).found, "{id}: {:#?}", stack(&report, id));
    }
    assert_eq!(
        check(&report, "cuda", "MPS daemon").outcome,
        Outcome::NotFound
    );
    assert_eq!(
        check(&report, "ascend", "npu-smi info").outcome,
        Outcome::NotFound
    );
}

#[test]
fn hip_runtime_is_found_with_its_version_and_no_device_is_a_finding() {
    let (_dir, tools, proc) = temp();
    let report = diagnose(&config(&tools, &proc, &[]));
    let hip = stack(&report, "rocm");
    let library = hip
        .checks
        .iter()
        .find(|c| c.what == "library libamdhip64.so");
    if library.is_none_or(|c| c.outcome == Outcome::NotFound) {
        eprintln!("SKIPPED: libamdhip64 is not installed (CI installs Debian's HIP runtime)");
        return;
    }
    assert!(hip.found);
    let version = check(&report, "rocm", "HIP runtime version");
    assert_eq!(version.outcome, Outcome::Found, "{version:?}");
    let runtime = version
        .detail
        .strip_prefix("runtime ")
        .expect("runtime version");
    let numbers: Vec<&str> = runtime
        .split([',', ' '])
        .next()
        .expect("x.y.z")
        .split('.')
        .collect();
    assert_eq!(numbers.len(), 3, "{runtime}");
    assert!(
        numbers.iter().all(|n| n.parse::<u32>().is_ok()),
        "{runtime}"
    );
    let devices = check(&report, "rocm", "HIP devices");
    if devices.outcome == Outcome::Failed {
        assert!(
            has_finding(&report, "no-devices", Level::Warning),
            "{report:#?}"
        );
    } else {
        assert!(!hip.devices.is_empty());
    }
}

#[test]
fn a_tool_that_hangs_is_killed_at_the_timeout_and_reported() {
    let (_dir, tools, proc) = temp();
    write_tool(&tools, "npu-smi", "exec sleep 30");
    let started = Instant::now();
    let report = diagnose(&config(&tools, &proc, &[]));
    let elapsed = started.elapsed();
    let npu_smi = check(&report, "ascend", "npu-smi info");
    assert_eq!(npu_smi.outcome, Outcome::TimedOut, "{npu_smi:?}");
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(has_finding(&report, "probe-timed-out", Level::Warning));
}

#[test]
fn a_tool_that_fails_is_a_failed_check_with_its_message() {
    let (_dir, tools, proc) = temp();
    write_tool(&tools, "npu-smi", "echo 'dcmi init failed' >&2; exit 3");
    let report = diagnose(&config(&tools, &proc, &[]));
    let npu_smi = check(&report, "ascend", "npu-smi info");
    assert_eq!(npu_smi.outcome, Outcome::Failed);
    assert_eq!(npu_smi.detail, "exited with 3: dcmi init failed");
    assert!(stack(&report, "ascend").found);
}

#[test]
fn npu_smi_and_nvcc_versions_are_read_from_their_output() {
    let (_dir, tools, proc) = temp();
    write_tool(
        &tools,
        "npu-smi",
        "echo '| npu-smi 23.0.rc3.b070    Version: 23.0.rc3.b070  |'",
    );
    write_tool(
        &tools,
        "nvcc",
        "echo 'Cuda compilation tools, release 12.4, V12.4.131'",
    );
    let report = diagnose(&config(&tools, &proc, &[]));
    let npu_smi = check(&report, "ascend", "npu-smi info");
    assert_eq!(
        (npu_smi.outcome, npu_smi.detail.as_str()),
        (Outcome::Found, "23.0.rc3.b070")
    );
    let nvcc = check(&report, "cuda", "nvcc --version");
    assert_eq!(
        (nvcc.outcome, nvcc.detail.as_str()),
        (Outcome::Found, "release 12.4")
    );
    if !stack(&report, "cuda")
        .checks
        .iter()
        .any(|c| c.what.starts_with("CUDA driver") && c.outcome == Outcome::Found)
    {
        assert!(
            has_finding(&report, "toolkit-without-driver", Level::Info),
            "{report:#?}"
        );
    }
}

#[test]
fn an_environment_variable_naming_a_missing_directory_is_a_warning() {
    let (dir, tools, proc) = temp();
    let missing = dir.path().join("no-such-cuda");
    let missing = missing.to_str().expect("utf-8 temp path");
    let report = diagnose(&config(
        &tools,
        &proc,
        &[("CUDA_HOME", missing), ("ASCEND_HOME_PATH", missing)],
    ));
    assert_eq!(
        check(&report, "cuda", "$CUDA_HOME").outcome,
        Outcome::Failed
    );
    let codes: Vec<(&str, Level)> = report
        .findings
        .iter()
        .filter(|f| f.code == "env-dir-missing")
        .map(|f| (f.stack.as_str(), f.level))
        .collect();
    assert_eq!(
        codes,
        [("cuda", Level::Warning), ("ascend", Level::Warning)]
    );
    assert!(report.has_warnings());
    assert!(!stack(&report, "ascend").found || Path::new("/usr/local/Ascend").exists());
}

#[test]
fn a_running_mps_daemon_is_found_in_the_process_table() {
    let (dir, tools, proc) = temp();
    std::fs::create_dir_all(proc.join("4242")).expect("mkdir pid");
    std::fs::write(proc.join("4242/comm"), "nvidia-cuda-mps-control\n").expect("comm");
    std::fs::create_dir_all(proc.join("7")).expect("mkdir pid");
    std::fs::write(proc.join("7/comm"), "bash\n").expect("comm");
    let pipe = dir.path().to_str().expect("utf-8 temp path");
    let report = diagnose(&config(&tools, &proc, &[("CUDA_MPS_PIPE_DIRECTORY", pipe)]));
    let mps = check(&report, "cuda", "MPS daemon");
    assert_eq!(
        (mps.outcome, mps.detail.as_str()),
        (Outcome::Found, "nvidia-cuda-mps-control (pid 4242)")
    );
    assert_eq!(
        check(&report, "cuda", "$CUDA_MPS_PIPE_DIRECTORY").outcome,
        Outcome::Found
    );
    assert!(has_finding(&report, "mps-running", Level::Info));
}

#[test]
fn the_json_report_round_trips_and_carries_its_schema_version() {
    let (_dir, tools, proc) = temp();
    write_tool(&tools, "npu-smi", "exit 1");
    let report = diagnose(&config(&tools, &proc, &[("CUDA_HOME", "/no/such/dir")]));
    let json = serde_json::to_string(&report).expect("serialize");
    let back: Report = serde_json::from_str(&json).expect("deserialize");
    assert_eq!(back, report);
    let value: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(value["schema_version"], cuport_doctor::SCHEMA_VERSION);
    assert_eq!(value["stacks"][1]["checks"][0]["what"], "$ASCEND_HOME_PATH");
    let outcomes: Vec<&str> = value["stacks"]
        .as_array()
        .expect("stacks")
        .iter()
        .flat_map(|s| s["checks"].as_array().expect("checks"))
        .filter_map(|c| c["outcome"].as_str())
        .collect();
    assert!(
        outcomes.contains(&"not_found") && outcomes.contains(&"failed"),
        "{outcomes:?}"
    );
}

#[test]
fn a_relative_loader_path_is_a_warning_and_is_not_followed() {
    let (dir, tools, proc) = temp();
    // A fake driver in a relative directory must never be loaded.
    let report = diagnose(&config(
        &tools,
        &proc,
        &[("LD_LIBRARY_PATH", "lib::/opt/x")],
    ));
    assert!(has_finding(&report, "relative-loader-path", Level::Warning));
    assert!(dir.path().exists());
    if !exists_any(&[
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "/usr/lib64/libcuda.so.1",
    ]) {
        let driver = check(&report, "cuda", "CUDA driver API (libcuda.so.1)");
        assert_eq!(driver.outcome, Outcome::NotFound);
        assert!(
            driver.detail.contains("relative LD_LIBRARY_PATH"),
            "{driver:?}"
        );
    }
    let clean = diagnose(&config(
        &tools,
        &proc,
        &[("LD_LIBRARY_PATH", "/opt/x:/usr/lib")],
    ));
    assert!(!has_finding(&clean, "relative-loader-path", Level::Warning));
}
