//! A project's own definitions of what the target already defines, each
//! compiled out where the target's exists (CP0015):
//! - compound assignments and increments on CUDA's vector types
//!   (`operator+=(float4&, float4)`, cuda-samples' `helper_math.h`) where
//!   the target's vector types define the same operator as a member, which
//!   makes every use ambiguous (`[vector-types] member-operators` in
//!   `mappings/<target>/target.toml`);
//! - functions CUDA lacks and the target defines (`__device__ double
//!   atomicMax(double*, double)`, a CAS loop many projects carry), which
//!   are redefinitions there (`[provided-functions]`).
//!
//! Both do the same work; a reviewer checks that the project's does.
use cuport_analyze::FileAnalysis;
use cuport_model::{Library, LineIndex, SiteKind, Target, TextRange};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::edit::{Edit, EditKind};
use crate::headers::{is_annotation, line_ending};
use crate::plan::{FileInput, Planned};
use cuport_model::Effort;

/// One definition to compile out.
struct Provided {
    range: TextRange,
    /// `operator+=(float4&, float4)`, `atomicMax(double*, double)`.
    signature: String,
    /// What of the target's defines it (`float4`, `HIP`).
    by: String,
    message: String,
    reference: Option<String>,
}

/// Guards each such definition in `analysis` for the `targets` that
/// provide it, with one approximate diagnostic each.
pub(super) fn guard_target_provided(input: &FileInput<'_>, planned: &mut Planned) {
    let (src, lines, analysis, targets) = (
        input.src,
        input.lines,
        input.analysis,
        input.options.targets(),
    );
    let mut found = vector_operators(analysis, targets);
    found.extend(provided_functions(analysis, targets));
    for (condition, provided) in found {
        guard(src, lines, &condition, &provided, planned);
    }
}

/// `!defined(A) && !defined(B)` over the targets' guard macros.
fn condition(guards: &[&str]) -> Option<String> {
    (!guards.is_empty()).then(|| {
        guards
            .iter()
            .map(|guard| format!("!defined({guard})"))
            .collect::<Vec<_>>()
            .join(" && ")
    })
}

fn vector_operators(analysis: &FileAnalysis, targets: &[Target]) -> Vec<(String, Provided)> {
    let facts: Vec<_> = targets.iter().map(|t| &t.profile().vector_types).collect();
    let guards: Vec<&str> = facts
        .iter()
        .filter_map(|f| f.compound_operators_guard.as_deref())
        .collect();
    let Some(condition) = condition(&guards) else {
        return Vec::new();
    };
    let reference = facts.iter().find_map(|f| f.reference.clone());
    // Only an operator the target's vector types define as a non-template
    // (a member, or a friend for two operands of the type) clashes; the
    // others lose to the project's, which then must stay.
    let clashes = |operator: &str| {
        let symbol = operator.strip_prefix("operator").unwrap_or(operator);
        facts.iter().any(|f| {
            f.member_operators
                .iter()
                .chain(&f.friend_operators)
                .any(|m| m == symbol)
        })
    };
    analysis
        .vector_operators
        .iter()
        .filter(|d| clashes(&d.operator))
        .map(|d| {
            let increment = d.operator.ends_with("++") || d.operator.ends_with("--");
            let signature = if increment {
                format!("{}({}&)", d.operator, d.vector_type)
            } else if d.operator.ends_with('=') {
                format!("{}({}&, {})", d.operator, d.vector_type, d.vector_type)
            } else {
                format!("{}({}, {})", d.operator, d.vector_type, d.vector_type)
            };
            let message = format!(
                "the project's own `{signature}` is compiled out where the target's `{}` defines the same operator (every use would be ambiguous); check that the project's is component-wise like the target's",
                d.vector_type
            );
            let provided = Provided {
                range: d.range,
                signature,
                by: d.vector_type.clone(),
                message,
                reference: reference.clone(),
            };
            (condition.clone(), provided)
        })
        .collect()
}

fn provided_functions(analysis: &FileAnalysis, targets: &[Target]) -> Vec<(String, Provided)> {
    let mut found = Vec::new();
    for definition in &analysis.function_definitions {
        let signature = format!("{}({})", definition.name, definition.parameters.join(", "));
        let providers: Vec<Target> = targets
            .iter()
            .copied()
            .filter(|t| {
                let facts = &t.profile().provided_functions;
                facts.guard.is_some()
                    && facts
                        .signatures
                        .iter()
                        .any(|s| same_signature(s, &signature))
            })
            .collect();
        let guards: Vec<&str> = providers
            .iter()
            .filter_map(|t| t.profile().provided_functions.guard.as_deref())
            .collect();
        let (Some(condition), Some(first)) = (condition(&guards), providers.first()) else {
            continue;
        };
        let message = format!(
            "the project's own `{signature}` is compiled out where {} defines it (a redefinition there); check that the project's computes what the target's does",
            first.profile().target.name
        );
        let provided = Provided {
            range: definition.range,
            signature,
            by: first.profile().target.name.clone(),
            message,
            reference: first.profile().provided_functions.reference.clone(),
        };
        found.push((condition, provided));
    }
    found
}

/// `atomicMax(double *, double)` and `atomicMax(double*, double)` are one.
fn same_signature(listed: &str, found: &str) -> bool {
    let squeeze = |s: &str| s.split_whitespace().collect::<String>();
    squeeze(listed) == squeeze(found)
}

fn guard(
    src: &[u8],
    lines: &LineIndex,
    condition: &str,
    provided: &Provided,
    planned: &mut Planned,
) {
    let opening = format!("#if {condition}");
    if already_guarded(src, lines, provided.range, &opening) {
        return;
    }
    let newline = line_ending(src);
    let insertion = |at: usize, replacement: String| Edit {
        range: TextRange::new(at, at),
        replacement,
        code: codes::TARGET_PROVIDES,
        cuda_name: provided.signature.clone(),
        kind: EditKind::Port,
    };
    planned.edits.push(insertion(
        provided.range.start,
        format!(
            "{opening} /* the target's {} defines it (CP0015) */{newline}",
            provided.by
        ),
    ));
    let name = provided
        .signature
        .split_once('(')
        .map_or(provided.signature.as_str(), |(name, _)| name);
    planned.edits.push(insertion(
        provided.range.end,
        format!("{newline}#endif /* {name} */"),
    ));
    let at = lines.line_col(provided.range.start);
    planned.diagnostics.push(Diagnostic {
        code: codes::TARGET_PROVIDES,
        level: Level::Approximate,
        effort: Some(Effort::Low),
        message: provided.message.clone(),
        line: at.line,
        column: at.column,
        range: provided.range,
        cuda_name: name.to_owned(),
        library: Library::Runtime,
        kind: SiteKind::Type,
        suggestion: None,
        reference: provided.reference.clone(),
    });
}

/// Whether a first run already put the guard above the definition (its
/// `--annotate` notes may stand between them).
fn already_guarded(src: &[u8], lines: &LineIndex, range: TextRange, opening: &str) -> bool {
    let first = lines.line_of(range.start);
    (0..first)
        .rev()
        .filter_map(|l| lines.line_range(l))
        .map(|r| &src[r.start..r.end])
        .find(|text| !is_annotation(text))
        .is_some_and(|text| text.trim_ascii_start().starts_with(opening.as_bytes()))
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;

    #[test]
    fn a_projects_vector_compound_assignment_is_compiled_out_where_hip_has_it() {
        let src =
            "inline __host__ __device__ void operator+=(float4& a, float4 b) { a.x += b.x; }\n";
        let hip = run_pass(
            &GUARD_TARGET_PROVIDED,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Hip),
        );
        assert!(!hip.edits.is_empty(), "{:?}", hip.edits);
        let other =
            "inline __host__ __device__ float4 operator%(float4 a, float b) { return a; }\n";
        let none = run_pass(
            &GUARD_TARGET_PROVIDED,
            Language::Cuda,
            other,
            &MigrateOptions::new(Target::Hip),
        );
        assert!(none.edits.is_empty(), "{:?}", none.edits);
    }
}
