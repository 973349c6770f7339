//! Ported programs run: the HIP ports of the fixture programs, built with
//! g++ against AMD's HIP-CPU runtime (a header-only C++17 HIP on the CPU,
//! github.com/ROCm/HIP-CPU with its `external/` folder, plus Debian's
//! `libtbb-dev`) and executed; each must exit 0 and print its own success.
//!
//! Runs only when `HIP_CPU_ROOT` names such a checkout (CI cannot fetch it)
//! and says loudly that it skipped otherwise. The launches are ported with
//! `--hip-kernel-launch ggl`: `<<<>>>` is not C++. The same run over public
//! code is `tests/corpus/corpus_check.py --mode hip-cpu` (README).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fixtures_root, migrate_dir, write_output};
use cuport_model::Target;
use cuport_rewrite::{HipLaunch, MigrateOptions};

/// A fixture program: its directory, the sources of the program and what it
/// prints when its checks hold.
struct Program {
    fixture: &'static str,
    sources: &'static [&'static str],
    success: &'static str,
}

const PROGRAMS: &[Program] = &[Program {
    fixture: "self_check",
    sources: &["self_check.cu"],
    success: "self_check: PASSED",
}];

/// Fixture programs HIP-CPU cannot run, and why: what they use is ROCm's,
/// not HIP-CPU's (checked by hand; listed so the gap is visible).
const OUT_OF_REACH: &[(&str, &str)] = &[
    ("dual_traps", "its launch has #if lines inside the arguments, which a hipLaunchKernelGGL macro call cannot carry: the port keeps the chevron launch with CP0029 (hipcc compiles it), and HIP-CPU builds only the macro form"),
    ("vector_add", "destroys an event right after hipStreamWaitEvent on it (legal in CUDA and ROCm); HIP-CPU frees it while the stream still waits: segmentation fault"),
    ("reduction", "cooperative groups and warp *_sync intrinsics: HIP-CPU has neither"),
    ("cmake_project", "hipBLAS and stream priorities: not part of HIP-CPU"),
    ("project_names", "hipBLAS: not part of HIP-CPU"),
    ("cublas_gemm", "hipBLAS: not part of HIP-CPU"),
    ("nccl_allreduce", "RCCL: not part of HIP-CPU"),
    ("header_lib", "hip/hip_math_constants.h: not part of HIP-CPU"),
    ("simt_kernels", "warp *_sync intrinsics, cuRAND's device API and CUB: HIP-CPU has none of them"),
];

fn hip_cpu_root() -> Option<PathBuf> {
    let root = PathBuf::from(std::env::var_os("HIP_CPU_ROOT")?);
    let usable = root.join("include/hip/hip_runtime.h").is_file()
        && root.join("external/half/half.hpp").is_file();
    assert!(
        usable,
        "HIP_CPU_ROOT={} is not a HIP-CPU checkout with its external/ folder (include/hip/hip_runtime.h, external/half/half.hpp)",
        root.display()
    );
    Some(root)
}

fn prelude() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/hip_cpu_prelude.h")
}

/// Builds the ported `program` in `dir` (its ported copy) and runs it; its
/// output.
fn build_and_run(hip_cpu: &Path, dir: &Path, program: &Program) -> String {
    let exe = dir.join("program.exe");
    let build = Command::new("g++")
        .args(["-std=c++17", "-O1", "-include"])
        .arg(prelude())
        .arg(format!("-I{}", dir.display()))
        .arg(format!("-I{}", hip_cpu.join("include").display()))
        .arg("-xc++")
        .args(program.sources.iter().map(|s| dir.join(s)))
        .args(["-xnone", "-ltbb", "-lpthread", "-o"])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "{}: the HIP port does not build on HIP-CPU:\n{}",
        program.fixture,
        String::from_utf8_lossy(&build.stderr)
    );
    let run = Command::new(&exe).current_dir(dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "{}: the HIP port ran and failed ({}):\n{stdout}{}",
        program.fixture,
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    stdout
}

#[test]
fn hip_ports_of_the_fixture_programs_run_on_hip_cpu() {
    let Some(hip_cpu) = hip_cpu_root() else {
        eprintln!(
            "\n!!! SKIPPED: HIP_CPU_ROOT is not set; the ported fixture programs were not run (see tests/corpus/README.md) !!!\n"
        );
        return;
    };
    let mut options = MigrateOptions::new(Target::Hip);
    options.hip_launch = HipLaunch::Ggl;
    for program in PROGRAMS {
        let migration = migrate_dir(&fixtures_root().join(program.fixture), &options);
        let out = write_output(&migration);
        let stdout = build_and_run(&hip_cpu, &out.path().join("tree"), program);
        assert!(
            stdout.contains(program.success),
            "{}: no {:?} in its output:\n{stdout}",
            program.fixture,
            program.success
        );
        eprintln!("{}: built on HIP-CPU and passed", program.fixture);
    }
    for (fixture, why) in OUT_OF_REACH {
        eprintln!("{fixture}: not run on HIP-CPU: {why}");
    }
}

#[test]
fn every_fixture_program_is_run_or_says_why_not() {
    let listed: Vec<&str> = PROGRAMS
        .iter()
        .map(|p| p.fixture)
        .chain(OUT_OF_REACH.iter().map(|(f, _)| *f))
        .collect();
    for dir in common::fixture_dirs() {
        let has_cuda_main = common::walk(&dir).iter().any(|p| {
            p.extension().is_some_and(|e| e == "cu")
                && std::fs::read_to_string(p).is_ok_and(|t| t.contains("int main("))
        });
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if has_cuda_main {
            assert!(
                listed.contains(&name.as_str()),
                "fixture {name} has a CUDA program: run it in hip_cpu.rs or list why HIP-CPU cannot"
            );
        }
    }
}
