//! NVIDIA: driver (CUDA driver API and NVML), GPUs, MPS, CUDA toolkit.
use std::path::PathBuf;

use crate::ffi::{self, CudaDriver, FfiError, Nvml};
use crate::probe::{under, StackProbe};
use crate::report::{Device, Level, Mig, Outcome};
use crate::{locate, tool, Config};

const LIBCUDA: &str = "libcuda.so.1";
const LIBNVML: &str = "libnvidia-ml.so.1";
const MPS_PROCESSES: [&str; 2] = ["nvidia-cuda-mps-control", "nvidia-cuda-mps-server"];

pub(crate) fn probe(config: &Config) -> StackProbe {
    let mut probe = StackProbe::new("cuda", "NVIDIA CUDA");
    let driver = driver_api(&mut probe, config);
    let nvml = nvml(&mut probe, config);
    probe.devices(devices(driver.as_ref(), nvml.as_ref()));
    mps(&mut probe, config);
    let toolkit = toolkit(&mut probe, config);
    // NVML reports the same number; it is the fallback when libcuda fails.
    let driver_version = driver
        .as_ref()
        .map(|d| d.version)
        .or_else(|| nvml.as_ref().and_then(|n| n.cuda_driver_version));
    compare_toolkit(&mut probe, driver_version, &toolkit);
    probe
}

/// `12020` -> `12.2`.
pub(crate) fn cuda_version_text(version: i32) -> String {
    format!("{}.{}", version / 1000, (version % 1000) / 10)
}

fn driver_api(probe: &mut StackProbe, config: &Config) -> Option<CudaDriver> {
    let what = format!("CUDA driver API ({LIBCUDA})");
    let library = driver_library(probe, config, &what, LIBCUDA)?;
    let driver = match tool::bounded(config.timeout, move || ffi::cuda_driver(&library)) {
        None => {
            probe.timed_out(what, config);
            return None;
        }
        Some(Err(err @ FfiError::Load { .. })) => {
            probe.check(what, Outcome::NotFound, err.to_string());
            return None;
        }
        Some(Err(err)) => {
            probe.check(what, Outcome::Failed, err.to_string());
            return None;
        }
        Some(Ok(driver)) => driver,
    };
    let version = cuda_version_text(driver.version);
    probe.check(what, Outcome::Found, format!("supports CUDA {version}"));
    match &driver.devices {
        Ok(devices) if devices.is_empty() => no_devices(probe, "cuDeviceGetCount"),
        Ok(devices) => probe.check("CUDA devices", Outcome::Found, devices.len().to_string()),
        Err(err) => {
            probe.check("CUDA devices", Outcome::Failed, err.to_string());
            probe.finding(
                Level::Warning,
                "cuda-init-failed",
                format!("the NVIDIA driver library loads but {err}"),
                "check that the kernel module is loaded (nvidia-smi), that /dev/nvidia* exist in this container, and CUDA_VISIBLE_DEVICES",
            );
        }
    }
    Some(driver)
}

fn driver_library(
    probe: &mut StackProbe,
    config: &Config,
    what: &str,
    soname: &str,
) -> Option<String> {
    let library = locate::driver_library(config, soname);
    if library.is_none() {
        probe.check(
            what,
            Outcome::NotFound,
            format!("{soname} is not in an absolute loader directory (relative LD_LIBRARY_PATH entries are not followed)"),
        );
    }
    library
}

fn no_devices(probe: &mut StackProbe, call: &str) {
    probe.check("CUDA devices", Outcome::Failed, format!("{call} reports 0"));
    probe.finding(
        Level::Warning,
        "no-devices",
        "the NVIDIA driver is installed but reports no GPU".to_owned(),
        "check CUDA_VISIBLE_DEVICES, the container's device mounts (--gpus) and nvidia-smi",
    );
}

fn nvml(probe: &mut StackProbe, config: &Config) -> Option<Nvml> {
    let what = format!("NVML ({LIBNVML})");
    let library = driver_library(probe, config, &what, LIBNVML)?;
    match tool::bounded(config.timeout, move || ffi::nvml(&library)) {
        None => {
            probe.timed_out(what, config);
            None
        }
        Some(Err(err @ FfiError::Load { .. })) => {
            probe.check(what, Outcome::NotFound, err.to_string());
            None
        }
        Some(Err(err)) => {
            probe.check(what, Outcome::Failed, err.to_string());
            None
        }
        Some(Ok(nvml)) => {
            let cuda = nvml
                .cuda_driver_version
                .map_or("unknown".to_owned(), cuda_version_text);
            let detail = format!("driver {}, CUDA {cuda}", nvml.driver_version);
            probe.check(what, Outcome::Found, detail);
            nvml_findings(probe, &nvml);
            Some(nvml)
        }
    }
}

fn nvml_findings(probe: &mut StackProbe, nvml: &Nvml) {
    let Ok(devices) = &nvml.devices else { return };
    for (index, device) in devices.iter().enumerate() {
        if let Some((enabled, pending, instances)) = device.mig {
            if enabled && instances == 0 {
                probe.finding(
                    Level::Warning,
                    "mig-without-instances",
                    format!("GPU {index} has MIG enabled but no MIG instance exists"),
                    "create GPU and compute instances (nvidia-smi mig -cgi ... -C) or disable MIG; CUDA sees no device otherwise",
                );
            }
            if enabled != pending {
                probe.finding(
                    Level::Info,
                    "mig-change-pending",
                    format!("GPU {index} has a MIG mode change pending"),
                    "the new MIG mode applies after a GPU reset",
                );
            }
        }
    }
}

fn devices(driver: Option<&CudaDriver>, nvml: Option<&Nvml>) -> Vec<Device> {
    let cuda: &[ffi::GpuDevice] = match driver.map(|d| &d.devices) {
        Some(Ok(devices)) => devices,
        _ => &[],
    };
    if let Some(Ok(nvml_devices)) = nvml.map(|n| &n.devices) {
        // NVML sees every GPU; compute capability comes from the driver API
        // when both list the same device at the same index.
        return nvml_devices
            .iter()
            .enumerate()
            .map(|(index, d)| Device {
                index: index as u32,
                name: d.name.clone(),
                memory_bytes: d.total_bytes,
                compute_capability: cuda
                    .get(index)
                    .filter(|c| c.name == d.name)
                    .and_then(|c| c.compute_capability)
                    .map(|(major, minor)| format!("{major}.{minor}")),
                persistence_mode: d.persistence,
                mig: d.mig.map(|(enabled, pending_enabled, instances)| Mig {
                    enabled,
                    pending_enabled,
                    instances,
                }),
            })
            .collect();
    }
    cuda.iter()
        .enumerate()
        .map(|(index, c)| Device {
            index: index as u32,
            name: c.name.clone(),
            memory_bytes: Some(c.total_bytes),
            compute_capability: c
                .compute_capability
                .map(|(major, minor)| format!("{major}.{minor}")),
            persistence_mode: None,
            mig: None,
        })
        .collect()
}

fn mps(probe: &mut StackProbe, config: &Config) {
    let running = running_processes(config, &MPS_PROCESSES);
    if running.is_empty() {
        probe.check(
            "MPS daemon",
            Outcome::NotFound,
            "no nvidia-cuda-mps-control/-server process",
        );
    } else {
        probe.check("MPS daemon", Outcome::Found, running.join(", "));
        probe.finding(
            Level::Info,
            "mps-running",
            format!("an MPS daemon is running ({})", running.join(", ")),
            "CUDA processes of this user share GPUs through MPS; timings and memory limits differ from exclusive use",
        );
    }
    if config.env_var("CUDA_MPS_PIPE_DIRECTORY").is_some() {
        probe.env_dir(config, "CUDA_MPS_PIPE_DIRECTORY");
    }
}

/// `name (pid N)` for each process whose `comm` is one of `names`.
fn running_processes(config: &Config, names: &[&str]) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(&config.proc_dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u32, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(entry.path().join("comm")).ok()?;
            let comm = comm.trim();
            names.contains(&comm).then(|| (pid, comm.to_owned()))
        })
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|(pid, comm)| format!("{comm} (pid {pid})"))
        .collect()
}

/// CUDA toolkit versions found: (runtime library, nvcc), as driver-API integers.
struct Toolkit {
    runtime: Option<i32>,
    nvcc: Option<i32>,
}

fn toolkit(probe: &mut StackProbe, config: &Config) -> Toolkit {
    let cuda_home = probe.env_dir(config, "CUDA_HOME");
    let cuda_path = probe.env_dir(config, "CUDA_PATH");
    let default = Some(PathBuf::from("/usr/local/cuda"));
    let roots = [&cuda_home, &cuda_path, &default];
    let runtime = probe
        .loadable_library(config, "libcudart", &under(&roots, "lib64"))
        .and_then(|path| runtime_version(probe, config, path));
    let nvcc = probe
        .tool(config, "nvcc", &["--version"], &under(&roots, "bin"))
        .and_then(|stdout| {
            let release = parse_nvcc_release(&stdout);
            let detail = release.map_or("release not in the output".to_owned(), |v| {
                format!("release {}", cuda_version_text(v))
            });
            probe.check("nvcc --version", Outcome::Found, detail);
            release
        });
    Toolkit { runtime, nvcc }
}

fn runtime_version(probe: &mut StackProbe, config: &Config, path: PathBuf) -> Option<i32> {
    let target = path.display().to_string();
    match tool::bounded(config.timeout, move || ffi::cuda_runtime_version(&target)) {
        Some(Ok(version)) => {
            probe.check(
                "CUDA runtime version",
                Outcome::Found,
                cuda_version_text(version),
            );
            Some(version)
        }
        Some(Err(err)) => {
            probe.check("CUDA runtime version", Outcome::Failed, err.to_string());
            None
        }
        None => {
            probe.timed_out("CUDA runtime version".to_owned(), config);
            None
        }
    }
}

/// `Cuda compilation tools, release 12.2, V12.2.140` -> 12020.
pub(crate) fn parse_nvcc_release(stdout: &str) -> Option<i32> {
    let rest = stdout.split("release ").nth(1)?;
    let version: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let mut parts = version.split('.');
    let major: i32 = parts.next()?.parse().ok()?;
    let minor: i32 = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    Some(major * 1000 + minor * 10)
}

fn compare_toolkit(probe: &mut StackProbe, driver: Option<i32>, toolkit: &Toolkit) {
    let newest = [("CUDA runtime", toolkit.runtime), ("nvcc", toolkit.nvcc)]
        .into_iter()
        .filter_map(|(what, v)| v.map(|v| (what, v)))
        .max_by_key(|(_, v)| *v);
    let Some((what, toolkit_version)) = newest else {
        return;
    };
    match driver {
        Some(driver) if driver < toolkit_version => probe.finding(
            Level::Warning,
            "toolkit-newer-than-driver",
            format!(
                "{what} is CUDA {} but the driver supports only CUDA {}",
                cuda_version_text(toolkit_version),
                cuda_version_text(driver)
            ),
            "upgrade the NVIDIA driver, install the cuda-compat package for this toolkit, or build with an older toolkit; otherwise kernels fail with cudaErrorInsufficientDriver",
        ),
        Some(_) => {}
        None => probe.finding(
            Level::Info,
            "toolkit-without-driver",
            format!("{what} CUDA {} is installed but no NVIDIA driver was found", cuda_version_text(toolkit_version)),
            "fine on a build-only machine; run the CUDA leg of the regression on a node with a GPU",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::{GpuDevice, NvmlDeviceInfo};

    fn codes(probe: StackProbe) -> Vec<(Level, String)> {
        let (_, findings) = probe.finish();
        findings.into_iter().map(|f| (f.level, f.code)).collect()
    }

    #[test]
    fn nvcc_release_and_driver_versions_use_the_driver_api_encoding() {
        let nvcc = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n";
        assert_eq!(parse_nvcc_release(nvcc), Some(12040));
        assert_eq!(parse_nvcc_release("no version here"), None);
        assert_eq!(cuda_version_text(12040), "12.4");
        assert_eq!(cuda_version_text(11080), "11.8");
    }

    #[test]
    fn a_toolkit_newer_than_the_driver_is_a_warning_and_an_older_one_is_fine() {
        let toolkit = Toolkit {
            runtime: Some(12020),
            nvcc: Some(12040),
        };
        let mut probe = StackProbe::new("cuda", "t");
        compare_toolkit(&mut probe, Some(12020), &toolkit);
        assert_eq!(
            codes(probe),
            [(Level::Warning, "toolkit-newer-than-driver".to_owned())]
        );
        let mut probe = StackProbe::new("cuda", "t");
        compare_toolkit(&mut probe, Some(12080), &toolkit);
        assert_eq!(codes(probe), []);
        let mut probe = StackProbe::new("cuda", "t");
        compare_toolkit(&mut probe, None, &toolkit);
        assert_eq!(
            codes(probe),
            [(Level::Info, "toolkit-without-driver".to_owned())]
        );
    }

    fn nvml_device(name: &str, mig: Option<(bool, bool, u32)>) -> NvmlDeviceInfo {
        NvmlDeviceInfo {
            name: name.to_owned(),
            total_bytes: Some(80 << 30),
            persistence: Some(true),
            mig,
        }
    }

    #[test]
    fn mig_enabled_without_instances_is_a_warning_and_a_pending_change_is_info() {
        let nvml = Nvml {
            driver_version: "550.54.15".to_owned(),
            cuda_driver_version: Some(12040),
            devices: Ok(vec![
                nvml_device("A100", Some((true, true, 0))),
                nvml_device("A100", Some((false, true, 0))),
                nvml_device("H100", Some((true, true, 3))),
            ]),
        };
        let mut probe = StackProbe::new("cuda", "t");
        nvml_findings(&mut probe, &nvml);
        let expected = [
            (Level::Warning, "mig-without-instances".to_owned()),
            (Level::Info, "mig-change-pending".to_owned()),
        ];
        assert_eq!(codes(probe), expected);
    }

    #[test]
    fn nvml_devices_take_compute_capability_from_the_driver_api_when_names_agree() {
        let driver = CudaDriver {
            version: 12040,
            devices: Ok(vec![
                GpuDevice {
                    name: "H100".to_owned(),
                    total_bytes: 1,
                    compute_capability: Some((9, 0)),
                },
                GpuDevice {
                    name: "other".to_owned(),
                    total_bytes: 1,
                    compute_capability: Some((8, 0)),
                },
            ]),
        };
        let nvml = Nvml {
            driver_version: "550".to_owned(),
            cuda_driver_version: None,
            devices: Ok(vec![
                nvml_device("H100", None),
                nvml_device("A100", Some((true, true, 2))),
            ]),
        };
        let devices = devices(Some(&driver), Some(&nvml));
        assert_eq!(devices[0].compute_capability.as_deref(), Some("9.0"));
        assert_eq!(devices[1].compute_capability, None);
        assert_eq!(devices[1].mig.as_ref().map(|m| m.instances), Some(2));
        assert_eq!(devices[0].memory_bytes, Some(80 << 30));
        let from_driver = super::devices(Some(&driver), None);
        assert_eq!(from_driver.len(), 2);
        assert_eq!(from_driver[1].compute_capability.as_deref(), Some("8.0"));
    }
}
