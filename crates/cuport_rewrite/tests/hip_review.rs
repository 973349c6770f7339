//! HIP ports as a reviewer reads them (issue 29): nothing glued onto a
//! directive line, no cast the argument already has, vector operators and
//! build files as HIP defines them. Each test is a case found in real code
//! or in the issue, kept with the smallest input that shows it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use common::{directive_line_violations, fixture_dirs, migrate_dir};
use cuport_model::Target;
use cuport_rewrite::{FileMigration, HipLaunch, MigrateOptions};

/// Migrates `src` as `k.cu` of a tree, as `cuport migrate` does (the scan
/// knows the names the rule tables know).
fn migrate(src: &str, options: &MigrateOptions) -> FileMigration {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), src).unwrap();
    let migration = migrate_dir(dir.path(), options);
    migration
        .files
        .into_iter()
        .find(|f| f.path == "k.cu")
        .map(|f| f.result)
        .unwrap()
}

/// The HIP port of `src`, checked as `migrate_checked` checks it.
fn hip_port(src: &str) -> String {
    text(&migrate_checked(src, &MigrateOptions::new(Target::Hip)))
}

/// The HIP port of `src` with GGL launches, checked as `migrate_checked`
/// checks it.
fn ggl_port(src: &str) -> String {
    text(&migrate_checked(src, &ggl()))
}

/// Fails with the whole port unless it contains `needle`.
fn assert_has(out: &str, needle: &str) {
    assert!(out.contains(needle), "{out}");
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

/// `(line, CUDA name)` of each diagnostic with `code`, in order.
fn reported_with_code<'m>(migration: &'m FileMigration, code: &str) -> Vec<(u32, &'m str)> {
    migration
        .diagnostics
        .iter()
        .filter(|d| d.code == code)
        .map(|d| (d.line, d.cuda_name.as_str()))
        .collect()
}

/// Debian's hipcc on `source` saved as `name` (`-fsyntax-only` for gfx90a,
/// warnings off, `extra` arguments before the file), in a scratch folder;
/// None where hipcc is not installed (CI installs it).
fn hipcc_syntax_check(
    name: &str,
    source: &[u8],
    extra: &[&std::ffi::OsStr],
) -> Option<std::process::Output> {
    if !common::require("hipcc") {
        return None;
    }
    Some(syntax_check_with(
        std::ffi::OsStr::new("hipcc"),
        name,
        source,
        extra,
    ))
}

/// `hipcc` (a path or a command) on `source` as [`hipcc_syntax_check`]
/// runs Debian's.
fn syntax_check_with(
    hipcc: &std::ffi::OsStr,
    name: &str,
    source: &[u8],
    extra: &[&std::ffi::OsStr],
) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, source).unwrap();
    let mut command = std::process::Command::new(hipcc);
    common::scratch_in(&mut command, dir.path());
    let output = command
        .args(["-fsyntax-only", "--offload-arch=gfx90a", "-w"])
        .args(extra)
        .arg(&path)
        .output()
        .unwrap();
    output
}

/// Fails unless hipcc accepts `source` (skipped where hipcc is missing).
fn assert_hipcc_compiles(name: &str, source: &[u8], port: &str) {
    if let Some(compiled) = hipcc_syntax_check(name, source, &[]) {
        assert!(
            compiled.status.success(),
            "{}\n{port}",
            String::from_utf8_lossy(&compiled.stderr)
        );
    }
}

/// The launch: `--hip-kernel-launch ggl` wrote
/// `dim3(block\n#ifdef X), smem\n#endif, 0, args…`.
#[test]
fn a_launch_with_directives_inside_stays_a_chevron_launch() {
    let src = "void f(float* a, float* b, dim3 grid, dim3 block, int smem) {\n  k<<<grid, block\n#ifdef X\n    , smem\n#endif\n    >>>(a\n#ifdef X\n      , b\n#endif\n  );\n  k<<<grid, block>>>(a);\n}\n";
    let first = migrate_checked(src, &ggl());
    let out = text(&first);
    assert_has(&out, "  k<<<grid, block\n#ifdef X\n    , smem\n#endif\n    >>>(a\n#ifdef X\n      , b\n#endif\n  );");
    assert!(
        out.contains("hipLaunchKernelGGL(k, dim3(grid), dim3(block), 0, 0, a);"),
        "{out}"
    );
    let flagged: Vec<_> = first
        .diagnostics
        .iter()
        .filter(|d| d.code == "CP0029")
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
        assert!(first.diagnostics.iter().any(|d| d.code == "CP0029"));
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
    assert_has(&out, "void f(hipStream_t s, hipEvent_t e)");
    assert!(first.diagnostics.iter().any(|d| d.code == "CP0029"));
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
    let out = ggl_port(src);
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
    let out = ggl_port(src);
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
    let out = hip_port(src);
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
    let newest = hip_port(src);
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
    let out = hip_port(src);
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
    let out = hip_port(src);
    assert_eq!(
        out.matches("#include <hip/hip_runtime.h>").count(),
        1,
        "{out}"
    );
    assert!(!out.contains("curand_normal.h"), "{out}");
    // A line with a comment is not deleted: the comment would go with it.
    assert_has(&out, "#include \"hiprand/hiprand_kernel.h\" // uniform");
    assert_eq!(out.matches("hiprand_kernel.h").count(), 2, "{out}");
    assert_eq!(
        out.matches("hiprand/hiprand_mtgp32_host.h").count(),
        2,
        "{out}"
    );
    assert_has(&out, "#include \"hip/channel_descriptor.h\"");
}

/// A template that only renames and appends is applied as small edits: the
/// call keeps its line breaks (here a CUDA default HIP's declaration
/// lacks, and CUDA's C++ overloads that are other HIP functions).
#[test]
fn a_renaming_template_keeps_the_call_layout() {
    let src = "void f(cudaStream_t s, cudaEvent_t e, cudaGraph_t g, cudaGraphExec_t* x, float** p) {\n  cudaStreamWaitEvent(s,\n                      e);\n  cudaEventCreate(&e, cudaEventDisableTiming);\n  cudaEventCreate(&e);\n  cudaGraphInstantiate(x, g, 0);\n  cudaMallocHost(p,\n                 64);\n}\n";
    let out = hip_port(src);
    assert_has(
        &out,
        "  hipStreamWaitEvent(s,\n                      e, 0);",
    );
    assert_has(
        &out,
        "hipEventCreateWithFlags(&e, hipEventDisableTiming);\n  hipEventCreate(&e);",
    );
    assert_has(&out, "hipGraphInstantiateWithFlags(x, g, 0);");
    assert_has(
        &out,
        "  hipHostMalloc(p,\n                 64, hipHostMallocDefault);",
    );
}

/// cuOccupancyMaxPotentialBlockSize's shared-memory callback has no HIP
/// parameter: it is dropped, with an approximate diagnostic saying so.
#[test]
fn the_occupancy_callback_hip_lacks_is_dropped_and_reported() {
    let src = "void f(int* g, int* b, CUfunction k) {\n  cuOccupancyMaxPotentialBlockSize(g, b, k, nullptr, 0, 256);\n}\n";
    let first = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&first);
    assert_has(
        &out,
        "hipModuleOccupancyMaxPotentialBlockSize(g, b, k, 0, 256);",
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
    let out = hip_port(src);
    assert_has(&out, "typedef ::hipcub::BlockRadixSort<T, 1024, 4> A;");
    assert_has(
        &out,
        "typedef hipcub::BlockLoad<int*, 128, 4, hipcub::BLOCK_LOAD_TRANSPOSE> B;",
    );
}

/// A project's own operators on CUDA vector types, every kind it may
/// define: on HIP only +=, -=, *=, /= with a vector operand and ++/-- are
/// ambiguous (HIP_vector_type's non-template members), and from HIP 5.7
/// binary * and / on two vectors (non-template friends: 12 cuda-samples
/// units with helper_math.h failed with Debian sid's hipcc 6.4.3), so only
/// those are compiled out; the port compiles with Debian's hipcc (5.2.3,
/// where HIP's * and / are templates that then apply), uses included.
#[test]
fn a_projects_vector_operators_are_compiled_out_only_where_hip_has_them() {
    let mut src = String::from("#include <cuda_runtime.h>\n");
    let mut uses = String::new();
    for v in ["float4", "int4"] {
        for op in ["+=", "-=", "*=", "/="] {
            src.push_str(&format!(
                "inline __host__ __device__ void operator{op}({v} &a, {v} b) {{ a.x {op} b.x; }}\n"
            ));
            src.push_str(&format!(
                "inline __host__ __device__ void operator{op}({v} &a, int b) {{ a.x {op} b; }}\n"
            ));
            uses.push_str(&format!("  {{ {v} x{{}}, y{{}}; x {op} y; x {op} 2; }}\n"));
        }
        for op in ["+", "-", "*", "/", "==", "!="] {
            src.push_str(&format!(
                "inline __host__ __device__ {v} operator{op}({v} a, {v} b) {{ return a; }}\n"
            ));
            uses.push_str(&format!(
                "  {{ {v} x{{}}, y{{}}; auto z = x {op} y; (void)z; }}\n"
            ));
        }
        src.push_str(&format!(
            "inline __host__ __device__ {v} operator-({v} &a) {{ return a; }}\n"
        ));
        src.push_str(&format!(
            "inline __host__ __device__ {v}& operator++({v} &a) {{ return a; }}\n"
        ));
        src.push_str(&format!(
            "inline __host__ __device__ {v} operator--({v} &a, int) {{ return a; }}\n"
        ));
        uses.push_str(&format!(
            "  {{ {v} x{{}}; auto z = -x; ++x; x--; (void)z; }}\n"
        ));
    }
    src.push_str("inline __host__ __device__ void operator%=(int4 &a, int4 b) { a.x %= b.x; }\n");
    src.push_str("inline __host__ __device__ void operator%=(float4 &a, float4 b) { }\n");
    uses.push_str("  { int4 x{}, y{}; x %= y; float4 f{}, g{}; f %= g; }\n");
    src.push_str(&format!("__global__ void k() {{\n{uses}}}\n"));
    let first = migrate_checked(&src, &MigrateOptions::new(Target::Hip));
    let out = text(&first);
    let guarded: Vec<&str> = first
        .diagnostics
        .iter()
        .filter(|d| d.code == "CP0015")
        .map(|d| d.cuda_name.as_str())
        .collect();
    // Per vector type: four compound assignments, ++, --, * and /.
    assert_eq!(guarded.len(), 16, "{guarded:?}\n{out}");
    assert!(
        guarded.iter().all(|g| [
            "operator+=",
            "operator-=",
            "operator*=",
            "operator/=",
            "operator++",
            "operator--",
            "operator*",
            "operator/"
        ]
        .contains(g)),
        "{guarded:?}"
    );
    assert_hipcc_compiles("ops.hip", &first.output, &out);
}

/// CUDA's dim3 converts from uint3, HIP's does not: `make_uint3(...)` and a
/// uint3 variable are written with HIP's constructor; the uint3 a call
/// returns is reported (spelling out its members would call it three
/// times). Everything else compiles with Debian's hipcc.
#[test]
fn a_dim3_from_a_uint3_is_written_with_hips_constructor() {
    let src = "#include <cuda_runtime.h>\n__device__ uint3 idx() { return make_uint3(1, 2, 3); }\n__global__ void k(int* out) {\n  dim3 a = make_uint3(1, 2, 3);\n  uint3 u = make_uint3(4, 5, 6);\n  dim3 c = u;\n  dim3 d(u);\n  c = u;\n  dim3 e = threadIdx;\n  dim3 h = idx();\n  out[0] = a.x + c.x + d.x + e.x + h.x;\n}\n";
    let first = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&first);
    assert_has(&out, "dim3 a = dim3(1, 2, 3);");
    assert!(out.contains("dim3 c = dim3(u.x, u.y, u.z);\n  dim3 d(dim3(u.x, u.y, u.z));\n  c = dim3(u.x, u.y, u.z);"), "{out}");
    let reported: Vec<u32> = first
        .diagnostics
        .iter()
        .filter(|d| d.code == "CP1095")
        .map(|d| d.line)
        .collect();
    assert_eq!(reported, [10]);
    let Some(compiled) = hipcc_syntax_check("dim3.hip", &first.output, &[]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&compiled.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error:")).collect();
    assert!(
        errors.len() == 1 && errors[0].contains("dim3.hip:10:"),
        "{stderr}\n{out}"
    );
}

/// CUDA's WMMA (mma.h, nvcuda::wmma) becomes rocWMMA, including names
/// written through `using namespace nvcuda;`; the fragment type carries
/// the wavefront caveat, 1-bit MMA is reported with what to use instead.
/// With `CUPORT_ROCWMMA_INCLUDE` (rocWMMA's library/include, e.g. of its
/// rocm-5.2.3 tag) the port is compiled with hipcc.
#[test]
fn wmma_becomes_rocwmma() {
    let src = "#include <mma.h>\nusing namespace nvcuda;\n__global__ void k(half* a, half* b, float* c) {\n  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a_frag;\n  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b_frag;\n  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> c_frag;\n  wmma::fill_fragment(c_frag, 0.0f);\n  wmma::load_matrix_sync(a_frag, a, 16);\n  wmma::load_matrix_sync(b_frag, b, 16);\n  wmma::mma_sync(c_frag, a_frag, b_frag, c_frag);\n  wmma::store_matrix_sync(c, c_frag, 16, wmma::mem_row_major);\n}\n__global__ void bits() {\n  namespace w = nvcuda::wmma;\n  w::bmma_sync();\n}\n";
    let first = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&first);
    assert_has(
        &out,
        "#include <rocwmma/rocwmma.hpp>\nusing namespace rocwmma;",
    );
    assert_has(
        &out,
        "rocwmma::fragment<rocwmma::matrix_a, 16, 16, 16, half, rocwmma::row_major> a_frag;",
    );
    assert_has(&out, "rocwmma::mma_sync(c_frag, a_frag, b_frag, c_frag);");
    assert_has(
        &out,
        "rocwmma::store_matrix_sync(c, c_frag, 16, rocwmma::mem_row_major);",
    );
    assert!(
        !out.contains("nvcuda") || out.contains("w::bmma_sync"),
        "{out}"
    );
    assert!(first
        .diagnostics
        .iter()
        .any(|d| d.cuda_name == "nvcuda::wmma::bmma_sync"
            && d.level == cuport_rewrite::Level::Unsupported));
    assert!(
        !first.diagnostics.iter().any(|d| d.code == "CP0001"),
        "{:#?}",
        first.diagnostics
    );
    let Some(include) = std::env::var_os("CUPORT_ROCWMMA_INCLUDE") else {
        eprintln!("!!! CUPORT_ROCWMMA_INCLUDE is not set: the rocWMMA port was not compiled !!!");
        return;
    };
    let kernel = out.split("__global__ void bits").next().unwrap();
    let extra = [
        std::ffi::OsStr::new("-std=c++17"),
        std::ffi::OsStr::new("-I"),
        include.as_os_str(),
    ];
    let Some(compiled) = hipcc_syntax_check("wmma.hip", kernel.as_bytes(), &extra) else {
        return;
    };
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
}

/// A CMake CUDA project with relocatable device code (a kernel calls a
/// device function from another .cu file), NVIDIA architectures, nvcc
/// flags and CUDA:: targets: ported with `--hip-arch gfx90a`, it configures
/// with CMake's HIP language and builds with Debian's HIP toolchain.
#[test]
fn a_cmake_project_builds_with_cmakes_hip_language() {
    let cmake = "cmake_minimum_required(VERSION 3.21)\nproject(rdc LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 80 90)\nset(CMAKE_CUDA_STANDARD 17)\nfind_package(CUDAToolkit REQUIRED)\nadd_executable(rdc main.cu scale.cu host.cpp)\nset_target_properties(rdc PROPERTIES\n  CUDA_SEPARABLE_COMPILATION ON\n  CUDA_RESOLVE_DEVICE_SYMBOLS ON)\ntarget_compile_options(rdc PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math -lineinfo --expt-relaxed-constexpr -Xcompiler=-Wall>)\ntarget_link_libraries(rdc PRIVATE CUDA::cudart)\n";
    let main = "#include <cstdio>\nextern __device__ float twice(float x);\nint answer();\n__global__ void k(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\nint main() {\n  float* d = nullptr;\n  cudaMalloc(&d, 4 * sizeof(float));\n  k<<<1, 4>>>(d);\n  cudaDeviceSynchronize();\n  cudaFree(d);\n  std::printf(\"%d\\n\", answer());\n  return 0;\n}\n";
    let scale = "__device__ float twice(float x) { return 2.0f * x; }\n";
    let host = "int answer() { return 42; }\n";
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("CMakeLists.txt", cmake),
        ("main.cu", main),
        ("scale.cu", scale),
        ("host.cpp", host),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let mut options = MigrateOptions::new(Target::Hip);
    options.gpu_architectures = vec!["gfx90a".into()];
    let migration = migrate_dir(dir.path(), &options);
    let out = common::write_output(&migration);
    let tree = out.path().join("tree");
    let ported = std::fs::read_to_string(tree.join("CMakeLists.txt")).unwrap();
    for expected in [
        "project(rdc LANGUAGES CXX HIP)",
        "set(CMAKE_HIP_ARCHITECTURES gfx90a)",
        "find_package(hip REQUIRED)",
        "set_source_files_properties(main.cu scale.cu PROPERTIES LANGUAGE HIP)",
        "target_compile_options(rdc PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-fgpu-rdc>)\ntarget_link_options(rdc PRIVATE $<$<LINK_LANGUAGE:HIP>:-fgpu-rdc>)",
        "$<$<COMPILE_LANGUAGE:HIP>:-ffast-math -gline-tables-only -Wall>",
        "target_link_libraries(rdc PRIVATE hip::host)",
    ] {
        assert!(ported.contains(expected), "{expected}\n{ported}");
    }
    assert!(
        !ported.contains("SEPARABLE")
            && !ported.contains("RESOLVE_DEVICE")
            && !ported.contains("PROPERTIES\n"),
        "{ported}"
    );
    if !common::require("cmake") || !common::require("hipcc") {
        return;
    }
    let build = out.path().join("build");
    let mut configure = std::process::Command::new("cmake");
    configure.arg("-S").arg(&tree).arg("-B").arg(&build);
    common::scratch_in(&mut configure, out.path());
    // Debian splits ROCm over /usr: CMake's HIP language looks for
    // hip-lang-config.cmake under <ROCm root>/lib/cmake, so a root with that
    // one link stands in, and clang needs the ROCm paths hipcc passes it.
    let debian = std::path::Path::new("/usr/lib/x86_64-linux-gnu/cmake/hip-lang");
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
    let configured = configure.output().unwrap();
    assert!(
        configured.status.success(),
        "{}{}",
        String::from_utf8_lossy(&configured.stdout),
        String::from_utf8_lossy(&configured.stderr)
    );
    common::run_ok(common::scratch_in(
        std::process::Command::new("cmake")
            .arg("--build")
            .arg(&build),
        out.path(),
    ));
    let link = std::fs::read_to_string(build.join("CMakeFiles/rdc.dir/link.txt")).unwrap();
    assert!(
        link.contains("-fgpu-rdc") && link.contains("--offload-arch=gfx90a"),
        "{link}"
    );
    assert!(build.join("rdc").is_file());
}

/// nvcc switches hipcc rejects and needs nothing for are deleted, and so is
/// what would be left doing nothing: cuda-samples' `set(CMAKE_CUDA_FLAGS
/// "${CMAKE_CUDA_FLAGS} -Wno-deprecated-gpu-targets")` (44 files) became
/// `set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS}")`.
#[test]
fn a_dropped_nvcc_switch_leaves_no_empty_setting_behind() {
    let cmake = "project(p LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_FLAGS \"${CMAKE_CUDA_FLAGS} -Wno-deprecated-gpu-targets\")\nset(CMAKE_CUDA_FLAGS \"${CMAKE_CUDA_FLAGS} --expt-relaxed-constexpr -O2\")\nstring(APPEND CMAKE_CUDA_FLAGS \" --extended-lambda\")\nadd_executable(app app.cu)\ntarget_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-extended-lambda>)\ntarget_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fopenmp,-Wall>)\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CMakeLists.txt"), cmake).unwrap();
    std::fs::write(dir.path().join("app.cu"), "__global__ void k() {}\n").unwrap();
    let migration = migrate_dir(dir.path(), &MigrateOptions::new(Target::Hip));
    let file = migration
        .files
        .iter()
        .find(|f| f.path == "CMakeLists.txt")
        .unwrap();
    let out = String::from_utf8_lossy(&file.result.output).into_owned();
    assert_eq!(
        out,
        "project(p LANGUAGES CXX HIP)\nset(CMAKE_HIP_FLAGS \"${CMAKE_HIP_FLAGS} -O2\")\nadd_executable(app app.cu)\nset_source_files_properties(app.cu PROPERTIES LANGUAGE HIP)\ntarget_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-fopenmp -Wall>)\n"
    );
    let notes = file
        .result
        .diagnostics
        .iter()
        .filter(|d| d.level == cuport_rewrite::Level::Note)
        .count();
    assert_eq!(notes, 5, "{:#?}", file.result.diagnostics);
}

/// cuda-samples' conjugateGradient declares `cublasStatus_t cublasStatus;`:
/// `cublasStatus` is also a legacy cuBLAS type name, so every use of the
/// variable became `hipblasStatus_t = hipblasCreate(...)`.
#[test]
fn a_variable_named_like_a_cuda_type_stays_a_variable() {
    let src = "#include <cublas_v2.h>\nint f(cublasHandle_t h) {\n  cublasStatus_t cublasStatus;\n  cublasStatus = cublasCreate(&h);\n  return cublasStatus == CUBLAS_STATUS_SUCCESS;\n}\n";
    let out = hip_port(src);
    assert_has(&out, "  hipblasStatus_t cublasStatus;\n  cublasStatus = hipblasCreate(&h);\n  return cublasStatus == HIPBLAS_STATUS_SUCCESS;");
}

/// HIPIFY's unit test libraries/cuBLAS/cublas_v1.cu: a file that includes
/// the legacy cublas.h calls `cublasSscal(n, alpha, x, incx)` without a
/// handle; renamed to hipblasSscal it called the handle form with the
/// wrong arguments. It stays, reported; the same name with cublas_v2.h is
/// the handle form and is renamed.
#[test]
fn a_legacy_cublas_call_is_kept_and_reported() {
    let body = "void f(float* x, float a, int n) {\n  cublasSscal(n, a, x, 1);\n  cublasSetVector(n, sizeof(float), x, 1, x, 1);\n}\n";
    let legacy = migrate(
        &format!("#include \"cublas.h\"\n{body}"),
        &MigrateOptions::new(Target::Hip),
    );
    let out = text(&legacy);
    assert_has(&out, "  cublasSscal(n, a, x, 1);");
    assert!(out.contains("hipblasSetVector("), "{out}");
    let reported: Vec<&str> = legacy
        .diagnostics
        .iter()
        .filter(|d| d.message.contains("legacy API"))
        .map(|d| d.cuda_name.as_str())
        .collect();
    assert_eq!(reported, ["cublasSscal"], "{:#?}", legacy.diagnostics);
    let current = migrate(
        &format!("#include <cublas_v2.h>\n{body}"),
        &MigrateOptions::new(Target::Hip),
    );
    assert!(
        text(&current).contains("hipblasSscal(n, a, x, 1);"),
        "{}",
        text(&current)
    );
}

/// HIPIFY's unit tests (cusparse2hipsparse_12000.cu): hipsparseSpSM_solve
/// has an eleventh parameter, the external buffer, so a renamed call of
/// cuSPARSE's ten-argument form does not compile.
#[test]
fn spsm_solve_gets_hipsparse_external_buffer_argument() {
    let src = "#include <cusparse.h>\nvoid f(cusparseHandle_t h, cusparseOperation_t op, const void* alpha, cusparseSpMatDescr_t a, cusparseDnMatDescr_t b, cusparseDnMatDescr_t c, cudaDataType t, cusparseSpSMAlg_t alg, cusparseSpSMDescr_t d) {\n  cusparseSpSM_solve(h, op, op, alpha, a, b, c, t, alg, d);\n}\n";
    let first = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&first);
    assert_has(
        &out,
        "  hipsparseSpSM_solve(h, op, op, alpha, a, b, c, t, alg, d, nullptr);\n",
    );
}

/// A header of the form `#pragma once`, a comment, declarations
/// (CX9898/cmake-cuda-sample's kernel.cuh): the runtime header went above
/// `#pragma once`; a reviewer puts it below.
#[test]
fn runtime_header_goes_below_pragma_once() {
    let src = "#pragma once\n\n/**\n * Adds vectors.\n **/\n__global__ void add(int n, const float* a, float* c);\n";
    let out = hip_port(src);
    assert!(
        out.starts_with("#pragma once\n#include <hip/hip_runtime.h>\n\n/**"),
        "{out}"
    );
}

/// pytorch/extension-cpp's muladd.cu: `at::DeviceType::CUDA` is the device
/// type ROCm builds of PyTorch report for AMD GPUs; it stays, with no
/// "not in the rule tables" report.
#[test]
fn torch_device_type_cuda_stays_without_a_report() {
    let src = "#include <ATen/cuda/CUDAContext.h>\nvoid f(const at::Tensor& a) {\n  TORCH_INTERNAL_ASSERT(a.device().type() == at::DeviceType::CUDA);\n}\n";
    let first = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    assert!(text(&first).contains("== at::DeviceType::CUDA);"));
    let reported: Vec<_> = first
        .diagnostics
        .iter()
        .filter(|d| d.code == "CP0001")
        .collect();
    assert!(reported.is_empty(), "{reported:#?}");
}

/// CX9898/cmake-cuda-sample's CudaTimeCalculator.hpp: a project's
/// `namespace cudaTimeCalculator { ... }` was reported as a CUDA runtime
/// name missing from the tables. It is the project's name: kept, unreported.
#[test]
fn a_project_namespace_named_like_cuda_is_not_reported() {
    let src = "#include <cuda_runtime.h>\nnamespace cudaTimeCalculator {\nvoid check(cudaError_t e) {}\n}\nvoid g() { cudaTimeCalculator::check(cudaSuccess); }\n";
    let first = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&first);
    assert_has(
        &out,
        "namespace cudaTimeCalculator {\nvoid check(hipError_t e) {}",
    );
    assert_has(&out, "cudaTimeCalculator::check(hipSuccess);");
    let reported: Vec<_> = first
        .diagnostics
        .iter()
        .filter(|d| d.code == "CP0001")
        .collect();
    assert!(reported.is_empty(), "{reported:#?}");
}

/// HeCBench `rle-cuda` (and CUB's own examples): `using namespace cub;`
/// stayed, so nothing compiled against hipCUB, which has no `cub`
/// namespace; every `cub::DeviceX::Method` call was reported "not in the
/// rule tables" although hipCUB declares it. The port below compiles with
/// Debian's hipcc against hipCUB and rocPRIM 5.3.3 (docs/hip.md, "CUB and
/// Thrust").
#[test]
fn cub_device_calls_headers_and_using_namespace_port_to_hipcub() {
    let src = "#include <cub/cub.cuh>\n#include <cub/util_allocator.cuh>\nusing namespace cub;\n\
               CachingDeviceAllocator g_allocator(true);\n\
               void f(int *d, size_t n) {\n  cub::DeviceRadixSort::SortPairs(nullptr, n, d, d, d, d, 4);\n  \
               cub::DeviceScan::InclusiveSum(nullptr, n, d, d, 4);\n}\n";
    let migration = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&migration);
    assert_has(&out, "using namespace hipcub;");
    assert_has(
        &out,
        "#include <hipcub/hipcub.hpp>\nusing namespace hipcub;",
    );
    assert_has(&out, "hipcub::DeviceRadixSort::SortPairs(");
    assert_has(&out, "hipcub::DeviceScan::InclusiveSum(");
    assert!(
        migration.diagnostics.is_empty(),
        "{:#?}",
        migration.diagnostics
    );
}

/// A CUB member hipCUB does not declare is reported, not renamed into a
/// name that does not exist.
#[test]
fn a_cub_member_hipcub_lacks_is_reported() {
    let src = "#include <cub/cub.cuh>\nvoid f(int *d, size_t n) { cub::DeviceReduce::NoSuchReduction(nullptr, n, d, d, 4); }\n";
    let migration = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    assert!(text(&migration).contains("cub::DeviceReduce::NoSuchReduction("));
    assert!(
        migration
            .diagnostics
            .iter()
            .any(|d| d.cuda_name == "cub::DeviceReduce::NoSuchReduction"),
        "{:#?}",
        migration.diagnostics
    );
}

/// Thrust on HIP is rocThrust, with Thrust's names and header paths: every
/// Thrust include and most names were reported "not in the rule tables"
/// (HeCBench `rle-cuda`: `thrust::constant_iterator`). What rocThrust ships
/// stays without a report; what it lacks is reported.
#[test]
fn thrust_names_and_headers_rocthrust_ships_stay_without_a_report() {
    let kept = "#include <thrust/device_vector.h>\n#include <thrust/iterator/constant_iterator.h>\n\
                #include <thrust/sort.h>\nvoid f() {\n  thrust::device_vector<int> v(4);\n  \
                thrust::sort(thrust::device, v.begin(), v.end());\n  thrust::constant_iterator<int> c(1);\n  \
                using namespace thrust::placeholders;\n}\n";
    let migration = migrate_checked(kept, &MigrateOptions::new(Target::Hip));
    assert_eq!(text(&migration), kept);
    assert!(
        migration.diagnostics.is_empty(),
        "{:#?}",
        migration.diagnostics
    );
    // Thrust's CUDA backend is rocThrust's HIP backend (ONNX Runtime's HIP
    // build ports it so); a name rocThrust lacks is reported.
    let cuda_backend = "#include <thrust/system/cuda/execution_policy.h>\n\
                        void f(int *p) { thrust::sort(thrust::cuda::par, p, p + 4); thrust::no_such_algorithm(p); }\n";
    let migration = migrate_checked(cuda_backend, &MigrateOptions::new(Target::Hip));
    let out = text(&migration);
    assert_has(&out, "#include <thrust/system/hip/execution_policy.h>");
    assert_has(&out, "thrust::sort(thrust::hip::par, p, p + 4)");
    let reported: Vec<&str> = migration
        .diagnostics
        .iter()
        .map(|d| d.cuda_name.as_str())
        .collect();
    assert_eq!(reported, ["thrust::no_such_algorithm"]);
}

/// The ported files of a tree made of `files` (path, text), by path.
fn port_tree(files: &[(&str, &str)], options: &MigrateOptions) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let mut out: Vec<(String, String)> = migrate_dir(dir.path(), options)
        .files
        .into_iter()
        .map(|f| (f.path, text(&f.result)))
        .collect();
    out.sort();
    out
}

/// HeCBench `morphology`: `main.cu` includes `"morphology.h"` first, which
/// includes `<cuda.h>`. The expert port renames that include and adds
/// nothing to `main.cu`; cuport added the runtime header to `main.cu` too.
/// A header included only under `#if`, after a CUDA include or any other
/// header, even a conditional one (cuda-samples' `<helper_cuda.h>` needs
/// the runtime itself), or from outside the file's folder where it is not
/// found, gives nothing.
#[test]
fn a_project_header_included_first_gives_the_runtime_header() {
    const COMMON: &str =
        "#ifndef COMMON_H\n#define COMMON_H\n#include <cstdio>\n#include <cuda.h>\n#endif\n";
    const KERNEL: &str = "__global__ void k(float *x) { x[threadIdx.x] = 0; }\n\
                          void run(float *p) { cudaMalloc(&p, 4); k<<<1, 1>>>(p); }\n";
    let direct = format!("#include \"common.h\"\n{KERNEL}");
    let through = format!("#include \"../inc/wrap.h\"\n{KERNEL}");
    let guarded = format!("#ifdef USE_COMMON\n#include \"common.h\"\n#endif\n{KERNEL}");
    let cg_first = format!("#include <cooperative_groups.h>\n#include \"common.h\"\n{KERNEL}");
    let elsewhere = format!("#include \"other.h\"\n{KERNEL}");
    let helper_first = format!("#include <helper_cuda.h>\n#include \"common.h\"\n{KERNEL}");
    let windows_first =
        format!("#ifdef _WIN32\n#include <windows.h>\n#endif\n#include \"common.h\"\n{KERNEL}");
    let files = [
        ("common.h", COMMON),
        ("inc/wrap.h", "#pragma once\n#include \"../common.h\"\n"),
        ("src/other.h", "#pragma once\n"),
        ("direct.cu", direct.as_str()),
        ("src/through.cu", through.as_str()),
        ("guarded.cu", guarded.as_str()),
        ("cg_first.cu", cg_first.as_str()),
        ("elsewhere.cu", elsewhere.as_str()),
        ("helper_first.cu", helper_first.as_str()),
        ("windows_first.cu", windows_first.as_str()),
    ];
    let ported = port_tree(&files, &MigrateOptions::new(Target::Hip));
    let runtime = "#include <hip/hip_runtime.h>";
    let has_runtime = |path: &str| {
        let (_, text) = ported.iter().find(|(p, _)| p == path).unwrap();
        text.contains(runtime)
    };
    assert!(has_runtime("common.h"), "{ported:#?}");
    assert!(!has_runtime("direct.cu"), "{ported:#?}");
    assert!(!has_runtime("src/through.cu"), "{ported:#?}");
    assert!(has_runtime("guarded.cu"), "{ported:#?}");
    assert!(has_runtime("cg_first.cu"), "{ported:#?}");
    assert!(has_runtime("elsewhere.cu"), "{ported:#?}");
    assert!(has_runtime("helper_first.cu"), "{ported:#?}");
    assert!(has_runtime("windows_first.cu"), "{ported:#?}");
    // Dual-stack ports keep the runtime header in every file on purpose.
    let dual = port_tree(&files, &MigrateOptions::dual_stack(vec![Target::Hip]));
    let (_, direct_dual) = dual.iter().find(|(p, _)| p == "direct.cu").unwrap();
    assert!(direct_dual.contains("cuport/runtime.h"), "{direct_dual}");
}

/// rocThrust keeps Thrust's header paths, and a file including a kept
/// header was taken for one ported before: cuda-samples `cdpQuadtree.cu`
/// lost its runtime header (found by `tests/corpus/identical_outputs.sh`).
#[test]
fn a_kept_thrust_header_does_not_mark_a_file_as_ported_already() {
    let src =
        "#include <thrust/device_vector.h>\n__global__ void k(float *x) { x[threadIdx.x] = 0; }\n\
               void run(float *p) { cudaMalloc(&p, 4); k<<<1, 1>>>(p); }\n";
    assert_has(&hip_port(src), "#include <hip/hip_runtime.h>");
}

/// HeCBench `blockScan`: a 32-thread `BlockLoad` with
/// `BLOCK_LOAD_WARP_TRANSPOSE` ports by name but does not compile for a
/// 64-lane GPU (rocPRIM's static_assert); the port says so on the line.
#[test]
fn a_warp_transpose_block_load_is_ported_with_the_wavefront_note() {
    let src = "#include <cub/cub.cuh>\n__global__ void k(int *d) {\n  \
               typedef cub::BlockLoad<int, 32, 4, cub::BLOCK_LOAD_WARP_TRANSPOSE> L;\n}\n";
    let migration = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    assert_has(&text(&migration), "hipcub::BLOCK_LOAD_WARP_TRANSPOSE");
    let note = migration
        .diagnostics
        .iter()
        .find(|d| d.cuda_name == "cub::BLOCK_LOAD_WARP_TRANSPOSE")
        .unwrap_or_else(|| panic!("{:#?}", migration.diagnostics));
    assert!(
        note.suggestion
            .as_deref()
            .unwrap_or("")
            .contains("wavefront"),
        "{note:#?}"
    );
}

/// HeCBench's most frequent "not in the rule tables" name was `__syncwarp`
/// (53 sites). HIP has the `*_sync` builtins with 64-bit masks by default
/// from 7.0; 6.2 to 6.4 declare them only with HIP_ENABLE_WARP_SYNC_BUILTINS
/// (6.4.3's headers, checked; 6.4.3 has no `__syncwarp` at all), 5.2.3 not
/// at all. Before 7.0 `__syncwarp` becomes the fence and barrier HIP 7
/// defines it as, and `__match_any_sync` HIP 7's loop in cuport's helper
/// `cuport_warp_match.h` (approximate: the mask is dropped).
#[test]
fn warp_sync_builtins_follow_the_selected_release() {
    let src = "__global__ void k(int *x) {\n  __syncwarp();\n  x[0] = __match_any_sync(~0ull, x[1]);\n}\n";
    let codes_at = |version: &str| {
        let mut options = MigrateOptions::new(Target::Hip);
        options.sdk_versions.insert(
            Target::Hip,
            cuport_model::SdkVersion::parse(version).unwrap(),
        );
        let migration = migrate_checked(src, &options);
        let mut codes: Vec<(String, String)> = migration
            .diagnostics
            .iter()
            .map(|d| (d.cuda_name.clone(), d.code.to_string()))
            .collect();
        codes.sort();
        codes
    };
    let pair = |name: &str, code: &str| (name.to_owned(), code.to_owned());
    assert_eq!(
        codes_at("7.0.0"),
        [
            pair("__match_any_sync", "CP1280"),
            pair("__syncwarp", "CP1280")
        ]
    );
    // Before 7.0 both take an older form (approximate: the mask is
    // dropped), `__match_any_sync` through cuport's helper.
    for release in ["6.4.3", "5.2.3"] {
        assert_eq!(
            codes_at(release),
            [
                pair("__match_any_sync", "CP1280"),
                pair("__syncwarp", "CP1280")
            ]
        );
    }
    // Before 7.0, `__syncwarp()` is written as what HIP 7 defines it as
    // (compiled with hipcc 5.2.3 in compile.rs).
    let mut options = MigrateOptions::new(Target::Hip);
    options.sdk_versions.insert(
        Target::Hip,
        cuport_model::SdkVersion::parse("6.4.3").unwrap(),
    );
    let ported = text(&migrate_checked(src, &options));
    assert_has(
        &ported,
        "(__builtin_amdgcn_fence(__ATOMIC_RELEASE, \"wavefront\"), __builtin_amdgcn_wave_barrier(), __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, \"wavefront\"));",
    );
    assert_has(&ported, "#include \"cuport_warp_match.h\"\n");
    assert_has(&ported, "x[0] = cuport_match_any_sync(x[1]);");
}

/// Names a project declares itself, found "not in the rule tables" across
/// HeCBench: its own `template <...> struct cuBool_config` (bmf), the
/// second variable of `cudaError_t cudaStat1, cudaStat2;` (ge-spmm), and
/// the include guard of its own `cudamacro.h` (ising). A CUDA header's real
/// guard defined by a project (a stub `cuda_runtime.h`) is still CUDA's.
#[test]
fn names_the_project_declares_are_not_reported() {
    let src = "#ifndef __CUDA_MACRO_H__\n#define __CUDA_MACRO_H__\n#include <cuda_runtime.h>\n\
               template <typename T>\nstruct cuBool_config {\n  T v;\n};\n\
               inline void g(float *p) {\n  cuBool_config<int> c;\n  cudaError_t cudaStat1, cudaStat2;\n  \
               cudaStat1 = cudaMalloc(&p, 4);\n  cudaStat2 = cudaStat1;\n}\n#endif\n";
    let migration = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    assert!(
        migration.diagnostics.is_empty(),
        "{:#?}",
        migration.diagnostics
    );
    let out = text(&migration);
    assert_has(
        &out,
        "hipError_t cudaStat1, cudaStat2;\n  cudaStat1 = hipMalloc(&p, 4);",
    );
    assert_has(&out, "#ifndef __CUDA_MACRO_H__\n#define __CUDA_MACRO_H__\n");
    let stub = "#ifndef __CUDA_RUNTIME_H__\n#define __CUDA_RUNTIME_H__\ntypedef int cudaError_t;\n#endif\n";
    let migration = migrate_checked(stub, &MigrateOptions::new(Target::Hip));
    assert_ne!(text(&migration), stub, "the stub's CUDA guard is ported");
}

/// The cuport diagnostics of `migration` on `cuda_name`, as (line, code).
fn reported(migration: &FileMigration, cuda_name: &str) -> Vec<(u32, String)> {
    migration
        .diagnostics
        .iter()
        .filter(|d| d.cuda_name == cuda_name)
        .map(|d| (d.line, d.code.to_string()))
        .collect()
}

/// HeCBench blockScan writes `BLOCK_LOAD_WARP_TRANSPOSE` unqualified after
/// `using namespace cub;`: the port kept it without the wavefront note, and
/// its 32-thread block then failed rocPRIM's static_assert with hipcc. The
/// name now gets the note of `cub::BLOCK_LOAD_WARP_TRANSPOSE`, and is left
/// as written: it resolves in `hipcub`, which the directive becomes.
#[test]
fn a_name_brought_in_by_using_namespace_cub_gets_its_rule_diagnostic() {
    let src = "#include <cub/block/block_load.cuh>\nusing namespace cub;\n\
               template <int T>\n__global__ void k(int *d) {\n  \
               typedef BlockLoad<int, T, 4, BLOCK_LOAD_WARP_TRANSPOSE> L;\n}\n";
    let migration = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&migration);
    assert_has(
        &out,
        "using namespace hipcub;\ntemplate <int T>\n__global__ void k(int *d) {\n  \
         typedef BlockLoad<int, T, 4, BLOCK_LOAD_WARP_TRANSPOSE> L;",
    );
    assert_eq!(
        reported(&migration, "cub::BLOCK_LOAD_WARP_TRANSPOSE"),
        [(5, "CP1719".to_owned())]
    );
    assert!(
        reported(&migration, "cub::BlockLoad").is_empty(),
        "an exact name needs no report: {:#?}",
        migration.diagnostics
    );
}

/// After `using namespace cooperative_groups;` the project's own `reduce`
/// (a function it defines) and a variable named `plus` are its names; the
/// library's `tiled_partition` written unqualified is the library's.
#[test]
fn using_namespace_cooperative_groups_reports_library_names_not_project_ones() {
    let src = "#include <cooperative_groups.h>\nusing namespace cooperative_groups;\n\
               __device__ int reduce(int v) { return v; }\n\
               __global__ void k(int *d) {\n  int plus = 1;\n  \
               thread_block b = this_thread_block();\n  \
               auto t = tiled_partition(b, 16);\n  d[0] = reduce(plus) + t.size();\n}\n";
    let migration = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    assert!(reported(&migration, "cooperative_groups::reduce").is_empty());
    assert!(reported(&migration, "cooperative_groups::plus").is_empty());
    assert_eq!(
        reported(&migration, "cooperative_groups::tiled_partition"),
        [(7, "CP1260".to_owned())],
        "{:#?}",
        migration.diagnostics
    );
}

/// cuda-samples reduction: `cg::reduce(tile, v, cg::plus<T>())` from
/// <cooperative_groups/reduce.h> was "not in the rule tables", then
/// reported; no HIP release has either, and the port now calls the helper
/// it writes (`cuport_cg_reduce.h`), with the reduce's approximation said
/// where it is used. The operator is a plain rename.
#[test]
fn cooperative_groups_reduce_becomes_the_helpers_with_its_note() {
    let src = "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n\
               namespace cg = cooperative_groups;\n__global__ void k(int *d) {\n  \
               auto t = cg::tiled_partition<16>(cg::this_thread_block());\n  \
               d[0] = cg::reduce(t, d[1], cg::plus<int>());\n}\n";
    let migration = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&migration);
    assert_eq!(
        out.matches("#include <cuport_cg_reduce.h>").count(),
        1,
        "{out}"
    );
    assert_has(
        &out,
        "d[0] = cuport_cg::reduce(t, d[1], cuport_cg::plus<int>());",
    );
    assert_eq!(
        reported(&migration, "cooperative_groups::reduce"),
        [(6, "CP1261".to_owned())]
    );
    assert!(reported(&migration, "cooperative_groups::plus").is_empty());
    let reduce = migration
        .diagnostics
        .iter()
        .find(|d| d.cuda_name == "cooperative_groups::reduce")
        .and_then(|d| d.suggestion.as_deref())
        .unwrap_or_default();
    assert!(
        reduce.contains("shfl_xor") && reduce.contains("coalesced_group"),
        "{reduce}"
    );
}

/// HeCBench s3d: `qssa.h` (no CUDA name in it, included by a `.cu` file)
/// declares `register real DEN;`, which hipcc rejects in C++17 (nvcc only
/// warns); the expert port removes the keyword. A `.c` file keeps it.
#[test]
fn the_register_storage_class_is_removed_from_cpp_sources() {
    let files = [
        ("main.cu", "#include \"qssa.h\"\n__global__ void k(float *x) { x[0] = qssa(x[1]); }\n"),
        ("qssa.h", "__device__ float qssa(float a) {\n    register float DEN = a; // register\n    return DEN;\n}\n"),
        ("util.c", "int f(void) { register int i = 0; return i; }\n"),
    ];
    let ported = port_tree(&files, &MigrateOptions::new(Target::Hip));
    let text_of = |name: &str| {
        ported
            .iter()
            .find(|(path, _)| path == name)
            .map(|(_, text)| text.clone())
            .unwrap_or_else(|| panic!("{name} not in {ported:#?}"))
    };
    assert_eq!(
        text_of("qssa.h"),
        "__device__ float qssa(float a) {\n    float DEN = a; // register\n    return DEN;\n}\n"
    );
    assert_eq!(text_of("util.c"), files[2].1);
}

/// NVIDIA's CMake sample (robertmaynard/code-samples posts/cmake): a static
/// library with `CUDA_SEPARABLE_COMPILATION ON`, linked into a test program.
/// Ported, it configures with CMake's HIP language, but Debian's clang 15
/// takes device code from an archive only when it is named with `-l`, and
/// CMake links it by path: the device link failed with "undefined hidden
/// symbol" and no diagnostic said why (`tests/corpus/cmake_hip_build.sh`).
/// The static library's RDC now gets one; an executable's does not.
#[test]
fn relocatable_device_code_in_a_static_library_is_reported() {
    let cmake = "project(p LANGUAGES CXX CUDA)\nadd_library(particles STATIC particle.cu)\n\
                 add_library(shared_one SHARED other.cu)\nadd_executable(app test.cu)\n\
                 set_target_properties(particles shared_one PROPERTIES CUDA_SEPARABLE_COMPILATION ON)\n\
                 set_target_properties(app PROPERTIES CUDA_SEPARABLE_COMPILATION ON)\n\
                 target_link_libraries(app PRIVATE particles)\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CMakeLists.txt"), cmake).unwrap();
    for source in ["particle.cu", "other.cu", "test.cu"] {
        std::fs::write(dir.path().join(source), "").unwrap();
    }
    let migration = migrate_dir(dir.path(), &MigrateOptions::new(Target::Hip));
    let reports: Vec<(u32, String)> = migration
        .files
        .iter()
        .flat_map(|f| f.result.diagnostics.iter())
        .filter(|d| {
            d.message
                .contains("static library with relocatable device code")
        })
        .map(|d| (d.line, d.message.clone()))
        .collect();
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(reports[0].0, 5);
    assert!(
        reports[0].1.starts_with("`particles` is a static library"),
        "{reports:#?}"
    );
    assert!(reports[0].1.contains("-lLIB"), "{reports:#?}");
    let cmake_out = migration
        .files
        .iter()
        .find(|f| f.path == "CMakeLists.txt")
        .map(|f| text(&f.result))
        .unwrap();
    assert!(
        cmake_out
            .contains("target_link_options(particles PRIVATE $<$<LINK_LANGUAGE:HIP>:-fgpu-rdc>)"),
        "{cmake_out}"
    );
}

/// The port for a release before HIP 7.0 as llm.c needs it (found with
/// Debian sid's HIP 6.4.3, where every dev/cuda unit failed): the mask-less
/// shuffle, the cache-hint load and store as plain ones (HIP declares
/// `__ldcs` for `__half` only), and `<math.h>` for host code that calls
/// `isfinite` unqualified (nvcc's runtime header brings it, HIP's does not).
/// The port compiles with Debian's hipcc (5.2.3).
#[test]
fn llm_c_warp_sum_cache_hints_and_host_isfinite_compile_before_hip_7() {
    let src = "#include <cuda_runtime.h>\n#include <cmath>\n\
               __device__ float warp_sum(float val) {\n  for (int offset = 16; offset > 0; offset /= 2) {\n    \
               val += __shfl_xor_sync(0xFFFFFFFF, val, offset);\n  }\n  return val;\n}\n\
               __global__ void copy(int4* out, const int4* in, int i) {\n  \
               __stcs(out + i, __ldcs(in + i));\n  out[0] = __ldcg(reinterpret_cast<const int4*>(in));\n}\n\
               bool finite_all(const float* v, int n) {\n  for (int i = 0; i < n; i++) {\n    \
               if (!isfinite(v[i])) return false;\n  }\n  return true;\n}\n";
    let mut options = MigrateOptions::new(Target::Hip);
    options.sdk_versions.insert(
        Target::Hip,
        cuport_model::SdkVersion::parse("6.4.3").unwrap(),
    );
    let first = migrate_checked(src, &options);
    let out = text(&first);
    assert_has(&out, "val += __shfl_xor(val, offset);");
    assert_has(&out, "(*(out + i) = (*(in + i)));");
    assert_has(&out, "out[0] = (*(reinterpret_cast<const int4*>(in)));");
    assert_has(&out, "#include <math.h>");
    let hint_reports = first
        .diagnostics
        .iter()
        .filter(|d| d.code == "CP1285")
        .count();
    assert_eq!(hint_reports, 3, "{:#?}", first.diagnostics);
    let mut newest = MigrateOptions::new(Target::Hip);
    newest.sdk_versions.insert(
        Target::Hip,
        cuport_model::SdkVersion::parse("7.0.0").unwrap(),
    );
    assert_has(
        &text(&migrate_checked(src, &newest)),
        "__shfl_xor_sync(0xFFFFFFFF, val, offset)",
    );
    assert_hipcc_compiles("llmc.hip", &first.output, &out);
}

/// cuda-samples' shfl_scan shuffles `uint4` values through a tile: CUDA's
/// tile shuffles take any type, HIP's only integers and floating point (a
/// static_assert in 5.2.3 and 6.4.3). Each tile shuffle gets the note, in a
/// file that reaches the namespace through an alias too.
#[test]
fn tile_shuffles_carry_hips_scalar_only_note() {
    let src = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n\
               __global__ void k(uint4* v) {\n  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());\n  \
               uint4 r = v[0];\n  r.y = tile.shfl_xor(r.y, 1);\n  v[1] = tile.shfl_up(r, 2);\n}\n";
    let first = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    assert_eq!(
        reported_with_code(&first, "CP1270"),
        [
            (6, "cooperative_groups::thread_block_tile::shfl_xor"),
            (7, "cooperative_groups::thread_block_tile::shfl_up")
        ]
    );
}

/// CUDA 13's half tanh functions, which neither HIPIFY's table nor HIP has
/// (HeCBench attentionMultiHeadKVCache): the scalar ones are computed in
/// float, the half2 ones are reported with the expression to write. The
/// port of the scalar ones compiles with Debian's hipcc.
#[test]
fn half_tanh_is_computed_in_float_or_reported() {
    let src = "#include <cuda_fp16.h>\n__global__ void k(__half* x, __half2* y) {\n  \
               x[0] = htanh(x[1]);\n  x[2] = htanh_approx(x[3]);\n  y[0] = h2tanh_approx(y[1]);\n}\n";
    let first = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&first);
    assert_has(&out, "x[0] = __float2half(tanhf(__half2float(x[1])));");
    assert_has(&out, "x[2] = __float2half(tanhf(__half2float(x[3])));");
    assert_eq!(
        reported_with_code(&first, "CP1286"),
        [(3, "htanh"), (4, "htanh_approx"), (5, "h2tanh_approx")]
    );
    let scalar_only: String = out
        .lines()
        .filter(|l| !l.contains("h2tanh"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_hipcc_compiles("tanh.hip", scalar_only.as_bytes(), &out);
}

/// cuda-samples' cudaTensorCoreGemm defines `C_LAYOUT wmma::mem_row_major`
/// above its `using namespace nvcuda;`; the macro is expanded below it, so
/// its body names nvcuda::wmma too and becomes rocwmma (it stayed `wmma::`
/// and failed with rocWMMA and HIP 6.4.3). `fill_fragment` carries
/// rocWMMA's stricter value type (immaTensorCoreGemm passes 0.0f to an int
/// accumulator).
#[test]
fn a_macro_above_using_namespace_nvcuda_is_ported_too() {
    let src = "#include <mma.h>\n#define C_LAYOUT wmma::mem_row_major\nusing namespace nvcuda;\n\
               __global__ void k(float* c) {\n  wmma::fragment<wmma::accumulator, 16, 16, 16, float> f;\n  \
               wmma::fill_fragment(f, 0.0f);\n  wmma::store_matrix_sync(c, f, 16, C_LAYOUT);\n}\n";
    let first = migrate_checked(src, &MigrateOptions::new(Target::Hip));
    let out = text(&first);
    assert_has(&out, "#define C_LAYOUT rocwmma::mem_row_major\n");
    assert_has(&out, "rocwmma::fill_fragment(f, 0.0f);");
    let fill = first
        .diagnostics
        .iter()
        .find(|d| d.cuda_name == "nvcuda::wmma::fill_fragment")
        .expect("fill_fragment is reported");
    assert_eq!(
        (fill.line, fill.level),
        (6, cuport_rewrite::Level::Approximate)
    );
}

/// llm.c's bfloat16 (`typedef __nv_bfloat16 floatX`, __float2bfloat16,
/// __nv_bfloat162, __nv_bfloat16_raw, an atomicAdd on bfloat16 pairs).
/// From HIP 6.2, hip/hip_bf16.h has CUDA's family as __hip_bfloat16 with
/// the same function names (llm.c at 6.4.3: 13 of 22 units compile, none
/// did); before it, HIPIFY's hip_bfloat16 stays, which compiles for the
/// types (checked here with the installed hipcc) and each function is
/// reported. HIP has no bfloat16 atomicAdd in any release (from 6.2 the
/// port calls cuport's helper; before it, the call is reported).
#[test]
fn bfloat16_is_hips_own_family_from_hip_6_2_and_hip_bfloat16_before() {
    let src = "#include <cuda_bf16.h>\n#include <cuda_runtime.h>\n\
               typedef __nv_bfloat16 floatX;\n\
               __global__ void scale(floatX* x, float s) {\n  \
               float v = __bfloat162float(x[0]);\n  x[0] = __float2bfloat16(v * s);\n  \
               __nv_bfloat162 pair = __halves2bfloat162(x[0], x[0]);\n  \
               __nv_bfloat16_raw raw = x[0];\n  atomicAdd(&pair, pair);\n}\n\
               float first(const floatX* host) { return (float)host[0]; }\n";
    let for_release = |version: &str| {
        let mut options = MigrateOptions::new(Target::Hip);
        options.sdk_versions.insert(
            Target::Hip,
            cuport_model::SdkVersion::parse(version).unwrap(),
        );
        migrate_checked(src, &options)
    };
    let newer = for_release("6.4.3");
    let out = text(&newer);
    for line in [
        "#include <hip/hip_bf16.h>",
        "typedef __hip_bfloat16 floatX;",
        "float v = __bfloat162float(x[0]);",
        "x[0] = __float2bfloat16(v * s);",
        "__hip_bfloat162 pair = __halves2bfloat162(x[0], x[0]);",
        "__hip_bfloat16_raw raw = x[0];",
    ] {
        assert_has(&out, line);
    }
    assert!(reported_with_code(&newer, "CP0016").is_empty(), "{out}");
    // The atomicAdd HIP lacks becomes cuport's helper (the test below).
    assert_eq!(reported_with_code(&newer, "CP0045"), [(9, "atomicAdd")]);
    assert_has(&out, "cuport_atomicAdd(&pair, pair);");

    let older = for_release("5.2.3");
    let out = text(&older);
    assert_has(&out, "#include <hip/hip_bfloat16.h>");
    assert_has(&out, "typedef hip_bfloat16 floatX;");
    assert_eq!(reported_with_code(&older, "CP1287"), [(3, "__nv_bfloat16")]);
    assert_eq!(
        reported_with_code(&older, "CP0016"),
        [
            (5, "__bfloat162float"),
            (6, "__float2bfloat16"),
            (7, "__nv_bfloat162"),
            (7, "__halves2bfloat162"),
            (8, "__nv_bfloat16_raw"),
        ]
    );
    assert_eq!(reported_with_code(&older, "CP0044"), [(9, "atomicAdd")]);
    // What the older form keeps compiles with hip_bfloat16.
    let types_only = "#include <cuda_bf16.h>\ntypedef __nv_bfloat16 floatX;\n\
                      float first(const floatX* host) { return (float)host[0]; }\n\
                      floatX half_of(float v) { return floatX(v / 2); }\n";
    let mut options = MigrateOptions::new(Target::Hip);
    options.sdk_versions.insert(
        Target::Hip,
        cuport_model::SdkVersion::parse("5.2.3").unwrap(),
    );
    let ported = migrate_checked(types_only, &options);
    assert_hipcc_compiles("bf16.hip", &ported.output, &text(&ported));
}

/// llm.c's `cg::reduce(warp, v, cg::plus<float>{})` and
/// `cg::greater<float>{}` (8 units at HIP 6.4.3): no HIP release has
/// cooperative_groups::reduce, so the port calls cuport_cg::reduce from
/// cuport_cg_reduce.h, which it writes at the root of the output; a file
/// in a subfolder compiles with the root on the include path.
#[test]
fn cooperative_groups_reduce_ports_to_the_written_helper() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("dev");
    std::fs::create_dir(&sub).unwrap();
    let src = "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n\
               namespace cg = cooperative_groups;\n\
               struct SumMax { float sum; float max; };\n\
               __device__ SumMax both(SumMax a, SumMax b) { return {a.sum + b.sum, fmaxf(a.max, b.max)}; }\n\
               __global__ void norm(const float* x, float* out) {\n  \
               cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());\n  \
               float v = x[threadIdx.x];\n  float sum = cg::reduce(warp, v, cg::plus<float>{});\n  \
               float top = cg::reduce(warp, v, cg::greater<float>());\n  \
               SumMax pair = cg::reduce(warp, SumMax{v, v}, both);\n  \
               if (warp.thread_rank() == 0) out[0] = sum + top + pair.sum;\n}\n";
    std::fs::write(sub.join("k.cu"), src).unwrap();
    let migration = migrate_dir(dir.path(), &MigrateOptions::new(Target::Hip));
    let ported = migration
        .files
        .iter()
        .find(|f| f.path == "dev/k.cu")
        .unwrap();
    let out = String::from_utf8_lossy(&ported.result.output).into_owned();
    assert_has(&out, "#include <cuport_cg_reduce.h>");
    assert_has(
        &out,
        "float sum = cuport_cg::reduce(warp, v, cuport_cg::plus<float>{});",
    );
    assert_has(
        &out,
        "float top = cuport_cg::reduce(warp, v, cuport_cg::greater<float>());",
    );
    assert!(
        migration
            .generated
            .iter()
            .any(|g| g.path == "cuport_cg_reduce.h"),
        "{:?}",
        migration
            .generated
            .iter()
            .map(|g| &g.path)
            .collect::<Vec<_>>()
    );
    // The output root (where the helper is) on the include path.
    let written = common::write_output(&migration);
    let root = written.path().join("tree");
    let extra = [std::ffi::OsStr::new("-I"), root.as_os_str()];
    if let Some(compiled) = hipcc_syntax_check("k.cu", &ported.result.output, &extra) {
        assert!(
            compiled.status.success(),
            "{}\n{out}",
            String::from_utf8_lossy(&compiled.stderr)
        );
    }
}

/// CUDA's `min(int, unsigned int)` compares as unsigned; HIP has no such
/// overload, and clang's `__HIP_OVERLOAD2(double, min)` takes the call in
/// device code, so a subscript `x[min(C - 1, i + u*blockDim.x)]` does not
/// compile (llm.c dev/cuda/softmax_forward.cu:427, HIP 6.4.3 and 5.2.3).
/// The port casts the signed argument as CUDA's overload converts it; the
/// same text without the cast must fail with the installed hipcc, or the
/// check proves nothing.
#[test]
fn mixed_sign_min_and_max_compare_as_unsigned_as_on_cuda() {
    let src = "__global__ void softmax(float* x, int C, size_t N, long offset) {\n  \
               int i = threadIdx.x;\n  \
               for (int u = 0; u < 4; u++) {\n    \
               x[min(C - 1, i + u*blockDim.x)] += 1.0f;\n    \
               x[0] += __ldcs(&x[min(C - 1, i + u*blockDim.x)]);\n  }\n  \
               x[max(N - 1, offset)] = 0.0f;\n}\n\
               unsigned int clamp(int a, unsigned int b) { return min(a, b); }\n";
    let out = hip_port(src);
    assert_has(
        &out,
        "x[min(static_cast<unsigned int>(C - 1), i + u*blockDim.x)] += 1.0f;",
    );
    // Inside the text a template rewrite wrote (HIP has no float __ldcs).
    assert_has(
        &out,
        "x[0] += (*(&x[min(static_cast<unsigned int>(C - 1), i + u*blockDim.x)]));",
    );
    assert_has(
        &out,
        "x[max(N - 1, static_cast<unsigned long>(offset))] = 0.0f;",
    );
    assert_has(&out, "return min(static_cast<unsigned int>(a), b);");
    let Some(compiled) = hipcc_syntax_check("k.cu", out.as_bytes(), &[]) else {
        return;
    };
    assert!(
        compiled.status.success(),
        "{}\n{out}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let uncast = out
        .replace("static_cast<unsigned int>(C - 1)", "C - 1")
        .replace("static_cast<unsigned long>(offset)", "offset");
    let failed = hipcc_syntax_check("k.cu", uncast.as_bytes(), &[]).unwrap();
    assert!(
        !failed.status.success(),
        "compiles without the cast:\n{uncast}"
    );
}

/// CUDA's bfloat16 `atomicAdd` (llm.c's atomicAddX): HIP declares none, so
/// from HIP 6.2 a one-way port calls cuport's compare-and-swap helper,
/// which it writes at the output root. Compiled with a HIP 6.4 hipcc where
/// one is set up (`CUPORT_HIPCC_SID`); the same port with the call left as
/// `atomicAdd` must fail there.
#[test]
fn bfloat16_atomic_add_becomes_the_compare_and_swap_helper() {
    let src = "#include <cuda_bf16.h>\n\
               __device__ void atomicAddX(__nv_bfloat16* addr, __nv_bfloat16 val) {\n  \
               uintptr_t ptr_val = reinterpret_cast<uintptr_t>(addr);\n  \
               __nv_bfloat162* ptr_bf16 = reinterpret_cast<__nv_bfloat162*>(ptr_val & ~uintptr_t(0x3));\n  \
               __nv_bfloat162 add_val = __halves2bfloat162(val, __ushort_as_bfloat16(0));\n  \
               atomicAdd(ptr_bf16, add_val);\n}\n\
               __global__ void accumulate(__nv_bfloat16* out, const float* in) {\n  \
               atomicAdd(out + threadIdx.x % 4, __float2bfloat16(in[threadIdx.x]));\n  \
               atomicAddX(out, __float2bfloat16(1.0f));\n}\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), src).unwrap();
    let migration = migrate_dir(dir.path(), &MigrateOptions::new(Target::Hip));
    let ported = migration.files.iter().find(|f| f.path == "k.cu").unwrap();
    let out = String::from_utf8_lossy(&ported.result.output).into_owned();
    assert_has(&out, "#include \"cuport_atomic_half.h\"");
    assert_has(&out, "cuport_atomicAdd(ptr_bf16, add_val);");
    assert_has(
        &out,
        "cuport_atomicAdd(out + threadIdx.x % 4, __float2bfloat16(in[threadIdx.x]));",
    );
    let notes: Vec<&str> = ported
        .result
        .diagnostics
        .iter()
        .filter(|d| d.code == "CP0045")
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(migration
        .generated
        .iter()
        .any(|g| g.path == "cuport_atomic_half.h"));
    let Some(hipcc) = common::sid_hipcc() else {
        return;
    };
    let written = common::write_output(&migration);
    let root = written.path().join("tree");
    let extra = [std::ffi::OsStr::new("-I"), root.as_os_str()];
    let compiled = syntax_check_with(hipcc.as_os_str(), "k.cu", out.as_bytes(), &extra);
    assert!(
        compiled.status.success(),
        "{}\n{out}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let uncalled = out.replace("cuport_atomicAdd(", "atomicAdd(");
    let failed = syntax_check_with(hipcc.as_os_str(), "k.cu", uncalled.as_bytes(), &extra);
    assert!(
        !failed.status.success(),
        "compiles without the helper:\n{uncalled}"
    );
}

/// HeCBench local-ht: `helper.hpp` declares a function taking
/// `cudaError_t` and includes nothing CUDA; `helper.cu` includes it and uses
/// nothing of the runtime itself. nvcc's implicit runtime include served the
/// header; hipcc has none, so the port gives the header the runtime header,
/// as the expert port does. A header a `.cu` file includes after its
/// runtime include is served already and gets nothing (HeCBench
/// warpexchange).
#[test]
fn a_header_that_relied_on_the_implicit_runtime_include_gets_the_runtime_header() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "helper.hpp",
            "#include <string>\ninline void check(cudaError_t code) {\n  if (code != cudaSuccess) throw std::string(cudaGetErrorString(code));\n}\n",
        ),
        ("helper.cu", "#include \"helper.hpp\"\nint answer() { return 42; }\n"),
        (
            "served.h",
            "inline void check_served(cudaError_t code) { (void)cudaGetErrorString(code); }\n",
        ),
        (
            "main.cu",
            "#include <cuda.h>\n#include \"served.h\"\nint main() { check_served(cudaSuccess); return 0; }\n",
        ),
    ];
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let migration = migrate_dir(dir.path(), &MigrateOptions::new(Target::Hip));
    let ported = |name: &str| {
        let file = migration.files.iter().find(|f| f.path == name).unwrap();
        String::from_utf8_lossy(&file.result.output).into_owned()
    };
    let helper = ported("helper.hpp");
    assert_has(&helper, "#include <hip/hip_runtime.h>\n#include <string>");
    assert!(
        !ported("served.h").contains("hip_runtime"),
        "{}",
        ported("served.h")
    );
    assert!(
        !ported("helper.cu").contains("hip_runtime"),
        "{}",
        ported("helper.cu")
    );
    let written = common::write_output(&migration);
    let root = written.path().join("tree");
    let extra = [std::ffi::OsStr::new("-I"), root.as_os_str()];
    let helper_cu = ported("helper.cu");
    if let Some(compiled) = hipcc_syntax_check("helper.cu", helper_cu.as_bytes(), &extra) {
        assert!(
            compiled.status.success(),
            "{}\n{helper}",
            String::from_utf8_lossy(&compiled.stderr)
        );
    }
}

/// HeCBench f16atomic: CUDA's atomicAdd on `__half2` (and `__half`); HIP
/// declares neither in any release checked, so the port calls cuport's
/// compare-and-swap helper, which uses only what HIP 5.2.3's
/// hip/hip_fp16.h has: compiled with the installed hipcc, and the same
/// port with the call left as `atomicAdd` must fail there.
#[test]
fn half_precision_atomic_add_becomes_the_compare_and_swap_helper() {
    let src = "#include <cuda_fp16.h>\n\
               __global__ void add(__half* result, half* single, int n) {\n  \
               int tid = blockIdx.x * blockDim.x + threadIdx.x;\n  \
               if (tid >= n) return;\n  \
               __half2* result_v = reinterpret_cast<__half2*>(result);\n  \
               __half2 val{__float2half(0.0f), __float2half(1.0f)};\n  \
               atomicAdd(&result_v[tid % 256], val);\n  \
               atomicAdd(single, __float2half(1.0f));\n}\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), src).unwrap();
    let migration = migrate_dir(
        dir.path(),
        &common::for_installed_hip(MigrateOptions::new(Target::Hip)),
    );
    let ported = migration.files.iter().find(|f| f.path == "k.cu").unwrap();
    let out = String::from_utf8_lossy(&ported.result.output).into_owned();
    assert_has(&out, "#include \"cuport_atomic_half.h\"");
    assert_has(&out, "cuport_atomicAdd(&result_v[tid % 256], val);");
    assert_has(&out, "cuport_atomicAdd(single, __float2half(1.0f));");
    assert!(migration
        .generated
        .iter()
        .any(|g| g.path == "cuport_atomic_half.h"));
    let written = common::write_output(&migration);
    let root = written.path().join("tree");
    let extra = [std::ffi::OsStr::new("-I"), root.as_os_str()];
    let Some(compiled) = hipcc_syntax_check("k.cu", out.as_bytes(), &extra) else {
        return;
    };
    assert!(
        compiled.status.success(),
        "{}\n{out}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let uncalled = out.replace("cuport_atomicAdd(", "atomicAdd(");
    let failed = hipcc_syntax_check("k.cu", uncalled.as_bytes(), &extra).unwrap();
    assert!(
        !failed.status.success(),
        "compiles without the helper:\n{uncalled}"
    );
}
