#![allow(clippy::unwrap_used)]

use cuport_model::{Library, LineIndex, SiteKind};

use super::analyze as analyze_cfamily;
use crate::site::{FileAnalysis, Site};

fn analyze(src: &str) -> FileAnalysis {
    let source = super::FileSource {
        src: src.as_bytes(),
        text: Some(src),
        line_index: &LineIndex::new(src.as_bytes()),
    };
    analyze_cfamily(source, true, None, None)
}

fn of_kind(analysis: &FileAnalysis, kind: SiteKind) -> Vec<&Site> {
    analysis.sites.iter().filter(|s| s.kind == kind).collect()
}

fn text(src: &str, range: cuport_model::TextRange) -> &str {
    range.slice(src).unwrap()
}

#[test]
fn launch_with_four_config_arguments_across_lines() {
    let src = "void f() {\n  add<<<grid, block,\n      0, stream>>>(a, b, n);\n}";
    let a = analyze(src);
    let launch = of_kind(&a, SiteKind::KernelLaunch)[0];
    assert_eq!(launch.name, "add");
    let config: Vec<_> = launch.launch_config.iter().map(|r| text(src, *r)).collect();
    assert_eq!(config, ["grid", "block", "0", "stream"]);
    let args: Vec<_> = launch.args.iter().map(|r| text(src, *r)).collect();
    assert_eq!(args, ["a", "b", "n"]);
    assert_eq!(
        text(src, launch.call.unwrap()),
        "add<<<grid, block,\n      0, stream>>>(a, b, n)"
    );
}

#[test]
fn templated_and_qualified_launches() {
    let src = "ns::reduce<T, 4><<<g, b, smem>>>(in, out);\nk<vec<int>><<<1, 1>>>();";
    let a = analyze(src);
    let launches = of_kind(&a, SiteKind::KernelLaunch);
    assert_eq!(launches[0].name, "ns::reduce");
    assert_eq!(text(src, launches[0].template_args.unwrap()), "<T, 4>");
    assert_eq!(launches[0].launch_config.len(), 3);
    assert_eq!(launches[1].name, "k");
    assert_eq!(text(src, launches[1].template_args.unwrap()), "<vec<int>>");
    assert!(launches[1].args.is_empty());
}

#[test]
fn launch_inside_a_macro_body() {
    let src = "#define LAUNCH(T) \\\n  kern<T><<<g, b>>>(p)\nvoid f() { LAUNCH(float); }";
    let a = analyze(src);
    let launch = of_kind(&a, SiteKind::KernelLaunch)[0];
    assert_eq!(launch.name, "kern");
    assert_eq!(launch.line, 0, "lines are filled in by analyze_source");
    assert_eq!(a.defined_names, ["LAUNCH"]);
}

#[test]
fn kernel_definitions_with_attributes_and_templates() {
    let src = "template <typename T, int B>\n__global__ void __launch_bounds__(256) reduce(const T* __restrict__ in, T* out) {\n  __shared__ T s[B];\n}\n__global__ void decl(int);";
    let a = analyze(src);
    let kernels = of_kind(&a, SiteKind::KernelDefinition);
    assert_eq!(kernels.len(), 2);
    assert_eq!(kernels[0].name, "reduce");
    let params: Vec<_> = kernels[0].args.iter().map(|r| text(src, *r)).collect();
    assert_eq!(params, ["const T* __restrict__ in", "T* out"]);
    assert_eq!(
        text(src, kernels[0].template_args.unwrap()),
        "<typename T, int B>"
    );
    assert!(kernels[0].body.is_some());
    assert_eq!(kernels[1].name, "decl");
    assert!(kernels[1].body.is_none());
    let qualifiers: Vec<_> = of_kind(&a, SiteKind::Qualifier)
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(
        qualifiers,
        [
            "__global__",
            "__launch_bounds__",
            "__restrict__",
            "__shared__",
            "__global__"
        ]
    );
}

#[test]
fn calls_record_arguments_and_library() {
    let src = "cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, s);";
    let a = analyze(src);
    let call = &a.sites[0];
    assert_eq!(
        (call.kind, call.library),
        (SiteKind::RuntimeApi, Library::Runtime)
    );
    let args: Vec<_> = call.args.iter().map(|r| text(src, *r)).collect();
    assert_eq!(
        args,
        ["d", "h", "n * sizeof(float)", "cudaMemcpyHostToDevice", "s"]
    );
    assert_eq!(a.sites[1].kind, SiteKind::EnumConstant);
}

#[test]
fn comments_and_strings_are_not_uses_but_includes_are() {
    let src =
        "#include <cublas_v2.h>\n// cudaMalloc(x)\nconst char* s = \"cudaFree\";\n/* cudaMemcpy */";
    let a = analyze(src);
    assert_eq!(a.sites.len(), 1);
    assert_eq!(
        (a.sites[0].kind, a.sites[0].name.as_str()),
        (SiteKind::Include, "cublas_v2.h")
    );
}

#[test]
fn sites_record_their_preprocessor_branch() {
    let src = "#if __CUDA_ARCH__ >= 800\nx = __reduce_add_sync(m, v);\n#else\ny = atomicAdd(p, v);\n#endif\n#ifdef __CUDACC__\n__syncthreads();\n#endif";
    let a = analyze(src);
    let text_of = |name: &str| {
        let site = a.sites.iter().find(|s| s.name == name).unwrap();
        a.conditions_of(site).join(" | ")
    };
    assert_eq!(text_of("__reduce_add_sync"), "__CUDA_ARCH__ >= 800");
    assert_eq!(text_of("atomicAdd"), "!(__CUDA_ARCH__ >= 800)");
    assert_eq!(text_of("__syncthreads"), "defined(__CUDACC__)");
    let conditions = of_kind(&a, SiteKind::PreprocessorCondition);
    assert_eq!(conditions.len(), 2);
    assert!(conditions
        .iter()
        .all(|s| s.library == Library::Preprocessor));
}

#[test]
fn warp_size_assumptions() {
    let src = "int lane = threadIdx.x & 31; int warp = tid / 32;\nv += __shfl_down_sync(0xffffffff, v, 16, 32);\nauto t = cg::tiled_partition<32>(b);\nint unrelated = bytes / 32;";
    let a = analyze(src);
    let names: Vec<_> = of_kind(&a, SiteKind::WarpSizeAssumption)
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["& 31", "/ 32", "full 32-lane mask", "width 32", "< 32"]
    );
}

#[test]
fn namespaces_aliases_and_torch_cpp() {
    let src = "namespace cg = cooperative_groups;\nauto b = cg::this_thread_block();\nthrust::device_vector<float> v;\nauto s = at::cuda::getCurrentCUDAStream();\nTORCH_CHECK(x.is_cuda());\nc10::cuda::CUDAGuard g(dev);";
    let a = analyze(src);
    let found: Vec<_> = a
        .sites
        .iter()
        .map(|s| (s.name.as_str(), s.library, s.kind))
        .collect();
    assert!(found.contains(&(
        "cooperative_groups::this_thread_block",
        Library::CooperativeGroups,
        SiteKind::LibraryCall
    )));
    assert!(found.contains(&("thrust::device_vector", Library::Thrust, SiteKind::Type)));
    assert!(found.contains(&(
        "at::cuda::getCurrentCUDAStream",
        Library::Torch,
        SiteKind::FrameworkCall
    )));
    assert!(found.contains(&("is_cuda", Library::Torch, SiteKind::FrameworkCall)));
    assert!(found.contains(&("c10::cuda::CUDAGuard", Library::Torch, SiteKind::Type)));
}

#[test]
fn deep_nesting_does_not_overflow() {
    let src = format!("int x = {}1{};", "(".repeat(10_000), ")".repeat(10_000));
    let a = analyze(&src);
    assert!(a.sites.is_empty());
}

#[test]
fn unbalanced_branches_do_not_confuse_later_calls() {
    let src = "#if A\nvoid f(int a) {\n#else\nvoid f(int a, int b) {\n#endif\n  cudaFree(p);\n}\ncudaMalloc(&q, 4);";
    let a = analyze(src);
    let malloc = a.sites.iter().find(|s| s.name == "cudaMalloc").unwrap();
    assert_eq!(malloc.args.len(), 2);
}

#[test]
fn compound_assignments_on_one_vector_type_are_found_whole() {
    let src = "\
inline __host__ __device__ float4 operator+(float4 a, float4 b) { return a; }
inline __host__ __device__ void operator+=(float4 &a, float4 b)
{
    a.x += b.x;
}
inline __host__ __device__ void operator*=(float4 &a, float b) { a.x *= b; }
inline __host__ __device__ void operator-=(float3 &a, const float3 &b) { a.x -= b.x; }
void operator<<=(uint2 &a, uint2 b) { a.x <<= b.x; }
inline void operator/=(float4 &a, float3 b) { }
struct S { S& operator+=(const S& o); };
";
    let a = analyze(src);
    assert_eq!(
        operators_found(&a),
        [
            ("operator+=", "float4"),
            ("operator-=", "float3"),
            ("operator<<=", "uint2")
        ]
    );
    let first = text(src, a.vector_operators[0].range);
    assert!(
        first.starts_with("inline __host__ __device__ void operator+=("),
        "{first}"
    );
    assert!(first.ends_with("a.x += b.x;\n}"), "{first}");
}

#[test]
fn same_type_multiplications_and_divisions_are_found() {
    let src = "\
inline __host__ __device__ float2 operator*(float2 a, float2 b) { return a; }
inline __host__ __device__ float3 operator/(const float3 &a, const float3 &b) { return a; }
inline __host__ __device__ float2 operator*(float2 a, float s) { return a; }
inline __host__ __device__ float2 operator*(float s, float2 a) { return a; }
inline __host__ __device__ int2 operator/(int2 &a, int2 &b) { return a; }
inline __host__ __device__ float4 operator+(float4 a, float4 b) { return a; }
struct M { M operator*(const M& o) const; };
";
    assert_eq!(
        operators_found(&analyze(src)),
        [("operator*", "float2"), ("operator/", "float3")]
    );
}

/// `(operator, vector type)` of each vector operator definition found.
fn operators_found(analysis: &FileAnalysis) -> Vec<(&str, &str)> {
    analysis
        .vector_operators
        .iter()
        .map(|d| (d.operator.as_str(), d.vector_type.as_str()))
        .collect()
}
