//! Every exit status cuport uses, in one place, so that `--help` texts, CI
//! scripts and the code agree:
//!
//! - 0: the command did its job and found nothing it was asked to fail on;
//! - 1: it did its job and found what the caller asked it to fail on
//!   (`migrate --fail-on`, a regression, invalid rule files, failed
//!   `doctor --require`);
//! - 2: it could not do its job (usage error, unreadable input, I/O error);
//! - 128 + N: a signal N (SIGINT 2 → 130, SIGTERM 15 → 143) stopped it
//!   early; `regress run` still wrote its reports, marked interrupted. A
//!   second signal ends it at once with the same status and no report.
use std::process::ExitCode;

/// Done; nothing to fail on.
pub(crate) fn success() -> ExitCode {
    ExitCode::SUCCESS
}

/// Done, and the result is what the caller asked to fail on.
pub(crate) fn findings() -> ExitCode {
    ExitCode::from(FINDINGS)
}

/// [`success`] or [`findings`].
pub(crate) fn gate(failing: bool) -> ExitCode {
    if failing {
        findings()
    } else {
        success()
    }
}

/// The command could not run to the end (usage, input or I/O error).
pub(crate) fn error() -> ExitCode {
    ExitCode::from(ERROR)
}

/// Stopped early by signal `signal`: the shell's 128 + N.
pub(crate) fn interrupted(signal: i32) -> ExitCode {
    let status = 128 + signal.clamp(1, 127);
    ExitCode::from(u8::try_from(status).unwrap_or(u8::MAX))
}

const FINDINGS: u8 = 1;
const ERROR: u8 = 2;
