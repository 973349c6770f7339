//! Shared helpers: scan a tree, migrate it, render results.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr
)]

pub(crate) mod simt;

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cuport_analyze::{
    scan_tree, AnalyzeOptions, KnownNames, ScanOptions, SyntaxCheck, NO_PROGRESS,
};
use cuport_model::Target;
use cuport_rewrite::RenamePlan;
use cuport_rewrite::{migrate_report, unified_diff, MigrateOptions, Migration};
use cuport_rules::RuleSet;

pub(crate) fn rules() -> &'static RuleSet {
    static RULES: OnceLock<RuleSet> = OnceLock::new();
    RULES.get_or_init(|| RuleSet::builtin().expect("built-in rules load"))
}

pub(crate) fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

pub(crate) fn fixture_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir(fixtures_root())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

pub(crate) fn scan_options() -> ScanOptions {
    ScanOptions {
        analyze: AnalyzeOptions {
            syntax_check: SyntaxCheck::Off,
        },
        known_names: Some(KnownNames::new(
            |n: &str| rules().is_known(n),
            |n: &str| rules().site_of(n),
        )),
        ..ScanOptions::default()
    }
}

pub(crate) fn migrate_dir(dir: &Path, options: &MigrateOptions) -> Migration {
    let report = scan_tree(dir, &scan_options(), NO_PROGRESS).unwrap();
    migrate_report(&report, rules(), options).unwrap()
}

pub(crate) fn target_ids() -> [Target; Target::ALL.len()] {
    Target::ALL
}

/// The options of an Ascend port whose kernels stay CUDA-shaped for
/// Ascend C SIMT (`--ascend-kernels simt`).
pub(crate) fn ascend_simt() -> MigrateOptions {
    let mut options = MigrateOptions::new(Target::Ascend);
    options
        .kernel_models
        .insert(Target::Ascend, cuport_model::KernelModel::Simt);
    options
}

/// Every one-way port the fixtures are checked in: each target with its
/// default kernel model (named by the target's id), and Ascend's SIMT
/// model (`ascend-simt`).
pub(crate) fn one_way_modes() -> Vec<(String, MigrateOptions)> {
    let mut modes: Vec<(String, MigrateOptions)> = Target::ALL
        .iter()
        .map(|&t| (t.id().to_owned(), MigrateOptions::new(t)))
        .collect();
    modes.push(("ascend-simt".to_owned(), ascend_simt()));
    modes
}

/// Diagnostics, then the diff: one artifact reviews both.
pub(crate) fn render(migration: &Migration) -> String {
    let mut out = String::new();
    for file in &migration.files {
        for d in &file.result.diagnostics {
            writeln!(out, "{}", d.plain_line(&file.path)).unwrap();
        }
    }
    for file in migration.changed_files() {
        out.push_str(&unified_diff(file));
    }
    out
}

/// ROCm headers that Debian 12 does not package (hipBLAS, RCCL, newer HIP
/// headers), and PyTorch's: files including them cannot be compiled here.
pub(crate) const NOT_PACKAGED: &[&str] = &[
    "hipblas",
    "rccl",
    "hip_math_constants",
    "ATen/",
    "torch/",
    "c10/",
    "miopen",
    "hipfft",
    "hipsolver",
    "hipcub",
    "rocblas",
];

/// Whether `tool` runs; outside CI a missing tool skips the check loudly,
/// in CI (where .ci/run installs it) it fails.
/// Runs `command` and fails with its output unless it succeeds.
pub(crate) fn run_ok(command: &mut std::process::Command) {
    let out = command.output().expect("the command starts");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Gives a HIP build its own scratch folder under `dir`: clang leaves an
/// empty `<source>-<hash>` folder in TMPDIR for each HIP compile, and
/// CMake's HIP compiler check two more, which would pile up in /tmp.
pub(crate) fn scratch_in<'c>(
    command: &'c mut std::process::Command,
    dir: &Path,
) -> &'c mut std::process::Command {
    let scratch = dir.join("tmp");
    std::fs::create_dir_all(&scratch).unwrap();
    command.env("TMPDIR", scratch)
}

pub(crate) fn require(tool: &str) -> bool {
    let found = std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{tool} is required in CI (.ci/run installs it)"
    );
    eprintln!("\n!!! SKIPPED: {tool} is not installed; the compile check did not run !!!\n");
    false
}

/// A hipcc of HIP 6.2 or later (the `__hip_bfloat16` family), for the
/// checks Debian bookworm's HIP 5.2.3 cannot make: the wrapper
/// `tests/corpus/sid_rocm_toolchain.sh` writes (Debian sid's HIP 6.4.3,
/// `-fsyntax-only` only), named by `CUPORT_HIPCC_SID`. `.ci/run` sets it up
/// where Debian sid's packages can be fetched; elsewhere the check is
/// skipped loudly.
pub(crate) fn sid_hipcc() -> Option<PathBuf> {
    let path = std::env::var_os("CUPORT_HIPCC_SID").map(PathBuf::from);
    let usable = path.as_ref().is_some_and(|p| {
        std::process::Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if usable {
        return path;
    }
    eprintln!(
        "\n!!! SKIPPED: no hipcc of HIP 6.2 or later (set CUPORT_HIPCC_SID to the wrapper tests/corpus/sid_rocm_toolchain.sh writes); the compile check did not run !!!\n"
    );
    None
}

/// Every file and directory under `root`, sorted.
pub(crate) fn walk(root: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            all.push(path);
        }
    }
    all.sort();
    all
}

/// `-I` for `root` and every directory below it.
pub(crate) fn include_dirs(root: &Path) -> Vec<String> {
    std::iter::once(root.to_path_buf())
        .chain(walk(root).into_iter().filter(|p| p.is_dir()))
        .map(|dir| format!("-I{}", dir.display()))
        .collect()
}

/// Writes the ported copy of `migration` into a fresh `tree/` directory.
pub(crate) fn write_output(migration: &Migration) -> tempfile::TempDir {
    let out = tempfile::tempdir().unwrap();
    migration
        .write_copy(&out.path().join("tree"), &RenamePlan::default())
        .unwrap();
    out
}

/// The relative paths of the regular files under `dir`, sorted.
pub(crate) fn files_under(dir: &Path) -> Vec<String> {
    cuport_analyze::list_tree(dir)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == cuport_analyze::EntryKind::File)
        .map(|e| e.path)
        .collect()
}

/// Where `edits` (sorted, disjoint, over `src`) would glue code onto a
/// preprocessor directive line or split one, as messages; empty when
/// none does. What is precisely true of a correct port: every directive
/// line of the input is in the output with only the edits that lie wholly
/// inside it applied (a renamed macro in an `#ifdef`, a renamed header),
/// none of which adds a line break, or one edit replaces it whole (an
/// include HIP does not need); and every directive line an edit writes
/// (an added include, a guard) is a whole line of the output. A directive
/// line is a logical line whose first non-blank byte is `#`: a physical
/// line that does not continue the line before it, with the lines that
/// its backslashes continue it on (`#if defined(__CUDA_ARCH__\` then `)`,
/// a fuzz finding, is one directive, which an edit may rewrite whole).
pub(crate) fn directive_line_violations(src: &[u8], edits: &[cuport_rewrite::Edit]) -> Vec<String> {
    let mut found = Vec::new();
    let mut line_start = 0;
    let mut continued = false;
    while line_start < src.len() {
        let mut content_end =
            memchr::memchr(b'\n', &src[line_start..]).map_or(src.len(), |k| line_start + k);
        let first = &src[line_start..content_end];
        let directive = !continued && first.trim_ascii_start().first() == Some(&b'#');
        continued = ends_with_continuation(first);
        while directive && continued && content_end < src.len() {
            let from = content_end + 1;
            content_end = memchr::memchr(b'\n', &src[from..]).map_or(src.len(), |k| from + k);
            continued = ends_with_continuation(&src[from..content_end]);
        }
        let next = (content_end + 1).min(src.len());
        let line = &src[line_start..content_end];
        if directive {
            for edit in edits {
                let starts_a_line = at_line_start(src, edit.range.start);
                if let Some(problem) =
                    touches_directive(edit, starts_a_line, line_start, content_end, next)
                {
                    found.push(format!(
                        "{problem}: directive {:?}, edit {edit:?}",
                        String::from_utf8_lossy(line)
                    ));
                }
            }
        }
        line_start = if next > content_end { next } else { src.len() };
    }
    for edit in edits {
        if let Some(problem) = partial_directive_in_replacement(src, edit) {
            found.push(format!("{problem}: edit {edit:?}"));
        }
    }
    found
}

/// Whether `text`, written inside a directive, has a line break that no
/// backslash continues (one that does keeps the directive whole: a launch
/// rewritten in a continued macro keeps its argument's `\` line break).
fn ends_a_line_early(text: &str) -> bool {
    text.match_indices('\n')
        .any(|(k, _)| !ends_with_continuation(&text.as_bytes()[..k]))
}

/// Whether a physical line (without its `\n`) ends in a backslash that
/// continues it on the next.
fn ends_with_continuation(line: &[u8]) -> bool {
    line.strip_suffix(b"\r").unwrap_or(line).ends_with(b"\\")
}

/// Whether `at` starts a line: after a line break, at the start of the
/// file, or right after its UTF-8 byte-order mark (no code).
fn at_line_start(src: &[u8], at: usize) -> bool {
    at == 0 || src.get(at - 1) == Some(&b'\n') || (at == 3 && src.starts_with(b"\xef\xbb\xbf"))
}

/// How `edit` breaks the directive line `start..end` (its line break, if
/// any, ends at `next`), if it does.
fn touches_directive(
    edit: &cuport_rewrite::Edit,
    starts_a_line: bool,
    start: usize,
    end: usize,
    next: usize,
) -> Option<&'static str> {
    let (s, t, text) = (edit.range.start, edit.range.end, edit.replacement.as_str());
    if t < start || s >= next.max(end + 1) {
        return None;
    }
    if t == start {
        // Text written right before the `#` must end a line of its own; an
        // edit that deletes whole lines before it leaves it alone.
        let nothing = text.is_empty() && (s == t || starts_a_line);
        return (!nothing && !text.ends_with('\n'))
            .then_some("code written before a directive on its line");
    }
    if s <= start && t >= next {
        // The whole line (at the end of a file, one with no line break).
        return None;
    }
    if start <= s && t <= end {
        if s == end && t == end {
            return (!text.is_empty() && !text.starts_with('\n') && !text.starts_with("\r\n"))
                .then_some("code appended to a directive line");
        }
        return ends_a_line_early(text).then_some("a line break written inside a directive line");
    }
    Some("an edit that covers part of a directive line and text beyond it")
}

/// A directive line that an edit's replacement starts or ends in the middle
/// of an output line.
fn partial_directive_in_replacement(
    src: &[u8],
    edit: &cuport_rewrite::Edit,
) -> Option<&'static str> {
    let text = edit.replacement.as_bytes();
    let starts_line = at_line_start(src, edit.range.start);
    let at_line_end = edit.range.end == src.len() || matches!(src[edit.range.end], b'\n' | b'\r');
    let mut line_start = 0;
    for (index, line) in text.split(|&b| b == b'\n').enumerate() {
        let first = index == 0;
        let last = line_start + line.len() == text.len();
        line_start += line.len() + 1;
        if line.trim_ascii_start().first() != Some(&b'#') {
            continue;
        }
        if first && !starts_line {
            return Some("a directive written after code on its line");
        }
        if last && !at_line_end {
            return Some("a directive written with code after it on its line");
        }
    }
    None
}

/// The release of the HIP headers hipcc compiles with, for ports that
/// hipcc checks: Debian's package version (5.2.3), else MAJOR.MINOR.0 from
/// `hipconfig --version` (its third number is a build, not a release).
/// None where neither answers.
pub(crate) fn installed_hip() -> Option<cuport_model::SdkVersion> {
    let output = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let package = output("dpkg-query", &["-W", "-f", "${Version}", "libamdhip64-dev"])
        .and_then(|v| v.split(['-', '+', '~']).next().map(str::to_owned));
    let configured = || {
        let text = output("hipconfig", &["--version"])?;
        let mut parts = text.trim().split('.');
        Some(format!("{}.{}.0", parts.next()?, parts.next()?))
    };
    package
        .into_iter()
        .chain(configured())
        .find_map(|v| cuport_model::SdkVersion::parse(&v).ok())
}

/// `options` made for the installed HIP (unchanged where none is found).
pub(crate) fn for_installed_hip(mut options: MigrateOptions) -> MigrateOptions {
    if let Some(version) = installed_hip() {
        options.sdk_versions.insert(Target::Hip, version);
    }
    options
}
