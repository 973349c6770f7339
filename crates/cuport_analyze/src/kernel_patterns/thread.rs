//! Runs one thread of a kernel that does a fixed amount of work per
//! element: the statements before and inside the `if (i < n)` guard or the
//! grid-stride loop, with locals evaluated on the probe inputs. Anything
//! else (other loops, branches on data, barriers, shared memory) stops it:
//! such a kernel is no elementwise map.
use tree_sitter::Node;

use super::eval::{Env, Stop};
use super::source::{innermost_name, named_children};

/// What one thread did.
#[derive(Debug, Default)]
pub(super) struct ThreadRun {
    /// Each store to the thread's element: the array and the value.
    pub(super) stores: Vec<(String, f64)>,
    /// The bound the index is checked against (`n`), as source text.
    pub(super) guard: Option<String>,
}

enum Flow {
    Next,
    Return,
}

pub(super) fn run_thread(body: Node<'_>, env: &mut Env<'_, '_>) -> Result<ThreadRun, Stop> {
    let mut run = ThreadRun::default();
    exec(body, env, &mut run)?;
    Ok(run)
}

fn exec(node: Node<'_>, env: &mut Env<'_, '_>, run: &mut ThreadRun) -> Result<Flow, Stop> {
    match node.kind() {
        "compound_statement" => {
            for child in named_children(node) {
                if let Flow::Return = exec(child, env, run)? {
                    return Ok(Flow::Return);
                }
            }
            Ok(Flow::Next)
        }
        "declaration" => declare(node, env).map(|()| Flow::Next),
        "expression_statement" => match node.named_child(0) {
            None => Ok(Flow::Next),
            Some(e) if e.kind() == "assignment_expression" => {
                assign(e, env, run).map(|()| Flow::Next)
            }
            Some(e) => Err(Stop::Unsupported(format!(
                "the statement `{}`",
                env.file.text_of(e)
            ))),
        },
        "if_statement" => guard(node, env, run),
        "for_statement" => grid_stride(node, env, run),
        "return_statement" => Ok(Flow::Return),
        other => Err(Stop::Unsupported(other.to_string())),
    }
}

fn declare(node: Node<'_>, env: &mut Env<'_, '_>) -> Result<(), Stop> {
    for declarator in named_children(node) {
        if declarator.kind() != "init_declarator" {
            continue;
        }
        let name = env.file.text_of(innermost_name(declarator)).to_string();
        let Some(value) = declarator.child_by_field_name("value") else {
            continue;
        };
        let text = env.file.text_of(value);
        if env.index.is_none() && text.contains("threadIdx") {
            env.index = Some(name);
            continue;
        }
        // The grid's size (`int stride = blockDim.x * gridDim.x;`) only
        // steps a grid-stride loop.
        if text.contains("gridDim") {
            env.strides.push(name);
            continue;
        }
        let v = env.eval(value)?;
        env.locals.insert(name, v);
    }
    Ok(())
}

fn assign(node: Node<'_>, env: &mut Env<'_, '_>, run: &mut ThreadRun) -> Result<(), Stop> {
    let left = node
        .child_by_field_name("left")
        .ok_or_else(|| Stop::Unsupported("assignment".into()))?;
    let right = node
        .child_by_field_name("right")
        .ok_or_else(|| Stop::Unsupported("assignment".into()))?;
    let op = node
        .child_by_field_name("operator")
        .map_or("=", |o| env.file.text_of(o));
    let value = env.eval(right)?;
    if left.kind() == "identifier" {
        let name = env.file.text_of(left).to_string();
        let old = env.locals.get(&name).copied();
        let new = combine(op, old, value)?;
        env.locals.insert(name, new);
        return Ok(());
    }
    if left.kind() != "subscript_expression" {
        return Err(Stop::Unsupported(format!(
            "a store to `{}`",
            env.file.text_of(left)
        )));
    }
    let array = env.own_element(left)?;
    let old = if op == "=" {
        None
    } else {
        Some(env.eval(left)?)
    };
    run.stores.push((array, combine(op, old, value)?));
    Ok(())
}

fn combine(op: &str, old: Option<f64>, value: f64) -> Result<f64, Stop> {
    match (op, old) {
        ("=", _) => Ok(value),
        ("+=", Some(o)) => Ok(o + value),
        ("-=", Some(o)) => Ok(o - value),
        ("*=", Some(o)) => Ok(o * value),
        ("/=", Some(o)) => Ok(o / value),
        _ => Err(Stop::Unsupported(format!("`{op}`"))),
    }
}

/// `if (i < n) {...}` runs its body; `if (i >= n) return;` ends threads
/// past the end. Any other branch is data-dependent control flow.
fn guard(node: Node<'_>, env: &mut Env<'_, '_>, run: &mut ThreadRun) -> Result<Flow, Stop> {
    let cond = node
        .child_by_field_name("condition")
        .and_then(|c| c.child_by_field_name("value").or_else(|| c.named_child(0)))
        .ok_or_else(|| Stop::Unsupported("if".into()))?;
    let Some((op, bound)) = index_comparison(cond, env) else {
        return Err(Stop::Unsupported(format!(
            "the branch `if ({})`",
            env.file.text_of(cond)
        )));
    };
    run.guard = Some(bound);
    let then = node
        .child_by_field_name("consequence")
        .ok_or_else(|| Stop::Unsupported("if".into()))?;
    match op.as_str() {
        "<" if node.child_by_field_name("alternative").is_none() => exec(then, env, run),
        ">=" if returns(then, env) => Ok(Flow::Next),
        _ => Err(Stop::Unsupported(format!(
            "the branch `if ({})`",
            env.file.text_of(cond)
        ))),
    }
}

fn returns(node: Node<'_>, env: &Env<'_, '_>) -> bool {
    env.file
        .text_of(node)
        .trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace())
        == "return;"
}

/// `index < bound` or `index >= bound`: the operator and the bound.
fn index_comparison(cond: Node<'_>, env: &Env<'_, '_>) -> Option<(String, String)> {
    if cond.kind() != "binary_expression" {
        return None;
    }
    let left = env.file.text_of(cond.child_by_field_name("left")?).trim();
    let op = env.file.text_of(cond.child_by_field_name("operator")?);
    let right = env.file.text_of(cond.child_by_field_name("right")?).trim();
    (Some(left) == env.index.as_deref()).then(|| (op.to_string(), right.to_string()))
}

/// `for (int i = <thread index>; i < n; i += blockDim.x * gridDim.x)`.
fn grid_stride(node: Node<'_>, env: &mut Env<'_, '_>, run: &mut ThreadRun) -> Result<Flow, Stop> {
    let update = node
        .child_by_field_name("update")
        .map(|u| env.file.text_of(u))
        .unwrap_or_default();
    let strided = update
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| env.strides.iter().any(|s| s == w));
    if !update.contains("gridDim") && !strided {
        return Err(Stop::Unsupported("a loop".into()));
    }
    if let Some(init) = node.child_by_field_name("initializer") {
        for declarator in named_children(init)
            .into_iter()
            .filter(|d| d.kind() == "init_declarator")
        {
            env.index = Some(env.file.text_of(innermost_name(declarator)).to_string());
        }
    }
    let cond = node
        .child_by_field_name("condition")
        .ok_or_else(|| Stop::Unsupported("a loop without a bound".into()))?;
    let (_, bound) =
        index_comparison(cond, env).ok_or_else(|| Stop::Unsupported("a loop".into()))?;
    run.guard = Some(bound);
    let body = node
        .child_by_field_name("body")
        .ok_or_else(|| Stop::Unsupported("a loop".into()))?;
    exec(body, env, run)
}
