//! Where a SIMT port compiles but may not behave as the CUDA original: the
//! model's launch limits (blocks per grid, threads per block, shared memory
//! per block; `[kernels.simt.limits]` of the target profile), double
//! precision in device code (the `double` type, and C math functions such
//! as `exp` whose only SIMT form is the float one, `expf`), device-side
//! allocation, kernels launched from device code, and device `printf`. Each
//! is a coded diagnostic on its line; nothing is changed.
use cuport_analyze::{FileAnalysis, Site};
use cuport_model::Code;
use cuport_model::{KernelModel, Library, LineIndex, SimtFacts, SiteKind, Target, TextRange};
use cuport_rules::{Flavour, RuleSet, Status};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::plan::{FileInput, Planned};
use crate::source_text::code_words;

use super::calls::device_functions;
use cuport_model::Effort;

/// Reports what the SIMT model lacks or limits in this file, when the run
/// ports its kernels to a SIMT model.
pub(super) fn report_simt_limits(input: &FileInput<'_>, planned: &mut Planned) {
    let FileInput {
        src,
        lines,
        analysis,
        rules,
        options,
        ..
    } = *input;
    let simt_targets = options
        .targets()
        .iter()
        .filter(|t| options.kernel_model(**t) == KernelModel::Simt);
    for target in simt_targets {
        let Some(simt) = target.profile().kernels.simt.as_ref() else {
            continue;
        };
        let mut report = Report {
            src,
            lines,
            simt,
            float_only: |name: &str| float_only(rules, *target, name),
            out: &mut planned.diagnostics,
        };
        let bodies: Vec<(&Site, TextRange)> = device_functions(analysis).collect();
        for (function, body) in &bodies {
            report.device_code(function, *body, analysis);
        }
        let launches = analysis.sites.iter().filter(|s| {
            s.kind == SiteKind::KernelLaunch && !bodies.iter().any(|(_, b)| contains(*b, s.range))
        });
        for launch in launches {
            report.launch(launch);
        }
    }
}

fn contains(outer: TextRange, inner: TextRange) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

struct Report<'a, F> {
    src: &'a [u8],
    lines: &'a LineIndex,
    simt: &'a SimtFacts,
    /// The SIMT function a C math function's float form is (`expf` for
    /// `exp`), where SIMT has only that one.
    float_only: F,
    out: &'a mut Vec<Diagnostic>,
}

/// `exp` → `expf` when the SIMT tables declare `expf` and no `exp`.
fn float_only(rules: &RuleSet, target: Target, name: &str) -> Option<String> {
    let simt = |n: &str| rules.lookup_flavour(target, Flavour::Simt, n);
    let float = format!("{name}f");
    let exact = simt(&float).is_some_and(|r| r.status() == Status::Exact);
    (exact && simt(name).is_none()).then_some(float)
}

/// Device-side allocation, which SIMT does not have.
const ALLOCATION: &[&str] = &["malloc", "free", "calloc", "realloc"];

impl<F: Fn(&str) -> Option<String>> Report<'_, F> {
    fn push(
        &mut self,
        range: TextRange,
        name: &str,
        code: Code,
        level: Level,
        message: String,
        suggestion: String,
    ) {
        let at = self.lines.line_col(range.start);
        self.out.push(Diagnostic {
            code,
            level,
            effort: (level >= Level::Manual).then_some(Effort::Low),
            message,
            line: at.line,
            column: at.column,
            range,
            cuda_name: name.to_owned(),
            library: Library::Device,
            kind: SiteKind::DeviceIntrinsic,
            suggestion: Some(suggestion),
            reference: Some(self.simt.limits.reference.clone()),
        });
    }

    /// One kernel or device function's body: launches from it, double
    /// precision and printf (each reported once per function), and the
    /// static shared memory a kernel declares.
    fn device_code(&mut self, function: &Site, body: TextRange, analysis: &FileAnalysis) {
        let language = &self.simt.language;
        for launch in analysis
            .sites
            .iter()
            .filter(|s| s.kind == SiteKind::KernelLaunch && contains(body, s.range))
        {
            let message = format!("`{}` is launched from device code (dynamic parallelism); {language} kernels are launched from the host only", launch.name);
            self.push(launch.range, &launch.name, codes::SIMT_DEVICE_LAUNCH, Level::Unsupported, message,
                "launch the child kernel from the host after the parent (same stream), passing what the parent computed through global memory".into());
        }
        let words = code_words(self.src, body.start, body.end);
        let first = |name: &str| words.iter().find(|(_, w)| *w == name).map(|(at, _)| *at);
        if let Some(at) = first("double") {
            let message = format!("`{}` computes in double precision; the {language} API declares no double function, conversion or atomic", function.name);
            self.push(TextRange::new(at, at + 6), "double", codes::SIMT_DOUBLE, Level::Manual, message,
                "compute in float (with the f-suffixed math functions), or keep the double-precision step on the host".into());
        }
        let calls = words
            .iter()
            .filter(|(at, w)| next_is_paren(self.src, at + w.len()));
        for &(at, word) in calls {
            let range = TextRange::new(at, at + word.len());
            if let Some(float) = (self.float_only)(word) {
                let message = format!("`{word}` in `{}` is the double-precision function (or C++'s overload of it); {language} declares only `{float}`", function.name);
                self.push(range, word, codes::SIMT_DOUBLE, Level::Manual, message,
                    format!("call `{float}` (with float arguments, it computes what `{word}` did on them in CUDA's float overload)"));
            } else if matches!(word, "min" | "max") {
                let float = if word == "min" { "fminf" } else { "fmaxf" };
                let message = format!("`{word}` in `{}`: {language} declares `{word}` for integer types only; with float or double arguments the call has no match", function.name);
                self.push(range, word, codes::SIMT_MIN_MAX, Level::Note, message,
                    format!("call `{float}` where the arguments are floating point (cuda-samples' eigenvalues: `max(double, float)`)"));
            } else if ALLOCATION.contains(&word) {
                let message = format!(
                    "`{word}` in `{}` allocates in device code, which {language} does not have",
                    function.name
                );
                self.push(
                    range,
                    word,
                    codes::SIMT_DEVICE_LAUNCH,
                    Level::Unsupported,
                    message,
                    "allocate with aclrtMalloc on the host and pass the buffer to the kernel"
                        .into(),
                );
            }
        }
        if let Some(at) = first("printf") {
            let message = format!("`printf` in `{}`: {language} prints through a buffer in global memory (2 MB by default), with a subset of the formats", function.name);
            self.push(TextRange::new(at, at + 6), "printf", codes::SIMT_PRINTF, Level::Note, message,
                "keep the formats to %d %i %ld %lld %u %lu %llu %x %lx %llx %f %F %s %p and the \\n escape; raise simt_printf_fifo_size in acl.json (1 to 64 MB) for more output".into());
        }
        if function.kind == SiteKind::KernelDefinition {
            self.static_shared(function, body, analysis);
        }
    }

    /// The static `__shared__` arrays of a kernel whose sizes are literal,
    /// added up, against the shared-memory limit.
    fn static_shared(&mut self, kernel: &Site, body: TextRange, analysis: &FileAnalysis) {
        let bytes: u64 = analysis
            .sites
            .iter()
            .filter(|s| {
                s.kind == SiteKind::Qualifier && s.name == "__shared__" && contains(body, s.range)
            })
            .filter_map(|s| literal_array_bytes(self.src, s.range.end))
            .sum();
        let limit = self.simt.limits.shared_bytes;
        if bytes > limit {
            let message = format!("kernel `{}` declares {bytes} bytes of static shared memory; {} blocks have at most {limit} bytes of __ubuf__ (static and dynamic together)", kernel.name, self.simt.language);
            self.push(
                kernel.range,
                &kernel.name,
                codes::SIMT_LIMIT,
                Level::Manual,
                message,
                "tile the data so each block stages less, or keep part of it in global memory"
                    .into(),
            );
        }
    }

    /// A host launch's configuration against the model's limits.
    fn launch(&mut self, launch: &Site) {
        let limits = &self.simt.limits;
        let language = self.simt.language.clone();
        let text = |i: usize| {
            launch
                .launch_config
                .get(i)
                .and_then(|r| self.src.get(r.start..r.end))
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or("")
        };
        let (grid, block, shared) = (dimensions(text(0)), dimensions(text(1)), literal(text(2)));
        let name = launch.name.clone();
        match grid {
            Some(blocks) if blocks > limits.blocks_per_grid => {
                let message = format!("the launch of `{name}` asks for {blocks} blocks; {language} launches take at most {} blocks over all grid dimensions", limits.blocks_per_grid);
                self.push(launch.range, &name, codes::SIMT_LIMIT, Level::Manual, message,
                    "launch fewer blocks and loop over the rest inside the kernel (a grid-stride loop)".into());
            }
            Some(_) => {}
            None => {
                let message = format!("the grid of `{name}` is computed at run time; {language} launches take at most {} blocks over all grid dimensions (CUDA takes 2^31 - 1 in x alone)", limits.blocks_per_grid);
                self.push(launch.range, &name, codes::SIMT_LIMIT, Level::Note, message,
                    "check the largest grid this launch sees; above the limit, cap the grid and loop inside the kernel (grid-stride)".into());
            }
        }
        if let Some(threads) = block.filter(|t| *t > limits.threads_per_block) {
            let (level, message) = if threads > limits.threads_per_block_bounded {
                (Level::Manual, format!("the launch of `{name}` asks for {threads} threads per block; {language} blocks have at most {}", limits.threads_per_block_bounded))
            } else {
                (Level::Approximate, format!("the launch of `{name}` asks for {threads} threads per block; {language} allows more than {} only to a kernel declared with __launch_bounds__ of at least that many", limits.threads_per_block))
            };
            self.push(launch.range, &name, codes::SIMT_LIMIT, level, message,
                format!("declare the kernel __launch_bounds__({threads}) (at most {}), or use smaller blocks", limits.threads_per_block_bounded));
        }
        if let Some(bytes) = shared.filter(|b| *b > limits.shared_bytes) {
            let message = format!("the launch of `{name}` asks for {bytes} bytes of dynamic shared memory; {language} blocks have at most {} bytes of __ubuf__ (static and dynamic together)", limits.shared_bytes);
            self.push(
                launch.range,
                &name,
                codes::SIMT_LIMIT,
                Level::Manual,
                message,
                "stage less per block (smaller tiles), or keep part of the data in global memory"
                    .into(),
            );
        }
    }
}

/// Whether the next byte after blanks is `(`: the word is called.
fn next_is_paren(src: &[u8], after: usize) -> bool {
    src[after.min(src.len())..]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'(')
}

/// An integer literal (`256`, `0x100`, `1024u`), its value.
fn literal(text: &str) -> Option<u64> {
    let digits = text.trim().trim_end_matches(['u', 'U', 'l', 'L']);
    match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => digits.parse().ok(),
    }
}

/// The number of blocks or threads a launch dimension asks for when it is
/// written with literals: `256`, `dim3(16, 16)`, `{4, 4, 1}`.
fn dimensions(text: &str) -> Option<u64> {
    let text = text.trim();
    let inner = text
        .strip_prefix("dim3")
        .map(str::trim_start)
        .unwrap_or(text)
        .strip_prefix(['(', '{'])
        .and_then(|t| t.strip_suffix([')', '}']));
    match inner {
        Some(list) => list
            .split(',')
            .map(literal)
            .try_fold(1u64, |product, n| product.checked_mul(n?)),
        None => literal(text),
    }
}

/// `__shared__ float tile[32][33];` (from just after `__shared__`): the
/// array's size in bytes, when its element type is a basic one and every
/// bound is a literal.
fn literal_array_bytes(src: &[u8], after_qualifier: usize) -> Option<u64> {
    let end = memchr::memchr(b';', &src[after_qualifier..])? + after_qualifier;
    let declaration = std::str::from_utf8(&src[after_qualifier..end]).ok()?;
    let (head, bounds) = declaration.split_once('[')?;
    let element = head.split_whitespace().rev().nth(1)?;
    let size = element_bytes(element)?;
    format!("[{bounds}")
        .split('[')
        .skip(1)
        .map(|b| literal(b.split(']').next()?))
        .try_fold(size, |product, n| product.checked_mul(n?))
}

fn element_bytes(element: &str) -> Option<u64> {
    Some(match element {
        "char" | "int8_t" | "uint8_t" | "bool" => 1,
        "short" | "int16_t" | "uint16_t" | "half" | "__half" | "__nv_bfloat16" => 2,
        "float" | "int" | "unsigned" | "int32_t" | "uint32_t" | "__half2" => 4,
        "double" | "int64_t" | "uint64_t" | "size_t" | "float2" | "int2" => 8,
        "float4" | "int4" | "double2" => 16,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimensions_and_array_sizes_are_read_from_literals_only() {
        assert_eq!(dimensions("256"), Some(256));
        assert_eq!(dimensions("dim3(16, 16)"), Some(256));
        assert_eq!(dimensions(" {4, 4, 1} "), Some(16));
        assert_eq!(dimensions("0x400u"), Some(1024));
        assert_eq!(dimensions("(n + 255) / 256"), None);
        assert_eq!(dimensions("dim3(n, 4)"), None);
        let src = b"__shared__ float tile[32][33]; __shared__ T x[8];";
        assert_eq!(literal_array_bytes(src, 10), Some(32 * 33 * 4));
        assert_eq!(literal_array_bytes(src, 41), None);
    }
}
