//! Inputs for the fuzz suite (`tests/fuzz.rs`): arbitrary bytes, real
//! sources with random mutations, and snippets assembled from fragments of
//! CUDA C++, PyTorch, CMake, pyproject.toml and cudarc code. Each input is
//! plain data (indices and offsets), so proptest shrinks it to a small case.
#![allow(dead_code, clippy::unwrap_used)]

mod fragments;

use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use cuport_model::{Language, Target};
use cuport_rules::{Flavour, Flavours};
use proptest::prelude::*;

use crate::common::{fixtures_root, rules};

/// Real sources larger than this are left out of the mutation seeds: the
/// suite wants many cases, not a few slow ones.
const MAX_SEED_BYTES: usize = 96 * 1024;
/// At most this many files from `CUPORT_FUZZ_CORPUS` join the fixtures.
const MAX_EXTRA_SEEDS: usize = 4000;

/// One source to analyse and migrate.
#[derive(Clone)]
pub(crate) struct Source {
    pub(crate) language: Language,
    pub(crate) bytes: Vec<u8>,
}

/// Shrunk failures print as escaped text, which a regression test can copy.
impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Source {{ language: {:?}, bytes: b\"{}\" }}",
            self.language,
            self.bytes.escape_ascii()
        )
    }
}

/// The mutation seeds: every fixture, plus the sources under
/// `CUPORT_FUZZ_CORPUS` when it names a directory.
pub(crate) fn seeds() -> &'static [Source] {
    static SEEDS: OnceLock<Vec<Source>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds = Vec::new();
        collect_sources(&fixtures_root(), &mut seeds, usize::MAX);
        if let Some(dir) = std::env::var_os("CUPORT_FUZZ_CORPUS") {
            let limit = seeds.len() + MAX_EXTRA_SEEDS;
            collect_sources(Path::new(&dir), &mut seeds, limit);
        }
        seeds
    })
}

fn collect_sources(dir: &Path, into: &mut Vec<Source>, limit: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if into.len() >= limit {
            return;
        }
        if path.is_dir() {
            collect_sources(&path, into, limit);
            continue;
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let Some(language) = Language::from_file_name(&name) else {
            continue;
        };
        match std::fs::read(&path) {
            Ok(bytes) if bytes.len() <= MAX_SEED_BYTES => into.push(Source { language, bytes }),
            _ => {}
        }
    }
}

/// Every CUDA name some target's tables know: the names the planner acts on.
pub(crate) fn cuda_names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<String> = Target::ALL
            .iter()
            .flat_map(|&t| {
                let flavours: Flavours = [Flavour::Roc, Flavour::Aclblas].into_iter().collect();
                rules().known_cuda_names_flavour(t, flavours)
            })
            .map(str::to_owned)
            .collect();
        names.sort();
        names.dedup();
        names
    })
}

pub(crate) fn any_language() -> impl Strategy<Value = Language> {
    proptest::sample::select(Language::ALL.to_vec())
}

/// Any input: raw bytes, a mutated real source or a generated snippet.
pub(crate) fn any_source() -> impl Strategy<Value = Source> {
    prop_oneof![
        1 => raw_bytes(),
        4 => mutated_seed(),
        3 => fragments::snippet(),
    ]
}

/// Arbitrary bytes, and bytes drawn mostly from what C and Python lexers
/// care about.
fn raw_bytes() -> impl Strategy<Value = Source> {
    const LEXICAL: &[u8] = b"\"'/*\\#<>(){}[];,.:=_ \t\n\rabcuxyz019\0\xff\xc3\xa9";
    let byte = prop_oneof![
        any::<u8>(),
        proptest::sample::select(LEXICAL).prop_map(|b| b),
    ];
    (any_language(), proptest::collection::vec(byte, 0..400))
        .prop_map(|(language, bytes)| Source { language, bytes })
}

/// A seed file with a few mutations; now and then read as another language.
fn mutated_seed() -> impl Strategy<Value = Source> {
    let seed_count = seeds().len();
    (
        0..seed_count,
        proptest::option::weighted(0.15, any_language()),
        proptest::collection::vec(mutation(), 0..10),
    )
        .prop_map(|(seed, language, mutations)| {
            let seed = &seeds()[seed];
            Source {
                language: language.unwrap_or(seed.language),
                bytes: apply_mutations(&seed.bytes, &mutations),
            }
        })
}

/// One change to a source. Offsets and lengths are reduced modulo the
/// current length when applied, so any value is valid.
#[derive(Debug, Clone)]
pub(crate) enum Mutation {
    Insert {
        at: usize,
        piece: usize,
    },
    InsertName {
        at: usize,
        name: usize,
        call: bool,
    },
    Delete {
        at: usize,
        len: usize,
    },
    Duplicate {
        from: usize,
        len: usize,
        to: usize,
    },
    SetByte {
        at: usize,
        byte: u8,
    },
    SpliceSeed {
        at: usize,
        seed: usize,
        from: usize,
        len: usize,
    },
    Truncate {
        at: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        4 => (at, any::<usize>()).prop_map(|(at, piece)| Mutation::Insert { at, piece }),
        3 => (at, any::<usize>(), any::<bool>())
            .prop_map(|(at, name, call)| Mutation::InsertName { at, name, call }),
        3 => (at, 0usize..64).prop_map(|(at, len)| Mutation::Delete { at, len }),
        2 => (at, 0usize..256, any::<usize>())
            .prop_map(|(from, len, to)| Mutation::Duplicate { from, len, to }),
        2 => (at, any::<u8>()).prop_map(|(at, byte)| Mutation::SetByte { at, byte }),
        1 => (at, any::<usize>(), any::<usize>(), 0usize..512)
            .prop_map(|(at, seed, from, len)| Mutation::SpliceSeed { at, seed, from, len }),
        1 => at.prop_map(|at| Mutation::Truncate { at }),
    ]
}

/// Bytes that change how a lexer or the planner reads what follows.
const PIECES: &[&[u8]] = &[
    b"\"",
    b"'",
    b"/*",
    b"*/",
    b"//",
    b"#",
    b"(",
    b")",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b";",
    b"<",
    b">",
    b"<<<",
    b">>>",
    b"::",
    b".",
    b"\\\n",
    b"\n",
    b"\r\n",
    b"\r",
    b"\t",
    b"\0",
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    "é".as_bytes(),
    "\u{1d518}".as_bytes(),
    "\u{feff}".as_bytes(),
    b"R\"x(",
    b")x\"",
    b"\"\"\"",
    b"'''",
    b"#if X\n",
    b"#ifdef __CUDACC__\n",
    b"#if __CUDA_ARCH__ >= 800\n",
    b"#elif 1\n",
    b"#else\n",
    b"#endif\n",
    b"#define M(x) x\n",
    b"#include <cuda_runtime.h>\n",
    b"#include \"cuport/cuport.h\"\n",
    b"__global__ ",
    b"__device__ ",
    b"template <typename T>\n",
    b"k<<<1, 256>>>(x);\n",
    b"<<<grid, block, 0, stream>>>",
    b"import torch\n",
    b"torch.cuda.",
    b".cuda()",
    b"\"cuda\"",
    b"\"cuda:0\"",
    b"device=",
    b"    ",
    b"cuport: ignore",
    b"cuport: off\n",
    b"cuport: on\n",
    b"// CUPORT CP0001: note\n",
    b"CUPORT_KERNEL_LAUNCH(",
    b"enable_language(CUDA)\n",
    b"CUDA::cudart",
    b"r#\"",
    b"\"#",
];

pub(crate) fn apply_mutations(src: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut out = src.to_vec();
    for mutation in mutations {
        apply_mutation(&mut out, mutation);
    }
    out
}

fn apply_mutation(out: &mut Vec<u8>, mutation: &Mutation) {
    // A position in 0..=len, and the end of a span of at most `len` from it.
    let pos = |at: usize, out: &Vec<u8>| at % (out.len() + 1);
    let end = |start: usize, len: usize, out: &Vec<u8>| (start + len).min(out.len());
    match *mutation {
        Mutation::Insert { at, piece } => {
            let at = pos(at, out);
            out.splice(at..at, PIECES[piece % PIECES.len()].iter().copied());
        }
        Mutation::InsertName { at, name, call } => {
            let at = pos(at, out);
            let names = cuda_names();
            let mut text = names[name % names.len()].clone().into_bytes();
            if call {
                text.extend_from_slice(b"(p, n)");
            }
            out.splice(at..at, text);
        }
        Mutation::Delete { at, len } => {
            let at = pos(at, out);
            let end = end(at, len, out);
            out.drain(at..end);
        }
        Mutation::Duplicate { from, len, to } => {
            let from = pos(from, out);
            let span = out[from..end(from, len, out)].to_vec();
            let to = pos(to, out);
            out.splice(to..to, span);
        }
        Mutation::SetByte { at, byte } => {
            if !out.is_empty() {
                let at = at % out.len();
                out[at] = byte;
            }
        }
        Mutation::SpliceSeed {
            at,
            seed,
            from,
            len,
        } => {
            let seed = &seeds()[seed % seeds().len()].bytes;
            let from = from % (seed.len() + 1);
            let span = &seed[from..(from + len).min(seed.len())];
            let at = pos(at, out);
            out.splice(at..at, span.iter().copied());
        }
        Mutation::Truncate { at } => {
            let at = pos(at, out);
            out.truncate(at);
        }
    }
}

/// How the input is analysed and migrated.
#[derive(Debug, Clone)]
pub(crate) struct Setup {
    pub(crate) syntax_check: cuport_analyze::SyntaxCheck,
    pub(crate) migrate: cuport_rewrite::MigrateOptions,
    /// The file's path relative to the root (dual-stack includes are
    /// relative to it).
    pub(crate) path: &'static str,
}

/// Every target one way, with both HIP flavours and launch styles, both
/// Ascend kernel models, and a third of the cases dual-stack over a random
/// set of targets.
pub(crate) fn any_setup() -> impl Strategy<Value = Setup> {
    use cuport_analyze::SyntaxCheck;
    use cuport_rewrite::{HipLaunch, MigrateOptions};
    (
        proptest::sample::select(Target::ALL.to_vec()),
        proptest::option::weighted(
            0.35,
            proptest::sample::subsequence(Target::ALL.to_vec(), 1..=Target::ALL.len()),
        ),
        any::<(bool, bool, bool)>(),
        proptest::sample::select(vec![
            SyntaxCheck::Off,
            SyntaxCheck::Kernels,
            SyntaxCheck::All,
        ]),
        proptest::sample::select(vec!["", "src/a.cu", "deep/er/x.h"]),
    )
        .prop_map(|(target, dual, (roc, ggl, annotate), syntax_check, path)| {
            let mut migrate = MigrateOptions::new(target);
            if let Some(dual) = dual {
                migrate.mode = cuport_rewrite::Mode::Dual(dual);
            }
            // The target's other rule flavours: HIP's roc libraries, Ascend's
            // ops-blas and SIMT kernel model (one draw for all keeps the
            // fixed seed's cases).
            if roc {
                migrate.flavours = [Flavour::Roc, Flavour::Aclblas].into_iter().collect();
                migrate
                    .kernel_models
                    .insert(Target::Ascend, cuport_model::KernelModel::Simt);
            }
            if ggl {
                migrate.hip_launch = HipLaunch::Ggl;
            }
            migrate.annotate = annotate;
            Setup {
                syntax_check,
                migrate,
                path,
            }
        })
}
