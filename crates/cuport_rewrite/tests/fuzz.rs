//! A fuzz suite over the analyser and the rewriter, on stable Rust
//! (cargo-fuzz needs nightly). Inputs are arbitrary bytes, mutated real
//! sources and generated snippets (`fuzz_input/`), for every language and
//! target, one way and dual-stack. For every input:
//!
//! * nothing panics: analysing, migrating, and migrating the output again;
//! * every range the analyser or the rewriter reports lies inside the input;
//! * the applied edits are sorted and disjoint, and the output is the input
//!   with exactly those edits applied: no byte outside an edit changes;
//! * migrating the output again with the same options edits nothing;
//! * valid UTF-8 in gives valid UTF-8 out.
//!
//! Each test runs `CUPORT_FUZZ_CASES` cases (default 64: a few seconds in
//! CI), or for `CUPORT_FUZZ_SECONDS` when that is set. Shrunk failures are
//! kept in `proptest-regressions/fuzz.txt` and replayed first; every finding
//! also gets a named test in `fuzz_regressions.rs`. `CUPORT_FUZZ_CORPUS=DIR`
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
use cuport_analyze::{analyze_source, scan_tree, AnalyzeOptions, FileAnalysis, NO_PROGRESS};
use cuport_model::TextRange;
use cuport_rewrite::{migrate_file, migrate_report, FileMigration};
use fuzz_input::{any_setup, any_source, Setup, Source};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestError, TestRunner};

const DEFAULT_CASES: u64 = 64;
/// A long run starts a fresh runner (new random seed) every this many cases.
const BATCH: u64 = 2000;

#[test]
fn analysing_and_migrating_any_file_keeps_the_invariants() {
    fuzz(
        "file",
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
    check_result(src, &first)?;
    let again = analyze_source(language, &first.output, &analyze);
    check_sites(&again, first.output.len())?;
    let second = migrate(&first.output, &again);
    check_result(&first.output, &second)?;
    check_nothing_left_to_do(&second)
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
];

fn check_tree(files: &[(usize, Source)], setup: &Setup) -> Result<(), TestCaseError> {
    let root = tempfile::tempdir().unwrap();
    for (name, source) in files {
        let path = root.path().join(FILE_NAMES[*name]);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &source.bytes).unwrap();
    }
    let first = migrate_tree(root.path(), setup)?;
    for file in &first.files {
        check_result(&file.original, &file.result)?;
    }
    let out = tempfile::tempdir().unwrap();
    let tree = cuport_rewrite::tree_files(&first.root, false, false).unwrap();
    first.write_copy(out.path(), &tree).unwrap();
    let second = migrate_tree(out.path(), setup)?;
    for file in &second.files {
        check_result(&file.original, &file.result)?;
        check_nothing_left_to_do(&file.result)?;
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

fn migrate_tree(root: &Path, setup: &Setup) -> Result<cuport_rewrite::Migration, TestCaseError> {
    let mut options = scan_options();
    options.analyze.syntax_check = setup.syntax_check;
    options.keep_sources = true;
    let report = scan_tree(root, &options, NO_PROGRESS).unwrap();
    for file in &report.files {
        let len = file.source.as_ref().map_or(0, Vec::len);
        check_sites(&file.analysis, len)?;
    }
    Ok(migrate_report(&report, rules(), &setup.migrate).unwrap())
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
/// else; diagnostics point inside the input; UTF-8 stays UTF-8.
fn check_result(src: &[u8], result: &FileMigration) -> Result<(), TestCaseError> {
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
    fn from_env() -> Self {
        let number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        match (number("CUPORT_FUZZ_SECONDS"), number("CUPORT_FUZZ_CASES")) {
            (Some(seconds), _) => Budget::Seconds(Duration::from_secs(seconds)),
            (None, cases) => Budget::Cases(cases.unwrap_or(DEFAULT_CASES)),
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
    strategy: S,
    check: impl Fn(S::Value) -> Result<(), TestCaseError>,
    minimise: impl Fn(&S::Value) -> String,
) where
    S: Strategy,
    S::Value: Debug,
{
    let budget = Budget::from_env();
    let keep_going = std::env::var_os("CUPORT_FUZZ_KEEP_GOING").is_some();
    let started = Instant::now();
    let deadline = budget.deadline(started);
    let executed = AtomicU64::new(0);
    let mut failures: Vec<String> = Vec::new();
    while let Some(cases) = budget.next_batch(started, executed.load(Ordering::Relaxed)) {
        let persistence = FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/proptest-regressions/fuzz.txt"
        ));
        let config = ProptestConfig {
            cases,
            source_file: Some(file!()),
            failure_persistence: failures.is_empty().then(|| Box::new(persistence) as _),
            max_shrink_iters: 4096,
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
    eprintln!(
        "fuzz {name}: {executed} cases in {:.1} s, {} failures",
        started.elapsed().as_secs_f64(),
        failures.len()
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
