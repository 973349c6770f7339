use crate::ids::id_enum;

id_enum! {
    /// What kind of CUDA touchpoint a site is.
    pub enum SiteKind {
        /// A call to a CUDA runtime API function.
        RuntimeApi = "runtime-api",
        /// A call to a CUDA driver API function.
        DriverApi = "driver-api",
        /// A call to a CUDA library (cuBLAS, NCCL, ...) function.
        LibraryCall = "library-call",
        /// A device intrinsic, built-in variable or math function used in kernels.
        DeviceIntrinsic = "device-intrinsic",
        /// A CUDA execution-space or memory-space qualifier (`__global__`, `__shared__`).
        Qualifier = "qualifier",
        /// A CUDA type (`cudaStream_t`, `cublasHandle_t`, `dim3`).
        Type = "type",
        /// An enum value or constant (`cudaMemcpyHostToDevice`, `CUBLAS_OP_N`).
        EnumConstant = "enum-constant",
        /// A CUDA macro used in code (`CUDART_INF_F`, `__CUDA_ARCH__` in code).
        Macro = "macro",
        /// A CUDA predefined or header-guard macro tested in a preprocessor condition.
        PreprocessorCondition = "preprocessor-condition",
        /// An `#include` of a CUDA header.
        Include = "include",
        /// A kernel (`__global__` function) definition.
        KernelDefinition = "kernel-definition",
        /// A kernel launch `k<<<grid, block, smem, stream>>>(args)`.
        KernelLaunch = "kernel-launch",
        /// A lane computation that assumes a 32-wide warp (`tid & 31`, `% 32`, full masks).
        WarpSizeAssumption = "warp-size-assumption",
        /// A use of a framework's CUDA surface (`torch.cuda.*`, `.cuda()`, amp).
        FrameworkCall = "framework-call",
        /// A device string or device object (`"cuda:1"`, `torch.device("cuda", i)`).
        DeviceString = "device-string",
        /// A distributed backend choice (`"nccl"`).
        DistributedBackend = "distributed-backend",
        /// An import of a package that only works with CUDA.
        CudaOnlyImport = "cuda-only-import",
        /// A build-system rule (`enable_language(CUDA)`, `CUDAExtension`).
        BuildRule = "build-rule",
        /// An environment variable that addresses NVIDIA devices (`CUDA_VISIBLE_DEVICES`).
        EnvironmentVariable = "environment-variable",
    }
}

impl std::fmt::Display for SiteKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// Whether a name looks like one of CUDA's by its spelling: `cu`/`nv` in any
/// case, a `__`-prefixed intrinsic, a `_t` type. Names the rule tables know
/// that look like plain C (`abs`, `sqrtf`, `GLenum`) are touchpoints only
/// where some target spells them differently (`umin`, which HIP lacks).
pub fn looks_like_cuda_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("cu") || lower.contains("nv") || name.starts_with("__") || name.ends_with("_t")
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
