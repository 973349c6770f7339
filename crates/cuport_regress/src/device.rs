//! Who ran a leg: device model, driver and runtime versions, and the host.
use serde::{Deserialize, Serialize};

/// Identity of the device a result was measured on. Baselines are keyed by
/// [`DeviceIdentity::fingerprint`], which leaves out the host name so CI
/// runners with the same hardware share baselines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeviceIdentity {
    pub backend: String,
    pub model: String,
    pub driver: Option<String>,
    pub runtime: Option<String>,
    pub host: String,
}

impl DeviceIdentity {
    pub fn fingerprint(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.backend,
            self.model,
            self.driver.as_deref().unwrap_or("-"),
            self.runtime.as_deref().unwrap_or("-")
        )
    }

    /// The identity of this machine's CPU, for the `cpu` backend and for
    /// `exec` legs that do not describe their device.
    pub fn this_cpu(backend: &str) -> DeviceIdentity {
        DeviceIdentity {
            backend: backend.to_owned(),
            model: cpu_model(),
            driver: None,
            runtime: Some(format!("cuport {}", env!("CARGO_PKG_VERSION"))),
            host: host_name(),
        }
    }
}

/// Host name from the kernel (no extra dependency needed on Linux).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_owned())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".to_owned())
}

fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!(
        "{} ({cores} threads, {})",
        model.unwrap_or_else(|| std::env::consts::ARCH.to_owned()),
        std::env::consts::OS
    )
}
