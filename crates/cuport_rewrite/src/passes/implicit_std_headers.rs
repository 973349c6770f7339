//! C standard headers a file had from CUDA: nvcc's runtime header brings
//! `<string.h>`, `<stdlib.h>`, `<math.h>`, ... into every file that includes
//! it (or that nvcc compiles), and a project may call `memset` with no
//! include of its own. Where the target's runtime header brings less
//! (`[implicit-std-headers]` of its profile), the port adds the C++ header
//! of each function the file calls and includes nothing for.
use std::collections::BTreeMap;

use cuport_model::{Language, Library, SiteKind};

use super::calls::{host_calls, HostDevice};
use crate::edit::{apply_edits, Edit};
use crate::headers::included_paths;
use crate::options::Mode;
use crate::plan::{FileInput, Planned};
use crate::source_text::code_words;

pub(super) fn add_implicit_std_headers(input: &FileInput<'_>, planned: &mut Planned) {
    let Mode::OneWay(target) = input.options.mode else {
        return;
    };
    let facts = &target.profile().implicit_std_headers;
    if facts.headers.is_empty() || !had_the_runtime(input, planned) {
        return;
    }
    let missing = missing_headers(&facts.headers, input.src);
    if missing.is_empty() {
        return;
    }
    let calls = called(input, planned, facts.host_only, &missing);
    for (header, functions) in missing {
        if calls.iter().any(|c| functions.contains(c)) {
            planned.headers.push(header.clone());
        }
    }
}

/// Whether CUDA's runtime header was in the file: nvcc includes it in every
/// .cu file; elsewhere the file's own runtime include, which the port
/// replaced, brought it.
fn had_the_runtime(input: &FileInput<'_>, planned: &Planned) -> bool {
    let replaced_runtime = input.analysis.sites.iter().any(|s| {
        s.kind == SiteKind::Include
            && s.library == Library::Runtime
            && planned.edits.iter().any(|e| e.range == s.range)
    });
    input.language == Language::Cuda || (input.language == Language::Cpp && replaced_runtime)
}

/// The profile's headers the file does not include, with their functions.
fn missing_headers<'h>(
    headers: &'h BTreeMap<String, Vec<String>>,
    src: &[u8],
) -> Vec<(&'h String, &'h Vec<String>)> {
    let included = included_paths(src);
    headers
        .iter()
        .filter(|(header, _)| {
            // `cstring` is also had through `string.h`; a C header the
            // profile names itself (`math.h`) only through itself.
            let c_form = header
                .strip_prefix('c')
                .filter(|name| !name.contains('.'))
                .map(|name| format!("{name}.h"));
            !included
                .iter()
                .any(|i| *i == **header || Some(i) == c_form.as_ref())
        })
        .collect()
}

/// The functions the file calls, of those the `missing` headers declare.
/// With `host_only`, calls in host code only (the target's device code has
/// declarations of its own), read in the input, whose function bodies the
/// analysis knows. Otherwise the calls of the output: a rename (`__expf`
/// to `expf`) can bring a call in, and a second run would see it; the
/// output is built only where an edit writes or removes such a name.
fn called(
    input: &FileInput<'_>,
    planned: &Planned,
    host_only: bool,
    missing: &[(&String, &Vec<String>)],
) -> Vec<String> {
    // Asked of every word of the file: one probe, not a pass over every
    // function of every missing header (a tenth of a run's rewriting).
    let functions: rustc_hash::FxHashSet<&str> = missing
        .iter()
        .flat_map(|(_, functions)| functions.iter().map(String::as_str))
        .collect();
    let wanted = |word: &str| functions.contains(word);
    let src = input.src;
    if host_only {
        return host_calls(input, HostDevice::Host, wanted)
            .into_iter()
            .map(|(_, name)| name.to_owned())
            .collect();
    }
    let keep = |names: Vec<&str>| {
        names
            .into_iter()
            .filter(|word| wanted(word))
            .map(str::to_owned)
            .collect()
    };
    if edits_touch_any(src, &planned.edits, missing) {
        let ported = apply_edits(src, planned.edits.clone()).0;
        keep(called_names(&ported, &code_words(&ported, 0, ported.len())))
    } else {
        keep(called_names(src, input.code_words()))
    }
}

/// Whether an edit's replacement or replaced text mentions one of the
/// functions of the `missing` headers.
fn edits_touch_any(src: &[u8], edits: &[Edit], missing: &[(&String, &Vec<String>)]) -> bool {
    let mentions = |text: &[u8]| {
        missing
            .iter()
            .flat_map(|(_, functions)| functions.iter())
            .any(|f| memchr::memmem::find(text, f.as_bytes()).is_some())
    };
    edits.iter().any(|e| {
        mentions(e.replacement.as_bytes())
            || mentions(src.get(e.range.start..e.range.end).unwrap_or(&[]))
    })
}

/// The `words` of `src` that a `(` follows.
fn called_names<'s>(src: &[u8], words: &[(usize, &'s str)]) -> Vec<&'s str> {
    words
        .iter()
        .copied()
        .filter(|(at, word)| {
            src[at + word.len()..]
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|&b| b == b'(')
        })
        .map(|(_, word)| word)
        .collect()
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;

    #[test]
    fn a_c_function_nvcc_brought_gets_its_header_on_ascend_only() {
        let src = "#include <cuda_runtime.h>\nvoid zero(void* p, size_t n) { memset(p, 0, n); }\n";
        let ascend = run_pass(
            &ADD_IMPLICIT_STD_HEADERS,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Ascend),
        );
        assert_eq!(ascend.headers, ["cstring"]);
        let hip = run_pass(
            &ADD_IMPLICIT_STD_HEADERS,
            Language::Cuda,
            src,
            &MigrateOptions::new(Target::Hip),
        );
        assert!(hip.headers.is_empty(), "{:?}", hip.headers);
        let dual = run_pass(
            &ADD_IMPLICIT_STD_HEADERS,
            Language::Cuda,
            src,
            &MigrateOptions::dual_stack(vec![Target::Ascend]),
        );
        assert!(dual.headers.is_empty(), "{:?}", dual.headers);
    }

    #[test]
    fn host_classification_calls_get_math_h_on_hip_even_with_cmath() {
        let options = MigrateOptions::new(Target::Hip);
        let port = |src: &str| run_pass(&ADD_IMPLICIT_STD_HEADERS, Language::Cuda, src, &options);
        // llm.c's dev/cuda/common.h: host code calls isfinite unqualified.
        let src = "#include <cuda_runtime.h>\n#include <cmath>\nbool ok(float x) { return isfinite(x); }\n";
        assert_eq!(port(src).headers, ["math.h"]);
        let has_it =
            "#include <cuda_runtime.h>\n#include <math.h>\nbool ok(float x) { return isnan(x); }\n";
        assert!(port(has_it).headers.is_empty());
        // Device code has clang's HIP declarations; host-device code is
        // compiled for the host too (hipcc: "reference to __device__
        // function 'isfinite' in __host__ __device__ function").
        let device_only = "#include <cuda_runtime.h>\n__device__ float f(float x) { return isfinite(x) ? x : 0.f; }\n";
        assert!(port(device_only).headers.is_empty());
        let host_device = "#include <cuda_runtime.h>\n__host__ __device__ inline bool f(float x) { return isinf(x); }\n";
        assert_eq!(port(host_device).headers, ["math.h"]);
        let qualified =
            "#include <cuda_runtime.h>\nbool ok(float x) { return std::isfinite(x); }\n";
        assert!(port(qualified).headers.is_empty());
    }
}
