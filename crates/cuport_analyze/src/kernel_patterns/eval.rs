//! Evaluates the value a kernel thread stores, on probe inputs: loads of
//! the thread's own element, scalar parameters, locals, `#define`d
//! constants and one-line `__device__` functions. Evaluation decides what
//! an elementwise kernel computes: two expressions that agree on every
//! probe compute the same function for all practical purposes, however
//! they are written (`x*x*x` or `powf(x, 3)`).
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use tree_sitter::Node;

use super::source::{named_children, CudaFile, Inline};

/// Why a value cannot be evaluated as one thread's elementwise result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Stop {
    /// A construct the evaluator does not model (named in the message).
    Unsupported(String),
    /// A load of another element than the thread's own.
    OtherElement(String),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Unsupported(what) => write!(f, "no elementwise map: {what}"),
            Stop::OtherElement(array) => {
                write!(f, "reads another element of `{array}` than its own")
            }
        }
    }
}

/// The names and values one evaluation sees.
pub(super) struct Env<'a, 't> {
    pub(super) file: &'a CudaFile<'a>,
    pub(super) inlines: &'a HashMap<String, Inline<'t>>,
    pub(super) defines: &'a HashMap<String, String>,
    /// Pointer parameters → the value of the thread's element; scalar
    /// parameters → their value.
    pub(super) probe: &'a HashMap<String, f64>,
    pub(super) pointers: &'a BTreeSet<String>,
    pub(super) locals: HashMap<String, f64>,
    /// The variable that holds the thread's element index.
    pub(super) index: Option<String>,
    /// Locals holding the grid's size, which step grid-stride loops.
    pub(super) strides: Vec<String>,
    /// Pointer and scalar parameters the value read.
    pub(super) read: BTreeSet<String>,
    constants: RefCell<HashMap<String, Option<f64>>>,
}

/// C library constants kernels use by name (<math.h>, <float.h>).
fn library_constant(name: &str) -> Option<f64> {
    Some(match name {
        "M_PI" => std::f64::consts::PI,
        "M_SQRT2" => std::f64::consts::SQRT_2,
        "M_SQRT1_2" => std::f64::consts::FRAC_1_SQRT_2,
        "M_2_SQRTPI" => std::f64::consts::FRAC_2_SQRT_PI,
        "M_E" => std::f64::consts::E,
        "INFINITY" => f64::INFINITY,
        "FLT_MAX" => f64::from(f32::MAX),
        _ => return None,
    })
}

impl<'a, 't> Env<'a, 't> {
    pub(super) fn new(
        file: &'a CudaFile<'a>,
        inlines: &'a HashMap<String, Inline<'t>>,
        defines: &'a HashMap<String, String>,
        probe: &'a HashMap<String, f64>,
        pointers: &'a BTreeSet<String>,
    ) -> Self {
        Env {
            file,
            inlines,
            defines,
            probe,
            pointers,
            locals: HashMap::new(),
            index: None,
            strides: Vec::new(),
            read: BTreeSet::new(),
            constants: RefCell::new(HashMap::new()),
        }
    }

    pub(super) fn eval(&mut self, node: Node<'_>) -> Result<f64, Stop> {
        match node.kind() {
            "number_literal" => number(self.file.text_of(node)),
            "true" => Ok(1.0),
            "false" => Ok(0.0),
            "identifier" => self.name(self.file.text_of(node)),
            "parenthesized_expression" => self.first_child(node),
            "cast_expression" => self.eval(field(node, "value")?),
            "unary_expression" => self.unary(node),
            "binary_expression" => self.binary(node),
            "conditional_expression" => {
                let cond = self.eval(field(node, "condition")?)?;
                let pick = if cond != 0.0 {
                    "consequence"
                } else {
                    "alternative"
                };
                self.eval(field(node, pick)?)
            }
            "subscript_expression" => self.load(node),
            "pointer_expression" => self.dereference(node),
            "call_expression" => self.call(node),
            other => Err(Stop::Unsupported(other.to_string())),
        }
    }

    fn first_child(&mut self, node: Node<'_>) -> Result<f64, Stop> {
        let inner = node
            .named_child(0)
            .ok_or_else(|| Stop::Unsupported("()".into()))?;
        self.eval(inner)
    }

    fn name(&mut self, name: &str) -> Result<f64, Stop> {
        if let Some(v) = self.locals.get(name) {
            return Ok(*v);
        }
        if let Some(v) = self
            .probe
            .get(name)
            .filter(|_| !self.pointers.contains(name))
        {
            self.read.insert(name.to_string());
            return Ok(*v);
        }
        if let Some(v) = self.constant(name) {
            return Ok(v);
        }
        Err(Stop::Unsupported(format!("the name `{name}`")))
    }

    /// A `#define`d or library constant, evaluated once.
    fn constant(&self, name: &str) -> Option<f64> {
        if let Some(known) = self.constants.borrow().get(name) {
            return *known;
        }
        self.constants.borrow_mut().insert(name.to_string(), None);
        let value = library_constant(name).or_else(|| {
            let text = self.defines.get(name)?;
            evaluate_constant(text, self)
        });
        self.constants.borrow_mut().insert(name.to_string(), value);
        value
    }

    fn unary(&mut self, node: Node<'_>) -> Result<f64, Stop> {
        let value = self.eval(field(node, "argument")?)?;
        match self.operator(node) {
            "-" => Ok(-value),
            "+" => Ok(value),
            "!" => Ok(f64::from(u8::from(value == 0.0))),
            other => Err(Stop::Unsupported(format!("unary `{other}`"))),
        }
    }

    fn binary(&mut self, node: Node<'_>) -> Result<f64, Stop> {
        let l = self.eval(field(node, "left")?)?;
        let r = self.eval(field(node, "right")?)?;
        let truth = |b: bool| f64::from(u8::from(b));
        Ok(match self.operator(node) {
            "+" => l + r,
            "-" => l - r,
            "*" => l * r,
            "/" => l / r,
            "<" => truth(l < r),
            ">" => truth(l > r),
            "<=" => truth(l <= r),
            ">=" => truth(l >= r),
            "==" => truth(l == r),
            "!=" => truth(l != r),
            "&&" => truth(l != 0.0 && r != 0.0),
            "||" => truth(l != 0.0 || r != 0.0),
            other => return Err(Stop::Unsupported(format!("operator `{other}`"))),
        })
    }

    fn operator(&self, node: Node<'_>) -> &'a str {
        node.child_by_field_name("operator")
            .map_or("", |op| self.file.text_of(op))
    }

    /// `p[i]`: the thread's element of pointer parameter `p`.
    fn load(&mut self, node: Node<'_>) -> Result<f64, Stop> {
        let array = self.own_element(node)?;
        let value = self.probe.get(&array).copied();
        self.read.insert(array.clone());
        value.ok_or(Stop::Unsupported(array))
    }

    /// The pointer parameter whose thread's own element `node` (`p[i]`)
    /// is, without reading it.
    pub(super) fn own_element(&self, node: Node<'_>) -> Result<String, Stop> {
        let array = self.file.text_of(field(node, "argument")?).trim();
        let index = node
            .child_by_field_name("indices")
            .and_then(|list| list.named_child(0))
            .or_else(|| node.child_by_field_name("index"))
            .map(|i| self.file.text_of(i).trim())
            .unwrap_or_default();
        let index = index.trim_start_matches('[').trim_end_matches(']').trim();
        if !self.pointers.contains(array) {
            return Err(Stop::Unsupported(format!("indexing `{array}`")));
        }
        if self.index.as_deref() != Some(index) {
            return Err(Stop::OtherElement(array.to_string()));
        }
        Ok(array.to_string())
    }

    /// `*(p + i)` and the `&p[i]` that cache-hinted loads take.
    fn dereference(&mut self, node: Node<'_>) -> Result<f64, Stop> {
        let arg = field(node, "argument")?;
        if arg.kind() == "subscript_expression" {
            return self.load(arg);
        }
        Err(Stop::Unsupported("a pointer expression".into()))
    }

    fn call(&mut self, node: Node<'_>) -> Result<f64, Stop> {
        let callee = self.file.text_of(field(node, "function")?).trim();
        let list = field(node, "arguments")?;
        let args: Vec<Node<'_>> = named_children(list);
        if let Some(inline) = self.inlines.get(callee) {
            let value = inline.value;
            let names = inline.params.clone();
            return self.inline_call(&names, value, &args);
        }
        let mut values = Vec::with_capacity(args.len());
        for arg in &args {
            values.push(self.eval(*arg)?);
        }
        math(callee, &values).ok_or_else(|| Stop::Unsupported(format!("a call of `{callee}`")))
    }

    fn inline_call(
        &mut self,
        names: &[String],
        value: Node<'_>,
        args: &[Node<'_>],
    ) -> Result<f64, Stop> {
        let mut bound = HashMap::new();
        for (name, arg) in names.iter().zip(args) {
            bound.insert(name.clone(), self.eval(*arg)?);
        }
        let saved = std::mem::replace(&mut self.locals, bound);
        let result = self.eval(value);
        self.locals = saved;
        result
    }
}

fn field<'t>(node: Node<'t>, name: &str) -> Result<Node<'t>, Stop> {
    node.child_by_field_name(name)
        .ok_or_else(|| Stop::Unsupported(format!("{} without {name}", node.kind())))
}

/// CUDA's math functions and cache-hinted loads, by what they compute.
fn math(name: &str, a: &[f64]) -> Option<f64> {
    let name = name.trim_start_matches("std::").trim_start_matches("__");
    let one = a.first().copied();
    let two = a.get(1).copied();
    Some(match (name, a.len()) {
        ("expf" | "exp", 1) => one?.exp(),
        ("tanhf" | "tanh", 1) => one?.tanh(),
        ("erff" | "erf", 1) => libm::erf(one?),
        ("sqrtf" | "sqrt", 1) => one?.sqrt(),
        ("rsqrtf" | "rsqrt", 1) => 1.0 / one?.sqrt(),
        ("logf" | "log", 1) => one?.ln(),
        ("fabsf" | "fabs" | "abs", 1) => one?.abs(),
        ("coshf" | "cosh", 1) => one?.cosh(),
        ("fmaxf" | "fmax" | "max", 2) => one?.max(two?),
        ("fminf" | "fmin" | "min", 2) => one?.min(two?),
        ("powf" | "pow", 2) => one?.powf(two?),
        ("fdividef", 2) => one? / two?,
        ("fmaf" | "fma", 3) => one?.mul_add(two?, *a.get(2)?),
        ("ldg" | "ldcs" | "ldcg" | "ldca" | "ldlu" | "ldcv", 1) => one?,
        ("float2half" | "half2float" | "float2bfloat16" | "bfloat162float", 1) => one?,
        _ => return None,
    })
}

fn number(text: &str) -> Result<f64, Stop> {
    let trimmed = text.trim_end_matches(['f', 'F', 'u', 'U', 'l', 'L']);
    trimmed
        .parse::<f64>()
        .map_err(|_| Stop::Unsupported(format!("the literal `{text}`")))
}

/// A `#define`'s text as a constant, in the context of `env` (its other
/// defines).
fn evaluate_constant(text: &str, env: &Env<'_, '_>) -> Option<f64> {
    let snippet = format!("double v = ({text});");
    let file = CudaFile::parse(&snippet).ok()?;
    let declaration = file.tree.root_node().named_child(0)?;
    let value = declaration
        .child_by_field_name("declarator")?
        .child_by_field_name("value")?;
    let inlines = HashMap::new();
    let probe = HashMap::new();
    let pointers = BTreeSet::new();
    let mut inner = Env::new(&file, &inlines, env.defines, &probe, &pointers);
    inner.eval(value).ok()
}
