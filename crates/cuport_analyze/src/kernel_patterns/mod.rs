//! Kernel recognition: what a `__global__` function computes, read from its
//! body (never its name), in the terms of operator recipes (`add`,
//! `gelu-tanh`, `row-sum`, `layer-norm`, ...). Elementwise maps are decided
//! by evaluating the stored value on probe inputs (`elementwise`); kernels
//! with loops, reductions or gathers by the shape of their loops,
//! accumulations and stores (`structure`). A kernel matching nothing stays
//! unclassified, with the reason.
mod adam;
mod elementwise;
mod eval;
mod facts;
mod source;
mod structure;
mod thread;

use std::collections::BTreeMap;

use serde::Serialize;
use tree_sitter::Node;

use crate::error::AnalyzeError;
use source::{innermost_name, named_children, CudaFile};

/// A parameter of a kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelParam {
    pub name: String,
    /// The element type for a pointer, else the type, without qualifiers.
    pub c_type: String,
    pub pointer: bool,
}

/// How a recognition was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Certainty {
    /// The shape of loops and accumulations only.
    Low,
    /// The shape and the arithmetic of the result.
    Medium,
    /// The stored value, evaluated on probe inputs, equals the pattern's.
    High,
}

/// A pointer parameter the pattern reads or writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorUse {
    pub param: String,
    pub reads: bool,
    pub writes: bool,
    /// Extents as an expression over the parameters, where recognition
    /// found them (`N`, `B*T, C`).
    pub shape: Option<String>,
}

/// What a kernel computes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recognised {
    pub pattern: String,
    pub certainty: Certainty,
    pub reason: String,
    /// The pattern's slots (`out`, `x`, `a`, `rows`, ...) → parameters or
    /// expressions over them.
    pub slots: BTreeMap<String, String>,
    pub tensors: Vec<TensorUse>,
}

/// One kernel of a file and what recognition made of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelPattern {
    pub name: String,
    /// 1-based line of the kernel's name.
    pub line: u32,
    pub params: Vec<KernelParam>,
    pub recognised: Option<Recognised>,
    /// Why it is unclassified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unclassified: Option<String>,
}

/// Every `__global__` function of a CUDA source and what it computes.
pub fn recognise_kernels(text: &str) -> Result<Vec<KernelPattern>, AnalyzeError> {
    let file = CudaFile::parse(text)?;
    let inlines = file.inlines();
    let defines = file.defines();
    let mut found = Vec::new();
    for kernel in file.kernels() {
        let Some((name, params)) = signature(&file, kernel) else {
            continue;
        };
        let Some(body) = kernel.child_by_field_name("body") else {
            continue;
        };
        let line = kernel.start_position().row as u32 + 1;
        let outcome = elementwise::recognise(&file, body, &params, &inlines, &defines)
            .map_err(|stop| stop.to_string())
            .or_else(|elementwise| structure::recognise(&file, body, &params).ok_or(elementwise));
        let (recognised, unclassified) = match outcome {
            Ok(r) => (Some(r), None),
            Err(why) => (None, Some(why)),
        };
        found.push(KernelPattern {
            name,
            line,
            params,
            recognised,
            unclassified,
        });
    }
    Ok(found)
}

/// The kernel's name and parameters.
fn signature(file: &CudaFile<'_>, kernel: Node<'_>) -> Option<(String, Vec<KernelParam>)> {
    let declarator = kernel.child_by_field_name("declarator")?;
    let declarator = if declarator.kind() == "function_declarator" {
        declarator
    } else {
        named_children(declarator)
            .into_iter()
            .find(|n| n.kind() == "function_declarator")?
    };
    let name = file
        .text_of(declarator.child_by_field_name("declarator")?)
        .trim()
        .to_string();
    let list = declarator.child_by_field_name("parameters")?;
    let params = named_children(list)
        .into_iter()
        .filter(|p| p.kind() == "parameter_declaration")
        .filter_map(|p| parameter(file, p))
        .collect();
    Some((name, params))
}

fn parameter(file: &CudaFile<'_>, node: Node<'_>) -> Option<KernelParam> {
    let c_type = file
        .text_of(node.child_by_field_name("type")?)
        .trim()
        .to_string();
    let declarator = node.child_by_field_name("declarator")?;
    let pointer = matches!(declarator.kind(), "pointer_declarator" | "array_declarator");
    let name = file.text_of(innermost_name(declarator)).trim().to_string();
    Some(KernelParam {
        name,
        c_type,
        pointer,
    })
}

#[cfg(test)]
mod tests;
