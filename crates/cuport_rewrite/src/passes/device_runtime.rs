//! CUDA's device runtime where the target has none (`[device-runtime]` of
//! its profile: HIP's runtime API is host-only). A runtime call in a kernel
//! or `__device__` function (`cudaGetErrorString` in an error check) and a
//! kernel launched from one (dynamic parallelism) compile with nvcc and
//! not with the target's compiler; each is reported on its line. A
//! `__host__ __device__` function is left out: its calls may sit behind
//! `__CUDA_ARCH__`, and the target's compiler rejects them only where the
//! function is compiled for the device.
use cuport_analyze::Site;
use cuport_model::{DeviceRuntimeFacts, Effort, Library, SiteKind};

use super::calls::{device_bodies, HostDevice};
use crate::diagnostic::{codes, Diagnostic, Level};
use crate::plan::{FileInput, Planned};

pub(super) fn report_device_runtime(input: &FileInput<'_>, planned: &mut Planned) {
    let Some(facts) = input
        .options
        .targets()
        .iter()
        .map(|t| &t.profile().device_runtime)
        .find(|f| f.absent)
    else {
        return;
    };
    let bodies = device_bodies(input.src, input.analysis, HostDevice::Host);
    if bodies.is_empty() {
        return;
    }
    let in_device_code = |site: &&Site| {
        bodies
            .iter()
            .any(|b| b.start <= site.range.start && site.range.end <= b.end)
    };
    let device_runtime = input
        .analysis
        .sites
        .iter()
        .filter(|s| is_launch(s) || is_runtime_call(s))
        .filter(in_device_code);
    for site in device_runtime {
        planned.diagnostics.push(diagnostic(input, site, facts));
    }
}

fn is_launch(site: &Site) -> bool {
    site.kind == SiteKind::KernelLaunch
}

fn is_runtime_call(site: &Site) -> bool {
    site.library == Library::Runtime && site.call.is_some()
}

fn diagnostic(input: &FileInput<'_>, site: &Site, facts: &DeviceRuntimeFacts) -> Diagnostic {
    let (level, message) = if is_launch(site) {
        (
            Level::Unsupported,
            format!(
                "`{}` is launched from device code (CUDA's dynamic parallelism), which the target does not have: its kernels are launched from the host only",
                site.name
            ),
        )
    } else {
        (
            Level::Manual,
            format!(
                "`{}` is called in device code (CUDA's device runtime); the target's runtime API is host-only, so the call does not compile there",
                site.name
            ),
        )
    };
    Diagnostic {
        effort: Some(Effort::Low),
        suggestion: facts.note.clone(),
        reference: facts.reference.clone(),
        ..Diagnostic::on_site(site, input.lines, codes::DEVICE_RUNTIME, level, message)
    }
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::REPORT_DEVICE_RUNTIME;

    fn reported(src: &str, options: &MigrateOptions) -> Vec<(u32, String)> {
        run_pass(&REPORT_DEVICE_RUNTIME, Language::Cuda, src, options)
            .diagnostics
            .iter()
            .filter(|d| d.code == "CP0046")
            .map(|d| (d.line, d.cuda_name.clone()))
            .collect()
    }

    const SRC: &str = "__global__ void child(int* x) { x[0] = 1; }\n\
                       __device__ void check(cudaError_t e) {\n  if (e != cudaSuccess) printf(\"%s\\n\", cudaGetErrorString(e));\n}\n\
                       __global__ void parent(int* x) {\n  child<<<1, 1>>>(x);\n  check(cudaGetLastError());\n}\n\
                       __host__ __device__ void both() { cudaDeviceSynchronize(); }\n\
                       void host(int* x) { child<<<1, 1>>>(x); check_host(cudaGetLastError()); }\n";

    #[test]
    fn runtime_calls_and_launches_in_device_code_are_reported_on_hip() {
        let hip = reported(SRC, &MigrateOptions::new(Target::Hip));
        assert_eq!(
            hip,
            [
                (3, "cudaGetErrorString".to_owned()),
                (6, "child".to_owned()),
                (7, "cudaGetLastError".to_owned()),
            ]
        );
        let dual = reported(SRC, &MigrateOptions::dual_stack(vec![Target::Hip]));
        assert_eq!(dual.len(), 3, "{dual:?}");
    }

    #[test]
    fn targets_with_a_device_runtime_or_without_facts_get_nothing() {
        assert!(reported(SRC, &MigrateOptions::new(Target::Musa)).is_empty());
    }
}
