//! The shape of a kernel body that is no elementwise map: its loops, the
//! locals it accumulates into, what it loads and stores. Pointers are
//! followed through local aliases (`const float* x = inp + idx * C;`) and
//! through the cache-hinted load and store intrinsics.
use std::collections::HashMap;

use tree_sitter::Node;

use super::source::{innermost_name, named_children, CudaFile};
use super::KernelParam;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AccKind {
    Sum,
    Max,
}

/// `acc += term` or `acc = fmaxf(acc, term)` inside a loop.
#[derive(Debug, Clone)]
pub(super) struct Acc {
    pub(super) var: String,
    pub(super) kind: AccKind,
    pub(super) term: String,
    pub(super) loop_depth: usize,
    /// The innermost enclosing loop's variable.
    pub(super) loop_var: Option<String>,
}

#[derive(Debug, Clone)]
pub(super) struct Access {
    /// The pointer parameter (through aliases).
    pub(super) array: String,
    pub(super) index: String,
    pub(super) loop_depth: usize,
}

#[derive(Debug, Clone)]
pub(super) struct Store {
    pub(super) at: Access,
    pub(super) value: String,
}

#[derive(Debug, Clone)]
pub(super) struct Loop {
    pub(super) bound: String,
    pub(super) grid_stride: bool,
}

#[derive(Debug, Default)]
pub(super) struct Facts {
    pub(super) loops: Vec<Loop>,
    pub(super) accs: Vec<Acc>,
    pub(super) loads: Vec<Access>,
    pub(super) stores: Vec<Store>,
    /// Local → its initialiser's text.
    pub(super) locals: HashMap<String, String>,
    /// Local pointer → the parameter it points into.
    pub(super) aliases: HashMap<String, String>,
    /// `if (idx < N)` / `if (idx >= N) return;` bounds, in order.
    pub(super) guards: Vec<String>,
    /// Inputs copied into local tiles (`st_vec(&tile[y][x], ld_vec(inp + ...))`).
    pub(super) tiles: Vec<String>,
    loop_vars: Vec<String>,
}

/// Intrinsics that store their second argument through their first.
const STORES: &[&str] = &["__stcs", "__stcg", "__stwt", "__stwb", "st_vec"];

pub(super) fn collect(file: &CudaFile<'_>, body: Node<'_>, params: &[KernelParam]) -> Facts {
    let mut facts = Facts::default();
    for p in params.iter().filter(|p| p.pointer) {
        facts.aliases.insert(p.name.clone(), p.name.clone());
    }
    walk(file, body, 0, &mut facts);
    facts
}

fn walk(file: &CudaFile<'_>, node: Node<'_>, depth: usize, facts: &mut Facts) {
    match node.kind() {
        "for_statement" | "while_statement" | "do_statement" => {
            let fact = loop_fact(file, node, facts);
            facts.loops.push(fact);
            let var = node
                .child_by_field_name("initializer")
                .and_then(|i| {
                    named_children(i)
                        .into_iter()
                        .find(|d| d.kind() == "init_declarator")
                })
                .map(|d| file.text_of(innermost_name(d)).trim().to_string())
                .unwrap_or_default();
            facts.loop_vars.push(var);
            for child in named_children(node) {
                walk(file, child, depth + 1, facts);
            }
            facts.loop_vars.pop();
            return;
        }
        "init_declarator" => declare(file, node, facts),
        "if_statement" => guard(file, node, facts),
        "assignment_expression" => assign(file, node, depth, facts),
        "subscript_expression" => {
            if let Some(access) = access(file, node, depth, facts) {
                facts.loads.push(access);
            }
        }
        "call_expression" => call(file, node, depth, facts),
        _ => {}
    }
    for child in named_children(node) {
        walk(file, child, depth, facts);
    }
}

fn loop_fact(file: &CudaFile<'_>, node: Node<'_>, facts: &Facts) -> Loop {
    let bound = node
        .child_by_field_name("condition")
        .and_then(|c| {
            c.child_by_field_name("right")
                .or_else(|| c.named_child(0)?.child_by_field_name("right"))
        })
        .map(|r| file.text_of(r).trim().to_string())
        .unwrap_or_default();
    let update = node
        .child_by_field_name("update")
        .map(|u| file.text_of(u))
        .unwrap_or_default();
    let strided = update
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| {
            facts
                .locals
                .get(w)
                .is_some_and(|init| init.contains("gridDim"))
        });
    Loop {
        bound,
        grid_stride: update.contains("gridDim") || strided,
    }
}

fn declare(file: &CudaFile<'_>, node: Node<'_>, facts: &mut Facts) {
    let name = file.text_of(innermost_name(node)).trim().to_string();
    let Some(value) = node.child_by_field_name("value") else {
        return;
    };
    let text = file.text_of(value).trim().to_string();
    if let Some(base) = pointer_base(&text, facts) {
        facts.aliases.insert(name.clone(), base);
    }
    facts.locals.insert(name, text);
}

/// The parameter `text` (`inp + idx * C`, `reinterpret_cast<const float4*>(x)`)
/// points into, if it is pointer arithmetic on one.
fn pointer_base(text: &str, facts: &Facts) -> Option<String> {
    let inner = text
        .rsplit_once('(')
        .filter(|_| text.contains("_cast<"))
        .map_or(text, |(_, rest)| rest.trim_end_matches(')'));
    let first = inner.split(['+', ' ']).find(|w| !w.is_empty())?.trim();
    facts.aliases.get(first).cloned()
}

fn guard(file: &CudaFile<'_>, node: Node<'_>, facts: &mut Facts) {
    let Some(cond) = node.child_by_field_name("condition") else {
        return;
    };
    let cond = cond
        .child_by_field_name("value")
        .or_else(|| cond.named_child(0));
    let Some(cond) = cond.filter(|c| c.kind() == "binary_expression") else {
        return;
    };
    let op = cond
        .child_by_field_name("operator")
        .map(|o| file.text_of(o))
        .unwrap_or_default();
    let left = cond
        .child_by_field_name("left")
        .map(|l| file.text_of(l).trim())
        .unwrap_or_default();
    let indexed = facts
        .locals
        .get(left)
        .is_some_and(|init| init.contains("blockIdx"));
    if indexed && (op == "<" || op == ">=") {
        if let Some(right) = cond.child_by_field_name("right") {
            facts.guards.push(file.text_of(right).trim().to_string());
        }
    }
}

fn assign(file: &CudaFile<'_>, node: Node<'_>, depth: usize, facts: &mut Facts) {
    let (Some(left), Some(right)) = (
        node.child_by_field_name("left"),
        node.child_by_field_name("right"),
    ) else {
        return;
    };
    let op = node
        .child_by_field_name("operator")
        .map(|o| file.text_of(o))
        .unwrap_or("=");
    // An element of a local array (`vals[i][j] += ...`) accumulates too.
    let target = file.text_of(left).trim();
    let target = target
        .split('[')
        .next()
        .unwrap_or(target)
        .trim()
        .to_string();
    let value = file.text_of(right).trim().to_string();
    if left.kind() == "subscript_expression" || left.kind() == "pointer_expression" {
        // `out[i] += x` stores `out[i] + (x)`: the old value is read too (a
        // permutation that accumulates is no permutation).
        let stored = match op.strip_suffix('=').filter(|o| !o.is_empty()) {
            Some(binary) => format!("{} {binary} ({value})", file.text_of(left).trim()),
            None => value.clone(),
        };
        if let Some(at) = store_target(file, left, depth, facts) {
            facts.stores.push(Store { at, value: stored });
            return;
        }
    }
    if depth == 0 {
        return;
    }
    let kind = match op {
        "+=" => Some((AccKind::Sum, value.clone())),
        "=" => max_term(&target, right, file),
        _ => None,
    };
    if let Some((kind, term)) = kind {
        facts.accs.push(Acc {
            var: target,
            kind,
            term,
            loop_depth: depth,
            loop_var: facts.loop_vars.last().cloned(),
        });
    }
}

/// `fmaxf(acc, term)` (either order) → the term.
fn max_term(acc: &str, right: Node<'_>, file: &CudaFile<'_>) -> Option<(AccKind, String)> {
    if right.kind() != "call_expression" {
        return None;
    }
    let callee = file.text_of(right.child_by_field_name("function")?);
    if !matches!(callee.trim(), "fmaxf" | "fmax" | "max" | "std::max") {
        return None;
    }
    let args = named_children(right.child_by_field_name("arguments")?);
    let texts: Vec<&str> = args.iter().map(|a| file.text_of(*a).trim()).collect();
    let [a, b] = texts.as_slice() else {
        return None;
    };
    let term = if *a == acc {
        b
    } else if *b == acc {
        a
    } else {
        return None;
    };
    Some((AccKind::Max, (*term).to_string()))
}

fn store_target(
    file: &CudaFile<'_>,
    left: Node<'_>,
    depth: usize,
    facts: &Facts,
) -> Option<Access> {
    if left.kind() == "subscript_expression" {
        return access(file, left, depth, facts);
    }
    let arg = left.child_by_field_name("argument")?;
    let text = file
        .text_of(arg)
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')');
    Some(Access {
        array: pointer_base(text, facts)?,
        index: text.to_string(),
        loop_depth: depth,
    })
}

fn access(file: &CudaFile<'_>, node: Node<'_>, depth: usize, facts: &Facts) -> Option<Access> {
    let array = file.text_of(node.child_by_field_name("argument")?).trim();
    let base = facts.aliases.get(array)?;
    let index = node
        .child_by_field_name("indices")
        .map(|i| {
            file.text_of(i)
                .trim()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string()
        })
        .unwrap_or_default();
    Some(Access {
        array: base.clone(),
        index,
        loop_depth: depth,
    })
}

/// Cache-hinted loads (`__ldcs(x + c)`) read their pointer argument;
/// streaming stores (`__stcs(o + c, v)`) write it.
fn call(file: &CudaFile<'_>, node: Node<'_>, depth: usize, facts: &mut Facts) {
    let callee = node
        .child_by_field_name("function")
        .map(|f| file.text_of(f).trim())
        .unwrap_or_default();
    let Some(list) = node.child_by_field_name("arguments") else {
        return;
    };
    let args = named_children(list);
    let Some(first) = args.first() else {
        return;
    };
    let text = file.text_of(*first).trim().trim_start_matches('&');
    let Some(array) = pointer_base(text, facts) else {
        if STORES.contains(&callee) {
            let value = args.get(1).map(|v| file.text_of(*v)).unwrap_or_default();
            let sources = value.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            let sources: Vec<String> = sources
                .filter_map(|w| facts.aliases.get(w).cloned())
                .collect();
            facts.tiles.extend(sources);
        }
        return;
    };
    let at = Access {
        array,
        index: text.to_string(),
        loop_depth: depth,
    };
    if STORES.contains(&callee) {
        let value = args
            .get(1)
            .map(|v| file.text_of(*v).trim().to_string())
            .unwrap_or_default();
        facts.stores.push(Store { at, value });
    } else if callee.starts_with("__ld") || callee == "ld_vec" {
        facts.loads.push(at);
    }
}
