//! The built-in tables load, pass every check and keep their promises.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use cuport_model::Target;
use cuport_rules::{build, RuleSet, Status};

fn builtin() -> RuleSet {
    let (set, diags) = build(RuleSet::builtin_sources());
    let listing: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert!(
        diags.is_empty(),
        "built-in tables have problems:\n{}",
        listing.join("\n")
    );
    set
}

#[test]
fn builtin_tables_load_and_pass_check() {
    let set = builtin();
    assert!(RuleSet::builtin().is_ok());
    // Start-up skips the checks across files; they must hold here.
    let (_, problems) = cuport_rules::build(RuleSet::builtin_sources());
    assert!(problems.is_empty(), "{problems:#?}");
    for target in Target::ALL {
        assert!(
            set.known_cuda_names(target).next().is_some(),
            "{target} has no rules"
        );
    }
}

#[test]
fn ascend_memcpy_inserts_dest_max_and_maps_the_kind() {
    let set = builtin();
    let r = set
        .lookup(Target::Ascend, "cudaMemcpy")
        .expect("cudaMemcpy maps");
    assert_eq!(r.status(), Status::Rewrite);
    assert_eq!(r.target_name.as_deref(), Some("aclrtMemcpy"));
    let out = r
        .template()
        .expect("template")
        .apply(&["d", "s", "n", "cudaMemcpyDeviceToHost"])
        .unwrap();
    assert_eq!(out, "aclrtMemcpy(d, n, s, n, ACL_MEMCPY_DEVICE_TO_HOST)");
    assert!(r.headers().iter().any(|h| h == "acl/acl.h"));
    assert!(r.reference().is_some());
}

#[test]
fn ascend_event_flags_are_inverted_with_a_runtime_fallback() {
    let set = builtin();
    let r = set
        .lookup(Target::Ascend, "cudaEventCreateWithFlags")
        .expect("maps");
    let t = r.template().expect("template");
    assert_eq!(
        t.apply(&["&e", "cudaEventDisableTiming"]).unwrap(),
        "aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC)"
    );
    assert_eq!(
        t.apply(&["&e", "f"]).unwrap(),
        "aclrtCreateEventWithFlag(&e, cuport_acl_event_flags(f))"
    );
    assert_eq!(r.helpers(), ["cuport_acl_event_flags".to_owned()]);
}

#[test]
fn enum_map_values_resolve_as_names() {
    let set = builtin();
    let r = set
        .lookup(Target::Ascend, "cudaMemcpyHostToDevice")
        .expect("maps");
    assert_eq!(r.target_name.as_deref(), Some("ACL_MEMCPY_HOST_TO_DEVICE"));
}

#[test]
fn unknown_names_do_not_resolve() {
    let set = builtin();
    for target in Target::ALL {
        assert!(set.lookup(target, "cudaNoSuchFunction").is_none());
        assert!(set.lookup(target, "").is_none());
    }
}

#[test]
fn declarations_header_declares_the_functions_used() {
    let set = builtin();
    let header = set.declarations_header(Target::Ascend);
    assert!(header.contains("aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind);"));
    assert!(header.contains("typedef void *aclrtStream;"));
    assert!(header.contains("aclError cuport_acl_set_device(int32_t deviceId);"));
}

#[test]
fn with_user_file_layers_without_reparsing_and_reports_user_errors() {
    let dir = std::env::temp_dir().join(format!("cuport-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.toml");
    std::fs::write(&good, "[meta]\ntarget = \"musa\"\nsource = \"t\"\ncode = \"CP9000\"\n\n[[entry]]\ncuda = \"cudaMalloc\"\nstatus = \"renamed\"\nto = \"musaMallocManaged\"\n").unwrap();
    let set = RuleSet::builtin()
        .unwrap()
        .with_user_file(&good, 1)
        .unwrap();
    let r = set.lookup(Target::Musa, "cudaMalloc").unwrap();
    assert_eq!(r.target_name.as_deref(), Some("musaMallocManaged"));
    assert_eq!(
        set.lookup(Target::Hip, "cudaMalloc")
            .unwrap()
            .target_name
            .as_deref(),
        Some("hipMalloc")
    );
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[meta]\ntarget = \"musa\"\nsource = \"t\"\nbogus = 1\n",
    )
    .unwrap();
    let err = set.with_user_file(&bad, 2).unwrap_err();
    let first = err.diagnostics().first().unwrap().to_string();
    assert!(first.contains("bad.toml:4:1"), "{first}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Pattern names carry HIPIFY's first HIP release, so `--rocm-version`
/// gates them (Debian's HIP 5.2 lacks `hipDeviceSetLimit`).
#[test]
fn hip_pattern_names_carry_their_first_release() {
    let set = builtin();
    for (cuda, release) in [
        ("cudaDeviceSetLimit", "HIP >= 5.3.0"),
        ("cudaGraphAddMemFreeNode", "HIP >= 5.5.0"),
        ("curandStateSobol64", "HIP >= 6.2.0"),
        ("CURAND_ORDERING_QUASI_DEFAULT", "HIP >= 6.2.0"),
        ("cudaMalloc", "HIP >= 1.5.0"),
    ] {
        let r = set.lookup(Target::Hip, cuda).expect("maps on HIP");
        assert_eq!(r.target_version(), Some(release), "{cuda}");
        assert!(r.minimum_version().is_some(), "{cuda}: release parsed");
    }
}
