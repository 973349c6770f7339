//! `timings.json`: samples per named region, written by each leg.
//!
//! ```json
//! {"regions": {"forward": [0.0121, 0.0119]}, "unit": "s",
//!  "device": {"model": "NVIDIA H100", "driver": "550.54", "runtime": "12.4"}}
//! ```
//! `unit` (s, ms, us, ns) and `device` are optional; unknown keys are
//! ignored so producers can add their own.
use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{RegressError, Result};

/// What a leg may say about the device it ran on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceNote {
    pub model: Option<String>,
    pub driver: Option<String>,
    pub runtime: Option<String>,
}

/// Parsed timings, always in seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub regions: BTreeMap<String, Vec<f64>>,
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub device: Option<DeviceNote>,
}

pub fn read(path: &Path) -> Result<Timings> {
    let text = std::fs::read_to_string(path).map_err(|e| RegressError::io(path, e))?;
    parse(&text).map_err(|m| RegressError::format(path, m))
}

pub fn parse(text: &str) -> std::result::Result<Timings, String> {
    let mut t: Timings = serde_json::from_str(text)
        .map_err(|e| format!("{e}; expected {{\"regions\": {{\"NAME\": [seconds, ...]}}}}"))?;
    let scale = match t.unit.as_deref().unwrap_or("s") {
        "s" => 1.0,
        "ms" => 1e-3,
        "us" => 1e-6,
        "ns" => 1e-9,
        other => return Err(format!("unknown unit `{other}`: use s, ms, us or ns")),
    };
    for (name, samples) in &mut t.regions {
        if let Some(bad) = samples.iter().find(|s| !s.is_finite() || **s < 0.0) {
            return Err(format!("region `{name}` has an invalid sample {bad}"));
        }
        samples.iter_mut().for_each(|s| *s *= scale);
    }
    t.unit = Some("s".to_owned());
    Ok(t)
}

pub fn write(path: &Path, timings: &Timings) -> Result<()> {
    let text = serde_json::to_string_pretty(timings)
        .map_err(|e| RegressError::format(path, e.to_string()))?;
    std::fs::write(path, text).map_err(|e| RegressError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_normalised_to_seconds() -> std::result::Result<(), String> {
        let t = parse(r#"{"regions": {"k": [2.0, 4.0]}, "unit": "ms", "extra": 1}"#)?;
        assert_eq!(t.regions["k"], vec![0.002, 0.004]);
        assert!(parse(r#"{"regions": {"k": [-1]}}"#).is_err());
        assert!(parse(r#"{"region": {}}"#).is_err());
        Ok(())
    }
}
