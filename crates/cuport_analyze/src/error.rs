use std::path::PathBuf;

/// Errors that stop a scan. Problems with single files never do: they are
/// reported as skipped files or warnings and the scan goes on.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    #[error("cannot scan {path}: {source}")]
    Root {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid --exclude glob {glob:?}: {message}")]
    Exclude { glob: String, message: String },
    #[error("the bundled tree-sitter grammar failed to load: {0}")]
    Grammar(String),
}
