//! Ascend C skeletons for CUDA kernels (`--ascend-kernel-skeletons`).
//!
//! CUDA kernels cannot be translated mechanically to Ascend C: a CUDA kernel
//! is per-thread scalar code, an Ascend C kernel runs once per AI Core and
//! moves tiles between global memory and the Unified Buffer through queues.
//! So for each kernel definition cuport writes a starting point an engineer
//! fills in, beside the ported tree:
//!
//! ```text
//! OUT/<source path>.ascend/<kernel>_kernel.cpp
//! ```
//!
//! e.g. `OUT/src/vector_add.cu.ascend/vector_add_kernel.cpp` (a kernel
//! already named `*_kernel` is not suffixed twice; the second overload of a
//! name is `<kernel>_2_kernel.cpp`). Each skeleton
//! has the `CopyIn`/`Compute`/`CopyOut` pipeline of the public Ascend C
//! samples, an `extern "C" __global__ __aicore__` entry with one `GM_ADDR`
//! per pointer parameter (scalars stay by-value parameters: Ascend C kernel
//! arguments may be pointers or primitive types), the CUDA body as a
//! comment, a TODO list and, when the kernel looks like an elementwise op or
//! a reduction, the aclnn operator that may replace it.
mod buffer;
mod params;
mod render;
mod todos;

use cuport_analyze::{FileAnalysis, ScanReport};
use cuport_model::{SiteKind, Target};
use serde::Serialize;

use crate::result::Migration;
use params::{parse_param, parse_template, Param, TemplateParam};

/// One generated skeleton.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelSkeleton {
    /// The CUDA kernel's name (also the Ascend C entry's name).
    pub kernel: String,
    /// The CUDA source, relative to the migrated root, `/`-separated.
    pub source: String,
    /// 1-based line of the kernel's name in `source`.
    pub line: u32,
    /// Where the skeleton goes, relative to the output root.
    pub path: String,
    /// The aclnn operator that may replace the kernel outright, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// The skeleton's C++ text.
    #[serde(skip)]
    pub text: String,
}

/// What the renderer needs to know about one kernel.
pub(crate) struct KernelShape<'a> {
    pub(crate) name: &'a str,
    pub(crate) source: &'a str,
    pub(crate) line: u32,
    pub(crate) params: Vec<Param>,
    pub(crate) template: Vec<TemplateParam>,
    pub(crate) body: &'a str,
    pub(crate) operator: Option<String>,
}

/// Skeletons for every kernel definition (with a body) of every migrated
/// file, in file and source order.
pub fn ascend_skeletons(report: &ScanReport, migration: &Migration) -> Vec<KernelSkeleton> {
    let originals: std::collections::HashMap<&str, &[u8]> = migration
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.original.as_slice()))
        .collect();
    let mut skeletons = Vec::new();
    for file in &report.files {
        if let Some(src) = originals.get(file.path.as_str()) {
            skeletons.extend(file_skeletons(&file.path, src, &file.analysis));
        }
    }
    skeletons
}

/// Skeletons for the kernels defined in one file (`path` relative to the
/// root). Kernels under `cuport: off`/`ignore` markers are still listed:
/// the markers silence diagnostics, not the port.
pub fn file_skeletons(path: &str, src: &[u8], analysis: &FileAnalysis) -> Vec<KernelSkeleton> {
    let text = |range: cuport_model::TextRange| {
        src.get(range.start..range.end)
            .map(String::from_utf8_lossy)
            .unwrap_or_default()
    };
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    let mut skeletons = Vec::new();
    for site in &analysis.sites {
        let Some(body_range) = site.body else {
            continue;
        };
        if site.kind != SiteKind::KernelDefinition {
            continue;
        }
        let count = seen.entry(site.name.clone()).or_default();
        *count += 1;
        let file_name = skeleton_file_name(&site.name, *count);
        // A parameter list with `#if` blocks in it: the skeleton takes the
        // parameters of every branch (the TODO list asks to check them).
        let args: Vec<String> = site
            .args
            .iter()
            .map(|&r| without_directives(&text(r)))
            .collect();
        let body = text(body_range);
        let line = site.line;
        let operator = crate::kernels::recognise(&args, &body, Target::Ascend);
        let shape = KernelShape {
            name: &site.name,
            source: path,
            line,
            params: args
                .iter()
                .enumerate()
                .filter_map(|(i, a)| parse_param(a, i))
                .collect(),
            template: site
                .template_args
                .map(|r| parse_template(&text(r)))
                .unwrap_or_default(),
            body: &body,
            operator: operator.clone(),
        };
        skeletons.push(KernelSkeleton {
            kernel: site.name.clone(),
            source: path.to_owned(),
            line,
            path: format!("{path}.ascend/{file_name}"),
            operator,
            text: render::render(&shape),
        });
    }
    skeletons
}

/// `<kernel>_kernel.cpp` (`scaled_add_kernel` stays `scaled_add_kernel.cpp`);
/// the `nth` overload of a name gets `_<nth>` before the suffix.
fn skeleton_file_name(kernel: &str, nth: usize) -> String {
    let stem = kernel.strip_suffix("_kernel").unwrap_or(kernel);
    match nth {
        1 => format!("{stem}_kernel.cpp"),
        n => format!("{stem}_{n}_kernel.cpp"),
    }
}

/// `text` without its preprocessor lines.
fn without_directives(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}
