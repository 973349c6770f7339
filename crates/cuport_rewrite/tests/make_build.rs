//! Makefiles that build with nvcc, ported to HIP (issue 29, item 4): the
//! compiler, nvcc's options, link libraries and CUDA paths in their ROCm
//! forms, `.cu` rules kept; other targets and dual-stack runs report every
//! site with a code. The fixture (fixtures/make_project, in the form of
//! the classic CUDA samples Makefiles and llm.c's) is built with `make`
//! and Debian's hipcc.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use common::{fixtures_root, migrate_dir};
use cuport_model::Target;
use cuport_rewrite::{FileMigration, Level, MigrateOptions};

fn hip(architectures: &[&str]) -> MigrateOptions {
    let mut options = MigrateOptions::new(Target::Hip);
    options.gpu_architectures = architectures.iter().map(|a| (*a).to_owned()).collect();
    options
}

/// Ports `makefile` as the `Makefile` of a tree.
fn port(makefile: &str, options: &MigrateOptions) -> FileMigration {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Makefile"), makefile).unwrap();
    migrate_dir(dir.path(), options)
        .files
        .into_iter()
        .find(|f| f.path == "Makefile")
        .map(|f| f.result)
        .unwrap()
}

fn output(migration: &FileMigration) -> String {
    String::from_utf8_lossy(&migration.output).into_owned()
}

#[test]
fn nvcc_options_libraries_and_paths_take_their_rocm_forms() {
    let makefile = "NVCC ?= /usr/local/cuda-12.4/bin/nvcc\nNVCC_FLAGS = --threads=0 -t 4 --use_fast_math -arch=sm_80 -gencode arch=compute_90,code=sm_90 -Xcompiler=-fopenmp,-Wall\nNVCC_LDFLAGS = -L$(CUDA_HOME)/lib64 -lcublas -lcublasLt -lcudart\n%: %.cu\n\t$(NVCC) $(NVCC_FLAGS) $< -o $@ $(NVCC_LDFLAGS)\n";
    let first = port(makefile, &hip(&["gfx90a", "gfx1100"]));
    assert_eq!(
        output(&first),
        "NVCC ?= /opt/rocm/bin/hipcc\nNVCC_FLAGS = -ffast-math --offload-arch=gfx90a --offload-arch=gfx1100 -fopenmp -Wall\nNVCC_LDFLAGS = -L$(CUDA_HOME)/lib -lhipblas -lhipblaslt -lamdhip64\n%: %.cu\n\t$(NVCC) $(NVCC_FLAGS) $< -o $@ $(NVCC_LDFLAGS)\n"
    );
    let approximate: Vec<&str> = first
        .diagnostics
        .iter()
        .filter(|d| d.level == Level::Approximate)
        .map(|d| d.cuda_name.as_str())
        .collect();
    assert_eq!(
        approximate,
        ["-arch", "-gencode"],
        "{:#?}",
        first.diagnostics
    );
    let again = port(&output(&first), &hip(&["gfx90a", "gfx1100"]));
    assert!(again.edits.is_empty(), "{:#?}", again.edits);
}

#[test]
fn the_architecture_default_is_the_profiles_and_said() {
    let ported = port("NVCCFLAGS = -arch sm_70 -O2\n", &hip(&[]));
    assert_eq!(
        output(&ported),
        "NVCCFLAGS = --offload-arch=gfx90a --offload-arch=gfx942 -O2\n"
    );
    let said = &ported.diagnostics[0].message;
    assert!(said.contains("--hip-arch"), "{said}");
}

#[test]
fn host_compiler_lines_keep_their_options() {
    let makefile =
        "NVCC := nvcc\nCXXFLAGS = -G -O2\nmain.o: main.cpp\n\t$(CXX) -arch x86_64 -c $< -o $@\n";
    let ported = port(makefile, &hip(&["gfx90a"]));
    assert_eq!(
        output(&ported),
        makefile.replace("NVCC := nvcc", "NVCC := hipcc")
    );
}

#[test]
fn other_targets_and_dual_stack_report_every_site() {
    let makefile = "NVCC := nvcc\nFLAGS := --use_fast_math -lcublas\n";
    for target in [Target::Ascend, Target::Musa, Target::Mlu, Target::Maca] {
        let ported = port(makefile, &MigrateOptions::new(target));
        let codes: Vec<String> = ported
            .diagnostics
            .iter()
            .map(|d| d.code.to_string())
            .collect();
        assert_eq!(
            codes, ["CP0034"; 3],
            "{target:?}: {:#?}",
            ported.diagnostics
        );
        assert_eq!(output(&ported), makefile, "{target:?}");
    }
    let mut dual = MigrateOptions::new(Target::Hip);
    dual.mode = cuport_rewrite::Mode::Dual(vec![Target::Hip, Target::Ascend]);
    let ported = port(makefile, &dual);
    assert_eq!(output(&ported), makefile);
    for name in ["nvcc", "--use_fast_math", "-lcublas"] {
        assert!(
            ported
                .diagnostics
                .iter()
                .any(|d| d.cuda_name == name && d.code == "CP0034"),
            "{name}: {:#?}",
            ported.diagnostics
        );
    }
}

/// The fixture's port builds with `make` and Debian's hipcc. Debian puts
/// ROCm under /usr, so the Makefile's own `CUDA_PATH ?=` is overridden on
/// the command line, as its users would.
#[test]
fn the_fixture_makefile_builds_with_hipcc() {
    let root = fixtures_root().join("make_project");
    let migration = migrate_dir(&root, &hip(&["gfx90a"]));
    let out = common::write_output(&migration);
    let tree = out.path().join("tree");
    let ported = std::fs::read_to_string(tree.join("Makefile")).unwrap();
    for expected in [
        "NVCC := $(CUDA_PATH)/bin/hipcc\n",
        "GENCODE_FLAGS += --offload-arch=gfx90a))",
        "NVCCFLAGS := -O3 -ffast-math -gline-tables-only -std=c++17\n",
        "LIBRARIES := -lhiprand -lamdhip64\n",
        "$(BUILD_DIR)/%.o: src/%.cu",
    ] {
        assert!(ported.contains(expected), "{expected}\n{ported}");
    }
    if !common::require("make") || !common::require("hipcc") {
        return;
    }
    common::run_ok(common::scratch_in(
        std::process::Command::new("make")
            .arg("CUDA_PATH=/usr")
            .current_dir(&tree),
        &tree,
    ));
    assert!(tree.join("build/scale").is_file());
}

/// `-ccbin#` (a fuzzing finding): the option ends at the comment. Deleting
/// the word with its `#` made the comment after it code, which a rerun then
/// ported.
#[test]
fn a_make_option_stops_at_a_comment() {
    let makefile = "NVCC := $(CUDA_PATH)/bin/nvcc -ccbin $(HOST_COMPILER)\n-ccbin# nvcc -G\n";
    let first = output(&port(makefile, &hip(&["gfx90a"])));
    assert!(first.contains("\n# nvcc -G"), "{first}");
    let second = port(&first, &hip(&["gfx90a"]));
    assert!(second.edits.is_empty(), "{:#?}", second.edits);
}
