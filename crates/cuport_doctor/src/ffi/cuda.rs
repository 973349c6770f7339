//! CUDA driver API (`libcuda.so.1`) and runtime (`libcudart.so`), per `cuda.h`
//! and `cuda_runtime_api.h`.
use std::ffi::{c_char, c_int};

use super::{
    buffer_to_string, static_str, DeviceGet, DeviceGetName, DeviceTotalMem, FfiError, GpuDevice,
    IntOut, Lib, UintIn, NAME_BUFFER,
};

/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` / `_MINOR` in `cuda.h`.
const CU_ATTR_CC_MAJOR: c_int = 75;
const CU_ATTR_CC_MINOR: c_int = 76;

#[derive(Debug)]
pub(crate) struct CudaDriver {
    /// `cuDriverGetVersion`: 1000 * major + 10 * minor.
    pub(crate) version: i32,
    pub(crate) devices: Result<Vec<GpuDevice>, FfiError>,
}

type CuDeviceGetAttribute = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int;
type CuGetErrorName = unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int;

/// Driver version and devices through the CUDA driver API (`libcuda.so.1`).
pub(crate) fn cuda_driver(library: &str) -> Result<CudaDriver, FfiError> {
    let lib = Lib::open(library)?;
    // SAFETY: `CUresult cuDriverGetVersion(int *driverVersion)`.
    let get_version = unsafe { lib.sym::<IntOut>("cuDriverGetVersion") }?;
    let mut version: c_int = 0;
    // SAFETY: valid out pointer; this call needs no cuInit.
    let code = unsafe { get_version(&mut version) };
    cuda_check(&lib, "cuDriverGetVersion", code)?;
    Ok(CudaDriver {
        version,
        devices: cuda_devices(&lib),
    })
}

fn cuda_check(lib: &Lib, call: &'static str, code: c_int) -> Result<(), FfiError> {
    if code == 0 {
        return Ok(());
    }
    let mut name_ptr: *const c_char = std::ptr::null();
    // SAFETY: `CUresult cuGetErrorName(CUresult error, const char **pStr)`;
    // the returned string is static inside the driver.
    let name = match unsafe { lib.sym::<CuGetErrorName>("cuGetErrorName") } {
        Ok(get_name) if unsafe { get_name(code, &mut name_ptr) } == 0 => unsafe {
            static_str(name_ptr)
        },
        _ => "unknown".to_owned(),
    };
    Err(FfiError::Call { call, code, name })
}

fn cuda_devices(lib: &Lib) -> Result<Vec<GpuDevice>, FfiError> {
    // SAFETY: each type matches its declaration in cuda.h:
    // cuInit(unsigned int), cuDeviceGetCount(int*), cuDeviceGet(CUdevice*, int),
    // cuDeviceGetName(char*, int, CUdevice), cuDeviceTotalMem_v2(size_t*, CUdevice),
    // cuDeviceGetAttribute(int*, CUdevice_attribute, CUdevice); CUdevice is int.
    let (init, count_fn, get, get_name, total_mem, attribute) = unsafe {
        (
            lib.sym::<UintIn>("cuInit")?,
            lib.sym::<IntOut>("cuDeviceGetCount")?,
            lib.sym::<DeviceGet>("cuDeviceGet")?,
            lib.sym::<DeviceGetName>("cuDeviceGetName")?,
            lib.sym::<DeviceTotalMem>("cuDeviceTotalMem_v2")?,
            lib.sym::<CuDeviceGetAttribute>("cuDeviceGetAttribute")?,
        )
    };
    // SAFETY: flags must be 0 per the CUDA documentation.
    cuda_check(lib, "cuInit", unsafe { init(0) })?;
    let mut count: c_int = 0;
    // SAFETY: valid out pointer.
    cuda_check(lib, "cuDeviceGetCount", unsafe { count_fn(&mut count) })?;
    let mut devices = Vec::new();
    for ordinal in 0..count {
        let mut device: c_int = 0;
        // SAFETY: valid out pointer and an ordinal below the device count.
        cuda_check(lib, "cuDeviceGet", unsafe { get(&mut device, ordinal) })?;
        let mut name = [0 as c_char; NAME_BUFFER];
        // SAFETY: the buffer length passed is the buffer's real length.
        let code = unsafe { get_name(name.as_mut_ptr(), NAME_BUFFER as c_int, device) };
        cuda_check(lib, "cuDeviceGetName", code)?;
        let mut bytes: usize = 0;
        // SAFETY: valid out pointer and device handle.
        cuda_check(lib, "cuDeviceTotalMem_v2", unsafe {
            total_mem(&mut bytes, device)
        })?;
        let (mut major, mut minor): (c_int, c_int) = (0, 0);
        // SAFETY: valid out pointers, attribute values from cuda.h.
        let cc_ok = unsafe {
            attribute(&mut major, CU_ATTR_CC_MAJOR, device) == 0
                && attribute(&mut minor, CU_ATTR_CC_MINOR, device) == 0
        };
        devices.push(GpuDevice {
            name: buffer_to_string(&name),
            total_bytes: bytes as u64,
            compute_capability: cc_ok.then_some((major, minor)),
        });
    }
    Ok(devices)
}

/// `cudaRuntimeGetVersion` of a CUDA runtime library (1000 * major + 10 * minor).
pub(crate) fn cuda_runtime_version(library: &str) -> Result<i32, FfiError> {
    let lib = Lib::open(library)?;
    // SAFETY: `cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)`.
    let get_version = unsafe { lib.sym::<IntOut>("cudaRuntimeGetVersion") }?;
    let mut version: c_int = 0;
    // SAFETY: valid out pointer; needs no device.
    let code = unsafe { get_version(&mut version) };
    if code != 0 {
        return Err(FfiError::Call {
            call: "cudaRuntimeGetVersion",
            code,
            name: "cudaError_t".to_owned(),
        });
    }
    Ok(version)
}
