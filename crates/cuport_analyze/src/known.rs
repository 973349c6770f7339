//! What the rule tables know about names, handed to the analyser by its
//! caller (the analyser itself does not depend on the tables).
use std::sync::Arc;

use cuport_model::{Library, SiteKind};

/// What the rule tables know about names, for the scan: which names are
/// real CUDA APIs (a project that defines one, an `atomicAdd` overload or a
/// dynamic-loading shim for `cuInit`, still uses CUDA through it), and what
/// touchpoint a known name is, so that names the naming conventions miss
/// (`make_cuComplex`, `curand_init`, `CUSPARSEAPI`) are still found.
/// The touchpoint a name the tables know is: its library and site kind.
pub type SiteOf = dyn Fn(&str) -> Option<(Library, SiteKind)> + Send + Sync;

#[derive(Clone)]
pub struct KnownNames {
    pub is_known: Arc<dyn Fn(&str) -> bool + Send + Sync>,
    pub site_of: Arc<SiteOf>,
}

impl KnownNames {
    pub fn new(
        is_known: impl Fn(&str) -> bool + Send + Sync + 'static,
        site_of: impl Fn(&str) -> Option<(Library, SiteKind)> + Send + Sync + 'static,
    ) -> Self {
        Self {
            is_known: Arc::new(is_known),
            site_of: Arc::new(site_of),
        }
    }

    /// Asks once, so that whatever the answers are built from on first
    /// use (the tables' name index) is built now.
    pub fn prepare(&self) {
        (self.is_known)("");
        (self.site_of)("");
    }
}

impl std::fmt::Debug for KnownNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KnownNames(..)")
    }
}
