//! The text rendering of a report with GPUs, MIG and findings, built by hand
//! because this machine has no NVIDIA GPU.
use cuport_doctor::{Check, Device, Finding, Level, Mig, Outcome, Report, Stack, SCHEMA_VERSION};

fn gpu(index: u32, name: &str, mig: Option<Mig>) -> Device {
    Device {
        index,
        name: name.to_owned(),
        memory_bytes: Some(150_754_820_096),
        compute_capability: Some("9.0".to_owned()),
        persistence_mode: Some(index == 0),
        mig,
    }
}

#[test]
fn gpus_mig_and_findings_render_as_text() {
    let report = Report {
        schema_version: SCHEMA_VERSION,
        stacks: vec![Stack {
            id: "cuda".to_owned(),
            title: "NVIDIA CUDA".to_owned(),
            found: true,
            checks: vec![
                Check {
                    what: "CUDA driver API (libcuda.so.1)".to_owned(),
                    outcome: Outcome::Found,
                    detail: "supports CUDA 12.4".to_owned(),
                },
                Check {
                    what: "nvcc --version".to_owned(),
                    outcome: Outcome::TimedOut,
                    detail: "no answer within 10000 ms".to_owned(),
                },
            ],
            devices: vec![
                gpu(0, "NVIDIA H200", None),
                gpu(
                    1,
                    "NVIDIA H200",
                    Some(Mig {
                        enabled: true,
                        pending_enabled: false,
                        instances: 2,
                    }),
                ),
            ],
        }],
        findings: vec![Finding {
            level: Level::Info,
            stack: "cuda".to_owned(),
            code: "mig-change-pending".to_owned(),
            message: "GPU 1 has a MIG mode change pending".to_owned(),
            advice: "the new MIG mode applies after a GPU reset".to_owned(),
        }],
    };
    assert!(!report.has_warnings());
    insta::assert_snapshot!(report.to_text());
}
