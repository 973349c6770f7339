//! A project's own compound assignments on CUDA's vector types
//! (`operator+=(float4&, float4)`, cuda-samples' `helper_math.h`) where the
//! target's vector types define the same operator: every use would be
//! ambiguous, so the project's definition is compiled out where the
//! target's exists (`mappings/<target>/target.toml`, `[vector-types]`).
//! Both are component-wise; a reviewer checks that the project's is too.
use cuport_analyze::{FileAnalysis, OperatorDefinition};
use cuport_model::{Library, LineIndex, SiteKind, Target, TextRange};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::edit::Edit;
use crate::headers::{is_annotation, line_ending};
use crate::plan::Planned;

/// Guards each such definition in `analysis` for the `targets` whose vector
/// types define its operator, with one approximate diagnostic each.
pub(crate) fn guard_vector_operators(
    src: &[u8],
    lines: &LineIndex,
    analysis: &FileAnalysis,
    targets: &[Target],
    planned: &mut Planned,
) {
    let guards: Vec<(&str, Option<&str>)> = targets
        .iter()
        .filter_map(|t| {
            let facts = &t.profile().vector_types;
            let guard = facts.compound_operators_guard.as_deref()?;
            Some((guard, facts.reference.as_deref()))
        })
        .collect();
    if guards.is_empty() {
        return;
    }
    let condition = guards
        .iter()
        .map(|(guard, _)| format!("!defined({guard})"))
        .collect::<Vec<_>>()
        .join(" && ");
    let opening = format!("#if {condition}");
    let newline = line_ending(src);
    for definition in &analysis.vector_operators {
        if already_guarded(src, lines, definition, &opening) {
            continue;
        }
        planned.edits.push(insertion(
            definition.range.start,
            format!(
                "{opening} /* the target's {} defines it (CP0015) */{newline}",
                definition.vector_type
            ),
            definition,
        ));
        planned.edits.push(insertion(
            definition.range.end,
            format!("{newline}#endif /* {} */", definition.operator),
            definition,
        ));
        planned
            .diagnostics
            .push(diagnostic(lines, definition, guards[0].1));
    }
}

fn insertion(at: usize, replacement: String, definition: &OperatorDefinition) -> Edit {
    Edit {
        range: TextRange::new(at, at),
        replacement,
        code: codes::TARGET_PROVIDES.into(),
        cuda_name: format!(
            "{}({}&, {})",
            definition.operator, definition.vector_type, definition.vector_type
        ),
    }
}

/// Whether a first run already put the guard above the definition (its
/// `--annotate` notes may stand between them).
fn already_guarded(
    src: &[u8],
    lines: &LineIndex,
    definition: &OperatorDefinition,
    opening: &str,
) -> bool {
    let first = lines.line_of(definition.range.start);
    (0..first)
        .rev()
        .filter_map(|l| lines.line_range(l))
        .map(|r| &src[r.start..r.end])
        .find(|text| !is_annotation(text))
        .is_some_and(|text| text.trim_ascii_start().starts_with(opening.as_bytes()))
}

fn diagnostic(
    lines: &LineIndex,
    definition: &OperatorDefinition,
    reference: Option<&str>,
) -> Diagnostic {
    let at = lines.line_col(definition.range.start);
    Diagnostic {
        code: codes::TARGET_PROVIDES.into(),
        level: Level::Approximate,
        effort: Some("low".into()),
        message: format!(
            "the project's own `{}({}&, {})` is compiled out where the target's `{}` defines the same operator (every use would be ambiguous); check that the project's is component-wise like the target's",
            definition.operator, definition.vector_type, definition.vector_type, definition.vector_type
        ),
        line: at.line,
        column: at.column,
        range: definition.range,
        cuda_name: definition.operator.clone(),
        library: Library::Runtime,
        kind: SiteKind::Type,
        suggestion: None,
        reference: reference.map(str::to_owned),
    }
}
