//! Random edits of real fixtures never panic the analyser or the rewriter,
//! and the rewriter never touches bytes outside the ranges it reports.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use cuport_analyze::{analyze_source, AnalyzeOptions};
use cuport_model::{Language, Target};
use cuport_rewrite::{migrate_file, MigrateOptions};
use proptest::prelude::*;

fn corpus() -> Vec<(Language, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![fixtures_root()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Some(language) =
                Language::from_file_name(&path.file_name().unwrap().to_string_lossy())
            {
                files.push((language, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// Inserts, deletes or overwrites a few spans with bytes that matter to a
/// C or Python lexer (quotes, comment starts, brackets, chevrons, CUDA names).
fn mutate(src: &[u8], ops: &[(usize, usize, usize)]) -> Vec<u8> {
    const PIECES: &[&[u8]] = &[
        b"\"",
        b"'",
        b"/*",
        b"*/",
        b"//",
        b"(",
        b")",
        b"{",
        b"}",
        b"<<<",
        b">>>",
        b"#if X\n",
        b"#endif\n",
        b"\\\n",
        b"cudaMalloc(",
        b"torch.cuda.",
        b"\xff\xfe",
        b"\0",
        b"R\"x(",
        b"\n",
    ];
    let mut out = src.to_vec();
    for &(at, len, piece) in ops {
        if out.is_empty() {
            out.extend_from_slice(PIECES[piece % PIECES.len()]);
            continue;
        }
        let at = at % out.len();
        let end = (at + len % 16).min(out.len());
        out.splice(at..end, PIECES[piece % PIECES.len()].iter().copied());
    }
    out
}

/// Everything outside the applied edits is byte-identical, in order.
fn untouched_outside_edits(src: &[u8], output: &[u8], edits: &[cuport_rewrite::Edit]) -> bool {
    let mut src_at = 0;
    let mut out_at = 0;
    for edit in edits {
        let keep = edit.range.start - src_at;
        if src[src_at..edit.range.start] != output[out_at..out_at + keep] {
            return false;
        }
        out_at += keep;
        if &output[out_at..out_at + edit.replacement.len()] != edit.replacement.as_bytes() {
            return false;
        }
        out_at += edit.replacement.len();
        src_at = edit.range.end;
    }
    src[src_at..] == output[out_at..]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_edits_never_panic_and_keep_other_bytes(
        file in 0usize..64,
        target in 0usize..4,
        ops in proptest::collection::vec((0usize..100_000, 0usize..64, 0usize..64), 0..12),
    ) {
        let files = corpus();
        let (language, original) = &files[file % files.len()];
        let src = mutate(original, &ops);
        let analysis = analyze_source(*language, &src, &AnalyzeOptions::default());
        let options = MigrateOptions::new(Target::ALL[target]);
        let result = migrate_file("", *language, &src, &analysis, rules(), &options);
        prop_assert!(untouched_outside_edits(&src, &result.output, &result.edits));
    }
}
