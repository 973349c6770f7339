//! HIP runtime (`libamdhip64.so`), per `hip_runtime_api.h`.
use std::ffi::{c_char, c_int};

use super::{
    buffer_to_string, static_str, DeviceGet, DeviceGetName, DeviceTotalMem, FfiError, GpuDevice,
    IntOut, Lib, UintIn, NAME_BUFFER,
};

#[derive(Debug)]
pub(crate) struct Hip {
    /// `hipRuntimeGetVersion`: major * 10_000_000 + minor * 100_000 + patch on AMD.
    pub(crate) runtime_version: i32,
    pub(crate) driver_version: Option<i32>,
    pub(crate) devices: Result<Vec<GpuDevice>, FfiError>,
}

type HipErrorName = unsafe extern "C" fn(c_int) -> *const c_char;

/// Runtime version and devices through the HIP runtime (`libamdhip64.so`).
pub(crate) fn hip(library: &str) -> Result<Hip, FfiError> {
    let lib = Lib::open(library)?;
    // SAFETY: `hipError_t hipRuntimeGetVersion(int*)`, `hipDriverGetVersion(int*)`.
    let (runtime_fn, driver_fn) = unsafe {
        (
            lib.sym::<IntOut>("hipRuntimeGetVersion")?,
            lib.sym::<IntOut>("hipDriverGetVersion")?,
        )
    };
    let mut runtime_version: c_int = 0;
    // SAFETY: valid out pointer.
    hip_check(&lib, "hipRuntimeGetVersion", unsafe {
        runtime_fn(&mut runtime_version)
    })?;
    let mut driver_version: c_int = 0;
    // SAFETY: valid out pointer.
    let driver_ok = unsafe { driver_fn(&mut driver_version) } == 0;
    Ok(Hip {
        runtime_version,
        driver_version: driver_ok.then_some(driver_version),
        devices: hip_devices(&lib),
    })
}

fn hip_check(lib: &Lib, call: &'static str, code: c_int) -> Result<(), FfiError> {
    if code == 0 {
        return Ok(());
    }
    // SAFETY: `const char* hipGetErrorName(hipError_t)` returns a static string.
    let name = match unsafe { lib.sym::<HipErrorName>("hipGetErrorName") } {
        Ok(error_name) => unsafe { static_str(error_name(code)) },
        Err(_) => "unknown".to_owned(),
    };
    Err(FfiError::Call { call, code, name })
}

fn hip_devices(lib: &Lib) -> Result<Vec<GpuDevice>, FfiError> {
    // SAFETY: types from hip_runtime_api.h: hipInit(unsigned), hipGetDeviceCount(int*),
    // hipDeviceGet(hipDevice_t*, int), hipDeviceGetName(char*, int, hipDevice_t),
    // hipDeviceTotalMem(size_t*, hipDevice_t); hipDevice_t is int.
    let (init, count_fn, get, get_name, total_mem) = unsafe {
        (
            lib.sym::<UintIn>("hipInit")?,
            lib.sym::<IntOut>("hipGetDeviceCount")?,
            lib.sym::<DeviceGet>("hipDeviceGet")?,
            lib.sym::<DeviceGetName>("hipDeviceGetName")?,
            lib.sym::<DeviceTotalMem>("hipDeviceTotalMem")?,
        )
    };
    // SAFETY: flags must be 0.
    hip_check(lib, "hipInit", unsafe { init(0) })?;
    let mut count: c_int = 0;
    // SAFETY: valid out pointer.
    hip_check(lib, "hipGetDeviceCount", unsafe { count_fn(&mut count) })?;
    let mut devices = Vec::new();
    for ordinal in 0..count {
        let mut device: c_int = 0;
        // SAFETY: valid out pointer, ordinal below the count.
        hip_check(lib, "hipDeviceGet", unsafe { get(&mut device, ordinal) })?;
        let mut name = [0 as c_char; NAME_BUFFER];
        // SAFETY: the buffer's real length.
        let code = unsafe { get_name(name.as_mut_ptr(), NAME_BUFFER as c_int, device) };
        hip_check(lib, "hipDeviceGetName", code)?;
        let mut bytes: usize = 0;
        // SAFETY: valid out pointer and device.
        hip_check(lib, "hipDeviceTotalMem", unsafe {
            total_mem(&mut bytes, device)
        })?;
        devices.push(GpuDevice {
            name: buffer_to_string(&name),
            total_bytes: bytes as u64,
            compute_capability: None,
        });
    }
    Ok(devices)
}
