//! NVML (`libnvidia-ml.so.1`), per `nvml.h`.
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};

use super::{buffer_to_string, static_str, FfiError, IntOut, Lib, NAME_BUFFER};

/// `NVML_FEATURE_ENABLED` in `nvml.h` (`nvmlEnableState_t`).
const NVML_FEATURE_ENABLED: c_uint = 1;

type NvmlDevice = *mut c_void;
type NvmlVoid = unsafe extern "C" fn() -> c_int;
type NvmlStringOut = unsafe extern "C" fn(*mut c_char, c_uint) -> c_int;
type NvmlUintOut = unsafe extern "C" fn(*mut c_uint) -> c_int;
type NvmlHandleByIndex = unsafe extern "C" fn(c_uint, *mut NvmlDevice) -> c_int;
type NvmlDeviceString = unsafe extern "C" fn(NvmlDevice, *mut c_char, c_uint) -> c_int;
type NvmlDeviceMemory = unsafe extern "C" fn(NvmlDevice, *mut NvmlMemory) -> c_int;
type NvmlDeviceUint = unsafe extern "C" fn(NvmlDevice, *mut c_uint) -> c_int;
type NvmlDeviceTwoUint = unsafe extern "C" fn(NvmlDevice, *mut c_uint, *mut c_uint) -> c_int;
type NvmlMigHandle = unsafe extern "C" fn(NvmlDevice, c_uint, *mut NvmlDevice) -> c_int;
type NvmlErrorString = unsafe extern "C" fn(c_int) -> *const c_char;

/// `nvmlMemory_t` (version 1) in nvml.h.
#[repr(C)]
#[derive(Default)]
struct NvmlMemory {
    total: c_ulonglong,
    free: c_ulonglong,
    used: c_ulonglong,
}

#[derive(Debug)]
pub(crate) struct NvmlDeviceInfo {
    pub(crate) name: String,
    pub(crate) total_bytes: Option<u64>,
    pub(crate) persistence: Option<bool>,
    /// (current enabled, pending enabled, active MIG devices); None when
    /// the GPU does not support MIG.
    pub(crate) mig: Option<(bool, bool, u32)>,
}

#[derive(Debug)]
pub(crate) struct Nvml {
    pub(crate) driver_version: String,
    pub(crate) cuda_driver_version: Option<i32>,
    pub(crate) devices: Result<Vec<NvmlDeviceInfo>, FfiError>,
}

/// Driver version and GPUs through NVML (`libnvidia-ml.so.1`).
pub(crate) fn nvml(library: &str) -> Result<Nvml, FfiError> {
    let lib = Lib::open(library)?;
    // SAFETY: `nvmlReturn_t nvmlInit_v2(void)` and `nvmlShutdown(void)`.
    let (init, shutdown) = unsafe {
        (
            lib.sym::<NvmlVoid>("nvmlInit_v2")?,
            lib.sym::<NvmlVoid>("nvmlShutdown")?,
        )
    };
    // SAFETY: no arguments.
    nvml_check(&lib, "nvmlInit_v2", unsafe { init() })?;
    let result = nvml_system(&lib);
    // SAFETY: paired with the successful nvmlInit_v2 above.
    let _ = unsafe { shutdown() };
    result
}

fn nvml_check(lib: &Lib, call: &'static str, code: c_int) -> Result<(), FfiError> {
    if code == 0 {
        return Ok(());
    }
    // SAFETY: `const char* nvmlErrorString(nvmlReturn_t)` returns a static string.
    let name = match unsafe { lib.sym::<NvmlErrorString>("nvmlErrorString") } {
        Ok(error_string) => unsafe { static_str(error_string(code)) },
        Err(_) => "unknown".to_owned(),
    };
    Err(FfiError::Call { call, code, name })
}

fn nvml_system(lib: &Lib) -> Result<Nvml, FfiError> {
    // SAFETY: `nvmlSystemGetDriverVersion(char *version, unsigned int length)`,
    // `nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)`.
    let (driver_version_fn, cuda_version_fn) = unsafe {
        (
            lib.sym::<NvmlStringOut>("nvmlSystemGetDriverVersion")?,
            lib.sym::<IntOut>("nvmlSystemGetCudaDriverVersion")?,
        )
    };
    let mut buffer = [0 as c_char; NAME_BUFFER];
    // SAFETY: the length passed is the buffer's real length.
    let code = unsafe { driver_version_fn(buffer.as_mut_ptr(), NAME_BUFFER as c_uint) };
    nvml_check(lib, "nvmlSystemGetDriverVersion", code)?;
    let mut cuda_version: c_int = 0;
    // SAFETY: valid out pointer.
    let cuda_ok = unsafe { cuda_version_fn(&mut cuda_version) } == 0;
    Ok(Nvml {
        driver_version: buffer_to_string(&buffer),
        cuda_driver_version: cuda_ok.then_some(cuda_version),
        devices: nvml_devices(lib),
    })
}

fn nvml_devices(lib: &Lib) -> Result<Vec<NvmlDeviceInfo>, FfiError> {
    // SAFETY: `nvmlDeviceGetCount_v2(unsigned int*)`,
    // `nvmlDeviceGetHandleByIndex_v2(unsigned int, nvmlDevice_t*)`.
    let (count_fn, handle_fn) = unsafe {
        (
            lib.sym::<NvmlUintOut>("nvmlDeviceGetCount_v2")?,
            lib.sym::<NvmlHandleByIndex>("nvmlDeviceGetHandleByIndex_v2")?,
        )
    };
    let mut count: c_uint = 0;
    // SAFETY: valid out pointer.
    nvml_check(lib, "nvmlDeviceGetCount_v2", unsafe {
        count_fn(&mut count)
    })?;
    let mut devices = Vec::new();
    for index in 0..count {
        let mut handle: NvmlDevice = std::ptr::null_mut();
        // SAFETY: valid out pointer and an index below the device count.
        let code = unsafe { handle_fn(index, &mut handle) };
        nvml_check(lib, "nvmlDeviceGetHandleByIndex_v2", code)?;
        devices.push(nvml_device(lib, handle)?);
    }
    Ok(devices)
}

fn nvml_device(lib: &Lib, handle: NvmlDevice) -> Result<NvmlDeviceInfo, FfiError> {
    // SAFETY: types from nvml.h: nvmlDeviceGetName(nvmlDevice_t, char*, unsigned),
    // nvmlDeviceGetMemoryInfo(nvmlDevice_t, nvmlMemory_t*),
    // nvmlDeviceGetPersistenceMode(nvmlDevice_t, nvmlEnableState_t*) (a C enum),
    // nvmlDeviceGetMigMode(nvmlDevice_t, unsigned*, unsigned*).
    let (name_fn, memory_fn, persistence_fn, mig_fn) = unsafe {
        (
            lib.sym::<NvmlDeviceString>("nvmlDeviceGetName")?,
            lib.sym::<NvmlDeviceMemory>("nvmlDeviceGetMemoryInfo")?,
            lib.sym::<NvmlDeviceUint>("nvmlDeviceGetPersistenceMode")?,
            lib.sym::<NvmlDeviceTwoUint>("nvmlDeviceGetMigMode")?,
        )
    };
    let mut name = [0 as c_char; NAME_BUFFER];
    // SAFETY: a handle from nvmlDeviceGetHandleByIndex_v2 and the buffer's real length.
    let code = unsafe { name_fn(handle, name.as_mut_ptr(), NAME_BUFFER as c_uint) };
    nvml_check(lib, "nvmlDeviceGetName", code)?;
    let mut memory = NvmlMemory::default();
    // SAFETY: valid handle and out pointer to a repr(C) nvmlMemory_t.
    let memory_ok = unsafe { memory_fn(handle, &mut memory) } == 0;
    let mut persistence: c_uint = 0;
    // SAFETY: valid handle and out pointer.
    let persistence_ok = unsafe { persistence_fn(handle, &mut persistence) } == 0;
    let (mut current, mut pending): (c_uint, c_uint) = (0, 0);
    // SAFETY: valid handle and out pointers; fails with NOT_SUPPORTED on non-MIG GPUs.
    let mig_ok = unsafe { mig_fn(handle, &mut current, &mut pending) } == 0;
    let mig = mig_ok.then(|| (current == 1, pending == 1, mig_instances(lib, handle)));
    Ok(NvmlDeviceInfo {
        name: buffer_to_string(&name),
        total_bytes: memory_ok.then_some(memory.total),
        persistence: persistence_ok.then_some(persistence == NVML_FEATURE_ENABLED),
        mig,
    })
}

/// Counts the MIG devices that exist (a slot without one answers NOT_FOUND).
fn mig_instances(lib: &Lib, handle: NvmlDevice) -> u32 {
    // SAFETY: `nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t, unsigned*)`,
    // `nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t, unsigned, nvmlDevice_t*)`.
    let (Ok(max_fn), Ok(mig_handle_fn)) = (unsafe {
        (
            lib.sym::<NvmlDeviceUint>("nvmlDeviceGetMaxMigDeviceCount"),
            lib.sym::<NvmlMigHandle>("nvmlDeviceGetMigDeviceHandleByIndex"),
        )
    }) else {
        return 0;
    };
    let mut max: c_uint = 0;
    // SAFETY: valid handle and out pointer.
    if unsafe { max_fn(handle, &mut max) } != 0 {
        return 0;
    }
    (0..max)
        .filter(|&index| {
            let mut mig: NvmlDevice = std::ptr::null_mut();
            // SAFETY: valid parent handle, index below the maximum, out pointer.
            unsafe { mig_handle_fn(handle, index, &mut mig) == 0 }
        })
        .count() as u32
}
