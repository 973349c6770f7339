//! Edits are byte ranges over the original text, applied once, in order,
//! never overlapping. An edit that overlaps one already accepted is reported
//! as a conflict and not applied, so no rewrite is ever applied by half.
use cuport_model::{Code, TextRange};
use serde::{Deserialize, Serialize};

/// Replace `range` of the original bytes with `replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: TextRange,
    pub replacement: String,
    /// The rule code behind the edit (`CP1021`), or cuport's own code.
    pub code: Code,
    /// The CUDA name (or construct) the edit ports.
    pub cuda_name: String,
    /// What the edit is, as the report lists it.
    pub kind: EditKind,
}

/// What an edit does, decided where it is made (the report does not guess
/// it from the text).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EditKind {
    /// Ports CUDA code (a rename, a rewrite, a guard, a cast).
    #[default]
    Port,
    /// Adds a header the target needs.
    Header,
    /// Adds an import the target needs (`import torch_npu`).
    Import,
    /// A `CUPORT CPxxxx:` comment above a line that needs attention.
    Annotation,
}

/// An edit that was not applied because it overlaps an accepted one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub rejected: Edit,
    pub overlaps: TextRange,
}

/// Applies `edits` to `src`. Returns the new bytes, the edits applied (in
/// order) and the conflicts. Pure insertions at the same offset are applied
/// in the order given.
pub(crate) fn apply_edits(src: &[u8], mut edits: Vec<Edit>) -> (Vec<u8>, Vec<Edit>, Vec<Conflict>) {
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = Vec::with_capacity(src.len() + src.len() / 8);
    let mut applied: Vec<Edit> = Vec::with_capacity(edits.len());
    let mut conflicts = Vec::new();
    let mut cursor = 0usize;
    for edit in edits {
        let TextRange { start, end } = edit.range;
        let valid = start <= end && end <= src.len();
        let overlapping = start < cursor;
        if !valid || overlapping {
            let overlaps = applied.last().map_or(edit.range, |a| a.range);
            conflicts.push(Conflict {
                rejected: edit,
                overlaps,
            });
            continue;
        }
        out.extend_from_slice(&src[cursor..start]);
        out.extend_from_slice(edit.replacement.as_bytes());
        cursor = end;
        applied.push(edit);
    }
    out.extend_from_slice(&src[cursor.min(src.len())..]);
    (out, applied, conflicts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: usize, end: usize, text: &str) -> Edit {
        Edit {
            range: TextRange::new(start, end),
            replacement: text.into(),
            code: Code::from_literal("CP9999"),
            cuda_name: "x".into(),
            kind: EditKind::Port,
        }
    }

    #[test]
    fn applies_in_order_and_keeps_other_bytes() {
        let (out, applied, conflicts) =
            apply_edits(b"abc def ghi", vec![edit(8, 11, "G"), edit(0, 3, "A")]);
        assert_eq!(out, b"A def G");
        assert_eq!(applied.len(), 2);
        assert!(conflicts.is_empty());
    }

    #[test]
    fn overlapping_edit_is_a_conflict_not_half_applied() {
        let (out, applied, conflicts) = apply_edits(
            b"cudaMalloc(p)",
            vec![edit(0, 13, "X"), edit(0, 10, "hipMalloc")],
        );
        assert_eq!(applied.len(), 1);
        assert_eq!(conflicts.len(), 1);
        assert!(out == b"X" || out == b"hipMalloc(p)");
    }

    #[test]
    fn insertions_and_out_of_range_edits() {
        let (out, _, conflicts) = apply_edits(
            b"ab",
            vec![edit(0, 0, "#"), edit(1, 1, "-"), edit(5, 6, "!")],
        );
        assert_eq!(out, b"#a-b");
        assert_eq!(conflicts.len(), 1);
    }
}
