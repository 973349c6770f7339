//! HIP ports as a reviewer reads them (issue 29): nothing glued onto a
//! directive line, no cast the argument already has, vector operators and
//! build files as HIP defines them. Each test is a case found in real code
//! or in the issue, kept with the smallest input that shows it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{directive_line_violations, fixture_dirs, migrate_dir, rules};
use cuport_analyze::{analyze_source, AnalyzeOptions};
use cuport_model::{Language, Target};
use cuport_rewrite::{migrate_file, FileMigration, HipLaunch, MigrateOptions};

fn migrate(src: &str, options: &MigrateOptions) -> FileMigration {
    let analysis = analyze_source(Language::Cuda, src.as_bytes(), &AnalyzeOptions::default());
    migrate_file(
        "k.cu",
        Language::Cuda,
        src.as_bytes(),
        &analysis,
        rules(),
        options,
    )
}

fn text(migration: &FileMigration) -> String {
    String::from_utf8_lossy(&migration.output).into_owned()
}

fn ggl() -> MigrateOptions {
    let mut options = MigrateOptions::new(Target::Hip);
    options.hip_launch = HipLaunch::Ggl;
    options
}

/// Migrates `src`, checks that no directive line was touched and that a
/// second run changes nothing, and returns the first run.
fn migrate_checked(src: &str, options: &MigrateOptions) -> FileMigration {
    let first = migrate(src, options);
    let glued = directive_line_violations(src.as_bytes(), &first.edits);
    assert!(glued.is_empty(), "{glued:#?}\n{}", text(&first));
    let second = migrate(&text(&first), options);
    assert!(
        second.edits.is_empty(),
        "second run edited: {:#?}",
        second.edits
    );
    first
}

/// The launch: `--hip-kernel-launch ggl` wrote
/// `dim3(block\n#ifdef X), smem\n#endif, 0, args…`.
#[test]
fn a_launch_with_directives_inside_stays_a_chevron_launch() {
    let src = "void f(float* a, float* b, dim3 grid, dim3 block, int smem) {\n  k<<<grid, block\n#ifdef X\n    , smem\n#endif\n    >>>(a\n#ifdef X\n      , b\n#endif\n  );\n  k<<<grid, block>>>(a);\n}\n";
    let first = migrate_checked(src, &ggl());
    let out = text(&first);
    assert!(out.contains("  k<<<grid, block\n#ifdef X\n    , smem\n#endif\n    >>>(a\n#ifdef X\n      , b\n#endif\n  );"), "{out}");
    assert!(
        out.contains("hipLaunchKernelGGL(k, dim3(grid), dim3(block), 0, 0, a);"),
        "{out}"
    );
    let flagged: Vec<_> = first
        .diagnostics
        .iter()
        .filter(|d| d.code == "CP0024")
        .collect();
    assert_eq!(flagged.len(), 1, "{:#?}", first.diagnostics);
    assert_eq!(flagged[0].line, 2);
}

/// A directive among the arguments alone, and one among the template
/// arguments, are the same case.
#[test]
fn directives_in_arguments_or_template_arguments_keep_the_launch() {
    for src in [
        "void f(float* a) {\n  k<<<1, 2>>>(a,\n#if defined(USE_B)\n    1\n#else\n    2\n#endif\n  );\n}\n",
        "template <typename T> void f(T* x) {\n  k<\n#ifdef __CUDACC__\nT\n#endif\n><<<1, 2>>>(x);\n}\n",
    ] {
        let first = migrate_checked(src, &ggl());
        assert!(!text(&first).contains("hipLaunchKernelGGL"), "{}", text(&first));
        assert!(first.diagnostics.iter().any(|d| d.code == "CP0024"));
    }
}

/// A call a template rebuilds (a default argument written in) with a
/// directive among its arguments is left as written.
#[test]
fn a_template_rewrite_with_directives_in_its_arguments_is_left() {
    let src = "void f(cudaStream_t s, cudaEvent_t e) {\n  cudaStreamWaitEvent(s,\n#ifdef FAST\n    e\n#else\n    e\n#endif\n  );\n}\n";
    let first = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&first);
    assert!(out.contains("cudaStreamWaitEvent(s,\n#ifdef FAST"), "{out}");
    assert!(out.contains("void f(hipStream_t s, hipEvent_t e)"), "{out}");
    assert!(first.diagnostics.iter().any(|d| d.code == "CP0024"));
}

/// Every fixture, every target, both launch styles: no edit touches a
/// directive line except to rename inside it or replace it whole.
#[test]
fn no_fixture_output_glues_code_onto_a_directive_line() {
    for dir in fixture_dirs() {
        for target in Target::ALL {
            let mut setups = vec![MigrateOptions::new(target)];
            if target == Target::Hip {
                setups.push(ggl());
            }
            for options in setups {
                let migration = migrate_dir(&dir, &options);
                for file in migration.files.iter().filter(|f| f.language.is_c_family()) {
                    let glued = directive_line_violations(&file.original, &file.result.edits);
                    assert!(
                        glued.is_empty(),
                        "{}/{} ({target:?}): {glued:#?}",
                        dir.display(),
                        file.path
                    );
                }
            }
        }
    }
}

/// A launch configuration already written `dim3(...)` is not wrapped in a
/// second `dim3(...)` (HIPIFY's kernel_launch_syntax.cu has 46 such lines).
#[test]
fn a_dim3_configuration_is_not_wrapped_twice() {
    let src = "void f(float* a, int x) {\n  k<<<dim3(1, 1, 1), dim3(x)>>>(a);\n  k<<<dim3(1) + 0, x>>>(a);\n}\n";
    let out = text(&migrate_checked(src, &ggl()));
    assert!(
        out.contains("hipLaunchKernelGGL(k, dim3(1, 1, 1), dim3(x), 0, 0, a);"),
        "{out}"
    );
    assert!(
        out.contains("hipLaunchKernelGGL(k, dim3(dim3(1) + 0), dim3(x), 0, 0, a);"),
        "{out}"
    );
}

/// `::k<<<...>>>` became `::hipLaunchKernelGGL(k, ...)`, which does not
/// compile (the macro expands to a statement); the qualifier belongs to
/// the kernel's name.
#[test]
fn a_qualified_kernel_name_goes_into_the_launch_macro_whole() {
    let src = "namespace ns { __global__ void k(); }\n__global__ void g();\nvoid f() {\n  ::g<<<1, 1>>>();\n  ns::k<<<1, 2>>>();\n  ::ns::k<<<1, 2>>>();\n}\n";
    let out = text(&migrate_checked(src, &ggl()));
    assert!(
        out.contains("  hipLaunchKernelGGL(::g, dim3(1), dim3(1), 0, 0);"),
        "{out}"
    );
    assert!(
        out.contains("  hipLaunchKernelGGL(ns::k, dim3(1), dim3(2), 0, 0);"),
        "{out}"
    );
    assert!(
        out.contains("  hipLaunchKernelGGL(::ns::k, dim3(1), dim3(2), 0, 0);"),
        "{out}"
    );
}

/// The casts: `(void**)&p` is not cast again, a kernel passed to
/// hipFuncSetCacheConfig gets the cast HIP's declaration needs, and `&v` of
/// a `void*` needs none.
#[test]
fn a_cast_is_written_only_where_the_argument_lacks_it() {
    let src = "__global__ void k(float* x) {}\nvoid f(void* h, float* p, void* v) {\n  cudaHostGetDevicePointer((void**)&p, h, 0);\n  cudaHostGetDevicePointer(&p, h, 0);\n  cudaHostGetDevicePointer(&v, h, 0);\n  cudaFuncSetCacheConfig(k, cudaFuncCachePreferL1);\n  cudaFuncSetCacheConfig((const void*)k, cudaFuncCachePreferL1);\n  cudaFuncGetAttributes(nullptr,\n                        k);\n}\n";
    let out = text(&migrate_checked(src, &MigrateOptions::new(Target::Hip)));
    assert!(out.contains("  hipHostGetDevicePointer((void**)&p, h, 0);\n  hipHostGetDevicePointer((void**)&p, h, 0);\n  hipHostGetDevicePointer(&v, h, 0);"), "{out}");
    assert!(
        out.contains(
            "hipFuncSetCacheConfig(reinterpret_cast<const void*>(k), hipFuncCachePreferL1);"
        ),
        "{out}"
    );
    assert!(
        out.contains("hipFuncSetCacheConfig((const void*)k, hipFuncCachePreferL1);"),
        "{out}"
    );
    // The call keeps its layout: only the name and the cast change.
    assert!(out.contains("hipFuncGetAttributes(nullptr,\n                        reinterpret_cast<const void*>(k));"), "{out}");
}

/// HIP's hipMallocPitch takes `T**` from 6.3.0 (ROCm/HIP 006ce388): a port
/// for an older release casts, one for the newest does not.
#[test]
fn a_cast_follows_the_selected_release() {
    let src = "void f(float* p, size_t pitch) {\n  cudaMallocPitch(&p, &pitch, 4, 4);\n}\n";
    let newest = text(&migrate_checked(src, &MigrateOptions::new(Target::Hip)));
    assert!(
        newest.contains("hipMallocPitch(&p, &pitch, 4, 4);"),
        "{newest}"
    );
    let mut old = MigrateOptions::new(Target::Hip);
    old.sdk_versions.insert(
        Target::Hip,
        cuport_model::SdkVersion::parse("5.2.3").unwrap(),
    );
    let old = text(&migrate_checked(src, &old));
    assert!(
        old.contains("hipMallocPitch((void**)&p, &pitch, 4, 4);"),
        "{old}"
    );
}

/// A device symbol is written `HIP_SYMBOL(name)`, as HIP documents it; an
/// address or an expression is left as it is.
#[test]
fn a_symbol_argument_is_wrapped_once() {
    let src = "__constant__ float c[4];\n__device__ int g;\nvoid f(float* h) {\n  cudaMemcpyToSymbol(c, h, 16);\n  cudaMemcpyFromSymbol(h, g, 4);\n  cudaMemcpyToSymbol(HIP_SYMBOL(c), h, 16);\n  cudaMemcpyToSymbolAsync(*&c, h, 16, 0, cudaMemcpyHostToDevice, 0);\n}\n";
    let out = text(&migrate_checked(src, &MigrateOptions::new(Target::Hip)));
    assert!(out.contains("hipMemcpyToSymbol(HIP_SYMBOL(c), h, 16);\n  hipMemcpyFromSymbol(h, HIP_SYMBOL(g), 4);\n  hipMemcpyToSymbol(HIP_SYMBOL(c), h, 16);"), "{out}");
    assert!(out.contains("hipMemcpyToSymbolAsync(*&c, h, 16,"), "{out}");
}

/// `cuda.h` then `cuda_runtime.h`, and the fifteen `curand_*.h` headers
/// that all become `hiprand/hiprand_kernel.h`: a second include of one
/// header is deleted where the first is unconditional or in the same
/// branch; in two branches of an `#ifdef` both stay.
#[test]
fn a_header_included_twice_by_the_port_is_included_once() {
    let src = "#include <cuda.h>\n#include <cuda_runtime.h>\n#include \"curand_kernel.h\"\n#include \"curand_normal.h\"\n#include \"curand_uniform.h\" // uniform\n#ifdef X\n#include <curand_mtgp32_host.h>\n#else\n#include <curand_mtgp32_host.h>\n#endif\n#include <curand_poisson.h>\n#include \"channel_descriptor.h\"\n";
    let out = text(&migrate_checked(src, &MigrateOptions::new(Target::Hip)));
    assert_eq!(
        out.matches("#include <hip/hip_runtime.h>").count(),
        1,
        "{out}"
    );
    assert!(!out.contains("curand_normal.h"), "{out}");
    // A line with a comment is not deleted: the comment would go with it.
    assert!(
        out.contains("#include \"hiprand/hiprand_kernel.h\" // uniform"),
        "{out}"
    );
    assert_eq!(out.matches("hiprand_kernel.h").count(), 2, "{out}");
    assert_eq!(
        out.matches("hiprand/hiprand_mtgp32_host.h").count(),
        2,
        "{out}"
    );
    assert!(
        out.contains("#include \"hip/channel_descriptor.h\""),
        "{out}"
    );
}

/// A template that only renames and appends is applied as small edits: the
/// call keeps its line breaks (here a CUDA default HIP's declaration
/// lacks, and CUDA's C++ overloads that are other HIP functions).
#[test]
fn a_renaming_template_keeps_the_call_layout() {
    let src = "void f(cudaStream_t s, cudaEvent_t e, cudaGraph_t g, cudaGraphExec_t* x, float** p) {\n  cudaStreamWaitEvent(s,\n                      e);\n  cudaEventCreate(&e, cudaEventDisableTiming);\n  cudaEventCreate(&e);\n  cudaGraphInstantiate(x, g, 0);\n  cudaMallocHost(p,\n                 64);\n}\n";
    let out = text(&migrate_checked(src, &MigrateOptions::new(Target::Hip)));
    assert!(
        out.contains("  hipStreamWaitEvent(s,\n                      e, 0);"),
        "{out}"
    );
    assert!(
        out.contains("hipEventCreateWithFlags(&e, hipEventDisableTiming);\n  hipEventCreate(&e);"),
        "{out}"
    );
    assert!(
        out.contains("hipGraphInstantiateWithFlags(x, g, 0);"),
        "{out}"
    );
    assert!(
        out.contains("  hipHostMalloc(p,\n                 64, hipHostMallocDefault);"),
        "{out}"
    );
}

/// cuOccupancyMaxPotentialBlockSize's shared-memory callback has no HIP
/// parameter: it is dropped, with an approximate diagnostic saying so.
#[test]
fn the_occupancy_callback_hip_lacks_is_dropped_and_reported() {
    let src = "void f(int* g, int* b, CUfunction k) {\n  cuOccupancyMaxPotentialBlockSize(g, b, k, nullptr, 0, 256);\n}\n";
    let first = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&first);
    assert!(
        out.contains("hipModuleOccupancyMaxPotentialBlockSize(g, b, k, 0, 256);"),
        "{out}"
    );
    assert!(first
        .diagnostics
        .iter()
        .any(|d| d.cuda_name == "cuOccupancyMaxPotentialBlockSize"
            && d.level == cuport_rewrite::Level::Approximate));
}

/// `typedef ::cub::BlockRadixSort<...>`: the keyword before `::` was read as
/// the first part of a qualified name, so the CUB name was never seen.
#[test]
fn a_cub_name_from_the_global_scope_becomes_hipcub() {
    let src = "#include <cub/cub.cuh>\ntemplate <typename T> __global__ void k() {\n  typedef ::cub::BlockRadixSort<T, 1024, 4> A;\n  typedef cub::BlockLoad<int*, 128, 4, cub::BLOCK_LOAD_TRANSPOSE> B;\n}\n";
    let out = text(&migrate_checked(src, &MigrateOptions::new(Target::Hip)));
    assert!(
        out.contains("typedef ::hipcub::BlockRadixSort<T, 1024, 4> A;"),
        "{out}"
    );
    assert!(
        out.contains("typedef hipcub::BlockLoad<int*, 128, 4, hipcub::BLOCK_LOAD_TRANSPOSE> B;"),
        "{out}"
    );
}
