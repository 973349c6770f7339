//! The tables against a vendor's own headers, release by release:
//! [`VendorHeaders::discover`] reads what each release's headers declare
//! ([`HeaderFacts`]), [`RuleSet::check_vendor_headers`] checks every row of
//! a target against them (`cuport rules check-headers`).
//!
//! Where the headers lie and which name prefixes belong to which API family
//! are data (`[vendor-headers]` in `mappings/<target>/target.toml`).
mod check;
mod lex;
mod scan;

use std::path::{Path, PathBuf};

use cuport_model::{SdkVersion, Target, VendorHeaderFacts};

pub use check::{HeaderCheck, HeaderProblem, ReleaseCheck};
pub use scan::{normalise_type, DeclaredFunction, HeaderFacts};

/// Why the headers could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{target} has no [vendor-headers] facts in its target.toml")]
    NoFacts { target: Target },
    #[error("no release headers under {root} (expected {pattern})")]
    NoReleases { root: PathBuf, pattern: String },
    #[error("`{text}` is not a release (MAJOR.MINOR.PATCH or MAJOR.MINOR.RCn): {reason}")]
    BadRelease { text: String, reason: String },
}

/// One release's include directories and what they declare.
#[derive(Debug, Clone)]
pub struct ReleaseHeaders {
    pub release: SdkVersion,
    pub dirs: Vec<PathBuf>,
    pub facts: HeaderFacts,
    /// The API families whose marker header these directories hold.
    pub families: Vec<String>,
}

/// Every release found, and the untagged headers every release shares.
#[derive(Debug, Clone)]
pub struct VendorHeaders {
    pub target: Target,
    pub releases: Vec<ReleaseHeaders>,
    pub untagged_dirs: Vec<PathBuf>,
    pub untagged: HeaderFacts,
}

impl VendorHeaders {
    /// The releases under `root` (`release-include` of the target's facts)
    /// plus `extra` include directories per release (HCCL from a wheel); a
    /// release only `extra` names is checked for the families it holds.
    pub fn discover(
        target: Target,
        root: Option<&Path>,
        extra: &[(String, PathBuf)],
    ) -> Result<VendorHeaders, HeaderError> {
        let facts = vendor_facts(target)?;
        let mut found: Vec<(SdkVersion, Vec<PathBuf>)> = Vec::new();
        let mut untagged_dirs = Vec::new();
        if let Some(root) = root {
            found = release_dirs(root, &facts.release_include)?;
            if found.is_empty() {
                return Err(HeaderError::NoReleases {
                    root: root.to_owned(),
                    pattern: facts.release_include.clone(),
                });
            }
            untagged_dirs = facts
                .untagged_include
                .iter()
                .map(|d| root.join(d))
                .filter(|d| d.is_dir())
                .collect();
        }
        for (text, dir) in extra {
            let release = parse_release(text)?;
            match found.iter_mut().find(|(r, _)| *r == release) {
                Some((_, dirs)) => dirs.push(dir.clone()),
                None => found.push((release, vec![dir.clone()])),
            }
        }
        found.sort_by_key(|(release, _)| *release);
        let mut releases = Vec::new();
        for (release, dirs) in found {
            let families = facts
                .families
                .iter()
                // An untagged library (ops-blas) counts for every release.
                .filter(|f| {
                    dirs.iter()
                        .chain(&untagged_dirs)
                        .any(|d| d.join(&f.marker).is_file())
                })
                .map(|f| f.name.clone())
                .collect();
            releases.push(ReleaseHeaders {
                facts: HeaderFacts::scan(&dirs)?,
                release,
                dirs,
                families,
            });
        }
        Ok(VendorHeaders {
            target,
            untagged: HeaderFacts::scan(&untagged_dirs)?,
            untagged_dirs,
            releases,
        })
    }
}

pub(crate) fn vendor_facts(target: Target) -> Result<&'static VendorHeaderFacts, HeaderError> {
    target
        .profile()
        .vendor_headers
        .as_ref()
        .ok_or(HeaderError::NoFacts { target })
}

fn parse_release(text: &str) -> Result<SdkVersion, HeaderError> {
    SdkVersion::parse(text).map_err(|e| HeaderError::BadRelease {
        text: text.to_owned(),
        reason: e.0,
    })
}

/// `(release, [dir])` for each directory of `root` that matches `pattern`.
fn release_dirs(
    root: &Path,
    pattern: &str,
) -> Result<Vec<(SdkVersion, Vec<PathBuf>)>, HeaderError> {
    let (prefix, rest) = pattern.split_once("{release}").unwrap_or((pattern, ""));
    let (head, below) = rest.split_once('/').unwrap_or((rest, ""));
    let entries = std::fs::read_dir(root).map_err(|source| HeaderError::Read {
        path: root.to_owned(),
        source,
    })?;
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(release) = name.strip_prefix(prefix).and_then(|r| r.strip_suffix(head)) else {
            continue;
        };
        let dir = entry.path().join(below);
        if let (Ok(release), true) = (SdkVersion::parse(release), dir.is_dir()) {
            out.push((release, vec![dir]));
        }
    }
    Ok(out)
}
