//! `cuport_max`/`cuport_min` (mappings/ascend/helpers/host_math.h, what a
//! one-way Ascend port calls where host code called CUDA's `max`/`min`)
//! agree with CUDA's own host overloads: one program prints max and min of
//! each type pair CUDA's overloads resolve, over mixed signs, zero, large
//! values, infinities and NaN, with each result's type. nvcc (PyPI wheel,
//! `CUPORT_NVCC`) compiles it against CUDA's headers and the host runs it;
//! g++ compiles it against the helper. The outputs must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::Path;
use std::process::Command;

const PROGRAM: &str = r#"
#include <cstdio>
#include <cmath>
#include <limits>
#include <type_traits>
#ifdef CUPORT
#include "host_math.h"
#define MAX cuport_max
#define MIN cuport_min
#else
#define MAX max
#define MIN min
#endif

template <typename T>
void report(const char* what, T v) {
    const char* kind = std::is_floating_point<T>::value ? "float" : (std::is_signed<T>::value ? "signed" : "unsigned");
    if (std::is_floating_point<T>::value) {
        std::printf("%s %s%zu %.17g\n", what, kind, sizeof(T), (double)v);
    } else if (std::is_signed<T>::value) {
        std::printf("%s %s%zu %lld\n", what, kind, sizeof(T), (long long)v);
    } else {
        std::printf("%s %s%zu %llu\n", what, kind, sizeof(T), (unsigned long long)v);
    }
}

#define PAIR(A, B, a, b) { A x = (A)(a); B y = (B)(b); report("max(" #A "," #B "," #a "," #b ")", MAX(x, y)); report("min(" #A "," #B "," #a "," #b ")", MIN(x, y)); }
#define VALUES(A, B) PAIR(A, B, -3, 2) PAIR(A, B, 7, -1) PAIR(A, B, 0, 0) PAIR(A, B, 2000000000, 5) PAIR(A, B, 5, 2000000000)

int main() {
    VALUES(int, int)
    VALUES(unsigned int, unsigned int)
    VALUES(int, unsigned int)
    VALUES(unsigned int, int)
    VALUES(long, long)
    VALUES(unsigned long, unsigned long)
    VALUES(long, unsigned long)
    VALUES(unsigned long, long)
    VALUES(long long, long long)
    VALUES(unsigned long long, unsigned long long)
    VALUES(long long, unsigned long long)
    VALUES(float, float)
    VALUES(double, double)
    VALUES(float, double)
    VALUES(double, float)
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    PAIR(float, float, nan, 1.5f) PAIR(float, float, 1.5f, nan) PAIR(float, float, -inf, inf)
    PAIR(double, double, nan, -2.0) PAIR(double, float, 0.1, nan) PAIR(float, float, -0.0f, 0.0f)
    return 0;
}
"#;

fn run(mut command: Command, what: &str) -> String {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cuport_max_and_min_agree_with_cudas_host_overloads() {
    let Some(nvcc) = std::env::var_os("CUPORT_NVCC") else {
        eprintln!(
            "CUPORT_NVCC unset: cuport_max/cuport_min were not compared with CUDA's host max/min"
        );
        return;
    };
    let helpers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../mappings/ascend/helpers");
    let dir = tempfile::tempdir().unwrap();
    let (cuda_src, cpp_src) = (dir.path().join("ref.cu"), dir.path().join("ref.cpp"));
    std::fs::write(&cuda_src, PROGRAM).unwrap();
    std::fs::write(&cpp_src, PROGRAM).unwrap();
    let (cuda_bin, cpp_bin) = (dir.path().join("cuda"), dir.path().join("cpp"));
    // The wheel's static runtime (`<toolkit>/lib`): nvcc registers even
    // a program without kernels with it; nothing asks for a GPU.
    let lib = Path::new(&nvcc)
        .parent()
        .and_then(Path::parent)
        .expect("nvcc in <toolkit>/bin")
        .join("lib");
    let mut nvcc_build = Command::new(&nvcc);
    nvcc_build
        .arg("-L")
        .arg(&lib)
        .args(["-std=c++17", "-o"])
        .arg(&cuda_bin)
        .arg(&cuda_src);
    run(nvcc_build, "nvcc");
    let mut gxx_build = Command::new("g++");
    gxx_build
        .args(["-std=c++17", "-DCUPORT", "-I"])
        .arg(&helpers)
        .arg("-o")
        .arg(&cpp_bin)
        .arg(&cpp_src);
    run(gxx_build, "g++");
    let cuda = run(Command::new(&cuda_bin), "the nvcc program");
    let cuport = run(Command::new(&cpp_bin), "the g++ program");
    assert!(cuda.lines().count() >= 150, "{cuda}");
    let differences: Vec<String> = cuda
        .lines()
        .zip(cuport.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("CUDA {a}\ncuport {b}"))
        .collect();
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    assert_eq!(cuda.lines().count(), cuport.lines().count());
}
