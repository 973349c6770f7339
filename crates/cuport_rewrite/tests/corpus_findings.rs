//! Findings of the corpus check on real code bases (cuda-samples, llm.c),
//! each reduced to a small tree and kept as a named test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{migrate_dir, rules};
use cuport_model::Target;
use cuport_rewrite::{MigrateOptions, Migration};

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = root.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    root
}

fn output<'m>(migration: &'m Migration, path: &str) -> &'m cuport_rewrite::FileMigration {
    &migration
        .files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} not migrated"))
        .result
}

fn migrate(root: &Path, options: &MigrateOptions) -> Migration {
    migrate_dir(root, options)
}

/// cuda-samples' mergeSort: the host file has its own `static uint umin`,
/// the kernels call CUDA's `umin`, which HIP lacks. The host definition
/// hid every kernel use tree-wide, so nothing flagged the port that then
/// failed to compile.
#[test]
fn a_source_files_own_definition_hides_only_its_own_uses() {
    let root = tree(&[
        (
            "host.cpp",
            "static unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }\nunsigned f(unsigned a) { return umin(a, 3u); }\n",
        ),
        (
            "sort.cu",
            "__global__ void k(unsigned* x, unsigned n) { x[0] = umin(x[1], n); }\n",
        ),
    ]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Hip));
    let flagged = |path: &str| {
        output(&migration, path)
            .diagnostics
            .iter()
            .any(|d| d.cuda_name == "umin")
    };
    assert!(flagged("sort.cu"), "the kernel's umin must be diagnosed");
    assert!(!flagged("host.cpp"), "the host file's own umin is its own");
}

/// A project header defining a plain name the tables know makes it the
/// project's in every file (helper headers are shared).
#[test]
fn a_headers_definition_is_the_projects_everywhere() {
    let root = tree(&[
        (
            "util.h",
            "static inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }\n",
        ),
        (
            "sort.cu",
            "#include \"util.h\"\n__global__ void k(unsigned* x, unsigned n) { x[0] = umin(x[1], n); }\n",
        ),
    ]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Hip));
    assert!(!output(&migration, "sort.cu")
        .diagnostics
        .iter()
        .any(|d| d.cuda_name == "umin"));
}

/// Vector constructors HIP defines under the same name (`make_float3`)
/// were "not in the rule tables" (CP0001, manual) 200 times on cuda-samples.
#[test]
fn hip_vector_constructors_are_exact() {
    for name in ["make_float3", "make_uint3", "make_uchar4", "tex1Dfetch"] {
        let rule = rules().lookup(Target::Hip, name);
        assert!(rule.is_some(), "{name} unknown to the HIP tables");
    }
    let root = tree(&[(
        "k.cu",
        "__global__ void k(float3* x) { x[0] = make_float3(1.f, 2.f, 3.f); }\n",
    )]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Hip));
    let diagnostics = &output(&migration, "k.cu").diagnostics;
    assert!(
        !diagnostics.iter().any(|d| d.cuda_name == "make_float3"),
        "{diagnostics:#?}"
    );
}

/// cuda-samples' nbody: `bodysystemcuda.cu` includes `helper_cuda.h` before
/// any CUDA header; nvcc's implicit runtime include made its CUDA names
/// visible. In the dual-stack source the helper uses portable names
/// (`cuportError_t`), so the shim's runtime header must come first, not
/// after the helper where the file's first CUDA include was.
#[test]
fn dual_stack_runtime_header_comes_before_a_project_header() {
    let root = tree(&[
        (
            "helper.h",
            "#pragma once\n#ifdef __DRIVER_TYPES_H__\nstatic const char* name(cudaError_t e) { return cudaGetErrorName(e); }\n#endif\n",
        ),
        (
            "app.cu",
            "#include \"helper.h\"\n#include <cuda_runtime.h>\n__global__ void k() {}\nint main() { cudaDeviceSynchronize(); }\n",
        ),
    ]);
    let mut options = MigrateOptions::new(Target::Hip);
    options.mode = cuport_rewrite::Mode::Dual(vec![Target::Hip]);
    let migration = migrate(root.path(), &options);
    let text = String::from_utf8_lossy(&output(&migration, "app.cu").output).into_owned();
    let shim = text
        .find("cuport/runtime.h\"")
        .expect("shim runtime header");
    let helper = text.find("#include \"helper.h\"").unwrap();
    assert!(shim < helper, "{text}");
}

/// cuda-samples' `helper_math.h` defines `operator+=(float4&, float4)` and
/// its kin; HIP's vector types define the same operators, so every use was
/// ambiguous under hipcc (5 samples). On HIP the project's definition is
/// compiled out where HIP's exists (with an approximate CP0015); targets
/// whose vector types bring no such operator keep it untouched.
#[test]
fn a_projects_vector_compound_assignment_is_compiled_out_where_hip_has_it() {
    let header = "#pragma once\n#include <cuda_runtime.h>\ninline __host__ __device__ void operator+=(float4 &a, float4 b)\n{\n    a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w;\n}\n";
    let root = tree(&[("helper_math.h", header)]);
    let hip = migrate(root.path(), &MigrateOptions::new(Target::Hip));
    let file = output(&hip, "helper_math.h");
    let text = String::from_utf8_lossy(&file.output).into_owned();
    let guard = text
        .find("#if !defined(__HIP_PLATFORM_AMD__)")
        .expect("guarded on HIP");
    let definition = text.find("inline __host__").unwrap();
    let end = text.find("#endif /* operator+= */").expect("closed");
    assert!(guard < definition && definition < end, "{text}");
    assert!(file.diagnostics.iter().any(|d| d.code == "CP0015"));
    let again = common::migrate_dir(
        &common::write_output(&hip).path().join("tree"),
        &MigrateOptions::new(Target::Hip),
    );
    assert!(output(&again, "helper_math.h").edits.is_empty());
    let ascend = migrate(root.path(), &MigrateOptions::new(Target::Ascend));
    assert!(!output(&ascend, "helper_math.h")
        .diagnostics
        .iter()
        .any(|d| d.code == "CP0015"));
}

/// cuda-samples' simpleMultiCopy and bilateralFilter call cudaHostAlloc and
/// cudaMallocPitch with `float **` / `uint **`, which CUDA's C++ template
/// overloads accept; HIP 5.2 declares only `hipMallocPitch(void **, ...)`,
/// so the renamed call did not compile. A port for HIP 5.2 casts as CUDA's
/// template does; hipHostMalloc has its own `T **` overload there, and HIP
/// 6.3 has one for hipMallocPitch too, so a port for the newest HIP casts
/// neither (`mappings/hip/arguments.toml`).
#[test]
fn allocation_calls_keep_working_with_typed_pointers() {
    let root = tree(&[(
        "a.cpp",
        "#include <cuda_runtime.h>\nvoid f() { float* p; size_t pitch; cudaHostAlloc(&p, 64, cudaHostAllocDefault); cudaMallocPitch(&p, &pitch, 16, 4); }\n",
    )]);
    let mut hip_5_2 = MigrateOptions::new(Target::Hip);
    hip_5_2.sdk_versions.insert(
        Target::Hip,
        cuport_model::SdkVersion::parse("5.2.3").expect("a version"),
    );
    for (options, pitch) in [
        (hip_5_2, "hipMallocPitch((void**)&p, &pitch, 16, 4)"),
        (
            MigrateOptions::new(Target::Hip),
            "hipMallocPitch(&p, &pitch, 16, 4)",
        ),
    ] {
        let migration = migrate(root.path(), &options);
        let text = String::from_utf8_lossy(&output(&migration, "a.cpp").output).into_owned();
        assert!(
            text.contains("hipHostMalloc(&p, 64, hipHostMallocDefault)"),
            "{text}"
        );
        assert!(text.contains(pitch), "{text}");
    }
}

/// The diagnostics of `path` as `(code, CUDA name)`.
fn codes_of(migration: &Migration, path: &str) -> Vec<(String, String)> {
    output(migration, path)
        .diagnostics
        .iter()
        .map(|d| (d.code.to_string(), d.cuda_name.clone()))
        .collect()
}

/// llm.c `zero.cuh`: `cudaEventCreate(&e, cudaEventDisableTiming)` is the
/// C++ overload with flags; renamed to the one-argument `aclrtCreateEvent`
/// it did not compile, and its flag was reported as an unknown name.
#[test]
fn a_rename_to_a_function_of_another_arity_is_left_for_a_person() {
    let root = tree(&[(
        "events.cu",
        "#include <cuda_runtime.h>\nvoid f(cudaEvent_t* a, cudaEvent_t* b) {\n  cudaEventCreate(a);\n  cudaEventCreate(b, cudaEventDisableTiming);\n}\n",
    )]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Ascend));
    let text = String::from_utf8(output(&migration, "events.cu").output.clone()).unwrap();
    assert!(text.contains("aclrtCreateEvent(a);"), "{text}");
    assert!(
        text.contains("cudaEventCreate(b, cudaEventDisableTiming);"),
        "{text}"
    );
    let codes = codes_of(&migration, "events.cu");
    assert!(
        codes.contains(&("CP0003".into(), "cudaEventCreate".into())),
        "{codes:?}"
    );
    assert!(
        codes.contains(&("CP0003".into(), "cudaEventDisableTiming".into())),
        "{codes:?}"
    );
    assert!(!codes.iter().any(|(code, _)| code == "CP0001"), "{codes:?}");
}

/// llm.c `zero.cuh`: `const ncclDataType_t ncclFloatX = ncclFloat;` is the
/// project's own constant, not an NCCL name to port.
#[test]
fn a_projects_own_constant_that_looks_like_a_library_name_is_not_a_touchpoint() {
    let root = tree(&[
        ("zero.cuh", "#include <nccl.h>\nconst ncclDataType_t ncclFloatX = ncclFloat;\n"),
        ("train.cu", "#include \"zero.cuh\"\nvoid f(ncclComm_t c, float* x) { ncclAllReduce(x, x, 1, ncclFloatX, ncclSum, c, 0); }\n"),
    ]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Ascend));
    for path in ["zero.cuh", "train.cu"] {
        let codes = codes_of(&migration, path);
        assert!(
            !codes.iter().any(|(_, name)| name == "ncclFloatX"),
            "{path}: {codes:?}"
        );
    }
    let header = String::from_utf8(output(&migration, "zero.cuh").output.clone()).unwrap();
    assert!(
        header.contains("const HcclDataType ncclFloatX = HCCL_DATA_TYPE_FP32;"),
        "{header}"
    );
}

/// llm.c `cudnn_att.cpp`: the cudnn_frontend graph code, through the alias
/// `namespace fe = cudnn_frontend;`, got one diagnostic on the include;
/// every use is now reported where it is, with what replaces it.
#[test]
fn cudnn_frontend_uses_are_reported_where_they_are() {
    let root = tree(&[(
        "att.cpp",
        "#include <cudnn_frontend.h>\nnamespace fe = cudnn_frontend;\nvoid f() {\n  auto graph = std::make_shared<fe::graph::Graph>();\n  graph->set_io_data_type(fe::DataType_t::HALF);\n}\n",
    )]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Ascend));
    let codes = codes_of(&migration, "att.cpp");
    for name in [
        "cudnn_frontend.h",
        "cudnn_frontend::graph::Graph",
        "cudnn_frontend::DataType_t::HALF",
    ] {
        assert!(
            codes.contains(&("CP2409".into(), name.into())),
            "{name}: {codes:?}"
        );
    }
    assert!(!codes.iter().any(|(code, _)| code == "CP0001"), "{codes:?}");
}

/// llm.c: cuBLASLt (110 sites) and NVML calls were generic "not in the rule
/// tables" diagnostics on Ascend; each now says where its work goes.
#[test]
fn cublaslt_and_nvml_calls_get_specific_diagnostics_on_ascend() {
    let root = tree(&[(
        "host.cu",
        "#include <cublasLt.h>\n#include <nvml.h>\nvoid f(cublasLtHandle_t lt, cublasLtMatmulDesc_t d, nvmlDevice_t dev) {\n  cublasLtCreate(&lt);\n  cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_GELU_BIAS;\n  cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e));\n  unsigned t; nvmlDeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &t);\n}\n",
    )]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Ascend));
    let codes = codes_of(&migration, "host.cu");
    assert!(!codes.iter().any(|(code, _)| code == "CP0001"), "{codes:?}");
    assert!(
        codes.contains(&("CP0005".into(), "cublasLtMatmulDescSetAttribute".into())),
        "{codes:?}"
    );
    assert!(
        codes.contains(&("CP2710".into(), "nvmlDeviceGetTemperature".into())),
        "{codes:?}"
    );
}

/// CoffeeBeforeArch/cuda_programming (formatted by Visual Studio) launches
/// kernels as `k << <g, b >> > (x)`. nvcc reads that as a launch; clang (hipcc,
/// mcc) does not, and cuport saw two shifts: no launch site, nothing said,
/// and the HIP port failed to compile ("expected primary-expression").
#[test]
fn launches_spelled_with_spaced_chevrons_are_launches() {
    let source = "__global__ void k(int* a) { a[threadIdx.x] = 1; }\ntemplate <typename T> __global__ void f(T* a) {}\nvoid run(int* d) {\n    k << <2, 32 >> > (d);\n    f<int> << <1, 1 >> > (d);\n}\n";
    let root = tree(&[("spaced.cu", source)]);
    for target in [Target::Hip, Target::Musa] {
        let migration = migrate(root.path(), &MigrateOptions::new(target));
        let text = migrated_text(&migration, "spaced.cu");
        assert!(text.contains("k <<<2, 32 >>> (d);"), "{target:?}: {text}");
        assert!(
            text.contains("f<int> <<<1, 1 >>> (d);"),
            "{target:?}: {text}"
        );
    }
    let mut ggl = MigrateOptions::new(Target::Hip);
    ggl.hip_launch = cuport_rewrite::HipLaunch::Ggl;
    let migration = migrate(root.path(), &ggl);
    let text = migrated_text(&migration, "spaced.cu");
    assert!(
        text.contains("hipLaunchKernelGGL(k, dim3(2), dim3(32), 0, 0, d);"),
        "{text}"
    );
    assert!(
        text.contains("hipLaunchKernelGGL(HIP_KERNEL_NAME(f<int>), dim3(1), dim3(1), 0, 0, d);"),
        "{text}"
    );
    // Dual-stack for CUDA and HIP keeps the launch (both compile it) and
    // respells it; with Ascend it goes behind the launch macro.
    let mut dual = MigrateOptions::new(Target::Hip);
    dual.mode = cuport_rewrite::Mode::Dual(vec![Target::Hip]);
    let migration = migrate(root.path(), &dual);
    let text = migrated_text(&migration, "spaced.cu");
    assert!(text.contains("k <<<2, 32 >>> (d);"), "{text}");
    dual.mode = cuport_rewrite::Mode::Dual(vec![Target::Ascend, Target::Hip]);
    let migration = migrate(root.path(), &dual);
    let text = migrated_text(&migration, "spaced.cu");
    assert!(
        text.contains("CUPORT_KERNEL_LAUNCH((k), (2, 32), d);"),
        "{text}"
    );
    assert!(
        text.contains("CUPORT_KERNEL_LAUNCH((f<int>), (1, 1), d);"),
        "{text}"
    );
}

/// `operator<< <T>` (a friend template specialisation) is not a launch.
#[test]
fn operator_shift_specialisation_is_not_a_launch() {
    let source = "template <typename T> struct B;\ntemplate <typename T> int operator<<(int, B<T>);\ntemplate <typename T> struct B { friend int operator<< <T>(int, B<T>); };\n__global__ void k() {}\n";
    let root = tree(&[("op.cu", source)]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Hip));
    let file = output(&migration, "op.cu");
    let text = String::from_utf8_lossy(&file.output).into_owned();
    assert!(text.contains("operator<< <T>(int, B<T>)"), "{text}");
    assert!(!file.diagnostics.iter().any(|d| d.code == "CP1098"));
}

fn migrated_text(migration: &Migration, path: &str) -> String {
    String::from_utf8_lossy(&output(migration, path).output).into_owned()
}

/// cuda-samples' CMakeLists (every sample has one): nvcc flags appended to
/// `${CMAKE_CUDA_FLAGS}` inside strings, `$<$<COMPILE_LANGUAGE:CUDA>:...>`
/// options, `cuda_std_17` and NVIDIA architecture lists passed silently or
/// as "approximate", and hipcc then rejected the flags.
#[test]
fn cmake_nvcc_flags_variables_in_strings_and_architecture_lists() {
    let cmake = "project(p LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 75 80 86)\nset(CMAKE_CUDA_FLAGS \"${CMAKE_CUDA_FLAGS} -lineinfo --use_fast_math -G\")\nadd_executable(app app.cu)\ntarget_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)\ntarget_compile_features(app PRIVATE cxx_std_17 cuda_std_17)\nexecute_process(COMMAND cmake -G Ninja .)\nset_target_properties(app PROPERTIES CUDA_ARCHITECTURES native)\n";
    let root = tree(&[("CMakeLists.txt", cmake)]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Hip));
    let text = migrated_text(&migration, "CMakeLists.txt");
    // NVIDIA numbers become AMD GPU names (the profile's default, noted),
    // and an nvcc switch hipcc rejects and needs nothing for goes, with the
    // option call it was alone in (issue 29).
    assert!(
        !text.contains("--extended-lambda") && !text.contains("target_compile_options"),
        "{text}"
    );
    for expected in [
        "set(CMAKE_HIP_ARCHITECTURES gfx90a;gfx942)",
        "set(CMAKE_HIP_FLAGS \"${CMAKE_HIP_FLAGS} -gline-tables-only -ffast-math -G\")",
        "cxx_std_17 hip_std_17",
        "execute_process(COMMAND cmake -G Ninja .)",
        "PROPERTIES HIP_ARCHITECTURES native)",
    ] {
        assert!(text.contains(expected), "no {expected:?} in\n{text}");
    }
    let codes = codes_of(&migration, "CMakeLists.txt");
    for (code, name) in [
        ("CP1957", "CUDA_ARCHITECTURES values"),
        ("CP1956", "-G"),
        ("CP1956", "--extended-lambda"),
    ] {
        assert!(
            codes.contains(&(code.to_owned(), name.to_owned())),
            "{code} {name} missing: {codes:?}"
        );
    }
    let g_sites = codes.iter().filter(|(_, n)| n == "-G").count();
    assert_eq!(g_sites, 1, "cmake -G Ninja is CMake's -G: {codes:?}");
}

/// Every nvcc flag of the HIP tables, appended to CMAKE_CUDA_FLAGS, is
/// converted or reported: none passes silently.
#[test]
fn every_nvcc_flag_the_hip_tables_know_is_converted_or_reported() {
    let flags: Vec<String> = rules()
        .known_cuda_names(Target::Hip)
        .filter(|name| name.starts_with('-'))
        .map(str::to_owned)
        .collect();
    assert!(flags.len() >= 30, "{flags:?}");
    for flag in flags {
        let cmake = format!("string(APPEND CMAKE_CUDA_FLAGS \" {flag}\")\ntarget_compile_options(app PRIVATE {flag})\n");
        let root = tree(&[("CMakeLists.txt", &cmake)]);
        let migration = migrate(root.path(), &MigrateOptions::new(Target::Hip));
        let text = migrated_text(&migration, "CMakeLists.txt");
        let reported = codes_of(&migration, "CMakeLists.txt")
            .iter()
            .filter(|(_, name)| *name == flag)
            .count();
        // Each flag left in the output is reported; one converted or
        // deleted may be reported too (a note saying so).
        let left = text.matches(flag.as_str()).count();
        assert!(
            left <= reported,
            "{flag}: {left} left, {reported} reported:\n{text}"
        );
    }
}

/// cuda-samples' cudaNvSci (`#ifdef cuDeviceGetUuid_v2`) and llm.c's
/// attention_forward (`#if CUBLAS_LOWP == CUDA_R_16BF`): API names the
/// tables know, tested in preprocessor conditions, were left as written
/// without a word (the only silent leftovers on both code bases).
#[test]
fn api_names_in_preprocessor_conditions_are_reported() {
    let source = "#define LOWP CUDA_R_16BF\n#if LOWP == CUDA_R_16BF\nint a;\n#endif\n#ifdef cuDeviceGetUuid_v2\nint b;\n#endif\n";
    let root = tree(&[("c.cu", source)]);
    for target in [Target::Hip, Target::Musa] {
        let migration = migrate(root.path(), &MigrateOptions::new(target));
        let text = migrated_text(&migration, "c.cu");
        assert!(
            text.contains("#if LOWP == CUDA_R_16BF\n"),
            "{target:?}: {text}"
        );
        assert!(
            text.contains("#ifdef cuDeviceGetUuid_v2\n"),
            "{target:?}: {text}"
        );
        let codes = codes_of(&migration, "c.cu");
        for name in ["CUDA_R_16BF", "cuDeviceGetUuid_v2"] {
            assert!(
                codes
                    .iter()
                    .any(|(c, n)| n == name && (c == "CP0017" || c == "CP0001")),
                "{target:?} {name}: {codes:?}"
            );
        }
    }
    let mut dual = MigrateOptions::new(Target::Hip);
    dual.mode = cuport_rewrite::Mode::Dual(vec![Target::Ascend, Target::Hip]);
    let migration = migrate(root.path(), &dual);
    let text = migrated_text(&migration, "c.cu");
    assert!(text.contains("#ifdef cuDeviceGetUuid_v2\n"), "{text}");
    let codes = codes_of(&migration, "c.cu");
    assert!(
        codes.iter().any(|(_, n)| n == "cuDeviceGetUuid_v2"),
        "{codes:?}"
    );
}

/// cuda-samples' `helper_cuda.h`: `_cudaGetErrorEnum(cudaError_t)` and
/// `_cudaGetErrorEnum(CUresult)` both take `hipError_t` after the HIP port,
/// a redefinition hipcc rejected (3 samples) with nothing flagged.
#[test]
fn overloads_on_two_cuda_types_that_become_one_are_reported() {
    let source = "static const char* name(cudaError_t e) { return cudaGetErrorName(e); }\nstatic const char* name(CUresult e) { return \"\"; }\nstatic int other(cudaStream_t s, int n) { return n; }\nstatic int other(CUstream s, float n) { return 0; }\nstatic int ptr(cudaStream_t* s) { return 0; }\nstatic int ptr(CUstream s) { return 1; }\n";
    let root = tree(&[("h.cu", source)]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Hip));
    let reported: Vec<_> = output(&migration, "h.cu")
        .diagnostics
        .iter()
        .filter(|d| d.code == "CP0018")
        .map(|d| (d.line, d.cuda_name.clone()))
        .collect();
    assert_eq!(reported, vec![(2, "CUresult".to_owned())], "{reported:?}");
}

/// cuda-samples' LargeKernelParameter: `__grid_constant__` kernel
/// parameters, which HIP lacks, passed through the HIP port unreported
/// (qualifiers were never looked up for targets that compile kernels).
#[test]
fn a_qualifier_hip_lacks_is_reported() {
    let source = "struct P { int v[8]; };\n__global__ void k(__grid_constant__ const P p, int* out) { out[0] = p.v[0]; }\n";
    let root = tree(&[("k.cu", source)]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Hip));
    let codes = codes_of(&migration, "k.cu");
    assert!(
        codes.contains(&("CP1281".to_owned(), "__grid_constant__".to_owned())),
        "{codes:?}"
    );
    assert!(
        !codes
            .iter()
            .any(|(_, n)| n == "__global__" || n == "__device__"),
        "{codes:?}"
    );
}

/// llm.c's cudnn_att.cpp: `cudnn_handle` becomes a `cuport_dnn_handle_t`
/// on Ascend (a `miopenHandle_t` on HIP) and was then passed, without a
/// word, to cudnn_frontend's `graph->execute(...)`, which expects a
/// `cudnnHandle_t`. The member calls that receive it are reported at the
/// call; the cuDNN call itself, which the port rewrites, is not.
#[test]
fn a_retyped_handle_passed_to_a_member_call_is_reported() {
    let source = concat!(
        "#include <cudnn.h>\n",
        "#include <cudnn_frontend.h>\n",
        "static cudnnHandle_t cudnn_handle;\n",
        "void run(cudnn_frontend::graph::Graph* graph, void* pack) {\n",
        "    check(graph->build_plans(cudnn_handle));\n",
        "    check(graph->execute(cudnn_handle, pack, nullptr));\n",
        "    // graph->validate(cudnn_handle) in a comment\n",
        "    cudnnSetStream(cudnn_handle, 0);\n",
        "    local.cudnn_handle_count(3);\n",
        "}\n",
    );
    for target in [Target::Ascend, Target::Hip] {
        let root = tree(&[("att.cpp", source)]);
        let migration = migrate(root.path(), &MigrateOptions::new(target));
        let file = output(&migration, "att.cpp");
        let reported: Vec<(u32, &str)> = file
            .diagnostics
            .iter()
            .filter(|d| d.code == "CP0019")
            .map(|d| (d.line, d.message.as_str()))
            .collect();
        assert_eq!(
            reported.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
            [5, 6],
            "{target}: {reported:#?}"
        );
        assert!(
            reported[1].1.contains("`graph->execute`")
                && reported[1].1.contains("`cudnn_frontend`"),
            "{}",
            reported[1].1
        );
        // Without a C++ library cuport cannot port, member calls are the
        // project's or the standard library's, retyped with the variable.
        let plain = source
            .replace("#include <cudnn_frontend.h>\n", "")
            .replace("cudnn_frontend::graph::Graph", "Graph");
        let root = tree(&[("att.cpp", &plain)]);
        let migration = migrate(root.path(), &MigrateOptions::new(target));
        let file = output(&migration, "att.cpp");
        assert!(!file.diagnostics.iter().any(|d| d.code == "CP0019"));
    }
}

/// cuda-samples bindlessTexture packs a texture object into a `uint2`:
/// `obj & 0xFFFFFFFF`, `obj >> 32`, `(cudaTextureObject_t)lo | hi << 32`.
/// CUDA's handle is an integer, HIP's a pointer: each bit operation is
/// reported (CP0022), and uses that stay whole are not.
#[test]
fn bit_operations_on_a_texture_object_are_reported_on_hip() {
    let src = "uint2 encode(cudaTextureObject_t obj) {\n  return make_uint2((uint)(obj & 0xFFFFFFFF), (uint)(obj >> 32));\n}\ncudaTextureObject_t decode(uint2 v) {\n  return (((cudaTextureObject_t)v.x) | ((cudaTextureObject_t)v.y) << 32);\n}\n__global__ void k(cudaTextureObject_t tex, float* out) {\n  out[0] = tex2D<float>(tex, 0.5f, 0.5f);\n  out[1] = (tex != 0) && (out[0] > 0.f) ? 1.f : 0.f;\n}\n";
    let root = tree(&[("tex.cu", src)]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Hip));
    let lines: Vec<u32> = output(&migration, "tex.cu")
        .diagnostics
        .iter()
        .filter(|d| d.code == "CP0022")
        .map(|d| d.line)
        .collect();
    assert_eq!(lines, [2, 2, 5, 5]);
    let ascend = migrate(root.path(), &MigrateOptions::new(Target::Ascend));
    assert!(codes_of(&ascend, "tex.cu")
        .iter()
        .all(|(c, _)| c != "CP0022"));
}

/// cuda-samples' Tegra imageKernels: `cudaSurfaceObject_t
/// surfObject[numPlanes] = {0};` with `numPlanes` a parameter. g++ under
/// nvcc accepts the initialised variable-length array, clang (hipcc) does
/// not: CP0023 on HIP. Constant bounds and element assignments are left.
#[test]
fn an_initialised_variable_length_array_is_reported_for_clang_targets() {
    let src = "#define N 4\nconst int M = 2;\nvoid f(int numPlanes, cudaSurfaceObject_t* s) {\n  cudaSurfaceObject_t surf[numPlanes] = {0};\n  int fixed[N] = {0};\n  int other[M] = {0};\n  for (int i = 0; i < 2; i++) { int infos[2]; infos[i] = {}; }\n}\n";
    let root = tree(&[("vla.cu", src)]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Hip));
    let flagged: Vec<(u32, String)> = output(&migration, "vla.cu")
        .diagnostics
        .iter()
        .filter(|d| d.code == "CP0023")
        .map(|d| (d.line, d.cuda_name.clone()))
        .collect();
    assert_eq!(flagged, [(4, "numPlanes".to_owned())]);
    let ascend = migrate(root.path(), &MigrateOptions::new(Target::Ascend));
    assert!(codes_of(&ascend, "vla.cu")
        .iter()
        .all(|(c, _)| c != "CP0023"));
}

/// llm.c `matmul.cuh`: every cuBLASLt name (110 sites) was a manual
/// diagnostic on Ascend. The descriptors, the heuristic query and the
/// matmul now become cuport_blaslt_* helpers; the layouts' data type is a
/// project macro (`CUBLAS_LOWP`), which an enum map cannot see through, so
/// it is passed as written (its body is renamed where it is defined).
/// Epilogues the helper cannot run stay manual, with what to do instead.
#[test]
fn cublaslt_matmuls_become_helpers_and_unsupported_epilogues_stay_manual() {
    let root = tree(&[(
        "matmul.cu",
        "#include <cublasLt.h>\n\
         #define CUBLAS_LOWP CUDA_R_16BF\n\
         void mm(cublasLtHandle_t lt, void* d, const void* a, const void* b, int m, int n, int k, cudaStream_t s) {\n\
         \x20 cublasLtMatmulDesc_t desc;\n\
         \x20 cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);\n\
         \x20 cublasOperation_t t = CUBLAS_OP_T;\n\
         \x20 cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));\n\
         \x20 cublasLtMatrixLayout_t la, lb, ld;\n\
         \x20 cublasLtMatrixLayoutCreate(&la, CUBLAS_LOWP, k, m, k);\n\
         \x20 cublasLtMatrixLayoutCreate(&lb, CUBLAS_LOWP, k, n, k);\n\
         \x20 cublasLtMatrixLayoutCreate(&ld, CUBLAS_LOWP, m, n, m);\n\
         \x20 cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_GELU_AUX_BIAS;\n\
         \x20 if (m == 0) e = CUBLASLT_EPILOGUE_RELU_AUX;\n\
         \x20 cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e));\n\
         \x20 cublasLtMatmulPreference_t pref;\n\
         \x20 cublasLtMatmulPreferenceCreate(&pref);\n\
         \x20 cublasLtMatmulHeuristicResult_t h;\n\
         \x20 int found = 0;\n\
         \x20 cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &h, &found);\n\
         \x20 float alpha = 1, beta = 0;\n\
         \x20 cublasStatus_t st = cublasLtMatmul(lt, desc, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &h.algo, 0, 0, s);\n\
         \x20 if (st != CUBLAS_STATUS_SUCCESS) return;\n\
         }\n",
    )]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Ascend));
    let text = String::from_utf8(output(&migration, "matmul.cu").output.clone()).unwrap();
    for expected in [
        "#define CUBLAS_LOWP ACL_BF16",
        "cuport_blaslt_matmul_desc_create(&desc, CUPORT_BLAS_COMPUTE_32F, ACL_FLOAT);",
        "cuport_blaslt_matmul_desc_set_attribute(desc, CUPORT_BLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));",
        "cuport_blaslt_layout_create(&la, CUBLAS_LOWP, k, m, k);",
        "cuport_blaslt_epilogue_t e = CUPORT_BLASLT_EPILOGUE_GELU_AUX_BIAS;",
        "cuport_blaslt_algo_get_heuristic(lt, desc, la, lb, ld, ld, pref, 1, &h, &found);",
        "aclError st = cuport_blaslt_matmul(lt, desc, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &h.algo, 0, 0, s);",
        "cuport_blaslt_heuristic_t h;",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in\n{text}");
    }
    assert!(text.contains("e = CUBLASLT_EPILOGUE_RELU_AUX;"), "{text}");
    let diagnostics = &output(&migration, "matmul.cu").diagnostics;
    let manual: Vec<&str> = diagnostics
        .iter()
        .filter(|d| d.level == cuport_rewrite::Level::Manual)
        .map(|d| d.cuda_name.as_str())
        .collect();
    assert_eq!(manual, ["CUBLASLT_EPILOGUE_RELU_AUX"], "{diagnostics:#?}");
    let relu_aux = diagnostics
        .iter()
        .find(|d| d.cuda_name == "CUBLASLT_EPILOGUE_RELU_AUX")
        .unwrap();
    assert_eq!(relu_aux.code, "CP2310");
    assert!(
        relu_aux
            .suggestion
            .as_deref()
            .is_some_and(|s| s.contains("aclnnThresholdBackward")),
        "{relu_aux:#?}"
    );
}

/// The SIMT compile check of the fixtures: `project_names/main.cu` includes
/// `cublas_v2.h`, whose calls sit in a header it includes; the include
/// became `cuport_shim.h`, but no helper call in the tree asked for the
/// helper files, so the port included a header it did not write.
#[test]
fn a_library_include_mapped_to_the_shim_writes_the_shim() {
    let root = tree(&[
        (
            "main.cu",
            "#include \"helpers.h\"\n#include <cublas_v2.h>\nint main() { return 0; }\n",
        ),
        ("helpers.h", "#pragma once\n"),
    ]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Ascend));
    let text = String::from_utf8_lossy(&output(&migration, "main.cu").output).into_owned();
    assert!(text.contains("cuport_shim.h"), "{text}");
    let generated: Vec<&str> = migration
        .generated
        .iter()
        .map(|g| g.path.as_str())
        .collect();
    assert!(generated.contains(&"cuport_shim.h"), "{generated:?}");
}

/// llm.c's dev/cuda/common.h calls `memset` with no include of its own:
/// nvcc's cuda_runtime.h brought <string.h>, AscendCL's acl/acl.h does not,
/// so the Ascend port (host or SIMT) failed on the line. The port adds the
/// C++ header where the replaced runtime include brought it; a file that
/// includes it already, or calls nothing from it, is left alone.
#[test]
fn std_functions_cuda_runtime_brought_get_their_header() {
    let root = tree(&[
        (
            "common.h",
            "#include <cuda_runtime.h>\ninline void zero(void* p, size_t n) { memset(p, 0, n); }\n",
        ),
        (
            "own.h",
            "#include <string.h>\n#include <cuda_runtime.h>\ninline void zero(void* p, size_t n) { memset(p, 0, n); }\n",
        ),
        ("plain.h", "#include <cuda_runtime.h>\ninline int one() { return 1; }\n"),
    ]);
    for options in [MigrateOptions::new(Target::Ascend), common::ascend_simt()] {
        let migration = migrate(root.path(), &options);
        let text = |p| String::from_utf8_lossy(&output(&migration, p).output).into_owned();
        assert!(
            text("common.h").contains("#include <cstring>\n"),
            "{}",
            text("common.h")
        );
        assert!(!text("own.h").contains("<cstring>"), "{}", text("own.h"));
        assert!(
            !text("plain.h").contains("<cstring>"),
            "{}",
            text("plain.h")
        );
    }
    let hip = migrate(root.path(), &MigrateOptions::new(Target::Hip));
    let text = String::from_utf8_lossy(&output(&hip, "common.h").output).into_owned();
    assert!(!text.contains("<cstring>"), "{text}");
}

/// Fuzzing found a call that only the port brings in: SIMT renames `__expf`
/// to `expf`, and a second run added <cmath> for it. The header comes in
/// the first run, so porting the output again changes nothing.
#[test]
fn a_call_a_rename_brings_in_gets_its_header_in_the_first_run() {
    let root = tree(&[(
        "fast.cu",
        "__device__ __forceinline__ float helper(float v) { return __expf(v); }\n",
    )]);
    let migration = migrate(root.path(), &common::ascend_simt());
    let text = migrated_text(&migration, "fast.cu");
    assert!(text.contains("#include <cmath>\n"), "{text}");
    assert!(text.contains("return expf(v)"), "{text}");
}

/// llm.c's dev/cuda/common.h reads `deviceProp.maxThreadsPerMultiProcessor`;
/// the Ascend port's property struct has six fields, so the port did not
/// compile and nothing said why. Each use of a field it lacks is reported.
#[test]
fn device_properties_ascend_lacks_are_reported_where_used() {
    let root = tree(&[(
        "props.cu",
        "int threads() {\n  cudaDeviceProp deviceProp;\n  cudaGetDeviceProperties(&deviceProp, 0);\n  return deviceProp.maxThreadsPerMultiProcessor * deviceProp.multiProcessorCount;\n}\n",
    )]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Ascend));
    let diagnostics = &output(&migration, "props.cu").diagnostics;
    let member: Vec<_> = diagnostics
        .iter()
        .filter(|d| d.cuda_name.starts_with("cudaDeviceProp::"))
        .collect();
    assert_eq!(member.len(), 1, "{diagnostics:#?}");
    assert_eq!(
        member[0].cuda_name,
        "cudaDeviceProp::maxThreadsPerMultiProcessor"
    );
    assert_eq!(member[0].line, 4);
    assert_eq!(member[0].level, cuport_rewrite::Level::Unsupported);
}

/// llm.c's dev/cuda/common.h defines `__device__` helpers that call
/// `__shfl_xor_sync`, declared for it by nvcc; its SIMT port called
/// `asc_shfl_xor` with no declaration in sight. A header with device code
/// gets the SIMT device header as a `.cu` file does.
#[test]
fn a_header_of_device_helpers_includes_the_simt_device_api() {
    let root = tree(&[(
        "common.h",
        "#pragma once\n#include <cuda_runtime.h>\n__device__ float warp_sum(float v) { return v + __shfl_xor_sync(0xffffffff, v, 16); }\n",
    )]);
    let migration = migrate(root.path(), &common::ascend_simt());
    let text = String::from_utf8_lossy(&output(&migration, "common.h").output).into_owned();
    assert!(text.contains("#include <simt_api/asc_simt.h>\n"), "{text}");
    assert!(text.contains("asc_shfl_xor(v, 16)"), "{text}");
}

/// cuda-samples' FFT, sparse, solver and level-1 cuBLAS samples on Ascend:
/// every name the tables do not map was "not in the rule tables" (CP0001),
/// though CANN has a counterpart library for each; now the diagnostic names
/// it (CP0035), and names the tables map stay ported.
#[test]
fn unmapped_library_names_name_the_counterpart_on_ascend() {
    let root = tree(&[(
        "fft.cu",
        "#include <cufft.h>\n#include <cusolverDn.h>\n#include <cublas_v2.h>\n\
         void f(cufftHandle plan, cufftComplex* d, cusolverDnHandle_t s, cublasHandle_t h, float* x) {\n\
         \x20 cufftExecC2C(plan, d, d, CUFFT_FORWARD);\n\
         \x20 cusolverDnCreate(&s);\n\
         \x20 cublasSaxpy(h, 4, x, x, 1, x, 1);\n\
         \x20 cudaDeviceSynchronize();\n}\n",
    )]);
    let migration = migrate(root.path(), &MigrateOptions::new(Target::Ascend));
    let file = output(&migration, "fft.cu");
    let by_name = |name: &str| {
        file.diagnostics
            .iter()
            .find(|d| d.cuda_name == name)
            .unwrap_or_else(|| panic!("no diagnostic on {name}: {:#?}", file.diagnostics))
    };
    for (name, counterpart) in [
        (
            "cufftExecC2C",
            "ops-fft (`cann_ops_fft.h`, names `aclfft*`)",
        ),
        ("CUFFT_FORWARD", "ops-fft"),
        ("cusolverDnCreate", "ops-solver (`cann_ops_solver.h`"),
        (
            "cublasSaxpy",
            "ops-blas (`cann_ops_blas.h`, names `aclblas*`)",
        ),
    ] {
        let d = by_name(name);
        assert_eq!(d.code, "CP0035", "{name}: {d:#?}");
        assert!(d.message.contains(counterpart), "{name}: {}", d.message);
        assert!(d
            .reference
            .as_deref()
            .is_some_and(|r| r.contains("gitcode cann/")));
    }
    assert!(
        file.diagnostics.iter().all(|d| d.code != "CP0001"),
        "{:#?}",
        file.diagnostics
    );
    let text = String::from_utf8_lossy(&file.output);
    assert!(text.contains("aclrtSynchronizeDevice()"), "{text}");
}
