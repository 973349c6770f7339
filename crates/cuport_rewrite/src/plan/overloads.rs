//! A project's overloads on two CUDA types that the port makes one type:
//! cuda-samples' `helper_cuda.h` defines `_cudaGetErrorEnum(cudaError_t)`
//! and `_cudaGetErrorEnum(CUresult)`; on HIP both parameters become
//! `hipError_t`, and the second definition redefines the first. Found on
//! the type renames the planner made, and reported on the later one.
use cuport_analyze::Site;
use cuport_model::SiteKind;

use super::Planner;
use crate::diagnostic::{codes, Level};
use cuport_model::Effort;

/// A function definition seen: its name, and its parameter types as
/// written and as ported (parameter names left out).
struct Definition {
    name: String,
    written: Vec<String>,
    ported: Vec<String>,
}

impl Planner<'_> {
    /// Reports every definition whose renamed parameter types make it the
    /// same function as an earlier definition of the file.
    pub(crate) fn collapsed_overloads(&mut self, sites: &[Site]) {
        let mut seen: Vec<Definition> = Vec::new();
        let mut lists: Vec<usize> = Vec::new();
        for site in sites.iter().filter(|s| s.kind == SiteKind::Type) {
            let Some((name, open, close)) = self.definition_around(site) else {
                continue;
            };
            if lists.contains(&open) || self.out.renamed_to(site.range).is_none() {
                continue;
            }
            lists.push(open);
            let definition = Definition {
                name,
                written: parameter_types(&String::from_utf8_lossy(&self.src[open + 1..close])),
                ported: parameter_types(&self.ported_text(open + 1, close)),
            };
            let earlier = seen.iter().find(|d| {
                d.name == definition.name
                    && d.ported == definition.ported
                    && d.written != definition.written
            });
            if let Some(earlier) = earlier {
                let message = format!(
                    "`{}({})` and the earlier `{}({})` both become `{}({})` on {}: the port redefines the function; keep one of them (compile the other out where the types are the same)",
                    definition.name,
                    definition.written.join(", "),
                    earlier.name,
                    earlier.written.join(", "),
                    definition.name,
                    definition.ported.join(", "),
                    self.target()
                );
                self.diagnose(site, codes::OVERLOADS_COLLAPSE, Level::Manual, message)
                    .effort = Some(Effort::Low);
            }
            seen.push(definition);
        }
    }

    /// `src[from..to]` with the planned edits inside it applied.
    fn ported_text(&self, from: usize, to: usize) -> String {
        let mut edits: Vec<_> = self
            .out
            .edits
            .iter()
            .filter(|e| from <= e.range.start && e.range.end <= to)
            .collect();
        edits.sort_by_key(|e| e.range.start);
        let mut text = String::new();
        let mut at = from;
        for edit in edits {
            if edit.range.start < at {
                continue;
            }
            text.push_str(&String::from_utf8_lossy(&self.src[at..edit.range.start]));
            text.push_str(&edit.replacement);
            at = edit.range.end;
        }
        text.push_str(&String::from_utf8_lossy(&self.src[at..to]));
        text
    }

    /// For a type written in the parameter list of a function definition
    /// (`NAME(..., TYPE x, ...) {`): the function's name and the list's
    /// parentheses.
    fn definition_around(&self, site: &Site) -> Option<(String, usize, usize)> {
        let src = self.src;
        let open = unmatched((0..site.range.start).rev().map(|k| (k, src[k])), b')', b'(')?;
        let close = unmatched(src.iter().copied().enumerate().skip(open + 1), b'(', b')')?;
        let after = self.src.get(close + 1..)?;
        if after.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return None;
        }
        let name_end = self.src[..open]
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())?
            + 1;
        let name_start = self.src[..name_end]
            .iter()
            .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .map_or(0, |k| k + 1);
        let name = std::str::from_utf8(&self.src[name_start..name_end]).ok()?;
        let keyword = matches!(name, "if" | "for" | "while" | "switch" | "catch" | "");
        (!keyword).then(|| (name.to_owned(), open, close))
    }
}

/// The position of the first `outer` in `bytes` not matched by an `inner`
/// before it (`(` walking back, `)` walking forward); none past a `;`, `{`
/// or `}`.
pub(crate) fn unmatched(
    bytes: impl Iterator<Item = (usize, u8)>,
    inner: u8,
    outer: u8,
) -> Option<usize> {
    let mut depth = 0usize;
    for (k, b) in bytes {
        match b {
            b';' | b'{' | b'}' => return None,
            _ if b == inner => depth += 1,
            _ if b == outer && depth == 0 => return Some(k),
            _ if b == outer => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The parameter types of a parameter list (each parameter's last word,
/// its name, left out; spaces normalised).
fn parameter_types(list: &str) -> Vec<String> {
    let mut parameters = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in list.chars() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parameters.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parameters.push(current);
    parameters
        .iter()
        .map(|p| {
            let mut words: Vec<&str> = p.split_whitespace().collect();
            if words.len() > 1 {
                // `*name`, `&name`: the name goes, the pointer stays.
                let last = words.pop().unwrap_or_default();
                let marks = last.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_');
                if !marks.is_empty() {
                    words.push(marks);
                }
            }
            words.join(" ")
        })
        .collect()
}
