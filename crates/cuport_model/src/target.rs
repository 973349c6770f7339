use crate::ids::id_enum;

id_enum! {
    /// An accelerator stack cuport ports CUDA code to.
    pub enum Target {
        /// AMD ROCm / Hygon DCU through HIP.
        Hip = "hip",
        /// Huawei Ascend: AscendCL, aclnn, HCCL, torch_npu.
        Ascend = "ascend",
        /// Moore Threads MUSA.
        Musa = "musa",
        /// Cambricon MLU: CNRT, CNNL, CNCL, torch_mlu.
        Mlu = "mlu",
        /// MetaX MACA: mc* runtime, mcBLAS, mcDNN, MCCL, mcPytorch.
        Maca = "maca",
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// One value per target, computed on the target's first use: a run asks
/// for its own targets' only (a HIP run need not load Ascend's tables).
#[derive(Debug, Clone)]
pub struct PerTarget<T>([std::sync::OnceLock<T>; Target::ALL.len()]);

impl<T> PerTarget<T> {
    pub const fn new() -> Self {
        Self([const { std::sync::OnceLock::new() }; Target::ALL.len()])
    }

    /// `target`'s value, computed by `init` if this is the first ask.
    pub fn get_or_init(&self, target: Target, init: impl FnOnce() -> T) -> &T {
        // `index` is a declaration-order position, always inside `ALL`.
        self.0[target.index()].get_or_init(init)
    }
}

impl<T> Default for PerTarget<T> {
    fn default() -> Self {
        Self::new()
    }
}
