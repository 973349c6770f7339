//! CMake source lists made by `file(GLOB ...)` on HIP (issue 29): a glob of
//! `.cu` files gets `LANGUAGE HIP` as `.cu` files named one by one do; the
//! `.cu` patterns of a glob that also matches other files are globbed again
//! into a list of their own, which is marked; a glob of paths `RELATIVE` to
//! another directory is reported on its line (CP1093). The fixture
//! (`tests/cmake_glob/`) is configured and built with CMake's HIP language
//! where cmake and hipcc are installed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::path::Path;

use common::migrate_dir;
use cuport_model::{Code, Target};
use cuport_rewrite::{Level, MigrateOptions, Migration};

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cmake_glob")
}

fn cmake_file<'m>(migration: &'m Migration, path: &str) -> &'m cuport_rewrite::MigratedFile {
    migration.files.iter().find(|f| f.path == path).unwrap()
}

/// Ports one CMakeLists.txt holding `cmake` (and an empty `k.cu`).
fn port(cmake: &str) -> (String, Vec<cuport_rewrite::Diagnostic>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CMakeLists.txt"), cmake).unwrap();
    std::fs::write(dir.path().join("k.cu"), "__global__ void k() {}\n").unwrap();
    let migration = migrate_dir(dir.path(), &MigrateOptions::new(Target::Hip));
    let file = cmake_file(&migration, "CMakeLists.txt");
    (
        String::from_utf8_lossy(&file.result.output).into_owned(),
        file.result.diagnostics.clone(),
    )
}

fn glob_reports(diagnostics: &[cuport_rewrite::Diagnostic]) -> Vec<u32> {
    diagnostics
        .iter()
        .filter(|d| d.code == Code::from_literal("CP1093"))
        .map(|d| d.line)
        .collect()
}

#[test]
fn a_glob_of_cu_files_is_marked_hip_once() {
    let cmake =
        "project(p LANGUAGES CXX CUDA)\nfile(GLOB SRCS *.cu)\nadd_executable(app ${SRCS})\n";
    let (out, diagnostics) = port(cmake);
    assert_eq!(
        out,
        "project(p LANGUAGES CXX HIP)\nfile(GLOB SRCS *.cu)\nset_source_files_properties(${SRCS} PROPERTIES LANGUAGE HIP)\nadd_executable(app ${SRCS})\n"
    );
    assert!(glob_reports(&diagnostics).is_empty(), "{diagnostics:#?}");
    // A second run finds the mark and adds nothing.
    let (again, _) = port(&out);
    assert_eq!(again, out);
}

#[test]
fn an_indented_recursive_glob_keeps_its_indent() {
    let cmake =
        "if(ON)\n  file(GLOB_RECURSE KERNELS LIST_DIRECTORIES false \"src/*.cu\")\nendif()\n";
    let (out, _) = port(cmake);
    assert!(
        out.contains("  file(GLOB_RECURSE KERNELS LIST_DIRECTORIES false \"src/*.cu\")\n  set_source_files_properties(${KERNELS} PROPERTIES LANGUAGE HIP)\nendif()"),
        "{out}"
    );
}

/// CX9898/cmake-cuda-sample's glob: `.cpp`, `.c` and `.cu` files in one
/// list, which the port compiled as C++ and C only.
#[test]
fn a_mixed_glob_gets_a_marked_list_of_its_cu_files() {
    let cmake = "file(GLOB SRC_FILES \"${SRC_DIR}/*.cpp\" \"${SRC_DIR}/*.c\" \"${SRC_DIR}/*.cu\")\nadd_executable(demo ${SRC_FILES})\n";
    let (out, diagnostics) = port(cmake);
    assert_eq!(
        out,
        "file(GLOB SRC_FILES \"${SRC_DIR}/*.cpp\" \"${SRC_DIR}/*.c\" \"${SRC_DIR}/*.cu\")\nfile(GLOB SRC_FILES_CU \"${SRC_DIR}/*.cu\")\nset_source_files_properties(${SRC_FILES_CU} PROPERTIES LANGUAGE HIP)\nadd_executable(demo ${SRC_FILES})\n"
    );
    assert!(glob_reports(&diagnostics).is_empty(), "{diagnostics:#?}");
    let (again, diagnostics) = port(&out);
    assert_eq!(again, out);
    assert!(glob_reports(&diagnostics).is_empty(), "{diagnostics:#?}");
}

#[test]
fn relative_globs_and_taken_names_are_reported_not_marked() {
    let cmake = "file(GLOB REL RELATIVE ${CMAKE_SOURCE_DIR} *.cu)\nset(ALL_CU x)\nfile(GLOB ALL *.cpp *.cu)\nfile(GLOB DATA *.bin)\n";
    let (out, diagnostics) = port(cmake);
    assert_eq!(out, cmake);
    assert_eq!(glob_reports(&diagnostics), vec![1, 3], "{diagnostics:#?}");
    for d in diagnostics
        .iter()
        .filter(|d| d.code == Code::from_literal("CP1093"))
    {
        assert_eq!(d.level, Level::Manual);
        assert_eq!(d.column, 1);
        assert!(
            d.suggestion
                .as_deref()
                .is_some_and(|s| s.contains("PROPERTIES LANGUAGE HIP")),
            "{d:#?}"
        );
    }
}

#[test]
fn globs_on_other_targets_are_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let cmake = "file(GLOB SRCS *.cu)\nfile(GLOB MIXED *.cu *.h)\n";
    std::fs::write(dir.path().join("CMakeLists.txt"), cmake).unwrap();
    let migration = migrate_dir(dir.path(), &MigrateOptions::new(Target::Musa));
    let file = cmake_file(&migration, "CMakeLists.txt");
    assert_eq!(String::from_utf8_lossy(&file.result.output), cmake);
    assert!(glob_reports(&file.result.diagnostics).is_empty());
}

/// The fixture's port: the `.cu` glob marked, the mixed glob reported; where
/// cmake and hipcc are installed it configures with CMake's HIP language
/// and builds (the globbed `.cu` files compiled as HIP, the `.cpp` as C++).
#[test]
fn the_globbed_fixture_builds_with_cmakes_hip_language() {
    let mut options = MigrateOptions::new(Target::Hip);
    options.gpu_architectures = vec!["gfx90a".into()];
    let migration = migrate_dir(&fixture(), &options);
    let file = cmake_file(&migration, "CMakeLists.txt");
    let ported = String::from_utf8_lossy(&file.result.output).into_owned();
    assert!(
        ported.contains("file(GLOB KERNELS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cu)\nset_source_files_properties(${KERNELS} PROPERTIES LANGUAGE HIP)\nfile(GLOB HOST src/*.cpp)\n"),
        "{ported}"
    );
    assert!(
        ported.contains("file(GLOB_RECURSE TOOL_SOURCES tools/*.cu tools/*.cuh)\nfile(GLOB_RECURSE TOOL_SOURCES_CU tools/*.cu)\nset_source_files_properties(${TOOL_SOURCES_CU} PROPERTIES LANGUAGE HIP)\n"),
        "{ported}"
    );
    assert!(!ported.contains("${HOST} PROPERTIES"), "{ported}");
    assert!(glob_reports(&file.result.diagnostics).is_empty());
    let out = common::write_output(&migration);
    let tree = out.path().join("tree");
    if !common::require("cmake") || !common::require("hipcc") {
        return;
    }
    let build = out.path().join("build");
    let mut configure = std::process::Command::new("cmake");
    configure.arg("-S").arg(&tree).arg("-B").arg(&build);
    common::scratch_in(&mut configure, out.path());
    // Debian splits ROCm over /usr: as in hip_review.rs's CMake build, a
    // root with the one link CMake's HIP language looks for stands in.
    let debian = Path::new("/usr/lib/x86_64-linux-gnu/cmake/hip-lang");
    if debian.is_dir() {
        let root = out.path().join("rocm");
        std::fs::create_dir_all(root.join("lib/cmake")).unwrap();
        std::os::unix::fs::symlink(debian, root.join("lib/cmake/hip-lang")).unwrap();
        configure
            .env("CMAKE_PREFIX_PATH", "/usr/lib/x86_64-linux-gnu/cmake")
            .arg(format!("-DCMAKE_HIP_COMPILER_ROCM_ROOT={}", root.display()))
            .arg("-DCMAKE_HIP_COMPILER=clang++-15")
            .arg("-DCMAKE_HIP_FLAGS=--rocm-path=/usr --hip-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
    }
    common::run_ok(&mut configure);
    common::run_ok(common::scratch_in(
        std::process::Command::new("cmake")
            .arg("--build")
            .arg(&build)
            .arg("--verbose"),
        out.path(),
    ));
    assert!(build.join("globbed").is_file());
    // The .cu objects were compiled as HIP (their flags say so).
    let flags = std::fs::read_to_string(build.join("CMakeFiles/globbed.dir/flags.make")).unwrap();
    assert!(
        flags.contains("HIP_FLAGS") && flags.contains("CXX_FLAGS"),
        "{flags}"
    );
}
