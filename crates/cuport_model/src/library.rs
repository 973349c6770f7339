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
