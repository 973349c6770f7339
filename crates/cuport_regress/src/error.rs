//! One error type for the harness; every variant names the file or backend
//! the user has to look at.
use std::path::PathBuf;

/// Errors the harness can return.
#[derive(Debug, thiserror::Error)]
pub enum RegressError {
    /// A case file could not be parsed or failed validation.
    #[error("{path}: {message}")]
    Case { path: PathBuf, message: String },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A tensor or timings file written by a leg is malformed.
    #[error("{path}: {message}")]
    Format { path: PathBuf, message: String },
    /// The backend's library or device is missing on this machine.
    #[error("backend `{backend}` is not available: {reason}")]
    BackendUnavailable { backend: String, reason: String },
    /// The backend runs, but not this op or dtype; the leg is skipped with
    /// the reason.
    #[error("backend `{backend}` does not support this case: {reason}")]
    Unsupported { backend: String, reason: String },
    /// The backend failed while running an op.
    #[error("backend `{backend}`: {message}")]
    Backend { backend: String, message: String },
    /// An op was given shapes or parameters it cannot run with.
    #[error("op `{op}`: {message}")]
    Op { op: String, message: String },
    /// A baseline file is malformed or has the wrong version.
    #[error("baseline {path}: {message}")]
    Baseline { path: PathBuf, message: String },
    /// A Slurm command failed or printed something unexpected.
    #[error("`{command}`: {message}")]
    Slurm { command: String, message: String },
    /// Spawning or waiting for a leg's process failed.
    #[error("leg `{command}`: {message}")]
    Spawn { command: String, message: String },
}

impl RegressError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn format(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::Format {
            path: path.into(),
            message: message.into(),
        }
    }

    pub(crate) fn backend(backend: &str, message: impl Into<String>) -> Self {
        Self::Backend {
            backend: backend.to_owned(),
            message: message.into(),
        }
    }

    pub(crate) fn unsupported(backend: &str, reason: impl Into<String>) -> Self {
        Self::Unsupported {
            backend: backend.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn op(op: &str, message: impl Into<String>) -> Self {
        Self::Op {
            op: op.to_owned(),
            message: message.into(),
        }
    }
}

/// Result alias for the harness.
pub type Result<T, E = RegressError> = std::result::Result<T, E>;
