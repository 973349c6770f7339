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
