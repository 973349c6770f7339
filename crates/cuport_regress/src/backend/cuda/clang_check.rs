//! Test-only: compile the NVRTC programs with clang's CUDA front end when a
//! clang is installed, so kernel typos show up on machines without CUDA.
//! NVRTC's built-ins (thread indices, math, bit casts) are declared by a
//! small stub prelude; clang only has to parse, type-check and emit PTX.
#![allow(clippy::expect_used, clippy::print_stderr)]
use std::process::Command;

use super::kernels::source;
use crate::dtype::DType;

const NVRTC_STUBS: &str = r#"
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
struct uint3 { unsigned x, y, z; };
extern const __device__ uint3 threadIdx, blockIdx, blockDim, gridDim;
__device__ void __syncthreads();
extern "C" __device__ float expf(float);
extern "C" __device__ float erff(float);
extern "C" __device__ float sqrtf(float);
extern "C" __device__ float fmaxf(float, float);
extern "C" __device__ double exp(double);
extern "C" __device__ double erf(double);
extern "C" __device__ double sqrt(double);
extern "C" __device__ double fmax(double, double);
__device__ float __int_as_float(int);
__device__ float __uint_as_float(unsigned);
__device__ unsigned __float_as_uint(float);
__device__ double __longlong_as_double(long long);
"#;

fn clang() -> Option<&'static str> {
    [
        "clang++",
        "clang++-19",
        "clang++-18",
        "clang++-17",
        "clang++-16",
        "clang++-15",
        "clang++-14",
    ]
    .into_iter()
    .find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn kernel_sources_compile_to_ptx_with_clang_when_available() {
    let Some(clang) = clang() else {
        eprintln!("skipped: no clang++ on PATH to check the NVRTC sources");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    for dtype in DType::ALL {
        let cu = dir.path().join(format!("cuport_{dtype}.cu"));
        std::fs::write(&cu, format!("{NVRTC_STUBS}{}", source(dtype))).expect("write source");
        let out = Command::new(clang)
            .args(["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80"])
            .args(["-nocudainc", "-nocudalib", "-S", "-Wall", "-Werror"])
            // A CUDA found on PATH (the nvcc wheels) may be newer than this
            // clang knows; the stubs above replace its headers anyway.
            .args(["-Wno-unknown-cuda-version", "-o"])
            .arg(cu.with_extension("ptx"))
            .arg(&cu)
            .output()
            .expect("run clang");
        assert!(
            out.status.success(),
            "{dtype}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ptx = std::fs::read_to_string(cu.with_extension("ptx")).expect("read ptx");
        assert!(
            ptx.contains(".entry cuport_add"),
            "{dtype}: no cuport_add entry"
        );
    }
}
