//! Huawei Ascend: NPU driver (`npu-smi`, driver version file) and CANN.
use std::path::{Path, PathBuf};

use crate::locate;
use crate::probe::{under, StackProbe};
use crate::report::{Level, Outcome};
use crate::Config;

const ASCEND_ROOT: &str = "/usr/local/Ascend";

pub(crate) fn probe(config: &Config) -> StackProbe {
    let mut probe = StackProbe::new("ascend", "Huawei Ascend (CANN)");
    let home = probe.env_dir(config, "ASCEND_HOME_PATH");
    let toolkit_home = probe.env_dir(config, "ASCEND_TOOLKIT_HOME");
    let root = Path::new(ASCEND_ROOT);
    let driver = driver(&mut probe, config, root);
    let default_toolkit = Some(root.join("ascend-toolkit/latest"));
    let roots = [&toolkit_home, &home, &default_toolkit];
    let cann = cann_version(&mut probe, &roots);
    let mut lib_dirs = under(&roots, "lib64");
    lib_dirs.extend(under(&roots, "runtime/lib64"));
    let acl = probe.loadable_library(config, "libascendcl", &lib_dirs);
    if (cann.is_some() || acl.is_some()) && !driver {
        probe.finding(
            Level::Info,
            "cann-without-driver",
            "CANN is installed but no Ascend NPU driver was found".to_owned(),
            "fine on a build-only machine; run the Ascend leg of the regression on a node with an NPU",
        );
    }
    probe
}

/// `npu-smi info` and the driver's version file; true when a driver answered.
fn driver(probe: &mut StackProbe, config: &Config, root: &Path) -> bool {
    let version_file = root.join("driver/version.info");
    let file_version = locate::version_from_file(&version_file, "Version");
    match &file_version {
        Some(version) => probe.check(
            "Ascend driver version.info",
            Outcome::Found,
            version.clone(),
        ),
        None => probe.check(
            "Ascend driver version.info",
            Outcome::NotFound,
            format!("no {}", version_file.display()),
        ),
    }
    let extra = [root.join("driver/tools"), PathBuf::from("/usr/local/sbin")];
    let Some(stdout) = probe.tool(config, "npu-smi", &["info"], &extra) else {
        return file_version.is_some();
    };
    let version =
        parse_npu_smi_version(&stdout).unwrap_or_else(|| "version not in the output".to_owned());
    probe.check("npu-smi info", Outcome::Found, version);
    true
}

/// `| npu-smi 23.0.0   Version: 23.0.0 |` -> `23.0.0`.
pub(crate) fn parse_npu_smi_version(stdout: &str) -> Option<String> {
    let rest = stdout.split("Version:").nth(1)?;
    let version = rest.split_whitespace().next()?.trim_end_matches('|');
    (!version.is_empty()).then(|| version.to_owned())
}

/// The `version=` of `<toolkit>/<arch>-linux/ascend_toolkit_install.info`.
fn cann_version(probe: &mut StackProbe, roots: &[&Option<PathBuf>]) -> Option<String> {
    let found = roots.iter().filter_map(|r| r.as_ref()).find_map(|root| {
        let entries = std::fs::read_dir(root).ok()?;
        entries.filter_map(Result::ok).find_map(|entry| {
            let info = entry.path().join("ascend_toolkit_install.info");
            locate::version_from_file(&info, "version").map(|v| (info, v))
        })
    });
    match found {
        Some((info, version)) => {
            probe.check(
                "CANN toolkit",
                Outcome::Found,
                format!("{version} ({})", info.display()),
            );
            Some(version)
        }
        None => {
            probe.check(
                "CANN toolkit",
                Outcome::NotFound,
                "no ascend_toolkit_install.info",
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npu_smi_version_is_the_token_after_version() {
        let table = "+----+\n| npu-smi 24.1.rc2   Version: 24.1.rc2 |\n+----+\n";
        assert_eq!(parse_npu_smi_version(table).as_deref(), Some("24.1.rc2"));
        assert_eq!(parse_npu_smi_version("| Version:|"), None);
        assert_eq!(parse_npu_smi_version("nothing"), None);
    }
}
