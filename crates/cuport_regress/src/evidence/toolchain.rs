//! The tools the evidence needs, found through documented environment
//! variables: `CUPORT_CXX` (default `g++`) compiles the CPU runner,
//! `CUPORT_PYTHON` (default `python3`) runs the reference with the
//! `onnxruntime`, `onnx` and `numpy` packages. Both are checked before any
//! kernel runs, so a missing tool stops the command with nothing half-done.
//! `HIP_CPU_ROOT` (a checkout of github.com/ROCm/HIP-CPU, plus Debian's
//! `libtbb-dev`) selects AMD's HIP-CPU runtime instead of cuport's own
//! fiber runner.
use std::path::PathBuf;
use std::process::Command;

use super::EvidenceError;

/// What executes the kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    /// cuport's prelude: threads of a block as ucontext fibers (always
    /// available; handles `*_sync` intrinsics and cooperative groups).
    Fibers,
    /// AMD's HIP-CPU headers under this root.
    HipCpu(PathBuf),
}

impl Runner {
    pub fn describe(&self) -> String {
        match self {
            Runner::Fibers => super::RUNNER.to_string(),
            Runner::HipCpu(root) => format!("HIP-CPU ({}) with g++ and TBB", root.display()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Toolchain {
    pub runner: Runner,
    pub cxx: PathBuf,
    pub python: PathBuf,
    /// The reference's name and version, as the check found it.
    pub reference: String,
}

const PY_CHECK: &str =
    "import numpy, onnx, onnxruntime; print('onnxruntime ' + onnxruntime.__version__)";

impl Toolchain {
    /// Finds the tools from the environment and checks that they run.
    pub fn from_env() -> Result<Toolchain, EvidenceError> {
        let cxx = PathBuf::from(std::env::var_os("CUPORT_CXX").unwrap_or_else(|| "g++".into()));
        let python =
            PathBuf::from(std::env::var_os("CUPORT_PYTHON").unwrap_or_else(|| "python3".into()));
        check_cxx(&cxx)?;
        let reference = check_python(&python)?;
        let runner = match std::env::var_os("HIP_CPU_ROOT") {
            Some(root) => hip_cpu(PathBuf::from(root))?,
            None => Runner::Fibers,
        };
        Ok(Toolchain {
            runner,
            cxx,
            python,
            reference,
        })
    }
}

fn hip_cpu(root: PathBuf) -> Result<Runner, EvidenceError> {
    if root.join("include/hip/hip_runtime.h").is_file() {
        return Ok(Runner::HipCpu(root));
    }
    Err(EvidenceError::MissingTool {
        tool: "HIP-CPU".into(),
        why: format!("HIP_CPU_ROOT={} has no include/hip/hip_runtime.h", root.display()),
        fix: "point HIP_CPU_ROOT at a checkout of github.com/ROCm/HIP-CPU (and install libtbb-dev), or unset it to use cuport's own runner".into(),
    })
}

fn check_cxx(cxx: &PathBuf) -> Result<(), EvidenceError> {
    let missing = |why: String| EvidenceError::MissingTool {
        tool: cxx.display().to_string(),
        why,
        fix: "install a C++17 compiler (Debian: `apt-get install g++`) or set CUPORT_CXX".into(),
    };
    let out = Command::new(cxx)
        .arg("--version")
        .output()
        .map_err(|e| missing(e.to_string()))?;
    if !out.status.success() {
        return Err(missing(format!("`--version` exited with {}", out.status)));
    }
    Ok(())
}

fn check_python(python: &PathBuf) -> Result<String, EvidenceError> {
    let missing = |why: String| {
        EvidenceError::MissingTool {
        tool: python.display().to_string(),
        why,
        fix: "install the reference with `pip install onnxruntime onnx numpy` and set CUPORT_PYTHON to that interpreter".into(),
    }
    };
    let out = Command::new(python)
        .args(["-c", PY_CHECK])
        .output()
        .map_err(|e| missing(e.to_string()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().last().unwrap_or("").to_string();
        return Err(missing(last));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
