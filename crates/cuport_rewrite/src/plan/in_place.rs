//! A template that keeps the call's arguments in order and only renames the
//! function or adds arguments at the end (`hipStreamWaitEvent($1, $2,
//! ${3=0})`, `hipHostMalloc($1, $2, hipHostMallocDefault)`) is applied as
//! a few small edits instead of one that rewrites the whole call: the call
//! keeps its line breaks, spacing and comments, as a reviewer expects of a
//! port that changes a name.
use cuport_model::TextRange;

use super::{PendingRewrite, Planner};

/// What an in-place application writes: the new callee and the text to
/// append after the last argument.
struct InPlace<'t> {
    callee: &'t str,
    appended: Vec<String>,
}

impl Planner<'_> {
    /// Applies `rewrite` in place when its template allows it; returns
    /// whether it did.
    pub(crate) fn apply_in_place(&mut self, rewrite: &PendingRewrite<'_>) -> bool {
        let passed = self.passed_arguments(&rewrite.args);
        let Some(plan) = in_place(rewrite.template.source(), passed) else {
            return false;
        };
        let call_text = self.text(rewrite.call);
        let Some(open) = call_text.find('(') else {
            return false;
        };
        let name_end = rewrite.call.start + call_text[..open].trim_end().len();
        let callee = TextRange::new(rewrite.call.start, name_end);
        let code = rewrite.code;
        if self.text(callee) != plan.callee {
            self.edit(callee, plan.callee.to_owned(), code, &rewrite.cuda_name);
        }
        self.wrap_argument_ranges(&rewrite.cuda_name, &rewrite.args, code);
        if !plan.appended.is_empty() {
            let extra = plan.appended.join(", ");
            let (at, text) = match rewrite.args.get(..passed).and_then(<[TextRange]>::last) {
                Some(&last) => (
                    last.start + self.text(last).trim_end().len(),
                    format!(", {extra}"),
                ),
                None => (rewrite.call.start + open + 1, extra),
            };
            self.edit(TextRange::new(at, at), text, code, &rewrite.cuda_name);
        }
        true
    }
}

/// The in-place form of `template` for a call with `passed` arguments:
/// `F(a1, ..., an, extra...)` where each `ai` is `$i` (or `${i}`, `${i=d}`)
/// and each extra is literal text or the default of an absent `${k=d}`.
fn in_place(template: &str, passed: usize) -> Option<InPlace<'_>> {
    let open = template.find('(')?;
    let callee = template[..open].trim();
    let valid_callee = !callee.is_empty()
        && callee
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
    let inner = template[open + 1..].trim_end().strip_suffix(')')?;
    if !valid_callee {
        return None;
    }
    let pieces = top_level_arguments(inner)?;
    if pieces.len() < passed {
        return None;
    }
    let mut appended = Vec::new();
    for (index, piece) in pieces.iter().enumerate() {
        let position = index + 1;
        let reference = argument_reference(piece);
        match reference {
            Some((k, _)) if k != position => return None,
            Some(_) if index < passed => {}
            Some((_, Some(default))) => appended.push(default.to_owned()),
            Some((_, None)) => return None,
            None if index < passed || piece.contains('$') => return None,
            None => appended.push((*piece).to_owned()),
        }
    }
    Some(InPlace { callee, appended })
}

/// `$3`, `${3}` → (3, None); `${3=0}` → (3, Some("0")); anything else
/// (literal text, a mapped or rest argument) → None.
fn argument_reference(piece: &str) -> Option<(usize, Option<&str>)> {
    let body = piece.strip_prefix('$')?;
    if let Ok(k) = body.parse::<usize>() {
        return Some((k, None));
    }
    let body = body.strip_prefix('{')?.strip_suffix('}')?;
    match body.split_once('=') {
        Some((k, default)) => Some((k.trim().parse().ok()?, Some(default))),
        None => Some((body.trim().parse().ok()?, None)),
    }
}

/// `a, f(b, c), d` → `["a", "f(b, c)", "d"]` (trimmed); `None` for an
/// unbalanced text. An empty list is no argument.
fn top_level_arguments(text: &str) -> Option<Vec<&str>> {
    if text.trim().is_empty() {
        return Some(Vec::new());
    }
    let mut pieces = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => {
                pieces.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    pieces.push(text[start..].trim());
    (depth == 0).then_some(pieces)
}

#[cfg(test)]
mod tests {
    use super::in_place;

    #[test]
    fn a_template_that_renames_and_appends_is_applied_in_place() {
        let plan = in_place("hipStreamWaitEvent($1, $2, ${3=0})", 2).expect("in place");
        assert_eq!(plan.callee, "hipStreamWaitEvent");
        assert_eq!(plan.appended, ["0"]);
        let plan = in_place("hipStreamWaitEvent($1, $2, ${3=0})", 3).expect("in place");
        assert!(plan.appended.is_empty());
        let plan = in_place("hipHostMalloc($1, $2, hipHostMallocDefault)", 2).expect("in place");
        assert_eq!(plan.appended, ["hipHostMallocDefault"]);
    }

    #[test]
    fn a_template_that_reorders_drops_or_maps_is_not() {
        assert!(in_place("f($2, $1)", 2).is_none());
        assert!(in_place("f($1, $2, $3, $5)", 5).is_none());
        assert!(in_place("f($1, ${2:kind})", 2).is_none());
        assert!(in_place("f((void **)$1, $2)", 2).is_none());
        assert!(in_place("f($1)", 2).is_none());
        assert!(in_place("", 0).is_none());
    }
}
