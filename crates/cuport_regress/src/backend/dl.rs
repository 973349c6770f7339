//! Loading vendor libraries at run time, so the harness builds and runs
//! everywhere and a missing library is a clear "unavailable" message.
#![allow(unsafe_code)]

use libloading::Library;

use crate::error::{RegressError, Result};

/// Open the first library in `names` that loads; the error lists every name
/// tried and says which environment variable to check.
pub(crate) fn open_first(backend: &str, names: &[&str], hint: &str) -> Result<(Library, String)> {
    let mut tried = Vec::new();
    for name in names {
        // Safety: loading runs the library's initialisers; these are the
        // vendors' runtime libraries, which are designed to be dlopen'ed.
        match unsafe { Library::new(name) } {
            Ok(lib) => return Ok((lib, (*name).to_owned())),
            Err(e) => tried.push(format!("{name} ({e})")),
        }
    }
    Err(RegressError::BackendUnavailable {
        backend: backend.to_owned(),
        reason: format!("could not load {}; {hint}", tried.join(", ")),
    })
}

/// Resolve a symbol to a plain function pointer. The pointer is only valid
/// while the `Library` lives, so callers store both in one struct.
///
/// # Safety
/// `T` must be the symbol's real C signature.
pub(crate) unsafe fn symbol<T: Copy>(lib: &Library, backend: &str, name: &str) -> Result<T> {
    let cname = format!("{name}\0");
    // Safety: forwarded to the caller (see above).
    unsafe { lib.get::<T>(cname.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| RegressError::BackendUnavailable {
            backend: backend.to_owned(),
            reason: format!("library has no `{name}` ({e}); the installed version may be too old"),
        })
}
