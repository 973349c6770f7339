//! Every foreign call of the doctor lives here, behind safe functions that
//! return plain Rust values. Signatures and enum values follow the vendor
//! headers (`cuda.h`, `nvml.h`, `hip_runtime_api.h`, `cuda_runtime_api.h`).
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void, CStr};

use libloading::{Library, Symbol};

/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` / `_MINOR` in `cuda.h`.
const CU_ATTR_CC_MAJOR: c_int = 75;
const CU_ATTR_CC_MINOR: c_int = 76;
/// `NVML_FEATURE_ENABLED` in `nvml.h` (`nvmlEnableState_t`).
const NVML_FEATURE_ENABLED: c_uint = 1;
/// Large enough for every NVML and CUDA name/version buffer size constant.
const NAME_BUFFER: usize = 256;

#[derive(Debug, thiserror::Error)]
pub(crate) enum FfiError {
    #[error("{library} could not be loaded: {message}")]
    Load { library: String, message: String },
    #[error("{library} has no symbol {symbol}")]
    Symbol {
        library: String,
        symbol: &'static str,
    },
    #[error("{call} returned {code} ({name})")]
    Call {
        call: &'static str,
        code: i32,
        name: String,
    },
}

/// One loaded vendor library and its name for messages.
struct Lib {
    name: String,
    lib: Library,
}

impl Lib {
    fn open(name: &str) -> Result<Self, FfiError> {
        // SAFETY: loading runs the library's initialisers. Callers pass only
        // vendor driver/runtime library names or absolute paths they found in
        // system or vendor directories, never a path relative to the current
        // directory.
        let lib = unsafe { Library::new(name) }.map_err(|err| FfiError::Load {
            library: name.to_owned(),
            message: err.to_string(),
        })?;
        Ok(Self {
            name: name.to_owned(),
            lib,
        })
    }

    /// # Safety
    /// `T` must be the exact C function type of `symbol` in the vendor header.
    unsafe fn sym<T>(&self, symbol: &'static str) -> Result<Symbol<'_, T>, FfiError> {
        // SAFETY: the caller guarantees the type; libloading keeps the symbol
        // from outliving the library.
        unsafe { self.lib.get::<T>(symbol.as_bytes()) }.map_err(|_| FfiError::Symbol {
            library: self.name.clone(),
            symbol,
        })
    }
}

/// Reads a NUL-terminated buffer filled by a C function.
fn buffer_to_string(buffer: &[c_char]) -> String {
    let bytes: Vec<u8> = buffer
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// # Safety
/// `ptr` must be null or point to a NUL-terminated string that stays valid
/// for the duration of the call (vendor error-name tables are static).
unsafe fn static_str(ptr: *const c_char) -> String {
    if ptr.is_null() {
        return "unknown".to_owned();
    }
    // SAFETY: non-null and NUL-terminated per the contract above.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

/// Whether a library loads at all (used where the version API is not
/// documented well enough to call).
pub(crate) fn loadable(name: &str) -> Result<(), FfiError> {
    Lib::open(name).map(|_| ())
}

#[derive(Debug)]
pub(crate) struct GpuDevice {
    pub(crate) name: String,
    pub(crate) total_bytes: u64,
    pub(crate) compute_capability: Option<(i32, i32)>,
}

#[derive(Debug)]
pub(crate) struct CudaDriver {
    /// `cuDriverGetVersion`: 1000 * major + 10 * minor.
    pub(crate) version: i32,
    pub(crate) devices: Result<Vec<GpuDevice>, FfiError>,
}

type CuInit = unsafe extern "C" fn(c_uint) -> c_int;
type CuIntOut = unsafe extern "C" fn(*mut c_int) -> c_int;
type CuDeviceGet = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type CuDeviceGetName = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int;
type CuDeviceTotalMem = unsafe extern "C" fn(*mut usize, c_int) -> c_int;
type CuDeviceGetAttribute = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int;
type CuGetErrorName = unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int;

/// Driver version and devices through the CUDA driver API (`libcuda.so.1`).
pub(crate) fn cuda_driver(library: &str) -> Result<CudaDriver, FfiError> {
    let lib = Lib::open(library)?;
    // SAFETY: `CUresult cuDriverGetVersion(int *driverVersion)`.
    let get_version = unsafe { lib.sym::<CuIntOut>("cuDriverGetVersion") }?;
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
            lib.sym::<CuInit>("cuInit")?,
            lib.sym::<CuIntOut>("cuDeviceGetCount")?,
            lib.sym::<CuDeviceGet>("cuDeviceGet")?,
            lib.sym::<CuDeviceGetName>("cuDeviceGetName")?,
            lib.sym::<CuDeviceTotalMem>("cuDeviceTotalMem_v2")?,
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
    let get_version = unsafe { lib.sym::<CuIntOut>("cudaRuntimeGetVersion") }?;
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
            lib.sym::<CuIntOut>("nvmlSystemGetCudaDriverVersion")?,
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
            lib.sym::<CuIntOut>("hipRuntimeGetVersion")?,
            lib.sym::<CuIntOut>("hipDriverGetVersion")?,
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
            lib.sym::<CuInit>("hipInit")?,
            lib.sym::<CuIntOut>("hipGetDeviceCount")?,
            lib.sym::<CuDeviceGet>("hipDeviceGet")?,
            lib.sym::<CuDeviceGetName>("hipDeviceGetName")?,
            lib.sym::<CuDeviceTotalMem>("hipDeviceTotalMem")?,
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

/// Kills a whole process group (the tool and anything it started).
pub(crate) fn kill_process_group(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    // SAFETY: killpg only sends a signal; the group was created for a child we
    // spawned with `process_group(0)`, so its id equals the child's pid.
    let _ = unsafe { libc::killpg(pgid, libc::SIGKILL) };
}
