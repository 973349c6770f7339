//! The dual-stack output of the fixtures builds for each backend:
//!
//! - HIP: Debian's real `hipcc -fsyntax-only -DCUPORT_BACKEND_HIP`;
//! - Ascend: `g++ -fsyntax-only -DCUPORT_BACKEND_ASCEND` against the vendor
//!   declarations cuport generates from the tables (no CANN here), with the
//!   host-only fixtures in [`ASCEND_CLEAN`] free of any error;
//! - CUDA (no nvcc here): after preprocessing with stub system headers, the
//!   dual source is token for token the original, so the CUDA build is
//!   unchanged by construction.
//!
//! Anything a compiler rejects must be a place cuport flagged or an include
//! of a header Debian does not package; errors inside the generated shim
//! are bugs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use cuport_model::Target;
use cuport_rewrite::{portable_name, Level, MigrateOptions, Migration};

/// Fixtures whose Ascend path must compile with no error at all.
const ASCEND_CLEAN: &[&str] = &[
    "vector_add/vector_add.cu",
    "cmake_project/src/util.cpp",
    "cudnn_conv/conv.cpp",
    "nccl_allreduce/allreduce.cu",
];

/// The dual-stack port of the fixtures, made for the installed HIP (the
/// shim's HIP branch includes the headers of that release).
fn dual_tree(targets: &[Target]) -> (Migration, tempfile::TempDir) {
    let mut options = for_installed_hip(MigrateOptions::new(targets[0]));
    options.mode = cuport_rewrite::Mode::Dual(targets.to_vec());
    let migration = migrate_dir(&fixtures_root(), &options);
    let out = tempfile::tempdir().unwrap();
    migration
        .write_copy(out.path(), &cuport_rewrite::RenamePlan::default())
        .unwrap();
    (migration, out)
}

fn c_sources(migration: &Migration) -> Vec<&cuport_rewrite::MigratedFile> {
    migration
        .files
        .iter()
        .filter(|f| f.path.ends_with(".cu") || f.path.ends_with(".cpp"))
        .collect()
}

/// `-I` for every directory of the fixture that holds `file`.
fn fixture_include_dirs(root: &Path, file: &str) -> Vec<String> {
    include_dirs(&root.join(file.split('/').next().unwrap_or("")))
}

/// One compiler diagnostic: `(file, line, message)`.
fn errors(stderr: &str) -> Vec<(PathBuf, usize, String)> {
    stderr
        .lines()
        .filter(|l| l.contains(" error: ") || l.contains(" fatal error: "))
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let file = PathBuf::from(parts.next()?);
            let line = parts.next()?.parse().ok()?;
            Some((file, line, l.to_owned()))
        })
        .collect()
}

/// What a compiler run over the dual output showed.
#[derive(Default)]
struct Verdict {
    clean: BTreeSet<String>,
    unverifiable: Vec<String>,
    unexplained: Vec<String>,
}

impl Verdict {
    fn judge(
        &mut self,
        migration: &Migration,
        root: &Path,
        target: Target,
        file: &str,
        stderr: &str,
    ) {
        let found = errors(stderr);
        if found.is_empty() {
            self.clean.insert(file.to_owned());
            return;
        }
        for (path, line, message) in found {
            let path = if path.is_absolute() {
                path
            } else {
                root.join(path)
            };
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let source = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
            if source.contains("#include") && NOT_PACKAGED.iter().any(|h| source.contains(h)) {
                self.unverifiable.push(format!("{file}: {}", source.trim()));
                break;
            }
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            if !explained(migration, target, &rel, &text, line) {
                self.unexplained.push(format!("{file}: {message}"));
            }
        }
    }
}

/// An error on (or next to) a line holding a name cuport flagged for
/// `target`, in its CUDA or portable spelling.
fn explained(migration: &Migration, target: Target, rel: &str, text: &str, line: usize) -> bool {
    let Some(file) = migration.files.iter().find(|f| f.path == rel) else {
        return false;
    };
    let lines: Vec<&str> = text.lines().collect();
    let nearby =
        lines[line.saturating_sub(3).min(lines.len())..(line + 1).min(lines.len())].join("\n");
    let target_id = target.id();
    file.result
        .diagnostics
        .iter()
        .filter(|d| d.level >= Level::Manual || d.message.contains(target_id))
        .any(|d| {
            let short = d.cuda_name.rsplit("::").next().unwrap_or(&d.cuda_name);
            nearby.contains(short) || portable_name(short).is_some_and(|p| nearby.contains(&p))
        })
}

#[test]
fn the_hip_path_compiles_with_hipcc_or_the_failure_was_flagged() {
    if !require("hipcc") {
        return;
    }
    let (migration, out) = dual_tree(&[Target::Ascend, Target::Hip]);
    let mut verdict = Verdict::default();
    for file in c_sources(&migration)
        .into_iter()
        .filter(|f| f.path.ends_with(".cu"))
    {
        let output = Command::new("hipcc")
            .args([
                "-fsyntax-only",
                "--offload-arch=gfx90a",
                "-DCUPORT_BACKEND_HIP",
            ])
            .args(fixture_include_dirs(out.path(), &file.path))
            .arg(out.path().join(&file.path))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        verdict.judge(&migration, out.path(), Target::Hip, &file.path, &stderr);
    }
    report("hipcc", &verdict);
    assert!(
        verdict.unexplained.is_empty(),
        "hipcc rejected lines cuport did not flag:\n{}",
        verdict.unexplained.join("\n")
    );
    assert!(
        verdict.clean.contains("vector_add/vector_add.cu"),
        "{:?}",
        verdict.clean
    );
}

fn report(compiler: &str, verdict: &Verdict) {
    eprintln!("{compiler}: compiled cleanly: {:?}", verdict.clean);
    for note in &verdict.unverifiable {
        eprintln!("!!! not checkable here (header Debian does not package): {note}");
    }
}

/// Stub vendor headers: each Ascend header the shim includes declares
/// everything the tables record (`cuport rules declarations --vendor-only`).
/// They live under `include/`, as in a toolkit (`ASCEND_TOOLKIT_HOME`).
fn ascend_stubs(migration: &Migration) -> tempfile::TempDir {
    let toolkit = tempfile::tempdir().unwrap();
    let stubs = toolkit.path().join("include");
    std::fs::create_dir_all(&stubs).unwrap();
    let declarations = rules().vendor_declarations_header(Target::Ascend);
    std::fs::write(stubs.join("cuport_ascend_vendor.h"), declarations).unwrap();
    let mut headers = BTreeSet::new();
    for file in &migration.generated {
        for line in file.text.lines() {
            if let Some(name) = line
                .strip_prefix("#include <")
                .and_then(|l| l.strip_suffix('>'))
            {
                headers.insert(name.to_owned());
            }
        }
    }
    for header in headers
        .iter()
        .filter(|h| h.starts_with("acl") || h.starts_with("hccl"))
    {
        let path = stubs.join(header);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "#include <cuport_ascend_vendor.h>\n").unwrap();
    }
    toolkit
}

#[test]
fn the_ascend_path_compiles_against_the_declarations_or_the_failure_was_flagged() {
    if !require("g++") {
        return;
    }
    let (migration, out) = dual_tree(&[Target::Ascend, Target::Hip]);
    let stubs = ascend_stubs(&migration);
    let mut verdict = Verdict::default();
    for file in c_sources(&migration) {
        let output = Command::new("g++")
            .args([
                "-std=c++17",
                "-fsyntax-only",
                "-x",
                "c++",
                "-DCUPORT_BACKEND_ASCEND",
            ])
            .arg(format!("-I{}", stubs.path().join("include").display()))
            .args(fixture_include_dirs(out.path(), &file.path))
            .arg(out.path().join(&file.path))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        verdict.judge(&migration, out.path(), Target::Ascend, &file.path, &stderr);
        if ASCEND_CLEAN.contains(&file.path.as_str()) {
            assert!(
                output.status.success(),
                "{} must compile for Ascend:\n{stderr}",
                file.path
            );
        }
    }
    report("g++ (Ascend declarations)", &verdict);
    assert!(
        verdict.unexplained.is_empty(),
        "g++ rejected lines cuport did not flag:\n{}",
        verdict.unexplained.join("\n")
    );
}

/// Empty stand-ins for every `<system>` header the files include, so the
/// preprocessor output holds only the project's own tokens.
fn empty_system_headers(roots: &[&Path]) -> tempfile::TempDir {
    let stubs = tempfile::tempdir().unwrap();
    for root in roots {
        for path in walk(root).into_iter().filter(|p| p.is_file()) {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for line in text.lines() {
                let line = line.trim_start();
                let Some(name) = line
                    .strip_prefix("#include <")
                    .and_then(|l| l.split('>').next())
                else {
                    continue;
                };
                let stub = stubs.path().join(name);
                std::fs::create_dir_all(stub.parent().unwrap()).unwrap();
                std::fs::write(&stub, "").unwrap();
            }
        }
    }
    stubs
}

fn preprocessed(file: &Path, root: &Path, rel: &str, stubs: &Path) -> String {
    let output = Command::new("g++")
        .args(["-E", "-P", "-x", "c++", "-nostdinc", "-nostdinc++"])
        // Inserted lines shift __LINE__; the value is not what is compared.
        .args(["-Wno-builtin-macro-redefined", "-D__LINE__=0"])
        .arg(format!("-I{}", stubs.display()))
        .args(fixture_include_dirs(root, rel))
        .arg(file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    tokens_without_strings(&String::from_utf8_lossy(&output.stdout))
}

/// The text without whitespace and with string literals emptied: a
/// stringized macro argument (`#call` in an error macro) spells the
/// portable name, and `__FILE__`/`__LINE__` differ between the trees.
fn tokens_without_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                out.push(c);
                while let Some(inner) = chars.next() {
                    if inner == '\\' {
                        chars.next();
                    } else if inner == c {
                        break;
                    }
                }
                out.push(c);
            }
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

#[test]
fn the_cuda_path_preprocesses_to_the_original_tokens() {
    if !require("g++") {
        return;
    }
    let (migration, out) = dual_tree(&[Target::Ascend, Target::Hip, Target::Musa, Target::Mlu]);
    let root = fixtures_root();
    let stubs = empty_system_headers(&[&root, out.path()]);
    let mut compared = 0;
    for file in c_sources(&migration)
        .into_iter()
        .filter(|f| f.result.changed())
    {
        let original = preprocessed(&root.join(&file.path), &root, &file.path, stubs.path());
        let dual = preprocessed(
            &out.path().join(&file.path),
            out.path(),
            &file.path,
            stubs.path(),
        );
        assert!(original == dual, "{}: the CUDA path differs from the original after preprocessing:\noriginal: {original}\ndual:     {dual}", file.path);
        compared += 1;
    }
    assert!(compared >= 6, "only {compared} changed files compared");
}

/// `cuport/cuport.cmake` configures and builds the Ascend path of a fixture
/// (as object files: there is no CANN library to link here), with the
/// helpers compiled in, `.cu` built as C++ and the toolkit from
/// `ASCEND_TOOLKIT_HOME`.
#[test]
fn the_cmake_module_builds_the_ascend_path() {
    if !require("cmake") || !require("g++") {
        return;
    }
    let (migration, out) = dual_tree(&[Target::Ascend, Target::Hip]);
    let toolkit = ascend_stubs(&migration);
    let project = "cmake_minimum_required(VERSION 3.18)\nproject(check LANGUAGES CXX)\n\
        include(${CMAKE_SOURCE_DIR}/cuport/cuport.cmake)\n\
        add_library(check OBJECT vector_add/vector_add.cu nccl_allreduce/allreduce.cu)\n\
        set_target_properties(check PROPERTIES CXX_STANDARD 17)\ncuport_target(check)\n";
    std::fs::write(out.path().join("CMakeLists.txt"), project).unwrap();
    let build = out.path().join("build");
    let configure = Command::new("cmake")
        .arg("-S")
        .arg(out.path())
        .arg("-B")
        .arg(&build)
        .arg("-DCUPORT_BACKEND=ascend")
        .env("ASCEND_TOOLKIT_HOME", toolkit.path())
        .output()
        .unwrap();
    assert!(
        configure.status.success(),
        "cmake configure failed:\n{}{}",
        String::from_utf8_lossy(&configure.stdout),
        String::from_utf8_lossy(&configure.stderr)
    );
    let compile = Command::new("cmake")
        .arg("--build")
        .arg(&build)
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&compile.stdout),
        String::from_utf8_lossy(&compile.stderr)
    );
    assert!(compile.status.success(), "cmake --build failed:\n{log}");
    for object in ["vector_add.cu.o", "allreduce.cu.o", "ascend_helpers.cpp.o"] {
        assert!(
            log.contains(object.trim_end_matches(".o")),
            "{object} was not built:\n{log}"
        );
    }
}

/// An API a target does not support costs nothing until it is used; used,
/// the build stops with the API, the target and the tables' guidance.
#[test]
fn an_unsupported_api_fails_only_when_used_and_says_why() {
    if !require("g++") {
        return;
    }
    let (migration, out) = dual_tree(&[Target::Ascend, Target::Hip]);
    let toolkit = ascend_stubs(&migration);
    let compile = |name: &str, body: &str| {
        let path = out.path().join(name);
        std::fs::write(&path, format!("#include \"cuport/runtime.h\"\n{body}\n")).unwrap();
        Command::new("g++")
            .args(["-std=c++17", "-fsyntax-only", "-DCUPORT_BACKEND_ASCEND"])
            .arg(format!("-I{}", toolkit.path().join("include").display()))
            .arg(&path)
            .output()
            .unwrap()
    };
    let unused = compile(
        "unused.cpp",
        "int main() { void *p; return cuportMalloc(&p, 16); }",
    );
    assert!(
        unused.status.success(),
        "{}",
        String::from_utf8_lossy(&unused.stderr)
    );
    let used = compile(
        "used.cpp",
        "int main() { void *p; return cuportMallocManaged(&p, 16, 1); }",
    );
    let stderr = String::from_utf8_lossy(&used.stderr);
    assert!(!used.status.success());
    assert!(stderr.contains("cuportMallocManaged"), "{stderr}");
    assert!(
        stderr.contains("cudaMallocManaged needs a manual port on ascend"),
        "{stderr}"
    );
    assert!(stderr.contains("[CP2021]"), "{stderr}");
}

/// The project's own CMake files, rewritten to go through cuport.cmake,
/// configure for Ascend (CUDA language dropped from project(), the toolkit
/// search guarded, CUDA:: link items replaced by cuport_target).
#[test]
fn the_rewritten_project_cmake_configures_for_ascend() {
    if !require("cmake") {
        return;
    }
    let (migration, out) = dual_tree(&[Target::Ascend, Target::Hip]);
    let toolkit = ascend_stubs(&migration);
    let source = out.path().join("cmake_project");
    std::fs::create_dir_all(source.join("cuport")).unwrap();
    for file in migration
        .generated
        .iter()
        .filter(|f| f.path.starts_with("cuport/"))
    {
        std::fs::write(source.join(&file.path), &file.text).unwrap();
    }
    let lists = std::fs::read_to_string(source.join("CMakeLists.txt")).unwrap();
    assert!(lists.contains("LANGUAGES CXX)"), "{lists}");
    assert!(lists.contains("cuport_target(demo)"), "{lists}");
    let configure = Command::new("cmake")
        .arg("-S")
        .arg(&source)
        .arg("-B")
        .arg(out.path().join("build-cmake-project"))
        .args(["-DCUPORT_BACKEND=ascend", "-DUSE_CUDA=OFF"])
        .env("ASCEND_TOOLKIT_HOME", toolkit.path())
        .output()
        .unwrap();
    assert!(
        configure.status.success(),
        "{}{}",
        String::from_utf8_lossy(&configure.stdout),
        String::from_utf8_lossy(&configure.stderr)
    );
}
