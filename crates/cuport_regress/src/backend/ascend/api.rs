//! The AscendCL runtime and aclnn entry points the `ascend` backend calls,
//! resolved with libloading.
//!
//! Provenance (see regress/README.md, "Ascend facts"):
//! * runtime signatures and enum values: the CANN headers vendored in
//!   `Ascend/pytorch` `third_party/acl/inc/acl/{acl_rt.h,acl_base.h}`
//!   (commit 121d44edf^, "Current version is 1.15.0");
//! * `aclnnMatmul*` and `aclnnSoftmax*`: the CANN aclnn API reference pages
//!   (hiascend.com, aclnnMatmul.md / aclnnSoftmax.md, CANN 8.0);
//! * `aclCreateTensor`/`aclDestroyTensor`: CANN op docs copied in public
//!   repositories; that they live in `libnnopbase.so` comes from public
//!   call sites, not from an official page (UNCONFIRMED), so both
//!   `libnnopbase.so` and `libopapi.so` are searched.
#![allow(unsafe_code)]
use std::ffi::{c_char, c_void};

use libloading::Library;

use crate::backend::dl::{open_first, symbol};
use crate::error::{RegressError, Result};

pub(super) const BACKEND: &str = "ascend";

/// `aclError` / `aclnnStatus`; 0 is success.
pub(super) type AclError = i32;
pub(super) type AclStream = *mut c_void;
pub(super) type AclEvent = *mut c_void;
pub(super) type AclTensor = *mut c_void;
pub(super) type AclExecutor = *mut c_void;

/// `aclrtMemMallocPolicy::ACL_MEM_MALLOC_HUGE_FIRST` (first enumerator).
pub(super) const ACL_MEM_MALLOC_HUGE_FIRST: u32 = 0;
/// `aclrtMemcpyKind`: HOST_TO_HOST = 0, HOST_TO_DEVICE, DEVICE_TO_HOST,
/// DEVICE_TO_DEVICE, in declaration order.
pub(super) const ACL_MEMCPY_HOST_TO_DEVICE: u32 = 1;
pub(super) const ACL_MEMCPY_DEVICE_TO_HOST: u32 = 2;
/// `aclDataType` values (acl_base.h).
pub(super) const ACL_FLOAT: i32 = 0;
pub(super) const ACL_FLOAT16: i32 = 1;
pub(super) const ACL_BF16: i32 = 27;
/// `aclFormat::ACL_FORMAT_ND`.
pub(super) const ACL_FORMAT_ND: i32 = 2;
/// `ACL_ERROR_REPEAT_INITIALIZE`: aclInit already ran in this process.
pub(super) const ACL_ERROR_REPEAT_INITIALIZE: AclError = 100_002;

type CreateTensor = unsafe extern "C" fn(
    *const i64,
    u64,
    i32,
    *const i64,
    i64,
    i32,
    *const i64,
    u64,
    *mut c_void,
) -> AclTensor;
/// `aclnnXxx(workspace, workspaceSize, executor, stream)`.
type Execute = unsafe extern "C" fn(*mut c_void, u64, AclExecutor, AclStream) -> AclError;
type MatmulWorkspace = unsafe extern "C" fn(
    AclTensor,
    AclTensor,
    AclTensor,
    i8,
    *mut u64,
    *mut AclExecutor,
) -> AclError;
type SoftmaxWorkspace =
    unsafe extern "C" fn(AclTensor, i64, AclTensor, *mut u64, *mut AclExecutor) -> AclError;

/// `libascendcl.so`; function pointers are valid while `_lib` lives.
pub(super) struct AclRuntime {
    _lib: Library,
    pub(super) library: String,
    pub(super) init: unsafe extern "C" fn(*const c_char) -> AclError,
    pub(super) finalize: unsafe extern "C" fn() -> AclError,
    pub(super) get_device_count: unsafe extern "C" fn(*mut u32) -> AclError,
    pub(super) set_device: unsafe extern "C" fn(i32) -> AclError,
    pub(super) reset_device: unsafe extern "C" fn(i32) -> AclError,
    pub(super) create_stream: unsafe extern "C" fn(*mut AclStream) -> AclError,
    pub(super) destroy_stream: unsafe extern "C" fn(AclStream) -> AclError,
    pub(super) synchronize_stream: unsafe extern "C" fn(AclStream) -> AclError,
    pub(super) malloc: unsafe extern "C" fn(*mut *mut c_void, usize, u32) -> AclError,
    pub(super) free: unsafe extern "C" fn(*mut c_void) -> AclError,
    pub(super) memcpy:
        unsafe extern "C" fn(*mut c_void, usize, *const c_void, usize, u32) -> AclError,
    pub(super) create_event: unsafe extern "C" fn(*mut AclEvent) -> AclError,
    pub(super) record_event: unsafe extern "C" fn(AclEvent, AclStream) -> AclError,
    pub(super) synchronize_event: unsafe extern "C" fn(AclEvent) -> AclError,
    pub(super) event_elapsed_time: unsafe extern "C" fn(*mut f32, AclEvent, AclEvent) -> AclError,
    pub(super) destroy_event: unsafe extern "C" fn(AclEvent) -> AclError,
    pub(super) get_soc_name: unsafe extern "C" fn() -> *const c_char,
    pub(super) get_version: unsafe extern "C" fn(*mut i32, *mut i32, *mut i32) -> AclError,
    pub(super) recent_error: unsafe extern "C" fn() -> *const c_char,
}

/// aclnn: tensor descriptors (`libnnopbase`) and operators (`libopapi`).
pub(super) struct AclnnApi {
    _libs: Vec<Library>,
    pub(super) create_tensor: CreateTensor,
    pub(super) destroy_tensor: unsafe extern "C" fn(AclTensor) -> AclError,
    pub(super) matmul_workspace: MatmulWorkspace,
    pub(super) matmul: Execute,
    pub(super) softmax_workspace: SoftmaxWorkspace,
    pub(super) softmax: Execute,
}

const TOOLKIT_LIB: &str = "/usr/local/Ascend/ascend-toolkit/latest/lib64";

fn candidates(name: &str) -> [String; 2] {
    [name.to_owned(), format!("{TOOLKIT_LIB}/{name}")]
}

fn open(name: &str, hint: &str) -> Result<(Library, String)> {
    let names = candidates(name);
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    open_first(BACKEND, &refs, hint)
}

const SET_ENV_HINT: &str = "install CANN and `source /usr/local/Ascend/ascend-toolkit/set_env.sh` \
                            (it puts the CANN libraries on LD_LIBRARY_PATH)";

impl AclRuntime {
    pub(super) fn load() -> Result<AclRuntime> {
        let (lib, library) = open("libascendcl.so", SET_ENV_HINT)?;
        // Safety: each type is the C signature from acl_rt.h / acl_base.h.
        unsafe {
            Ok(AclRuntime {
                init: symbol(&lib, BACKEND, "aclInit")?,
                finalize: symbol(&lib, BACKEND, "aclFinalize")?,
                get_device_count: symbol(&lib, BACKEND, "aclrtGetDeviceCount")?,
                set_device: symbol(&lib, BACKEND, "aclrtSetDevice")?,
                reset_device: symbol(&lib, BACKEND, "aclrtResetDevice")?,
                create_stream: symbol(&lib, BACKEND, "aclrtCreateStream")?,
                destroy_stream: symbol(&lib, BACKEND, "aclrtDestroyStream")?,
                synchronize_stream: symbol(&lib, BACKEND, "aclrtSynchronizeStream")?,
                malloc: symbol(&lib, BACKEND, "aclrtMalloc")?,
                free: symbol(&lib, BACKEND, "aclrtFree")?,
                memcpy: symbol(&lib, BACKEND, "aclrtMemcpy")?,
                create_event: symbol(&lib, BACKEND, "aclrtCreateEvent")?,
                record_event: symbol(&lib, BACKEND, "aclrtRecordEvent")?,
                synchronize_event: symbol(&lib, BACKEND, "aclrtSynchronizeEvent")?,
                event_elapsed_time: symbol(&lib, BACKEND, "aclrtEventElapsedTime")?,
                destroy_event: symbol(&lib, BACKEND, "aclrtDestroyEvent")?,
                get_soc_name: symbol(&lib, BACKEND, "aclrtGetSocName")?,
                get_version: symbol(&lib, BACKEND, "aclrtGetVersion")?,
                recent_error: symbol(&lib, BACKEND, "aclGetRecentErrMsg")?,
                library,
                _lib: lib,
            })
        }
    }

    /// An error for a failed call: the code plus `aclGetRecentErrMsg`.
    pub(super) fn error(&self, what: &str, code: AclError) -> RegressError {
        // Safety: returns a runtime-owned C string or null.
        let detail = c_text(unsafe { (self.recent_error)() }).unwrap_or_default();
        RegressError::backend(
            BACKEND,
            format!("{what} returned aclError {code}. {detail}"),
        )
    }

    pub(super) fn check(&self, what: &str, code: AclError) -> Result<()> {
        if code == 0 {
            Ok(())
        } else {
            Err(self.error(what, code))
        }
    }
}

/// A C string owned by the library, copied; `None` for null.
pub(super) fn c_text(ptr: *const c_char) -> Option<String> {
    if ptr.is_null() {
        return None;
    }
    // Safety: non-null, NUL-terminated, owned by the library.
    Some(
        unsafe { std::ffi::CStr::from_ptr(ptr) }
            .to_string_lossy()
            .trim()
            .to_owned(),
    )
}

impl AclnnApi {
    pub(super) fn load() -> Result<AclnnApi> {
        let (opapi, _) = open("libopapi.so", SET_ENV_HINT)?;
        // UNCONFIRMED home of aclCreateTensor (see the module docs): prefer
        // libnnopbase, fall back to libopapi.
        let nnopbase = open("libnnopbase.so", SET_ENV_HINT)
            .ok()
            .map(|(lib, _)| lib);
        let meta = nnopbase.as_ref().unwrap_or(&opapi);
        // Safety: each type is the C signature from the aclnn reference.
        unsafe {
            let api = AclnnApi {
                create_tensor: symbol(meta, BACKEND, "aclCreateTensor")?,
                destroy_tensor: symbol(meta, BACKEND, "aclDestroyTensor")?,
                matmul_workspace: symbol(&opapi, BACKEND, "aclnnMatmulGetWorkspaceSize")?,
                matmul: symbol(&opapi, BACKEND, "aclnnMatmul")?,
                softmax_workspace: symbol(&opapi, BACKEND, "aclnnSoftmaxGetWorkspaceSize")?,
                softmax: symbol(&opapi, BACKEND, "aclnnSoftmax")?,
                _libs: nnopbase.into_iter().chain([opapi]).collect(),
            };
            Ok(api)
        }
    }
}
