//! CUDA constructs that span several tokens: kernel definitions, kernel
//! launches, and code that assumes a 32-wide warp.
use cuport_model::{Library, SiteKind, TextRange};

use super::lexer::TokKind;
use super::Scanner;
use crate::site::Site;

/// How far (in tokens) to look for a kernel's name after `__global__`.
const KERNEL_NAME_LOOKAHEAD: usize = 64;
/// How far back to look for a `template <...>` header or a lane variable.
const LOOKBEHIND: usize = 64;

impl Scanner<'_> {
    /// `__global__` at token `i`: find the kernel's name, parameters and body.
    pub(super) fn kernel_definition(&mut self, i: usize) {
        let Some((name, close)) = self.declared_function(i) else {
            return;
        };
        // cuport's own launch macros (`CUPORT_KERNEL_LAUNCH(...)`) are no
        // kernel names: after a launch that follows a stray `__global__`
        // was rewritten, a rerun took the macro for a kernel and guarded it
        // (a fuzzing finding: `fuzz_regressions::
        // a_launch_after_a_stray_global_is_no_kernel`).
        if self.text(name).starts_with("CUPORT_") {
            return;
        }
        self.kernel_site(i, name, close);
    }

    /// The body of the function a qualifier at token `i` starts
    /// (`__device__ float helper(...) {...}`); none for a variable
    /// (`__device__ int counter;`) or a declaration.
    pub(super) fn function_body(&self, i: usize) -> Option<TextRange> {
        let (_, close) = self.declared_function(i)?;
        self.body_after(close)
    }

    /// The name token and closing parenthesis of the function whose
    /// declaration starts with the qualifier at token `i`, skipping
    /// attributes (`__launch_bounds__(256)`).
    fn declared_function(&self, i: usize) -> Option<(usize, usize)> {
        let limit = (i + KERNEL_NAME_LOOKAHEAD).min(self.tokens.len());
        let mut k = i + 1;
        while k < limit {
            match self.kind_at(k) {
                Some(TokKind::Punct(b';' | b'{' | b'}' | b'=')) => return None,
                // A directive between the qualifier and the name is skipped
                // whole: `defined(X)` in `#if defined(X)` is no kernel (a
                // fuzzing finding: `fuzz_regressions::
                // dual_stack_runtime_header_is_added_once`).
                Some(TokKind::Directive) => {
                    k = (k..limit).find(|&d| self.kind_at(d) == Some(TokKind::DirectiveEnd))? + 1;
                }
                Some(TokKind::Ident) if self.kind_at(k + 1) == Some(TokKind::Punct(b'(')) => {
                    let close = self.matching(k + 1)?;
                    if is_attribute(self.text(k)) {
                        k = close + 1;
                        continue;
                    }
                    return Some((k, close));
                }
                _ => k += 1,
            }
        }
        None
    }

    fn kernel_site(&mut self, qualifier: usize, name: usize, close: usize) {
        let mut site = Site::new(
            SiteKind::KernelDefinition,
            Library::Device,
            self.text(name),
            self.range(name, name),
        );
        site.args = self.arguments(name + 1, close);
        site.template_args = self.template_header(qualifier);
        site.body = self.body_after(close);
        self.push(site);
    }

    /// The `<...>` of a `template <...>` header just before the qualifiers.
    fn template_header(&self, qualifier: usize) -> Option<TextRange> {
        let from = qualifier.saturating_sub(LOOKBEHIND);
        let mut k = qualifier;
        while k > from {
            k -= 1;
            match self.kind_at(k) {
                Some(TokKind::Punct(b';' | b'{' | b'}')) => return None,
                Some(TokKind::Ident) if self.text(k) == "template" => {
                    let open = k + 1;
                    let close = (open..qualifier)
                        .rev()
                        .find(|&c| self.kind_at(c) == Some(TokKind::Punct(b'>')))?;
                    return Some(self.range(open, close));
                }
                _ => {}
            }
        }
        None
    }

    /// The `{...}` body after a parameter list, skipping trailing qualifiers.
    fn body_after(&self, close: usize) -> Option<TextRange> {
        let limit = (close + 16).min(self.tokens.len());
        (close + 1..limit)
            .take_while(|&k| self.kind_at(k) != Some(TokKind::Punct(b';')))
            .find(|&k| self.kind_at(k) == Some(TokKind::Punct(b'{')))
            .and_then(|open| Some(self.range(open, self.matching(open)?)))
    }

    /// `<<<` at token `i`: `name<targs><<<config>>>(args)`.
    pub(super) fn launch(&mut self, i: usize) {
        let Some((name_first, name_last, template)) = self.launch_name(i) else {
            return;
        };
        // `#define k<<<...`: the name is the macro being defined (a fuzzing
        // finding: `fuzz_regressions::a_defined_macro_name_is_no_kernel`).
        let defines = name_first >= 2
            && self.text(name_first - 1) == "define"
            && self.kind_at(name_first - 2) == Some(TokKind::Directive);
        if defines {
            return;
        }
        let Some(close) = self.launch_close(i) else {
            return;
        };
        let name: String = (name_first..=name_last).map(|k| self.text(k)).collect();
        let mut site = Site::new(
            SiteKind::KernelLaunch,
            Library::Device,
            name,
            self.range(name_first, name_last),
        );
        site.launch_config = self.split_range(i, close);
        site.template_args = template;
        if self.text(i) != "<<<" || self.text(close) != ">>>" {
            site.spaced_chevrons = Some([self.range(i, i), self.range(close, close)]);
        }
        if self.kind_at(close + 1) == Some(TokKind::Punct(b'(')) {
            if let Some(end) = self.matching(close + 1) {
                // `k<<<g, b>>>(x) {`: a body follows, so this is a function's
                // declarator, no launch (a fuzzing finding:
                // `fuzz_regressions::chevrons_in_a_declarator_are_no_launch`).
                if self.kind_at(end + 1) == Some(TokKind::Punct(b'{')) {
                    return;
                }
                site.args = self.arguments(close + 1, end);
                site.call = Some(self.range(name_first, end));
            }
        }
        self.push(site);
    }

    /// The kernel name (possibly qualified) before `<<<`, and the template
    /// arguments between them.
    fn launch_name(&self, launch: usize) -> Option<(usize, usize, Option<TextRange>)> {
        let mut last = launch.checked_sub(1)?;
        let mut template = None;
        if matches!(
            self.kind_at(last),
            Some(TokKind::Punct(b'>') | TokKind::Shr | TokKind::LaunchClose)
        ) {
            let open = self.template_open(last)?;
            template = Some(self.range(open, last));
            last = open.checked_sub(1)?;
        }
        if self.kind_at(last) != Some(TokKind::Ident) {
            return None;
        }
        let mut first = last;
        while first >= 2
            && self.kind_at(first - 1) == Some(TokKind::Scope)
            && self.kind_at(first - 2) == Some(TokKind::Ident)
        {
            first -= 2;
        }
        Some((first, last, template))
    }

    /// Walks back from a closing `>` (or `>>`, `>>>`) to its `<`.
    fn template_open(&self, close: usize) -> Option<usize> {
        let mut depth: i32 = 0;
        let from = close.saturating_sub(LOOKBEHIND);
        let mut k = close + 1;
        while k > from {
            k -= 1;
            depth += match self.kind_at(k)? {
                TokKind::Punct(b'>') => 1,
                TokKind::Shr => 2,
                TokKind::LaunchClose => 3,
                TokKind::Punct(b'<') => -1,
                TokKind::Shl => -2,
                TokKind::Punct(b';' | b'{' | b'}') => return None,
                _ => 0,
            };
            if depth == 0 {
                return Some(k);
            }
        }
        None
    }

    /// The `>>>` closing the launch configuration opened at `open`.
    fn launch_close(&self, open: usize) -> Option<usize> {
        let mut k = open + 1;
        while k < self.tokens.len() {
            match self.kind_at(k)? {
                TokKind::LaunchClose => return Some(k),
                TokKind::Punct(b';' | b'{' | b'}') | TokKind::LaunchOpen => return None,
                TokKind::Punct(b'(' | b'[') => k = self.matching(k)? + 1,
                _ => k += 1,
            }
        }
        None
    }

    fn split_range(&self, open: usize, close: usize) -> Vec<TextRange> {
        super::brackets::split_commas(self.tokens, self.matches, open, close, |t| t.is_punct(b','))
            .into_iter()
            .map(|(s, e)| TextRange::new(s, e))
            .collect()
    }

    /// `tid & 31`, `lane % 32`, `threadIdx.x / 32`, `idx >> 5`: lane or warp
    /// arithmetic that hard-codes a 32-wide warp.
    pub(super) fn warp_literal(&mut self, i: usize) {
        let Some(op) = i.checked_sub(1) else { return };
        let literal = self.text(i).trim_end_matches(['u', 'U', 'l', 'L']);
        let op_kind = self.kind_at(op);
        let tile = op_kind == Some(TokKind::Punct(b'<'))
            && op > 0
            && self.text(op - 1) == "tiled_partition";
        let suspicious = match literal {
            "31" | "0x1f" | "0x1F" => op_kind == Some(TokKind::Punct(b'&')),
            "32" if tile => true,
            "32" => matches!(op_kind, Some(TokKind::Punct(b'%' | b'/'))),
            "5" => op_kind == Some(TokKind::Shr),
            _ => false,
        };
        if suspicious && (tile || self.lane_variable_before(op)) {
            let text = format!("{} {}", self.text(op), self.text(i));
            let site = Site::new(
                SiteKind::WarpSizeAssumption,
                Library::Device,
                text,
                self.range(op, i),
            );
            self.push(site);
        }
    }

    fn lane_variable_before(&self, op: usize) -> bool {
        let from = op.saturating_sub(8);
        (from..op)
            .rev()
            .take_while(|&k| {
                !matches!(
                    self.kind_at(k),
                    Some(TokKind::Punct(b';' | b'{' | b'}' | b','))
                )
            })
            .filter(|&k| self.kind_at(k) == Some(TokKind::Ident))
            .any(|k| is_lane_name(self.text(k)))
    }

    /// A warp intrinsic called with a 32-bit full mask or a width of 32.
    pub(super) fn warp_mask(&mut self, site_index: usize) {
        let site = &self.sites[site_index];
        if !site.name.ends_with("_sync") && !site.name.starts_with("__shfl") {
            return;
        }
        let findings: Vec<(TextRange, &str)> = site
            .args
            .iter()
            .enumerate()
            .filter_map(|(position, &range)| {
                let text = std::str::from_utf8(self.src.get(range.start..range.end)?).ok()?;
                let lowered = text.trim().to_ascii_lowercase();
                let full_mask = position == 0
                    && matches!(lowered.trim_end_matches('u'), "0xffffffff" | "~0" | "-1");
                let width_32 = position == 3 && site.name.starts_with("__shfl") && lowered == "32";
                full_mask
                    .then_some((range, "full 32-lane mask"))
                    .or(width_32.then_some((range, "width 32")))
            })
            .collect();
        for (range, what) in findings {
            let site = Site::new(SiteKind::WarpSizeAssumption, Library::Device, what, range);
            self.push(site);
        }
    }
}

fn is_attribute(name: &str) -> bool {
    matches!(
        name,
        "__launch_bounds__" | "__attribute__" | "__declspec" | "alignas" | "__cluster_dims__"
    )
}

fn is_lane_name(name: &str) -> bool {
    let lowered = name.to_ascii_lowercase();
    ["threadidx", "lane", "tid", "warp", "idx", "thread"]
        .iter()
        .any(|stem| lowered.contains(stem))
}
