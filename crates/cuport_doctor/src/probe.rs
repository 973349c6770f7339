//! Building blocks shared by the per-vendor probes.
use std::path::{Path, PathBuf};

use crate::report::{Check, Device, Finding, Level, Outcome, Stack};
use crate::tool::{self, ToolRun};
use crate::{ffi, locate, Config};

/// Collects the checks, devices and findings of one stack.
pub(crate) struct StackProbe {
    stack: Stack,
    findings: Vec<Finding>,
}

impl StackProbe {
    pub(crate) fn new(id: &str, title: &str) -> Self {
        Self {
            stack: Stack {
                id: id.to_owned(),
                title: title.to_owned(),
                found: false,
                checks: Vec::new(),
                devices: Vec::new(),
            },
            findings: Vec::new(),
        }
    }

    pub(crate) fn check(
        &mut self,
        what: impl Into<String>,
        outcome: Outcome,
        detail: impl Into<String>,
    ) {
        self.stack.checks.push(Check {
            what: what.into(),
            outcome,
            detail: detail.into(),
        });
    }

    pub(crate) fn finding(&mut self, level: Level, code: &str, message: String, advice: &str) {
        self.findings.push(Finding {
            level,
            stack: self.stack.id.clone(),
            code: code.to_owned(),
            message,
            advice: advice.to_owned(),
        });
    }

    pub(crate) fn devices(&mut self, devices: Vec<Device>) {
        self.stack.devices = devices;
    }

    pub(crate) fn finish(mut self) -> (Stack, Vec<Finding>) {
        self.stack.found = self.stack.checks.iter().any(|c| {
            matches!(
                c.outcome,
                Outcome::Found | Outcome::Failed | Outcome::TimedOut
            ) && !c.what.starts_with('$')
        });
        (self.stack, self.findings)
    }

    /// Records an environment variable naming a directory; one that points
    /// at nothing is a warning. Returns the directory when it exists.
    pub(crate) fn env_dir(&mut self, config: &Config, key: &str) -> Option<PathBuf> {
        let what = format!("${key}");
        let Some(dir) = config.env_path(key) else {
            self.check(what, Outcome::NotFound, "not set");
            return None;
        };
        if dir.is_dir() {
            self.check(what, Outcome::Found, dir.display().to_string());
            return Some(dir);
        }
        self.check(
            what,
            Outcome::Failed,
            format!("{} does not exist", dir.display()),
        );
        self.finding(
            Level::Warning,
            "env-dir-missing",
            format!(
                "{key} points at {}, which is not a directory",
                dir.display()
            ),
            "unset the variable or point it at the installed toolkit; build scripts trust it",
        );
        None
    }

    /// Records whether a directory exists (an install prefix).
    pub(crate) fn dir(&mut self, what: &str, dir: &Path) -> bool {
        let exists = dir.is_dir();
        let (outcome, detail) = if exists {
            (Outcome::Found, dir.display().to_string())
        } else {
            (Outcome::NotFound, format!("no {}", dir.display()))
        };
        self.check(what, outcome, detail);
        exists
    }

    /// Finds `stem.so*` and checks that it loads. Returns its path when it does.
    pub(crate) fn loadable_library(
        &mut self,
        config: &Config,
        stem: &str,
        vendor_dirs: &[PathBuf],
    ) -> Option<PathBuf> {
        let what = format!("library {stem}.so");
        let dirs = locate::library_dirs(config, vendor_dirs);
        let Some(path) = locate::find_library(stem, &dirs) else {
            self.check(
                what,
                Outcome::NotFound,
                "not in vendor or loader directories",
            );
            return None;
        };
        let target = path.display().to_string();
        let loaded = tool::bounded(config.timeout, move || ffi::loadable(&target));
        match loaded {
            Some(Ok(())) => {
                self.check(what, Outcome::Found, path.display().to_string());
                Some(path)
            }
            Some(Err(err)) => {
                self.check(what, Outcome::Failed, err.to_string());
                self.finding(
                    Level::Warning,
                    "library-not-loadable",
                    format!("{} exists but does not load: {err}", path.display()),
                    "source the vendor's environment script (set_env.sh) or add its lib directory to LD_LIBRARY_PATH",
                );
                None
            }
            None => {
                self.timed_out(what, config);
                None
            }
        }
    }

    pub(crate) fn timed_out(&mut self, what: String, config: &Config) {
        let limit = format!("no answer within {} ms", config.timeout.as_millis());
        self.finding(
            Level::Warning,
            "probe-timed-out",
            format!("{what}: {limit}"),
            "a hung driver or tool usually means a wedged device or driver; check dmesg and the vendor's status tool",
        );
        self.check(what, Outcome::TimedOut, limit);
    }

    /// Runs a tool found in the tool directories or `extra_dirs` and returns
    /// its stdout when it exits with status 0.
    pub(crate) fn tool(
        &mut self,
        config: &Config,
        name: &str,
        args: &[&str],
        extra_dirs: &[PathBuf],
    ) -> Option<String> {
        let what = format!("{name} {}", args.join(" ")).trim_end().to_owned();
        let dirs: Vec<PathBuf> = config.tool_dirs.iter().chain(extra_dirs).cloned().collect();
        let Some(program) = tool::find_tool(name, &dirs) else {
            self.check(
                what,
                Outcome::NotFound,
                "not on PATH or in the vendor directories",
            );
            return None;
        };
        match tool::run_tool(&program, args, config.timeout) {
            ToolRun::Exited {
                status: Some(0),
                stdout,
                ..
            } => Some(stdout),
            ToolRun::Exited { status, stderr, .. } => {
                let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                let code = status.map_or("a signal".to_owned(), |c| c.to_string());
                self.check(
                    what,
                    Outcome::Failed,
                    format!("exited with {code}: {}", first.trim()),
                );
                None
            }
            ToolRun::TimedOut => {
                self.timed_out(what, config);
                None
            }
            ToolRun::FailedToStart(err) => {
                self.check(
                    what,
                    Outcome::Failed,
                    format!("{}: {err}", program.display()),
                );
                None
            }
        }
    }

    /// `tool`, recording the first stdout line containing `marker` as the detail.
    pub(crate) fn tool_line(
        &mut self,
        config: &Config,
        name: &str,
        args: &[&str],
        extra_dirs: &[PathBuf],
        marker: &str,
    ) -> Option<String> {
        let stdout = self.tool(config, name, args, extra_dirs)?;
        let line = stdout
            .lines()
            .find(|l| l.to_lowercase().contains(&marker.to_lowercase()))
            .or_else(|| stdout.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("(no output)")
            .trim()
            .to_owned();
        let what = format!("{name} {}", args.join(" ")).trim_end().to_owned();
        self.check(what, Outcome::Found, line.clone());
        Some(line)
    }
}

/// `dir/sub` for each directory that is set.
pub(crate) fn under(dirs: &[&Option<PathBuf>], sub: &str) -> Vec<PathBuf> {
    dirs.iter()
        .filter_map(|d| d.as_ref().map(|d| d.join(sub)))
        .collect()
}
