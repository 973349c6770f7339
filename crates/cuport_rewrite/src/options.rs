use std::collections::BTreeMap;

use cuport_model::{KernelModel, SdkVersion, Target};
use cuport_rules::Flavour;

/// How HIP kernel launches are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HipLaunch {
    /// Keep `k<<<g, b>>>(...)`, which hipcc accepts.
    #[default]
    Chevron,
    /// `hipLaunchKernelGGL(k, dim3(g), dim3(b), smem, stream, ...)`.
    Ggl,
}

#[derive(Debug, Clone)]
pub struct MigrateOptions {
    pub target: Target,
    /// HIP library flavour (hipBLAS... or rocBLAS...).
    pub flavour: Flavour,
    pub hip_launch: HipLaunch,
    /// Write each diagnostic into the output as a comment above its line.
    pub annotate: bool,
    /// Dual-stack mode: the targets the portable source must build for
    /// (besides CUDA). Empty for a one-way migration to `target`.
    pub dual: Vec<Target>,
    /// The SDK release a port is made for, per target (`--cann-version`,
    /// `--rocm-version`); a target not listed gets its profile's default.
    pub sdk_versions: BTreeMap<Target, SdkVersion>,
    /// The GPU architectures build files name (`--hip-arch gfx90a,gfx942`);
    /// empty: the target profile's default.
    pub gpu_architectures: Vec<String>,
    /// The kernel model chosen per target (`--ascend-kernels simt`); a
    /// target not listed uses its profile's model.
    pub kernel_models: BTreeMap<Target, KernelModel>,
}

impl MigrateOptions {
    pub fn new(target: Target) -> Self {
        Self {
            target,
            flavour: Flavour::Default,
            hip_launch: HipLaunch::Chevron,
            annotate: false,
            dual: Vec::new(),
            sdk_versions: BTreeMap::new(),
            kernel_models: BTreeMap::new(),
            gpu_architectures: Vec::new(),
        }
    }

    /// How `target` builds CUDA kernels in this run.
    pub fn kernel_model(&self, target: Target) -> KernelModel {
        self.kernel_models
            .get(&target)
            .copied()
            .unwrap_or(target.profile().kernels.model)
    }

    /// Whether CUDA-shaped kernels stay kernels on `target` (native or
    /// SIMT), rather than being rewritten by hand.
    pub fn kernels_compile(&self, target: Target) -> bool {
        self.kernel_model(target) != KernelModel::Port
    }

    /// The source renames of `target` in this run (`--rename-sources`; the
    /// SIMT model's `.cu` → `.asc`, which its build needs).
    pub fn source_renames(&self, target: Target) -> &'static BTreeMap<String, String> {
        let profile = target.profile();
        match (&profile.kernels.simt, self.kernel_model(target)) {
            (Some(simt), KernelModel::Simt) => &simt.source_renames,
            _ => &profile.target.source_renames,
        }
    }

    /// The rule-table flavour names are looked up in for `target`: the SIMT
    /// device names where the SIMT model is chosen, HIP's `--hip-libs`.
    pub fn flavour_for(&self, target: Target) -> Flavour {
        if self.kernel_model(target) == KernelModel::Simt {
            Flavour::Simt
        } else if self.flavour.applies_to(target) {
            self.flavour
        } else {
            Flavour::Default
        }
    }

    /// The SDK release rules are gated by for `target`: the selected one,
    /// else the profile's default (none: every rule applies).
    pub fn sdk_version(&self, target: Target) -> Option<SdkVersion> {
        self.sdk_versions
            .get(&target)
            .copied()
            .or(target.profile().versions.default)
    }

    /// Whether the run writes one portable source (CUDA plus `dual` targets).
    pub fn is_dual(&self) -> bool {
        !self.dual.is_empty()
    }

    /// The targets the output is for: the `dual` ones, else `target`.
    pub fn targets(&self) -> &[cuport_model::Target] {
        if self.is_dual() {
            &self.dual
        } else {
            std::slice::from_ref(&self.target)
        }
    }
}
