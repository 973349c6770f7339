use serde::{Deserialize, Serialize};

/// The CUDA component (or framework) a touchpoint belongs to. Reports group
/// by it and rule tables are organised by it.
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
pub enum Library {
    /// CUDA runtime API (`cuda*`, `cudaStream_t`, `<cuda_runtime.h>`).
    Runtime,
    /// CUDA driver API (`cu*`, `CUdeviceptr`, `<cuda.h>`).
    Driver,
    /// Kernel-side language: qualifiers, built-in variables, intrinsics, math.
    Device,
    Cublas,
    CublasLt,
    Cudnn,
    Cufft,
    Curand,
    Cusparse,
    Cusolver,
    Nccl,
    Nvrtc,
    Nvtx,
    Nvml,
    Cub,
    Thrust,
    Cutlass,
    CooperativeGroups,
    /// Compiler-predefined and header-guard macros (`__CUDACC__`, `CUDART_VERSION`).
    Preprocessor,
    /// PyTorch's CUDA surface (`torch.cuda`, device strings, ATen/c10 CUDA C++).
    Torch,
    /// Python packages that only run on NVIDIA (cupy, triton, apex, ...).
    PythonCudaPackage,
    /// Rust `cudarc` crate.
    Cudarc,
    /// Build systems: CMake CUDA language and targets, setup.py extensions.
    Build,
}

impl Library {
    pub const ALL: [Library; 23] = [
        Library::Runtime,
        Library::Driver,
        Library::Device,
        Library::Cublas,
        Library::CublasLt,
        Library::Cudnn,
        Library::Cufft,
        Library::Curand,
        Library::Cusparse,
        Library::Cusolver,
        Library::Nccl,
        Library::Nvrtc,
        Library::Nvtx,
        Library::Nvml,
        Library::Cub,
        Library::Thrust,
        Library::Cutlass,
        Library::CooperativeGroups,
        Library::Preprocessor,
        Library::Torch,
        Library::PythonCudaPackage,
        Library::Cudarc,
        Library::Build,
    ];

    /// The name NVIDIA (or the project) uses for it.
    pub fn name(self) -> &'static str {
        match self {
            Library::Runtime => "CUDA runtime",
            Library::Driver => "CUDA driver",
            Library::Device => "device code",
            Library::Cublas => "cuBLAS",
            Library::CublasLt => "cuBLASLt",
            Library::Cudnn => "cuDNN",
            Library::Cufft => "cuFFT",
            Library::Curand => "cuRAND",
            Library::Cusparse => "cuSPARSE",
            Library::Cusolver => "cuSOLVER",
            Library::Nccl => "NCCL",
            Library::Nvrtc => "NVRTC",
            Library::Nvtx => "NVTX",
            Library::Nvml => "NVML",
            Library::Cub => "CUB",
            Library::Thrust => "Thrust",
            Library::Cutlass => "CUTLASS",
            Library::CooperativeGroups => "cooperative groups",
            Library::Preprocessor => "CUDA macros",
            Library::Torch => "PyTorch CUDA",
            Library::PythonCudaPackage => "CUDA-only Python package",
            Library::Cudarc => "cudarc",
            Library::Build => "build system",
        }
    }

    /// The stable kebab-case id used in JSON, TOML and on the command line.
    pub fn id(self) -> &'static str {
        match self {
            Library::Runtime => "runtime",
            Library::Driver => "driver",
            Library::Device => "device",
            Library::Cublas => "cublas",
            Library::CublasLt => "cublas-lt",
            Library::Cudnn => "cudnn",
            Library::Cufft => "cufft",
            Library::Curand => "curand",
            Library::Cusparse => "cusparse",
            Library::Cusolver => "cusolver",
            Library::Nccl => "nccl",
            Library::Nvrtc => "nvrtc",
            Library::Nvtx => "nvtx",
            Library::Nvml => "nvml",
            Library::Cub => "cub",
            Library::Thrust => "thrust",
            Library::Cutlass => "cutlass",
            Library::CooperativeGroups => "cooperative-groups",
            Library::Preprocessor => "preprocessor",
            Library::Torch => "torch",
            Library::PythonCudaPackage => "python-cuda-package",
            Library::Cudarc => "cudarc",
            Library::Build => "build",
        }
    }

    pub fn from_id(id: &str) -> Option<Library> {
        Library::ALL.into_iter().find(|lib| lib.id() == id)
    }
}

impl std::fmt::Display for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_match_serde() {
        for lib in Library::ALL {
            assert_eq!(Library::from_id(lib.id()), Some(lib));
            let json = serde_json::to_string(&lib).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", lib.id()));
        }
    }
}
