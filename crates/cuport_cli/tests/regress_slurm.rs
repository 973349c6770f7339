//! `cuport regress run --slurm` against a real one-node Slurm: munged,
//! slurmctld and slurmd started by `regress/slurm/start-test-cluster.sh`
//! in a temporary folder (partitions `cuda` and `ascend` on one node, GRES
//! `gpu` and `npu` backed by /dev/null-like devices), stopped by pid at
//! the end. No GPU anywhere: the legs are `cpu` op legs and small Python
//! programs. Without Slurm the test is skipped with a message on stderr,
//! except under CI=true, where it fails.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stderr)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

mod regress_common;
use regress_common::case;

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../regress/slurm")
}

/// A running test cluster; stopped (by pid) when dropped.
struct Cluster {
    dir: tempfile::TempDir,
}

impl Cluster {
    fn start() -> Option<Cluster> {
        let dir = tempfile::Builder::new()
            .prefix("cuport-slurm-")
            .tempdir()
            .unwrap();
        let out = Command::new("bash")
            .arg(scripts().join("start-test-cluster.sh"))
            .arg(dir.path())
            .output()
            .expect("bash runs");
        if out.status.success() {
            return Some(Cluster { dir });
        }
        let why = format!(
            "the one-node Slurm test cluster did not start ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{why}\nCI=true: Slurm must be installed (see .ci/run)");
        }
        // Straight to the process's stderr: libtest captures `eprintln!`
        // of passing tests, and this must be seen.
        let _ = writeln!(
            std::io::stderr(),
            "\n==================== SKIPPED: regress --slurm tests ====================\n{why}\n\
             Install Debian's munge and slurm-wlm (as .ci/run does) to run them.\n\
             ========================================================================\n"
        );
        None
    }

    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    fn scontrol(&self, args: &[&str]) -> String {
        let out = Command::new("scontrol")
            .env("SLURM_CONF", self.conf())
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(scripts().join("stop-test-cluster.sh"))
            .arg(self.dir.path())
            .status();
    }
}

/// Writes `y.npy` (64 f32) and `timings.json` into $CUPORT_OUT and prints
/// the device variables the job was given.
const LEG: &str = r#"
import os, struct, sys, json
out = os.environ["CUPORT_OUT"]
n = 64
vals = [((i * 37) % 101) / 50.0 - 1.0 for i in range(n)]
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(os.path.join(out, "y.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<%df" % n, *vals))
with open(os.path.join(out, "timings.json"), "w") as f:
    json.dump({"regions": {"main": [0.01 * (1 + 0.001 * i) for i in range(12)]}}, f)
for k in ["SLURM_JOB_PARTITION", "CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "CUPORT_SITE"]:
    print(k, "=", os.environ.get(k))
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"#;

const PLACEMENTS: &str = r#"
[slurm]
poll_s = 0.3
[slurm.placement.cuda]
partition = "cuda"
gres = "gpu:1"
[slurm.placement.ascend]
partition = "ascend"
gres = "npu:1"
env = { CUPORT_SITE = "ascend-nodes" }
[slurm.placement.cpu]
partition = "ascend"
"#;

fn app(name: &str, candidate: &str) -> String {
    format!(
        "\n[[app]]\nname = \"{name}\"\nreference = \"python3 leg.py\"\ncandidate = \"{candidate}\"\n\
         reference_placement = \"cuda\"\ncandidate_placement = \"ascend\"\ngate_cross = false\ntimeout_s = 60\n"
    )
}

/// `cuport regress run cases.toml --slurm --format json --slurm-dir run` in
/// `dir`, against `cluster`.
fn regress_run(cluster: &Cluster, dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cuport"));
    command
        .current_dir(dir)
        .env("SLURM_CONF", cluster.conf())
        .args([
            "regress",
            "run",
            "cases.toml",
            "--slurm",
            "--format",
            "json",
        ])
        .args(["--slurm-dir", "run"]);
    command
}

fn cuport(cluster: &Cluster, dir: &Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = regress_run(cluster, dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}); stderr:\n{stderr}"));
    (out.status.code(), report, stderr)
}

fn setup(cases: &str) -> tempfile::TempDir {
    setup_file(&format!("{PLACEMENTS}{cases}"))
}

fn setup_file(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("leg.py"), LEG).unwrap();
    std::fs::write(dir.path().join("cases.toml"), text).unwrap();
    dir
}

/// A named check that runs against the shared cluster.
type Scenario = (&'static str, fn(&Cluster));

#[test]
fn legs_run_as_slurm_jobs_on_two_partitions() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let scenarios: [Scenario; 7] = [
        ("two partitions", two_partitions_pass),
        ("gate: skips and memory", the_gate_holds_under_slurm),
        ("--slurm-config", site_config_replaces_case_tables),
        ("failed and cancelled legs", slurm_failures_fail_their_case),
        ("wait timeout", wait_timeout_cancels_the_jobs),
        ("Ctrl-C", ctrl_c_cancels_the_jobs),
        ("node failure", node_failure_fails_the_case),
    ];
    for (name, scenario) in scenarios {
        let start = Instant::now();
        scenario(&cluster);
        eprintln!(
            "slurm scenario `{name}`: ok in {:.1} s",
            start.elapsed().as_secs_f64()
        );
    }
}

fn two_partitions_pass(cluster: &Cluster) {
    let op = "\n[[case]]\nname = \"add-cpu\"\nbackends = [\"cpu\", \"cpu\"]\n[case.op]\nkind = \"add\"\nlen = 1000\n[case.perf]\nbudget_s = 0.3\n";
    let dir = setup(&format!("{}{op}", app("saxpy", "python3 leg.py")));
    let (code, report, stderr) = cuport(
        cluster,
        dir.path(),
        &["--markdown", "summary.md", "--junit", "junit.xml"],
    );
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    let legs = case(&report, "saxpy")["legs"].as_array().unwrap();
    for (leg, partition, line) in [
        (&legs[0], "cuda", "CUDA_VISIBLE_DEVICES = 0"),
        (&legs[1], "ascend", "ASCEND_RT_VISIBLE_DEVICES = "),
    ] {
        let slurm = &leg["slurm"];
        assert_eq!(slurm["partition"], partition, "{leg:#}");
        assert_eq!(slurm["node"], "localhost");
        assert_eq!(slurm["state"], "COMPLETED");
        assert_eq!(slurm["exit_code"], "0:0");
        let id = slurm["job_id"].as_str().unwrap();
        assert!(id.split('_').all(|p| p.parse::<u32>().is_ok()), "{id}");
        let log = leg["log_excerpt"].as_str().unwrap();
        assert!(
            log.contains(&format!("SLURM_JOB_PARTITION = {partition}")),
            "{log}"
        );
        assert!(log.contains(line), "{log}");
        let script = slurm["script"].as_str().unwrap();
        let text = std::fs::read_to_string(script).unwrap();
        assert!(
            text.contains(&format!("#SBATCH --partition={partition}")),
            "{text}"
        );
    }
    // The npu index comes from the job's own GRES allocation.
    let ascend_log = legs[1]["log_excerpt"].as_str().unwrap();
    assert!(
        ascend_log.contains("ASCEND_RT_VISIBLE_DEVICES = 0")
            || ascend_log.contains("ASCEND_RT_VISIBLE_DEVICES = 1"),
        "{ascend_log}"
    );
    assert!(ascend_log.contains("CUPORT_SITE = ascend-nodes"));
    assert!(ascend_log.contains("CUDA_VISIBLE_DEVICES = None"));
    // Both op legs share one job array in the `cpu` placement.
    let op_legs = case(&report, "add-cpu")["legs"].as_array().unwrap();
    let array = |l: &Value| {
        l["slurm"]["job_id"]
            .as_str()
            .unwrap()
            .split('_')
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(array(&op_legs[0]), array(&op_legs[1]));
    assert_eq!(case(&report, "add-cpu")["outcome"], "pass");
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    eprintln!("{}", &md[md.find("## Slurm jobs").unwrap_or(0)..]);
    assert!(
        md.contains("## Slurm jobs") && md.contains("| localhost | COMPLETED | 0:0 |"),
        "{md}"
    );
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(junit.contains("slurm.exec.candidate"), "{junit}");
    assert!(dir.path().join("run/jobs.json").is_file());
}

/// Issue 15 under `--slurm`: an oversized op case is judged before
/// anything is submitted, and a leg whose backend is missing on the node
/// makes its case INCOMPLETE unless skips are allowed.
fn the_gate_holds_under_slurm(cluster: &Cluster) {
    let cases = "\n[[case]]\nname = \"huge\"\n[case.op]\nkind = \"gemm\"\nm = 100000\nn = 100000\nk = 100000\n\n[[case]]\nname = \"add-cpu-vs-cuda\"\nbackends = [\"cpu\", \"cuda\"]\n[case.op]\nkind = \"add\"\nlen = 64\n[case.perf]\nbudget_s = 0.3\n";
    let dir = setup(cases);
    let (code, report, stderr) = cuport(cluster, dir.path(), &[]);
    assert_eq!(code, Some(1), "{report:#}\n{stderr}");
    let huge = case(&report, "huge");
    assert_eq!(huge["outcome"], "error", "{huge:#}");
    assert!(huge["legs"].as_array().unwrap().is_empty(), "{huge:#}");
    assert!(huge["checks"][0]["message"]
        .as_str()
        .unwrap()
        .contains("Nothing was allocated and no leg ran"));
    let legs: Vec<String> = std::fs::read_dir(dir.path().join("run/legs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(legs.len(), 2, "{legs:?}");
    assert!(
        legs.iter().all(|l| l.contains("add-cpu-vs-cuda")),
        "{legs:?}"
    );
    if Path::new("/proc/driver/nvidia/version").exists() {
        return;
    }
    assert_eq!(case(&report, "add-cpu-vs-cuda")["outcome"], "incomplete");
    let (code, report, stderr) = cuport(
        cluster,
        dir.path(),
        &["--allow-skip", "--filter", "add-cpu"],
    );
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    assert_eq!(report["summary"]["skips_allowed"], 1);
}

fn site_config_replaces_case_tables(cluster: &Cluster) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("leg.py"), LEG).unwrap();
    std::fs::write(
        dir.path().join("cases.toml"),
        app("site", "python3 leg.py").replace("gate_cross = false\n", ""),
    )
    .unwrap();
    std::fs::write(dir.path().join("site.toml"), PLACEMENTS).unwrap();
    let (code, report, stderr) = cuport(cluster, dir.path(), &["--slurm-config", "site.toml"]);
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    let leg = &case(&report, "site")["legs"][1];
    assert_eq!(leg["slurm"]["partition"], "ascend", "{leg:#}");
    assert_eq!(leg["slurm"]["placement"], "ascend");
    // Two placements, so the speed ratio is informational by default.
    let cross = case(&report, "site")["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "perf:cross:main")
        .unwrap();
    let message = cross["message"].as_str().unwrap();
    assert!(
        message.ends_with("informational (gate_cross = false)"),
        "{message}"
    );
}

fn slurm_failures_fail_their_case(cluster: &Cluster) {
    let cancel = "sh -c 'scancel ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}; sleep 30'";
    let cases = format!(
        "{}{}{}",
        app("fine", "python3 leg.py"),
        app("exits-3", "python3 leg.py 3"),
        app("cancelled", cancel)
    );
    let dir = setup(&cases);
    let (code, report, _) = cuport(cluster, dir.path(), &["--slurm-concurrency", "1"]);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(case(&report, "fine")["outcome"], "pass");
    let exits = &case(&report, "exits-3")["legs"][1];
    assert_eq!(exits["slurm"]["state"], "FAILED");
    assert_eq!(exits["slurm"]["exit_code"], "3:0");
    assert_eq!(exits["state"]["reason"], "exited with status 3");
    let cancelled = &case(&report, "cancelled")["legs"][1];
    assert_eq!(cancelled["slurm"]["state"], "CANCELLED", "{cancelled:#}");
    let reason = cancelled["state"]["reason"].as_str().unwrap();
    assert!(reason.contains("ended CANCELLED on localhost"), "{reason}");
    assert_eq!(case(&report, "cancelled")["outcome"], "error");
    let script = std::fs::read_to_string(dir.path().join("run/jobs/ascend.sh")).unwrap();
    assert!(script.contains("#SBATCH --array=0-2%1"), "{script}");
}

fn wait_timeout_cancels_the_jobs(cluster: &Cluster) {
    let dir = setup(&app("hangs", "sleep 50"));
    let start = Instant::now();
    let (code, report, _) = cuport(cluster, dir.path(), &["--slurm-wait-timeout", "3"]);
    assert!(
        start.elapsed() < Duration::from_secs(40),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(code, Some(1));
    let leg = &case(&report, "hangs")["legs"][1];
    assert_eq!(leg["slurm"]["state"], "CANCELLED", "{leg:#}");
    let reason = leg["state"]["reason"].as_str().unwrap();
    assert!(
        reason.contains(
            "cuport cancelled it: the jobs did not finish within the wait timeout of 3 s"
        ),
        "{reason}"
    );
}

fn ctrl_c_cancels_the_jobs(cluster: &Cluster) {
    let dir = setup(&app("interrupted", "sleep 50"));
    let child = spawn_until_running(cluster, dir.path(), "001-interrupted-candidate");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (code, report) = report_of(child);
    // 128 + SIGINT: the run was interrupted, and its report says so.
    assert_eq!(code, Some(130), "{report:#}");
    assert_eq!(report["summary"]["verdict"], "interrupted", "{report:#}");
    assert_eq!(report["interrupted"]["signal"], 2, "{report:#}");
    let leg = &case(&report, "interrupted")["legs"][1];
    assert_eq!(leg["slurm"]["state"], "CANCELLED", "{leg:#}");
    let reason = leg["state"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("cuport cancelled it: interrupted (SIGINT, Ctrl-C)"),
        "{reason}"
    );
}

/// Start cuport in the background and wait until leg `leg` is running.
fn spawn_until_running(cluster: &Cluster, dir: &Path, leg: &str) -> std::process::Child {
    let child = regress_run(cluster, dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = dir.join("run/legs").join(leg).join("log.txt");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !started.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

fn report_of(child: std::process::Child) -> (Option<i32>, Value) {
    let out = child.wait_with_output().unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), report)
}

/// The node goes down under a running leg whose job may not be requeued.
fn node_failure_fails_the_case(cluster: &Cluster) {
    let text = format!("{PLACEMENTS}{}", app("node-dies", "sleep 50")).replace(
        "[slurm.placement.ascend]\n",
        "[slurm.placement.ascend]\nsbatch_args = [\"--no-requeue\"]\n",
    );
    let dir = setup_file(&text);
    let child = spawn_until_running(cluster, dir.path(), "001-node-dies-candidate");
    // Let the reference leg finish first: a job Slurm may requeue waits
    // about two minutes before it runs again.
    let reference = dir.path().join("run/legs/000-node-dies-reference/status");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !reference.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    cluster.scontrol(&[
        "update",
        "nodename=localhost",
        "state=down",
        "reason=cuport-test",
    ]);
    let (code, report) = report_of(child);
    assert_eq!(code, Some(1), "{report:#}");
    let leg = &case(&report, "node-dies")["legs"][1];
    assert_eq!(leg["slurm"]["state"], "NODE_FAIL", "{leg:#}");
    let reason = leg["state"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("ended NODE_FAIL on localhost (reason: NodeDown)"),
        "{reason}"
    );
    assert!(
        reason.contains("its node failed while the leg ran"),
        "{reason}"
    );
    // Bring the node back for whoever comes next.
    cluster.scontrol(&["update", "nodename=localhost", "state=resume"]);
}

/// Needs no cluster: placements are checked before anything is submitted.
#[test]
fn an_unknown_placement_is_a_usage_error_naming_the_file() {
    let dir = setup(&app("typo", "python3 leg.py").replace(
        "candidate_placement = \"ascend\"",
        "candidate_placement = \"asend\"",
    ));
    let out = Command::new(env!("CARGO_BIN_EXE_cuport"))
        .current_dir(dir.path())
        .env("SLURM_CONF", "/nonexistent/slurm.conf")
        .args([
            "regress",
            "run",
            "cases.toml",
            "--slurm",
            "--slurm-dir",
            "run",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cases.toml: app `typo`, field `candidate_placement`: no [slurm.placement.asend] table (known: ascend, cpu, cuda)"),
        "{stderr}"
    );
    assert!(!dir.path().join("run/jobs.json").exists());
}

/// Slurm's shortest time limit is one minute, and slurmctld checks limits
/// every 30 s or so: about 90 s, so not in the default run
/// (`cargo test -p cuport_cli --test regress_slurm -- --ignored`).
#[test]
#[ignore = "takes about 90 s: Slurm's shortest --time is one minute"]
fn a_slurm_time_limit_fails_the_case_with_slurms_reason() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let cases = app("too-slow", "sleep 300").replace("timeout_s = 60", "timeout_s = 600")
        + "\n[slurm.placement.default]\ntime = \"1\"\n";
    let dir = setup(&cases.replace("candidate_placement = \"ascend\"\n", ""));
    let (code, report, _) = cuport(&cluster, dir.path(), &[]);
    assert_eq!(code, Some(1), "{report:#}");
    let leg = &case(&report, "too-slow")["legs"][1];
    assert_eq!(leg["slurm"]["state"], "TIMEOUT", "{leg:#}");
    let reason = leg["state"]["reason"].as_str().unwrap();
    eprintln!("{reason}");
    assert!(reason.contains("ended TIMEOUT on localhost"), "{reason}");
    assert!(
        reason.contains("it hit the time limit (1); raise `time` in [slurm.placement.default]"),
        "{reason}"
    );
}
