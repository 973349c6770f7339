//! Running one leg in a child process: an empty `$CUPORT_OUT`, a timeout
//! that kills the whole process group, and a log excerpt for the report.
use std::ffi::OsString;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::{RegressError, Result};
use crate::interrupt::{self, Stop};

/// Environment variable naming the leg's (empty) output folder.
pub const OUT_ENV: &str = "CUPORT_OUT";
/// Lines of log kept for the report.
const EXCERPT_LINES: usize = 20;

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandSpec {
    /// Run through `sh -c`.
    Shell(String),
    /// Run directly.
    Argv(Vec<OsString>),
}

impl CommandSpec {
    pub fn display(&self) -> String {
        match self {
            CommandSpec::Shell(s) => s.clone(),
            CommandSpec::Argv(a) => a
                .iter()
                .map(|s| s.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// One leg to launch.
#[derive(Debug, Clone)]
pub struct LegRequest {
    pub command: CommandSpec,
    pub cwd: Option<PathBuf>,
    pub timeout: Duration,
    pub env: Vec<(String, String)>,
}

/// How the child ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ExitState {
    Exited {
        code: i32,
    },
    Signaled {
        signal: i32,
    },
    TimedOut {
        after_s: f64,
    },
    /// cuport was interrupted while the leg ran and killed it.
    Interrupted {
        after_s: f64,
        reason: String,
    },
}

impl ExitState {
    pub fn succeeded(&self) -> bool {
        matches!(self, ExitState::Exited { code: 0 })
    }

    pub fn describe(&self) -> String {
        match self {
            // `sh -c` reports a child killed by signal N as status 128 + N.
            ExitState::Exited { code } if (129..160).contains(code) => {
                format!("exited with status {code}: {}", signal_words(code - 128))
            }
            ExitState::Exited { code } => format!("exited with status {code}"),
            ExitState::Signaled { signal } => signal_words(*signal),
            ExitState::TimedOut { after_s } => {
                format!("timed out after {after_s:.1} s; its process group was killed")
            }
            ExitState::Interrupted { after_s, reason } => format!(
                "stopped after {after_s:.1} s: cuport was {reason} and killed the leg's process group"
            ),
        }
    }
}

/// What a signal that ended a leg most likely means.
fn signal_words(signal: i32) -> String {
    match signal {
        libc::SIGABRT => "aborted (signal 6, SIGABRT): likely out of memory (Rust aborts when an allocation fails) or a failed assertion in a native library; see the log excerpt".to_owned(),
        libc::SIGKILL => "killed (signal 9, SIGKILL): likely by the kernel's out-of-memory killer (see `dmesg`), or by another process".to_owned(),
        libc::SIGSEGV => "crashed (signal 11, SIGSEGV): an invalid memory access, often in a native library".to_owned(),
        libc::SIGTERM => "terminated (signal 15, SIGTERM)".to_owned(),
        s => format!("killed by signal {s}"),
    }
}

/// A finished leg; `out_dir` is deleted when this is dropped.
#[derive(Debug)]
pub struct LegRun {
    pub state: ExitState,
    pub wall_s: f64,
    pub log_excerpt: String,
    pub out_dir: tempfile::TempDir,
}

/// Launch the leg and wait for it, for the timeout, or for `stop`.
pub fn run_leg(req: &LegRequest, stop: &Stop<'_>) -> Result<LegRun> {
    let shown = req.command.display();
    let spawn_err = |message: String| RegressError::Spawn {
        command: shown.clone(),
        message,
    };
    let out_dir = tempfile::Builder::new()
        .prefix("cuport-leg-")
        .tempdir()
        .map_err(|e| spawn_err(format!("cannot create the output folder: {e}")))?;
    let mut log =
        tempfile::tempfile().map_err(|e| spawn_err(format!("cannot create a log file: {e}")))?;
    let mut cmd = build(req, &log, out_dir.path().as_os_str())
        .map_err(|e| spawn_err(format!("cannot redirect output: {e}")))?;
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| spawn_err(format!("cannot start: {e}")))?;
    interrupt::set_leg_group(Some(child.id()));
    let state = wait_with_timeout(&mut child, req.timeout, stop);
    interrupt::set_leg_group(None);
    let state = state.map_err(|e| spawn_err(format!("wait failed: {e}")))?;
    let wall_s = start.elapsed().as_secs_f64();
    Ok(LegRun {
        state,
        wall_s,
        log_excerpt: excerpt(&mut log),
        out_dir,
    })
}

fn build(req: &LegRequest, log: &std::fs::File, out: &std::ffi::OsStr) -> std::io::Result<Command> {
    let mut cmd = match &req.command {
        CommandSpec::Shell(s) => {
            let mut c = Command::new("sh");
            c.arg("-c").arg(s);
            c
        }
        CommandSpec::Argv(argv) => {
            let mut c = Command::new(argv.first().cloned().unwrap_or_default());
            c.args(argv.iter().skip(1));
            c
        }
    };
    if let Some(dir) = &req.cwd {
        cmd.current_dir(dir);
    }
    cmd.env(OUT_ENV, out)
        .envs(req.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log.try_clone()?)
        // Own process group, so a timeout can kill the leg's children too.
        .process_group(0);
    Ok(cmd)
}

fn wait_with_timeout(
    child: &mut std::process::Child,
    timeout: Duration,
    stop: &Stop<'_>,
) -> std::io::Result<ExitState> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(match (status.code(), status.signal()) {
                (Some(code), _) => ExitState::Exited { code },
                (None, Some(signal)) => ExitState::Signaled { signal },
                (None, None) => ExitState::Exited { code: -1 },
            });
        }
        if start.elapsed() >= timeout {
            kill_group(child.id());
            child.wait()?;
            return Ok(ExitState::TimedOut {
                after_s: start.elapsed().as_secs_f64(),
            });
        }
        if let Some(why) = stop() {
            kill_group(child.id());
            child.wait()?;
            return Ok(ExitState::Interrupted {
                after_s: start.elapsed().as_secs_f64(),
                reason: why.reason,
            });
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

#[allow(unsafe_code)]
fn kill_group(pid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // Safety: kill(2) with a negative pid signals the process group we
    // created for this child (process_group(0) makes pgid == pid); it does
    // not touch memory.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// The last lines of the log, lossily decoded. When a backtrace pushed
/// the allocator's `memory allocation of N bytes failed` out of them, that
/// line is kept in front: it is the reason the leg died.
pub(crate) fn excerpt(log: &mut std::fs::File) -> String {
    let len = log.seek(SeekFrom::End(0)).unwrap_or(0);
    let start = len.saturating_sub(64 * 1024);
    let mut buf = Vec::new();
    if log.seek(SeekFrom::Start(start)).is_ok() {
        let _ = log.read_to_end(&mut buf);
    }
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<&str> = text.lines().collect();
    let last = &lines[lines.len().saturating_sub(EXCERPT_LINES)..];
    match allocation_failure(&text) {
        Some(oom) if !last.iter().any(|l| l.trim() == oom) => {
            format!("{oom}\n[…]\n{}", last.join("\n"))
        }
        _ => last.join("\n"),
    }
}

/// The line Rust prints before it aborts on a failed allocation, if the
/// log has one.
pub(crate) fn allocation_failure(log: &str) -> Option<&str> {
    log.lines()
        .map(str::trim)
        .rfind(|l| l.starts_with("memory allocation of") && l.ends_with("failed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(cmd: &str, timeout_ms: u64) -> LegRequest {
        LegRequest {
            command: CommandSpec::Shell(cmd.into()),
            cwd: None,
            timeout: Duration::from_millis(timeout_ms),
            env: Vec::new(),
        }
    }

    fn shell(cmd: &str, timeout_ms: u64) -> Result<LegRun> {
        run_leg(&request(cmd, timeout_ms), &interrupt::never)
    }

    #[test]
    fn output_folder_is_empty_and_log_is_captured() -> Result<()> {
        let run = shell(
            "ls -A \"$CUPORT_OUT\" | wc -l; echo hello >&2; exit 3",
            5000,
        )?;
        assert_eq!(run.state, ExitState::Exited { code: 3 });
        assert_eq!(run.log_excerpt.lines().next().map(str::trim), Some("0"));
        assert!(run.log_excerpt.contains("hello"));
        Ok(())
    }

    #[test]
    fn a_hanging_leg_and_its_children_are_killed() -> Result<()> {
        let run = shell("sleep 30 & sleep 30", 200)?;
        assert!(matches!(run.state, ExitState::TimedOut { .. }));
        assert!(run.wall_s < 5.0);
        Ok(())
    }

    #[test]
    fn a_stop_request_kills_the_running_leg_and_its_children() -> Result<()> {
        let start = std::time::Instant::now();
        let stop = || {
            (start.elapsed() > Duration::from_millis(200))
                .then(|| crate::interrupt::Interruption::from_signal(libc::SIGINT))
        };
        let run = run_leg(&request("sleep 30 & sleep 30", 60_000), &stop)?;
        assert!(run.wall_s < 5.0, "{}", run.wall_s);
        let text = run.state.describe();
        assert!(
            text.contains("cuport was interrupted (SIGINT, Ctrl-C) and killed"),
            "{text}"
        );
        Ok(())
    }

    #[test]
    fn the_allocators_last_words_survive_a_long_backtrace() -> Result<()> {
        let run = shell(
            "echo 'memory allocation of 80000000000 bytes failed' >&2; for i in $(seq 1 100); do echo \"  $i: frame\" >&2; done; exit 134",
            5000,
        )?;
        let mut lines = run.log_excerpt.lines();
        assert_eq!(
            lines.next(),
            Some("memory allocation of 80000000000 bytes failed")
        );
        assert_eq!(lines.next(), Some("[…]"));
        assert_eq!(run.log_excerpt.lines().last(), Some("  100: frame"));
        assert_eq!(
            allocation_failure("x\n  memory allocation of 8 bytes failed \ny"),
            Some("memory allocation of 8 bytes failed")
        );
        assert_eq!(allocation_failure("memory allocation of 8 bytes"), None);
        Ok(())
    }

    #[test]
    fn signals_are_explained() {
        let abort = ExitState::Signaled { signal: 6 }.describe();
        assert!(
            abort.starts_with("aborted (signal 6, SIGABRT): likely out of memory"),
            "{abort}"
        );
        let by_shell = ExitState::Exited { code: 137 }.describe();
        assert!(
            by_shell.contains("status 137: killed (signal 9, SIGKILL)"),
            "{by_shell}"
        );
        assert_eq!(
            ExitState::Signaled { signal: 10 }.describe(),
            "killed by signal 10"
        );
    }
}
