//! Ascend C kernel skeletons: reviewed snapshots for the fixtures' kernels,
//! and every skeleton must be valid C++ (`g++ -fsyntax-only`) against a stub
//! `kernel_operator.h` that declares only the AscendC names skeletons use.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use cuport_analyze::{scan_tree, NO_PROGRESS};
use cuport_model::Target;
use cuport_rewrite::{ascend_skeletons, file_skeletons, KernelSkeleton, MigrateOptions};

/// The AscendC surface the skeletons use, as declarations only. The real
/// header's signatures differ in detail; this checks the skeleton's syntax
/// and name use, not its semantics.
const STUB_KERNEL_OPERATOR_H: &str = r#"#pragma once
#include <cstddef>
#include <cstdint>
#define __aicore__
#define __global__
#define __gm__
struct half { uint16_t bits; };
struct bfloat16_t { uint16_t bits; };
namespace AscendC {
enum class QuePosition { VECIN, VECOUT };
template <typename T> class LocalTensor {};
template <typename T> class GlobalTensor {
public:
    void SetGlobalBuffer(T* buffer, uint64_t size);
    GlobalTensor operator[](uint64_t offset) const;
};
template <QuePosition P, int32_t Depth> class TQue {
public:
    template <typename T> LocalTensor<T> AllocTensor();
    template <typename T> LocalTensor<T> DeQue();
    template <typename T> void EnQue(const LocalTensor<T>& tensor);
    template <typename T> void FreeTensor(LocalTensor<T>& tensor);
};
class TPipe {
public:
    template <typename Q> void InitBuffer(Q& queue, int32_t num, uint32_t length);
};
int64_t GetBlockIdx();
template <typename T> void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t n);
template <typename T> void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t n);
}  // namespace AscendC
"#;

fn fixture_skeletons(name: &str) -> Vec<KernelSkeleton> {
    let dir = fixtures_root().join(name);
    let report = scan_tree(&dir, &scan_options(), NO_PROGRESS).unwrap();
    let migration =
        cuport_rewrite::migrate_report(&report, rules(), &MigrateOptions::new(Target::Ascend))
            .unwrap();
    ascend_skeletons(&report, &migration)
}

/// Runs `g++ -fsyntax-only` on each skeleton; `None` when g++ is missing
/// (outside CI only: CI must have it).
fn syntax_errors(skeletons: &[KernelSkeleton]) -> Option<Vec<String>> {
    if Command::new("g++").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "g++ is required in CI for the skeleton syntax check"
        );
        eprintln!("SKIPPED: g++ not found; Ascend C skeletons were not syntax-checked");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kernel_operator.h"), STUB_KERNEL_OPERATOR_H).unwrap();
    let mut errors = Vec::new();
    for (i, skeleton) in skeletons.iter().enumerate() {
        let file = dir.path().join(format!("skeleton_{i}.cpp"));
        std::fs::write(&file, &skeleton.text).unwrap();
        let output = Command::new("g++")
            .args(["-std=c++17", "-fsyntax-only", "-Wall", "-Werror", "-I"])
            .arg(dir.path())
            .arg(&file)
            .output()
            .unwrap();
        if !output.status.success() {
            errors.push(format!(
                "{} ({}):\n{}",
                skeleton.path,
                skeleton.kernel,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    Some(errors)
}

#[test]
fn fixture_skeletons_as_reviewed() {
    for fixture in ["vector_add", "reduction"] {
        for skeleton in fixture_skeletons(fixture) {
            let name = format!("skeleton_{fixture}_{}", skeleton.kernel);
            insta::assert_snapshot!(name, format!("{}\n\n{}", skeleton.path, skeleton.text));
        }
    }
}

#[test]
fn fixture_skeletons_list_paths_and_operators() {
    let skeletons = fixture_skeletons("reduction");
    let paths: Vec<&str> = skeletons.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "reduce.cu.ascend/weighted_sum_kernel.cpp",
            "reduce.cuh.ascend/reduce_sum_kernel.cpp"
        ]
    );
    // A weighted sum and a sum that also counts positives are no plain
    // ReduceSum: recognition names no operator for them.
    assert!(skeletons.iter().all(|s| s.operator.is_none()));
    let vector_add = fixture_skeletons("vector_add");
    assert_eq!(vector_add.len(), 1);
    let hint = vector_add[0].operator.as_deref().unwrap_or_default();
    assert!(
        hint.starts_with("`add`") && hint.contains("aclnnAdd"),
        "{hint}"
    );
    assert!(vector_add[0]
        .text
        .contains("void vector_add(GM_ADDR a, GM_ADDR b, GM_ADDR c, int n)"));
}

#[test]
fn every_fixture_skeleton_is_valid_cpp() {
    let mut all = Vec::new();
    for dir in fixture_dirs() {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        all.extend(fixture_skeletons(&name));
    }
    assert!(
        all.len() >= 5,
        "expected the fixtures' kernels, got {}",
        all.len()
    );
    if let Some(errors) = syntax_errors(&all) {
        assert!(errors.is_empty(), "{}", errors.join("\n"));
    }
}

/// Signatures the fixtures do not have: overloads, `void*`, `T**`, const
/// scalars, arrays, no pointers at all, a macro continuation in the body.
const UNUSUAL: &str = r#"
__global__ void fill(void* out, const int value, size_t bytes) {
    char* p = (char*)out; p[threadIdx.x] = value;
}
__global__ void fill(float* out, float value) { out[threadIdx.x] = value; }
__global__ void gather(const float* const* rows, float out[], int cols) {
#define AT(r, c) \
    rows[r][c]
    out[threadIdx.x] = AT(blockIdx.x, threadIdx.x);
}
__global__ void tick(int step) { if (step == 0) { printf("tick\n"); } }
__global__ void scale_kernel(__half* data, __half factor) { data[threadIdx.x] *= factor; }
template <typename scalar_t, bool kInplace>
__global__ void axpy(scalar_t alpha, const scalar_t* __restrict__ x, scalar_t* y, long n) {
    y[threadIdx.x] = alpha * x[threadIdx.x] + y[threadIdx.x];
}
"#;

#[test]
fn unusual_signatures_give_valid_cpp() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), UNUSUAL).unwrap();
    let report = scan_tree(dir.path(), &scan_options(), NO_PROGRESS).unwrap();
    let file = &report.files[0];
    let skeletons = file_skeletons(&file.path, UNUSUAL.as_bytes(), &file.analysis);
    let paths: Vec<&str> = skeletons.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "k.cu.ascend/fill_kernel.cpp",
            "k.cu.ascend/fill_2_kernel.cpp",
            "k.cu.ascend/gather_kernel.cpp",
            "k.cu.ascend/tick_kernel.cpp",
            "k.cu.ascend/scale_kernel.cpp",
            "k.cu.ascend/axpy_kernel.cpp"
        ]
    );
    assert!(skeletons[0]
        .text
        .contains("AscendC::GlobalTensor<uint8_t> outGm;"));
    assert!(skeletons[2].text.contains("pointer to pointers"));
    assert!(skeletons[4].text.contains("GM_ADDR data, half factor"));
    assert!(skeletons[5]
        .text
        .contains("void axpy(float alpha, GM_ADDR x, GM_ADDR y, long n)"));
    if let Some(errors) = syntax_errors(&skeletons) {
        assert!(errors.is_empty(), "{}", errors.join("\n"));
    }
    assert!(Path::new(&dir.path().join("k.cu")).exists());
}
