//! C standard headers a file had from CUDA: nvcc's runtime header brings
//! `<string.h>`, `<stdlib.h>`, `<math.h>`, ... into every file that includes
//! it (or that nvcc compiles), and a project may call `memset` with no
//! include of its own. Where the target's runtime header brings less
//! (`[implicit-std-headers]` of its profile), the port adds the C++ header
//! of each function the file calls and includes nothing for.
use cuport_model::{Language, Library, SiteKind};

use super::host_min_max::{host_calls, HostDevice};
use crate::edit::{apply_edits, Edit};
use crate::headers::included_paths;
use crate::options::Mode;
use crate::plan::{FileInput, Planned};
use crate::source_text::code_words;

pub(super) fn add_implicit_std_headers(input: &FileInput<'_>, planned: &mut Planned) {
    let (src, language, analysis, options) =
        (input.src, input.language, input.analysis, input.options);
    let Mode::OneWay(target) = options.mode else {
        return;
    };
    let facts = &target.profile().implicit_std_headers;
    if facts.headers.is_empty() {
        return;
    }
    // nvcc includes the runtime in every .cu file; elsewhere the file's own
    // runtime include, which the port replaced, brought them.
    let replaced_runtime = analysis.sites.iter().any(|s| {
        s.kind == SiteKind::Include
            && s.library == Library::Runtime
            && planned.edits.iter().any(|e| e.range == s.range)
    });
    if !(language == Language::Cuda || (language == Language::Cpp && replaced_runtime)) {
        return;
    }
    let included = included_paths(src);
    let missing: Vec<(&String, &Vec<String>)> = facts
        .headers
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
        .collect();
    // Host calls only, where the target's device code has declarations of
    // its own: read in the input (the analysis's function bodies are its).
    let host_only;
    // The calls of the output, not of the input: a rename (`__expf` to
    // `expf`) can bring a call in, and a second run would see it. The
    // output is built only where an edit writes or removes such a name.
    let ported;
    let calls = if facts.host_only {
        host_only = host_calls(src, analysis, HostDevice::Host, |word| {
            missing
                .iter()
                .any(|(_, functions)| functions.iter().any(|f| f == word))
        });
        host_only.iter().map(|(_, name)| *name).collect()
    } else if edits_touch_any(src, &planned.edits, &missing) {
        ported = apply_edits(src, planned.edits.clone()).0;
        called_names(&ported)
    } else {
        called_names(src)
    };
    for (header, functions) in missing {
        if calls.iter().any(|c| functions.iter().any(|f| f == c)) {
            planned.headers.push(header.clone());
        }
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

fn called_names(src: &[u8]) -> Vec<&str> {
    code_words(src, 0, src.len())
        .into_iter()
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
