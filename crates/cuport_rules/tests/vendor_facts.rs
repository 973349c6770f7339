//! Every Ascend row against the real headers of each CANN release
//! (`cuport rules check-headers`): AscendCL and aclnn of 8.5.0, 9.0.0 and
//! 9.1.0 from `../shared/vendor` (`$CUPORT_CANN_VENDOR`), HCCL from the
//! torch-npu wheels (`tests/corpus/fetch_toolchains.sh`: 2.14.0 for CANN
//! 9.1.0, 2.6.0 for 8.2.RC1). A rule that writes a name absent from a
//! release it applies to, a signature or an enumerator value that differs
//! from the header's, fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod vendor;

use std::borrow::Cow;
use std::path::PathBuf;

use cuport_model::Target;
use cuport_rules::vendor_headers::{HeaderCheck, VendorHeaders};
use cuport_rules::{RuleSet, Source};

/// HCCL include directories of the torch-npu wheels, per CANN release.
fn hccl_dirs() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    // torch-npu 2.6.0's copy for CANN 8.2.RC1 is a trimmed subset
    // (HcclGetRankSize, documented since CANN 7.0, is not in it): it cannot
    // say what 8.2.RC1 lacks, so only 2.14.0's is used.
    for (release, var) in [("9.1.0", "CUPORT_CANN_2_14_0_INCLUDE")] {
        match std::env::var_os(var) {
            Some(root) => out.push((
                release.to_owned(),
                PathBuf::from(root).join("third_party/hccl/inc"),
            )),
            None => {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "{var} is required in CI (.ci/run runs tests/corpus/fetch_toolchains.sh)"
                );
                eprintln!("\n!!! {var} is not set: HCCL rows not checked for CANN {release} !!!\n");
            }
        }
    }
    out
}

fn check(set: &RuleSet) -> Option<HeaderCheck> {
    let root = vendor::cann_vendor(
        "cann-9.1.0/include/acl",
        "the Ascend rows against each release",
    )?;
    let headers = VendorHeaders::discover(Target::Ascend, Some(&root), &hccl_dirs()).unwrap();
    Some(set.check_vendor_headers(&headers).unwrap())
}

/// The built-in tables with `from` replaced by `to` in the file `name`.
fn with_edit(name: &str, from: &str, to: &str) -> RuleSet {
    let mut sources = RuleSet::builtin_sources();
    let source = sources.iter_mut().find(|s| s.name == name).unwrap();
    assert!(source.text.contains(from), "{name} has no `{from}`");
    source.text = Cow::Owned(source.text.replacen(from, to, 1));
    RuleSet::from_sources(sources).unwrap()
}

fn with_rows(rows: &str) -> RuleSet {
    let mut sources = RuleSet::builtin_sources();
    sources.push(Source {
        name: "test-rows.toml".into(),
        text: Cow::Owned(rows.to_owned()),
        priority: 1,
        builtin: false,
    });
    RuleSet::from_sources(sources).unwrap()
}

#[test]
fn every_ascend_row_agrees_with_the_headers_of_every_release() {
    let Some(check) = check(&RuleSet::builtin().unwrap()) else {
        return;
    };
    let report = check.render();
    eprintln!("{report}");
    let releases: Vec<String> = check
        .releases
        .iter()
        .map(|r| r.release.to_string())
        .collect();
    for wanted in ["8.5.0", "9.0.0", "9.1.0"] {
        assert!(
            releases.iter().any(|r| r == wanted),
            "no {wanted}: {releases:?}"
        );
    }
    for r in &check.releases {
        assert!(
            r.rules_checked > 100,
            "{}: {} rules",
            r.release,
            r.rules_checked
        );
        assert!(
            r.functions_compared > 60,
            "{}: {} functions",
            r.release,
            r.functions_compared
        );
    }
    assert_eq!(check.problem_count(), 0, "{report}");
}

const PREFIX: &str = "[meta]\ntarget = \"ascend\"\nlibrary = \"runtime\"\nsource = \"test\"\nreference = \"test\"\ncode = \"CP9000\"\n";

#[test]
fn a_row_writing_a_name_no_release_declares_fails() {
    let set = with_rows(&format!(
        "{PREFIX}[[entry]]\ncuda = \"cudaProfilerStart\"\nstatus = \"renamed\"\nto = \"aclrtNoSuchFunction\"\n"
    ));
    let Some(check) = check(&set) else {
        return;
    };
    let report = check.render();
    for r in &check.releases {
        assert!(
            r.problems
                .iter()
                .any(|p| p.message.contains("aclrtNoSuchFunction")),
            "{}: {report}",
            r.release
        );
    }
}

#[test]
fn a_signature_other_than_the_headers_fails() {
    let set = with_edit(
        "mappings/ascend/runtime.toml",
        "name = \"aclrtSetDevice\"\nreturns = \"aclError\"\nparams = [\"int32_t deviceId\"]",
        "name = \"aclrtSetDevice\"\nreturns = \"aclError\"\nparams = [\"uint32_t deviceId\"]",
    );
    let Some(check) = check(&set) else {
        return;
    };
    let r = check
        .releases
        .iter()
        .find(|r| r.release.to_string() == "9.1.0")
        .unwrap();
    assert!(
        r.problems
            .iter()
            .any(|p| p.name == "aclrtSetDevice" && p.message.contains("int32_t")),
        "{}",
        check.render()
    );
}

#[test]
fn a_name_newer_than_the_rows_boundary_fails_until_the_boundary_is_set() {
    // A runtime function 9.1.0 adds (acl_rt.h: 305 functions at 8.5.0, 360 at 9.1.0).
    let Some(root) = vendor::cann_vendor("cann-9.1.0/include/acl", "the boundary check") else {
        return;
    };
    let headers = VendorHeaders::discover(Target::Ascend, Some(&root), &[]).unwrap();
    let old = &headers
        .releases
        .iter()
        .find(|r| r.release.to_string() == "8.5.0")
        .unwrap()
        .facts;
    let new = &headers
        .releases
        .iter()
        .find(|r| r.release.to_string() == "9.1.0")
        .unwrap()
        .facts;
    let added = new
        .functions
        .keys()
        .find(|n| n.starts_with("aclrt") && !old.functions.contains_key(*n))
        .expect("9.1.0 adds runtime functions");
    let unbounded = with_rows(&format!(
        "{PREFIX}[[entry]]\ncuda = \"cudaProfilerStart\"\nstatus = \"manual\"\neffort = \"low\"\nnote = \"n\"\nto = \"{added}\"\n"
    ));
    let set_check = unbounded.check_vendor_headers(&headers).unwrap();
    let r850 = set_check
        .releases
        .iter()
        .find(|r| r.release.to_string() == "8.5.0")
        .unwrap();
    assert!(
        r850.problems
            .iter()
            .any(|p| p.message.contains(added.as_str()) && p.message.contains("target-version")),
        "{}",
        set_check.render()
    );
    let bounded = with_rows(&format!(
        "{PREFIX}[[entry]]\ncuda = \"cudaProfilerStart\"\nstatus = \"manual\"\neffort = \"low\"\nnote = \"n\"\nto = \"{added}\"\ntarget-version = \"CANN >= 9.1.0\"\n"
    ));
    let set_check = bounded.check_vendor_headers(&headers).unwrap();
    assert!(
        set_check.releases.iter().all(|r| r
            .problems
            .iter()
            .all(|p| !p.message.contains(added.as_str()))),
        "{}",
        set_check.render()
    );
}

#[test]
fn an_enumerator_value_other_than_the_headers_fails() {
    let set = with_edit(
        "mappings/ascend/runtime.toml",
        "\"ACL_SUCCESS = 0\"",
        "\"ACL_SUCCESS = 1\"",
    );
    let Some(check) = check(&set) else {
        return;
    };
    for r in &check.releases {
        assert!(
            r.problems.iter().any(|p| p.name.ends_with("::ACL_SUCCESS")),
            "{}: {}",
            r.release,
            check.render()
        );
    }
}

/// The rows named `aclnnop/aclnn_log_softmax.h`, which only v9.1.0 has;
/// every release declares the operator in `aclnnop/aclnn_logsoftmax.h`.
#[test]
fn a_header_other_than_the_releases_fails_for_that_release() {
    let set = with_edit(
        "mappings/ascend/aclnn.toml",
        "name = \"aclnnLogSoftmax\"\nheader = \"aclnnop/aclnn_logsoftmax.h\"",
        "name = \"aclnnLogSoftmax\"\nheader = \"aclnnop/aclnn_log_softmax.h\"",
    );
    let Some(check) = check(&set) else {
        return;
    };
    for r in &check.releases {
        let flagged = r
            .problems
            .iter()
            .any(|p| p.name == "aclnnLogSoftmax" && p.message.contains("aclnn_logsoftmax.h"));
        let release = r.release.to_string();
        assert_eq!(flagged, release != "9.1.0", "{release}: {}", check.render());
    }
}
