//! Builds one CPU executable per kernel (prelude + the file's device code +
//! a generated `main`) and runs it once per case. `main` reads each pointer
//! parameter's elements from `<param>.bin`, each value parameter from
//! `scalars.txt`, the launch from `launch.txt`, launches, and writes every
//! output tensor to `<param>.out.bin`.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::cases::{domain_values, input_domains, input_values, Case};
use super::{expr, source, EvidenceError, KernelSpec, ParamKind, Runner, Toolchain};
use crate::dtype::DType;

const PRELUDE: &str = include_str!("cuda_cpu.h");
const HIP_CPU_PRELUDE: &str = include_str!("hip_cpu.h");

/// A case that runs longer than this is stopped (a barrier some threads
/// never reach would otherwise spin forever).
const CASE_TIMEOUT: Duration = Duration::from_secs(120);

/// Compiles the runner for `spec` in `work`; returns the executable.
pub(super) fn build(
    spec: &KernelSpec,
    tools: &Toolchain,
    work: &Path,
) -> Result<PathBuf, EvidenceError> {
    let mut device = source::device_source(&spec.file, &spec.kernel)?;
    // Both preludes are written as `cuda_cpu.h`, so `main.cpp` includes
    // whichever the runner uses.
    let prelude = match tools.runner {
        Runner::Fibers => PRELUDE,
        Runner::HipCpu(_) => HIP_CPU_PRELUDE,
    };
    let files = [
        ("cuda_cpu.h", prelude.to_string()),
        ("main.cpp", main_source(spec, &tools.runner)?),
    ];
    for (name, text) in files {
        let path = work.join(name);
        std::fs::write(&path, text).map_err(EvidenceError::io(path))?;
    }
    let binary = work.join("runner");
    for _ in 0..MAX_COMPILES {
        let path = work.join("kernel.inc");
        std::fs::write(&path, device.render()).map_err(EvidenceError::io(path))?;
        let mut command = Command::new(&tools.cxx);
        command
            .args(["-std=c++17", "-O1", "-w", "-fno-strict-aliasing", "-o"])
            .arg(&binary)
            .arg(work.join("main.cpp"));
        if let Runner::HipCpu(root) = &tools.runner {
            command
                .arg(format!("-I{}", root.join("include").display()))
                .args(["-ltbb", "-pthread"]);
        }
        let out = command.output().map_err(EvidenceError::io(&tools.cxx))?;
        if out.status.success() {
            return Ok(binary);
        }
        // Every piece with an error goes at once (a file of many kernels
        // that use what the runner lacks would need a compile per kernel).
        let (lines, message) = errors(&out.stderr);
        let mut removed = false;
        for line in lines {
            removed |= device.remove_at_line(line);
        }
        if !removed {
            return Err(EvidenceError::Compile(message));
        }
    }
    Err(EvidenceError::Compile(format!(
        "still failing after removing {MAX_COMPILES} host declarations"
    )))
}

/// How often a host declaration that does not compile is removed and the
/// runner compiled again.
const MAX_COMPILES: usize = 12;

/// The `kernel.inc` lines of all errors, and the text of the first one
/// that is in `kernel.inc` (else the first error at all).
fn errors(stderr: &[u8]) -> (Vec<usize>, String) {
    let text = String::from_utf8_lossy(stderr);
    let error_lines: Vec<&str> = text.lines().filter(|l| l.contains("error")).collect();
    let line_of = |l: &str| -> Option<usize> {
        l.split_once("kernel.inc:")
            .and_then(|(_, rest)| rest.split(':').next())
            .and_then(|n| n.parse().ok())
    };
    let lines = error_lines.iter().filter_map(|l| line_of(l)).collect();
    let first = error_lines
        .iter()
        .find(|l| line_of(l).is_some())
        .or(error_lines.first())
        .map_or("no message", |l| l);
    let message = first.rsplit_once("error:").map_or(first, |(_, m)| m).trim();
    (lines, message.to_string())
}

/// How the runner holds a pointer parameter's elements: the scalar type
/// of its buffer, and for CUDA's vector types (`float4*`: llm.c's encoder
/// loads 128 bits at a time) the vector type and its width, the buffer
/// then being passed as that many scalars per element.
fn element_type(c_type: &str) -> Option<(&'static str, Option<(&'static str, usize)>)> {
    let base = c_type
        .replace("const", " ")
        .replace("__restrict__", " ")
        .replace('*', " ");
    match base.trim() {
        "float" => Some(("float", None)),
        "int" => Some(("int", None)),
        "float2" => Some(("float", Some(("float2", 2)))),
        "float4" => Some(("float", Some(("float4", 4)))),
        "int2" => Some(("int", Some(("int2", 2)))),
        "int4" => Some(("int", Some(("int4", 4)))),
        _ => None,
    }
}

fn main_source(spec: &KernelSpec, runner: &Runner) -> Result<String, EvidenceError> {
    let mut body = String::new();
    let mut args = Vec::new();
    for (i, p) in spec.params.iter().enumerate() {
        let line = match &p.kind {
            ParamKind::Tensor { optional, .. } => {
                let (ty, vector) = element_type(&p.c_type).ok_or_else(|| {
                    EvidenceError::Unsupported(format!(
                        "parameter `{}` has element type `{}`; the runner handles float, int and their 2- and 4-wide vectors",
                        p.name, p.c_type
                    ))
                })?;
                let data = match vector {
                    Some((vector, _)) => format!("reinterpret_cast<{vector}*>(p{i}.data())"),
                    None => format!("p{i}.data()"),
                };
                // A case without the file passes the optional pointer as null.
                args.push(if *optional {
                    format!("p{i}.empty() ? nullptr : {data}")
                } else {
                    data
                });
                let mut line = format!(
                    "  std::vector<{ty}> p{i} = load<{ty}>(dir, \"{}\");\n",
                    p.name
                );
                if let Some((vector, width)) = vector {
                    // A buffer of whole vectors only: the kernel would read
                    // past a partial one.
                    let _ = writeln!(
                        line,
                        "  if (p{i}.size() % {width} != 0) {{ std::fprintf(stderr, \"`{}` has %zu elements, no multiple of {width} ({vector})\\n\", p{i}.size()); return 4; }}",
                        p.name
                    );
                }
                line
            }
            ParamKind::Scalar if p.c_type.contains('*') => {
                return Err(EvidenceError::Unsupported(format!(
                    "pointer parameter `{}` is no tensor of the rule",
                    p.name
                )))
            }
            ParamKind::Scalar => {
                args.push(format!("p{i}"));
                format!(
                    "  {} p{i} = ({}) scalar(dir, \"{}\");\n",
                    p.c_type, p.c_type, p.name
                )
            }
        };
        body.push_str(&line);
    }
    let launch = match runner {
        Runner::Fibers => format!(
            "  cuport::launch(l[0], l[1], shared, [&] {{ {}({}); }});",
            spec.kernel,
            args.join(", ")
        ),
        Runner::HipCpu(_) => format!(
            "  hipLaunchKernelGGL({}, l[0], l[1], shared, 0, {});\n  if (hipDeviceSynchronize() != hipSuccess) return 3;",
            spec.kernel,
            args.join(", ")
        ),
    };
    let _ = writeln!(body, "{launch}");
    for (i, p) in spec.params.iter().enumerate() {
        if matches!(p.kind, ParamKind::Tensor { role, .. } if role.is_written()) {
            let _ = writeln!(body, "  save(dir, \"{}\", p{i});", p.name);
        }
    }
    Ok(format!("{MAIN_HEAD}{body}  return 0;\n}}\n"))
}

const MAIN_HEAD: &str = r#"#include "cuda_cpu.h"
#include "kernel.inc"
#include <fstream>
#include <string>
template <class T> std::vector<T> load(const std::string& dir, const std::string& name) {
  std::ifstream f(dir + "/" + name + ".bin", std::ios::binary | std::ios::ate);
  if (!f) return std::vector<T>();
  std::vector<T> v(size_t(f.tellg()) / sizeof(T));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * sizeof(T)));
  return v;
}
template <class T> void save(const std::string& dir, const std::string& name, const std::vector<T>& v) {
  std::ofstream f(dir + "/" + name + ".out.bin", std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(T)));
}
double scalar(const std::string& dir, const std::string& name) {
  std::ifstream f(dir + "/scalars.txt");
  std::string key;
  double value;
  while (f >> key >> value) if (key == name) return value;
  std::fprintf(stderr, "no value for %s\n", name.c_str());
  std::exit(2);
}
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string dir = argv[1];
  std::ifstream lf(dir + "/launch.txt");
  unsigned g[3], b[3];
  size_t shared;
  lf >> g[0] >> g[1] >> g[2] >> b[0] >> b[1] >> b[2] >> shared;
  dim3 l[2] = {dim3(g[0], g[1], g[2]), dim3(b[0], b[1], b[2])};
"#;

/// Writes the case's inputs and runs the kernel on them.
pub(super) fn run_case(
    spec: &KernelSpec,
    case: &Case,
    binary: &Path,
    dir: &Path,
) -> Result<(), EvidenceError> {
    std::fs::create_dir_all(dir).map_err(EvidenceError::io(dir))?;
    write_inputs(spec, case, dir)?;
    write_launch(spec, case, dir)?;
    execute(case, binary, dir, &[])
}

/// Runs the fiber runner again on the inputs of `dir`, with the threads of
/// each block resumed in the opposite order, in a new directory beside it
/// (returned), whose `<param>.out.bin` can be compared with `dir`'s.
pub(super) fn rerun_reversed(
    case: &Case,
    binary: &Path,
    dir: &Path,
) -> Result<PathBuf, EvidenceError> {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push("-reversed");
    let reversed = dir.with_file_name(name);
    std::fs::create_dir_all(&reversed).map_err(EvidenceError::io(&reversed))?;
    for entry in std::fs::read_dir(dir).map_err(EvidenceError::io(dir))? {
        let path = entry.map_err(EvidenceError::io(dir))?.path();
        let file = path.file_name().unwrap_or_default().to_string_lossy();
        let written = [".out.bin", ".ref.bin", ".oracle.bin"]
            .iter()
            .any(|end| file.ends_with(end));
        if path.is_file() && !written {
            let to = reversed.join(path.file_name().unwrap_or_default());
            std::fs::copy(&path, &to).map_err(EvidenceError::io(&to))?;
        }
    }
    execute(case, binary, &reversed, &[("CUPORT_SCHEDULE", "reverse")])?;
    Ok(reversed)
}

fn execute(
    case: &Case,
    binary: &Path,
    dir: &Path,
    env: &[(&str, &str)],
) -> Result<(), EvidenceError> {
    let mut child = Command::new(binary)
        .arg(dir)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(EvidenceError::io(binary))?;
    let started = Instant::now();
    let failed = |why: String| EvidenceError::Run {
        case: case.name.clone(),
        why,
    };
    loop {
        match child.try_wait().map_err(EvidenceError::io(binary))? {
            Some(status) if status.success() => return Ok(()),
            Some(status) => {
                let mut said = String::new();
                if let Some(mut stderr) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut stderr, &mut said);
                }
                let last = said.lines().rev().find(|l| !l.trim().is_empty());
                let why = match last {
                    Some(line) => format!("the runner exited with {status}: {}", line.trim()),
                    None => format!("the runner exited with {status}"),
                };
                return Err(failed(why));
            }
            None if started.elapsed() > CASE_TIMEOUT => {
                let _ = child.kill();
                return Err(failed(format!(
                    "no result after {}s",
                    CASE_TIMEOUT.as_secs()
                )));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Element counts of every tensor in this case.
pub(super) fn tensor_shape(shape: &str, case: &Case) -> Result<Vec<usize>, EvidenceError> {
    Ok(expr::eval_list(shape, &case.scalars)?
        .into_iter()
        .map(|v| v.max(0.0) as usize)
        .collect())
}

fn write_inputs(spec: &KernelSpec, case: &Case, dir: &Path) -> Result<(), EvidenceError> {
    let domains = input_domains(spec, case)?;
    let mut scalars = String::new();
    for p in &spec.params {
        match &p.kind {
            ParamKind::Tensor { .. } if case.is_absent(&p.name) => {}
            ParamKind::Tensor {
                role, shape, dtype, ..
            } => {
                let count: usize = tensor_shape(shape, case)?.iter().product();
                // Outputs start as NaN, so an element the kernel never
                // writes cannot match the reference by accident.
                let values = if !role.is_read() {
                    vec![f32::NAN; count]
                } else if let Some(domain) = domains.get(&p.name) {
                    domain_values(case, &p.name, count, domain)
                } else {
                    input_values(case, &p.name, count)
                };
                let bytes = encode(&values, *dtype);
                let path = dir.join(format!("{}.bin", p.name));
                std::fs::write(&path, bytes).map_err(EvidenceError::io(path))?;
            }
            ParamKind::Scalar => {
                let value = case.scalars.get(&p.name).copied().unwrap_or(0.0);
                let _ = writeln!(scalars, "{} {value}", p.name);
            }
        }
    }
    let path = dir.join("scalars.txt");
    std::fs::write(&path, scalars).map_err(EvidenceError::io(path))
}

fn encode(values: &[f32], dtype: DType) -> Vec<u8> {
    match dtype {
        DType::I32 => values
            .iter()
            .flat_map(|v| (*v as i32).to_le_bytes())
            .collect(),
        _ => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

fn write_launch(spec: &KernelSpec, case: &Case, dir: &Path) -> Result<(), EvidenceError> {
    let grid = dims(&spec.launch.grid, case)?;
    let block = dims(&spec.launch.block, case)?;
    let shared = expr::eval(&spec.launch.shared, &case.scalars)?;
    let text = format!(
        "{} {} {} {} {} {} {}\n",
        grid[0], grid[1], grid[2], block[0], block[1], block[2], shared as u64
    );
    let path = dir.join("launch.txt");
    std::fs::write(&path, text).map_err(EvidenceError::io(path))
}

/// `256` or `dim3(32, 8)` as three extents.
fn dims(text: &str, case: &Case) -> Result<[u64; 3], EvidenceError> {
    // Exactly one pair of parentheses goes: `dim3(ceil_div(M, 128), 2)`
    // ends in two `)`, and the inner one belongs to the call.
    let inner = text
        .trim()
        .strip_prefix("dim3")
        .map(|t| {
            let t = t.trim();
            t.strip_prefix('(')
                .and_then(|t| t.strip_suffix(')'))
                .unwrap_or(t)
        })
        .unwrap_or(text);
    let values = expr::eval_list(inner, &case.scalars)?;
    let mut out = [1u64; 3];
    for (slot, v) in out.iter_mut().zip(values) {
        *slot = v.max(1.0) as u64;
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::evidence::cases::Values;

    #[test]
    fn a_dim3_of_calls_keeps_the_calls_parentheses() {
        let case = Case {
            name: "t".into(),
            scalars: [("M".to_string(), 300.0), ("N".to_string(), 5.0)].into(),
            sizes: vec!["M".into(), "N".into()],
            values: Values::Random,
            absent: Vec::new(),
        };
        let grid = dims("dim3(ceil_div(M, 128), ceil_div(N, 2))", &case).unwrap();
        assert_eq!(grid, [3, 3, 1]);
        assert_eq!(dims("dim3(16, 16)", &case).unwrap(), [16, 16, 1]);
        assert_eq!(dims("ceil_div(M, 256)", &case).unwrap(), [2, 1, 1]);
    }
}
