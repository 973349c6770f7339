use std::collections::BTreeMap;

use cuport_model::{KernelModel, SdkVersion, Target};
use cuport_rules::kernel_rules::KernelRule;
use cuport_rules::{Flavour, Flavours};

/// How HIP kernel launches are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HipLaunch {
    /// Keep `k<<<g, b>>>(...)`, which hipcc accepts.
    #[default]
    Chevron,
    /// `hipLaunchKernelGGL(k, dim3(g), dim3(b), smem, stream, ...)`.
    Ggl,
}

/// What a run writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// A port to one target, in place of the CUDA.
    OneWay(Target),
    /// One source that builds for CUDA and for each of these targets,
    /// through a generated shim.
    Dual(Vec<Target>),
}

impl Mode {
    /// The targets the output is for.
    pub fn targets(&self) -> &[Target] {
        match self {
            Mode::OneWay(target) => std::slice::from_ref(target),
            Mode::Dual(targets) => targets,
        }
    }
}

#[derive(Debug, Clone)]
pub struct MigrateOptions {
    pub mode: Mode,
    /// Library flavours chosen for the run, each for the targets it applies
    /// to: HIP's `--hip-libs roc` (rocBLAS, ...), Ascend's `--ascend-blas
    /// aclblas` (ops-blas).
    pub flavours: Flavours,
    pub hip_launch: HipLaunch,
    /// Write each diagnostic into the output as a comment above its line.
    pub annotate: bool,
    /// The SDK release a port is made for, per target (`--cann-version`,
    /// `--rocm-version`); a target not listed gets its profile's default.
    pub sdk_versions: BTreeMap<Target, SdkVersion>,
    /// The GPU architectures build files name (`--hip-arch gfx90a,gfx942`);
    /// empty: the target profile's default.
    pub gpu_architectures: Vec<String>,
    /// The kernel model chosen per target (`--ascend-kernels simt`); a
    /// target not listed uses its profile's model.
    pub kernel_models: BTreeMap<Target, KernelModel>,
    /// `[[kernel]]` rules the run applies (`--rules`): the launches of a
    /// kernel a rule matches call the rule's vendor operators instead.
    pub kernel_rules: Vec<KernelRule>,
}

impl MigrateOptions {
    /// Options for a one-way port to `target`, every other choice its
    /// default.
    pub fn new(target: Target) -> Self {
        Self::with_mode(Mode::OneWay(target))
    }

    /// Options for one dual-stack source building for CUDA and `targets`.
    pub fn dual_stack(targets: Vec<Target>) -> Self {
        Self::with_mode(Mode::Dual(targets))
    }

    fn with_mode(mode: Mode) -> Self {
        Self {
            mode,
            flavours: Flavours::default(),
            hip_launch: HipLaunch::Chevron,
            annotate: false,
            sdk_versions: BTreeMap::new(),
            kernel_models: BTreeMap::new(),
            gpu_architectures: Vec::new(),
            kernel_rules: Vec::new(),
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

    /// The rule-table flavours names are looked up in for `target`: the
    /// SIMT device names where the SIMT model is chosen, and the library
    /// flavours chosen for it (`--hip-libs`, `--ascend-blas`).
    pub fn flavour_for(&self, target: Target) -> Flavours {
        let simt = (self.kernel_model(target) == KernelModel::Simt).then_some(Flavour::Simt);
        simt.into_iter()
            .chain(self.flavours.own().filter(|f| f.applies_to(target)))
            .collect()
    }

    /// The SDK release rules are gated by for `target`: the selected one,
    /// else the profile's default (none: every rule applies).
    pub fn sdk_version(&self, target: Target) -> Option<SdkVersion> {
        self.sdk_versions
            .get(&target)
            .copied()
            .or(target.profile().versions.default)
    }

    /// These options for a one-way port to `target` (a dual-stack run plans
    /// each target's branch with them).
    pub fn one_way_to(&self, target: Target) -> Self {
        Self {
            mode: Mode::OneWay(target),
            ..self.clone()
        }
    }

    /// The targets the output is for.
    pub fn targets(&self) -> &[Target] {
        self.mode.targets()
    }

    /// The target site rules are planned for: the one-way target; in a
    /// dual-stack run, whose branches are planned per target with
    /// `one_way_to`, the first (what the source's own planning reports
    /// under).
    pub(crate) fn planned_target(&self) -> Target {
        match &self.mode {
            Mode::OneWay(target) => *target,
            Mode::Dual(targets) => targets.first().copied().unwrap_or(Target::Hip),
        }
    }
}
