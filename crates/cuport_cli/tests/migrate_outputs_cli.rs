//! What `cuport migrate` writes loses nothing: `--out` is a complete copy
//! (hidden and git-ignored files, empty directories, symbolic links as
//! links), what it cannot copy is listed with a reason, `--in-place` never
//! writes through a link and refuses read-only files before writing
//! anything, and `-o` writes the helpers the port calls next to the file.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use common::Run;

const KERNEL: &str = "__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\nint main() { float* d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaFree(d); return 0; }\n";
const HOST: &str = "#include <cuda_runtime.h>\nvoid f() { cudaSetDevice(0); cudaDeviceReset(); }\n";

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let scratch = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir(scratch.tree("")).unwrap();
        scratch
    }

    fn tree(&self, rel: &str) -> PathBuf {
        self.dir.path().join("tree").join(rel)
    }

    fn out(&self, rel: &str) -> PathBuf {
        self.dir.path().join("out").join(rel)
    }

    fn write(&self, rel: &str, text: &str) -> &Self {
        let path = self.tree(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    fn migrate(&self, args: &[&str]) -> Run {
        common::migrate_from(Some(self.dir.path()), &self.tree(""), args)
    }
}

fn link(target: &str, at: &Path) {
    symlink(target, at).unwrap();
}

#[test]
fn out_copies_hidden_ignored_and_empty_entries_and_keeps_links_as_links() {
    let s = Scratch::new();
    s.write("src/k.cu", KERNEL)
        .write(".gitignore", "data/\nresults/\n")
        .write(".clang-format", "BasedOnStyle: LLVM\n")
        .write(".github/workflows/ci.yml", "on: push\n")
        .write("data/train.bin", "dataset bytes")
        .write(".git/HEAD", "ref: refs/heads/main\n");
    std::fs::create_dir_all(s.tree("empty/dir")).unwrap();
    link("src/k.cu", &s.tree("k_link.cu"));
    link("src", &s.tree("src_link"));
    let outside = s.dir.path().join("elsewhere.txt");
    std::fs::write(&outside, "outside").unwrap();
    link(outside.to_str().unwrap(), &s.tree("escape.txt"));

    let run = s.migrate(&["--to", "hip", "--out", "out"]).expect_code(0);

    for rel in [
        ".gitignore",
        ".clang-format",
        ".github/workflows/ci.yml",
        "data/train.bin",
    ] {
        assert_eq!(
            std::fs::read(s.out(rel)).unwrap(),
            std::fs::read(s.tree(rel)).unwrap(),
            "{rel} copied as it is"
        );
    }
    assert!(std::fs::read_to_string(s.out("src/k.cu"))
        .unwrap()
        .contains("hipMalloc"));
    assert!(s.out("empty/dir").is_dir());
    for (rel, target) in [("k_link.cu", "src/k.cu"), ("src_link", "src")] {
        let meta = std::fs::symlink_metadata(s.out(rel)).unwrap();
        assert!(meta.file_type().is_symlink(), "{rel} stays a link");
        assert_eq!(std::fs::read_link(s.out(rel)).unwrap(), Path::new(target));
    }
    // The migrated file reached through the link is the migrated target.
    assert!(std::fs::read_to_string(s.out("k_link.cu"))
        .unwrap()
        .contains("hipMalloc"));
    assert!(
        !s.out("escape.txt").exists() && std::fs::symlink_metadata(s.out("escape.txt")).is_err()
    );
    assert!(!s.out(".git").exists());
    run.assert_stderr_contains("escape.txt: left out of the copy: symbolic link");
    run.assert_stderr_contains(".git/: left out of the copy");
    assert!(
        run.stderr.contains("1 migrated")
            && run.stderr.contains("2 symbolic links")
            && run.stderr.contains("2 left out"),
        "{}",
        run.stderr
    );
}

#[test]
fn out_lists_a_fifo_as_left_out_and_goes_on() {
    let s = Scratch::new();
    s.write("k.cu", KERNEL);
    let fifo = s.tree("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|st| st.success());
    if !made {
        assert!(std::env::var_os("CI").is_none(), "mkfifo is missing");
        eprintln!("!!! SKIPPED: mkfifo is not available !!!");
        return;
    }
    let run = s.migrate(&["--to", "hip", "--out", "out"]).expect_code(0);
    run.assert_stderr_contains("pipe: left out of the copy: not a regular file");
    assert!(s.out("k.cu").is_file());
}

#[test]
fn in_place_migrates_a_linked_file_once_and_keeps_the_link() {
    let s = Scratch::new();
    s.write("real/k.cu", KERNEL);
    link("real/k.cu", &s.tree("alias.cu"));
    link("real", &s.tree("real_dir_link"));
    s.migrate(&["--to", "hip", "--in-place"]).expect_code(0);
    assert!(std::fs::symlink_metadata(s.tree("alias.cu"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::symlink_metadata(s.tree("real_dir_link"))
        .unwrap()
        .file_type()
        .is_symlink());
    let text = std::fs::read_to_string(s.tree("real/k.cu")).unwrap();
    assert_eq!(text.matches("hipMalloc").count(), 1, "{text}");
    assert!(s.tree("real/k.cu.cuport.orig").is_file());
    assert!(!s.tree("alias.cu.cuport.orig").exists());
}

#[test]
fn in_place_on_a_linked_single_file_writes_its_target() {
    let s = Scratch::new();
    s.write("real.cu", KERNEL);
    link("real.cu", &s.tree("alias.cu"));
    common::migrate_from(
        Some(s.dir.path()),
        &s.tree("alias.cu"),
        &["--to", "hip", "--in-place"],
    )
    .expect_code(0);
    assert!(std::fs::symlink_metadata(s.tree("alias.cu"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(s.tree("real.cu"))
        .unwrap()
        .contains("hipMalloc"));
}

#[test]
fn in_place_refuses_read_only_files_before_writing_anything() {
    let s = Scratch::new();
    s.write("a.cu", KERNEL).write("b.cpp", HOST);
    std::fs::set_permissions(s.tree("b.cpp"), std::fs::Permissions::from_mode(0o444)).unwrap();
    let run = s.migrate(&["--to", "hip", "--in-place"]).expect_code(2);
    assert!(
        run.stderr.contains("b.cpp is read-only") && run.stderr.contains("--force"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(s.tree("a.cu")).unwrap(),
        KERNEL,
        "nothing written"
    );
    assert!(!s.tree("a.cu.cuport.orig").exists());

    s.migrate(&["--to", "hip", "--in-place", "--force"])
        .expect_code(0);
    assert!(std::fs::read_to_string(s.tree("b.cpp"))
        .unwrap()
        .contains("hipSetDevice"));
    let mode = std::fs::metadata(s.tree("b.cpp"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o444, "mode kept");
}

#[test]
fn o_writes_the_ascend_helpers_next_to_the_output_file() {
    let s = Scratch::new();
    s.write("host.cpp", HOST);
    std::fs::create_dir(s.out("")).unwrap();
    let run = common::migrate_from(
        Some(s.dir.path()),
        &s.tree("host.cpp"),
        &["--to", "ascend", "-o", "out/host_npu.cpp"],
    )
    .expect_code(0);
    for written in ["host_npu.cpp", "cuport_shim.h", "cuport_ascend_helpers.cpp"] {
        assert!(
            s.out(written).is_file(),
            "{written} missing; {}",
            run.stderr
        );
    }
    run.assert_stdout_contains("Generated 2 helper files");
}

#[test]
fn a_rules_file_for_another_target_is_an_error_not_a_no_op() {
    let s = Scratch::new();
    s.write("a.cu", HOST);
    std::fs::write(
        s.dir.path().join("ascend.toml"),
        "[meta]\ntarget = \"ascend\"\nsource = \"test\"\ncode = \"CP9000\"\n\n[[entry]]\ncuda = \"cudaSetDevice\"\nstatus = \"renamed\"\nto = \"aclrtSetDevice\"\n",
    )
    .unwrap();
    let run = s
        .migrate(&["--to", "hip", "--diff", "--rules", "ascend.toml"])
        .expect_code(2);
    run.assert_stderr_contains(
        "ascend.toml: [meta] target = \"ascend\", but this run migrates to hip",
    );
}

#[test]
fn an_unreadable_rules_file_is_named_once_without_repeating_the_cause() {
    let s = Scratch::new();
    s.write("a.cu", HOST);
    let run = s
        .migrate(&["--to", "hip", "--rules", "missing.toml"])
        .expect_code(2);
    assert_eq!(
        run.stderr.matches("No such file or directory").count(),
        1,
        "{}",
        run.stderr
    );
    run.assert_stderr_contains("missing.toml");
}

#[test]
fn an_empty_tree_reports_no_sites_instead_of_a_share() {
    let s = Scratch::new();
    let run = s.migrate(&["--to", "hip"]).expect_code(0);
    assert!(!run.stdout.contains("100.0%"), "{}", run.stdout);
    run.assert_stdout_contains("Sites: none");
}

/// The text summary is a rendering of report.json: `cuport report --format
/// text` reproduces what `cuport migrate` printed, written or previewed.
#[test]
fn report_reproduces_the_text_summary_of_the_run() {
    for (fixture, extra) in [
        ("cublas_gemm", vec!["--to", "ascend"]),
        ("dual_traps", vec!["--to", "ascend,hip", "--dual"]),
    ] {
        let (dir, root) = common::scratch(fixture);
        let reports = dir.path().join("reports");
        let out = dir.path().join("ported");
        for written in [false, true] {
            let mut args = extra.clone();
            args.extend(["--report", reports.to_str().unwrap()]);
            if written {
                args.extend(["--out", out.to_str().unwrap()]);
            }
            let run = common::migrate(&root, &args).expect_code(0);
            let report = assert_cmd::Command::cargo_bin("cuport")
                .unwrap()
                .args(["report", "--format", "text"])
                .arg(reports.join("report.json"))
                .output()
                .unwrap();
            assert!(report.status.success());
            let summary = String::from_utf8(report.stdout).unwrap();
            assert!(summary.contains("By library"), "{summary}");
            assert_eq!(summary.contains(" changed ("), written, "{summary}");
            assert!(
                run.stdout.contains(&summary),
                "{}\n---\n{summary}",
                run.stdout
            );
        }
    }
}
