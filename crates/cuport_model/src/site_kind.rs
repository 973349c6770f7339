use serde::{Deserialize, Serialize};

/// What kind of CUDA touchpoint a site is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SiteKind {
    /// A call to a CUDA runtime API function.
    RuntimeApi,
    /// A call to a CUDA driver API function.
    DriverApi,
    /// A call to a CUDA library (cuBLAS, NCCL, ...) function.
    LibraryCall,
    /// A device intrinsic, built-in variable or math function used in kernels.
    DeviceIntrinsic,
    /// A CUDA execution-space or memory-space qualifier (`__global__`, `__shared__`).
    Qualifier,
    /// A CUDA type (`cudaStream_t`, `cublasHandle_t`, `dim3`).
    Type,
    /// An enum value or constant (`cudaMemcpyHostToDevice`, `CUBLAS_OP_N`).
    EnumConstant,
    /// A CUDA macro used in code (`CUDART_INF_F`, `__CUDA_ARCH__` in code).
    Macro,
    /// A CUDA predefined or header-guard macro tested in a preprocessor condition.
    PreprocessorCondition,
    /// An `#include` of a CUDA header.
    Include,
    /// A kernel (`__global__` function) definition.
    KernelDefinition,
    /// A kernel launch `k<<<grid, block, smem, stream>>>(args)`.
    KernelLaunch,
    /// A lane computation that assumes a 32-wide warp (`tid & 31`, `% 32`, full masks).
    WarpSizeAssumption,
    /// A use of a framework's CUDA surface (`torch.cuda.*`, `.cuda()`, amp).
    FrameworkCall,
    /// A device string or device object (`"cuda:1"`, `torch.device("cuda", i)`).
    DeviceString,
    /// A distributed backend choice (`"nccl"`).
    DistributedBackend,
    /// An import of a package that only works with CUDA.
    CudaOnlyImport,
    /// A build-system rule (`enable_language(CUDA)`, `CUDAExtension`).
    BuildRule,
    /// An environment variable that addresses NVIDIA devices (`CUDA_VISIBLE_DEVICES`).
    EnvironmentVariable,
}

impl SiteKind {
    pub const ALL: [SiteKind; 19] = [
        SiteKind::RuntimeApi,
        SiteKind::DriverApi,
        SiteKind::LibraryCall,
        SiteKind::DeviceIntrinsic,
        SiteKind::Qualifier,
        SiteKind::Type,
        SiteKind::EnumConstant,
        SiteKind::Macro,
        SiteKind::PreprocessorCondition,
        SiteKind::Include,
        SiteKind::KernelDefinition,
        SiteKind::KernelLaunch,
        SiteKind::WarpSizeAssumption,
        SiteKind::FrameworkCall,
        SiteKind::DeviceString,
        SiteKind::DistributedBackend,
        SiteKind::CudaOnlyImport,
        SiteKind::BuildRule,
        SiteKind::EnvironmentVariable,
    ];

    pub fn id(self) -> &'static str {
        match self {
            SiteKind::RuntimeApi => "runtime-api",
            SiteKind::DriverApi => "driver-api",
            SiteKind::LibraryCall => "library-call",
            SiteKind::DeviceIntrinsic => "device-intrinsic",
            SiteKind::Qualifier => "qualifier",
            SiteKind::Type => "type",
            SiteKind::EnumConstant => "enum-constant",
            SiteKind::Macro => "macro",
            SiteKind::PreprocessorCondition => "preprocessor-condition",
            SiteKind::Include => "include",
            SiteKind::KernelDefinition => "kernel-definition",
            SiteKind::KernelLaunch => "kernel-launch",
            SiteKind::WarpSizeAssumption => "warp-size-assumption",
            SiteKind::FrameworkCall => "framework-call",
            SiteKind::DeviceString => "device-string",
            SiteKind::DistributedBackend => "distributed-backend",
            SiteKind::CudaOnlyImport => "cuda-only-import",
            SiteKind::BuildRule => "build-rule",
            SiteKind::EnvironmentVariable => "environment-variable",
        }
    }

    pub fn from_id(id: &str) -> Option<SiteKind> {
        SiteKind::ALL.into_iter().find(|kind| kind.id() == id)
    }
}

impl std::fmt::Display for SiteKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_match_serde() {
        for kind in SiteKind::ALL {
            assert_eq!(SiteKind::from_id(kind.id()), Some(kind));
            let json = serde_json::to_string(&kind).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", kind.id()));
        }
    }
}
