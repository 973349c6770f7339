//! C standard headers a file had from CUDA: nvcc's runtime header brings
//! `<string.h>`, `<stdlib.h>`, `<math.h>`, ... into every file that includes
//! it (or that nvcc compiles), and a project may call `memset` with no
//! include of its own. Where the target's runtime header brings less
//! (`[implicit-std-headers]` of its profile), the port adds the C++ header
//! of each function the file calls and includes nothing for.
use cuport_analyze::FileAnalysis;
use cuport_model::{Language, Library, SiteKind};

use crate::edit::apply_edits;
use crate::headers::included_paths;
use crate::options::MigrateOptions;
use crate::plan::Planned;
use crate::source_text::code_words;

pub(crate) fn add_implicit_std_headers(
    src: &[u8],
    language: Language,
    analysis: &FileAnalysis,
    options: &MigrateOptions,
    planned: &mut Planned,
) {
    let facts = &options.target.profile().implicit_std_headers;
    if options.is_dual() || facts.headers.is_empty() {
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
    // The calls of the output, not of the input: a rename (`__expf` to
    // `expf`) can bring a call in, and a second run would see it.
    let (ported, _, _) = apply_edits(src, planned.edits.clone());
    let calls = called_names(&ported);
    for (header, functions) in &facts.headers {
        let c_name = format!("{}.h", header.trim_start_matches('c'));
        let has = included.iter().any(|i| *i == *header || *i == c_name);
        if !has && calls.iter().any(|c| functions.iter().any(|f| f == c)) {
            planned.headers.push(header.clone());
        }
    }
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
