//! Ascend ports checked against the real headers of every CANN release
//! cuport checks (8.5.0, 9.0.0, 9.1.0): AscendCL, aclnn base and the
//! ops-math/ops-nn operator headers of each release tag, and the untagged
//! ops-transformer operator headers, from the CANN header archive
//! (`../shared/vendor`, `$CUPORT_CANN_VENDOR`; where each release's
//! headers lie is `[vendor-headers]` in `mappings/ascend/target.toml`).
//! HCCL's `hccl.h`/`hccl_types.h` are not in CANN's open repositories: they
//! come from the torch-npu 2.14.0 wheel (CANN 9.1.0;
//! `tests/corpus/fetch_toolchains.sh` sets `CUPORT_CANN_2_14_0_INCLUDE`) for
//! every release.
//!
//! - The tables' declarations agree with the real headers: every vendor
//!   function a row declares is redeclared after the real headers (g++
//!   rejects a C function declared twice with different types), every
//!   enumerator with a value is checked with `static_assert`.
//! - Every host-only C++ fixture, ported with `--cann-version` set to the
//!   release, and the generated helpers compile with
//!   `g++ -std=c++17 -fsyntax-only`, 0 errors. Nothing is declared from the
//!   tables: a name a port writes that the release's headers lack fails.
//!   Which names each release declares, against every row and its
//!   `target-version`, is `cuport rules check-headers`
//!   (`crates/cuport_rules/tests/vendor_facts.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use cuport_model::{SdkVersion, Target};
use cuport_rewrite::{Level, MigrateOptions};
use cuport_rules::vendor_headers::{HeaderFacts, VendorHeaders};

/// The profile's header-only helpers (`[shim] headers`), which no generated
/// source includes: each is compiled on its own.
fn is_header_only_helper(path: &str) -> bool {
    Target::Ascend
        .profile()
        .shim
        .headers
        .iter()
        .any(|name| path == format!("cuport_{name}"))
}

/// One release's real headers.
struct HeaderSet {
    cann: SdkVersion,
    dirs: Vec<PathBuf>,
    facts: HeaderFacts,
}

/// The releases every check runs for (the archive must hold each).
const RELEASES: [&str; 3] = ["8.5.0", "9.0.0", "9.1.0"];

/// Every release of the archive, with the untagged operator headers and
/// HCCL of the torch-npu 2.14.0 wheel; none (skipped loudly) outside CI.
fn header_sets() -> Vec<HeaderSet> {
    let Some(root) = simt::cann_vendor() else {
        return Vec::new();
    };
    let Ok(wheel) = std::env::var("CUPORT_CANN_2_14_0_INCLUDE") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CUPORT_CANN_2_14_0_INCLUDE is required in CI (.ci/run runs tests/corpus/fetch_toolchains.sh)"
        );
        eprintln!("\n!!! SKIPPED: CUPORT_CANN_2_14_0_INCLUDE is not set (HCCL headers; eval \"$(tests/corpus/fetch_toolchains.sh --no-cuda)\") !!!\n");
        return Vec::new();
    };
    // hccl.h includes "third_party/hccl/inc/hccl/hccl_types.h" from the
    // wheel's include root; ACL resolves to the release's own first.
    let hccl = [
        PathBuf::from(&wheel).join("third_party/hccl/inc"),
        PathBuf::from(&wheel),
    ];
    let headers = VendorHeaders::discover(Target::Ascend, Some(&root), &[]).unwrap();
    let found: Vec<String> = headers
        .releases
        .iter()
        .map(|r| r.release.to_string())
        .collect();
    for wanted in RELEASES {
        assert!(
            found.iter().any(|r| r == wanted),
            "the archive lacks CANN {wanted}: {found:?}"
        );
    }
    headers
        .releases
        .iter()
        .map(|r| {
            let mut dirs = r.dirs.clone();
            dirs.extend(headers.untagged_dirs.iter().cloned());
            dirs.extend(hccl.iter().cloned());
            HeaderSet {
                cann: r.release,
                facts: HeaderFacts::scan(&dirs).unwrap(),
                dirs,
            }
        })
        .collect()
}

impl HeaderSet {
    fn declares(&self, name: &str) -> bool {
        self.facts.declares(name)
    }

    fn include_flags(&self) -> Vec<String> {
        self.dirs
            .iter()
            .map(|d| format!("-I{}", d.display()))
            .collect()
    }
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

/// The includes that declare every table row's name: the runtime, HCCL and
/// each operator header a row names.
fn table_includes() -> String {
    let mut text = String::from("#include <acl/acl.h>\n#include <hccl/hccl.h>\n");
    for header in rules().declaring_headers(Target::Ascend) {
        let _ = writeln!(text, "#include <{header}>");
    }
    text
}

#[test]
fn the_tables_agree_with_the_real_headers() {
    let sets = header_sets();
    if sets.is_empty() || !require("g++") {
        return;
    }
    let rules = rules();
    for set in &sets {
        let mut source = table_includes();
        let mut checked = 0;
        // Which release lacks which row, and whether a rule that applies
        // there writes it, is `cuport rules check-headers`
        // (vendor_facts.rs); here only what the release declares.
        let mut absent = Vec::new();
        for sig in rules.vendor_functions(Target::Ascend) {
            if !set.declares(&sig.name) {
                absent.push(sig.name.clone());
                continue;
            }
            source.push_str(&c_declaration(sig));
            checked += 1;
        }
        for (enum_name, values) in rules.target_enums(Target::Ascend) {
            if enum_name.starts_with("cuport_") {
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
            "CANN {}: the tables disagree with the real headers:\n{stderr}",
            set.cann
        );
        eprintln!(
            "CANN {}: {checked} declarations agree with the real headers; not in them: {absent:?}",
            set.cann
        );
        assert!(
            checked > 150,
            "CANN {}: only {checked} declarations checked",
            set.cann
        );
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

/// How the files of one port compiled.
#[derive(Default)]
struct Outcome {
    compiled: Vec<String>,
    /// Not compiling, every error at a site flagged for a person.
    flagged: Vec<String>,
    /// Errors at sites cuport did not flag.
    failures: Vec<String>,
}

/// Ports every fixture with `options` and compiles its host-only C++ files
/// and generated helper sources against `set` (with `defines`).
fn compile_fixtures(set: &HeaderSet, options: &MigrateOptions, defines: &[&str]) -> Outcome {
    compile_ports(&fixture_dirs(), set, options, defines)
}

/// [`compile_fixtures`] for the trees in `dirs`.
fn compile_ports(
    dirs: &[PathBuf],
    set: &HeaderSet,
    options: &MigrateOptions,
    defines: &[&str],
) -> Outcome {
    let mut outcome = Outcome::default();
    for dir in dirs {
        let fixture = dir.file_name().unwrap().to_string_lossy().into_owned();
        let migration = migrate_dir(dir, options);
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
                .filter(|g| g.path.ends_with(".cpp") || is_header_only_helper(&g.path))
                .map(|g| g.path.clone()),
        );
        for file in sources {
            let mut flags: Vec<String> = defines.iter().map(|d| format!("-D{d}")).collect();
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

/// Nothing fails to compile with any release, and the helpers were compiled.
fn check(set: &HeaderSet, mode: &str, outcome: &Outcome, helpers: &str) {
    eprintln!(
        "{mode}, CANN {}: {} files compiled with g++ -fsyntax-only: {:?}\n  not compiling, every error at a site flagged for a person: {:?}",
        set.cann,
        outcome.compiled.len(),
        outcome.compiled,
        outcome.flagged
    );
    assert!(
        outcome.failures.is_empty(),
        "{mode}, CANN {}: ports that do not compile against the real headers:\n{}",
        set.cann,
        outcome.failures.join("\n")
    );
    assert!(
        outcome.flagged.is_empty(),
        "{mode}, CANN {}: every host-only fixture must compile: {:?}",
        set.cann,
        outcome.flagged
    );
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
        options.sdk_versions.insert(Target::Ascend, set.cann);
        let outcome = compile_fixtures(set, &options, &[]);
        check(set, "--to ascend", &outcome, "cuport_ascend_helpers.cpp");
    }
}

/// `--ascend-blas aclblas`: cuBLAS and cuBLASLt become calls of CANN's
/// ops-blas (its untagged headers, `ops-blas/include` of the archive, with
/// each release's ACL headers). Every fixture and the cuBLAS/cuBLASLt test
/// tree (tests/ascend_blas: levels 1-3, Ex and batched GEMMs, cuBLASLt with
/// a bias epilogue) compiles, and so does the header-only cuport_aclblas.h.
#[test]
fn ops_blas_ports_compile_against_the_real_headers() {
    let sets = header_sets();
    if sets.is_empty() || !require("g++") {
        return;
    }
    let mut dirs = fixture_dirs();
    dirs.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ascend_blas"));
    for set in &sets {
        let mut options = MigrateOptions::new(Target::Ascend);
        options.flavours = cuport_rules::Flavour::Aclblas.into();
        options.sdk_versions.insert(Target::Ascend, set.cann);
        let outcome = compile_ports(&dirs, set, &options, &[]);
        check(
            set,
            "--to ascend --ascend-blas aclblas",
            &outcome,
            "cuport_aclblas.h",
        );
        assert!(
            outcome
                .compiled
                .iter()
                .any(|n| n == "ascend_blas/blas_calls.cpp"),
            "the cuBLAS test tree was not compiled: {:?}",
            outcome.compiled
        );
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
        options.sdk_versions.insert(Target::Ascend, set.cann);
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

/// PyTorch C++ extensions need torch's headers, which this check does not have.
fn includes_torch(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    text.lines().any(|l| {
        l.trim_start().starts_with("#include")
            && (l.contains("torch/") || l.contains("ATen/") || l.contains("c10/"))
    })
}
