//! `cuport migrate` end to end: the real binary on copies of the fixtures,
//! checked the way a porting engineer would check it (exit codes, stdout,
//! and the bytes, modes and mtimes of every file in the scratch directory).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use common::{copy_dir, Run};
use tempfile::TempDir;

/// A scratch directory holding the tree to migrate at `<scratch>/tree`;
/// outputs go beside it, and the binary runs with the scratch directory as
/// its working directory so that stray relative writes are caught too.
struct Scratch {
    dir: TempDir,
    root: PathBuf,
}

/// Bytes, mtime and mode of a file.
type FileState = (Vec<u8>, SystemTime, u32);

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("tree");
        std::fs::create_dir(&root).expect("tree dir");
        Self { dir, root }
    }

    /// Copies `fixtures/NAME` into the tree, under `under` ("" for the root).
    fn fixture(self, name: &str, under: &str) -> Self {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures")
            .join(name);
        copy_dir(&src, &self.root.join(under));
        self
    }

    fn file(self, rel: &str, text: &str) -> Self {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
        self
    }

    fn tree(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// A path beside the tree (outside it).
    fn outside(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn read(&self, path: &Path) -> String {
        std::fs::read_to_string(path).expect("readable output")
    }

    /// `cuport migrate TREE ARGS...`
    fn migrate(&self, args: &[&str]) -> Run {
        self.migrate_path(&self.root, args)
    }

    fn migrate_path(&self, path: &Path, args: &[&str]) -> Run {
        common::migrate_from(Some(self.dir.path()), path, args)
    }

    /// Every file of the scratch directory, except those under `skip`.
    fn state_except(&self, skip: Option<&Path>) -> BTreeMap<PathBuf, FileState> {
        let mut files = BTreeMap::new();
        collect(self.dir.path(), skip, &mut files);
        files
    }

    fn state(&self) -> BTreeMap<PathBuf, FileState> {
        self.state_except(None)
    }
}

fn collect(dir: &Path, skip: Option<&Path>, into: &mut BTreeMap<PathBuf, FileState>) {
    for entry in std::fs::read_dir(dir).expect("dir") {
        let path = entry.expect("entry").path();
        if skip.is_some_and(|s| path.starts_with(s)) {
            continue;
        }
        let meta = std::fs::metadata(&path).expect("metadata");
        if meta.is_dir() {
            collect(&path, skip, into);
        } else {
            let bytes = std::fs::read(&path).expect("read");
            into.insert(path, (bytes, meta.modified().expect("mtime"), mode(&meta)));
        }
    }
}

#[cfg(unix)]
fn mode(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode(_meta: &std::fs::Metadata) -> u32 {
    0
}

#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn file_mode(path: &Path) -> u32 {
    mode(&std::fs::metadata(path).expect("metadata"))
}

/// A file whose only CUDA use maps 1:1 to HIP.
const FREE_ONLY: &str = "void release(void* p) {\n    cudaFree(p);\n}\n";

#[test]
fn dry_run_writes_nothing_and_prints_diagnostics_and_statistics() {
    let s = Scratch::new().fixture("vector_add", "");
    let before = s.state();
    let run = s.migrate(&["--to", "ascend"]).expect_code(0);
    assert_eq!(s.state(), before, "a dry run must not touch any file");
    run.assert_stdout_contains("vector_add.cu:26:1: manual CP0010: kernel `vector_add`");
    assert!(run
        .stdout
        .contains("Migration to ascend: 1 files analysed, 1 would change"));
    assert!(run.stdout.contains("Estimated manual effort:"));
    assert!(run.stdout.contains("By library (converted / left):"));
}

#[test]
fn diff_prints_a_unified_diff_and_writes_nothing() {
    let s = Scratch::new().fixture("vector_add", "");
    let before = s.state();
    let run = s.migrate(&["--to", "hip", "--diff"]).expect_code(0);
    assert_eq!(s.state(), before, "--diff must not touch any file");
    assert!(
        run.stdout
            .starts_with("--- a/vector_add.cu\n+++ b/vector_add.cu\n@@ "),
        "{}",
        run.stdout
    );
    assert!(run
        .stdout
        .contains("\n-    CUDA_CHECK(cudaMalloc(&d_a, bytes));\n"));
    assert!(run
        .stdout
        .contains("\n+    CUDA_CHECK(hipMalloc(&d_a, bytes));\n"));
    // The diff agrees with what --out writes: removed lines come from the
    // original, added lines are in the ported file.
    s.migrate(&["--to", "hip", "--out", "ported"])
        .expect_code(0);
    let original = s.read(&s.tree("vector_add.cu"));
    let ported = s.read(&s.outside("ported/vector_add.cu"));
    for line in run.stdout.lines().skip(2) {
        if let Some(removed) = line.strip_prefix('-') {
            assert!(original.lines().any(|l| l == removed), "{line}");
        } else if let Some(added) = line.strip_prefix('+') {
            assert!(ported.lines().any(|l| l == added), "{line}");
        }
    }
}

#[cfg(unix)]
#[test]
fn out_writes_a_full_copy_with_unchanged_files_identical_and_modes_kept() {
    let s = Scratch::new()
        .fixture("vector_add", "")
        .fixture("cublas_gemm", "blas")
        .file("README.md", "How to build: nvcc vector_add.cu\n")
        .file("host_only.cpp", "int add(int a, int b) { return a + b; }\n");
    chmod(&s.tree("blas/gemm.cu"), 0o755);
    let out = s.outside("ported");
    let before = s.state();
    s.migrate(&["--to", "hip", "--out", "ported"])
        .expect_code(0);
    assert_eq!(
        s.state_except(Some(&out)),
        before,
        "nothing may be written outside --out"
    );
    let written: Vec<PathBuf> = s
        .state_except(None)
        .into_keys()
        .filter_map(|p| p.strip_prefix(&out).ok().map(Path::to_path_buf))
        .collect();
    let expected: Vec<PathBuf> = before
        .keys()
        .filter_map(|p| p.strip_prefix(&s.root).ok().map(Path::to_path_buf))
        .collect();
    assert_eq!(written, expected, "the copy holds every file of the tree");
    for unchanged in ["README.md", "host_only.cpp"] {
        assert_eq!(
            std::fs::read(out.join(unchanged)).expect("copied"),
            std::fs::read(s.tree(unchanged)).expect("original"),
            "{unchanged} must be byte-identical"
        );
    }
    let gemm = s.read(&out.join("blas/gemm.cu"));
    assert!(gemm.contains("hipblasCreate(") && !gemm.contains("cublasCreate("));
    assert!(s
        .read(&out.join("vector_add.cu"))
        .contains("CUDA_CHECK(hipMalloc(&d_a, bytes));"));
    assert_eq!(file_mode(&out.join("blas/gemm.cu")), 0o755);
    assert_eq!(
        file_mode(&out.join("README.md")),
        file_mode(&s.tree("README.md"))
    );
}

#[test]
fn out_inside_the_tree_is_refused_with_exit_2() {
    let s = Scratch::new().fixture("vector_add", "");
    let before = s.state();
    let inside = s.tree("ported");
    let run = s
        .migrate(&["--to", "hip", "--out", inside.to_str().expect("utf-8")])
        .expect_code(2);
    run.assert_stderr_contains("is inside the tree being migrated");
    assert_eq!(s.state(), before, "a refused run writes no file");
}

#[test]

fn refused_out_inside_the_tree_leaves_no_directory_behind() {
    let s = Scratch::new().fixture("vector_add", "");
    let inside = s.tree("ported");
    s.migrate(&["--to", "hip", "--out", inside.to_str().expect("utf-8")])
        .expect_code(2);
    assert!(!inside.exists(), "{} was created", inside.display());
}

#[cfg(unix)]
#[test]
fn in_place_rewrites_keeping_mode_and_an_original_backup() {
    let s = Scratch::new().fixture("vector_add", "");
    let source = s.tree("vector_add.cu");
    chmod(&source, 0o755);
    let original = std::fs::read(&source).expect("original");
    s.migrate(&["--to", "hip", "--out", "ported"])
        .expect_code(0);
    let mut untouched = s.state();
    untouched.remove(&source);
    s.migrate(&["--to", "hip", "--in-place"]).expect_code(0);
    let mut after = s.state();
    after.remove(&source);
    after.remove(&s.tree("vector_add.cu.cuport.orig"));
    assert_eq!(after, untouched, "only the file and its backup are written");
    assert_eq!(
        std::fs::read(&source).expect("rewritten"),
        std::fs::read(s.outside("ported/vector_add.cu")).expect("copy"),
        "--in-place writes what --out writes"
    );
    assert_eq!(file_mode(&source), 0o755);
    let backup = s.tree("vector_add.cu.cuport.orig");
    assert_eq!(std::fs::read(&backup).expect("backup"), original);
    let names: Vec<_> = std::fs::read_dir(&s.root)
        .expect("tree")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 2, "no temporary files left: {names:?}");
}

#[test]
fn in_place_with_no_backup_keeps_none() {
    let s = Scratch::new().fixture("vector_add", "");
    s.migrate(&["--to", "hip", "--in-place", "--no-backup"])
        .expect_code(0);
    assert!(s.read(&s.tree("vector_add.cu")).contains("hipMalloc("));
    assert!(!s.tree("vector_add.cu.cuport.orig").exists());
}

#[test]
fn a_second_in_place_run_changes_nothing_and_keeps_the_first_backup() {
    let s = Scratch::new().fixture("vector_add", "");
    let source = s.tree("vector_add.cu");
    let original = std::fs::read(&source).expect("original");
    s.migrate(&["--to", "hip", "--in-place"]).expect_code(0);
    let first = s.state();
    let run = s.migrate(&["--to", "hip", "--in-place"]).expect_code(0);
    assert_eq!(s.state(), first, "{}", run.stdout);
    run.assert_stdout_contains("0 changed");
    // New CUDA code after the first run: the file is rewritten again, but
    // the backup still holds the bytes from before the first run.
    let mut text = s.read(&source);
    text.push_str(FREE_ONLY);
    std::fs::write(&source, text).expect("append");
    s.migrate(&["--to", "hip", "--in-place"]).expect_code(0);
    assert!(s.read(&source).contains("    hipFree(p);\n"));
    let backup = s.tree("vector_add.cu.cuport.orig");
    assert_eq!(std::fs::read(backup).expect("backup"), original);
}

#[test]
fn single_file_with_o_writes_only_that_file() {
    let s = Scratch::new().fixture("vector_add", "");
    let source = s.tree("vector_add.cu");
    let expected = s.state();
    s.migrate_path(&source, &["--to", "hip", "-o", "one.cu"])
        .expect_code(0);
    let mut after = s.state();
    let written = after.remove(&s.outside("one.cu")).expect("OUTFILE written");
    assert_eq!(after, expected, "only OUTFILE is written");
    s.migrate(&["--to", "hip", "--out", "ported"])
        .expect_code(0);
    let copy = std::fs::read(s.outside("ported/vector_add.cu")).expect("copy");
    assert_eq!(written.0, copy, "-o writes what --out writes");
}

#[test]
fn o_with_a_tree_of_several_files_exits_2() {
    let s = Scratch::new()
        .fixture("vector_add", "")
        .fixture("cublas_gemm", "");
    let run = s.migrate(&["--to", "hip", "-o", "one.cu"]).expect_code(2);
    assert!(run
        .stderr
        .contains("-o OUTFILE needs PATH to be one source file"));
    assert!(!s.outside("one.cu").exists());
}

#[test]

fn o_with_a_directory_path_exits_2() {
    let s = Scratch::new().fixture("vector_add", "");
    let run = s.migrate(&["--to", "hip", "-o", "one.cu"]).expect_code(2);
    run.assert_stderr_contains("-o OUTFILE");
    assert!(!s.outside("one.cu").exists());
}

#[test]
fn fail_on_manual_exits_1_while_manual_work_remains_and_0_without() {
    let manual = Scratch::new().fixture("vector_add", "");
    manual
        .migrate(&["--to", "ascend", "--fail-on", "manual"])
        .expect_code(1);
    manual.migrate(&["--to", "ascend"]).expect_code(0);
    let clean = Scratch::new().file("free.cu", FREE_ONLY);
    for level in ["approximate", "manual", "unsupported"] {
        clean
            .migrate(&["--to", "hip", "--fail-on", level])
            .expect_code(0);
    }
}

#[test]
fn fail_on_unsupported_ignores_manual_but_fails_on_unsupported() {
    // vector_add on Ascend has manual diagnostics and no unsupported ones.
    Scratch::new()
        .fixture("vector_add", "")
        .migrate(&["--to", "ascend", "--fail-on", "unsupported"])
        .expect_code(0);
    let unsupported = Scratch::new().file(
        "flush.cu",
        "void f() {\n    cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice, cudaFlushGPUDirectRDMAWritesToOwner);\n}\n",
    );
    let run = unsupported
        .migrate(&["--to", "hip", "--fail-on", "unsupported"])
        .expect_code(1);
    run.assert_stdout_contains("unsupported CP1019");
    // A lower threshold fails on everything above it as well.
    unsupported
        .migrate(&["--to", "hip", "--fail-on", "manual"])
        .expect_code(1);
}

/// The numeric statistics a file entry and the totals share.
const SUMMED: [&str; 10] = [
    "sites",
    "converted",
    "not_converted",
    "approximate",
    "suppressed",
    "edits",
    "changed_lines",
    "bytes_removed",
    "bytes_added",
    "effort_hours",
];

#[test]
fn json_report_is_versioned_and_its_totals_add_up() {
    let s = Scratch::new()
        .fixture("vector_add", "va")
        .fixture("cublas_gemm", "gemm")
        .fixture("pytorch_train", "py");
    let run = s
        .migrate(&["--to", "ascend", "--format", "json"])
        .expect_code(0);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    // The same document as report.json: one JSON format per migration.
    assert_eq!(doc["format"], "cuport-report");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["run"]["target"], "ascend");
    let files = doc["files"].as_array().expect("files");
    let totals = &doc["totals"];
    assert_eq!(files.len(), 3);
    assert_eq!(totals["files"], 3);
    for key in SUMMED {
        let sum: f64 = files
            .iter()
            .map(|f| f["stats"][key].as_f64().expect(key))
            .sum();
        let total = totals[key].as_f64().expect(key);
        assert!((sum - total).abs() < 1e-9, "{key}: {sum} != {total}");
    }
    let changed = files.iter().filter(|f| f["changed"] == true).count();
    assert_eq!(totals["files_changed"].as_u64(), Some(changed as u64));
    let mut levels: BTreeMap<String, u64> = BTreeMap::new();
    for file in files {
        let edits = file["edits"].as_array().expect("edits").len();
        assert_eq!(file["stats"]["edits"].as_u64(), Some(edits as u64));
        for d in file["diagnostics"].as_array().expect("diagnostics") {
            *levels
                .entry(d["level"].as_str().expect("level").into())
                .or_default() += 1;
        }
    }
    let total_levels: BTreeMap<String, u64> =
        serde_json::from_value(totals["diagnostics"].clone()).expect("level counts");
    assert_eq!(levels, total_levels);
    assert!(levels.get("manual").is_some_and(|&n| n > 0));
}

/// A tree with a `cuport.toml` that sets every kind of value.
fn configured_tree() -> Scratch {
    Scratch::new()
        .fixture("vector_add", "")
        .file("skip/excluded.cu", FREE_ONLY)
        .file("keep/free.cu", FREE_ONLY)
        .file("keep/ignored.cu", FREE_ONLY)
        .file(
            "cuport.toml",
            "[migrate]\ntarget = \"hip\"\nexclude = [\"skip/**\"]\nignore = [\"keep/ignored.cu\"]\nhip-kernel-launch = \"ggl\"\n",
        )
}

#[test]
fn cuport_toml_sets_target_excludes_ignores_and_ggl_launches() {
    let s = configured_tree();
    let run = s.migrate(&["--diff"]).expect_code(0);
    assert!(
        run.stdout.contains(
            "+        hipLaunchKernelGGL(vector_add, dim3(grid), dim3(block), 0, stream, "
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("+++ b/keep/free.cu\n"));
    assert!(!run.stdout.contains("excluded.cu"), "{}", run.stdout);
    assert!(!run.stdout.contains("ignored.cu"), "{}", run.stdout);
    let json = s.migrate(&["--format", "json"]).expect_code(0);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("valid JSON");
    let paths: Vec<&str> = doc["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(paths, ["keep/free.cu", "vector_add.cu"]);
}

#[test]
fn flags_override_cuport_toml() {
    let s = configured_tree();
    let chevron = s
        .migrate(&["--diff", "--hip-kernel-launch", "chevron"])
        .expect_code(0);
    assert!(!chevron.stdout.contains("hipLaunchKernelGGL"));
    assert!(chevron
        .stdout
        .contains("+    CUDA_CHECK(hipMalloc(&d_a, bytes));"));
    let musa = s.migrate(&["--diff", "--to", "musa"]).expect_code(0);
    assert!(musa
        .stdout
        .contains("+    CUDA_CHECK(musaMalloc(&d_a, bytes));"));
    assert!(
        !musa.stdout.contains("hipLaunchKernelGGL"),
        "{}",
        musa.stdout
    );
}

fn show_settings(s: &Scratch, args: &[&str]) -> String {
    let mut all = vec!["--show-settings"];
    all.extend_from_slice(args);
    let run = s.migrate(&all).expect_code(0);
    run.stdout
        .replace(s.root.to_str().expect("utf-8 path"), "[TREE]")
}

#[test]
fn show_settings_names_the_source_of_each_value() {
    let s = configured_tree();
    insta::assert_snapshot!("show_settings_from_cuport_toml", show_settings(&s, &[]));
    insta::assert_snapshot!(
        "show_settings_with_flags_over_cuport_toml",
        show_settings(
            &s,
            &[
                "--to",
                "musa",
                "--exclude",
                "extra/**",
                "--annotate",
                "--hip-libs",
                "roc"
            ]
        )
    );
}

#[test]
fn a_bad_cuport_toml_exits_2_naming_the_file() {
    let s = Scratch::new().file("free.cu", FREE_ONLY).file(
        "cuport.toml",
        "[migrate]\ntarget = \"hip\"\nfrobnicate = 1\n",
    );
    let run = s.migrate(&["--diff"]).expect_code(2);
    let config = s.tree("cuport.toml");
    run.assert_stderr_contains(config.to_str().expect("utf-8"));
    run.assert_stderr_contains("frobnicate");
    assert!(run.stdout.is_empty());
}

const USER_RULES: &str = r#"[meta]
target = "hip"
library = "runtime"
source = "migrate_cli test"
code = "CP9001"

[[entry]]
cuda = "cudaFree"
status = "renamed"
to = "projectFree"
"#;

#[test]
fn a_user_rules_file_overrides_a_builtin_mapping() {
    let s = Scratch::new().file("free.cu", FREE_ONLY);
    std::fs::write(s.outside("project.toml"), USER_RULES).expect("rules");
    let builtin = s.migrate(&["--to", "hip", "--diff"]).expect_code(0);
    assert!(builtin.stdout.contains("+    hipFree(p);"));
    let run = s
        .migrate(&["--to", "hip", "--diff", "--rules", "project.toml"])
        .expect_code(0);
    run.assert_stdout_contains("+    projectFree(p);");
}

#[test]
fn a_broken_rules_file_exits_2_naming_the_file() {
    let s = Scratch::new().file("free.cu", FREE_ONLY);
    std::fs::write(
        s.outside("broken.toml"),
        "[meta]\ntarget = \"hip\"\n[[entry]]\ncuda = 3\n",
    )
    .expect("rules");
    let run = s
        .migrate(&["--to", "hip", "--rules", "broken.toml"])
        .expect_code(2);
    run.assert_stderr_contains("broken.toml");
    assert!(run.stdout.is_empty());
    let missing = s
        .migrate(&["--to", "hip", "--rules", "missing.toml"])
        .expect_code(2);
    missing.assert_stderr_contains("missing.toml");
}

#[test]
fn suppression_markers_keep_lines_and_blocks_unchanged() {
    let s = Scratch::new().file(
        "release.cu",
        "void release(void* a, void* b, void* c, void* d) {\n    cudaFree(a);\n    cudaFree(b); // cuport: ignore\n    // cuport: off\n    cudaFree(c);\n    // cuport: on\n    cudaFree(d);\n}\n",
    );
    let run = s.migrate(&["--to", "hip", "--diff"]).expect_code(0);
    for kept in [
        "     cudaFree(b); // cuport: ignore\n",
        "     cudaFree(c);\n",
    ] {
        assert!(run.stdout.contains(kept), "{kept:?} in\n{}", run.stdout);
    }
    for ported in ["+    hipFree(a);\n", "+    hipFree(d);\n"] {
        assert!(run.stdout.contains(ported), "{ported:?} in\n{}", run.stdout);
    }
    assert!(!run.stdout.contains("hipFree(b)") && !run.stdout.contains("hipFree(c)"));
    let summary = s.migrate(&["--to", "hip"]).expect_code(0);
    summary.assert_stdout_contains("2 suppressed");
}

#[test]
fn annotate_writes_cuport_comments_once_even_when_rerun() {
    let s = Scratch::new().fixture("vector_add", "");
    s.migrate(&["--to", "ascend", "--out", "first", "--annotate"])
        .expect_code(0);
    let first = s.read(&s.outside("first/vector_add.cu"));
    assert!(
        first.contains(
            "\n// CUPORT CP0010: kernel `vector_add` must be ported by hand to Ascend C\n"
        ),
        "{first}"
    );
    let notes = first.matches("// CUPORT CP").count();
    assert!(notes >= 5, "{notes} annotations");
    // Migrating the annotated output again adds nothing.
    let again = s.migrate_path(
        &s.outside("first"),
        &["--to", "ascend", "--out", "second", "--annotate"],
    );
    again.expect_code(0);
    assert_eq!(s.read(&s.outside("second/vector_add.cu")), first);
}

#[test]

fn annotate_keeps_multi_line_macros_intact() {
    let s = Scratch::new().fixture("vector_add", "");
    s.migrate(&["--to", "ascend", "--out", "annotated", "--annotate"])
        .expect_code(0);
    let text = s.read(&s.outside("annotated/vector_add.cu"));
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.windows(2) {
        let continued = pair[0].trim_end().ends_with('\\');
        let note = pair[1].trim_start().starts_with("// CUPORT");
        assert!(
            !(continued && note),
            "annotation inside a macro:\n{}\n{}",
            pair[0],
            pair[1]
        );
    }
}

#[test]
fn ascend_python_gets_npu_devices_and_torch_npu_but_prose_stays() {
    let s = Scratch::new().fixture("pytorch_train", "");
    s.migrate(&["--to", "ascend", "--out", "ported"])
        .expect_code(0);
    let ported = s.read(&s.outside("ported/train.py"));
    assert!(
        ported.contains("\nimport torch\nimport torch_npu\n"),
        "{ported}"
    );
    assert_eq!(ported.matches("import torch_npu").count(), 1);
    for converted in [
        "torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "device = torch.device(\"npu\", local_rank)",
        "map_location=\"npu:0\"",
        "default=\"npu:1\"",
        "torch.autocast(device_type=\"npu\"",
        "target = \"npu:0\" if",
    ] {
        assert!(ported.contains(converted), "{converted}");
    }
    for prose in [
        "\"Toy trainer; will run on cuda if available.\"",
        "help=\"use mixed precision on the cuda device\"",
        "help=\"checkpoint to load (tensors go to cuda:0)\"",
        "\"training on cuda\"",
        "{\"cuda_hint\": ",
        "sort_by=\"cuda_time_total\"",
        "# Free cached blocks so a following job on this cuda device starts clean.",
    ] {
        assert!(ported.contains(prose), "prose changed: {prose}");
    }
    let left = ported
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find(|l| l.contains("\"cuda\""));
    assert_eq!(left, None, "a \"cuda\" device string is left in code");
}

#[test]
fn ascend_python_switches_the_nccl_backend_to_hccl() {
    let s = Scratch::new().fixture("pytorch_train", "");
    let run = s.migrate(&["--to", "ascend", "--diff"]).expect_code(0);
    run.assert_stdout_contains("+    dist.init_process_group(backend=\"hccl\")\n");
}

#[test]

fn ascend_python_profiler_activity_stays_a_defined_name() {
    let s = Scratch::new().fixture("pytorch_train", "");
    s.migrate(&["--to", "ascend", "--out", "ported"])
        .expect_code(0);
    let ported = s.read(&s.outside("ported/train.py"));
    assert!(
        !ported.contains("ProfilerActivity.CPU, NPU]"),
        "bare NPU is a NameError at run time"
    );
}

#[test]

fn hip_headers_are_included_once() {
    let s = Scratch::new().fixture("cublas_gemm", "");
    s.migrate(&["--to", "hip", "--out", "ported"])
        .expect_code(0);
    let ported = s.read(&s.outside("ported/gemm.cu"));
    let runtime = ported.matches("#include <hip/hip_runtime.h>").count();
    assert_eq!(runtime, 1, "{ported}");
}

#[test]
fn json_with_diff_carries_each_changed_files_diff() {
    let s = Scratch::new()
        .file("free.cu", FREE_ONLY)
        .file("host_only.cpp", "int add(int a, int b) { return a + b; }\n");
    let run = s
        .migrate(&["--to", "hip", "--format", "json", "--diff"])
        .expect_code(0);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    for file in doc["files"].as_array().expect("files") {
        let diff = file["diff"].as_str();
        if file["changed"] == true {
            let diff = diff.expect("a changed file has a diff");
            assert!(diff.starts_with("--- a/free.cu\n+++ b/free.cu\n"), "{diff}");
            assert!(diff.contains("\n+    hipFree(p);\n"), "{diff}");
        } else {
            assert_eq!(diff, None, "{file}");
        }
    }
}

#[test]
fn cuport_toml_rule_paths_are_relative_to_the_file() {
    let s = Scratch::new()
        .file("free.cu", FREE_ONLY)
        .file("rules/project.toml", USER_RULES)
        .file(
            "cuport.toml",
            "[migrate]\ntarget = \"hip\"\nrules = [\"rules/project.toml\"]\n",
        );
    let run = s.migrate(&["--diff"]).expect_code(0);
    run.assert_stdout_contains("+    projectFree(p);");
}

#[test]
fn bom_and_crlf_outside_the_edits_survive() {
    let s = Scratch::new().file(
        "crlf.cu",
        "\u{feff}void release(void* p) {\r\n    cudaFree(p);\r\n}\r\n",
    );
    s.migrate(&["--to", "hip", "--out", "ported"])
        .expect_code(0);
    let ported = s.read(&s.outside("ported/crlf.cu"));
    assert!(ported.starts_with('\u{feff}'), "{ported:?}");
    assert!(
        ported.ends_with("void release(void* p) {\r\n    hipFree(p);\r\n}\r\n"),
        "{ported:?}"
    );
}

/// `--hip-arch` names the AMD GPUs a CMake port builds for; an NVIDIA
/// architecture there is refused before anything runs.
#[test]
fn hip_arch_chooses_the_cmake_architectures() {
    let s = Scratch::new().fixture("cmake_project", "");
    let run = s
        .migrate(&[
            "--to",
            "hip",
            "--diff",
            "--hip-arch",
            "gfx1100,gfx90a:xnack-",
        ])
        .expect_code(0);
    run.assert_stdout_contains("+  set(CMAKE_HIP_ARCHITECTURES gfx1100;gfx90a:xnack-)");
    let run = s
        .migrate(&["--to", "hip", "--hip-arch", "sm_80"])
        .expect_code(2);
    run.assert_stderr_contains("`sm_80`");
}
