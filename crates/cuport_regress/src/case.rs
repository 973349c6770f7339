//! Case files: TOML under `regress/`, one or more `[[case]]` (operator) and
//! `[[app]]` (application) entries, plus `[defaults]`. The schema is
//! documented in `regress/README.md`.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::dtype::DType;
use crate::error::{RegressError, Result};
use crate::memory::MemoryLimit;
use crate::ops::OpSpec;
use crate::policy::AccuracyConfig;
use crate::sampling::PerfSettings;

/// Backends a case may name.
pub const KNOWN_BACKENDS: [&str; 4] = ["cpu", "cuda", "hip", "ascend"];

/// One case file as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    #[serde(default)]
    pub defaults: Defaults,
    #[serde(default, rename = "case")]
    pub cases: Vec<OpCase>,
    #[serde(default, rename = "app")]
    pub apps: Vec<AppCase>,
    /// Where legs run under `regress run --slurm`.
    pub slurm: Option<crate::slurm::SlurmConfig>,
}

/// Settings every case in the file inherits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// Backends to run op cases on; the first is the reference leg.
    pub backends: Option<Vec<String>>,
    pub seed: Option<u64>,
    #[serde(default)]
    pub accuracy: AccuracyConfig,
    #[serde(default)]
    pub perf: PerfSettings,
    /// Seconds before an app leg is killed (default 300).
    pub timeout_s: Option<f64>,
    /// Skipped legs are warnings instead of failing their case.
    pub allow_skip: Option<bool>,
    /// Host memory one case may use (`"8GiB"`, `"50%"`; default: half of
    /// this machine's memory).
    pub max_case_memory: Option<MemoryLimit>,
}

/// An operator case: inputs generated from `seed`, run on every backend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpCase {
    pub name: String,
    pub op: OpSpec,
    #[serde(default = "default_dtype")]
    pub dtype: DType,
    pub seed: Option<u64>,
    pub backends: Option<Vec<String>>,
    /// Label for the placement table (default: derived from the op's work).
    pub shape_class: Option<String>,
    /// Overrides `[defaults] allow_skip`.
    pub allow_skip: Option<bool>,
    /// Overrides `[defaults] max_case_memory`.
    pub max_case_memory: Option<MemoryLimit>,
    #[serde(default)]
    pub accuracy: AccuracyConfig,
    #[serde(default)]
    pub perf: PerfSettings,
}

fn default_dtype() -> DType {
    DType::F32
}

/// An application case: two shell commands writing into `$CUPORT_OUT`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppCase {
    pub name: String,
    pub reference: String,
    pub candidate: String,
    pub timeout_s: Option<f64>,
    /// Working directory, relative to the case file (default: its folder).
    pub cwd: Option<PathBuf>,
    /// Gate on candidate-vs-reference speed (default true: both legs run
    /// on this machine, so the comparison is fair; under `--slurm`, false
    /// when the two legs have different placements).
    pub gate_cross: Option<bool>,
    /// `[slurm.placement.NAME]` of each leg under `--slurm` (default:
    /// the `default` placement).
    pub reference_placement: Option<String>,
    pub candidate_placement: Option<String>,
    /// Overrides `[defaults] allow_skip`.
    pub allow_skip: Option<bool>,
    /// Overrides `[defaults] max_case_memory`; bounds the tensors cuport
    /// reads back from the two legs.
    pub max_case_memory: Option<MemoryLimit>,
    #[serde(default)]
    pub accuracy: AccuracyConfig,
    #[serde(default)]
    pub perf: PerfSettings,
}

/// A parsed case file and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedFile {
    pub path: PathBuf,
    pub file: CaseFile,
    /// Case name → line of its `[[case]]`/`[[app]]` header, for messages.
    pub lines: BTreeMap<String, usize>,
}

impl LoadedFile {
    pub fn backends_of(&self, case: &OpCase) -> Vec<String> {
        case.backends
            .clone()
            .or_else(|| self.file.defaults.backends.clone())
            .unwrap_or_else(|| vec!["cpu".to_owned()])
    }

    pub fn seed_of(&self, case: &OpCase) -> u64 {
        case.seed.or(self.file.defaults.seed).unwrap_or(0)
    }

    /// The folder app legs run in by default; `.` for a bare file name
    /// (whose parent is the empty path, which no process can start in).
    pub fn dir(&self) -> &Path {
        match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        }
    }

    /// `regress/ops.toml:12` for the case named `name` (the file alone
    /// when its header line is unknown).
    pub fn location(&self, name: &str) -> String {
        match self.lines.get(name) {
            Some(line) => format!("{}:{line}", self.path.display()),
            None => self.path.display().to_string(),
        }
    }
}

/// Line of each case's `[[case]]` or `[[app]]` header, found through the
/// `name = ...` line that follows it (names are unique within a run).
fn header_lines(text: &str) -> BTreeMap<String, usize> {
    let mut lines = BTreeMap::new();
    let mut header = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            let table = trimmed.split('#').next().unwrap_or("").replace(' ', "");
            header = matches!(table.as_str(), "[[case]]" | "[[app]]").then_some(index + 1);
            continue;
        }
        let Some(at) = header else { continue };
        let name = toml::from_str::<toml::Table>(trimmed)
            .ok()
            .and_then(|t| t.get("name").and_then(|v| v.as_str()).map(str::to_owned));
        if let Some(name) = name {
            lines.entry(name).or_insert(at);
            header = None;
        }
    }
    lines
}

/// Parse one case file; errors carry the path, line and the field.
pub fn load_file(path: &Path) -> Result<LoadedFile> {
    let text = std::fs::read_to_string(path).map_err(|e| RegressError::io(path, e))?;
    let file: CaseFile = toml::from_str(&text).map_err(|e| RegressError::Case {
        path: path.to_owned(),
        message: e.to_string().trim_end().to_owned(),
    })?;
    let loaded = LoadedFile {
        path: path.to_owned(),
        file,
        lines: header_lines(&text),
    };
    validate(&loaded)?;
    Ok(loaded)
}

/// Load `path` (a file, or every `*.toml` directly inside a folder, sorted).
pub fn load(path: &Path) -> Result<Vec<LoadedFile>> {
    let files = if path.is_dir() {
        let mut found = Vec::new();
        let entries = std::fs::read_dir(path).map_err(|e| RegressError::io(path, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| RegressError::io(path, e))?;
            let p = entry.path();
            if p.extension().is_some_and(|x| x == "toml") && p.is_file() {
                found.push(p);
            }
        }
        found.sort();
        found
    } else {
        vec![path.to_owned()]
    };
    let loaded = files
        .iter()
        .map(|p| load_file(p))
        .collect::<Result<Vec<_>>>()?;
    check_unique_names(&loaded)?;
    Ok(loaded)
}

fn validate(loaded: &LoadedFile) -> Result<()> {
    let err = |message: String| RegressError::Case {
        path: loaded.path.clone(),
        message,
    };
    for case in &loaded.file.cases {
        case.op
            .validate()
            .map_err(|e| err(format!("case `{}`, field `op`: {e}", case.name)))?;
        let backends = loaded.backends_of(case);
        if backends.is_empty() {
            return Err(err(format!(
                "case `{}`, field `backends`: name at least one backend",
                case.name
            )));
        }
        if let Some(bad) = backends
            .iter()
            .find(|b| !KNOWN_BACKENDS.contains(&b.as_str()))
        {
            return Err(err(format!(
                "case `{}`, field `backends`: unknown backend `{bad}`; use one of {}",
                case.name,
                KNOWN_BACKENDS.join(", ")
            )));
        }
    }
    if let Some(slurm) = &loaded.file.slurm {
        slurm.validate(&loaded.path)?;
    }
    for app in &loaded.file.apps {
        if app.reference.trim().is_empty() || app.candidate.trim().is_empty() {
            return Err(err(format!(
                "app `{}`: `reference` and `candidate` must be non-empty commands",
                app.name
            )));
        }
    }
    Ok(())
}

fn check_unique_names(files: &[LoadedFile]) -> Result<()> {
    let mut seen = BTreeSet::new();
    for f in files {
        let names = f
            .file
            .cases
            .iter()
            .map(|c| &c.name)
            .chain(f.file.apps.iter().map(|a| &a.name));
        for name in names {
            if !seen.insert(name.clone()) {
                return Err(RegressError::Case {
                    path: f.path.clone(),
                    message: format!("field `name`: case name `{name}` is used twice; names key baselines, so make it unique"),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> std::result::Result<CaseFile, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn op_case_parses_with_defaults() -> std::result::Result<(), String> {
        let f = parse("[[case]]\nname = \"g\"\n[case.op]\nkind = \"gemm\"\nm = 2\nn = 3\nk = 4\ntrans_b = true\n")?;
        assert_eq!(f.cases[0].dtype, DType::F32);
        assert!(matches!(f.cases[0].op, OpSpec::Gemm { alpha, trans_b: true, .. } if alpha == 1.0));
        Ok(())
    }

    #[test]
    fn gate_settings_parse_and_cases_know_their_lines() -> std::result::Result<(), String> {
        let text = "[defaults]\nallow_skip = true\nmax_case_memory = \"2GiB\"\n\n[[case]] # first\nname = 'a'\nmax_case_memory = \"25%\"\n[case.op]\nkind = \"add\"\nlen = 2\n\n[[app]]\n  name = \"b\"\nreference = \"true\"\ncandidate = \"true\"\n";
        let f = parse(text)?;
        assert_eq!(f.defaults.allow_skip, Some(true));
        assert_eq!(
            f.defaults.max_case_memory,
            Some(MemoryLimit::Bytes(2 << 30))
        );
        assert_eq!(f.cases[0].max_case_memory, Some(MemoryLimit::Share(0.25)));
        let lines = header_lines(text);
        assert_eq!(lines.get("a"), Some(&5));
        assert_eq!(lines.get("b"), Some(&12));
        let e = parse("[defaults]\nmax_case_memory = \"8 bananas\"\n");
        assert!(
            e.as_ref()
                .is_err_and(|m| m.contains("line 2") && m.contains("e.g. `8GiB`")),
            "{e:?}"
        );
        Ok(())
    }

    #[test]
    fn a_bare_file_name_runs_its_apps_in_the_current_folder() {
        let at = |path: &str| LoadedFile {
            path: path.into(),
            file: CaseFile::default(),
            lines: BTreeMap::new(),
        };
        assert_eq!(at("apps.toml").dir(), Path::new("."));
        assert_eq!(at("regress/apps.toml").dir(), Path::new("regress"));
    }

    #[test]
    fn unknown_fields_are_named() {
        let e = parse(
            "[[case]]\nname = \"g\"\n[case.op]\nkind = \"softmax\"\nrows = 2\ncols = 3\naxis = 1\n",
        );
        assert!(e.as_ref().is_err_and(|m| m.contains("axis")), "{e:?}");
        let e =
            parse("[[case]]\nname = \"g\"\ntolerance = 1\n[case.op]\nkind = \"add\"\nlen = 2\n");
        assert!(e.as_ref().is_err_and(|m| m.contains("tolerance")), "{e:?}");
        let e = parse("[[case]]\nname = \"g\"\n[case.op]\nkind = \"matmul\"\n");
        assert!(e.as_ref().is_err_and(|m| m.contains("matmul")), "{e:?}");
    }
}
