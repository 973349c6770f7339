//! Bad input never panics, never hangs, and is reported with a reason while
//! the rest of the tree is still scanned.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use cuport_analyze::{scan_tree, ScanOptions, ScanReport, SyntaxCheck, NO_PROGRESS};
use cuport_model::SiteKind;

const GOOD: &str =
    "__global__ void k(float* x) { x[threadIdx.x] = 0; }\nvoid f() { cudaDeviceSynchronize(); }\n";

fn scan(root: &Path) -> ScanReport {
    let mut options = ScanOptions::default();
    options.analyze.syntax_check = SyntaxCheck::All;
    scan_tree(root, &options, NO_PROGRESS).expect("scan of a readable root succeeds")
}

fn tree_with_good_file() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("good.cu"), GOOD).unwrap();
    dir
}

fn assert_good_file_scanned(report: &ScanReport) {
    let good = report
        .files
        .iter()
        .find(|f| f.path == "good.cu")
        .expect("good.cu analysed");
    assert!(good
        .analysis
        .sites
        .iter()
        .any(|s| s.name == "cudaDeviceSynchronize"));
}

fn skipped_reason<'a>(report: &'a ScanReport, path: &str) -> &'a str {
    &report
        .skipped
        .iter()
        .find(|s| s.path == path)
        .unwrap_or_else(|| panic!("{path} not skipped: {report:#?}"))
        .reason
}

#[test]
fn binary_file_is_skipped_with_reason() {
    let dir = tree_with_good_file();
    fs::write(
        dir.path().join("blob.cu"),
        [0x7f, b'E', b'L', b'F', 0, 0, 1, 2],
    )
    .unwrap();
    let report = scan(dir.path());
    assert!(skipped_reason(&report, "blob.cu").contains("binary file (NUL byte at offset 4)"));
    assert_good_file_scanned(&report);
}

#[test]
fn nul_byte_after_the_sniff_window_is_analysed() {
    let dir = tree_with_good_file();
    let mut text = "x".repeat(9000).into_bytes();
    text.extend_from_slice(b"\0\ncudaFree(p);\n");
    fs::write(dir.path().join("late_nul.cpp"), text).unwrap();
    let report = scan(dir.path());
    let file = report
        .files
        .iter()
        .find(|f| f.path == "late_nul.cpp")
        .unwrap();
    assert_eq!(file.analysis.sites[0].name, "cudaFree");
}

#[test]
fn invalid_utf8_is_analysed_with_a_warning() {
    let dir = tree_with_good_file();
    fs::write(
        dir.path().join("latin1.cu"),
        b"// caf\xe9\ncudaMalloc(&p, 4);\n",
    )
    .unwrap();
    let report = scan(dir.path());
    let file = report.files.iter().find(|f| f.path == "latin1.cu").unwrap();
    assert_eq!(file.analysis.sites[0].name, "cudaMalloc");
    assert_eq!(file.analysis.sites[0].line, 2);
    assert!(file.analysis.warnings[0].contains("invalid UTF-8 at line 1"));
}

#[test]
fn oversized_file_is_skipped_not_read() {
    let dir = tree_with_good_file();
    let big = fs::File::create(dir.path().join("huge.cu")).unwrap();
    big.set_len(100 * 1024 * 1024).unwrap();
    let report = scan(dir.path());
    assert!(skipped_reason(&report, "huge.cu").contains("over the size limit"));
    assert_good_file_scanned(&report);
}

#[test]
fn empty_file_has_no_sites() {
    let dir = tree_with_good_file();
    fs::write(dir.path().join("empty.cu"), "").unwrap();
    let report = scan(dir.path());
    let file = report.files.iter().find(|f| f.path == "empty.cu").unwrap();
    assert!(file.analysis.sites.is_empty());
    assert_eq!(file.lines, 0);
}

#[test]
fn crlf_and_bom_give_the_same_sites_and_lines() {
    let dir = tempfile::tempdir().unwrap();
    let lf = "#include <cuda_runtime.h>\nint main() {\n  cudaSetDevice(0);\n}\n";
    let crlf = format!("\u{feff}{}", lf.replace('\n', "\r\n"));
    fs::write(dir.path().join("lf.cu"), lf).unwrap();
    fs::write(dir.path().join("crlf.cu"), crlf).unwrap();
    let report = scan(dir.path());
    let sites = |path: &str| {
        let file = report.files.iter().find(|f| f.path == path).unwrap();
        file.analysis
            .sites
            .iter()
            .map(|s| (s.line, s.name.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(sites("lf.cu"), sites("crlf.cu"));
    assert_eq!(
        sites("lf.cu"),
        [
            (1, "cuda_runtime.h".to_owned()),
            (3, "cudaSetDevice".to_owned())
        ]
    );
}

#[cfg(unix)]
#[test]
fn symlink_loop_and_escaping_links_are_reported_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.cu"), GOOD).unwrap();
    let dir = tree_with_good_file();
    fs::create_dir(dir.path().join("sub")).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("sub/loop")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("missing.cu"),
        dir.path().join("dangling.cu"),
    )
    .unwrap();
    let report = scan(dir.path());
    assert!(skipped_reason(&report, "sub/loop").contains("symbolic link loop"));
    assert!(skipped_reason(&report, "escape").contains("outside the scanned root"));
    assert!(report
        .skipped
        .iter()
        .any(|s| s.path.contains("dangling.cu")));
    assert!(report.files.iter().all(|f| !f.path.contains("secret")));
    assert_good_file_scanned(&report);
}

#[cfg(unix)]
#[test]
fn unreadable_and_special_files_are_reported() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tree_with_good_file();
    let locked = dir.path().join("locked.cu");
    fs::write(&locked, GOOD).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let fifo = dir.path().join("pipe.cu");
    let made_fifo = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let report = scan(dir.path());
    let running_as_root = fs::read(&locked).is_ok();
    if !running_as_root {
        assert!(skipped_reason(&report, "locked.cu").contains("cannot read"));
    }
    if made_fifo {
        assert!(skipped_reason(&report, "pipe.cu").contains("not a regular file"));
    }
    assert_good_file_scanned(&report);
}

#[test]
fn directory_named_like_a_source_is_walked_not_read() {
    let dir = tree_with_good_file();
    fs::create_dir(dir.path().join("x.cu")).unwrap();
    fs::write(dir.path().join("x.cu/inner.cu"), GOOD).unwrap();
    let report = scan(dir.path());
    assert!(report.files.iter().any(|f| f.path == "x.cu/inner.cu"));
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
}

#[test]
fn deep_nesting_in_every_language() {
    let dir = tree_with_good_file();
    let nest =
        |open: &str, close: &str| format!("{}1{}", open.repeat(10_000), close.repeat(10_000));
    fs::write(
        dir.path().join("deep.cu"),
        format!("int x = {};\ncudaFree(p);\n", nest("(", ")")),
    )
    .unwrap();
    fs::write(
        dir.path().join("deep.py"),
        format!("x = {}\ntorch.cuda.synchronize()\n", nest("(", ")")),
    )
    .unwrap();
    fs::write(
        dir.path().join("deep.rs"),
        format!(
            "use cudarc::driver::CudaContext;\nfn f() {{ let x = {}; }}\n",
            nest("(", ")")
        ),
    )
    .unwrap();
    let report = scan(dir.path());
    let names = |path: &str| -> Vec<String> {
        let file = report.files.iter().find(|f| f.path == path).unwrap();
        file.analysis.sites.iter().map(|s| s.name.clone()).collect()
    };
    assert_eq!(names("deep.cu"), ["cudaFree"]);
    assert!(names("deep.py").contains(&"torch.cuda.synchronize".to_owned()));
    assert!(names("deep.rs").contains(&"cudarc::driver::CudaContext".to_owned()));
}

#[test]
fn garbage_is_analysed_without_panicking() {
    let dir = tree_with_good_file();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let garbage: Vec<u8> = (0..200_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Avoid NUL so the file is analysed rather than skipped as binary.
            (state % 255) as u8 + 1
        })
        .collect();
    for name in [
        "garbage.cu",
        "garbage.py",
        "garbage.rs",
        "CMakeLists.txt",
        "pyproject.toml",
    ] {
        fs::write(dir.path().join(name), &garbage).unwrap();
    }
    let report = scan(dir.path());
    assert_eq!(report.files.len(), 6);
    assert_good_file_scanned(&report);
}

#[test]
fn unterminated_constructs_are_parse_issues() {
    let dir = tree_with_good_file();
    fs::write(
        dir.path().join("broken.cu"),
        "void f() {\n  k<<<1, 1>>>(x;\n  /* never closed\n",
    )
    .unwrap();
    let report = scan(dir.path());
    let file = report.files.iter().find(|f| f.path == "broken.cu").unwrap();
    assert!(file
        .analysis
        .parse_issues
        .iter()
        .any(|p| p.message == "unterminated block comment" && p.line_start == 3));
    assert!(file
        .analysis
        .sites
        .iter()
        .any(|s| s.kind == SiteKind::KernelLaunch));
}

#[test]
fn missing_root_is_an_error_naming_the_path() {
    let error = scan_tree(
        Path::new("/definitely/not/here"),
        &ScanOptions::default(),
        NO_PROGRESS,
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("/definitely/not/here"),
        "{error}"
    );
}

#[test]
fn gitignore_hidden_and_excludes_are_honoured() {
    let dir = tree_with_good_file();
    fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
    for path in ["build/gen.cu", ".hidden/h.cu", "third_party/t.cu"] {
        let full = dir.path().join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, GOOD).unwrap();
    }
    let mut options = ScanOptions {
        excludes: vec!["third_party/**".into()],
        ..ScanOptions::default()
    };
    let paths = |options: &ScanOptions| -> Vec<String> {
        scan_tree(dir.path(), options, NO_PROGRESS)
            .unwrap()
            .files
            .into_iter()
            .map(|f| f.path)
            .collect()
    };
    assert_eq!(paths(&options), ["good.cu"]);
    options.include_hidden = true;
    options.no_ignore = true;
    options.excludes.clear();
    assert_eq!(
        paths(&options),
        [
            ".hidden/h.cu",
            "build/gen.cu",
            "good.cu",
            "third_party/t.cu"
        ]
    );
}

/// A caller may find and read the files first (while it loads the rule
/// tables) and analyse them later: the report, skipped files and the list
/// of every entry included, is the one reading during the analysis gives.
#[cfg(unix)]
#[test]
fn files_read_ahead_give_the_same_report() {
    let dir = tree_with_good_file();
    let root = dir.path();
    fs::create_dir_all(root.join("sub/x.cu")).unwrap();
    fs::write(root.join("sub/x.cu/inner.cu"), GOOD).unwrap();
    fs::write(root.join("sub/host.cpp"), "void g() { cudaFree(0); }\n").unwrap();
    fs::write(root.join("blob.cu"), [b'a', 0, b'b']).unwrap();
    fs::write(root.join("notes.txt"), "not a source\n").unwrap();
    let big = fs::File::create(root.join("huge.cu")).unwrap();
    big.set_len(2048).unwrap();
    std::os::unix::fs::symlink(root.join("missing.cu"), root.join("dangling.cu")).unwrap();
    std::os::unix::fs::symlink(root, root.join("sub/loop")).unwrap();
    let options = ScanOptions {
        max_file_size: 1024,
        inventory: true,
        keep_sources: true,
        ..ScanOptions::default()
    };
    let during = scan_tree(root, &options, NO_PROGRESS).unwrap();
    let mut found = cuport_analyze::find_files(root, &options).unwrap();
    // A file that changes after it was read is analysed as it was read.
    let reads = CountedProgress::default();
    found.read_all(&options, 3, &reads);
    // The analysed files, and the binary and over-size ones (links are not read).
    let sources = during.files.len() + 2;
    assert_eq!(reads.total.load(Ordering::Relaxed), sources);
    assert_eq!(reads.advanced.load(Ordering::Relaxed), sources);
    fs::write(root.join("sub/host.cpp"), "void g() {}\n").unwrap();
    let ahead = cuport_analyze::scan_found(found, &options, NO_PROGRESS).unwrap();
    assert_eq!(format!("{ahead:#?}"), format!("{during:#?}"));
    assert!(skipped_reason(&ahead, "blob.cu").contains("binary file"));
    assert!(skipped_reason(&ahead, "huge.cu").contains("over the size limit"));
    assert!(ahead.files.iter().any(|f| f.path == "sub/x.cu/inner.cu"));
    assert!(!ahead.tree.is_empty());
}

/// Counts what a scan reports to its progress.
#[derive(Default)]
struct CountedProgress {
    total: AtomicUsize,
    advanced: AtomicUsize,
}

impl cuport_analyze::Progress for CountedProgress {
    fn total(&self, files: usize) {
        self.total.store(files, Ordering::Relaxed);
    }
    fn advance(&self) {
        self.advanced.fetch_add(1, Ordering::Relaxed);
    }
}
