//! Finding the CUDA libraries before cudarc touches them, and describing
//! the device a result was measured on.
#![allow(unsafe_code)]
use std::sync::Arc;

use cudarc::cublas::CudaBlas;
use cudarc::driver::CudaContext;

use super::{failed, BACKEND};
use crate::device::{host_name, DeviceIdentity};
use crate::error::{RegressError, Result};

/// cudarc panics on first use of a library it cannot load; check the
/// driver and NVRTC up front so the common "no GPU here" case is a plain
/// message. cuBLAS is checked separately: only gemm cases need it.
pub(super) fn probe_libraries() -> Result<()> {
    // Safety: the probes only dlopen and drop each candidate library.
    let driver = unsafe { cudarc::driver::sys::is_culib_present() };
    if !driver {
        return Err(RegressError::BackendUnavailable {
            backend: BACKEND.into(),
            reason: "could not load the NVIDIA driver library (libcuda.so.1 / libcuda.so); \
                     install the NVIDIA driver or add its folder to LD_LIBRARY_PATH"
                .into(),
        });
    }
    // Safety: as above.
    let nvrtc = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    if !nvrtc {
        return Err(RegressError::BackendUnavailable {
            backend: BACKEND.into(),
            reason: "the NVIDIA driver loaded, but NVRTC (libnvrtc.so.12 / libnvrtc.so) did not; \
                     install the CUDA 12 runtime libraries (e.g. the cuda-nvrtc-12-x package or \
                     pip nvidia-cuda-nvrtc-cu12) and put their folder on LD_LIBRARY_PATH"
                .into(),
        });
    }
    Ok(())
}

/// Whether cuBLAS can be loaded; the error is the message gemm legs get.
pub(super) fn cublas_present() -> std::result::Result<(), String> {
    // Safety: only dlopens and drops the candidate libraries.
    if unsafe { cudarc::cublas::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(
            "cuBLAS (libcublas.so.12 / libcublas.so) did not load; install the CUDA 12 \
             cuBLAS library (e.g. libcublas-12-x or pip nvidia-cublas-cu12) and put its folder \
             on LD_LIBRARY_PATH"
                .into(),
        )
    }
}

/// Model with compute capability, driver (kernel module and CUDA API
/// version) and runtime (NVRTC and cuBLAS versions).
pub(super) fn describe(ctx: &Arc<CudaContext>, blas: Option<&CudaBlas>) -> Result<DeviceIdentity> {
    let name = ctx.name().map_err(failed("cuDeviceGetName"))?;
    let (major, minor) = ctx
        .compute_capability()
        .map_err(failed("reading the compute capability"))?;
    let mut runtime = vec![format!("NVRTC {}", nvrtc_version()?)];
    if let Some(blas) = blas {
        runtime.push(format!("cuBLAS {}", cublas_version(blas)?));
    }
    Ok(DeviceIdentity {
        backend: BACKEND.into(),
        model: format!("{name} (sm_{major}{minor})"),
        driver: Some(driver_version()?),
        runtime: Some(runtime.join(", ")),
        host: host_name(),
    })
}

/// `550.54.15 (CUDA 12.4)`: the kernel module version when
/// `/proc/driver/nvidia/version` exists, plus `cuDriverGetVersion`.
fn driver_version() -> Result<String> {
    let mut v: std::ffi::c_int = 0;
    // Safety: writes one int; the driver library is loaded (probed).
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(failed("cuDriverGetVersion"))?;
    let api = format!("CUDA {}.{}", v / 1000, (v % 1000) / 10);
    let module = std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|text| kernel_module_version(&text));
    Ok(match module {
        Some(m) => format!("{m} ({api})"),
        None => api,
    })
}

/// The version after "Kernel Module" in `/proc/driver/nvidia/version`.
fn kernel_module_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version"))?;
    let (_, rest) = line.split_once("Kernel Module")?;
    rest.split_whitespace().next().map(str::to_owned)
}

fn nvrtc_version() -> Result<String> {
    let (mut major, mut minor): (std::ffi::c_int, std::ffi::c_int) = (0, 0);
    // Safety: writes two ints; NVRTC is loaded (probed).
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(failed("nvrtcVersion"))?;
    Ok(format!("{major}.{minor}"))
}

fn cublas_version(blas: &CudaBlas) -> Result<String> {
    let mut v: std::ffi::c_int = 0;
    // Safety: writes one int through a live handle.
    unsafe { cudarc::cublas::sys::cublasGetVersion_v2(*blas.handle(), &mut v) }
        .result()
        .map_err(failed("cublasGetVersion"))?;
    Ok(format!("{}.{}.{}", v / 10_000, (v % 10_000) / 100, v % 100))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_module_version_is_read_from_the_proc_file() {
        let text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version: gcc 12\n";
        assert_eq!(kernel_module_version(text).as_deref(), Some("550.54.15"));
        assert_eq!(kernel_module_version("nothing"), None);
    }
}
