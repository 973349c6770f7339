//! Per-version support of PyTorch's own APIs on a target (which `torch.*`
//! functions torch_npu runs on which Ascend chip, which torch_mlu runs),
//! from the vendors' published lists. The data is generated into
//! `mappings/<target>/api-support/` by `tools/gen_torch_npu_support.py` and
//! `tools/gen_torch_mlu_support.py`; this module only reads it.
use cuport_model::{SdkVersion, Target};
use rustc_hash::FxHashMap;
use serde::Deserialize;

use crate::embedded::SUPPORT_FILES;
use crate::python_guidance::PythonGuidance;

/// What a support list says of one API on one chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SupportStatus {
    Supported,
    /// Supported with restrictions (dtypes, arguments, CPU fallback).
    Restricted,
    Unsupported,
    /// Not in the vendor's list: not verified there.
    Unknown,
}

impl SupportStatus {
    pub fn id(self) -> &'static str {
        match self {
            SupportStatus::Supported => "supported",
            SupportStatus::Restricted => "restricted",
            SupportStatus::Unsupported => "unsupported",
            SupportStatus::Unknown => "unknown",
        }
    }
}

/// Why the embedded support lists could not be read (a build defect: the
/// generated files are checked by the tests).
#[derive(Debug, thiserror::Error)]
pub enum SupportError {
    #[error("{file}: {message}; regenerate it with the generator in crates/cuport_rules/tools/")]
    Data { file: String, message: String },
    #[error("cuport has no per-API support lists for {0}; they exist for ascend (torch_npu) and mlu (torch_mlu)")]
    NoLists(Target),
    #[error("{adapter} {requested} has no support list; known: {known}")]
    UnknownVersion {
        adapter: String,
        requested: String,
        known: String,
    },
    #[error("chip `{requested}` is not in the support lists; known: {known}")]
    UnknownChip { requested: String, known: String },
}

/// One API's row in one version's list.
#[derive(Debug, Clone, Deserialize)]
pub struct SupportRow {
    pub api: String,
    supported_on: String,
    unsupported_on: String,
    restricted: String,
    /// The kinds of restriction, in cuport's words (empty when none).
    pub note: String,
    /// The vendor document the row comes from (`pytorch_2-13-0/torch.md`).
    pub source: String,
}

impl SupportRow {
    fn marks(list: &str) -> impl Iterator<Item = &str> {
        list.split(';').filter(|c| !c.is_empty())
    }

    /// The chips this version runs the API on.
    pub fn supported_on(&self) -> impl Iterator<Item = &str> {
        Self::marks(&self.supported_on)
    }

    /// The status on `chip`.
    pub fn status(&self, chip: &str) -> SupportStatus {
        if self.supported_on().any(|c| c == chip) {
            if self.restricted.is_empty() {
                SupportStatus::Supported
            } else {
                SupportStatus::Restricted
            }
        } else if Self::marks(&self.unsupported_on).any(|c| c == chip) {
            SupportStatus::Unsupported
        } else {
            SupportStatus::Unknown
        }
    }
}

/// One torch_npu release's list.
#[derive(Debug)]
pub struct VersionList {
    pub version: String,
    parsed: SdkVersion,
    rows: FxHashMap<String, SupportRow>,
}

impl VersionList {
    pub fn row(&self, api: &str) -> Option<&SupportRow> {
        self.rows.get(api)
    }

    /// Whether this list runs `api` on `chip` (restricted or not).
    pub fn supports(&self, api: &str, chip: &str) -> bool {
        self.row(api).is_some_and(|r| {
            matches!(
                r.status(chip),
                SupportStatus::Supported | SupportStatus::Restricted
            )
        })
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

#[derive(Debug, Deserialize)]
struct Index {
    adapter: String,
    source: String,
    reference: String,
    chips: Vec<String>,
    version: Vec<IndexVersion>,
}

#[derive(Debug, Deserialize)]
struct IndexVersion {
    release: String,
    file: String,
}

/// Every version's list, oldest first.
#[derive(Debug)]
pub struct SupportLists {
    pub target: Target,
    /// The PyTorch adapter the lists are of (`torch_npu`, `torch_mlu`).
    pub adapter: String,
    /// Where the facts come from (repository, commit, documents).
    pub source: String,
    pub reference: String,
    pub chips: Vec<String>,
    versions: Vec<VersionList>,
    /// CUDA-only packages and precision/performance advice for the target.
    pub guidance: PythonGuidance,
}

impl SupportLists {
    /// The lists built into cuport for `target`'s PyTorch adapter.
    pub fn builtin(target: Target) -> Result<SupportLists, SupportError> {
        let dir = format!("mappings/{}/api-support", target.id());
        let index_name = format!("{dir}/index.toml");
        let file = |name: &str| -> Option<&'static str> {
            SUPPORT_FILES
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| *t)
        };
        let data_error = |file: &str, message: String| SupportError::Data {
            file: file.to_owned(),
            message,
        };
        let index_text = file(&index_name).ok_or(SupportError::NoLists(target))?;
        let index: Index =
            toml::from_str(index_text).map_err(|e| data_error(&index_name, e.to_string()))?;
        let mut versions = Vec::new();
        for entry in &index.version {
            let name = format!("{dir}/{}", entry.file);
            let text = file(&name).ok_or_else(|| data_error(&name, "missing".into()))?;
            let parsed = SdkVersion::parse(&entry.release)
                .map_err(|e| data_error(&index_name, e.to_string()))?;
            let rows = read_rows(text).map_err(|message| data_error(&name, message))?;
            versions.push(VersionList {
                version: entry.release.clone(),
                parsed,
                rows,
            });
        }
        versions.sort_by_key(|v| v.parsed);
        let guidance = PythonGuidance::load(&dir, &file)
            .map_err(|(name, message)| data_error(&name, message))?;
        Ok(SupportLists {
            guidance,
            target,
            adapter: index.adapter,
            source: index.source,
            reference: index.reference,
            chips: index.chips,
            versions,
        })
    }

    /// Oldest first.
    pub fn versions(&self) -> &[VersionList] {
        &self.versions
    }

    /// The list of `requested` (default: the newest).
    pub fn version(&self, requested: Option<&str>) -> Result<&VersionList, SupportError> {
        let found = match requested {
            None => self.versions.last(),
            Some(text) => {
                let wanted = SdkVersion::parse(text).ok();
                self.versions
                    .iter()
                    .find(|v| v.version == text || Some(v.parsed) == wanted)
            }
        };
        found.ok_or_else(|| SupportError::UnknownVersion {
            adapter: self.adapter.clone(),
            requested: requested.unwrap_or("(newest)").to_owned(),
            known: self.known_versions(),
        })
    }

    /// `chip` as the lists spell it (`a2` → `A2`).
    pub fn chip(&self, requested: &str) -> Result<&str, SupportError> {
        self.chips
            .iter()
            .find(|c| c.eq_ignore_ascii_case(requested))
            .map(String::as_str)
            .ok_or_else(|| SupportError::UnknownChip {
                requested: requested.to_owned(),
                known: self.chips.join(", "),
            })
    }

    /// Whether some version's list has `api` (whatever it says of it).
    pub fn lists(&self, api: &str) -> bool {
        self.versions.iter().any(|v| v.row(api).is_some())
    }

    /// The versions whose list supports `api` on `chip` (restricted or not).
    pub fn supporting_versions(&self, api: &str, chip: &str) -> Vec<&str> {
        self.versions
            .iter()
            .filter(|v| v.supports(api, chip))
            .map(|v| v.version.as_str())
            .collect()
    }

    /// The first version newer than `selected` that supports `api` on `chip`.
    pub fn first_newer_supporting(
        &self,
        selected: &VersionList,
        api: &str,
        chip: &str,
    ) -> Option<&str> {
        self.versions
            .iter()
            .filter(|v| v.parsed > selected.parsed)
            .find(|v| v.supports(api, chip))
            .map(|v| v.version.as_str())
    }

    fn known_versions(&self) -> String {
        let names: Vec<&str> = self.versions.iter().map(|v| v.version.as_str()).collect();
        names.join(", ")
    }
}

fn read_rows(text: &str) -> Result<FxHashMap<String, SupportRow>, String> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let mut rows = FxHashMap::default();
    for (index, row) in reader.deserialize::<SupportRow>().enumerate() {
        let row = row.map_err(|e| format!("row {}: {e}", index + 2))?;
        rows.insert(row.api.clone(), row);
    }
    Ok(rows)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn builtin_lists_load_and_answer() {
        let lists = SupportLists::builtin(Target::Ascend).expect("embedded lists load");
        assert_eq!(lists.adapter, "torch_npu");
        assert!(
            lists.versions().len() >= 3,
            "at least three torch_npu versions"
        );
        let newest = lists.version(None).unwrap();
        assert!(newest.len() > 1000);
        let row = newest.row("torch.nn.functional.conv2d").expect("listed");
        assert_eq!(row.status("A2"), SupportStatus::Restricted);
        assert!(row.note.contains("fp16"), "{}", row.note);
        assert_eq!(lists.chip("a2").unwrap(), "A2");
        assert!(lists.chip("H100").is_err());
        assert!(lists.version(Some("1.0.0")).is_err());
        assert_eq!(newest.row("torch.no_such_api").map(|r| r.api.clone()), None);
    }

    #[test]
    fn torch_mlu_lists_have_one_chip_class_and_several_releases() {
        let lists = SupportLists::builtin(Target::Mlu).expect("embedded lists load");
        assert_eq!(lists.adapter, "torch_mlu");
        assert!(lists.versions().len() >= 2);
        assert_eq!(lists.chip("mlu").unwrap(), "MLU");
        let newest = lists.version(None).unwrap();
        let einsum = newest.row("torch.einsum").expect("listed");
        assert_eq!(einsum.status("MLU"), SupportStatus::Unsupported);
        assert!(matches!(
            SupportLists::builtin(Target::Musa),
            Err(SupportError::NoLists(Target::Musa))
        ));
    }
}
