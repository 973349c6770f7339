use serde::{Deserialize, Serialize};

/// An accelerator stack cuport ports CUDA code to.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// AMD ROCm / Hygon DCU through HIP.
    Hip,
    /// Huawei Ascend: AscendCL, aclnn, HCCL, torch_npu.
    Ascend,
    /// Moore Threads MUSA.
    Musa,
    /// Cambricon MLU: CNRT, CNNL, CNCL, torch_mlu.
    Mlu,
}

impl Target {
    pub const ALL: [Target; 4] = [Target::Hip, Target::Ascend, Target::Musa, Target::Mlu];

    pub fn id(self) -> &'static str {
        match self {
            Target::Hip => "hip",
            Target::Ascend => "ascend",
            Target::Musa => "musa",
            Target::Mlu => "mlu",
        }
    }

    pub fn from_id(id: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.id() == id)
    }

    /// The PyTorch device type string on this target.
    pub fn torch_device(self) -> &'static str {
        match self {
            Target::Hip => "cuda",
            Target::Ascend => "npu",
            Target::Musa => "musa",
            Target::Mlu => "mlu",
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}
