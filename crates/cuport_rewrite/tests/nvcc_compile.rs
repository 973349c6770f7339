//! The CUDA path of a dual-stack tree, compiled by NVIDIA's real nvcc (from
//! the PyPI wheels; `tests/corpus/fetch_toolchains.sh` fetches them and sets
//! `CUPORT_NVCC` and `CUPORT_CUDA_INCLUDES`; `.ci/run` does so in CI):
//!
//! - every fixture source nvcc compiles as shipped also compiles from the
//!   dual-stack source, with `-DCUPORT_BACKEND_CUDA` and with no backend
//!   macro (the default); object files only, no GPU needed;
//! - the device code is the same. "Same" here means: the PTX nvcc emits
//!   (`-ptx -arch=sm_80`) for the original and for the dual-stack source is
//!   identical once comment lines are dropped (they name the input file and
//!   the compiler build) and the translation unit's hash that nvcc puts in
//!   internal-linkage names (`_INTERNAL_84baef0f_9_reduce_cu_...`: derived
//!   from the source text, so any edit changes it) is blanked. The
//!   dual-stack rewrite never renames device code, so no other name mapping
//!   is allowed for: a kernel, a device function or a constant that differs
//!   is a defect.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use cuport_model::Target;
use cuport_rewrite::MigrateOptions;

/// nvcc and the CUDA library include dirs, or `None` (skipped loudly) when
/// they are not configured outside CI.
fn toolchain() -> Option<(PathBuf, Vec<String>)> {
    let Some(nvcc) = std::env::var_os("CUPORT_NVCC").map(PathBuf::from) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CUPORT_NVCC is required in CI (.ci/run runs tests/corpus/fetch_toolchains.sh)"
        );
        eprintln!("\n!!! SKIPPED: CUPORT_NVCC is not set (eval \"$(tests/corpus/fetch_toolchains.sh --minimal)\"); nvcc did not run !!!\n");
        return None;
    };
    let includes = std::env::var("CUPORT_CUDA_INCLUDES")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| format!("-I{d}"))
        .collect();
    Some((nvcc, includes))
}

struct Nvcc {
    path: PathBuf,
    includes: Vec<String>,
}

impl Nvcc {
    /// Compiles `file` (under `root`) with `extra` flags; the output of a
    /// failure, or `Ok` with stdout.
    fn run(&self, root: &Path, file: &Path, extra: &[&str]) -> Result<String, String> {
        let out = tempfile::NamedTempFile::new().unwrap();
        let language = if file.extension().is_some_and(|e| e == "cu") {
            "cu"
        } else {
            "c++"
        };
        let output = Command::new(&self.path)
            .args(["-std=c++17", "-arch=sm_80", "-x", language])
            .args(extra)
            .args(include_dirs(root))
            .args(&self.includes)
            .arg("-o")
            .arg(out.path())
            .arg(file)
            .output()
            .unwrap();
        if output.status.success() {
            Ok(std::fs::read_to_string(out.path()).unwrap_or_default())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).into_owned())
        }
    }
}

/// PTX without its comment lines (file names, compiler build) and with
/// the translation unit's hash in internal names blanked.
fn device_code(ptx: &str) -> String {
    ptx.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(blank_unit_hashes)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `_INTERNAL_84baef0f_` / `__N__84baef0f_` → `_INTERNAL_########_`.
fn blank_unit_hashes(line: &str) -> String {
    let mut out = line.to_owned();
    for marker in ["_INTERNAL_", "__N__"] {
        let mut from = 0;
        while let Some(at) = out[from..].find(marker) {
            let start = from + at + marker.len();
            let hash_len = out[start..]
                .bytes()
                .take_while(u8::is_ascii_hexdigit)
                .count();
            if hash_len == 8 {
                out.replace_range(start..start + 8, "########");
            }
            from = start;
        }
    }
    out
}

#[test]
fn unit_hashes_are_blanked_and_nothing_else() {
    let a =
        "_ZN39_INTERNAL_84baef0f_9_reduce_cu_1d6416e54cuda3std3__441_GLOBAL__N__84baef0f_9_ignoreE";
    let b =
        "_ZN39_INTERNAL_f784b4d1_9_reduce_cu_1d6416e54cuda3std3__441_GLOBAL__N__f784b4d1_9_ignoreE";
    assert_eq!(blank_unit_hashes(a), blank_unit_hashes(b));
    assert_ne!(
        blank_unit_hashes("ld.global.f32 %f1, [%rd1];"),
        blank_unit_hashes("ld.global.f32 %f2, [%rd1];")
    );
}

fn c_family(path: &str) -> bool {
    [".cu", ".cpp", ".cc"].iter().any(|e| path.ends_with(e))
}

#[test]
fn the_dual_cuda_path_compiles_wherever_the_original_does_with_the_same_device_code() {
    let Some((path, includes)) = toolchain() else {
        return;
    };
    let nvcc = Nvcc { path, includes };
    let mut options = MigrateOptions::new(Target::Ascend);
    options.mode = cuport_rewrite::Mode::Dual(vec![
        Target::Ascend,
        Target::Hip,
        Target::Musa,
        Target::Mlu,
        Target::Maca,
    ]);
    let root = fixtures_root();
    let migration = migrate_dir(&root, &options);
    let out = write_output(&migration);
    let ported = out.path().join("tree");
    let files: Vec<String> = migration
        .files
        .iter()
        .map(|f| f.path.clone())
        .filter(|p| c_family(p))
        .collect();
    let results: Vec<(String, Vec<String>)> = std::thread::scope(|scope| {
        let chunks: Vec<&[String]> = files.chunks(files.len().div_ceil(2).max(1)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let (nvcc, root, ported) = (&nvcc, &root, &ported);
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|rel| (rel.clone(), check_file(nvcc, root, ported, rel)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let compiled = results.iter().filter(|(_, p)| p.is_empty()).count();
    let problems: Vec<String> = results
        .iter()
        .flat_map(|(rel, p)| p.iter().map(move |p| format!("{rel}: {p}")))
        .collect();
    eprintln!(
        "nvcc: {compiled} of {} fixture sources checked clean",
        files.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert!(
        compiled >= 5,
        "too few fixture sources compiled with nvcc: {compiled}"
    );
}

/// What is wrong with one file's dual-stack CUDA path (nothing when the
/// original does not compile with nvcc either: there is nothing to keep).
fn check_file(nvcc: &Nvcc, root: &Path, ported: &Path, rel: &str) -> Vec<String> {
    let original = root.join(rel);
    if nvcc.run(root, &original, &["-c"]).is_err() {
        return Vec::new();
    }
    let dual = ported.join(rel);
    let mut problems = Vec::new();
    for macros in [&[][..], &["-DCUPORT_BACKEND_CUDA"][..]] {
        let flags: Vec<&str> = std::iter::once("-c")
            .chain(macros.iter().copied())
            .collect();
        if let Err(stderr) = nvcc.run(ported, &dual, &flags) {
            problems.push(format!(
                "the original compiles, the dual-stack source ({}) does not:\n{stderr}",
                if macros.is_empty() {
                    "default backend"
                } else {
                    macros[0]
                }
            ));
        }
    }
    if rel.ends_with(".cu") && problems.is_empty() {
        let before = nvcc
            .run(root, &original, &["-ptx"])
            .map(|p| device_code(&p));
        let after = nvcc.run(ported, &dual, &["-ptx"]).map(|p| device_code(&p));
        if before != after {
            problems.push("the PTX differs from the original's (see the definition of same device code in this file)".to_owned());
        }
    }
    problems
}
