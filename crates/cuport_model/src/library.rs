use crate::ids::id_enum;

id_enum! {
    /// The CUDA component (or framework) a touchpoint belongs to. Reports group
    /// by it and rule tables are organised by it.
    pub enum Library {
        /// CUDA runtime API (`cuda*`, `cudaStream_t`, `<cuda_runtime.h>`).
        Runtime = "runtime",
        /// CUDA driver API (`cu*`, `CUdeviceptr`, `<cuda.h>`).
        Driver = "driver",
        /// Kernel-side language: qualifiers, built-in variables, intrinsics, math.
        Device = "device",
        Cublas = "cublas",
        CublasLt = "cublas-lt",
        Cudnn = "cudnn",
        Cufft = "cufft",
        Curand = "curand",
        Cusparse = "cusparse",
        Cusolver = "cusolver",
        Nccl = "nccl",
        Nvrtc = "nvrtc",
        Nvtx = "nvtx",
        Nvml = "nvml",
        Cub = "cub",
        Thrust = "thrust",
        Cutlass = "cutlass",
        CooperativeGroups = "cooperative-groups",
        /// Compiler-predefined and header-guard macros (`__CUDACC__`, `CUDART_VERSION`).
        Preprocessor = "preprocessor",
        /// PyTorch's CUDA surface (`torch.cuda`, device strings, ATen/c10 CUDA C++).
        Torch = "torch",
        /// Python packages that only run on NVIDIA (cupy, triton, apex, ...).
        PythonCudaPackage = "python-cuda-package",
        /// Rust `cudarc` crate.
        Cudarc = "cudarc",
        /// Build systems: CMake CUDA language and targets, setup.py extensions.
        Build = "build",
    }
}

impl Library {
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
