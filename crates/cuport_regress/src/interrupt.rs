//! SIGINT (Ctrl-C) and SIGTERM (CI cancelling a job, Slurm's `scancel`):
//! the first signal only raises a flag. The run sees it between steps,
//! kills the leg that is running (or `scancel`s the Slurm jobs), records
//! the cases it did not start, and still writes every report, marked
//! interrupted. A second signal ends cuport at once, killing the running
//! leg's process group first, with no report.
use std::sync::atomic::{AtomicI32, Ordering};

use serde::{Deserialize, Serialize};

static CAUGHT: AtomicI32 = AtomicI32::new(0);
/// Process group of the leg running now (0: none).
static LEG_GROUP: AtomicI32 = AtomicI32::new(0);

/// Asked between steps of a run: the interruption to stop for, if any.
pub type Stop<'a> = dyn Fn() -> Option<Interruption> + 'a;

/// A [`Stop`] that never stops (library callers without signals).
pub fn never() -> Option<Interruption> {
    None
}

/// Why a run stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interruption {
    pub signal: i32,
    /// `interrupted (SIGINT, Ctrl-C)`, for reports.
    pub reason: String,
}

impl Interruption {
    pub fn from_signal(signal: i32) -> Interruption {
        let reason = match signal {
            libc::SIGINT => "interrupted (SIGINT, Ctrl-C)".to_owned(),
            libc::SIGTERM => "terminated (SIGTERM)".to_owned(),
            s => format!("stopped by signal {s}"),
        };
        Interruption { signal, reason }
    }

    /// The shell's convention for a process ended by a signal: 128 +
    /// signal (130 for SIGINT, 143 for SIGTERM).
    pub fn exit_status(&self) -> u8 {
        u8::try_from(128 + self.signal.clamp(1, 127)).unwrap_or(u8::MAX)
    }
}

#[allow(unsafe_code)]
extern "C" fn on_signal(signal: libc::c_int) {
    if CAUGHT.swap(signal, Ordering::SeqCst) == 0 {
        return;
    }
    let group = LEG_GROUP.load(Ordering::SeqCst);
    // Safety: kill(2) and _exit(2) are async-signal-safe and touch no Rust
    // memory; this is the second signal, so the user wants out now.
    unsafe {
        if group > 0 {
            libc::kill(-group, libc::SIGKILL);
        }
        libc::_exit(128 + signal);
    }
}

/// Catch SIGINT and SIGTERM from now on (for the rest of the process).
#[allow(unsafe_code)]
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // Safety: `on_signal` only uses atomics and async-signal-safe
        // calls; signal(2) touches no Rust memory.
        unsafe {
            libc::signal(signal, handler);
        }
    }
}

/// The signal caught since [`install`], if any.
pub fn caught() -> Option<Interruption> {
    match CAUGHT.load(Ordering::SeqCst) {
        0 => None,
        s => Some(Interruption::from_signal(s)),
    }
}

/// Remember the running leg's process group (`None` once it ended), so a
/// second signal can kill it before cuport exits.
pub(crate) fn set_leg_group(pid: Option<u32>) {
    let group = pid.and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    LEG_GROUP.store(group, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_map_to_words_and_shell_statuses() {
        let int = Interruption::from_signal(libc::SIGINT);
        assert_eq!(int.reason, "interrupted (SIGINT, Ctrl-C)");
        assert_eq!(int.exit_status(), 130);
        let term = Interruption::from_signal(libc::SIGTERM);
        assert_eq!(term.reason, "terminated (SIGTERM)");
        assert_eq!(term.exit_status(), 143);
        assert_eq!(Interruption::from_signal(1).exit_status(), 129);
    }
}
