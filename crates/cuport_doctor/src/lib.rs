//! `cuport doctor`: what a porting engineer needs to know about the machine
//! before blaming the port. Every probe is read-only and bounded by a
//! timeout; a missing stack is reported as "not found", never as an error.
//!
//! All foreign calls live in the `ffi` module; external tools run through
//! `tool::run_tool` (no shell, started in `/`, found only in absolute
//! directories, killed with their process group on timeout).
//!
//! Finding codes (stable; `Finding::code`): `env-dir-missing`,
//! `library-not-loadable`, `probe-timed-out`, `no-devices`, `cuda-init-failed`,
//! `toolkit-newer-than-driver`, `toolkit-without-driver`,
//! `mig-without-instances`, `mig-change-pending`, `mps-running`,
//! `cann-without-driver`, `relative-loader-path` (stack `host`).
mod ascend;
mod ffi;
mod locate;
mod nvidia;
mod others;
mod probe;
mod report;
mod tool;

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::Duration;

pub use report::{
    json_schema, Check, Device, Finding, Level, Mig, Outcome, Report, Stack, SCHEMA_VERSION,
};

/// Where the probes look and how long each may take.
#[derive(Debug, Clone)]
pub struct Config {
    /// Limit for each external tool and each library probe.
    pub timeout: Duration,
    /// Directories searched for external tools (only absolute ones are used).
    pub tool_dirs: Vec<PathBuf>,
    /// The environment the probes read (a snapshot, so tests can set it).
    pub env: BTreeMap<String, OsString>,
    /// The process table scanned for the MPS daemons.
    pub proc_dir: PathBuf,
}

impl Config {
    /// The current process's environment and `PATH`, `/proc`.
    pub fn from_process(timeout: Duration) -> Self {
        let env: BTreeMap<String, OsString> = std::env::vars_os()
            .filter_map(|(key, value)| Some((key.into_string().ok()?, value)))
            .collect();
        let tool_dirs = env
            .get("PATH")
            .map(|path| std::env::split_paths(path).collect())
            .unwrap_or_default();
        Self {
            timeout,
            tool_dirs,
            env,
            proc_dir: PathBuf::from("/proc"),
        }
    }

    pub(crate) fn env_var(&self, key: &str) -> Option<&OsStr> {
        self.env
            .get(key)
            .map(OsString::as_os_str)
            .filter(|v| !v.is_empty())
    }

    /// A directory named by an environment variable, when set.
    pub(crate) fn env_path(&self, key: &str) -> Option<PathBuf> {
        self.env_var(key).map(PathBuf::from)
    }
}

/// Runs every probe and collects the report.
pub fn diagnose(config: &Config) -> Report {
    let probes: [fn(&Config) -> probe::StackProbe; 5] = [
        nvidia::probe,
        ascend::probe,
        others::rocm,
        others::musa,
        others::mlu,
    ];
    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        stacks: Vec::new(),
        findings: Vec::new(),
    };
    if !locate::loader_path_is_absolute(config) {
        report.findings.push(Finding {
            level: Level::Warning,
            stack: "host".to_owned(),
            code: "relative-loader-path".to_owned(),
            message: "LD_LIBRARY_PATH has an empty or relative entry, so libraries load from the current directory".to_owned(),
            advice: "use absolute directories only; doctor does not follow relative entries".to_owned(),
        });
    }
    for run in probes {
        let (stack, findings) = run(config).finish();
        report.stacks.push(stack);
        report.findings.extend(findings);
    }
    report
}
