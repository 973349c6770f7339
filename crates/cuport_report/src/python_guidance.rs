//! The rest of the per-API analysis of a PyTorch project: what it uses of
//! CUDA-only packages and what the target offers instead
//! (`third_party.csv`), the CUDA operators it builds itself and the kernels
//! they need on the target (`custom_ops.csv`), and the precision,
//! performance and porting advice its API uses, and the CUDA libraries its
//! C/C++/CUDA sources use, trigger (`advice.csv`).
use cuport_analyze::{ExtensionBuild, TorchApiInventory};
use cuport_model::Library;
use cuport_rules::python_guidance::{AdviceKind, AdviceRule, PackageStatus, PythonGuidance};
use serde::Serialize;

use crate::csv_out::csv_records;
use crate::error::ReportError;

/// One use of a CUDA-only package.
#[derive(Debug, Clone, Serialize)]
pub struct ThirdPartyRecord {
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The package's import name (`flash_attn`).
    pub package: String,
    pub pip: String,
    /// What the project uses (`flash_attn.flash_attn_func`).
    pub used: String,
    pub status: PackageStatus,
    pub alternative: String,
    /// The aclnn operators the alternative runs (`; `-separated; empty
    /// when the table names none).
    pub operators: String,
    pub note: String,
    pub source: String,
    /// Where the vendor says the alternative runs `operators`.
    pub operators_source: String,
}

/// One CUDA kernel (or one extension, when no kernel could be listed) of a
/// CUDA extension the project builds.
#[derive(Debug, Clone, Serialize)]
pub struct CustomOpRecord {
    /// The Python file with the build, and the build's line.
    pub file: String,
    pub line: u32,
    pub extension: String,
    pub builder: String,
    /// The CUDA source holding the kernel, relative to the analysed root.
    pub source: String,
    pub kernel: String,
    pub kernel_line: u32,
    /// Where `cuport migrate --ascend-kernel-skeletons` writes the kernel's
    /// Ascend C skeleton (empty on targets cuport has no skeletons for).
    pub skeleton: String,
    /// The vendor operator that may replace the kernel outright.
    pub operator: String,
    pub note: String,
}

/// One use that triggers one piece of advice.
#[derive(Debug, Clone, Serialize)]
pub struct AdviceRecord {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub id: String,
    pub kind: AdviceKind,
    /// The API, `keyword=value` or CUDA library name that triggered it.
    pub trigger: String,
    pub advice: String,
    /// The aclnn operators the advice names (`; `-separated).
    pub operators: String,
    pub source: String,
    pub operators_source: String,
}

/// One use of a CUDA library in a C, C++ or CUDA source (a call, type,
/// constant or include).
#[derive(Debug, Clone)]
pub struct LibraryUse {
    pub file: String,
    pub library: Library,
    /// The name as written (`cublasSgemm`, `cublas_v2.h`).
    pub name: String,
    pub line: u32,
    pub column: u32,
}

/// A kernel defined in a CUDA source of the analysed tree.
#[derive(Debug, Clone)]
pub struct KernelRef {
    pub name: String,
    pub line: u32,
    pub skeleton: Option<String>,
    pub operator: Option<String>,
}

/// What the caller knows of the tree's CUDA files: the paths (relative,
/// `/`-separated), and the kernels of one of them.
pub struct CudaSources<'a> {
    pub paths: &'a [String],
    pub kernels: &'a dyn Fn(&str) -> Vec<KernelRef>,
    /// Said of every kernel when the target has no skeletons.
    pub no_skeleton_note: Option<&'a str>,
    /// The CUDA library uses of the tree's C, C++ and CUDA sources, for
    /// the advice keyed to libraries.
    pub library_uses: &'a [LibraryUse],
}

/// Every use of a package the target's table lists.
pub(crate) fn third_party_records(
    files: &[(String, TorchApiInventory)],
    guidance: &PythonGuidance,
) -> Vec<ThirdPartyRecord> {
    let mut records = Vec::new();
    for (path, inventory) in files {
        for used in &inventory.packages {
            let Some(package) = guidance.package_of(&used.path) else {
                continue;
            };
            let api = package.api_of(&used.path);
            let (alternative, note, source, operators, operators_source) = match api {
                Some(a) => (
                    &a.alternative,
                    &a.note,
                    &a.source,
                    &a.operators,
                    &a.operators_source,
                ),
                None => (
                    &package.alternative,
                    &package.note,
                    &package.source,
                    &package.operators,
                    &package.operators_source,
                ),
            };
            records.push(ThirdPartyRecord {
                file: path.clone(),
                line: used.line,
                column: used.column,
                package: package.module.clone(),
                pip: package.pip.clone(),
                used: used.path.clone(),
                status: package.status,
                alternative: alternative.clone(),
                operators: operators.join("; "),
                note: join(&package.why, note),
                source: source.clone(),
                operators_source: operators_source.clone(),
            });
        }
    }
    records
}

/// Every API use and keyword argument some advice is keyed to, and the
/// first use in each file of a CUDA library some advice is keyed to.
pub(crate) fn advice_records(
    files: &[(String, TorchApiInventory)],
    library_uses: &[LibraryUse],
    guidance: &PythonGuidance,
) -> Vec<AdviceRecord> {
    let mut records = Vec::new();
    for (path, inventory) in files {
        let apis = inventory
            .uses
            .iter()
            .map(|u| (u.api.as_str(), u.api.clone(), u.line, u.column));
        let keywords = inventory.keywords.iter().map(|k| {
            let trigger = format!("{}={}", k.name, k.value);
            (k.name.as_str(), trigger, k.line, k.column)
        });
        for rule in &guidance.advice {
            let hits = apis
                .clone()
                .filter(|(api, ..)| rule.apis.iter().any(|a| a == api))
                .chain(
                    keywords
                        .clone()
                        .filter(|(name, ..)| rule.keywords.iter().any(|k| k == name)),
                );
            for (_, trigger, line, column) in hits {
                records.push(advice_record(rule, path, (line, column), trigger));
            }
        }
    }
    for rule in &guidance.advice {
        let mut first: std::collections::BTreeMap<&str, &LibraryUse> = Default::default();
        for used in library_uses
            .iter()
            .filter(|u| rule.libraries.contains(&u.library))
        {
            let slot = first.entry(&used.file).or_insert(used);
            if (used.line, used.column) < (slot.line, slot.column) {
                *slot = used;
            }
        }
        for (file, used) in first {
            let at = (used.line, used.column);
            records.push(advice_record(rule, file, at, used.name.clone()));
        }
    }
    records.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    records
}

fn advice_record(
    rule: &AdviceRule,
    file: &str,
    (line, column): (u32, u32),
    trigger: String,
) -> AdviceRecord {
    AdviceRecord {
        file: file.to_owned(),
        line,
        column,
        id: rule.id.clone(),
        kind: rule.kind,
        trigger,
        advice: rule.advice.clone(),
        operators: rule.operators.join("; "),
        source: rule.source.clone(),
        operators_source: rule.operators_source.clone(),
    }
}

/// One row per kernel each extension build compiles.
pub(crate) fn custom_op_records(
    files: &[(String, TorchApiInventory)],
    sources: &CudaSources<'_>,
) -> Vec<CustomOpRecord> {
    let mut records = Vec::new();
    for (path, inventory) in files {
        for build in &inventory.extensions {
            records.extend(build_records(path, build, sources));
        }
    }
    records
}

fn build_records(
    path: &str,
    build: &ExtensionBuild,
    sources: &CudaSources<'_>,
) -> Vec<CustomOpRecord> {
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    let row = |source: &str, kernel: Option<&KernelRef>, note: String| CustomOpRecord {
        file: path.to_owned(),
        line: build.line,
        extension: build.name.clone().unwrap_or_default(),
        builder: build.builder.clone(),
        source: source.to_owned(),
        kernel: kernel.map(|k| k.name.clone()).unwrap_or_default(),
        kernel_line: kernel.map_or(0, |k| k.line),
        skeleton: kernel.and_then(|k| k.skeleton.clone()).unwrap_or_default(),
        operator: kernel.and_then(|k| k.operator.clone()).unwrap_or_default(),
        note,
    };
    let mut records = Vec::new();
    let mut missing = Vec::new();
    for named in &build.sources {
        let matched = matching_sources(dir, named, sources.paths);
        if matched.is_empty() && may_name_cuda(named) {
            missing.push(named.as_str());
        }
        for source in matched.into_iter().filter(|s| is_cuda_source(s)) {
            let kernels = (sources.kernels)(source);
            if kernels.is_empty() {
                records.push(row(
                    source,
                    None,
                    "no `__global__` kernel defined in this source itself (the kernels it launches may be defined in the headers it includes)".into(),
                ));
            }
            for kernel in &kernels {
                let note = sources.no_skeleton_note.unwrap_or_default().to_owned();
                records.push(row(source, Some(kernel), note));
            }
        }
    }
    let unlisted = unlisted_notes(build, &missing);
    if !unlisted.is_empty() || records.is_empty() {
        let note = if unlisted.is_empty() {
            "no CUDA source among the build's sources".to_owned()
        } else {
            unlisted.join("; ")
        };
        records.push(row("", None, note));
    }
    records
}

/// What keeps a build's kernels from being listed: sources not found,
/// not evaluated, or inline.
fn unlisted_notes(build: &ExtensionBuild, missing: &[&str]) -> Vec<String> {
    let mut notes = Vec::new();
    if !missing.is_empty() {
        notes.push(format!(
            "not found under the analysed root: {}",
            missing.join(", ")
        ));
    }
    if build.unresolved_sources > 0 {
        notes.push(format!(
            "{} source argument(s) are expressions cuport does not evaluate; list their kernels by hand",
            build.unresolved_sources
        ));
    }
    if build.inline_cuda {
        notes.push(
            "CUDA code inline in the Python file (load_inline cuda_sources): port it by hand"
                .into(),
        );
    }
    notes
}

/// The tree's files a named source stands for: the path relative to the
/// build file's folder (or to the root, as a build run from there names
/// it), or every match of a glob pattern.
fn matching_sources<'p>(dir: &str, named: &str, paths: &'p [String]) -> Vec<&'p str> {
    let named = named.trim_start_matches("./");
    let candidates: Vec<String> = if dir.is_empty() {
        vec![named.to_owned()]
    } else {
        vec![format!("{dir}/{named}"), named.to_owned()]
    };
    for candidate in &candidates {
        let candidate = normalise(candidate);
        let found: Vec<&str> = if candidate.contains(['*', '?', '[']) {
            // Python's glob: `*` stops at a `/`.
            let glob = globset::GlobBuilder::new(&candidate)
                .literal_separator(true)
                .build();
            match glob {
                Ok(glob) => {
                    let matcher = glob.compile_matcher();
                    paths
                        .iter()
                        .filter(|p| matcher.is_match(p.as_str()))
                        .map(String::as_str)
                        .collect()
                }
                Err(_) => Vec::new(),
            }
        } else {
            paths
                .iter()
                .filter(|p| **p == candidate)
                .map(String::as_str)
                .collect()
        };
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// `a/./b/../c` → `a/c`.
fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

fn is_cuda_source(path: &str) -> bool {
    path.ends_with(".cu") || path.ends_with(".cuh")
}

/// A named source or pattern that can stand for CUDA files (`k.cu`,
/// `csrc/*.cu`, `csrc/*`).
fn may_name_cuda(named: &str) -> bool {
    is_cuda_source(named) || named.ends_with('*')
}

fn join(first: &str, second: &str) -> String {
    match (first.is_empty(), second.is_empty()) {
        (true, _) => second.to_owned(),
        (false, true) => first.to_owned(),
        (false, false) => format!("{first} {second}"),
    }
}

/// `third_party.csv`.
pub fn third_party_csv(records: &[ThirdPartyRecord]) -> Result<String, ReportError> {
    let header = [
        "file",
        "line",
        "column",
        "package",
        "pip",
        "used",
        "status",
        "alternative",
        "operators",
        "note",
        "source",
        "operators_source",
    ];
    csv_records(&header, records)
}

/// `custom_ops.csv`.
pub fn custom_ops_csv(records: &[CustomOpRecord]) -> Result<String, ReportError> {
    let header = [
        "file",
        "line",
        "extension",
        "builder",
        "source",
        "kernel",
        "kernel_line",
        "skeleton",
        "operator",
        "note",
    ];
    csv_records(&header, records)
}

/// `advice.csv`.
pub fn advice_csv(records: &[AdviceRecord]) -> Result<String, ReportError> {
    let header = [
        "file",
        "line",
        "column",
        "id",
        "kind",
        "trigger",
        "advice",
        "operators",
        "source",
        "operators_source",
    ];
    csv_records(&header, records)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The header a table writes names the record's fields in order.
    fn header_matches<T: Serialize>(csv: &str, record: &T) {
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.serialize(record).unwrap();
        let with_header = String::from_utf8(writer.into_inner().unwrap()).unwrap();
        assert_eq!(csv.lines().next(), with_header.lines().next());
    }

    #[test]
    fn headers_name_the_fields_in_order() {
        let op = CustomOpRecord {
            file: "setup.py".into(),
            line: 3,
            extension: "e".into(),
            builder: "b".into(),
            source: "k.cu".into(),
            kernel: "k".into(),
            kernel_line: 1,
            skeleton: String::new(),
            operator: String::new(),
            note: String::new(),
        };
        header_matches(&custom_ops_csv(std::slice::from_ref(&op)).unwrap(), &op);
        let advice = AdviceRecord {
            file: "a.py".into(),
            line: 1,
            column: 2,
            id: "fp64".into(),
            kind: AdviceKind::Precision,
            trigger: "torch.float64".into(),
            advice: "a".into(),
            operators: String::new(),
            source: "s".into(),
            operators_source: String::new(),
        };
        let csv = advice_csv(std::slice::from_ref(&advice)).unwrap();
        header_matches(&csv, &advice);
        assert!(
            csv.ends_with("a.py,1,2,fp64,precision,torch.float64,a,,s,\n"),
            "{csv}"
        );
        let package = ThirdPartyRecord {
            file: "a.py".into(),
            line: 1,
            column: 1,
            package: "apex".into(),
            pip: "apex".into(),
            used: "apex.amp".into(),
            status: PackageStatus::Partial,
            alternative: "x".into(),
            operators: "aclnnRmsNorm".into(),
            note: "n".into(),
            source: "s".into(),
            operators_source: "o".into(),
        };
        header_matches(
            &third_party_csv(std::slice::from_ref(&package)).unwrap(),
            &package,
        );
        assert!(advice_csv(&[]).unwrap().starts_with("file,line,column,id,"));
    }
}
