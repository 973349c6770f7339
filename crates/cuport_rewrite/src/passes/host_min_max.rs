//! CUDA's host `max` and `min`. nvcc declares them for a `.cu` file's host
//! code too (`static inline __host__ __device__` in its math headers), so a
//! project may write `max(3 * C, Vp)` outside any kernel (llm.c). Where the
//! target's host compiler has none (`[host-min-max]` of its profile), each
//! such call becomes the profile's helper, from a header-only helper the
//! port writes. Device code is left to the kernel port; a file that defines
//! its own `max` or `min` keeps its calls.
use cuport_analyze::FileAnalysis;
use cuport_model::{Language, Library, SiteKind, Target, TextRange};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::edit::{Edit, EditKind};
use crate::options::Mode;
use crate::plan::{FileInput, Planned};
use crate::source_text::code_words;

pub(super) fn port_host_min_max(input: &FileInput<'_>, planned: &mut Planned) {
    let Mode::OneWay(target) = input.options.mode else {
        return;
    };
    let facts = &target.profile().host_min_max;
    let Some(header) = facts.header.as_deref() else {
        return;
    };
    if input.language != Language::Cuda || facts.helpers.is_empty() {
        return;
    }
    let calls = host_calls(input.src, input.analysis, HostDevice::Device, |w| {
        facts.helpers.contains_key(w)
    });
    if calls.is_empty() {
        return;
    }
    for (range, name) in calls {
        let overlaps = planned.overlaps_an_edit(range);
        let Some(helper) = facts.helpers.get(name).filter(|_| !overlaps) else {
            continue;
        };
        planned.edits.push(Edit {
            range,
            replacement: helper.clone(),
            code: codes::HOST_MIN_MAX,
            cuda_name: name.to_owned(),
            kind: EditKind::Port,
        });
        planned
            .diagnostics
            .push(diagnostic(input, target, range, name, helper, header));
    }
    planned.headers.push(format!("\"{header}\""));
}

fn diagnostic(
    input: &FileInput<'_>,
    target: Target,
    range: TextRange,
    name: &str,
    helper: &str,
    header: &str,
) -> Diagnostic {
    let at = input.lines.line_col(range.start);
    Diagnostic {
        code: codes::HOST_MIN_MAX,
        level: Level::Note,
        effort: None,
        message: format!(
            "`{name}` here is CUDA's host `{name}` (nvcc's math headers), which {target}'s host compiler does not have; it became `{helper}` ({header}), which compares in the arguments' common type as CUDA's overloads do"
        ),
        line: at.line,
        column: at.column,
        range,
        cuda_name: name.to_owned(),
        library: Library::Device,
        kind: SiteKind::DeviceIntrinsic,
        suggestion: Some(format!(
            "where both arguments have one type, `std::{name}` (<algorithm>) says the same"
        )),
        reference: target.profile().host_min_max.reference.clone(),
    }
}

/// Which functions count as device code for [`host_calls`]: a
/// `__host__ __device__` function is compiled for the host too, which
/// matters where the host pass would reject the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HostDevice {
    /// Its calls are device calls (left to the kernel port).
    Device,
    /// Its calls are host calls as well.
    Host,
}

/// The bodies of kernels and `__device__` functions; with
/// [`HostDevice::Host`], `__host__ __device__` ones are left out (they are
/// host code too).
pub(super) fn device_bodies(
    src: &[u8],
    analysis: &FileAnalysis,
    host_device: HostDevice,
) -> Vec<TextRange> {
    analysis
        .sites
        .iter()
        .filter(|s| {
            s.kind == SiteKind::KernelDefinition
                || (s.kind == SiteKind::Qualifier && s.name == "__device__")
        })
        .filter_map(|s| s.body.map(|body| (s.range.start, body)))
        .filter(|&(at, body)| host_device == HostDevice::Device || !declared_host(src, at, body))
        .map(|(_, body)| body)
        .collect()
}

/// Whether the declaration around a qualifier at `at`, up to its `body`,
/// also says `__host__`.
fn declared_host(src: &[u8], at: usize, body: TextRange) -> bool {
    let head_start = src[..at]
        .iter()
        .rposition(|b| matches!(b, b';' | b'}' | b'{'))
        .map_or(0, |i| i + 1);
    let head = &src[head_start..body.start.max(head_start)];
    memchr::memmem::find(head, b"__host__").is_some()
}

/// The calls of the names `wanted` accepts in host code: not in a kernel
/// or `__device__` function (see [`HostDevice`]), not a member or
/// qualified name, not in a directive line; none where the file declares
/// such a name itself.
pub(super) fn host_calls<'s>(
    src: &'s [u8],
    analysis: &FileAnalysis,
    host_device: HostDevice,
    wanted: impl Fn(&str) -> bool,
) -> Vec<(TextRange, &'s str)> {
    let device = device_bodies(src, analysis, host_device);
    let mut calls = plain_calls(src, wanted);
    calls.retain(|(range, _)| {
        !device
            .iter()
            .any(|b| b.start <= range.start && range.start < b.end)
    });
    calls
}

/// The calls of the names `wanted` accepts, in host and device code alike:
/// not a member or qualified name, not in a directive line; none where the
/// file declares such a name itself.
pub(super) fn plain_calls(src: &[u8], wanted: impl Fn(&str) -> bool) -> Vec<(TextRange, &str)> {
    let mut calls = Vec::new();
    for (at, word) in code_words(src, 0, src.len()) {
        if !wanted(word) {
            continue;
        }
        let before = previous_token(src, at);
        if declares(before) || in_directive(src, at) {
            return Vec::new();
        }
        let end = at + word.len();
        let called = src[end..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'(');
        let member = matches!(before, Some(".") | Some("->") | Some("::") | Some("~"));
        if called && !member {
            calls.push((TextRange::new(at, end), word));
        }
    }
    calls
}

/// The token before `at`: an identifier, or one of `.`, `->`, `::`, `~`
/// (anything else as `Some("")`); None at the start of the file.
fn previous_token(src: &[u8], at: usize) -> Option<&str> {
    let end = src[..at].iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
    let text = std::str::from_utf8(&src[..end]).ok()?;
    for token in ["->", "::", ".", "~"] {
        if text.ends_with(token) {
            return Some(token);
        }
    }
    let word_start = text
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    Some(&text[word_start..])
}

/// Whether a name after `before` is being declared (`int max(`,
/// `#define max`): a type or specifier word, not a keyword that starts an
/// expression.
fn declares(before: Option<&str>) -> bool {
    const EXPRESSION_KEYWORDS: [&str; 6] = ["return", "else", "case", "throw", "co_return", "do"];
    before.is_some_and(|w| {
        w.starts_with(|c: char| c.is_alphabetic() || c == '_') && !EXPRESSION_KEYWORDS.contains(&w)
    })
}

/// Whether `at` is on a preprocessor directive line.
fn in_directive(src: &[u8], at: usize) -> bool {
    let start = src[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |n| n + 1);
    src[start..at]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'#')
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;

    const SRC: &str = "#include <cuda_runtime.h>\n__global__ void k(int* x) { x[0] = max(x[0], 1); }\nsize_t sizes(size_t C, size_t T, size_t Vp) {\n    return T * max(3 * C, max(T, Vp)) + min(C, T) + std::max(C, T);\n}\n";

    #[test]
    fn host_max_and_min_become_helpers_on_ascend_only() {
        let ascend = run_pass(
            &PORT_HOST_MIN_MAX,
            Language::Cuda,
            SRC,
            &MigrateOptions::new(Target::Ascend),
        );
        let renamed: Vec<(&str, &str)> = ascend
            .edits
            .iter()
            .map(|e| (&SRC[e.range.start..e.range.end], e.replacement.as_str()))
            .collect();
        assert_eq!(
            renamed,
            [
                ("max", "cuport_max"),
                ("max", "cuport_max"),
                ("min", "cuport_min")
            ]
        );
        assert_eq!(ascend.headers, ["\"cuport_host_math.h\""]);
        for options in [
            MigrateOptions::new(Target::Hip),
            MigrateOptions::dual_stack(vec![Target::Ascend]),
        ] {
            let other = run_pass(&PORT_HOST_MIN_MAX, Language::Cuda, SRC, &options);
            assert!(other.edits.is_empty(), "{:?}", other.edits);
        }
    }

    #[test]
    fn a_file_with_its_own_max_keeps_its_calls() {
        for own in [
            "#define max(a, b) ((a) > (b) ? (a) : (b))\n",
            "static int max(int a, int b) { return a > b ? a : b; }\n",
        ] {
            let src = format!("{own}{SRC}");
            let ascend = run_pass(
                &PORT_HOST_MIN_MAX,
                Language::Cuda,
                &src,
                &MigrateOptions::new(Target::Ascend),
            );
            assert!(ascend.edits.is_empty(), "{own}: {:?}", ascend.edits);
        }
    }
}
