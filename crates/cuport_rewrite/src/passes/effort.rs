//! Effort counted once: where kernels are rewritten by hand, what is inside
//! a kernel or a `__device__` helper is listed for the engineer but costs
//! nothing beyond the kernel's or the helper's own diagnostic.
use cuport_analyze::FileAnalysis;
use cuport_model::{SiteKind, TextRange};

use crate::diagnostic::{codes, effort_hours, Diagnostic, Level};
use crate::options::Mode;
use crate::plan::{FileInput, Planned};
use cuport_model::Effort;

/// Inside a kernel that must be rewritten by hand (Ascend C, BANG C), the
/// kernel's own diagnostic carries the effort; what is inside it is listed
/// for the engineer but not counted again.
pub(super) fn fold_effort_into_kernels(input: &FileInput<'_>, planned: &mut Planned) {
    let (diagnostics, analysis) = (&mut planned.diagnostics, input.analysis);
    let manual_kernels: Vec<TextRange> = analysis
        .sites
        .iter()
        .filter(|s| s.kind == SiteKind::KernelDefinition)
        .filter(|s| {
            diagnostics
                .iter()
                .any(|d| d.code == codes::KERNEL_MANUAL && d.range == s.range)
        })
        .filter_map(|s| s.body)
        .collect();
    for diagnostic in diagnostics.iter_mut() {
        let inside = manual_kernels
            .iter()
            .any(|body| body.start <= diagnostic.range.start && diagnostic.range.end <= body.end);
        if inside && diagnostic.level >= Level::Approximate {
            diagnostic.effort = Some(Effort::Included);
        }
    }
}

/// Where the one-way target rewrites kernels by hand, a `__device__` helper
/// is rewritten with them and costs once.
pub(super) fn fold_effort_into_device_functions(input: &FileInput<'_>, planned: &mut Planned) {
    if let Mode::OneWay(target) = input.options.mode {
        if !input.options.kernels_compile(target) {
            fold_into_device_functions(&mut planned.diagnostics, input.analysis);
        }
    }
}

/// Where kernels are rewritten by hand (Ascend C, BANG C), a `__device__`
/// helper is rewritten with them and costs once: what the diagnostic on its
/// `__device__` carries (else its most expensive diagnostic), not once per
/// built-in variable or intrinsic in it. The rest inside it is listed for
/// the engineer but not counted again.
fn fold_into_device_functions(diagnostics: &mut [Diagnostic], analysis: &FileAnalysis) {
    let helpers = analysis
        .sites
        .iter()
        .filter(|s| s.kind == SiteKind::Qualifier && s.name == "__device__");
    for helper in helpers {
        let Some(body) = helper.body else {
            continue;
        };
        let counted =
            |d: &Diagnostic| d.level >= Level::Approximate && d.effort != Some(Effort::Included);
        let inside: Vec<usize> = (0..diagnostics.len())
            .filter(|&i| {
                let d = &diagnostics[i];
                body.start <= d.range.start && d.range.end <= body.end && counted(d)
            })
            .collect();
        let on_qualifier = diagnostics
            .iter()
            .any(|d| d.range == helper.range && counted(d));
        // The first of the costliest (`max_by` keeps the last of equals).
        let costliest = inside.iter().rev().copied().max_by(|&a, &b| {
            effort_hours(&diagnostics[a]).total_cmp(&effort_hours(&diagnostics[b]))
        });
        let kept = if on_qualifier { None } else { costliest };
        for i in inside {
            if Some(i) != kept {
                diagnostics[i].effort = Some(Effort::Included);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use cuport_model::KernelModel;
    use cuport_model::{Language, Target};

    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;
    use cuport_model::Effort;

    #[test]
    fn what_is_inside_a_hand_written_kernel_costs_nothing_more() {
        let src = "__global__ void k(float* x) { x[threadIdx.x] = __expf(x[threadIdx.x]); __syncthreads(); }\n";
        let ascend = run_pass(
            &FOLD_KERNEL_EFFORT,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Ascend),
        );
        assert!(!ascend.diagnostics.is_empty());
        assert!(
            ascend
                .diagnostics
                .iter()
                .all(|d| d.effort == Some(Effort::Included)),
            "{:?}",
            ascend.diagnostics
        );
        let hip = run_pass(
            &FOLD_KERNEL_EFFORT,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Hip),
        );
        assert!(hip.diagnostics.is_empty(), "{:?}", hip.diagnostics);
    }

    #[test]
    fn a_device_helper_costs_once_where_kernels_are_rewritten_by_hand() {
        let src = "__device__ float h(float v) { return __expf(v) + __logf(v) + __sinf(v); }\n";
        let ascend = run_pass(
            &FOLD_DEVICE_FUNCTION_EFFORT,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Ascend),
        );
        assert!(ascend.diagnostics.len() >= 2, "{:?}", ascend.diagnostics);
        assert!(ascend
            .diagnostics
            .iter()
            .all(|d| d.effort == Some(Effort::Included)));
        let mut simt = MigrateOptions::new(Target::Ascend);
        simt.kernel_models.insert(Target::Ascend, KernelModel::Simt);
        let kept = run_pass(&FOLD_DEVICE_FUNCTION_EFFORT, Language::Cuda, src, &simt);
        assert!(kept.diagnostics.is_empty(), "{:?}", kept.diagnostics);
    }
}
