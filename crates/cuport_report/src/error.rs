use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: not a readable cuport report ({error}); pass the report.json that `cuport migrate --report DIR` wrote")]
    Parse {
        path: PathBuf,
        error: serde_json::Error,
    },
    #[error("{path}: its format is `{found}`, not `cuport-report`; pass the report.json that `cuport migrate --report DIR` wrote")]
    WrongFormat { path: PathBuf, found: String },
    #[error("{path}: report version {found} is newer than this cuport reads (up to {supported}); upgrade cuport or run the migration again with this one")]
    UnsupportedVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("could not write the {what}: {error}")]
    Encode { what: &'static str, error: String },
}

pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |error| ReportError::Io {
        path: path.to_path_buf(),
        error,
    }
}
