//! `pyproject.toml`: build requirements and dependencies that pin CUDA
//! builds (`cupy-cuda12x`, `nvidia-*-cu12`, CUDA wheel indexes, torch
//! extension build hooks). Only quoted strings are examined.
use cuport_model::{Library, SiteKind, TextRange};

use crate::site::{FileAnalysis, Site};

pub(crate) fn analyze(src: &[u8]) -> FileAnalysis {
    let mut sites = Vec::new();
    let mut i = 0;
    while i < src.len() {
        match src[i] {
            b'#' => i = memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |k| i + k),
            quote @ (b'"' | b'\'') => {
                let start = i + 1;
                let end =
                    memchr::memchr2(quote, b'\n', &src[start..]).map_or(src.len(), |k| start + k);
                if let Some(text) = std::str::from_utf8(&src[start..end])
                    .ok()
                    .filter(|t| is_cuda_requirement(t))
                {
                    sites.push(Site::new(
                        SiteKind::BuildRule,
                        Library::Build,
                        text,
                        TextRange::new(start, end),
                    ));
                }
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    FileAnalysis {
        sites,
        ..FileAnalysis::default()
    }
}

fn is_cuda_requirement(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let package = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
        .next()
        .unwrap_or("");
    let cuda_package = package.starts_with("nvidia-")
        || package.starts_with("cupy-cuda")
        || package.starts_with("cuda-")
        || package.ends_with("-cu11")
        || package.ends_with("-cu12")
        || matches!(
            package,
            "pycuda"
                | "triton"
                | "flash-attn"
                | "flash_attn"
                | "bitsandbytes"
                | "apex"
                | "xformers"
                | "pynvml"
                | "tensorrt"
        );
    let cuda_index = lower.contains("download.pytorch.org/whl/cu") || lower.contains("+cu1");
    cuda_package || cuda_index || lower.contains("cpp_extension")
}
