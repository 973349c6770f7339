//! Recognises CUDA identifiers by the naming conventions of each library
//! rather than by a list of known names, so that an API the rule tables do
//! not know yet is still found (and later reported as unknown).

use std::sync::OnceLock;

use cuport_model::{Library, LibraryProfile, Profiles, SiteKind};

/// How an identifier is used where it appears; decides between call, type
/// and constant for names whose convention does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Usage {
    /// Followed by `(`.
    Call,
    /// Followed by an identifier, `*`, `&` or `::` (a declaration).
    TypeLike,
    Other,
}

/// `(prefix, library)` pairs of one kind from `mappings/libraries.toml`,
/// longest prefix first so that `cublasLt` wins over `cublas`.
fn prefix_table(
    pick: fn(&'static LibraryProfile) -> &'static [String],
) -> Vec<(&'static str, Library)> {
    let mut table: Vec<(&'static str, Library)> = Profiles::builtin()
        .libraries()
        .flat_map(|l| pick(l).iter().map(move |p| (p.as_str(), l.id)))
        .collect();
    table.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(b.0)));
    table
}

/// camelCase C API prefixes. A name matches when it starts with the prefix
/// followed by an upper-case letter or digit (`cudaMalloc`, not `cudaextra`).
fn camel_prefixes() -> &'static [(&'static str, Library)] {
    static TABLE: OnceLock<Vec<(&'static str, Library)>> = OnceLock::new();
    TABLE.get_or_init(|| prefix_table(|l| &l.camel_prefixes))
}

/// SCREAMING_CASE constant and macro prefixes.
fn upper_prefixes() -> &'static [(&'static str, Library)] {
    static TABLE: OnceLock<Vec<(&'static str, Library)>> = OnceLock::new();
    TABLE.get_or_init(|| prefix_table(|l| &l.upper_prefixes))
}

/// Header file stems (`cublas_api`, `cuda_fp16`... not listed by name).
fn header_stems() -> &'static [(&'static str, Library)] {
    static TABLE: OnceLock<Vec<(&'static str, Library)>> = OnceLock::new();
    TABLE.get_or_init(|| prefix_table(|l| &l.header_stems))
}

/// Driver API types are `CU` + a capitalised word (`CUresult`, `CUdeviceptr`,
/// `CUstream`); library handle types follow `cublasHandle_t`-style naming.
fn is_driver_type(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("CU") else {
        return false;
    };
    rest.len() > 2 && rest.as_bytes()[0].is_ascii_lowercase() && !rest.contains('_')
        || (rest.ends_with("_st") || rest.ends_with("_t")) && !rest.starts_with('_')
}

/// Compiler-predefined and header-guard macros that tell CUDA apart.
const PREDEFINED_MACROS: &[&str] = &[
    "__CUDACC__",
    "__CUDA_ARCH__",
    "__CUDA_ARCH_LIST__",
    "__NVCC__",
    "__CUDACC_RDC__",
    "__CUDACC_RTC__",
    "__CUDACC_DEBUG__",
    "__CUDACC_VER_MAJOR__",
    "__CUDACC_VER_MINOR__",
    "__CUDACC_VER_BUILD__",
    "__CUDACC_EWP__",
    "__CUDACC_RELAXED_CONSTEXPR__",
    "__CUDACC_EXTENDED_LAMBDA__",
    "__NVCOMPILER",
    "__NVCOMPILER_CUDA__",
    "CUDART_VERSION",
    "CUDA_VERSION",
    "__CUDA_API_VERSION",
    "CUBLAS_VERSION",
    "CUDNN_VERSION",
    "CUDNN_MAJOR",
    "CUDNN_MINOR",
    "NCCL_VERSION_CODE",
    "NCCL_MAJOR",
    "NCCL_MINOR",
    "THRUST_VERSION",
    "CUB_VERSION",
    "CUSPARSE_VERSION",
    "CUFFT_VERSION",
    "CURAND_VERSION",
];

/// An execution- or memory-space qualifier or other CUDA keyword
/// (`__forceinline__`, `__device__`): never the type of a declaration.
pub(crate) fn is_qualifier(name: &str) -> bool {
    QUALIFIERS.contains(&name)
}

/// One of the macros nvcc or CUDA's headers define (`__CUDACC__`).
pub(crate) fn is_predefined_macro(name: &str) -> bool {
    PREDEFINED_MACROS.contains(&name)
}

/// Whether `name` is a CUDA predefined macro or a CUDA header's include guard
/// (`__CUDA_RUNTIME_H__`, `__DRIVER_TYPES_H__`, `CUBLAS_V2_H_`, `__cuda_cuda_h__`).
pub(crate) fn is_cuda_condition_macro(name: &str) -> bool {
    if is_predefined_macro(name) {
        return true;
    }
    // Asked of most identifiers that start with `_` or a capital: the
    // guard's ending is checked before the name is upper-cased (a copy).
    let guard = ["_H__", "_H_", "_HPP__"].iter().any(|ending| {
        name.len() >= ending.len()
            && name.as_bytes()[name.len() - ending.len()..].eq_ignore_ascii_case(ending.as_bytes())
    });
    guard && {
        let upper = name.to_ascii_uppercase();
        HEADER_GUARD_STEMS.iter().any(|stem| upper.contains(stem))
    }
}

const HEADER_GUARD_STEMS: &[&str] = &[
    "CUDA",
    "DRIVER_TYPES",
    "VECTOR_TYPES",
    "CUBLAS",
    "CUDNN",
    "CUFFT",
    "CURAND",
    "CUSPARSE",
    "CUSOLVER",
    "NCCL",
    "NVRTC",
    "DEVICE_FUNCTIONS",
    "SM_",
    "HOST_DEFINES",
    "NVTX",
];

/// Execution- and memory-space qualifiers and other CUDA keywords.
const QUALIFIERS: &[&str] = &[
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "__constant__",
    "__managed__",
    "__launch_bounds__",
    "__restrict__",
    "__forceinline__",
    "__noinline__",
    "__grid_constant__",
    "__cluster_dims__",
    "__align__",
];

const BUILTIN_VARIABLES: &[&str] = &["threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"];

/// Double-underscore names that belong to the host compiler, not CUDA.
const HOST_COMPILER_NAMES: &[&str] = &[
    "__attribute__",
    "__asm__",
    "__asm",
    "__volatile__",
    "__inline__",
    "__inline",
    "__typeof__",
    "__typeof",
    "__extension__",
    "__func__",
    "__FUNCTION__",
    "__PRETTY_FUNCTION__",
    "__declspec",
    "__cplusplus",
    "__restrict",
    "__int128",
    "__alignof__",
    "__thread",
    "__signed__",
    "__const",
];

/// Device-side function families recognised by prefix (the ones that do not
/// start with a double underscore).
const DEVICE_FUNCTION_PREFIXES: &[&str] = &[
    "atomic",
    "tex1D",
    "tex2D",
    "tex3D",
    "texCubemap",
    "surf1D",
    "surf2D",
    "surf3D",
    "make_float",
    "make_double",
    "make_int",
    "make_uint",
    "make_char",
    "make_uchar",
    "make_short",
    "make_ushort",
    "make_long",
    "make_ulong",
    "make_half",
    "make_cu",
];

/// CUDA-only device math and timing functions that have no C standard twin.
const DEVICE_FUNCTIONS: &[&str] = &[
    "rsqrtf",
    "rsqrt",
    "rcbrtf",
    "rcbrt",
    "sincospif",
    "sincospi",
    "normcdff",
    "normcdf",
    "erfcinvf",
    "erfinvf",
    "saturate",
    "clock64",
    "rnormf",
    "norm3df",
    "norm4df",
    "cospif",
    "sinpif",
    "exp10f",
];

/// `threadIdx`, `blockDim`, ...: a local `dim3 blockDim(32, 32);` shadows
/// one in a scope but does not make the project define it.
pub(crate) fn is_builtin_variable(name: &str) -> bool {
    BUILTIN_VARIABLES.contains(&name)
}

/// CUDA's built-in vector and half types.
fn is_device_type(name: &str) -> bool {
    if matches!(
        name,
        "dim3"
            | "__half"
            | "__half2"
            | "__nv_bfloat16"
            | "__nv_bfloat162"
            | "half2"
            | "__nv_fp8_e4m3"
            | "__nv_fp8_e5m2"
            | "cudaTextureObject_t"
    ) {
        return true;
    }
    let stems = [
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "longlong",
        "ulonglong",
        "float",
        "double",
    ];
    let Some(digit) = name.as_bytes().last() else {
        return false;
    };
    (b'1'..=b'4').contains(digit) && stems.contains(&&name[..name.len() - 1])
}

/// Classifies an identifier in a C-family file.
/// `cuda_file` enables the kernel-language heuristics that would be too
/// eager in plain C++ (`__name` intrinsics, vector types, CUDA-only math).
pub(crate) fn classify(name: &str, usage: Usage, cuda_file: bool) -> Option<(Library, SiteKind)> {
    // cuport's own portable names (`CUPORT_EXT_SEM_WAIT_NODE_PARAMS_st`)
    // match CUDA's driver conventions but are the shim's (a fuzzing
    // finding: `fuzz_regressions::cuport_portable_names_are_not_cuda`).
    if name.starts_with("CUPORT_") || name.starts_with("cuport") {
        return None;
    }
    let first = *name.as_bytes().first()?;
    match first {
        b'_' => classify_underscore(name, usage, cuda_file),
        b'c' | b'n' => classify_camel(name, usage).or_else(|| classify_device(name, cuda_file)),
        b'C' | b'N' | b'A' | b'T' => classify_upper(name, usage),
        _ => classify_device(name, cuda_file),
    }
}

fn classify_underscore(name: &str, usage: Usage, cuda_file: bool) -> Option<(Library, SiteKind)> {
    if QUALIFIERS.contains(&name) {
        return Some((Library::Device, SiteKind::Qualifier));
    }
    if is_cuda_condition_macro(name) {
        return Some((Library::Preprocessor, SiteKind::Macro));
    }
    if is_device_type(name) {
        return Some((Library::Device, SiteKind::Type));
    }
    let intrinsic = name.starts_with("__")
        && name.len() > 3
        && name.as_bytes()[2].is_ascii_lowercase()
        && !name.starts_with("__builtin")
        && !name.starts_with("__sync_")
        && !name.starts_with("__atomic_")
        && !HOST_COMPILER_NAMES.contains(&name);
    let known_anywhere = name.starts_with("__shfl")
        || name.starts_with("__syncthreads")
        || name.ends_with("_sync")
        || name.starts_with("__ldg");
    if intrinsic && (cuda_file || known_anywhere) && usage == Usage::Call {
        return Some((Library::Device, SiteKind::DeviceIntrinsic));
    }
    None
}

fn classify_camel(name: &str, usage: Usage) -> Option<(Library, SiteKind)> {
    let (prefix, library) = camel_prefixes().iter().find(|(prefix, _)| {
        name.strip_prefix(prefix)
            .and_then(|rest| rest.as_bytes().first())
            .is_some_and(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
    })?;
    // `cuComplex`-style helpers live in the runtime's headers but use the
    // driver's two-letter prefix; they are still CUDA.
    let library = if *prefix == "cu" && name.starts_with("cuC") && name.len() <= 12 {
        Library::Runtime
    } else {
        *library
    };
    Some((library, camel_kind(name, library, usage)))
}

fn camel_kind(name: &str, library: Library, usage: Usage) -> SiteKind {
    if name.ends_with("_t") || name.ends_with("_st") || usage == Usage::TypeLike {
        return SiteKind::Type;
    }
    match usage {
        Usage::Call => match library {
            Library::Runtime => SiteKind::RuntimeApi,
            Library::Driver => SiteKind::DriverApi,
            _ => SiteKind::LibraryCall,
        },
        _ => SiteKind::EnumConstant,
    }
}

fn classify_upper(name: &str, usage: Usage) -> Option<(Library, SiteKind)> {
    if is_cuda_condition_macro(name) {
        return Some((Library::Preprocessor, SiteKind::Macro));
    }
    if name == "CUDART_VERSION" {
        return Some((Library::Preprocessor, SiteKind::Macro));
    }
    if is_driver_type(name) {
        return Some((Library::Driver, SiteKind::Type));
    }
    let (_, library) = upper_prefixes()
        .iter()
        .find(|(prefix, _)| name.len() > prefix.len() && name.starts_with(prefix))?;
    let kind = if usage == Usage::Call || name.starts_with("CUDART_") || *library == Library::Torch
    {
        SiteKind::Macro
    } else if usage == Usage::TypeLike || name.ends_with("_t") {
        SiteKind::Type
    } else {
        SiteKind::EnumConstant
    };
    Some((*library, kind))
}

fn classify_device(name: &str, cuda_file: bool) -> Option<(Library, SiteKind)> {
    if BUILTIN_VARIABLES.contains(&name) {
        return Some((Library::Device, SiteKind::DeviceIntrinsic));
    }
    if !cuda_file {
        return None;
    }
    if is_device_type(name) {
        return Some((Library::Device, SiteKind::Type));
    }
    let starts_one = name
        .as_bytes()
        .first()
        .is_some_and(|&b| DEVICE_FUNCTION_FIRST_BYTES[usize::from(b)]);
    let is_function = starts_one
        && (DEVICE_FUNCTIONS.contains(&name)
            || DEVICE_FUNCTION_PREFIXES
                .iter()
                .any(|p| name.starts_with(p) && name.len() > p.len()));
    is_function.then_some((Library::Device, SiteKind::DeviceIntrinsic))
}

/// The first bytes of [`DEVICE_FUNCTIONS`] and [`DEVICE_FUNCTION_PREFIXES`]:
/// every identifier of a CUDA file is asked about, and most start with
/// none of them.
static DEVICE_FUNCTION_FIRST_BYTES: [bool; 256] = {
    let mut first = [false; 256];
    let lists = [DEVICE_FUNCTIONS, DEVICE_FUNCTION_PREFIXES];
    let mut list = 0;
    while list < lists.len() {
        let mut at = 0;
        while at < lists[list].len() {
            first[lists[list][at].as_bytes()[0] as usize] = true;
            at += 1;
        }
        list += 1;
    }
    first
};

/// Namespaces whose members belong to one library (`thrust::sort`): the
/// `namespaces` of mappings/libraries.toml.
pub(crate) fn namespace_library(namespace: &str) -> Option<Library> {
    static TABLE: OnceLock<Vec<(&'static str, Library)>> = OnceLock::new();
    TABLE
        .get_or_init(|| prefix_table(|l| &l.namespaces))
        .iter()
        .find(|(name, _)| *name == namespace)
        .map(|(_, library)| *library)
}

/// The library of a CUDA header named in an `#include`, if it is one.
pub(crate) fn header_library(path: &str) -> Option<Library> {
    // cuport's own dual-stack shim (`cuport/nvml.h`, `../cuport/blas.h`):
    // its file names may be CUDA's, but it is no CUDA header (a fuzzing
    // finding: `fuzz_regressions::cuport_shim_include_is_not_a_cuda_include`).
    if path.split('/').any(|part| part == "cuport") {
        return None;
    }
    let file = path.rsplit('/').next().unwrap_or(path);
    let dir = path.split('/').next().unwrap_or("");
    let by_dir = match dir {
        "thrust" => Some(Library::Thrust),
        "cub" => Some(Library::Cub),
        "cutlass" | "cute" => Some(Library::Cutlass),
        "cooperative_groups" => Some(Library::CooperativeGroups),
        "nvtx3" => Some(Library::Nvtx),
        "cuda" => Some(Library::Runtime),
        _ => None,
    };
    if by_dir.is_some() {
        return by_dir;
    }
    if (path.starts_with("ATen/cuda") || path.starts_with("c10/cuda"))
        || path.starts_with("torch/csrc/cuda")
    {
        return Some(Library::Torch);
    }
    header_file_library(file)
}

fn header_file_library(file: &str) -> Option<Library> {
    let stem = file.split('.').next().unwrap_or(file);
    let lib = match stem {
        "cooperative_groups" => Library::CooperativeGroups,
        "cuda" | "cudaGL" | "cudaEGL" | "cudaProfiler" | "cudaTypedefs" => Library::Driver,
        "nvToolsExt" | "nvToolsExtCuda" | "nvToolsExtCudaRt" | "nvtx3" => Library::Nvtx,
        "mma"
        | "sm_20_atomic_functions"
        | "sm_32_intrinsics"
        | "math_constants"
        | "device_launch_parameters"
        | "device_functions"
        | "vector_types"
        | "cuda_fp16"
        | "cuda_bf16"
        | "cuda_fp8"
        | "crt" => Library::Device,
        "driver_types"
        | "cuda_runtime"
        | "cuda_runtime_api"
        | "library_types"
        | "helper_cuda"
        | "cuComplex"
        | "channel_descriptor"
        | "texture_fetch_functions" => Library::Runtime,
        _ => return stem_library(stem),
    };
    Some(lib)
}

fn stem_library(stem: &str) -> Option<Library> {
    header_stems()
        .iter()
        .find(|(prefix, _)| stem.starts_with(prefix))
        .map(|(_, lib)| *lib)
}

/// The CUDA library a host-code identifier belongs to by its spelling
/// (`cublasSgemm` → cuBLAS), for callers outside a scan (dual-stack shims
/// group the rule tables' names by library).
pub fn library_of(name: &str) -> Option<Library> {
    classify(name, Usage::Other, false).map(|(library, _)| library)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str, usage: Usage) -> Option<(Library, SiteKind)> {
        classify(name, usage, true)
    }

    #[test]
    fn runtime_names_by_convention() {
        assert_eq!(
            c("cudaMalloc", Usage::Call),
            Some((Library::Runtime, SiteKind::RuntimeApi))
        );
        assert_eq!(
            c("cudaFutureApi2031", Usage::Call),
            Some((Library::Runtime, SiteKind::RuntimeApi))
        );
        assert_eq!(
            c("cudaStream_t", Usage::Other),
            Some((Library::Runtime, SiteKind::Type))
        );
        assert_eq!(
            c("cudaDeviceProp", Usage::TypeLike),
            Some((Library::Runtime, SiteKind::Type))
        );
        assert_eq!(
            c("cudaMemcpyHostToDevice", Usage::Other),
            Some((Library::Runtime, SiteKind::EnumConstant))
        );
        assert_eq!(c("cudaextra", Usage::Call), None);
    }

    #[test]
    fn library_prefixes_win_over_the_driver_prefix() {
        assert_eq!(
            c("cublasSgemm", Usage::Call),
            Some((Library::Cublas, SiteKind::LibraryCall))
        );
        assert_eq!(
            c("cublasLtMatmul", Usage::Call),
            Some((Library::CublasLt, SiteKind::LibraryCall))
        );
        assert_eq!(
            c("cuMemAlloc", Usage::Call),
            Some((Library::Driver, SiteKind::DriverApi))
        );
        assert_eq!(
            c("CUBLAS_OP_N", Usage::Other),
            Some((Library::Cublas, SiteKind::EnumConstant))
        );
        assert_eq!(
            c("CUresult", Usage::TypeLike),
            Some((Library::Driver, SiteKind::Type))
        );
        assert_eq!(
            c("ncclAllReduce", Usage::Call),
            Some((Library::Nccl, SiteKind::LibraryCall))
        );
        assert_eq!(
            c("CUDA_R_16F", Usage::Other),
            Some((Library::Runtime, SiteKind::EnumConstant))
        );
    }

    #[test]
    fn device_language() {
        assert_eq!(
            c("__global__", Usage::Other),
            Some((Library::Device, SiteKind::Qualifier))
        );
        assert_eq!(
            c("__shfl_down_sync", Usage::Call),
            Some((Library::Device, SiteKind::DeviceIntrinsic))
        );
        assert_eq!(
            c("atomicAdd", Usage::Call),
            Some((Library::Device, SiteKind::DeviceIntrinsic))
        );
        assert_eq!(
            c("threadIdx", Usage::Other),
            Some((Library::Device, SiteKind::DeviceIntrinsic))
        );
        assert_eq!(
            c("float4", Usage::TypeLike),
            Some((Library::Device, SiteKind::Type))
        );
        assert_eq!(c("__builtin_expect", Usage::Call), None);
        assert_eq!(classify("rsqrtf", Usage::Call, false), None);
        assert_eq!(c("custom", Usage::Call), None);
        assert_eq!(c("count", Usage::Call), None);
    }

    #[test]
    fn condition_macros_and_guards() {
        assert!(is_cuda_condition_macro("__CUDA_ARCH__"));
        assert!(is_cuda_condition_macro("__CUDA_RUNTIME_H__"));
        assert!(is_cuda_condition_macro("__DRIVER_TYPES_H__"));
        assert!(is_cuda_condition_macro("CUBLAS_V2_H_"));
        assert!(!is_cuda_condition_macro("MY_LIB_H_"));
    }

    #[test]
    fn headers() {
        assert_eq!(header_library("cuda_runtime.h"), Some(Library::Runtime));
        assert_eq!(header_library("cublas_v2.h"), Some(Library::Cublas));
        assert_eq!(
            header_library("thrust/device_vector.h"),
            Some(Library::Thrust)
        );
        assert_eq!(
            header_library("ATen/cuda/CUDAContext.h"),
            Some(Library::Torch)
        );
        assert_eq!(header_library("cuda.h"), Some(Library::Driver));
        assert_eq!(header_library("vector"), None);
        assert_eq!(header_library("my_kernels.cuh"), None);
    }
}
