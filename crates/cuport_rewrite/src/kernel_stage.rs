//! The kernel stage: the one place that decides what becomes of each CUDA
//! kernel on each target of a run, from the target's profile and the kernel
//! model the run chose. The planner asks it how to treat a kernel's
//! definition, launches and device names; the result model records its
//! decision per kernel ([`KernelRecord`]) for the reports.
use cuport_analyze::FileAnalysis;
use cuport_model::{Code, KernelModel, LineIndex, SiteKind, Target, TextRange};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diagnostic::Diagnostic;
use crate::options::MigrateOptions;

/// What becomes of one CUDA kernel on one target.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Disposition {
    /// The target compiles CUDA kernels (HIP, MUSA, MACA): the kernel stays,
    /// its device names renamed where the target spells them differently.
    Kept,
    /// The kernel stays in CUDA's shape for the target's SIMT model
    /// (Ascend C SIMT), its device names renamed through the SIMT tables.
    Simt,
    /// Launches call vendor operators instead of the kernel.
    Operator,
    /// The kernel is rewritten by hand in the target's kernel language
    /// (Ascend C vector, BANG C); its definition and launches are manual
    /// diagnostics, with a skeleton on request.
    Skeleton,
}

impl Disposition {
    pub fn id(self) -> &'static str {
        match self {
            Disposition::Kept => "kept",
            Disposition::Simt => "simt",
            Disposition::Operator => "operator",
            Disposition::Skeleton => "skeleton",
        }
    }

    /// Whether the kernel's code is ported with the file (its launches and
    /// device names stay kernel code the target compiles).
    pub fn compiles(self) -> bool {
        matches!(self, Disposition::Kept | Disposition::Simt)
    }
}

/// The disposition of every kernel on `target` in this run: kernels a
/// target compiles (natively or through its SIMT model) stay, the others
/// need a hand port. Operator mappings (a kernel's launches replaced by
/// vendor operators) are decided per kernel by rules, which no run has yet.
pub(crate) fn disposition(options: &MigrateOptions, target: Target) -> Disposition {
    match options.kernel_model(target) {
        KernelModel::Native => Disposition::Kept,
        KernelModel::Simt => Disposition::Simt,
        KernelModel::Port => Disposition::Skeleton,
    }
}

/// One kernel as the result model records it: where it is defined, what
/// the run made of it on one target, and the codes of the diagnostics on
/// its definition and body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct KernelRecord {
    pub name: String,
    /// 1-based line and byte column of the kernel's name.
    pub line: u32,
    pub column: u32,
    pub target: Target,
    pub disposition: Disposition,
    /// The vendor operators its launches call (disposition `operator`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operators: Vec<String>,
    /// Codes of the diagnostics on the definition and inside the body, in
    /// source order, each once.
    pub diagnostics: Vec<Code>,
}

/// The records of every kernel `analysis` defines, one per kernel and
/// target of the run.
pub(crate) fn kernel_records(
    analysis: &FileAnalysis,
    lines: &LineIndex,
    diagnostics: &[Diagnostic],
    options: &MigrateOptions,
) -> Vec<KernelRecord> {
    let kernels = analysis
        .sites
        .iter()
        .filter(|s| s.kind == SiteKind::KernelDefinition);
    let mut records = Vec::new();
    for kernel in kernels {
        let at = lines.line_col(kernel.range.start);
        let span = TextRange::new(
            kernel.range.start,
            kernel.body.map_or(kernel.range.end, |b| b.end),
        );
        let mut codes: Vec<Code> = Vec::new();
        for d in diagnostics
            .iter()
            .filter(|d| span.start <= d.range.start && d.range.end <= span.end)
        {
            if !codes.contains(&d.code) {
                codes.push(d.code);
            }
        }
        for &target in options.targets() {
            records.push(KernelRecord {
                name: kernel.name.clone(),
                line: at.line,
                column: at.column,
                target,
                disposition: disposition(options, target),
                operators: Vec::new(),
                diagnostics: codes.clone(),
            });
        }
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_model_decides_the_disposition() {
        let mut options = MigrateOptions::new(Target::Ascend);
        assert_eq!(disposition(&options, Target::Ascend), Disposition::Skeleton);
        options
            .kernel_models
            .insert(Target::Ascend, KernelModel::Simt);
        assert_eq!(disposition(&options, Target::Ascend), Disposition::Simt);
        assert_eq!(disposition(&options, Target::Hip), Disposition::Kept);
        assert!(Disposition::Simt.compiles() && !Disposition::Skeleton.compiles());
    }
}
