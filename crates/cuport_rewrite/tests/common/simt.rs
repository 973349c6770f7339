//! Syntax checks of Ascend C SIMT ports with g++ against the real
//! asc-devkit and AscendCL headers of a CANN release, through cuport's
//! stand-in for what Huawei's bisheng compiler provides implicitly
//! (`tests/simt_standin/`: its keywords, built-in types, variables and
//! functions, declared only). Used by `simt_compile.rs` here and mirrored by
//! `tests/corpus/corpus_check.py --mode ascend-simt`.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr
)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The unpacked CANN header archive (`cannvendor/`): `$CUPORT_CANN_VENDOR`,
/// else what `../shared/vendor/unpack-cann-headers.sh` prints. `None` when
/// neither exists; CI (which unpacks them) fails instead of skipping when
/// `.ci/run` found the archive (`CUPORT_REQUIRE_CANN_VENDOR`).
pub(crate) fn cann_vendor() -> Option<PathBuf> {
    if let Some(root) = std::env::var_os("CUPORT_CANN_VENDOR").map(PathBuf::from) {
        return root.join("cann-9.1.0").is_dir().then_some(root);
    }
    let script = workspace_root().join("../shared/vendor/unpack-cann-headers.sh");
    let unpacked = script
        .is_file()
        .then(|| Command::new("bash").arg(&script).output().ok())
        .flatten()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let found = unpacked.filter(|root| root.join("cann-9.1.0").is_dir());
    if found.is_none() {
        assert!(
            std::env::var_os("CUPORT_REQUIRE_CANN_VENDOR").is_none(),
            "the CANN header archive is required here (.ci/run found it): set CUPORT_CANN_VENDOR or check ../shared/vendor"
        );
        eprintln!("\n!!! SKIPPED: no CANN headers (../shared/vendor or $CUPORT_CANN_VENDOR); the SIMT compile check did not run !!!\n");
    }
    found
}

pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The g++ options of a SIMT syntax check for CANN `release`: the device
/// pass of bisheng's SIMT-only mode (`--npu-arch=dav-3510 --enable-simt`),
/// the stand-in forced in first, then the real headers.
pub(crate) fn simt_flags(vendor: &Path, release: &str) -> Vec<String> {
    let cann = vendor.join(format!("cann-{release}"));
    let devkit = cann.join("asc-devkit");
    let standin = workspace_root().join("tests/simt_standin");
    let mut flags: Vec<String> = [
        "-std=c++17",
        "-fsyntax-only",
        "-x",
        "c++",
        "-D__NPU_ARCH__=3510",
        "-D__NPU_COMPILER_INTERNAL_PURE_SIMT__",
        "-D__NPU_DEVICE__",
        // `assert` would call glibc's and the devkit's `__assert_fail`,
        // which g++ cannot tell apart (bisheng's passes can).
        "-DNDEBUG",
    ]
    .map(str::to_owned)
    .to_vec();
    flags.push("-include".into());
    flags.push(standin.join("asc_simt_standin.h").display().to_string());
    // HCCL is in no open CANN repository: the torch-npu 2.14.0 wheel's
    // (CANN 9.1.0), which `tests/corpus/fetch_toolchains.sh` fetches.
    // Its hccl.h includes "third_party/hccl/inc/hccl/hccl_types.h": the
    // wheel's include root too.
    let hccl: Vec<PathBuf> = std::env::var_os("CUPORT_CANN_2_14_0_INCLUDE")
        .map(PathBuf::from)
        .map(|root| vec![root.join("third_party/hccl/inc"), root])
        .unwrap_or_default();
    for dir in [
        standin,
        devkit.join("include"),
        devkit.join("include/simt_api"),
        devkit.join("include/utils"),
        devkit.clone(),
        cann.join("include"),
    ]
    .into_iter()
    .chain(hccl)
    {
        flags.push("-isystem".into());
        flags.push(dir.display().to_string());
    }
    flags
}

/// `k<<<cfg>>>(args)` → `k(args), cuport_chevron_config(cfg)`: g++ cannot
/// parse a launch; this keeps the kernel applied to its arguments (their
/// types are checked against its parameters) and hands the configuration
/// to the stand-in's `cuport_chevron_config(dim3, dim3, size_t, void*)`,
/// as bisheng types it. Comments and literals are skipped; line breaks are
/// kept, so errors keep their line numbers.
pub(crate) fn rewrite_launches(src: &str) -> String {
    let bytes = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if let Some(end) = literal_or_comment_end(bytes, i) {
            i = end;
            continue;
        }
        if !src[i..].starts_with("<<<") {
            i += 1;
            continue;
        }
        let Some(config_end) = close_at_depth_zero(bytes, i + 3, b">>>") else {
            break;
        };
        let open = config_end
            + 3
            + bytes[config_end + 3..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
        if bytes.get(open) != Some(&b'(') {
            break;
        }
        let Some(args_end) = close_at_depth_zero(bytes, open + 1, b")") else {
            break;
        };
        let config = &src[i + 3..config_end];
        out.push_str(&src[copied..i]);
        // The configuration's line breaks move behind the call.
        out.push_str(&src[open..=args_end]);
        out.push_str(", cuport_chevron_config(");
        out.push_str(config);
        out.push(')');
        i = args_end + 1;
        copied = i;
    }
    out.push_str(&src[copied..]);
    out
}

/// The end of a comment or string/character literal starting at `i`.
fn literal_or_comment_end(bytes: &[u8], i: usize) -> Option<usize> {
    let rest = &bytes[i..];
    if rest.starts_with(b"//") {
        return Some(memchr_or(bytes, i, b'\n'));
    }
    if rest.starts_with(b"/*") {
        let end = rest[2..].windows(2).position(|w| w == b"*/");
        return Some(end.map_or(bytes.len(), |e| i + 2 + e + 2));
    }
    let quote = *rest.first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let mut k = i + 1;
    while k < bytes.len() && bytes[k] != quote && bytes[k] != b'\n' {
        k += if bytes[k] == b'\\' { 2 } else { 1 };
    }
    Some((k + 1).min(bytes.len()))
}

fn memchr_or(bytes: &[u8], from: usize, b: u8) -> usize {
    bytes[from..]
        .iter()
        .position(|&c| c == b)
        .map_or(bytes.len(), |p| from + p)
}

/// Where `close` appears at bracket depth 0 from `from` on.
fn close_at_depth_zero(bytes: &[u8], from: usize, close: &[u8]) -> Option<usize> {
    let mut depth = 0i32;
    let mut i = from;
    while i < bytes.len() {
        if let Some(end) = literal_or_comment_end(bytes, i) {
            i = end;
            continue;
        }
        if depth == 0 && bytes[i..].starts_with(close) {
            return Some(i);
        }
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}
