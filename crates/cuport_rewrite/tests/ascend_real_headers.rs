//! Ascend ports checked against the real AscendCL and HCCL headers, per
//! CANN release. The headers come from the torch-npu wheels on PyPI
//! (`tests/corpus/fetch_toolchains.sh` fetches them and sets
//! `CUPORT_ASCEND_INCLUDES_2_6_0` / `_2_14_0`; `.ci/run` does so in CI):
//! torch-npu 2.6.0 ships the headers it builds against for CANN 8.2.RC1,
//! torch-npu 2.14.0 those for CANN 9.1.0.
//!
//! - The tables' declarations agree with the real headers: every vendor
//!   function a row declares is redeclared after the real headers (g++
//!   rejects a C function declared twice with different types), every
//!   enumerator with a value is checked with `static_assert`.
//! - Every host-only C++ fixture, ported with `--cann-version` set to the
//!   release of the header set, and the generated helpers compile with
//!   `g++ -std=c++17 -fsyntax-only`, 0 errors.
//!
//! What the real headers cannot check: no registry package ships the aclnn
//! operator headers (`aclnn/acl_meta.h`, `aclnnop/aclnn_*.h`), so rows that
//! name those headers are declared from the tables (stand-ins, listed in
//! the output). The torch-npu 2.6.0 headers are a subset of CANN 8.2.RC1's
//! (`HcclGetRankSize` is documented since CANN 7.0 but not in them): names
//! the rows hold for that release but the subset lacks are declared from
//! the tables too, and listed; for the newest set that list must be empty.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use cuport_model::{SdkVersion, Target};
use cuport_rewrite::{Level, MigrateOptions};

/// One set of real headers and the CANN release it stands for.
struct HeaderSet {
    label: &'static str,
    cann: &'static str,
    dirs: Vec<PathBuf>,
    /// Every header's text, for telling which names the set declares.
    words: BTreeSet<String>,
}

const SETS: &[(&str, &str, &str)] = &[
    ("torch-npu 2.6.0", "8.2.RC1", "CUPORT_ASCEND_INCLUDES_2_6_0"),
    ("torch-npu 2.14.0", "9.1.0", "CUPORT_ASCEND_INCLUDES_2_14_0"),
];

/// The configured header sets, or none (skipped loudly) outside CI.
fn header_sets() -> Vec<HeaderSet> {
    let mut sets = Vec::new();
    for &(label, cann, var) in SETS {
        let Ok(value) = std::env::var(var) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "{var} is required in CI (.ci/run runs tests/corpus/fetch_toolchains.sh)"
            );
            eprintln!("\n!!! SKIPPED {label}: {var} is not set (eval \"$(tests/corpus/fetch_toolchains.sh --no-cuda)\") !!!\n");
            continue;
        };
        let dirs: Vec<PathBuf> = value
            .split(':')
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .collect();
        let words = header_words(&dirs);
        sets.push(HeaderSet {
            label,
            cann,
            dirs,
            words,
        });
    }
    sets
}

/// The identifiers in the ACL and HCCL headers of `dirs`.
fn header_words(dirs: &[PathBuf]) -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    for dir in dirs {
        for sub in ["acl", "hccl"] {
            for path in walk(&dir.join(sub))
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "h"))
            {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                words.extend(
                    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .filter(|w| !w.is_empty())
                        .map(str::to_owned),
                );
            }
        }
    }
    words
}

impl HeaderSet {
    fn has_file(&self, header: &str) -> bool {
        self.dirs.iter().any(|d| d.join(header).is_file())
    }

    fn declares(&self, name: &str) -> bool {
        self.words.contains(name)
    }

    fn include_flags(&self) -> Vec<String> {
        self.dirs
            .iter()
            .map(|d| format!("-I{}", d.display()))
            .collect()
    }

    fn version(&self) -> SdkVersion {
        SdkVersion::parse(self.cann).unwrap()
    }
}

/// Stand-ins for the headers the rows name that the set does not ship.
fn stand_ins(set: &HeaderSet) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let mut written = Vec::new();
    for header in rules().declaring_headers(Target::Ascend) {
        if set.has_file(header) {
            continue;
        }
        let path = dir.path().join(header);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, rules().stand_in_header(Target::Ascend, header)).unwrap();
        written.push(header.to_owned());
    }
    (dir, written)
}

/// Whether a vendor row is checked against the set's real headers (its
/// header is one the set ships, or it names none: the file's ACL/HCCL ones).
fn in_real_headers(set: &HeaderSet, name: &str) -> bool {
    rules()
        .declaring_header(Target::Ascend, name)
        .is_none_or(|h| set.has_file(h))
}

fn gxx(source: &Path, flags: &[String]) -> (bool, String) {
    let output = Command::new("g++")
        .args([
            "-std=c++17",
            "-fsyntax-only",
            "-Wno-deprecated-declarations",
        ])
        .args(flags)
        .arg(source)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `NAME = VALUE` enumerators with a numeric value (positions otherwise).
fn enumerators(values: &[String]) -> Vec<(String, i64)> {
    let mut next = 0i64;
    let mut out = Vec::new();
    for value in values {
        let (name, number) = match value.split_once('=') {
            Some((n, v)) => {
                let v = v.trim();
                let parsed = v
                    .strip_prefix("0x")
                    .map_or_else(|| v.parse().ok(), |hex| i64::from_str_radix(hex, 16).ok());
                (n.trim(), parsed)
            }
            None => (value.trim(), Some(next)),
        };
        if let Some(number) = number {
            out.push((name.to_owned(), number));
            next = number + 1;
        }
    }
    out
}

#[test]
fn the_tables_agree_with_the_real_headers() {
    let sets = header_sets();
    if sets.is_empty() || !require("g++") {
        return;
    }
    let rules = rules();
    for set in &sets {
        let mut source = String::from("#include <acl/acl.h>\n#include <hccl/hccl.h>\n");
        let mut checked = 0;
        let mut absent = Vec::new();
        for sig in rules.vendor_functions(Target::Ascend) {
            if !in_real_headers(set, &sig.name) {
                continue;
            }
            if !set.declares(&sig.name) {
                absent.push(sig.name.clone());
                continue;
            }
            source.push_str(&c_declaration(sig));
            checked += 1;
        }
        for (enum_name, values) in rules.target_enums(Target::Ascend) {
            if enum_name.starts_with("cuport_") || !in_real_headers(set, enum_name) {
                continue;
            }
            for (name, value) in enumerators(values) {
                if set.declares(&name) {
                    let _ = writeln!(source, "static_assert(static_cast<long long>({name}) == {value}LL, \"{name} is {value} in the tables\");");
                    checked += 1;
                } else {
                    absent.push(name);
                }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tables.cpp");
        std::fs::write(&path, &source).unwrap();
        let (ok, stderr) = gxx(&path, &set.include_flags());
        assert!(
            ok,
            "{}: the tables disagree with the real headers:\n{stderr}",
            set.label
        );
        eprintln!("{}: {checked} declarations agree with the real headers; not in this header set: {absent:?}", set.label);
        if set.cann == SETS[SETS.len() - 1].1 {
            assert!(
                absent.is_empty(),
                "{}: rows name ACL/HCCL items the newest headers lack: {absent:?}",
                set.label
            );
        }
    }
}

/// `extern "C" RET NAME(PARAMS);` for a table signature.
fn c_declaration(sig: &cuport_rules::Signature) -> String {
    let params = if sig.params.is_empty() {
        "void".to_owned()
    } else {
        sig.params.join(", ")
    };
    format!("extern \"C\" {} {}({params});\n", sig.returns, sig.name)
}

/// Declarations, from the tables, of the ACL/HCCL names the rows hold for
/// the set's release that the set's header copy lacks (the torch-npu
/// subset); forced in before the port with `-include`.
fn supplement(set: &HeaderSet) -> (String, Vec<String>) {
    let rules = rules();
    let mut text = String::from("#include <acl/acl.h>\n#include <hccl/hccl.h>\n");
    let mut names = Vec::new();
    for sig in rules.vendor_functions(Target::Ascend) {
        // A row whose types the copy lacks too cannot be declared here (and
        // a port that used it would fail: none of the fixtures does).
        let types_known = vendor_identifiers(&sig.returns)
            .chain(sig.params.iter().flat_map(|p| vendor_identifiers(p)))
            .all(|word| word == sig.name || set.declares(word));
        if in_real_headers(set, &sig.name) && !set.declares(&sig.name) && types_known {
            text.push_str(&c_declaration(sig));
            names.push(sig.name.clone());
        }
    }
    for (enum_name, values) in rules.target_enums(Target::Ascend) {
        if enum_name.starts_with("cuport_")
            || !in_real_headers(set, enum_name)
            || !set.declares(enum_name)
        {
            continue;
        }
        for (name, value) in enumerators(values) {
            if !set.declares(&name) {
                let _ = writeln!(text, "#define {name} (({enum_name})({value}))");
                names.push(name);
            }
        }
    }
    (text, names)
}

/// How the files of one port compiled.
#[derive(Default)]
struct Outcome {
    /// Headers declared from the tables because no package ships them.
    stood_in: Vec<String>,
    /// ACL/HCCL names the rows hold that the header copy lacks.
    supplemented: Vec<String>,
    compiled: Vec<String>,
    /// Not compiling, every error at a site flagged for a person.
    flagged: Vec<String>,
    /// Errors at sites cuport did not flag.
    failures: Vec<String>,
}

/// Ports every fixture with `options` and compiles its host-only C++ files
/// and generated helper sources against `set` (with `defines`).
fn compile_fixtures(set: &HeaderSet, options: &MigrateOptions, defines: &[&str]) -> Outcome {
    let (stand_in_dir, stood_in) = stand_ins(set);
    let (supplement_text, supplemented) = supplement(set);
    let supplement_path = stand_in_dir.path().join("cuport_supplement.h");
    std::fs::write(&supplement_path, supplement_text).unwrap();
    let mut outcome = Outcome {
        stood_in,
        supplemented,
        ..Outcome::default()
    };
    for dir in fixture_dirs() {
        let fixture = dir.file_name().unwrap().to_string_lossy().into_owned();
        let migration = migrate_dir(&dir, options);
        let out = write_output(&migration);
        let root = out.path().join("tree");
        let mut sources: Vec<String> = migration
            .files
            .iter()
            .filter(|f| f.path.ends_with(".cpp") && !includes_torch(&f.result.output))
            .map(|f| f.path.clone())
            .collect();
        sources.extend(
            migration
                .generated
                .iter()
                .filter(|g| g.path.ends_with(".cpp"))
                .map(|g| g.path.clone()),
        );
        for file in sources {
            let mut flags: Vec<String> = defines.iter().map(|d| format!("-D{d}")).collect();
            flags.extend([
                format!("-I{}", stand_in_dir.path().display()),
                "-include".to_owned(),
                supplement_path.display().to_string(),
            ]);
            flags.extend(set.include_flags());
            flags.extend(include_dirs(&root));
            let path = root.join(&file);
            let (ok, stderr) = gxx(&path, &flags);
            let name = format!("{fixture}/{file}");
            if ok {
                outcome.compiled.push(name);
                continue;
            }
            let flagged = migration
                .files
                .iter()
                .find(|f| f.path == file)
                .map(flagged_for_a_person)
                .unwrap_or_default();
            let unflagged = unflagged_errors(&stderr, &path, &flagged);
            if unflagged.is_empty() {
                outcome.flagged.push(name);
            } else {
                outcome.failures.push(format!(
                    "{name}: errors at sites cuport did not flag: {unflagged:?}\n{stderr}"
                ));
            }
        }
    }
    outcome
}

/// The assertions both modes share: nothing fails to compile with any
/// release; the newest headers lack no name; the helpers were compiled.
fn check(set: &HeaderSet, mode: &str, outcome: &Outcome, helpers: &str) {
    let (stood_in, supplemented) = (&outcome.stood_in, &outcome.supplemented);
    eprintln!(
        "{mode}, {} (CANN {}): {} files compiled with g++ -fsyntax-only: {:?}\n  stand-ins from the tables (no package ships them): {stood_in:?}\n  declared from the tables (rows hold them, this header copy lacks them): {supplemented:?}\n  not compiling, every error at a site flagged for a person: {:?}",
        set.label,
        set.cann,
        outcome.compiled.len(),
        outcome.compiled,
        outcome.flagged
    );
    assert!(
        outcome.failures.is_empty(),
        "{mode}, {} (CANN {}): ports that do not compile against the real headers:\n{}",
        set.label,
        set.cann,
        outcome.failures.join("\n")
    );
    // Every release: a name the release lacks has an older form (CANN 8.2's
    // missing group calls become HCCL_SUCCESS), so nothing fails at all.
    assert!(
        outcome.flagged.is_empty(),
        "{mode}, {} (CANN {}): every host-only fixture must compile: {:?}",
        set.label,
        set.cann,
        outcome.flagged
    );
    if set.cann == SETS[SETS.len() - 1].1 {
        assert!(
            supplemented.is_empty(),
            "{}: names missing from the newest headers: {supplemented:?}",
            set.label
        );
    }
    assert!(
        outcome.compiled.iter().any(|n| n.ends_with(helpers)),
        "{mode}: the helpers ({helpers}) were not compiled"
    );
}

#[test]
fn ported_host_code_and_helpers_compile_against_the_real_headers() {
    let sets = header_sets();
    if sets.is_empty() || !require("g++") {
        return;
    }
    for set in &sets {
        let mut options = MigrateOptions::new(Target::Ascend);
        options.sdk_versions.insert(Target::Ascend, set.version());
        let outcome = compile_fixtures(set, &options, &[]);
        check(set, "--to ascend", &outcome, "cuport_ascend_helpers.cpp");
    }
}

/// The Ascend path of a dual-stack tree (`-DCUPORT_BACKEND_ASCEND`): the
/// same host-only files through the cuport/ shim headers, and the helpers
/// under cuport/.
#[test]
fn the_dual_stack_ascend_path_compiles_against_the_real_headers() {
    let sets = header_sets();
    if sets.is_empty() || !require("g++") {
        return;
    }
    for set in &sets {
        let mut options = MigrateOptions::new(Target::Ascend);
        options.mode = cuport_rewrite::Mode::Dual(vec![Target::Ascend, Target::Hip]);
        options.sdk_versions.insert(Target::Ascend, set.version());
        let outcome = compile_fixtures(set, &options, &["CUPORT_BACKEND_ASCEND"]);
        check(
            set,
            "--dual --to ascend,hip",
            &outcome,
            "cuport/ascend_helpers.cpp",
        );
    }
}

/// The CUDA names cuport left for a person in `file` (manual or
/// unsupported diagnostics: CP0016 for a name the release lacks, ...).
fn flagged_for_a_person(file: &cuport_rewrite::MigratedFile) -> Vec<String> {
    file.result
        .diagnostics
        .iter()
        .filter(|d| matches!(d.level, Level::Manual | Level::Unsupported))
        .map(|d| d.cuda_name.clone())
        .collect()
}

/// g++'s errors in `path` whose line names none of the flagged names.
fn unflagged_errors(stderr: &str, path: &Path, flagged: &[String]) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let prefix = format!("{}:", path.display());
    stderr
        .lines()
        .filter(|l| l.contains(": error:"))
        .filter_map(|l| {
            let line: usize = l.strip_prefix(&prefix)?.split(':').next()?.parse().ok()?;
            let source = lines.get(line.checked_sub(1)?)?;
            (!flagged.iter().any(|name| source.contains(name.as_str()))).then(|| l.to_owned())
        })
        .collect()
}

/// The ACL/HCCL identifiers in a C declaration fragment.
fn vendor_identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| {
            w.starts_with("acl")
                || w.starts_with("Hccl")
                || w.starts_with("ACL_")
                || w.starts_with("HCCL_")
        })
}

/// PyTorch C++ extensions need torch's headers, which this check does not have.
fn includes_torch(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    text.lines().any(|l| {
        l.trim_start().starts_with("#include")
            && (l.contains("torch/") || l.contains("ATen/") || l.contains("c10/"))
    })
}
