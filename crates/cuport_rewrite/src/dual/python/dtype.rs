//! fp64 in a script bound for a target without it: reported, never
//! converted (transfer_to_npu's silent DoubleTensor → FloatTensor is what
//! dual-stack mode exists to avoid). The analyser reports no dtype sites,
//! so the file's code (strings and comments left out) is searched here,
//! once per file.
use cuport_model::{Library, SiteKind, TextRange};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::dual::python_module::lacks_fp64;
use crate::plan::Planner;
use crate::pysource::code_ranges;
use cuport_model::Effort;

/// Spellings of a float64 tensor or dtype, and the name each is reported as.
const FP64: &[(&str, &str)] = &[
    ("torch.float64", "torch.float64"),
    ("torch.double", "torch.double"),
    ("torch.DoubleTensor", "torch.DoubleTensor"),
    (".double()", "torch.Tensor.double"),
];

/// Byte offsets (with the reported name) of fp64 uses in the code of `src`.
pub(crate) fn fp64_uses(src: &[u8]) -> Vec<(TextRange, &'static str)> {
    let mut uses = Vec::new();
    for code in code_ranges(src) {
        let text = &src[code.start..code.end];
        for &(needle, name) in FP64 {
            for at in memchr::memmem::find_iter(text, needle.as_bytes()) {
                let start = code.start + at;
                let end = start + needle.len();
                if is_whole(src, start, end, needle) {
                    uses.push((TextRange::new(start, end), name));
                }
            }
        }
    }
    uses.sort_by_key(|(range, _)| range.start);
    uses
}

/// Not part of a longer name (`torch.double_buffer`, `xtorch.float64`).
fn is_whole(src: &[u8], start: usize, end: usize, needle: &str) -> bool {
    let ident = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    let free_before = needle.starts_with('.')
        || start == 0
        || !(ident(&src[start - 1]) || src[start - 1] == b'.');
    let free_after = needle.ends_with(')') || src.get(end).is_none_or(|b| !ident(b));
    free_before && free_after
}

/// Reports fp64 uses for each selected target without fp64. Runs once per
/// dual-stack Python file, after its sites.
pub(crate) fn finish_file(planner: &mut Planner<'_>) {
    let lacking: Vec<&str> = planner
        .options
        .targets()
        .iter()
        .filter(|&&t| lacks_fp64(t))
        .map(|t| t.id())
        .collect();
    if lacking.is_empty() {
        return;
    }
    for (range, name) in fp64_uses(planner.src) {
        let at = planner.lines.line_col(range.start);
        planner.out.diagnostics.push(Diagnostic {
            code: codes::DUAL_UNSUPPORTED_DTYPE,
            level: Level::Manual,
            effort: Some(Effort::Low),
            message: format!(
                "{}: fp64 (`{name}`) is not supported there; it is kept, and runs in fp64 only on CUDA",
                lacking.join(", ")
            ),
            line: at.line,
            column: at.column,
            range,
            cuda_name: name.to_owned(),
            library: Library::Torch,
            kind: SiteKind::FrameworkCall,
            suggestion: Some("compute in fp32 where `\"float64\" in cuport_device.unsupported_dtypes`, or move this part to the CPU".into()),
            reference: fp64_reference(&lacking),
        });
    }
}

/// The documents that say the targets lack fp64 (their profiles' sources).
fn fp64_reference(lacking: &[&str]) -> Option<String> {
    let references: Vec<&str> = cuport_model::Target::ALL
        .iter()
        .filter(|t| lacking.contains(&t.id()))
        .filter_map(|t| t.profile().python.fp64_reference.as_deref())
        .collect();
    (!references.is_empty()).then(|| references.join("; "))
}
