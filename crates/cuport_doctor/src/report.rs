//! The doctor's report: what each probe saw, and findings with advice.
//! Serialized as JSON with a version; rendered as text for terminals.
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Bumped when a field is renamed or removed; new optional fields keep it.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    pub schema_version: u32,
    pub stacks: Vec<Stack>,
    pub findings: Vec<Finding>,
}

/// One vendor software stack (NVIDIA CUDA, Ascend CANN, ROCm/HIP, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Stack {
    /// Stable id: `cuda`, `ascend`, `rocm`, `musa`, `mlu`.
    pub id: String,
    pub title: String,
    /// True when at least one check found something.
    pub found: bool,
    pub checks: Vec<Check>,
    pub devices: Vec<Device>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    /// What was looked for, e.g. `driver library libcuda.so.1`.
    pub what: String,
    pub outcome: Outcome,
    /// Version, path or the reason it failed.
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Found,
    NotFound,
    /// Present but the call or tool failed (the detail says how).
    Failed,
    TimedOut,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Device {
    pub index: u32,
    pub name: String,
    pub memory_bytes: Option<u64>,
    pub compute_capability: Option<String>,
    pub persistence_mode: Option<bool>,
    pub mig: Option<Mig>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Mig {
    pub enabled: bool,
    pub pending_enabled: bool,
    pub instances: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    pub level: Level,
    /// The stack id it concerns.
    pub stack: String,
    /// Stable kebab-case code, e.g. `toolkit-newer-than-driver`.
    pub code: String,
    pub message: String,
    pub advice: String,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Info,
    Warning,
}

/// The JSON schema of [`Report`], for consumers of `--format json`.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Report)).unwrap_or_default()
}

impl Report {
    /// Whether any finding is a warning (what `--strict` fails on).
    pub fn has_warnings(&self) -> bool {
        self.findings.iter().any(|f| f.level == Level::Warning)
    }

    /// Plain text for a terminal, one block per stack, then the findings.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        for stack in &self.stacks {
            render_stack(&mut text, stack);
        }
        render_findings(&mut text, &self.findings);
        text
    }
}

fn render_stack(text: &mut String, stack: &Stack) {
    let state = if stack.found { "found" } else { "not found" };
    let _ = writeln!(text, "{}: {state}", stack.title);
    for check in &stack.checks {
        let outcome = match check.outcome {
            Outcome::Found => "found",
            Outcome::NotFound => "not found",
            Outcome::Failed => "failed",
            Outcome::TimedOut => "timed out",
        };
        let _ = writeln!(text, "  {:<34} {outcome}: {}", check.what, check.detail);
    }
    for device in &stack.devices {
        let _ = writeln!(
            text,
            "  device {}: {}",
            device.index,
            describe_device(device)
        );
    }
    text.push('\n');
}

fn describe_device(device: &Device) -> String {
    let mut parts = vec![device.name.clone()];
    if let Some(bytes) = device.memory_bytes {
        parts.push(format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30)));
    }
    if let Some(cc) = &device.compute_capability {
        parts.push(format!("compute capability {cc}"));
    }
    if let Some(on) = device.persistence_mode {
        parts.push(format!("persistence {}", on_off(on)));
    }
    if let Some(mig) = &device.mig {
        let pending = if mig.pending_enabled == mig.enabled {
            String::new()
        } else {
            format!(" (pending {})", on_off(mig.pending_enabled))
        };
        parts.push(format!(
            "MIG {}{pending}, {} instance(s)",
            on_off(mig.enabled),
            mig.instances
        ));
    }
    parts.join(", ")
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

fn render_findings(text: &mut String, findings: &[Finding]) {
    if findings.is_empty() {
        text.push_str("No findings.\n");
        return;
    }
    let _ = writeln!(text, "Findings:");
    for finding in findings {
        let level = match finding.level {
            Level::Info => "info",
            Level::Warning => "warning",
        };
        let _ = writeln!(text, "  {level}[{}]: {}", finding.code, finding.message);
        let _ = writeln!(text, "    advice: {}", finding.advice);
    }
}
