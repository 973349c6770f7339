//! `cuport migrate --ascend-kernel-skeletons` and `--rename-sources` end to
//! end: the real binary on scratch copies of the fixtures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{migrate, read_tree, scratch, text};

#[test]
fn skeletons_are_written_listed_and_in_json() {
    let (dir, root) = scratch("reduction");
    let out = dir.path().join("out");
    let out_arg = out.to_str().unwrap();
    let run = migrate(
        &root,
        &[
            "--to",
            "ascend",
            "--out",
            out_arg,
            "--ascend-kernel-skeletons",
        ],
    )
    .expect_code(0);
    let skeleton = out.join("reduce.cuh.ascend/reduce_sum_kernel.cpp");
    assert!(skeleton.is_file(), "{}", run.stdout);
    assert!(out
        .join("reduce.cu.ascend/weighted_sum_kernel.cpp")
        .is_file());
    run.assert_stdout_contains("Ascend C kernel skeletons (2)");
    run.assert_stdout_contains(&skeleton.display().to_string());
    let body = std::fs::read_to_string(&skeleton).unwrap();
    assert!(body.contains("extern \"C\" __global__ __aicore__ void reduce_sum(GM_ADDR in"));

    let json_out = dir.path().join("json-out");
    let run = migrate(
        &root,
        &[
            "--to",
            "ascend",
            "--out",
            json_out.to_str().unwrap(),
            "--ascend-kernel-skeletons",
            "--format",
            "json",
        ],
    )
    .expect_code(0);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let skeletons = doc["skeletons"].as_array().expect("skeletons array");
    let paths: Vec<&str> = skeletons
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "reduce.cu.ascend/weighted_sum_kernel.cpp",
            "reduce.cuh.ascend/reduce_sum_kernel.cpp"
        ]
    );
    for s in skeletons {
        assert!(Path::new(s["written"].as_str().unwrap()).is_file());
        assert!(s["kernel"].as_str().is_some());
    }
    // The tree itself is untouched.
    assert!(!root.join("reduce.cu.ascend").exists());
}

#[test]
fn skeleton_flag_needs_ascend_and_out() {
    let (dir, root) = scratch("vector_add");
    let out = dir.path().join("out");
    let run = migrate(
        &root,
        &[
            "--to",
            "hip",
            "--out",
            out.to_str().unwrap(),
            "--ascend-kernel-skeletons",
        ],
    )
    .expect_code(2);
    run.assert_stderr_contains("--to ascend");
    assert!(!out.exists(), "a refused run wrote {}", out.display());
    let run = migrate(&root, &["--to", "ascend", "--ascend-kernel-skeletons"]).expect_code(2);
    run.assert_stderr_contains("--out");
}

#[test]
fn rename_into_out_then_rerun_on_the_output_changes_nothing() {
    let (dir, root) = scratch("cmake_project");
    let first = dir.path().join("first");
    let run = migrate(
        &root,
        &[
            "--to",
            "musa",
            "--out",
            first.to_str().unwrap(),
            "--rename-sources",
        ],
    )
    .expect_code(0);
    run.assert_stdout_contains("src/main.cu -> src/main.mu");
    let tree = read_tree(&first);
    assert!(tree.contains_key("src/main.mu") && !tree.contains_key("src/main.cu"));
    assert!(text(&tree["CMakeLists.txt"]).contains("  src/main.mu\n"));

    let second = dir.path().join("second");
    migrate(
        &first,
        &[
            "--to",
            "musa",
            "--out",
            second.to_str().unwrap(),
            "--rename-sources",
        ],
    )
    .expect_code(0);
    assert_eq!(read_tree(&second), tree);
}

#[test]
fn rename_in_place_keeps_backups_and_a_second_run_is_a_no_op() {
    let (_dir, root) = scratch("torch_extension");
    let original = read_tree(&root);
    migrate(&root, &["--to", "hip", "--in-place", "--rename-sources"]).expect_code(0);
    let first = read_tree(&root);
    assert!(first.contains_key("ext_kernel.hip"));
    assert!(!first.contains_key("ext_kernel.cu"));
    assert_eq!(
        first["ext_kernel.cu.cuport.orig"],
        original["ext_kernel.cu"]
    );
    assert!(text(&first["setup.py"]).contains("sources=[\"ext.cpp\", \"ext_kernel.hip\"]"));
    assert!(text(&first["jit_load.py"]).contains("os.path.join(HERE, \"ext_kernel.hip\")"));

    migrate(&root, &["--to", "hip", "--in-place", "--rename-sources"]).expect_code(0);
    assert_eq!(read_tree(&root), first);
}

#[test]
fn rename_in_place_without_backup_leaves_no_old_file() {
    let (_dir, root) = scratch("reduction");
    migrate(
        &root,
        &[
            "--to",
            "musa",
            "--in-place",
            "--no-backup",
            "--rename-sources",
        ],
    )
    .expect_code(0);
    let names: Vec<String> = read_tree(&root).into_keys().collect();
    assert_eq!(names, ["reduce.mu", "reduce.muh"]);
}

#[test]
fn rename_for_ascend_says_it_does_nothing() {
    let (dir, root) = scratch("torch_extension");
    let out = dir.path().join("out");
    let run = migrate(
        &root,
        &[
            "--to",
            "ascend",
            "--out",
            out.to_str().unwrap(),
            "--rename-sources",
        ],
    )
    .expect_code(0);
    run.assert_stderr_contains("--rename-sources does nothing for ascend");
    assert!(out.join("ext_kernel.cu").is_file());
}

#[test]
fn rename_needs_a_writing_mode_and_a_free_name() {
    let (_dir, root) = scratch("vector_add");
    let run = migrate(&root, &["--to", "hip", "--diff", "--rename-sources"]).expect_code(2);
    run.assert_stderr_contains("--out DIR or --in-place");

    std::fs::write(root.join("vector_add.hip"), "// already ported\n").unwrap();
    let before = read_tree(&root);
    let run = migrate(&root, &["--to", "hip", "--in-place", "--rename-sources"]).expect_code(2);
    assert!(
        run.stderr.contains("vector_add.cu") && run.stderr.contains("vector_add.hip"),
        "{}",
        run.stderr
    );
    assert_eq!(read_tree(&root), before, "a refused rename changed files");
}

/// A re-run into the same output directory rewrites only what changed: an
/// unchanged output keeps its inode, an edited source's output is replaced.
#[cfg(unix)]
#[test]
fn rerun_into_the_same_out_rewrites_only_what_changed() {
    use std::os::unix::fs::MetadataExt;
    let (dir, root) = scratch("reduction");
    let out = dir.path().join("out");
    let args = ["--to", "hip", "--out", out.to_str().unwrap()];
    migrate(&root, &args).expect_code(0);
    let inode = |name: &str| std::fs::metadata(out.join(name)).unwrap().ino();
    let (cu, cuh) = (inode("reduce.cu"), inode("reduce.cuh"));
    let source = root.join("reduce.cuh");
    let edited = std::fs::read_to_string(&source).unwrap() + "\n// edited\n";
    std::fs::write(&source, edited).unwrap();
    migrate(&root, &args).expect_code(0);
    assert_eq!(inode("reduce.cu"), cu, "an unchanged output was rewritten");
    assert_ne!(
        inode("reduce.cuh"),
        cuh,
        "a changed output was not rewritten"
    );
    assert!(text(&std::fs::read(out.join("reduce.cuh")).unwrap()).ends_with("// edited\n"));
}
