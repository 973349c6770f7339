//! Ctrl-C (SIGINT) and SIGTERM while waiting for jobs: the handler only
//! raises a flag; the wait loop sees it, cancels the jobs with `scancel`
//! and still writes the report.
use std::sync::atomic::{AtomicI32, Ordering};

static CAUGHT: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    CAUGHT.store(signal, Ordering::SeqCst);
}

/// Catch SIGINT and SIGTERM from now on (for the rest of the process).
#[allow(unsafe_code)]
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // Safety: `on_signal` does nothing but an atomic store, which is
        // allowed in a signal handler; signal(2) touches no Rust memory.
        unsafe {
            libc::signal(signal, handler);
        }
    }
}

/// The signal caught since [`install`], if any, as words for the report.
pub fn caught() -> Option<String> {
    match CAUGHT.load(Ordering::SeqCst) {
        0 => None,
        s if s == libc::SIGINT => Some("interrupted (SIGINT, Ctrl-C)".into()),
        s if s == libc::SIGTERM => Some("terminated (SIGTERM)".into()),
        s => Some(format!("signal {s}")),
    }
}
