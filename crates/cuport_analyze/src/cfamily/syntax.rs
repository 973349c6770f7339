//! The structural check: tree-sitter-cpp parses a copy of the file in which
//! CUDA-only syntax (`<<<...>>>`, `__global__`, `__launch_bounds__(...)`) is
//! blanked out with spaces, so byte offsets and lines stay the same and the
//! C++ grammar sees ordinary calls and declarations. Regions it still cannot
//! parse are reported; the token pass has already found the sites.
use cuport_model::LineIndex;
use tree_sitter::Parser;

use super::brackets::UNMATCHED;
use super::lexer::{TokKind, Token};
use crate::error::AnalyzeError;
use crate::site::ParseIssue;
use crate::ts_errors::error_regions;

/// A tree-sitter-cpp parser, built once per worker thread.
pub(crate) struct SyntaxChecker {
    parser: Parser,
}

impl SyntaxChecker {
    pub(crate) fn new() -> Result<Self, AnalyzeError> {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_cpp::LANGUAGE.into())
            .map_err(|e| AnalyzeError::Grammar(e.to_string()))?;
        Ok(Self { parser })
    }

    pub(super) fn check(
        &mut self,
        src: &[u8],
        tokens: &[Token],
        matches: &[u32],
        line_index: &LineIndex,
    ) -> Vec<ParseIssue> {
        let masked = mask_cuda_syntax(src, tokens, matches);
        let Some(tree) = self.parser.parse(&masked, None) else {
            return vec![ParseIssue {
                line_start: 1,
                line_end: line_index.line_count() as u32,
                message: "tree-sitter-cpp gave up on this file".into(),
            }];
        };
        error_regions(&tree, line_index, "tree-sitter-cpp")
    }
}

fn mask_cuda_syntax(src: &[u8], tokens: &[Token], matches: &[u32]) -> Vec<u8> {
    let mut masked = src.to_vec();
    let mut blank = |start: u32, end: u32| {
        for byte in &mut masked[start as usize..end as usize] {
            if *byte != b'\n' && *byte != b'\r' {
                *byte = b' ';
            }
        }
    };
    let mut open_launch: Option<u32> = None;
    for (i, token) in tokens.iter().enumerate() {
        match token.kind {
            TokKind::LaunchOpen => open_launch = Some(token.start),
            TokKind::LaunchClose => {
                if let Some(start) = open_launch.take() {
                    blank(start, token.end);
                }
            }
            TokKind::Ident if is_cuda_keyword(token.text(src)) => {
                let end = attribute_end(src, tokens, matches, i).unwrap_or(token.end);
                blank(token.start, end);
            }
            _ => {}
        }
    }
    masked
}

/// For `__launch_bounds__(...)`, the end of its argument list.
fn attribute_end(src: &[u8], tokens: &[Token], matches: &[u32], i: usize) -> Option<u32> {
    let text = tokens[i].text(src);
    if !matches!(
        text,
        b"__launch_bounds__" | b"__cluster_dims__" | b"__align__"
    ) {
        return None;
    }
    let open = tokens.get(i + 1).filter(|t| t.is_punct(b'('))?;
    let close = *matches.get(i + 1)?;
    (close != UNMATCHED && open.start > 0).then(|| tokens[close as usize].end)
}

fn is_cuda_keyword(text: &[u8]) -> bool {
    matches!(
        text,
        b"__global__"
            | b"__device__"
            | b"__host__"
            | b"__shared__"
            | b"__constant__"
            | b"__managed__"
            | b"__launch_bounds__"
            | b"__forceinline__"
            | b"__noinline__"
            | b"__grid_constant__"
            | b"__cluster_dims__"
            | b"__align__"
            // Calling-convention macros of the CUDA headers.
            | b"CUDART_CB"
            | b"CUDA_CB"
            | b"CUDARTAPI"
            | b"CUDAAPI"
            | b"CUBLASAPI"
            | b"CUBLASWINAPI"
            | b"CUDNNWINAPI"
            | b"CUFFTAPI"
            | b"CURANDAPI"
            | b"CUSPARSEAPI"
            | b"CUSOLVERAPI"
    )
}
