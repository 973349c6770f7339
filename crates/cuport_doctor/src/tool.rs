//! Running external tools (`nvcc`, `npu-smi`, ...) read-only and bounded:
//! never through a shell, never from a relative directory, killed with
//! everything they started when the time is up.
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

use crate::ffi;

/// What came of running a tool.
#[derive(Debug)]
pub(crate) enum ToolRun {
    /// It exited; `status` is its exit code (None when killed by a signal).
    Exited {
        status: Option<i32>,
        stdout: String,
        stderr: String,
    },
    TimedOut,
    /// It could not be started (permissions, bad interpreter).
    FailedToStart(String),
}

/// Finds an executable by name in `dirs`, skipping relative directories so
/// nothing is ever run from the current directory.
pub(crate) fn find_tool(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    dirs.iter()
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|path| is_executable(path))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Runs `program args` with stdin closed, in `/`, in its own process group,
/// and kills the group when `timeout` passes.
pub(crate) fn run_tool(program: &Path, args: &[&str], timeout: Duration) -> ToolRun {
    let started = Instant::now();
    let spawned = Command::new(program)
        .args(args)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => return ToolRun::FailedToStart(err.to_string()),
    };
    // Pipes are drained on threads so a chatty tool cannot block on a full pipe.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = match child.wait_timeout(timeout) {
        Ok(Some(status)) => status,
        Ok(None) | Err(_) => {
            ffi::kill_process_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            return ToolRun::TimedOut;
        }
    };
    let left = timeout.saturating_sub(started.elapsed()) + Duration::from_millis(200);
    ToolRun::Exited {
        status: status.code(),
        stdout: stdout.recv_timeout(left).unwrap_or_default(),
        stderr: stderr.recv_timeout(left).unwrap_or_default(),
    }
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            // Bounded so a runaway tool cannot fill memory.
            let _ = pipe.by_ref().take(1 << 20).read_to_end(&mut bytes);
        }
        let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    receiver
}

/// Runs `probe` on a worker thread and gives up after `timeout`; a foreign
/// call that hangs is abandoned (the thread dies with the process).
pub(crate) fn bounded<T: Send + 'static>(
    timeout: Duration,
    probe: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(probe());
    });
    receiver.recv_timeout(timeout).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_tool_directories_are_never_searched() {
        // `sh` exists under /bin on every Unix; a relative spelling of a
        // directory must not be used even when it would resolve.
        assert!(find_tool("sh", &[PathBuf::from("/bin")]).is_some());
        assert_eq!(
            find_tool("sh", &[PathBuf::from("../../../../../../../../bin")]),
            None
        );
        assert_eq!(find_tool("sh", &[PathBuf::from(".")]), None);
    }
}
