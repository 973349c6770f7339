//! AMD ROCm/HIP, Moore Threads MUSA and Cambricon Neuware.
use std::path::{Path, PathBuf};

use crate::ffi::{self, FfiError, Hip};
use crate::probe::{under, StackProbe};
use crate::report::{Device, Level, Outcome};
use crate::{locate, tool, Config};

pub(crate) fn rocm(config: &Config) -> StackProbe {
    let mut probe = StackProbe::new("rocm", "AMD ROCm/HIP");
    let rocm_path = probe.env_dir(config, "ROCM_PATH");
    let hip_path = probe.env_dir(config, "HIP_PATH");
    let default = Some(PathBuf::from("/opt/rocm"));
    let roots = [&rocm_path, &hip_path, &default];
    rocm_version_file(&mut probe, &roots);
    if let Some(library) = probe.loadable_library(config, "libamdhip64", &under(&roots, "lib")) {
        hip_runtime(&mut probe, config, library);
    }
    probe.tool_line(
        config,
        "hipcc",
        &["--version"],
        &under(&roots, "bin"),
        "HIP version",
    );
    probe
}

fn rocm_version_file(probe: &mut StackProbe, roots: &[&Option<PathBuf>]) {
    let found = under(roots, ".info/version")
        .into_iter()
        .find_map(|file| locate::first_line(&file).map(|v| (file, v)));
    match found {
        Some((file, version)) => probe.check(
            "ROCm .info/version",
            Outcome::Found,
            format!("{version} ({})", file.display()),
        ),
        None => probe.check(
            "ROCm .info/version",
            Outcome::NotFound,
            "no .info/version under ROCm roots",
        ),
    }
}

/// `50221153` -> `5.2.21153` (major * 10^7 + minor * 10^5 + patch).
pub(crate) fn hip_version_text(version: i32) -> String {
    format!(
        "{}.{}.{}",
        version / 10_000_000,
        (version / 100_000) % 100,
        version % 100_000
    )
}

fn hip_runtime(probe: &mut StackProbe, config: &Config, library: PathBuf) {
    let target = library.display().to_string();
    let hip: Hip = match tool::bounded(config.timeout, move || ffi::hip(&target)) {
        Some(Ok(hip)) => hip,
        Some(Err(err)) => {
            probe.check("HIP runtime version", Outcome::Failed, err.to_string());
            return;
        }
        None => {
            probe.timed_out("HIP runtime version".to_owned(), config);
            return;
        }
    };
    let driver = hip
        .driver_version
        .map_or("unknown".to_owned(), hip_version_text);
    let detail = format!(
        "runtime {}, driver {driver}",
        hip_version_text(hip.runtime_version)
    );
    probe.check("HIP runtime version", Outcome::Found, detail);
    hip_devices(probe, hip.devices);
}

fn hip_devices(probe: &mut StackProbe, devices: Result<Vec<ffi::GpuDevice>, FfiError>) {
    match devices {
        Ok(devices) if !devices.is_empty() => {
            probe.check("HIP devices", Outcome::Found, devices.len().to_string());
            let devices = devices
                .into_iter()
                .enumerate()
                .map(|(index, d)| Device {
                    index: index as u32,
                    name: d.name,
                    memory_bytes: Some(d.total_bytes),
                    compute_capability: None,
                    persistence_mode: None,
                    mig: None,
                })
                .collect();
            probe.devices(devices);
        }
        Ok(_) => {
            probe.check(
                "HIP devices",
                Outcome::Failed,
                "hipGetDeviceCount reports 0",
            );
            no_hip_device(probe, "the HIP runtime reports no GPU".to_owned());
        }
        Err(err) => {
            probe.check("HIP devices", Outcome::Failed, err.to_string());
            no_hip_device(probe, format!("the HIP runtime loads but {err}"));
        }
    }
}

fn no_hip_device(probe: &mut StackProbe, message: String) {
    probe.finding(
        Level::Warning,
        "no-devices",
        message,
        "fine for building; to run HIP code check /dev/kfd and /dev/dri access (video/render groups), HIP_VISIBLE_DEVICES and rocminfo",
    );
}

pub(crate) fn musa(config: &Config) -> StackProbe {
    let mut probe = StackProbe::new("musa", "Moore Threads MUSA");
    let root = Path::new("/usr/local/musa");
    probe.dir("MUSA toolkit /usr/local/musa", root);
    probe.loadable_library(config, "libmusart", &[root.join("lib")]);
    probe.tool_line(config, "mthreads-gmi", &[], &[root.join("bin")], "version");
    probe
}

pub(crate) fn mlu(config: &Config) -> StackProbe {
    let mut probe = StackProbe::new("mlu", "Cambricon MLU (Neuware)");
    let env_home = probe.env_dir(config, "NEUWARE_HOME");
    let default = Some(PathBuf::from("/usr/local/neuware"));
    let roots = [&env_home, &default];
    probe.dir(
        "Neuware /usr/local/neuware",
        Path::new("/usr/local/neuware"),
    );
    probe.loadable_library(config, "libcnrt", &under(&roots, "lib64"));
    probe.tool_line(config, "cnmon", &[], &under(&roots, "bin"), "version");
    probe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hip_version_splits_major_minor_patch() {
        assert_eq!(hip_version_text(50_221_153), "5.2.21153");
        assert_eq!(hip_version_text(60_342_134), "6.3.42134");
    }
}
