//! Findings of the fuzz suite (`tests/fuzz.rs`), each minimised to the
//! smallest input that showed it and kept as a named test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::rules;
use cuport_analyze::{analyze_source, AnalyzeOptions};
use cuport_model::{Language, Target};
use cuport_rewrite::{migrate_file, FileMigration, MigrateOptions};

fn migrate(language: Language, src: &[u8], options: &MigrateOptions) -> FileMigration {
    let analysis = analyze_source(language, src, &AnalyzeOptions::default());
    migrate_file("", language, src, &analysis, rules(), options)
}

/// Migrates `src`, then the output again, and returns both results.
fn migrate_twice(
    language: Language,
    src: &[u8],
    options: &MigrateOptions,
) -> (FileMigration, FileMigration) {
    let first = migrate(language, src, options);
    let second = migrate(language, &first.output, options);
    (first, second)
}

/// The first run's output, after checking that a second run over it edits
/// nothing.
fn port_stably(language: Language, src: &[u8], options: &MigrateOptions) -> String {
    let (first, second) = migrate_twice(language, src, options);
    assert_second_run_edits_nothing(&second);
    String::from_utf8_lossy(&first.output).into_owned()
}

/// No edit of the first port writes into a directive line of `src` or
/// glues code onto one.
fn assert_keeps_directive_lines(src: &[u8], first: &FileMigration) {
    let violations = common::directive_line_violations(src, &first.edits);
    assert!(
        violations.is_empty(),
        "{:?}: {violations:#?}",
        String::from_utf8_lossy(src)
    );
}

/// A port that a second run leaves alone and that contains `expected`.
fn assert_stable_port_contains(
    language: Language,
    src: &[u8],
    options: &MigrateOptions,
    expected: &str,
) {
    let text = port_stably(language, src, options);
    assert!(text.contains(expected), "{text}");
}

/// Each CUDA `(source, expected end)` ports to that end without an edit
/// that joins a directive's lines, and a second run edits nothing.
fn assert_ports_end_with(options: &MigrateOptions, cases: &[(&str, &str)]) {
    for (src, expected) in cases {
        let (first, second) = migrate_twice(Language::Cuda, src.as_bytes(), options);
        let out = String::from_utf8_lossy(&first.output);
        assert!(out.ends_with(expected), "{out}");
        assert_keeps_directive_lines(src.as_bytes(), &first);
        assert_second_run_edits_nothing(&second);
    }
}

fn assert_second_run_edits_nothing(second: &FileMigration) {
    assert!(
        second.edits.is_empty(),
        "second run edited:\n{:#?}\n{}",
        second.edits,
        String::from_utf8_lossy(&second.output)
    );
}

/// Two diagnostics on one line stack two `--annotate` notes above it; a
/// rerun looked only at the line right above and added the other again.
#[test]
fn annotations_of_one_line_are_not_added_again() {
    let mut options = MigrateOptions::new(Target::Hip);
    options.annotate = true;
    let src = b"namespace cg=cooperative_groups;cg::tiled_partition<32";
    let (first, second) = migrate_twice(Language::Cuda, src, &options);
    let notes = String::from_utf8_lossy(&first.output)
        .matches("// CUPORT CP")
        .count();
    assert_eq!(notes, 2, "{}", String::from_utf8_lossy(&first.output));
    assert_second_run_edits_nothing(&second);
}

/// Dual-stack for a target whose kernels need a port writes the kernel
/// guard and then the `--annotate` note above the kernel; a rerun looked
/// for the guard on the line right above the kernel, found the note, and
/// guarded the kernel a second time.
#[test]
fn annotated_kernel_is_guarded_once() {
    for target in [Target::Mlu, Target::Ascend] {
        let mut options = MigrateOptions::new(target);
        options.mode = cuport_rewrite::Mode::Dual(vec![target]);
        options.annotate = true;
        for src in [
            &b"__global__ e(){}"[..],
            b"template <typename T>\n__global__ void k(T* x) { x[0] = 1; }\n",
        ] {
            assert_stable_port_contains(Language::Cuda, src, &options, "CUPORT_CUDA_KERNELS");
        }
    }
}

/// A Rust file syn cannot parse is searched for `cudarc::` by text; that
/// search counted the paths in comments and strings, including the
/// `--annotate` note naming the path, so every rerun stacked another note.
#[test]
fn cudarc_paths_in_comments_are_not_sites() {
    let src = concat!(
        "// old: cudarc::driver::result::init()\n",
        "/* cudarc::nvrtc /* nested */ cudarc::x */\n",
        "let s = \"// cudarc::in_a_string\"; let c = '\"';\n",
        "let r = r#\"cudarc::raw\"#; let r#type = 1;\n",
        "let ptx = cudarc::nvrtc::compile_ptx(SRC)?;\n",
    );
    let analysis = analyze_source(Language::Rust, src.as_bytes(), &AnalyzeOptions::default());
    let names: Vec<&str> = analysis.sites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["cudarc::nvrtc::compile_ptx"]);

    let mut options = MigrateOptions::new(Target::Hip);
    options.annotate = true;
    for src in [
        &b"let ptx = cudarc::nvrtc::compile_ptx(SRC)?;\n"[..],
        b"\"\ncudarc::",
    ] {
        port_stably(Language::Rust, src, &options);
    }
}

/// The first run writes a note above the line as it reads it; a rewrite of
/// that line into several (the dual-stack switch around a CUDA include,
/// two CMake commands for one) moved the noted text below other lines, and
/// a rerun, looking only right above it, wrote the note again.
#[test]
fn note_above_a_rewrite_that_adds_lines_is_not_repeated() {
    let cases: [(Language, &[u8], &[Target]); 4] = [
        (Language::Cuda, b"#include<cuda_fp16", &[Target::Mlu]),
        (
            Language::Cuda,
            b"#include <cuda_fp16.h>\n",
            &[Target::Ascend],
        ),
        (Language::Cuda, b"#include <cuda_fp16.h>\n", &Target::ALL),
        (
            Language::Cmake,
            b"enable_language(CUDA)nvcc",
            &[Target::Hip],
        ),
    ];
    for (language, src, targets) in cases {
        let mut options = MigrateOptions::new(targets[0]);
        options.mode = cuport_rewrite::Mode::Dual(targets.to_vec());
        options.annotate = true;
        let (first, second) = migrate_twice(language, src, &options);
        assert!(String::from_utf8_lossy(&first.output).contains("CUPORT CP"));
        assert_second_run_edits_nothing(&second);
    }
}

/// Dual-stack turns the string `"cuda"` into the name
/// `cuport_device.accelerator`; next to a keyword (`"cuda"if ok`, valid
/// Python) the two ran together into one name.
#[test]
fn python_literal_next_to_a_keyword_stays_apart() {
    let src = b"import torch\ndevice = \"cuda\"if ok else \"cpu\"\nnear = d in\"cuda:1\"\n";
    let options = MigrateOptions::dual_stack(vec![Target::Ascend]);
    let text = port_stably(Language::Python, src, &options);
    assert!(
        text.contains("device = cuport_device.accelerator if ok else \"cpu\"")
            && text.contains("near = d in f\"{cuport_device.accelerator}:1\""),
        "{text}"
    );
}

/// The added include goes below the file's opening comments; a `//` line
/// ending in a backslash continues the comment over the next line, where
/// the include was written and so commented out.
#[test]
fn header_is_not_added_inside_a_continued_comment() {
    let src = b"// built in C:\\cuda\\\ncontinued comment\ncudaMalloc(&p, n);\n";
    let text = port_stably(Language::Cuda, src, &MigrateOptions::new(Target::Hip));
    assert!(
        text.starts_with(
            "// built in C:\\cuda\\\ncontinued comment\n#include <hip/hip_runtime.h>\n"
        ),
        "{text}"
    );
}

/// A `.cu` file relies on nvcc for the runtime header. One that included
/// only a device header (`cuda_fp16.h`) was taken to include the runtime,
/// so the first run added none; the rerun saw the renamed header
/// (`musa_fp16.h`), which it does not know, and added it then.
#[test]
fn runtime_header_is_added_in_the_first_run_next_to_a_device_header() {
    let src = b"#include <cuda_fp16.h>\n__device__ int f(int* x) { return atomicAdd(x, 1); }\n";
    for (target, runtime) in [
        (Target::Musa, "#include <musa_runtime.h>"),
        (Target::Maca, "#include <mc_runtime.h>"),
    ] {
        assert_stable_port_contains(Language::Cuda, src, &MigrateOptions::new(target), runtime);
    }
}

/// `#include <cuda_fp16.h` cut off before its `>`: the rename took the
/// last byte of the name for the closing delimiter and wrote
/// `<hip/hip_fp16.hh`.
#[test]
fn unterminated_include_keeps_its_name_whole() {
    let first = migrate(
        Language::Cuda,
        b"#include <cuda_fp16.h",
        &MigrateOptions::new(Target::Hip),
    );
    let text = String::from_utf8_lossy(&first.output);
    assert!(text.ends_with("#include <hip/hip_fp16.h"), "{text}");
}

/// `--hip-kernel-launch ggl` rewrote the whole launch in one edit, which
/// overlapped the renames inside its arguments: they were dropped as
/// conflicts and the CUDA names stayed.
#[test]
fn ggl_launch_keeps_the_edits_in_its_arguments() {
    let mut options = MigrateOptions::new(Target::Hip);
    options.hip_launch = cuport_rewrite::HipLaunch::Ggl;
    let src =
        b"k<<<grid, block, 0, s>>>(d, CUBLAS_OP_T,\n    cudaMemcpyHostToDevice);\nk<<<1, 2>>>();\n";
    let (first, second) = migrate_twice(Language::Cuda, src, &options);
    assert_second_run_edits_nothing(&second);
    let text = String::from_utf8_lossy(&first.output);
    assert!(
        text.contains("hipLaunchKernelGGL(k, dim3(grid), dim3(block), 0, s, d, HIPBLAS_OP_T,\n    hipMemcpyHostToDevice);\nhipLaunchKernelGGL(k, dim3(1), dim3(2), 0, 0);\n"),
        "{text}"
    );
    assert!(first.diagnostics.iter().all(|d| d.code != "CP0040"));
}

/// The analyser reads `/**/#include <cuda_runtime.h>` as an include; the
/// check for headers already present did not, and a rerun added the
/// runtime header again.
#[test]
fn include_after_a_block_comment_counts_as_present() {
    let src = b"/**/#include <cuda_runtime.h>\n__global__ void k(int* x) { x[0] = __ldg(x); }\n";
    for target in [Target::Hip, Target::Musa] {
        port_stably(Language::Cuda, src, &MigrateOptions::new(target));
    }
}

/// The same for a CUDA name in the launch configuration (a stream handle).
#[test]
fn ggl_launch_keeps_the_edits_in_its_configuration() {
    let mut options = MigrateOptions::new(Target::Hip);
    options.hip_launch = cuport_rewrite::HipLaunch::Ggl;
    let src = b"k<float><<<g, b, 0,\n  cudaStreamPerThread>>>(x);\nk<<<g, b, smem>>>(x);\n";
    let text = port_stably(Language::Cuda, src, &options);
    assert!(
        text.contains("hipLaunchKernelGGL(HIP_KERNEL_NAME(k<float>), dim3(g), dim3(b), 0, hipStreamPerThread, x);\nhipLaunchKernelGGL(k, dim3(g), dim3(b), smem, 0, x);\n"),
        "{text}"
    );
}

/// After `from torch.cuda import amp`, the member name in `f().amp` was
/// taken for the imported `amp`: dual-stack writes
/// `cuport_device.module().amp.GradScaler()`, and the rerun reported (and
/// annotated) a `torch.cuda.amp` there.
#[test]
fn member_name_is_not_the_imported_name() {
    let src = b"import torch\nfrom torch.cuda import amp\ns = f().amp.GradScaler()\nt = amp.GradScaler()\n";
    let analysis = analyze_source(Language::Python, src, &AnalyzeOptions::default());
    let names: Vec<&str> = analysis.sites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["torch.cuda.amp", "torch.cuda.amp.GradScaler"]);

    let mut options = MigrateOptions::dual_stack(vec![Target::Ascend]);
    options.annotate = true;
    let src = b"from torch.cuda import amp\ns=torch.cuda.amp.GradScaler()";
    port_stably(Language::Python, src, &options);
}

/// Dual-stack writes a launch as `CUPORT_KERNEL_LAUNCH((k<T>), ...)`; the
/// kernel and its template arguments were copied as written, so a CUDA
/// name among them lost its portable spelling, which the rerun then wrote.
#[test]
fn launch_macro_keeps_the_edits_in_template_arguments() {
    let options = MigrateOptions::dual_stack(vec![Target::Ascend]);
    let src = b"k<cudaStream_t><<<1, 1>>>(x);\n";
    let text = port_stably(Language::Cuda, src, &options);
    assert!(
        text.contains("CUPORT_KERNEL_LAUNCH((k<cuportStream_t>), (1, 1), x);"),
        "{text}"
    );
}

/// A diagnosed name on the second line of a call that is rewritten as a
/// whole: its `--annotate` note went to the start of that line, inside the
/// call's edit, and was dropped as an edit conflict (CP0004); the rerun,
/// with the call on one line, wrote it.
#[test]
fn note_on_a_continuation_line_of_a_rewritten_call() {
    let mut options = MigrateOptions::new(Target::Ascend);
    options.annotate = true;
    for src in [
        &b"void f() {\n    cudaMemcpyAsync(d, h, n,\n        cudaMemcpyHostToDevice, pick(cudaStreamLegacy));\n}\n"[..],
        b"cudaMemcpyAsync(a,(),n,\ncudaMemcpyHostToDevice,m)__CUDACC_RTC__",
    ] {
        let (first, second) = migrate_twice(Language::Cuda, src, &options);
        assert!(
            first.diagnostics.iter().all(|d| d.code != "CP0004"),
            "{:#?}",
            first.diagnostics
        );
        assert!(String::from_utf8_lossy(&first.output).contains("// CUPORT CP0001"));
        assert_second_run_edits_nothing(&second);
    }
}

/// A `.cu` file whose only CUDA include is the driver header,
/// `cuda_runtime_api.h`, `cuComplex.h` or `device_functions.h` was taken to
/// have the runtime header: the first run added none, the rerun (which
/// does not know the renamed include) added it. In dual-stack mode the
/// rerun also switched `hip/device_functions.h`, the HIP branch of the
/// first run's switch, again.
#[test]
fn runtime_header_is_added_in_the_first_run_next_to_any_cuda_include() {
    let body = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n";
    let dual_hip = { MigrateOptions::dual_stack(vec![Target::Hip]) };
    for include in [
        "<cuda.h>",
        "<cuda_runtime_api.h>",
        "\"cuComplex.h\"",
        "\"device_functions.h\"",
    ] {
        let src = format!("#include {include}\n{body}");
        for options in [
            MigrateOptions::new(Target::Hip),
            MigrateOptions::new(Target::Musa),
            MigrateOptions::new(Target::Maca),
            dual_hip.clone(),
        ] {
            port_stably(Language::Cuda, src.as_bytes(), &options);
        }
    }
}

/// Dual-stack output includes cuport's shim headers, some named like a
/// CUDA library's (`cuport/nvml.h`); a rerun took such an include for
/// NVML's own header, listed it among the project's CUDA includes and made
/// the shim include itself.
#[test]
fn cuport_shim_include_is_not_a_cuda_include() {
    let src = b"#include \"cuport/nvml.h\"\n#include \"../cuport/blas.h\"\n#include <nvml.h>\n";
    let again = analyze_source(Language::Cpp, src, &AnalyzeOptions::default());
    let includes: Vec<&str> = again
        .sites
        .iter()
        .filter(|s| s.kind == cuport_model::SiteKind::Include)
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(includes, ["nvml.h"]);
}

/// A `.cu` file whose first include is cooperative groups gets the HIP
/// runtime header before it (nvcc put the runtime first). A rerun saw
/// `hip/hip_cooperative_groups.h` first again and added a second runtime
/// header above the first (corpus finding: cuda-samples reduction_kernel.cu
/// and six other CG samples, `cuport migrate --to hip` run twice).
#[test]
fn runtime_header_before_cooperative_groups_is_added_once() {
    let options = MigrateOptions::new(Target::Hip);
    let src = b"#include <cooperative_groups.h>\n#include <stdio.h>\nnamespace cg = cooperative_groups;\n__global__ void k(float* x) { cg::thread_block b = cg::this_thread_block(); b.sync(); }\n";
    let text = port_stably(Language::Cuda, src, &options);
    let runtime = text.find("#include <hip/hip_runtime.h>");
    let groups = text.find("#include <hip/hip_cooperative_groups.h>");
    assert!(runtime.is_some() && runtime < groups, "{text}");
}

/// CMake reruns: the package of `find_package` is its first argument and
/// the first argument of `project` is the project's name; the other words
/// in a CUDA command's arguments are scanned like any others. The first
/// run took `CUDA` anywhere in the arguments for the package (and skipped
/// the rest), so the rerun over `find_package(hip CUDA)` or
/// `find_package(MUSAToolkit CMAKE_CUDA_FLAGS)` found new sites.
#[test]
fn cmake_command_arguments_are_read_as_cmake_does() {
    let cases: [(&[u8], Target, bool); 6] = [
        (b"find_package(CUDAToolkit CUDA)", Target::Hip, true),
        (
            b"find_package(CUDAToolkit CMAKE_CUDA_FLAGS)",
            Target::Musa,
            false,
        ),
        (
            b"find_package(CUDAToolkit enable_language(CUDA)",
            Target::Hip,
            false,
        ),
        (b"\"\"project(CUDA\nCUDAToolkit)", Target::Hip, true),
        (b"\"\"project(CMAKE_CUDA CUDA)", Target::Hip, true),
        (b"project(CUDA\nCMAKE_CUDA_FLAGS)", Target::Hip, false),
    ];
    for (src, target, annotate) in cases {
        let mut options = MigrateOptions::new(target);
        options.annotate = annotate;
        port_stably(Language::Cmake, src, &options);
    }
    let analysis = analyze_source(
        Language::Cmake,
        b"project(CUDA LANGUAGES CXX)\nfind_package(Foo CUDA)\n",
        &AnalyzeOptions::default(),
    );
    let commands: Vec<&str> = analysis
        .sites
        .iter()
        .map(|s| s.name.as_str())
        .filter(|n| n.contains('('))
        .collect();
    assert!(commands.is_empty(), "{commands:?}");
}

/// Dual-stack: a CUDA include right after the project's own `#else` is
/// switched in the first run; only an `#else` after a target's branch of
/// cuport's switch marks the CUDA branch (the first run took any `#else`
/// for it and left the include to the rerun).
#[test]
fn include_after_a_projects_else_is_switched_once() {
    for target in [Target::Musa, Target::Maca] {
        let mut options = MigrateOptions::new(target);
        options.mode = cuport_rewrite::Mode::Dual(vec![target]);
        for src in [
            &b"#else\n#include <cuda_runtime.h>\n"[..],
            b"#else\n#include <cuda_runtime.h",
        ] {
            assert_stable_port_contains(Language::Cuda, src, &options, "CUPORT_BACKEND_");
        }
    }
}

/// Dual-stack records the project's CUDA includes in the shim header's
/// `cuport-uses` comment; an include cut off by the end of its line
/// (`#include <cuda_# notes ...`) was recorded with its spaces, read back by
/// the rerun as several words, and the shim changed on every run.
#[test]
fn broken_include_is_not_recorded_in_the_shim() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("CMakeLists.txt"),
        "project(demo LANGUAGES CXX CUDA)\n#include <cuda_# Traps: numbers (80 90) */ x\n",
    )
    .unwrap();
    std::fs::write(
        root.path().join("a.cu"),
        "#include <cuda_runtime.h>\nint main() { cudaDeviceSynchronize(); }\n#include <cublas_v2 is cut\n",
    )
    .unwrap();
    let options = MigrateOptions::dual_stack(vec![Target::Mlu]);
    let first = common::migrate_dir(root.path(), &options);
    let out = common::write_output(&first);
    let second = common::migrate_dir(&out.path().join("tree"), &options);
    for file in &first.generated {
        let again = second.generated.iter().find(|g| g.path == file.path);
        assert_eq!(again.map(|g| &g.text), Some(&file.text), "{}", file.path);
    }
}

/// Dual-stack CMake: `target_link_libraries(` never closed. The first run
/// found no end of the call and left it with a CP0040 note; the note's own
/// `)` then closed the call for the rerun, which rewrote it. A `)` inside a
/// comment or a quoted argument does not close a CMake call.
#[test]
fn cmake_call_left_open_is_not_closed_by_a_comment() {
    let mut options = MigrateOptions::dual_stack(vec![Target::Hip]);
    options.annotate = true;
    for src in [
        &b"target_link_libraries(CUDA::\nCUDA::cuda_driver"[..],
        b"target_link_libraries(app # linked (see below)\n  CUDA::cudart\n  \"a)\")\n",
    ] {
        port_stably(Language::Cmake, src, &options);
    }
}

/// Dual-stack for MLU with `--annotate`: the notes about a kernel go between
/// its `__global__` line and its name; a note naming `cuT__global__` was
/// taken for the qualifier by the rerun, which then guarded the kernel again.
#[test]
fn global_inside_a_longer_name_is_no_qualifier() {
    let mut options = MigrateOptions::dual_stack(vec![Target::Mlu]);
    options.annotate = true;
    port_stably(Language::Cuda, b"__global__\ns(cuT__global__){}", &options);
}

/// Dual-stack: an `#include` line ending in a backslash goes on over the
/// next line; the include switch written around that one line continued
/// into its own `#endif`. Such an include is kept and reported.
#[test]
fn include_continued_by_a_backslash_is_kept() {
    for target in [Target::Maca, Target::Hip] {
        let mut options = MigrateOptions::new(target);
        options.mode = cuport_rewrite::Mode::Dual(vec![target]);
        options.annotate = true;
        let (first, second) =
            migrate_twice(Language::Cuda, b"#include<cuda_runtime.h>\\\ncuE", &options);
        let text = String::from_utf8_lossy(&first.output);
        assert!(!text.contains("#endif"), "{text}");
        assert_second_run_edits_nothing(&second);
    }
}

/// CMake: `find_package(CUDAToolkit ()project(X CUDA))`. A word followed by
/// `(` inside a command's arguments is an argument (CMake has no nested
/// commands); read as a `project` command it became an edit that
/// conflicted with the enclosing call's in the first run only.
#[test]
fn cmake_word_inside_arguments_is_no_command() {
    let options = MigrateOptions::dual_stack(vec![Target::Maca]);
    port_stably(
        Language::Cmake,
        b"find_package(CUDAToolkit ()project(X CUDA))",
        &options,
    );
}

/// CMake: `find_package(CUDAToolkit#\ntarget_link_libraries(CUDA::))`: the
/// `#` comment ends at the line break and find_package's arguments go on,
/// so `target_link_libraries(CUDA::)` is an argument. The dual-stack link
/// rewrite took it for a command; in the first run its edit lost against
/// the find_package guard around it, in the second it applied.
#[test]
fn a_command_name_inside_arguments_is_not_rewritten() {
    let options = MigrateOptions::dual_stack(vec![Target::Maca]);
    port_stably(
        Language::Cmake,
        b"find_package(CUDAToolkit#\ntarget_link_libraries(CUDA::))",
        &options,
    );
}

/// Ascend with `--annotate`: two CP0001 names on one line got one note (the
/// first name's); the cudaMemcpy template writes its count argument twice,
/// so the other name came back on a line of its own and the rerun noted it.
#[test]
fn each_name_of_a_line_gets_its_note() {
    let mut options = MigrateOptions::new(Target::Ascend);
    options.annotate = true;
    let src =
        b"namespace cg=cooperative_groups;CUDA_K(cudaMemcpy(n,(),cg::()\nz,cudaMemcpyHostToDevice)";
    let text = port_stably(Language::Cuda, src, &options);
    assert!(
        text.contains("`CUDA_K`") && text.contains("`cooperative_groups`"),
        "{text}"
    );
}

/// CMake: a word at the end of a line is no command (CMake allows no line
/// break between a command's name and its `(`), and a word in a `#`
/// comment inside the arguments is no argument. Read otherwise, an
/// `--annotate` note or the comment's `CUDA` changed what a rerun saw.
#[test]
fn cmake_commands_and_arguments_follow_the_grammar() {
    for (src, annotate) in [
        (&b"K\n(project(S CUDA)"[..], true),
        (b"\"\"project(# CUDA CUDA\n)", false),
        (b"project(demo # with CUDA\n  LANGUAGES CXX CUDA)\n", true),
    ] {
        let mut options = MigrateOptions::new(Target::Hip);
        options.annotate = annotate;
        let (first, second) = migrate_twice(Language::Cmake, src, &options);
        assert!(
            !String::from_utf8_lossy(&first.output).contains("# HIP"),
            "{}",
            String::from_utf8_lossy(&first.output)
        );
        assert_second_run_edits_nothing(&second);
    }
}

/// A CMake file cut off right after `"${` (the fuzzer's shrink of a real
/// one): the scan of `${...}` inside strings sliced past the string's end
/// and panicked.
#[test]
fn cmake_string_cut_off_after_a_variable_opener() {
    let options = MigrateOptions::new(Target::Hip);
    for src in [
        &b"e(\"${"[..],
        b"set(X \"${\")",
        b"set(X \"$",
        b"f(\"${CMAKE_CUDA_FLAGS",
    ] {
        port_stably(Language::Cmake, src, &options);
    }
}

/// `project(p CUDA ... CUDA)`: only the first CUDA argument was the
/// command's site, so a rerun ported the second one.
#[test]
fn cmake_every_cuda_language_argument_is_ported_at_once() {
    let options = MigrateOptions::new(Target::Hip);
    let text = port_stably(Language::Cmake, b"project(() CUDA () CUDA)", &options);
    assert_eq!(text, "project(() HIP () HIP)");
}

/// A Rust file with a byte that is not UTF-8 before `cudarc::`: the
/// analyser read a lossy copy (three bytes per bad byte), so the site's
/// range ran past the end of the file.
#[test]
fn rust_file_with_invalid_utf8_keeps_its_offsets() {
    let options = MigrateOptions::new(Target::Hip);
    let src = b"\x80cudarc::";
    let (first, second) = migrate_twice(Language::Rust, src, &options);
    for diagnostic in &first.diagnostics {
        assert!(diagnostic.range.end <= src.len(), "{diagnostic:?}");
        assert_eq!(
            &src[diagnostic.range.start..diagnostic.range.end],
            b"cudarc::"
        );
    }
    assert_second_run_edits_nothing(&second);
}

/// `#ifndefX` / `#defineX` (no space) were taken for an include guard, and
/// the runtime header went after the last line, which had no line break:
/// `#defineMATHLIB_OPS_CUH#include <hip/hip_runtime.h>`.
#[test]
fn guard_directives_need_their_space() {
    let options = MigrateOptions::new(Target::Hip);
    let src = b"__half \n#ifndefMATHLIB_OPS_CUH\n#defineMATHLIB_OPS_CUH";
    let text = port_stably(Language::Cuda, src, &options);
    assert!(!text.contains("CUH#include"), "{text}");
    let guarded = b"__half \n#ifndef OPS_CUH\n#define OPS_CUH";
    let text = port_stably(Language::Cuda, guarded, &options);
    assert!(
        text.ends_with("#define OPS_CUH\n#include <hip/hip_runtime.h>\n"),
        "{text}"
    );
}

/// `""\` then `#ifdef __CUDACC__` on the next line: the backslash splices
/// the lines, so there is no directive; the dual-stack rewrite widened it
/// anyway, and the rerun then read the file differently.
#[test]
fn a_continued_line_is_no_directive() {
    let options = MigrateOptions::dual_stack(vec![Target::Maca]);
    let src = b"\"\"\\\n#ifdef __CUDACC__\ncuMemcpyAtoH_v2_ptds(";
    assert_stable_port_contains(Language::Cpp, src, &options, "\n#ifdef __CUDACC__\n");
}

/// A line that a backslash splices onto the one before is no directive, so
/// the runtime header must not go right after that line: it would be
/// spliced in instead, and the include below would become a directive.
#[test]
fn no_header_after_a_line_continued_by_a_backslash() {
    let options = MigrateOptions::new(Target::Hip);
    let src = b"  $<$<COMPILE_LANGUAGE:CUDA>: \\\n#include <cuda_runtime.h>\n  __syncthreads();\n";
    port_stably(Language::Cuda, src, &options);
}

/// A call whose arguments hold bytes that are not UTF-8 was rewritten by
/// its template with those arguments read as empty: `\x80` was lost, and
/// the directive line among them, unseen, was glued to the call's end.
#[test]
fn a_call_with_bytes_that_are_not_utf8_is_kept() {
    let options = MigrateOptions::new(Target::Ascend);
    for src in [
        &b"cudaEventCreateWithFlags(\x80,r\n#,\n))"[..],
        b"cudaEventCreateWithFlags(&e\x80, cudaEventDisableTiming);\n",
    ] {
        let (first, second) = migrate_twice(Language::Cuda, src, &options);
        assert_second_run_edits_nothing(&second);
        assert!(
            first.output.windows(src.len()).any(|w| w == src),
            "{}",
            String::from_utf8_lossy(&first.output)
        );
        assert!(
            first
                .diagnostics
                .iter()
                .any(|d| d.message.contains("not UTF-8")),
            "{:#?}",
            first.diagnostics
        );
    }
}

/// `/**/ code(` on the first line was read as a comment line, so the
/// runtime header went after it, into the code (and a launch there was
/// ported only by the second run).
#[test]
fn no_header_after_a_line_of_code_that_starts_with_a_comment() {
    let options = MigrateOptions::dual_stack(vec![Target::Mlu]);
    let src = "/**/\"\"(k<<<>>>()\n{\n#include<cuda";
    port_stably(Language::Cuda, src.as_bytes(), &options);
    let options = MigrateOptions::new(Target::Hip);
    for (src, expected) in [
        (
            "/* a */ __global__ void k() {}\n",
            "#include <hip/hip_runtime.h>\n/* a */ __global__",
        ),
        (
            "/* a\n */ __global__ void k() {}\n",
            "#include <hip/hip_runtime.h>\n/* a\n */ __global__",
        ),
        (
            "/* a */ /* b */\n__global__ void k() {}\n",
            "/* a */ /* b */\n#include <hip/hip_runtime.h>\n__global__",
        ),
    ] {
        assert_stable_port_contains(Language::Cuda, src.as_bytes(), &options, expected);
    }
}

/// A block comment opened after a kernel's closing brace held the
/// guard's `#endif` (so the dual source had an `#if` without one); one
/// closed on a kernel's first line held its `#if`. Such kernels are kept
/// with a diagnostic.
#[test]
fn no_kernel_guard_inside_a_comment() {
    let options = MigrateOptions::dual_stack(vec![Target::Mlu]);
    for src in [
        "__global__ void e(){}/*\n__global__ void d(){}",
        "__global__ void e(){} /* end of e\n */\n",
        "/* a kernel:\n */ __global__ void e(){}\n",
        "__global__ void e(){} \\\n\n",
    ] {
        let (first, _) = migrate_twice(Language::Cuda, src.as_bytes(), &options);
        assert_keeps_directive_lines(src.as_bytes(), &first);
        let text = port_stably(Language::Cuda, src.as_bytes(), &options);
        assert_eq!(
            text.matches("#if").count(),
            text.matches("#endif").count(),
            "{text}"
        );
        assert!(
            first.diagnostics.iter().any(|d| d.cuda_name == "e"),
            "{src:?}: {:#?}",
            first.diagnostics
        );
    }
}

/// `#pragma once \` goes on over the next line: the runtime header was
/// inserted after its first line, inside the directive.
#[test]
fn no_header_inside_a_continued_pragma_once() {
    let options = MigrateOptions::new(Target::Hip);
    let src = "#pragma once \\\n\n__global__";
    let (first, _) = migrate_twice(Language::Cuda, src.as_bytes(), &options);
    assert_keeps_directive_lines(src.as_bytes(), &first);
    let expected = "#pragma once \\\n\n#include <hip/hip_runtime.h>\n__global__";
    assert_stable_port_contains(Language::Cuda, src.as_bytes(), &options, expected);
}

/// `cuport: off` on the second line of a call that starts above it: the
/// call's rewrite replaced the protected text, and the rerun read it anew.
#[test]
fn a_call_reaching_into_a_suppressed_block_is_left() {
    let options = MigrateOptions::new(Target::Ascend);
    for src in [
        &b"cudaMallocHost(c,(())\n,cuport: off)cudaEventDestroy"[..],
        b"cudaMemGetInfo(\nc,6,cuport: off\"\")cudaFree",
    ] {
        let (first, second) = migrate_twice(Language::Cuda, src, &options);
        assert!(first.edits.is_empty(), "{:#?}", first.edits);
        assert_second_run_edits_nothing(&second);
    }
}

/// A CUDA name among a launch's template arguments lost its edit under the
/// `hipLaunchKernelGGL` rewrite, which replaced them whole; `#ifdef` there
/// was put on the macro's line, where a directive is none.
#[test]
fn a_directive_inside_a_launch_is_not_moved() {
    let mut options = MigrateOptions::new(Target::Hip);
    options.hip_launch = cuport_rewrite::HipLaunch::Ggl;
    let src = b"l<__CUDACC__\n><<<b,s>>>()";
    let text = port_stably(Language::Cuda, src, &options);
    assert!(text.contains("HIP_KERNEL_NAME(l<__HIPCC__\n>)"), "{text}");
    let src = b"k<cuComplex><<<1, 2>>>(x);";
    let text = port_stably(Language::Cuda, src, &options);
    assert!(
        text.contains(
            "hipLaunchKernelGGL(HIP_KERNEL_NAME(k<hipComplex>), dim3(1), dim3(2), 0, 0, x);"
        ),
        "{text}"
    );
    let src = b"template <typename T> void f(T* x) {\n  k<\n#ifdef __CUDACC__\nT\n#endif\n><<<1, 2>>>(x);\n}\n";
    let (first, second) = migrate_twice(Language::Cuda, src, &options);
    assert!(first
        .diagnostics
        .iter()
        .any(|d| d.code == "CP0029" && d.cuda_name == "k"));
    assert_second_run_edits_nothing(&second);
}

/// A kernel qualifier then `#ifdef __CUDACC__`: the dual-stack rerun added
/// the runtime shim header a second time.
#[test]
fn dual_stack_runtime_header_is_added_once() {
    let options = MigrateOptions::dual_stack(vec![Target::Hip]);
    let src = b"__global__ \n#ifdef __CUDACC__";
    port_stably(Language::Cuda, src, &options);
}

/// A file saved with a byte-order mark: the runtime header went after the
/// mark, where the rerun did not see it and added it again.
#[test]
fn a_byte_order_mark_hides_no_include() {
    for (target, src) in [
        (Target::Musa, &b"\xef\xbb\xbf(cudaA"[..]),
        (Target::Musa, b"\xef\xbb\xbfcudaA"),
        (Target::Hip, b"\xef\xbb\xbf#\n__ll("),
    ] {
        let (first, second) = migrate_twice(Language::Cuda, src, &MigrateOptions::new(target));
        assert!(first.output.starts_with(b"\xef\xbb\xbf"));
        assert_second_run_edits_nothing(&second);
    }
}

/// `__global__ T<<<>>>(){}`: chevrons in a function's declarator were read
/// as a launch; dual-stack output then declared a kernel named by the launch
/// macro, which the rerun wrapped in a kernel guard.
#[test]
fn chevrons_in_a_declarator_are_no_launch() {
    let options = MigrateOptions::dual_stack(vec![Target::Mlu]);
    let text = port_stably(Language::Cuda, b"__global__ T<<<>>>(){}", &options);
    assert!(!text.contains("CUPORT_KERNEL_LAUNCH"), "{text}");
}

/// The dual-stack spelling of a CUDA driver-style name
/// (`CUPORT_EXT_SEM_WAIT_NODE_PARAMS_st`) looks like a driver type to the
/// naming conventions; the rerun took it for CUDA and generated driver.h.
#[test]
fn cuport_portable_names_are_not_cuda() {
    let options = MigrateOptions::dual_stack(vec![Target::Musa]);
    let src = b"  cudaError_t err = CUDA_EXT_SEM_WAIT_NODE_PARAMS_st();\n";
    let (first, second) = migrate_twice(Language::Cuda, src, &options);
    assert_second_run_edits_nothing(&second);
    let text = String::from_utf8_lossy(&first.output);
    assert!(
        text.contains("CUPORT_EXT_SEM_WAIT_NODE_PARAMS_st"),
        "{text}"
    );
    assert!(second.diagnostics.is_empty(), "{:#?}", second.diagnostics);
}

/// `#define NCCL_k<<<1,6>>>()`: the launch rewrite turned the name of the
/// macro being defined into `hipLaunchKernelGGL(...)`.
#[test]
fn a_defined_macro_name_is_no_kernel() {
    let mut options = MigrateOptions::new(Target::Hip);
    options.hip_launch = cuport_rewrite::HipLaunch::Ggl;
    options.annotate = true;
    let text = port_stably(Language::Cuda, b"#define NCCL_k<<<1,6>>>()", &options);
    assert!(!text.contains("hipLaunchKernelGGL"), "{text}");
}

/// `import t#(01 ...` then, thousands of bytes later, a device string: the
/// `(` in the comment was taken for an open import list, so the first run
/// left the line as it was; a rerun, with the text grown past the look-back
/// window, ported it.
#[test]
fn a_bracket_in_a_comment_opens_no_import() {
    let options = MigrateOptions::dual_stack(vec![Target::Hip]);
    let src = b"import torch\nimport t#(01 (see below\n\ndef f():\n    return \"cuda:0\" if torch.cuda.is_available() else \"cpu\"\n";
    assert_stable_port_contains(
        Language::Python,
        src,
        &options,
        "cuport_device.is_available()",
    );
}

/// `__if defined(__CUDACC__)` on a line of its own is no directive, yet the
/// dual-stack `--annotate` run widened its condition as if it were one.
#[test]
fn a_condition_outside_a_directive_is_not_widened() {
    let mut options = MigrateOptions::dual_stack(vec![Target::Maca]);
    options.annotate = true;
    let src = b"//\n__if defined(__CUDACC__)";
    let text = port_stably(Language::Cuda, src, &options);
    assert!(text.ends_with("\n__if defined(__CUDACC__)"), "{text}");
}

/// Unbalanced braces between two kernels: the guard of the second kernel
/// started on `template}`, inside the first kernel's guard, and a rerun
/// guarded it again.
#[test]
fn unbalanced_braces_between_kernels_port_once() {
    let src = b"__global__ m(){{{{}}{}}\ntemplate}\n__global__ e(){}";
    for (dual, annotate) in [(false, false), (false, true), (true, false), (true, true)] {
        let mut options = MigrateOptions::new(Target::Mlu);
        if dual {
            options.mode = cuport_rewrite::Mode::Dual(vec![Target::Mlu]);
        }
        options.annotate = annotate;
        let text = port_stably(Language::Cuda, src, &options);
        assert!(!text.contains("CUPORT_CUDA_KERNELS\ntemplate}"), "{text}");
    }
}

/// A kernel inside `extern "C" {`: the guard must not take the line that
/// opens the block, or the block's close is left outside it.
#[test]
fn a_kernel_in_an_extern_c_block_is_guarded_inside_it() {
    let options = MigrateOptions::dual_stack(vec![Target::Ascend]);
    let src = b"extern \"C\" {\n__global__ void k(float* x) { x[0] = 1; }\n}\n";
    assert_stable_port_contains(
        Language::Cuda,
        src,
        &options,
        "extern \"C\" {\n#if !defined(CUPORT_CUDA_KERNELS)",
    );
}

/// `t s[s]` at the very end of a file: the initialised-VLA check looked two
/// bytes past the `]` for `= {` and indexed beyond the end (a panic on every
/// clang-based target).
#[test]
fn an_array_at_the_end_of_the_file_is_read_safely() {
    for src in [&b"t s[s]"[..], b"*n[i]", b"e\nt[i]"] {
        port_stably(Language::Cuda, src, &MigrateOptions::new(Target::Hip));
    }
}

/// An `#include` line inside a call's arguments (`cudaMallocHost(\n#include
/// \nblockDim.,t)`) is where added headers go, but the call's rewrite
/// replaces that text: the first run lost the runtime and SIMT device
/// headers to the conflict, the rerun added them.
#[test]
fn headers_are_not_added_inside_a_rewritten_call() {
    let src = b"cudaMallocHost(\n#include\nblockDim.,t)";
    for options in [MigrateOptions::new(Target::Ascend), common::ascend_simt()] {
        port_stably(Language::Cuda, src, &options);
    }
}

/// Found by a 240-second fuzz run: a header added right after a file's
/// byte-order mark starts its line, and an unterminated include at the end
/// of a file replaced whole (by a dual-stack switch) breaks no directive.
#[test]
fn a_byte_order_mark_and_a_last_unterminated_include_keep_directives_whole() {
    let hip = MigrateOptions::new(Target::Hip);
    let maca = MigrateOptions::dual_stack(vec![Target::Maca]);
    let cases: [(&[u8], &MigrateOptions); 4] = [
        (b"\xef\xbb\xbf\"\"__global__", &hip),
        (b"\xef\xbb\xbf__global__", &hip),
        (b"#include<cuda_runtime.h", &maca),
        (b"#include<cublas_v2.h", &maca),
    ];
    for (src, options) in cases {
        let (first, second) = migrate_twice(Language::Cuda, src, options);
        let glued = common::directive_line_violations(src, &first.edits);
        assert!(glued.is_empty(), "{glued:?}");
        assert_second_run_edits_nothing(&second);
    }
}

/// The runtime header added to a file that starts with a byte-order mark
/// goes right after the mark, which compilers skip: the directive starts
/// its line (the fuzz property read the mark as code before it).
#[test]
fn a_header_added_after_a_byte_order_mark_starts_its_line() {
    let src = b"\xef\xbb\xbfcudaS";
    let first = migrate(Language::Cuda, src, &MigrateOptions::new(Target::Hip));
    assert!(
        first.output.starts_with(b"\xef\xbb\xbf#include"),
        "{:?}",
        String::from_utf8_lossy(&first.output)
    );
    assert_keeps_directive_lines(src, &first);
}

/// Makefile fragments the fuzz tables build from, each ported twice: the
/// second run changes nothing and the first keeps every directive-free
/// line whole.
#[test]
fn makefile_fragments_port_once() {
    for src in [
        "FLAGS += -arch=sm_80 -arch sm_80 --generate-code arch=compute_1,code=[compute_1,sm_1]\n",
        "NVCC := $(CUDA_PATH)/bin/nvcc -ccbin $(HOST_COMPILER)\n-ccbin\n-arch=\n",
        "\t$(CXX) -arch x86_64 -G -c $< \\\nNVCCFLAGS = -t=0 -t 4 -Xcompiler -Wall\n",
    ] {
        let (first, second) = migrate_twice(
            Language::Makefile,
            src.as_bytes(),
            &MigrateOptions::new(Target::Hip),
        );
        assert!(!first.output.is_empty());
        assert_second_run_edits_nothing(&second);
    }
}

/// `--hip-kernel-launch ggl` on a launch whose arguments start on the next
/// line (a macro continued with `\`, fixtures/reduction's LAUNCH_REDUCE):
/// the line break stays, nothing is joined across the directive's lines.
#[test]
fn a_ggl_launch_keeps_the_line_break_after_its_paren() {
    let mut options = MigrateOptions::new(Target::Hip);
    options.hip_launch = cuport_rewrite::HipLaunch::Ggl;
    assert_ports_end_with(
        &options,
        &[
        (
            "#define U m<<<l,m>>>(\\\n)",
            "#define U hipLaunchKernelGGL(m, dim3(l), dim3(m), 0, 0\\\n)",
        ),
        (
            "#define L(T) k<T><<<g, b, 0, s>>>(   \\\n      a, b)\n",
            "#define L(T) hipLaunchKernelGGL(HIP_KERNEL_NAME(k<T>), dim3(g), dim3(b), 0, s,   \\\n      a, b)\n",
        ),
    ],
    );
}

/// The dual-stack launch macro keeps the line break after the launch's
/// `(` too (`#define U m<<<>>>(\` then `)`; fixtures/reduction's
/// LAUNCH_REDUCE was joined into one line).
#[test]
fn a_dual_launch_keeps_the_line_break_after_its_paren() {
    let options = MigrateOptions::dual_stack(vec![Target::Ascend]);
    assert_ports_end_with(
        &options,
        &[
        (
            "#define U m<<<>>>(\\\n)",
            "#define U CUPORT_KERNEL_LAUNCH((m), ()\\\n)",
        ),
        (
            "#define L(T) k<T><<<g, b, 0, s>>>(   \\\n      a, \\\n      b)\n",
            "#define L(T) CUPORT_KERNEL_LAUNCH((k<T>), (g, b, 0, s),   \\\n      a, \\\n      b)\n",
        ),
    ],
    );
}

/// An architecture value with parentheses (`8(N)`, unbalanced input) had
/// its first part rewritten, which moved the command's closing parenthesis:
/// a rerun then saw `project(X CUDA)` as a command and rewrote it.
#[test]
fn architecture_values_with_parentheses_are_left_alone() {
    let options = MigrateOptions::new(Target::Hip);
    for src in [
        &b"t(CMAKE_CUDA_ARCHITECTURES 8(N)project(X CUDA)"[..],
        b"t(CMAKE_CUDA_ARCHITECTURES(0(A\"\")find_package(CUDAToolkit)",
    ] {
        let text = port_stably(Language::Cmake, src, &options);
        assert!(!text.contains("gfx"), "{text}");
    }
}

/// A second include of the runtime header among a call's arguments was
/// deleted as a repeat; the call, kept as written because of that
/// directive (CP0029), was then rewritten by a rerun.
#[test]
fn a_repeated_include_among_arguments_stays() {
    let options = MigrateOptions::new(Target::Ascend);
    for src in [
        &b"#include<cuda_runtime.h>\ncudnnSetTensor4dDescriptor(c,W,T,\n#include<cuda_runtime.h\nn,c,h,w)"[..],
        b"#include<cuda_runtime.h\ncudnnSetConvolution2dDescriptor(c,d,d,e,e,\n#include<cuda_runtime.h\nn,n,N,H)",
    ] {
        let text = port_stably(Language::Cpp, src, &options);
        assert_eq!(text.matches("#include<acl/acl.h").count(), 2, "{text}");
    }
}

/// `__global__ m<<<...>>>(...)`: a stray qualifier before a launch. The
/// dual-stack port writes the launch as `CUPORT_KERNEL_LAUNCH(...)`; a rerun
/// took that macro for a kernel defined after `__global__` and put it
/// behind the kernel guard.
#[test]
fn a_launch_after_a_stray_global_is_no_kernel() {
    let mut options = MigrateOptions::new(Target::Hip);
    options.mode = cuport_rewrite::Mode::Dual(vec![Target::Hip, Target::Mlu]);
    options.annotate = true;
    let text = port_stably(
        Language::Cuda,
        b"__global__ m<<<r()*f(T),m>>>(\\s,n)n{}",
        &options,
    );
    assert!(text.contains("CUPORT_KERNEL_LAUNCH"), "{text}");
}

/// A string statement `"cuda"` on the line after the docstring `""`,
/// ported dual-stack: the first run took the two for one concatenated
/// string and kept it (CP0040); the second, with the import between them,
/// ported it. A line break ends a statement outside brackets.
#[test]
fn a_string_on_the_line_after_another_is_not_glued_to_it() {
    let options = MigrateOptions::dual_stack(vec![Target::Maca]);
    let src = b"\xef\xbb\xbf#\n\"\"\n\"cuda\"\ndef u():[t.cuda()or t in h]";
    let out = port_stably(Language::Python, src, &options);
    assert!(out.contains("\ncuport_device.accelerator\n"), "{out}");
    // Inside brackets the line break continues the statement: still glued.
    let glued = b"x = (\"cuda\"\n     \":0\")\n";
    let out = port_stably(Language::Python, glued, &options);
    assert!(out.contains("(\"cuda\"\n     \":0\")"), "{out}");
}

/// A CMake argument list left open across a line (`$(` ... `)`), ported to
/// Ascend with notes: the CP2950 note written inside it names `CUDA`, and
/// the rerun took the list for nvcc options and reported `-gencode`.
#[test]
fn a_comment_in_cmake_arguments_does_not_make_them_nvcc_options() {
    let dir = tempfile::tempdir().unwrap();
    let src = "$($(foreach sm,$(SMS),$(eval GENCODE_FLAGS += -gencode arch=compute_$(sm),code=sm_$(sm)))\n) project(demo LANGUAGES CXX CUDA)\n";
    std::fs::write(dir.path().join("CMakeLists.txt"), src).unwrap();
    let mut options = MigrateOptions::new(Target::Ascend);
    options.annotate = true;
    let first = common::migrate_dir(dir.path(), &options);
    let output = &first.files[0].result.output;
    std::fs::write(dir.path().join("CMakeLists.txt"), output).unwrap();
    let second = common::migrate_dir(dir.path(), &options);
    assert_second_run_edits_nothing(&second.files[0].result);
}

/// `__forceinline__ cublasA,` for Ascend C SIMT with notes: the name after
/// the qualifier was read as a variable being declared; the port rewrote
/// the qualifier, and the rerun reported the name and added its note.
#[test]
fn a_name_after_a_cuda_qualifier_is_read_the_same_after_the_port() {
    let mut options = MigrateOptions::new(Target::Ascend);
    options.annotate = true;
    options
        .kernel_models
        .insert(Target::Ascend, cuport_model::KernelModel::Simt);
    port_stably(Language::Cuda, b"__forceinline__ cublasA,", &options);
}

/// A 90-second fuzz run: `t CUBLAS_COMPUTE_32F, x` among a known call's
/// arguments (two words, not C++) was read as a variable definition, so the
/// name got no site; the template left it in the call's text and a second
/// run renamed it there. A call's argument list declares nothing.
#[test]
fn a_known_constant_after_a_word_in_call_arguments_is_renamed_in_the_first_run() {
    let src = "void f() { cublasGemmEx(e,C,N,m,n,k,&,6,CUDA_R_16F,m,b,CUDA_R_16F,k,a,c,CUDA_R_32F,m,t CUBLAS_COMPUTE_32F, x); }\n";
    let options = MigrateOptions::new(Target::Ascend);
    let first_dir = tempfile::tempdir().unwrap();
    std::fs::write(first_dir.path().join("k.cu"), src).unwrap();
    let first = common::migrate_dir(first_dir.path(), &options);
    let ported = &first
        .files
        .iter()
        .find(|f| f.path == "k.cu")
        .unwrap()
        .result;
    let text = String::from_utf8_lossy(&ported.output).into_owned();
    assert!(text.contains("t CUPORT_BLAS_COMPUTE_32F"), "{text}");
    let second_dir = tempfile::tempdir().unwrap();
    std::fs::write(second_dir.path().join("k.cu"), &ported.output).unwrap();
    let second = common::migrate_dir(second_dir.path(), &options);
    let again = &second
        .files
        .iter()
        .find(|f| f.path == "k.cu")
        .unwrap()
        .result;
    assert_second_run_edits_nothing(again);
}

/// A fuzz run: `#if defined(__CUDA_ARCH__\` continued on the next line by
/// its backslash is one directive. The dual-stack port rewrites the
/// `defined(...)` whole, across the continuation, which is right; the
/// property read the directive as its first physical line only.
#[test]
fn a_directive_continued_by_a_backslash_is_rewritten_whole() {
    let src = "#if defined(__CUDA_ARCH__\\\n)\nint x;\n#endif\n";
    let mut options = MigrateOptions::dual_stack(vec![Target::Ascend]);
    options
        .kernel_models
        .insert(Target::Ascend, cuport_model::KernelModel::Simt);
    let (first, second) = migrate_twice(Language::Cuda, src.as_bytes(), &options);
    let out = String::from_utf8_lossy(&first.output);
    assert!(
        out.starts_with("#if (defined(__CUDA_ARCH__) || defined(__NPU_DEVICE__))\nint x;\n"),
        "{out}"
    );
    assert_keeps_directive_lines(src.as_bytes(), &first);
    assert_second_run_edits_nothing(&second);
}

/// A fuzz run: `#if defined(__CUDA_ARCH__` with its `)` on the next line
/// (no backslash, so that line is code) was widened across the line
/// break, gluing the code line onto the directive. The operator is
/// widened only when it closes on the directive's line.
#[test]
fn a_defined_operator_that_does_not_close_on_its_line_is_not_widened() {
    let mut options = MigrateOptions::dual_stack(vec![Target::Ascend]);
    options
        .kernel_models
        .insert(Target::Ascend, cuport_model::KernelModel::Simt);
    for src in [
        "#if defined(__CUDA_ARCH__ \n)",
        "#if defined(__CUDA_ARCH__\n)\n#endif\n",
    ] {
        let (first, second) = migrate_twice(Language::Cuda, src.as_bytes(), &options);
        assert_keeps_directive_lines(src.as_bytes(), &first);
        assert_second_run_edits_nothing(&second);
    }
}

/// A fuzz run: a kernel defined in a macro's continued lines got the
/// dual-stack kernel guard, whose `#if` line ended the macro there. It is
/// kept as written, with a diagnostic.
#[test]
fn a_kernel_in_a_macro_body_gets_no_guard_lines() {
    let src =
        "#define DEFINE_KERNEL \\\n__global__ void k(float *x) { x[0] = 0; }\nDEFINE_KERNEL\n";
    let options = MigrateOptions::dual_stack(vec![Target::Mlu]);
    let (first, second) = migrate_twice(Language::Cuda, src.as_bytes(), &options);
    assert_keeps_directive_lines(src.as_bytes(), &first);
    assert!(
        first
            .diagnostics
            .iter()
            .any(|d| d.line == 2 && d.message.contains("kernel `k`")),
        "{:#?}",
        first.diagnostics
    );
    assert_second_run_edits_nothing(&second);
}

/// A fuzz run: a launch that a `#define` line starts and the next (code)
/// line ends was rewritten as one macro call across the line break. It is
/// kept as written, with a diagnostic.
#[test]
fn a_launch_that_leaves_its_directive_line_is_kept() {
    let src = "#define C a<<<\n>>>()";
    let options = MigrateOptions::dual_stack(vec![Target::Mlu]);
    let (first, second) = migrate_twice(Language::Cuda, src.as_bytes(), &options);
    assert_keeps_directive_lines(src.as_bytes(), &first);
    assert!(
        first.diagnostics.iter().any(|d| d
            .message
            .contains("starts on a preprocessor line and ends after it")),
        "{:#?}",
        first.diagnostics
    );
    assert_second_run_edits_nothing(&second);
}

/// The property still sees an edit that runs from a continued directive
/// into the code after it, or glues code onto its last line.
#[test]
fn the_directive_property_follows_continuation_lines() {
    let src = b"#if A \\\n && B\nint x;\n";
    let edit = |start: usize, end: usize, replacement: &str| cuport_rewrite::Edit {
        range: cuport_model::TextRange::new(start, end),
        replacement: replacement.to_string(),
        code: cuport_model::Code::from_literal("CP0042"),
        cuda_name: String::new(),
        kind: cuport_rewrite::EditKind::Port,
    };
    let into_code = [edit(9, 16, "C")];
    assert_eq!(
        common::directive_line_violations(src, &into_code).len(),
        1,
        "an edit from the continued line into `int x;`"
    );
    let glued = [edit(13, 13, " int y;")];
    assert_eq!(common::directive_line_violations(src, &glued).len(), 1);
    let inside = [edit(9, 13, "C && D")];
    assert!(common::directive_line_violations(src, &inside).is_empty());
    let continued = [edit(9, 13, "C \\\n && D")];
    assert!(common::directive_line_violations(src, &continued).is_empty());
    let broken = [edit(9, 13, "C\n && D")];
    assert_eq!(common::directive_line_violations(src, &broken).len(), 1);
}

/// A fuzz run: a kernel after a stray `.` (`}}.` then `__global__ e(){}`)
/// was read as a member access, so the first dual-stack run guarded only
/// the first kernel and the second run the other. CUDA's qualifiers are
/// never members.
#[test]
fn a_kernel_after_a_stray_dot_is_guarded_in_the_first_run() {
    let src = "__global__ e(){{}}.\n__global__ e(){}";
    let options = MigrateOptions::dual_stack(vec![Target::Mlu]);
    let (first, second) = migrate_twice(Language::Cuda, src.as_bytes(), &options);
    let out = String::from_utf8_lossy(&first.output);
    assert_eq!(
        out.matches("#if !defined(CUPORT_CUDA_KERNELS)").count(),
        2,
        "{out}"
    );
    assert_keeps_directive_lines(src.as_bytes(), &first);
    assert_second_run_edits_nothing(&second);
}

/// A fuzz run: a launch in a continued `#define` whose argument holds the
/// continuation (`m<<<>>>($\` then `n)`) keeps that backslash line break in
/// its macro call, which leaves the directive whole.
#[test]
fn a_launch_argument_with_a_continuation_stays_in_its_macro() {
    let src = "#define A m<<<>>>($\\\nn)";
    let options = MigrateOptions::dual_stack(vec![Target::Mlu]);
    let (first, second) = migrate_twice(Language::Cuda, src.as_bytes(), &options);
    assert_keeps_directive_lines(src.as_bytes(), &first);
    assert_second_run_edits_nothing(&second);
}

/// A fuzz run: `set_target_properties(()(CMAKE_CUDA_ARCHITECTURES )PROPERTIES
/// CUDA_SEPARABLE_COMPILATION ON)` copied its "targets" (brackets and a
/// CUDA variable) into `target_compile_options` lines, which a second run
/// renamed. Such a call is left to the rule tables; a plain one is still
/// ported.
#[test]
fn set_target_properties_copies_only_plain_targets() {
    let options = MigrateOptions::new(Target::Hip);
    let odd = b"set_target_properties(()(CMAKE_CUDA_ARCHITECTURES )PROPERTIES CUDA_SEPARABLE_COMPILATION ON\n)";
    let (first, second) = migrate_twice(Language::Cmake, odd, &options);
    let out = String::from_utf8_lossy(&first.output);
    assert!(!out.contains("target_compile_options("), "{out}");
    assert_second_run_edits_nothing(&second);
    let plain = b"set_target_properties(app PROPERTIES CUDA_SEPARABLE_COMPILATION ON)\n";
    let text = port_stably(Language::Cmake, plain, &options);
    assert!(
        text.contains("target_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-fgpu-rdc>)"),
        "{text}"
    );
}

/// A fuzz run: `torch.cuda.nccl(d)` became `cuport_device.get("nccl")(d)`
/// in a dual-stack port, and a second run took that "nccl" for a
/// distributed backend. It is the attribute's name.
#[test]
fn a_torch_cuda_attribute_named_nccl_stays_a_name() {
    let options = MigrateOptions::dual_stack(vec![Target::Mlu]);
    let text = port_stably(Language::Python, b"torch.cuda.nccl(d)", &options);
    assert!(text.contains("cuport_device.get(\"nccl\")(d)"), "{text}");
}

/// A fuzz run: with `--annotate`, the note for the first line of a file
/// that starts with a byte-order mark went before the mark, so the runtime
/// include written after the mark was glued to it and a second run added
/// another. The note goes after the mark.
#[test]
fn an_annotation_on_the_first_line_follows_the_byte_order_mark() {
    let mut options = MigrateOptions::new(Target::Hip);
    options.annotate = true;
    let src = b"\xef\xbb\xbf__NV_E4M3 x;\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), src).unwrap();
    let first = common::migrate_dir(dir.path(), &options);
    let ported = &first
        .files
        .iter()
        .find(|f| f.path == "k.cu")
        .unwrap()
        .result;
    let text = String::from_utf8_lossy(&ported.output);
    assert!(text.starts_with('\u{feff}'), "{text:?}");
    assert_eq!(
        text.matches("#include <hip/hip_runtime.h>").count(),
        1,
        "{text:?}"
    );
    assert!(text.contains("// CUPORT CP1219"), "{text:?}");
    let again = tempfile::tempdir().unwrap();
    std::fs::write(again.path().join("k.cu"), &ported.output).unwrap();
    let second = common::migrate_dir(again.path(), &options);
    let rerun = &second
        .files
        .iter()
        .find(|f| f.path == "k.cu")
        .unwrap()
        .result;
    assert_second_run_edits_nothing(rerun);
}

/// A fuzz run: `#include\` with `<math_constants.h>` on the next line
/// (one directive): the dual-stack include switch replaced the second line
/// only, splitting the directive. Such an include is kept and reported.
#[test]
fn an_include_whose_name_is_on_a_continued_line_is_kept() {
    let src = b"#include\\\n<math_constants.h>\n";
    let options = MigrateOptions::dual_stack(vec![Target::Mlu]);
    let (first, second) = migrate_twice(Language::Cuda, src, &options);
    assert_keeps_directive_lines(src, &first);
    assert_second_run_edits_nothing(&second);
}

/// Found while reading the call scan for speed (not by a fuzz run): a
/// character of more than one byte that is not a letter (`·`) right before
/// a plain call of a name a pass looks for (`max`) made the scan slice
/// inside the character and panic. The file is ported and the call read.
#[test]
fn a_wide_character_before_a_call_is_no_panic() {
    let src = "__global__ void k(int *x) { *x = 1; }\nint main() { int a = 1 \u{b7}max(1, 2u); return a; }\n";
    let options = MigrateOptions::new(Target::Hip);
    let text = port_stably(Language::Cuda, src.as_bytes(), &options);
    // Read as a call: its signed argument is cast as HIP's `max` needs.
    assert!(
        text.contains("\u{b7}max(static_cast<unsigned int>(1), 2u)"),
        "{text:?}"
    );
}

/// A fuzz run (2026-12-06, eleventh session; the tenth session's binary
/// did the same): `c<<<1, 32>>>(#if __CUDA_ARCH__ >= 800` (a `#` in the
/// middle of a line is no directive) read `if __CUDA_ARCH__ >=` as a
/// variable defined after a type (`>=` counted as `=`, and a launch's
/// argument list as a place that declares), so the macro went unreported;
/// once `--hip-kernel-launch ggl` had made the launch a call, a second run
/// reported it and added a CP1940 note.
#[test]
fn a_macro_compared_in_a_launch_is_reported_in_the_first_run() {
    let mut options = MigrateOptions::new(Target::Hip);
    options.hip_launch = cuport_rewrite::HipLaunch::Ggl;
    options.annotate = true;
    let src = b"__global__ void c(float *o) {}\n__global__ void p(float *o) {\n    c<<<1, 32>>>(#if __CUDA_ARCH__ >= 800\no);\n}\n";
    let (first, second) = migrate_twice(Language::Cuda, src, &options);
    assert!(
        first.diagnostics.iter().any(|d| d.code == "CP1940"),
        "{:?}",
        first.diagnostics
    );
    assert_second_run_edits_nothing(&second);
}

/// A fuzz run (2026-12-06, eleventh session; the tenth session's binary
/// did the same): in `cublasSgemm(e,(());c CUBLAS_OP_N,...)` the `;`
/// ends a statement inside the call, so `c CUBLAS_OP_N,` read as a
/// declaration and kept its name, while the Ascend template rebuilt the
/// call around it; a second run then renamed the constant. A call with
/// such an argument is kept and reported (CP0002).
#[test]
fn a_call_whose_argument_ends_a_statement_is_kept() {
    let options = MigrateOptions::new(Target::Ascend);
    let src = b"cublasSgemm(e,(());c CUBLAS_OP_N,C,m,n,k,a,a,m,b,n,a,c,m)";
    let (first, second) = migrate_twice(Language::Cuda, src, &options);
    assert_second_run_edits_nothing(&second);
    let text = String::from_utf8_lossy(&first.output);
    assert!(
        text.ends_with("cublasSgemm(e,(());c CUBLAS_OP_N,C,m,n,k,a,a,m,b,n,a,c,m)"),
        "{text}"
    );
    assert!(
        first.diagnostics.iter().any(|d| d.code == "CP0002"),
        "{:?}",
        first.diagnostics
    );
}

/// A lambda's body ends its statements inside braces: the call around it
/// is still rewritten.
#[test]
fn a_lambda_argument_does_not_end_the_call_statement() {
    let options = MigrateOptions::new(Target::Ascend);
    let src = b"cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, [] { return 1; }(), a, m, b, k, be, c, m);\n";
    let first = migrate(Language::Cuda, src, &options);
    let text = String::from_utf8_lossy(&first.output);
    assert!(!text.contains("cublasSgemm("), "{text}");
    assert!(
        first.diagnostics.iter().all(|d| d.code != "CP0002"),
        "{:?}",
        first.diagnostics
    );
}
