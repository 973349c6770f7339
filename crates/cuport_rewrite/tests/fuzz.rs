//! A fuzz suite over the analyser and the rewriter, on stable Rust
//! (cargo-fuzz needs nightly). Inputs are arbitrary bytes, mutated real
//! sources and generated snippets (`fuzz_input/`), for every language and
//! target, one way and dual-stack. For every input:
//!
//! * nothing panics: analysing, migrating, and migrating the output again;
//! * every range the analyser or the rewriter reports lies inside the input;
//! * the applied edits are sorted and disjoint, and the output is the input
//!   with exactly those edits applied: no byte outside an edit changes;
//! * in C-family sources the output's directive lines are the input's,
//!   with only the edits inside them applied, plus whole lines edits write:
//!   nothing is glued onto a directive line (`common::directive_line_violations`);
//! * migrating the output again with the same options edits nothing (four
//!   justified exceptions, counted and printed: see `check_second_run`);
//! * valid UTF-8 in gives valid UTF-8 out.
//!
//! The tests run `CUPORT_FUZZ_CASES` file cases (default 200, a tenth as
//! many tree cases: a few seconds in CI) from a fixed seed
//! (`CUPORT_FUZZ_SEED` picks another), or for `CUPORT_FUZZ_SECONDS` from
//! random seeds when that is set. Shrunk failures are kept in
//! `proptest-regressions/fuzz.txt` and replayed first; every finding also
//! gets a named test in `fuzz_regressions.rs`. `CUPORT_FUZZ_CORPUS=DIR`
//! adds the sources under DIR to the mutation seeds;
//! `CUPORT_FUZZ_KEEP_GOING=1` collects every failure of a long run instead
//! of stopping at the first. Run with `--nocapture` to see the case counts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;
mod fuzz_input;

use std::fmt::Debug;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{rules, scan_options};
use cuport_analyze::{
    analyze_source, scan_tree, AnalyzeOptions, FileAnalysis, ScanReport, NO_PROGRESS,
};
use cuport_model::{Language, SiteKind, TextRange};
use cuport_rewrite::{migrate_file, migrate_report, FileMigration};
use fuzz_input::{any_setup, any_source, Setup, Source};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, RngSeed, TestError, TestRunner};

/// Cases per test when no budget is set: a few seconds of a debug build.
/// A tree case writes, scans and migrates a tree twice, a file case only
/// analyses and migrates; `CUPORT_FUZZ_CASES` counts file cases.
const DEFAULT_CASES: u64 = 200;
const TREE_CASES_PER_FILE_CASE: u64 = 10;
const DEFAULT_SEED: u64 = 0x5EED_C0DE;
/// A long run starts a fresh runner (new random seed) every this many cases.
const BATCH: u64 = 2000;

#[test]
fn analysing_and_migrating_any_file_keeps_the_invariants() {
    fuzz(
        "file",
        1,
        (any_source(), any_setup()),
        |(source, setup)| check_file(&source, &setup),
        |(source, setup)| minimise(source, setup),
    );
}

/// The whole pipeline on a small tree: the walk, the per-file analysis, the
/// migration and the generated files (the dual-stack shim, Ascend helpers).
#[test]
fn scanning_and_migrating_any_tree_keeps_the_invariants() {
    let files = proptest::collection::vec((0usize..FILE_NAMES.len(), any_source()), 1..4);
    fuzz(
        "tree",
        TREE_CASES_PER_FILE_CASE,
        (files, any_setup()),
        |(files, setup)| check_tree(&files, &setup),
        |_| String::new(),
    );
}

fn check_file(source: &Source, setup: &Setup) -> Result<(), TestCaseError> {
    let analyze = AnalyzeOptions {
        syntax_check: setup.syntax_check,
    };
    let (language, src) = (source.language, &source.bytes[..]);
    let analysis = analyze_source(language, src, &analyze);
    check_sites(&analysis, src.len())?;
    let migrate = |src: &[u8], analysis: &FileAnalysis| {
        migrate_file(setup.path, language, src, analysis, rules(), &setup.migrate)
    };
    let first = migrate(src, &analysis);
    check_result(language, src, &first)?;
    let again = analyze_source(language, &first.output, &analyze);
    check_sites(&again, first.output.len())?;
    let second = migrate(&first.output, &again);
    check_result(language, &first.output, &second)?;
    check_second_run(language, src, [&analysis, &again], [&first, &second])
}

/// A second migration edits nothing, except in the cases justified below.
fn check_second_run(
    language: Language,
    src: &[u8],
    [analysis, again]: [&FileAnalysis; 2],
    [first, second]: [&FileMigration; 2],
) -> Result<(), TestCaseError> {
    if second.edits.is_empty() {
        return Ok(());
    }
    let exempt = [
        language == Language::Python
            && !(analysis.parse_issues.is_empty() && again.parse_issues.is_empty()),
        launch_that_is_not_cuda(src, analysis),
        notes_on_own_spellings(first, second),
        edits_over_invalid_utf8(src, first),
    ];
    match exempt.iter().position(|&e| e) {
        Some(reason) => {
            EXEMPT[reason].fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        None => check_nothing_left_to_do(second),
    }
}

/// Cases the second-run check leaves out, by reason (see `check_file`):
/// they are counted and printed, and each is justified below.
static EXEMPT: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
const EXEMPT_REASONS: [&str; 4] = [
    "Python that does not parse",
    "launch that is not CUDA",
    "notes on the target's own spellings",
    "edits over bytes that are not UTF-8",
];

// Justified exceptions to "migrating the output again changes nothing":
//
// 1. Python that tree-sitter cannot parse. Its error recovery depends on
//    the bytes around the error, so the rewritten text (a longer name, an
//    added import) can recover into a different tree with other sites.
//    Idempotence is promised for sources that parse.
//
// 2. A kernel launch that is not CUDA: one inside another launch's
//    arguments (`l<<<1, 1>>>(k<<<1, 1>>>())`; a launch is a `void`
//    expression), or the launch of a runtime API function
//    (`cudaEventCreate<<<1, 1>>>()`). The analyser reports the outer launch
//    only, and the inner one shows up once the outer is rewritten; the
//    API name's rename and the launch's rewrite overlap, and the rerun
//    rewrites the launch of the renamed name.
//
// 3. `--annotate` notes whose name is text the first run wrote: the
//    analyser knows CUDA names, not the targets', and its pattern for
//    device intrinsics (`__name(` in a .cu file) also matches a target's
//    intrinsic (`__nv_abs` became MUSA's `__mt_abs`); an include the tables
//    add for a target (`c10/cuda/CUDAException.h` on MACA) is reported as
//    unknown when it is not in that target's table. The rerun then notes
//    an "unknown" name; nothing else changes.
//
// 4. A rewrite of a construct that holds bytes that are not UTF-8
//    (`defined(__CUDA_ARCH__\x80)`): the replacement is built from text, so
//    the invalid bytes inside the edit are not carried over and the rerun
//    reads different bytes. Bytes outside edits are kept (checked above);
//    idempotence is promised for text.

fn launch_that_is_not_cuda(src: &[u8], analysis: &FileAnalysis) -> bool {
    let launches = || {
        analysis
            .sites
            .iter()
            .filter(|s| s.kind == SiteKind::KernelLaunch)
    };
    let nested = launches()
        .flat_map(|s| &s.args)
        .any(|arg| memchr::memmem::find(&src[arg.start..arg.end], b"<<<").is_some());
    nested || launches().any(|s| rules().is_known(&s.name))
}

fn edits_over_invalid_utf8(src: &[u8], first: &FileMigration) -> bool {
    first
        .edits
        .iter()
        .any(|e| std::str::from_utf8(&src[e.range.start..e.range.end]).is_err())
}

fn notes_on_own_spellings(first: &FileMigration, second: &FileMigration) -> bool {
    let note = |e: &cuport_rewrite::Edit| {
        e.range.is_empty()
            && (e.replacement.trim_start().starts_with("// CUPORT ")
                || e.replacement.trim_start().starts_with("# CUPORT "))
    };
    let written_first = |name: &str| first.edits.iter().any(|e| e.replacement.contains(name));
    !second.edits.is_empty()
        && second
            .edits
            .iter()
            .all(|e| note(e) && written_first(&e.cuda_name))
}

fn check_nothing_left_to_do(second: &FileMigration) -> Result<(), TestCaseError> {
    prop_assert!(
        second.edits.is_empty(),
        "migrating the output again edited it: {:#?}\nsecond output:\n{}",
        second.edits,
        String::from_utf8_lossy(&second.output)
    );
    Ok(())
}

/// File names that pick each language (and nest one file a level down).
const FILE_NAMES: &[&str] = &[
    "main.cu",
    "kernels.cuh",
    "util.cpp",
    "include/util.h",
    "train.py",
    "CMakeLists.txt",
    "cmake/flags.cmake",
    "pyproject.toml",
    "src/lib.rs",
    "Makefile",
    "build/cuda.mk",
];

fn check_tree(files: &[(usize, Source)], setup: &Setup) -> Result<(), TestCaseError> {
    let root = tempfile::tempdir().unwrap();
    for (name, source) in files {
        let path = root.path().join(FILE_NAMES[*name]);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &source.bytes).unwrap();
    }
    let (first_scan, first) = migrate_tree(root.path(), setup)?;
    for file in &first.files {
        check_result(file.language, &file.original, &file.result)?;
    }
    let out = tempfile::tempdir().unwrap();
    first
        .write_copy(out.path(), &cuport_rewrite::RenamePlan::default())
        .unwrap();
    let (second_scan, second) = migrate_tree(out.path(), setup)?;
    let analysis = |scan: &ScanReport, path: &str| {
        scan.files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.analysis.clone())
    };
    for file in &second.files {
        check_result(file.language, &file.original, &file.result)?;
        let before = first.files.iter().find(|f| f.path == file.path);
        let analyses = (
            analysis(&first_scan, &file.path),
            analysis(&second_scan, &file.path),
        );
        match (before, analyses) {
            (Some(before), (Some(a), Some(b))) => check_second_run(
                file.language,
                &before.original,
                [&a, &b],
                [&before.result, &file.result],
            )?,
            // A file the first run generated (the shim, helpers).
            _ => check_nothing_left_to_do(&file.result)?,
        }
    }
    // The second run may generate fewer files (helpers and shim sections
    // are generated for the CUDA names a run ports, and the first run
    // ported them), but every file it generates is one the first run wrote,
    // unchanged.
    for generated in &second.generated {
        let earlier = first.generated.iter().find(|g| g.path == generated.path);
        prop_assert_eq!(
            earlier,
            Some(generated),
            "generated file changed on a second run"
        );
    }
    Ok(())
}

fn migrate_tree(
    root: &Path,
    setup: &Setup,
) -> Result<(ScanReport, cuport_rewrite::Migration), TestCaseError> {
    let mut options = scan_options();
    options.analyze.syntax_check = setup.syntax_check;
    options.keep_sources = true;
    let report = scan_tree(root, &options, NO_PROGRESS).unwrap();
    for file in &report.files {
        let len = file.source.as_ref().map_or(0, |s| s.len());
        check_sites(&file.analysis, len)?;
    }
    let migration = migrate_report(&report, rules(), &setup.migrate).unwrap();
    Ok((report, migration))
}

fn inside(range: TextRange, len: usize) -> bool {
    range.start <= range.end && range.end <= len
}

/// Every range a site carries lies inside the file.
fn check_sites(analysis: &FileAnalysis, len: usize) -> Result<(), TestCaseError> {
    for site in &analysis.sites {
        let ranges = [site.range]
            .into_iter()
            .chain(site.call)
            .chain(site.template_args)
            .chain(site.body)
            .chain(site.args.iter().copied())
            .chain(site.launch_config.iter().copied());
        for range in ranges {
            prop_assert!(
                inside(range, len),
                "site range {range:?} outside 0..{len}: {site:#?}"
            );
        }
        if let Some(condition) = site.condition {
            prop_assert!((condition as usize) < analysis.conditions.len());
        }
    }
    Ok(())
}

/// The output is the input with the applied edits spliced in, and nothing
/// else; diagnostics point inside the input; UTF-8 stays UTF-8; in C-family
/// sources no edit glues code onto a directive line or splits one
/// (`common::directive_line_violations` says precisely what holds).
fn check_result(
    language: Language,
    src: &[u8],
    result: &FileMigration,
) -> Result<(), TestCaseError> {
    let mut rebuilt = Vec::with_capacity(result.output.len());
    let mut cursor = 0;
    for edit in &result.edits {
        prop_assert!(
            inside(edit.range, src.len()) && edit.range.start >= cursor,
            "edit {edit:?} outside the input or overlapping the edit before it (ends at {cursor})"
        );
        rebuilt.extend_from_slice(&src[cursor..edit.range.start]);
        rebuilt.extend_from_slice(edit.replacement.as_bytes());
        cursor = edit.range.end;
    }
    rebuilt.extend_from_slice(&src[cursor..]);
    prop_assert!(
        rebuilt == result.output,
        "output is not the input with the reported edits applied"
    );
    for diagnostic in &result.diagnostics {
        prop_assert!(
            inside(diagnostic.range, src.len()),
            "diagnostic range outside the input: {diagnostic:#?}"
        );
    }
    prop_assert_eq!(result.stats.edits, result.edits.len());
    if language.is_c_family() {
        let glued = common::directive_line_violations(src, &result.edits);
        prop_assert!(glued.is_empty(), "directive lines changed: {glued:#?}");
    }
    if std::str::from_utf8(src).is_ok() {
        if let Err(error) = std::str::from_utf8(&result.output) {
            let at = error.valid_up_to();
            let context = &result.output[at.saturating_sub(40)..(at + 40).min(result.output.len())];
            prop_assert!(
                false,
                "valid UTF-8 in, invalid out at byte {at}: {:?}",
                String::from_utf8_lossy(context)
            );
        }
    }
    Ok(())
}

/// How long a test runs: a number of cases, or a time budget.
enum Budget {
    Cases(u64),
    Seconds(Duration),
}

impl Budget {
    /// The budget the environment sets; a count of cases is divided by
    /// `cost` (how many file cases one case of the test is worth).
    fn from_env(cost: u64) -> Self {
        let number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        match (number("CUPORT_FUZZ_SECONDS"), number("CUPORT_FUZZ_CASES")) {
            (Some(seconds), _) => Budget::Seconds(Duration::from_secs(seconds)),
            (None, cases) => Budget::Cases((cases.unwrap_or(DEFAULT_CASES) / cost).max(1)),
        }
    }

    /// How many cases the next runner gets; `None` when the budget is spent.
    fn next_batch(&self, started: Instant, executed: u64) -> Option<u32> {
        let left = match self {
            Budget::Cases(cases) => cases.saturating_sub(executed),
            Budget::Seconds(limit) if started.elapsed() < *limit => BATCH,
            Budget::Seconds(_) => 0,
        };
        (left > 0).then(|| left.min(BATCH) as u32)
    }

    /// The seed of the `batch`th runner: fixed for a number of cases, so CI
    /// runs the same cases every time (`CUPORT_FUZZ_SEED` picks others), and
    /// random for a timed run, which is there to find new ones.
    fn seed(&self, batch: u64) -> RngSeed {
        match self {
            Budget::Cases(_) => {
                let seed = std::env::var("CUPORT_FUZZ_SEED")
                    .ok()
                    .and_then(|v| v.parse().ok());
                RngSeed::Fixed(seed.unwrap_or(DEFAULT_SEED).wrapping_add(batch))
            }
            Budget::Seconds(_) => RngSeed::Random,
        }
    }

    fn deadline(&self, started: Instant) -> Option<Instant> {
        match self {
            Budget::Seconds(limit) => Some(started + *limit),
            Budget::Cases(_) => None,
        }
    }
}

/// Runs `check` over `strategy` in batches until the budget is spent.
/// Stops at the first failure unless `CUPORT_FUZZ_KEEP_GOING` is set; the
/// first failure is persisted (later ones are only printed, since a
/// persisted failure is replayed, and would fail, at the start of every
/// later batch).
fn fuzz<S>(
    name: &str,
    cost: u64,
    strategy: S,
    check: impl Fn(S::Value) -> Result<(), TestCaseError>,
    minimise: impl Fn(&S::Value) -> String,
) where
    S: Strategy,
    S::Value: Debug,
{
    let budget = Budget::from_env(cost);
    let keep_going = std::env::var_os("CUPORT_FUZZ_KEEP_GOING").is_some();
    let started = Instant::now();
    let deadline = budget.deadline(started);
    let executed = AtomicU64::new(0);
    let mut failures: Vec<String> = Vec::new();
    let mut batch = 0;
    while let Some(cases) = budget.next_batch(started, executed.load(Ordering::Relaxed)) {
        batch += 1;
        let persistence = FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/proptest-regressions/fuzz.txt"
        ));
        let config = ProptestConfig {
            cases,
            source_file: Some(file!()),
            failure_persistence: failures.is_empty().then(|| Box::new(persistence) as _),
            max_shrink_iters: 4096,
            rng_seed: budget.seed(batch),
            ..ProptestConfig::default()
        };
        let mut runner = TestRunner::new(config);
        let outcome = runner.run(&strategy, |value| {
            if deadline.is_some_and(|d| Instant::now() > d) {
                return Ok(()); // the time is up: finish the batch quickly
            }
            executed.fetch_add(1, Ordering::Relaxed);
            check(value)
        });
        match outcome {
            Ok(()) => {}
            Err(TestError::Fail(reason, value)) => {
                let failure = format!(
                    "{reason}\nshrunk failing input: {value:#?}\n{}",
                    minimise(&value)
                );
                eprintln!("fuzz {name}: FAILURE {}\n{failure}", failures.len() + 1);
                failures.push(failure);
            }
            Err(TestError::Abort(reason)) => failures.push(format!("aborted: {reason}")),
        }
        if !failures.is_empty() && !keep_going {
            break;
        }
    }
    let executed = executed.into_inner();
    let exempt: Vec<String> = EXEMPT_REASONS
        .iter()
        .zip(&EXEMPT)
        .map(|(reason, count)| format!("{reason}: {}", count.load(Ordering::Relaxed)))
        .collect();
    eprintln!(
        "fuzz {name}: {executed} cases in {:.1} s, {} failures (second-run check left out, all tests so far: {})",
        started.elapsed().as_secs_f64(),
        failures.len(),
        exempt.join(", ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Proptest shrinks a mutated seed only as far as its mutations go, which
/// leaves most of the seed file. This removes ever smaller spans of bytes
/// while the case still fails the same way (the first line of the message,
/// digits aside), and prints what is left for a regression test.
fn minimise(source: &Source, setup: &Setup) -> String {
    let failure = |bytes: &[u8]| -> Option<String> {
        let candidate = Source {
            language: source.language,
            bytes: bytes.to_vec(),
        };
        let outcome = std::panic::catch_unwind(|| check_file(&candidate, setup));
        let message = match outcome {
            Ok(Ok(())) => return None,
            Ok(Err(error)) => error.to_string(),
            Err(panic) => panic_message(panic.as_ref()),
        };
        let first_line = message.lines().next().unwrap_or_default();
        Some(first_line.replace(|c: char| c.is_ascii_digit(), ""))
    };
    let Some(original) = failure(&source.bytes) else {
        return "minimising: the shrunk input no longer fails".into();
    };
    let mut bytes = source.bytes.clone();
    let mut span = bytes.len().div_ceil(2);
    while span > 0 {
        let mut at = 0;
        while at < bytes.len() {
            let end = (at + span).min(bytes.len());
            let mut candidate = bytes.clone();
            candidate.drain(at..end);
            if failure(&candidate).as_ref() == Some(&original) {
                bytes = candidate;
            } else {
                at = end;
            }
        }
        span /= 2;
    }
    format!(
        "minimised ({} bytes, {:?}, {setup:?}): b\"{}\"",
        bytes.len(),
        source.language,
        bytes.escape_ascii()
    )
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "panic".into()
    }
}
