//! `--cann-version` / `--rocm-version` (and their cuport.toml keys) end to
//! end: names a release lacks take their older form where the tables give
//! one and are otherwise CP0016 and stay as written, the helpers
//! are generated for the release, and bad selections are usage errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{migrate, scratch};

/// HCCL's group calls exist from CANN 9.0.0; for 8.2.RC1 their older form
/// (no group: HCCL_SUCCESS) is used, with a diagnostic naming the release.
#[test]
fn an_older_cann_uses_the_older_form_of_names_it_lacks_and_says_which_release_they_need() {
    let (dir, root) = scratch("ascend_host");
    let out = dir.path().join("out");
    let run = migrate(
        &root,
        &[
            "--to",
            "ascend",
            "--cann-version",
            "8.2.RC1",
            "--out",
            out.to_str().unwrap(),
        ],
    )
    .expect_code(0);
    run.assert_stdout_contains("approximate CP2605: `ncclGroupStart` needs CANN >= 9.0.0; for CANN 8.2.RC1 it becomes `HCCL_SUCCESS`");
    let ported = std::fs::read_to_string(out.join("collectives.cpp")).unwrap();
    assert!(
        ported.contains("NCCL_CHECK(HCCL_SUCCESS);") && !ported.contains("GroupStart()"),
        "{ported}"
    );
    let shim = std::fs::read_to_string(out.join("cuport_shim.h")).unwrap();
    assert!(
        shim.contains("#define CUPORT_CANN_HAS_RT_DEVICE_INFO 0"),
        "{shim}"
    );
}

#[test]
fn the_default_cann_is_the_newest_and_cuport_toml_can_choose_another() {
    let (dir, root) = scratch("ascend_host");
    let out = dir.path().join("out");
    let run = migrate(&root, &["--to", "ascend", "--out", out.to_str().unwrap()]).expect_code(0);
    assert!(!run.stdout.contains("CP0016"), "{}", run.stdout);
    let ported = std::fs::read_to_string(out.join("collectives.cpp")).unwrap();
    assert!(ported.contains("HcclGroupStart()"));
    let shim = std::fs::read_to_string(out.join("cuport_shim.h")).unwrap();
    assert!(
        shim.contains("Made for CANN 9.1.0") && shim.contains("CUPORT_CANN_HAS_RT_DEVICE_INFO 1")
    );

    std::fs::write(
        root.join("cuport.toml"),
        "[migrate]\ncann_version = \"8.1.RC1\"\n",
    )
    .unwrap();
    let run = migrate(&root, &["--to", "ascend", "--show-settings"]).expect_code(0);
    run.assert_stdout_contains("cann-version       8.1.RC1");
    run.assert_stdout_contains("cuport.toml (cann-version)");
}

#[test]
fn rocm_version_gates_names_hip_added_later() {
    let (dir, root) = scratch("vector_add");
    std::fs::write(
        root.join("errors.cu"),
        "#include <cuda.h>\nconst char *name(CUresult r) { const char *s; cuGetErrorName(r, &s); return s; }\n",
    )
    .unwrap();
    let run = migrate(&root, &["--to", "hip", "--rocm-version", "5.2.3", "--diff"]).expect_code(0);
    // With --diff the diff is stdout and the diagnostics stderr.
    run.assert_stderr_contains(
        "CP0016: `cuGetErrorName` would become `hipDrvGetErrorName`, which needs HIP >= 5.4.0",
    );
    run.assert_stdout_contains("cuGetErrorName(r, &s)");
    let newer = migrate(&root, &["--to", "hip", "--rocm-version", "6.2", "--diff"]).expect_code(0);
    assert!(!newer.stderr.contains("CP0016"), "{}", newer.stderr);
    newer.assert_stdout_contains("hipDrvGetErrorName(r, &s)");
    drop(dir);
}

#[test]
fn bad_selections_are_usage_errors_that_say_what_to_do() {
    let (_dir, root) = scratch("vector_add");
    let cases = [
        (
            vec!["--to", "hip", "--cann-version", "9.1.0"],
            "--cann-version: cann-version is for --to ascend, but this run migrates to hip",
        ),
        (
            vec!["--to", "ascend", "--cann-version", "7.0.0"],
            "older than the oldest release cuport ports to (CANN 8.0.0); choose 8.0.0 or newer",
        ),
        (
            vec!["--to", "ascend", "--cann-version", "nine"],
            "`nine` is not a version; write MAJOR.MINOR.PATCH (9.1.0) or MAJOR.MINOR.RCn (8.2.RC1)",
        ),
    ];
    for (args, expected) in cases {
        let run = migrate(&root, &args).expect_code(2);
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
    }
}
