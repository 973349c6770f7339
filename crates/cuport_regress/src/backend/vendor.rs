//! `ascend`: the vendor runtimes are loaded at run time
//! (nothing is needed at build time). This build resolves each runtime's
//! documented entry points so a missing or too-old library is one clear
//! "unavailable" message; running ops on these devices is not implemented
//! yet and says so (see regress/README.md, "Backends").
#![allow(unsafe_code)]
use super::dl::{open_first, symbol};
use super::Backend;
use crate::error::{RegressError, Result};

/// A vendor runtime: the libraries to try, the symbols the backend needs,
/// and what to tell the user when they are missing.
struct Runtime {
    backend: &'static str,
    libraries: &'static [&'static str],
    symbols: &'static [&'static str],
    hint: &'static str,
}

const ASCEND: Runtime = Runtime {
    backend: "ascend",
    libraries: &["libascendcl.so"],
    symbols: &[
        "aclInit",
        "aclrtSetDevice",
        "aclrtMalloc",
        "aclrtMemcpy",
        "aclrtCreateEvent",
        "aclrtEventElapsedTime",
    ],
    hint: "install CANN and source set_env.sh (it puts libascendcl.so on LD_LIBRARY_PATH)",
};

fn probe(rt: &Runtime) -> Result<Box<dyn Backend>> {
    let (lib, name) = open_first(rt.backend, rt.libraries, rt.hint)?;
    for sym in rt.symbols {
        // Safety: the pointer is only checked for presence, never called.
        unsafe { symbol::<*const ()>(&lib, rt.backend, sym) }?;
    }
    Err(RegressError::BackendUnavailable {
        backend: rt.backend.to_owned(),
        reason: format!(
            "{name} loaded, but running ops on `{}` is not implemented in this build",
            rt.backend
        ),
    })
}

pub(super) fn open_ascend() -> Result<Box<dyn Backend>> {
    probe(&ASCEND)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On machines without the vendor stacks (like CI) each backend must
    /// say which library it looked for and how to fix it, not crash.
    #[test]
    fn missing_runtimes_give_a_clear_reason() {
        for (rt, open) in [(&ASCEND, open_ascend as fn() -> _)] {
            match open() {
                Err(RegressError::BackendUnavailable { backend, reason }) => {
                    assert_eq!(backend, rt.backend);
                    assert!(
                        reason.contains(rt.libraries[0]) || reason.contains("not implemented"),
                        "{reason}"
                    );
                }
                Err(other) => panic!("{}: unexpected error {other}", rt.backend),
                Ok(_) => panic!("{}: no backend should open in this build", rt.backend),
            }
        }
    }
}
