//! Every foreign call of the doctor lives here, behind safe functions that
//! return plain Rust values. Signatures and enum values follow the vendor
//! headers (`cuda.h`, `nvml.h`, `hip_runtime_api.h`, `cuda_runtime_api.h`).
#![allow(unsafe_code)]

mod cuda;
mod hip;
mod nvml;

use std::ffi::{c_char, c_int, c_uint, CStr};
use std::mem::ManuallyDrop;

use libloading::{Library, Symbol};

pub(crate) use cuda::{cuda_driver, cuda_runtime_version, CudaDriver};
pub(crate) use hip::{hip, Hip};
#[cfg(test)]
pub(crate) use nvml::NvmlDeviceInfo;
pub(crate) use nvml::{nvml, Nvml};

/// Large enough for every NVML and CUDA name/version buffer size constant.
const NAME_BUFFER: usize = 256;

/// C function shapes shared by the CUDA driver API and HIP (whose device
/// handles are both `int`).
type UintIn = unsafe extern "C" fn(c_uint) -> c_int;
type IntOut = unsafe extern "C" fn(*mut c_int) -> c_int;
type DeviceGet = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type DeviceGetName = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int;
type DeviceTotalMem = unsafe extern "C" fn(*mut usize, c_int) -> c_int;

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

/// One loaded vendor library and its name for messages. It is never
/// unloaded: after `cuInit`/`hipInit` the runtimes own threads and atexit
/// handlers that would run into unmapped code after a `dlclose`.
pub(super) struct Lib {
    name: String,
    lib: ManuallyDrop<Library>,
}

impl Lib {
    pub(super) fn open(name: &str) -> Result<Self, FfiError> {
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
            lib: ManuallyDrop::new(lib),
        })
    }

    /// # Safety
    /// `T` must be the exact C function type of `symbol` in the vendor header.
    pub(super) unsafe fn sym<T>(&self, symbol: &'static str) -> Result<Symbol<'_, T>, FfiError> {
        // SAFETY: the caller guarantees the type; libloading keeps the symbol
        // from outliving the library.
        unsafe { self.lib.get::<T>(symbol.as_bytes()) }.map_err(|_| FfiError::Symbol {
            library: self.name.clone(),
            symbol,
        })
    }
}

/// Reads a NUL-terminated buffer filled by a C function.
pub(super) fn buffer_to_string(buffer: &[c_char]) -> String {
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
pub(super) unsafe fn static_str(ptr: *const c_char) -> String {
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

/// Kills a whole process group (the tool and anything it started).
pub(crate) fn kill_process_group(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    // SAFETY: killpg only sends a signal; the group was created for a child we
    // spawned with `process_group(0)`, so its id equals the child's pid.
    let _ = unsafe { libc::killpg(pgid, libc::SIGKILL) };
}
