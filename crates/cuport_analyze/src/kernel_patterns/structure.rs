//! Kernels with loops, reductions and gathers, recognised by the shape of
//! their loops, accumulations, loads and stores ([`facts`]). These are
//! structural judgements (certainty medium or low): evaluation decides only
//! elementwise maps and Adam steps.
use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::facts::{collect, Acc, AccKind, Facts};
use super::source::CudaFile;
use super::{Certainty, KernelParam, Recognised, TensorUse};

pub(super) fn recognise(
    file: &CudaFile<'_>,
    body: Node<'_>,
    params: &[KernelParam],
) -> Option<Recognised> {
    let facts = collect(file, body, params);
    let view = View {
        facts: &facts,
        params,
    };
    gemm(&view)
        .or_else(|| softmax(&view))
        .or_else(|| norm(&view))
        .or_else(|| row_reduction(&view))
        .or_else(|| gather(&view))
        .or_else(|| permute(&view))
}

struct View<'a> {
    facts: &'a Facts,
    params: &'a [KernelParam],
}

impl View<'_> {
    /// The identifiers `text` uses, with locals expanded (a few levels).
    fn names(&self, text: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![(text.to_string(), 0)];
        while let Some((t, level)) = todo.pop() {
            for word in identifiers(&t) {
                if seen.insert(word.clone()) && level < 6 {
                    if let Some(init) = self.facts.locals.get(&word) {
                        todo.push((init.clone(), level + 1));
                    }
                }
            }
        }
        seen
    }

    /// `text` with its locals expanded, for substring tests.
    fn expanded(&self, text: &str) -> String {
        let mut out = text.to_string();
        for name in self.names(text) {
            if let Some(init) = self.facts.locals.get(&name) {
                out.push(' ');
                out.push_str(init);
            }
        }
        out
    }

    fn is_param(&self, name: &str) -> bool {
        self.params.iter().any(|p| p.name == name)
    }

    /// Pointer parameters loaded anywhere in `text` (through locals).
    fn loaded_in(&self, text: &str) -> Vec<String> {
        let names = self.names(text);
        let mut arrays: Vec<String> = names
            .iter()
            .filter_map(|n| self.facts.aliases.get(n).cloned())
            .collect();
        arrays.dedup();
        arrays
    }

    fn accs(&self, kind: AccKind) -> impl Iterator<Item = &Acc> {
        self.facts.accs.iter().filter(move |a| a.kind == kind)
    }

    fn stored(&self) -> Vec<String> {
        let mut arrays: Vec<String> = self
            .facts
            .stores
            .iter()
            .map(|s| s.at.array.clone())
            .collect();
        arrays.sort();
        arrays.dedup();
        arrays
    }

    /// The bound of the first non-grid-stride loop, if only parameters.
    fn row_length(&self) -> Option<String> {
        let row = self.facts.loops.iter().find(|l| !l.grid_stride)?;
        self.only_params(&row.bound).then(|| row.bound.clone())
    }

    fn rows(&self) -> Option<String> {
        let guard = self.facts.guards.first()?;
        self.only_params(guard).then(|| guard.clone())
    }

    fn only_params(&self, text: &str) -> bool {
        let words = identifiers(text);
        !text.is_empty() && words.iter().all(|w| self.is_param(w))
    }

    /// Whether a loop bound is the same for every row: parameters, numbers
    /// and the launch's sizes (a block reduction's `blockDim.x / 32`, a
    /// shuffle loop's `0`), not a position such as the row's own index.
    fn is_fixed_bound(&self, text: &str) -> bool {
        identifiers(text).iter().all(|w| {
            self.is_param(w)
                || w.starts_with(|c: char| c.is_ascii_digit())
                || matches!(w.as_str(), "blockDim" | "gridDim" | "warpSize")
        })
    }
}

/// The identifiers of `text`, not counting member names (`blockIdx.x`'s
/// `x` is no local `x`).
fn identifiers(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        let part = c.is_alphanumeric() || c == '_';
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let word = &text[s..i];
                let member = text[..s].ends_with('.') || text[..s].ends_with("->");
                if !member
                    && word
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphabetic() || c == '_')
                {
                    words.push(word.to_string());
                }
                start = None;
            }
            _ => {}
        }
    }
    words
}

/// `text` with the insides of `[...]` removed.
fn without_subscripts(text: &str) -> String {
    let mut depth = 0;
    text.chars()
        .filter(|c| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            depth == 0
        })
        .collect()
}

/// `name[index]` subscripts of `text`, as (name, index) pairs.
fn subscripts(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let name: String = rest[..open]
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        found.push((name, rest[open + 1..open + close].trim().to_string()));
        rest = &rest[open + close + 1..];
    }
    found
}

fn slots(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

fn tensor(param: &str, writes: bool, shape: Option<String>) -> TensorUse {
    TensorUse {
        param: param.to_string(),
        reads: !writes,
        writes,
        shape,
    }
}

fn recognised(
    pattern: &str,
    certainty: Certainty,
    reason: String,
    slots: BTreeMap<String, String>,
    tensors: Vec<TensorUse>,
) -> Recognised {
    Recognised {
        pattern: pattern.to_string(),
        certainty,
        reason,
        slots,
        tensors,
    }
}

/// A sum of products of two different inputs, both indexed by the
/// innermost loop, inside at least one more loop or thread dimension:
/// `acc += A[r*K + k] * B[k*N + c]`. A product of one input with itself is
/// a sum of squares, not a GEMM.
fn gemm(v: &View<'_>) -> Option<Recognised> {
    let product = v
        .accs(AccKind::Sum)
        .find(|a| two_operand_product(v, a) || tiled_product(v, a))?;
    let inputs = v.loaded_in(&product.term);
    let mut tiles = v.facts.tiles.clone();
    tiles.dedup();
    let inputs = if inputs.len() >= 2 { inputs } else { tiles };
    let [a, b, ..] = inputs.as_slice() else {
        return None;
    };
    let out = v.stored().into_iter().find(|s| s != a && s != b)?;
    let deep = v.facts.loops.iter().filter(|l| !l.grid_stride).count();
    let certainty = if deep >= 3 {
        Certainty::Low
    } else {
        Certainty::Medium
    };
    Some(recognised(
        "gemm",
        certainty,
        format!(
            "`{}` accumulates products of `{a}` and `{b}` in a loop, stored to `{out}`",
            product.var
        ),
        slots(&[("a", a), ("b", b), ("out", &out)]),
        vec![
            tensor(a, false, None),
            tensor(b, false, None),
            tensor(&out, true, None),
        ],
    ))
}

/// `A[f] * B[g]` where the rows of `A` and the columns of `B` are chosen by
/// different variables (`inp[b*T*C + t*C + i] * weight[o*C + i]`): a matrix
/// product. A product of two rows chosen by the same variables
/// (`att[...t*T + i] * datt[...t*T + i]`) is a dot product, and a row times
/// a vector (`weight[i] * x[...]`) is no GEMM either.
fn two_operand_product(v: &View<'_>, a: &Acc) -> bool {
    let Some((left, right)) = split_product(&a.term) else {
        return false;
    };
    let loop_var = a.loop_var.clone().unwrap_or_default();
    let rows = operand_loads(v, left, &loop_var);
    let cols = operand_loads(v, right, &loop_var);
    rows.iter().any(|(p, pv)| {
        cols.iter()
            .any(|(q, qv)| p != q && !pv.is_empty() && !qv.is_empty() && pv.is_disjoint(qv))
    })
}

/// `a * b` at the top level (not inside brackets or calls).
fn split_product(term: &str) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    for (i, c) in term.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '*' if depth == 0 => return Some((&term[..i], &term[i + 1..])),
            _ => {}
        }
    }
    None
}

/// The inputs an operand loads at an index using `loop_var`, each with the
/// other variables (not parameters) its full index uses, alias offsets
/// included.
fn operand_loads(v: &View<'_>, operand: &str, loop_var: &str) -> Vec<(String, BTreeSet<String>)> {
    let expanded = v.expanded(operand);
    subscripts(&expanded)
        .into_iter()
        .filter_map(|(name, index)| {
            let base = v.facts.aliases.get(&name)?;
            let offset = v.facts.locals.get(&name).cloned().unwrap_or_default();
            let full = format!("{offset} + {index}");
            let vars: BTreeSet<String> = identifiers(&full)
                .into_iter()
                .filter(|w| !v.is_param(w) && *w != *base)
                .collect();
            vars.contains(loop_var).then(|| {
                let others = vars.into_iter().filter(|w| w != loop_var).collect();
                (base.clone(), others)
            })
        })
        .collect()
}

/// Tiled kernels multiply shared-memory copies: a product accumulated three
/// loops deep while two inputs are loaded into tiles.
fn tiled_product(v: &View<'_>, a: &Acc) -> bool {
    let mut tiles = v.facts.tiles.clone();
    tiles.dedup();
    a.loop_depth >= 3 && a.term.contains('*') && tiles.len() >= 2
}

fn loaded_outside_stores(v: &View<'_>) -> Vec<String> {
    let stored = v.stored();
    let mut arrays: Vec<String> = v
        .facts
        .loads
        .iter()
        .map(|l| l.array.clone())
        .filter(|a| !stored.contains(a))
        .collect();
    arrays.dedup();
    arrays
}

/// A running max, a sum of `exp(x - max)` and a store of the exponentials
/// scaled by the sum: a row softmax. A row loop bounded by something other
/// than parameters (the row's own position) makes it causal.
fn softmax(v: &View<'_>) -> Option<Recognised> {
    v.accs(AccKind::Max).next()?;
    // Attention kernels fuse dot products (q·k, att·v) with the softmax:
    // they compute more than a softmax.
    if v.accs(AccKind::Sum).any(|a| v.loaded_in(&a.term).len() > 1) {
        return None;
    }
    let sum = v
        .accs(AccKind::Sum)
        .find(|a| v.expanded(&a.term).contains("exp"))?;
    let store = v.facts.stores.iter().find(|s| {
        let value = v.expanded(&s.value);
        value.contains("exp") || value.contains('/')
    })?;
    let x = v
        .loaded_in(&sum.term)
        .into_iter()
        .find(|a| *a != store.at.array)?;
    let causal = v
        .facts
        .loops
        .iter()
        .any(|l| !l.grid_stride && !l.bound.is_empty() && !v.is_fixed_bound(&l.bound));
    let pattern = if causal { "softmax-causal" } else { "softmax" };
    let cols = if causal { None } else { v.row_length() };
    let shape = v.rows().zip(cols).map(|(r, c)| format!("{r}, {c}"));
    Some(recognised(
        pattern,
        Certainty::Medium,
        format!(
            "a running max and a sum of exponentials of `{x}` (`{}`), stored to `{}` scaled by the sum{}",
            sum.var,
            store.at.array,
            if causal { "; the row loop stops at the row's own position" } else { "" }
        ),
        slots(&[("x", &x), ("out", &store.at.array)]),
        vec![tensor(&x, false, shape.clone()), tensor(&store.at.array, true, shape)],
    ))
}

/// A mean and a variance (or a mean square) of a row, a reciprocal square
/// root, and a store scaled by a weight (and shifted by a bias).
fn norm(v: &View<'_>) -> Option<Recognised> {
    let sums: Vec<&Acc> = v.accs(AccKind::Sum).collect();
    let root = v
        .facts
        .locals
        .values()
        .chain(v.facts.stores.iter().map(|s| &s.value))
        .any(|t| t.contains("rsqrt") || t.contains("sqrt"));
    if sums.is_empty() || !root {
        return None;
    }
    let squared = sums.iter().any(|a| squares(v, &a.term));
    let x = sums.iter().flat_map(|a| v.loaded_in(&a.term)).next()?;
    let in_loops: Vec<&super::facts::Store> = v
        .facts
        .stores
        .iter()
        .filter(|s| s.at.loop_depth > 0)
        .collect();
    let store = *in_loops.iter().find(|s| s.at.array != x)?;
    // A kernel that also stores another row (a fused residual add) does
    // more than a norm.
    if in_loops.iter().any(|s| s.at.array != store.at.array) {
        return None;
    }
    let plain_sum = sums
        .iter()
        .any(|a| !squares(v, &a.term) && !a.term.contains('*'));
    let subtracts = without_subscripts(&v.expanded(&store.value)).contains('-');
    let centred = sums
        .iter()
        .any(|a| squares(v, &a.term) && v.expanded(&a.term).contains('-'))
        || (plain_sum && squared && subtracts);
    let mut scale: Vec<String> = v
        .loaded_in(&store.value)
        .into_iter()
        .filter(|a| *a != x && *a != store.at.array)
        .collect();
    // The weight multiplies, the bias is added.
    let value = v.expanded(&store.value);
    scale.sort_by_key(|a| !multiplies(&value, a));
    let (pattern, what) = match (centred, squared) {
        (true, _) => ("layer-norm", "a mean, a variance about it"),
        (false, true) if !plain_sum => ("rms-norm", "a mean square"),
        _ => return None,
    };
    let rows = v.rows();
    let cols = v.row_length();
    let mut s = slots(&[("x", &x), ("out", &store.at.array)]);
    let row_shape = rows
        .clone()
        .zip(cols.clone())
        .map(|(r, c)| format!("{r}, {c}"));
    let mut tensors = vec![
        tensor(&x, false, row_shape.clone()),
        tensor(&store.at.array, true, row_shape),
    ];
    for (slot, array) in ["weight", "bias"].iter().zip(&scale) {
        s.insert((*slot).to_string(), array.clone());
        tensors.push(tensor(array, false, cols.clone()));
    }
    if let Some(cols) = &cols {
        s.insert("cols".into(), cols.clone());
    }
    if let Some(eps) = epsilon(v) {
        s.insert("eps".into(), eps);
    }
    // Per-row stores: the one holding the reciprocal square root is the rstd.
    for store in v.facts.stores.iter().filter(|s| s.at.loop_depth == 0) {
        let slot = if v.expanded(&store.value).contains("sqrt") {
            "rstd"
        } else {
            "mean"
        };
        s.insert(slot.to_string(), store.at.array.clone());
        tensors.push(tensor(&store.at.array, true, rows.clone()));
    }
    Some(recognised(
        pattern,
        Certainty::Medium,
        format!(
            "{what} and a reciprocal square root of rows of `{x}`, stored to `{}` scaled by {}",
            store.at.array,
            scale.join(" and ")
        ),
        s,
        tensors,
    ))
}

/// Whether `array` is a factor of a product in `value` (`n * weight[c]`).
fn multiplies(value: &str, array: &str) -> bool {
    value.match_indices(array).any(|(at, _)| {
        let before = value[..at].trim_end().ends_with('*');
        let rest = &value[at + array.len()..];
        let after_index = rest.find(']').map_or(rest, |close| &rest[close + 1..]);
        before || after_index.trim_start().starts_with('*')
    })
}

/// Whether `term` is a product of one value with itself (`d * d`, `x[i] * x[i]`).
fn squares(v: &View<'_>, term: &str) -> bool {
    let expanded = |t: &str| {
        v.facts
            .locals
            .get(t.trim())
            .cloned()
            .unwrap_or_else(|| t.trim().to_string())
    };
    match split_product(term) {
        Some((a, b)) => split_product(b).is_none() && expanded(a) == expanded(b),
        None => false,
    }
}

/// What is added under the square root (`rsqrtf(var / C + 1e-5f)`): a
/// literal, a local holding one, or a parameter.
fn epsilon(v: &View<'_>) -> Option<String> {
    let text = v.facts.locals.values().find(|t| t.contains("sqrt"))?;
    let inside = text.split_once("sqrt")?.1;
    let term = inside
        .rsplit_once('+')?
        .1
        .trim()
        .trim_end_matches(')')
        .trim();
    let term = v.facts.locals.get(term).map_or(term, |init| init.trim());
    let literal = term.trim_end_matches(['f', 'F']);
    if literal.parse::<f64>().is_ok() {
        return Some(literal.to_string());
    }
    v.is_param(term).then(|| term.to_string())
}

/// One accumulation over a row loop, stored as is (sum, max, sum of
/// squares) or divided by the row length (mean).
fn row_reduction(v: &View<'_>) -> Option<Recognised> {
    let [acc] = v.facts.accs.as_slice() else {
        return None;
    };
    let [store] = v.facts.stores.as_slice() else {
        return None;
    };
    let x = v.loaded_in(&acc.term).into_iter().next()?;
    if !along_row(v, &x, acc.loop_var.as_deref()?) || v.row_length().is_none() {
        return None;
    }
    if !v.names(&store.value).contains(&acc.var) || v.expanded(&store.value).contains("exp") {
        return None;
    }
    let pattern = match acc.kind {
        AccKind::Max => "row-max",
        AccKind::Sum if squares(v, &acc.term) => "row-sum-of-squares",
        AccKind::Sum if store.value.contains('/') => "row-mean",
        AccKind::Sum if split_product(&acc.term).is_some() => return None,
        AccKind::Sum => "row-sum",
    };
    let rows = v.rows();
    let cols = v.row_length();
    let shape = rows.clone().zip(cols).map(|(r, c)| format!("{r}, {c}"));
    Some(recognised(
        pattern,
        Certainty::Medium,
        format!(
            "`{}` accumulates `{}` over a loop and is stored to `{}`",
            acc.var, acc.term, store.at.array
        ),
        slots(&[("x", &x), ("out", &store.at.array)]),
        vec![
            tensor(&x, false, shape),
            tensor(&store.at.array, true, rows),
        ],
    ))
}

/// The input and index of a value that is one load, unchanged (`x[j]`,
/// `__ldcs(&x[j])`, a local holding one).
fn single_load(v: &View<'_>, value: &str) -> Option<(String, String)> {
    let value = value.trim();
    let value = v.facts.locals.get(value).map_or(value, |init| init.trim());
    let inner = match value.split_once('(') {
        Some((callee, rest)) if callee.starts_with("__ld") => {
            rest.strip_suffix(')')?.trim().trim_start_matches('&')
        }
        Some(_) => return None,
        None => value,
    };
    let found = subscripts(inner);
    let [(name, index)] = found.as_slice() else {
        return None;
    };
    let whole = format!("{name}[{index}]");
    if inner.replace(' ', "") != whole.replace(' ', "") {
        return None;
    }
    Some((v.facts.aliases.get(name)?.clone(), index.clone()))
}

/// Whether some load of `x` steps along a row: the loop variable is a term
/// of its index on its own (`x[i]`, `inp[row * C + i]`), not a multiple
/// (`src[idx + n * l]` walks a column).
fn along_row(v: &View<'_>, x: &str, loop_var: &str) -> bool {
    v.facts
        .loads
        .iter()
        .filter(|l| l.array == x)
        .any(|l| l.index.split('+').any(|term| term.trim() == loop_var))
}

/// A load whose index is a value loaded from another input: a gather
/// (`wte[inp[b*T + t] * C + c]`); with a second load added, an embedding
/// plus a positional term.
fn gather(v: &View<'_>) -> Option<Recognised> {
    // One output, no loop over data and no accumulation: a gather, not a
    // pointer chase or a kernel that also does other work.
    let loops = v.facts.loops.iter().any(|l| !l.grid_stride);
    if !v.facts.accs.is_empty() || loops || v.stored().len() != 1 {
        return None;
    }
    let integer = |name: &str| {
        v.params
            .iter()
            .any(|p| p.name == name && (p.c_type.contains("int") || p.c_type.contains("long")))
    };
    // The row number is an element of an integer input, used as it is.
    let index_of = |load: &super::facts::Access| {
        identifiers(&load.index)
            .into_iter()
            .filter_map(|n| v.facts.locals.get(&n))
            .filter_map(|init| single_load(v, init))
            .map(|(array, _)| array)
            .find(|array| integer(array) && *array != load.array)
    };
    let (table, index) = v
        .facts
        .loads
        .iter()
        .find_map(|l| index_of(l).map(|i| (l.array.clone(), i)))?;
    let store =
        v.facts.stores.iter().find(|s| {
            v.loaded_in(&s.value).contains(&table) || v.names(&s.value).contains(&table)
        })?;
    if !v.loaded_in(&store.at.index).is_empty() {
        return None;
    }
    let arithmetic = ["log", "exp", "sqrt", "max", "*", "/", "?"];
    if arithmetic
        .iter()
        .any(|op| without_subscripts(&store.value).contains(op))
    {
        return None;
    }
    let others: Vec<String> = v
        .loaded_in(&store.value)
        .into_iter()
        .filter(|a| *a != table && *a != index)
        .collect();
    let pattern = if others.is_empty() {
        "embedding"
    } else {
        "embedding-add"
    };
    let mut s = slots(&[
        ("table", &table),
        ("index", &index),
        ("out", &store.at.array),
    ]);
    if let Some(pos) = others.first() {
        s.insert("b".into(), pos.clone());
    }
    Some(recognised(
        pattern,
        Certainty::Medium,
        format!(
            "`{table}` is read at rows given by `{index}`{}",
            others
                .first()
                .map(|o| format!(", plus `{o}`"))
                .unwrap_or_default()
        ),
        s,
        vec![
            tensor(&table, false, None),
            tensor(&index, false, None),
            tensor(&store.at.array, true, None),
        ],
    ))
}

/// Stores of loads of another input at another index, with no arithmetic
/// on the values and no loop: a transpose or permutation.
fn permute(v: &View<'_>) -> Option<Recognised> {
    if v.facts.stores.is_empty()
        || v.facts.loops.iter().any(|l| !l.grid_stride)
        || !v.facts.accs.is_empty()
    {
        return None;
    }
    // Both indices follow from the thread's position alone: an index read
    // from data makes a scatter or a gather, not a permutation.
    let moved = v.facts.stores.iter().all(|s| {
        single_load(v, &s.value).is_some_and(|(array, index)| {
            array != s.at.array
                && index != s.at.index
                && v.loaded_in(&index).is_empty()
                && v.loaded_in(&s.at.index).is_empty()
        })
    });
    if !moved {
        return None;
    }
    let outs = v.stored();
    let ins = loaded_outside_stores(v);
    let out_list = outs.join(", ");
    let mut s = slots(&[("out", outs.first()?), ("x", ins.first()?)]);
    if outs.len() > 1 {
        s.insert("outputs".into(), out_list.clone());
    }
    Some(recognised(
        "permute",
        Certainty::Medium,
        format!(
            "{out_list} receive elements of {} at rearranged indices, unchanged",
            ins.join(", ")
        ),
        s,
        ins.iter()
            .map(|i| tensor(i, false, None))
            .chain(outs.iter().map(|o| tensor(o, true, None)))
            .collect(),
    ))
}
