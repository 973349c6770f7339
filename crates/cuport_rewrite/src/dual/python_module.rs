//! The Python half of the dual-stack layer: `cuport_device.py` (device,
//! adapter, collectives, amp, memory helpers) and `cuport_build.py` (the
//! setup.py extension builder), generated from the rule tables for the
//! selected targets. The fixed logic lives in the `.py.in` templates next
//! to this file; the tables fill in one `BACKENDS` tuple per module.
use std::collections::BTreeMap;
use std::fmt::Write;

use cuport_model::Target;
use cuport_rules::{RuleSet, Status};

mod placement;
pub(crate) use placement::python_generated_files;

const DEVICE_TEMPLATE: &str = include_str!("python_module/device.py.in");
const BUILD_TEMPLATE: &str = include_str!("python_module/build.py.in");
const GENERATED_MARK: &str = "# @GENERATED@";

/// Functions of `cuport_device` that forward to the same name on the
/// backend's device module; `torch.cuda.<name>` is rewritten to
/// `cuport_device.<name>`. Kept in step with device.py.in by a test.
pub(crate) const DEVICE_HELPERS: &[&str] = &[
    "is_available",
    "device_count",
    "current_device",
    "set_device",
    "synchronize",
    "empty_cache",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "reset_peak_memory_stats",
    "manual_seed",
    "manual_seed_all",
    "current_stream",
    "Stream",
    "Event",
];

/// Targets without fp64 tensors (`fp64 = false` under `[python]` in the
/// target's profile, with its source).
pub(crate) fn lacks_fp64(target: Target) -> bool {
    !target.profile().python.fp64
}

/// What the generated modules know about one torch backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TorchBackend {
    /// Device type: `cuda`, `npu`, `musa`, `mlu`.
    pub(crate) device: String,
    /// The targets it serves (`hip` for ROCm builds under `cuda`).
    pub(crate) targets: Vec<Target>,
    /// Adapter package (`torch_npu`), None for CUDA and ROCm.
    pub(crate) adapter: Option<String>,
    pub(crate) dist_backend: String,
    /// `torch.cuda.<from>` is `torch.<device>.<to>` (renamed entries only).
    pub(crate) renames: BTreeMap<String, String>,
    pub(crate) unsupported_dtypes: Vec<&'static str>,
    pub(crate) build: BuildFacts,
}

/// How the backend builds extensions: `module.Name` import paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BuildFacts {
    pub(crate) extension: String,
    pub(crate) build_ext: String,
    pub(crate) macro_name: String,
    pub(crate) device_suffixes: Vec<&'static str>,
    pub(crate) compiler_key: Option<&'static str>,
    /// Facts taken from outside the tables and not confirmed by a vendor doc.
    pub(crate) unconfirmed: Vec<&'static str>,
}

/// The backends for `targets`, in the order the module probes them: each
/// adapter target as given, then CUDA (which ROCm shares).
pub(crate) fn torch_backends(rules: &RuleSet, targets: &[Target]) -> Vec<TorchBackend> {
    let mut cuda = cuda_backend();
    let mut backends: Vec<TorchBackend> = Vec::new();
    for &target in targets {
        let Some(device) = rules.device_string(target, "cuda") else {
            continue;
        };
        if device == "cuda" {
            cuda.targets.push(target);
            continue;
        }
        if backends.iter().any(|b| b.device == device) {
            continue;
        }
        backends.push(adapter_backend(rules, target, device));
    }
    backends.push(cuda);
    backends
}

fn cuda_backend() -> TorchBackend {
    TorchBackend {
        device: "cuda".into(),
        targets: Vec::new(),
        adapter: None,
        dist_backend: "nccl".into(),
        renames: BTreeMap::new(),
        unsupported_dtypes: Vec::new(),
        build: BuildFacts {
            extension: "torch.utils.cpp_extension.CUDAExtension".into(),
            build_ext: "torch.utils.cpp_extension.BuildExtension".into(),
            macro_name: "CUPORT_BACKEND_CUDA".into(),
            device_suffixes: vec![".cu", ".cuh"],
            compiler_key: Some("nvcc"),
            unconfirmed: Vec::new(),
        },
    }
}

fn adapter_backend(rules: &RuleSet, target: Target, device: String) -> TorchBackend {
    let adapter = rules.lookup(target, "cuda").and_then(|r| {
        r.imports()
            .iter()
            .find_map(|i| i.strip_prefix("import ").map(str::trim).map(str::to_owned))
    });
    let dist_backend = rules
        .device_string(target, "nccl")
        .unwrap_or_else(|| "gloo".into());
    TorchBackend {
        renames: device_module_renames(rules, target, &device),
        unsupported_dtypes: if lacks_fp64(target) {
            vec!["float64"]
        } else {
            Vec::new()
        },
        build: build_facts(rules, target),
        device,
        targets: vec![target],
        adapter,
        dist_backend,
    }
}

/// `torch.cuda.X` entries the tables rename to `torch.<device>.Y` (Y ≠ X).
fn device_module_renames(
    rules: &RuleSet,
    target: Target,
    device: &str,
) -> BTreeMap<String, String> {
    rules
        .known_cuda_names(target)
        .filter_map(|name| {
            let rest = name.strip_prefix("torch.cuda.")?;
            let to = renamed_in_device_module(rules, target, device, name)?;
            (to != rest).then(|| (rest.to_owned(), to))
        })
        .collect()
}

/// For a `renamed` entry `torch.cuda.X` → `torch.<device>.Y`: `Y`.
pub(crate) fn renamed_in_device_module(
    rules: &RuleSet,
    target: Target,
    device: &str,
    cuda_name: &str,
) -> Option<String> {
    let resolved = rules.lookup(target, cuda_name)?;
    if resolved.status() != Status::Renamed {
        return None;
    }
    let to = resolved.target_name?;
    to.strip_prefix(&format!("torch.{device}."))
        .map(str::to_owned)
}

fn build_facts(rules: &RuleSet, target: Target) -> BuildFacts {
    let table_name = |cuda: &str| {
        rules
            .lookup(target, cuda)
            .and_then(|r| r.target_name.map(|n| n.into_owned()))
    };
    let extension = table_name("torch.utils.cpp_extension.CUDAExtension")
        .unwrap_or_else(|| "torch.utils.cpp_extension.CUDAExtension".into());
    let python = &target.profile().python;
    let mut unconfirmed = Vec::new();
    let build_ext = table_name("torch.utils.cpp_extension.BuildExtension").unwrap_or_else(|| {
        if python.build_ext_unconfirmed {
            unconfirmed.push("build_ext");
        }
        python.build_ext.clone()
    });
    let device_suffixes = python
        .extension_sources
        .iter()
        .map(String::as_str)
        .collect();
    let compiler_key = python.extension_compiler.as_deref();
    BuildFacts {
        extension,
        build_ext,
        macro_name: format!("CUPORT_BACKEND_{}", target.id().to_ascii_uppercase()),
        device_suffixes,
        compiler_key,
        unconfirmed,
    }
}

/// `cuport_device.py` for `targets` (with CUDA, always).
pub(crate) fn device_module(rules: &RuleSet, targets: &[Target]) -> String {
    let backends = torch_backends(rules, targets);
    let mut table =
        String::from("# Generated from the rule tables: probed in this order.\nBACKENDS = (\n");
    for backend in &backends {
        write_device_backend(&mut table, backend);
    }
    table.push_str(")\n");
    fill(DEVICE_TEMPLATE, targets, &table)
}

/// `cuport_build.py` for `targets` (with CUDA, always).
pub(crate) fn build_module(rules: &RuleSet, targets: &[Target]) -> String {
    let backends = torch_backends(rules, targets);
    let mut table = String::from(
        "# Generated from the rule tables (and vendor notes where marked).\nBACKENDS = (\n",
    );
    for backend in &backends {
        write_build_backend(&mut table, backend);
    }
    table.push_str(")\n");
    fill(BUILD_TEMPLATE, targets, &table).replacen("@DEVICE_SUFFIXES@", &device_suffixes(), 1)
}

/// Every device-source suffix some backend compiles (CUDA's, then each
/// target profile's), so a source no selected backend takes is refused.
fn device_suffixes() -> String {
    let mut suffixes: Vec<&str> = vec![".cu", ".cuh"];
    for target in Target::ALL {
        for suffix in &target.profile().python.extension_sources {
            if !suffixes.contains(&suffix.as_str()) {
                suffixes.push(suffix);
            }
        }
    }
    py_tuple(&suffixes)
}

fn fill(template: &str, targets: &[Target], table: &str) -> String {
    let names: Vec<&str> = targets.iter().map(|t| t.id()).collect();
    let targets = if names.is_empty() {
        "CUDA only".to_owned()
    } else {
        format!("CUDA + {}", names.join(", "))
    };
    template
        .replacen("@TARGETS@", &targets, 1)
        .replacen(GENERATED_MARK, table.trim_end(), 1)
}

fn aliases(backend: &TorchBackend) -> Vec<String> {
    let mut aliases: Vec<String> = backend
        .targets
        .iter()
        .map(|t| t.id().to_owned())
        .filter(|id| *id != backend.device)
        .collect();
    if backend.device == "cuda" {
        aliases.extend(["hip".to_owned(), "rocm".to_owned()]);
    }
    aliases.sort();
    aliases.dedup();
    aliases
}

/// `    Class(device, aliases=..., adapter=...,`: what both modules' backend
/// entries start with.
fn write_backend_head(out: &mut String, class: &str, backend: &TorchBackend) {
    let _ = writeln!(out, "    {class}(");
    let _ = writeln!(out, "        {},", py_str(&backend.device));
    let _ = writeln!(out, "        aliases={},", py_tuple(&aliases(backend)));
    let adapter = py_opt(backend.adapter.as_deref());
    let _ = writeln!(out, "        adapter={adapter},");
}

fn write_device_backend(out: &mut String, backend: &TorchBackend) {
    let renames: Vec<String> = backend
        .renames
        .iter()
        .map(|(from, to)| format!("{}: {}", py_str(from), py_str(to)))
        .collect();
    write_backend_head(out, "Backend", backend);
    let _ = writeln!(
        out,
        "        dist_backend={},",
        py_str(&backend.dist_backend)
    );
    let _ = writeln!(
        out,
        "        unsupported_dtypes={},",
        py_tuple(&backend.unsupported_dtypes)
    );
    let _ = writeln!(out, "        renames={{{}}},", renames.join(", "));
    let _ = writeln!(out, "    ),");
}

fn write_build_backend(out: &mut String, backend: &TorchBackend) {
    let build = &backend.build;
    if !build.unconfirmed.is_empty() {
        let _ = writeln!(out, "    # UNCONFIRMED ({}): not in the rule tables or vendor docs; check against the installed adapter.", build.unconfirmed.join(", "));
    }
    write_backend_head(out, "BuildBackend", backend);
    let _ = writeln!(out, "        extension={},", py_str(&build.extension));
    let _ = writeln!(out, "        build_ext={},", py_str(&build.build_ext));
    let _ = writeln!(out, "        macro={},", py_str(&build.macro_name));
    let _ = writeln!(
        out,
        "        device_suffixes={},",
        py_tuple(&build.device_suffixes)
    );
    let _ = writeln!(out, "        compiler_key={},", py_opt(build.compiler_key));
    let _ = writeln!(out, "        unconfirmed={},", py_tuple(&build.unconfirmed));
    let _ = writeln!(out, "    ),");
}

/// A Python string literal (double quotes; table text is plain ASCII, but
/// quotes and backslashes are escaped all the same).
fn py_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

fn py_opt(text: Option<&str>) -> String {
    text.map_or_else(|| "None".to_owned(), py_str)
}

fn py_tuple<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => "()".to_owned(),
        [one] => format!("({},)", py_str(one.as_ref())),
        many => {
            let parts: Vec<String> = many.iter().map(|s| py_str(s.as_ref())).collect();
            format!("({})", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod python_tests;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn rules() -> RuleSet {
        RuleSet::builtin().expect("built-in rules load")
    }

    #[test]
    fn backends_take_device_adapter_and_collectives_from_the_tables() {
        let backends = torch_backends(&rules(), &Target::ALL);
        let summary: Vec<String> = backends
            .iter()
            .map(|b| {
                let targets: Vec<&str> = b.targets.iter().map(|t| t.id()).collect();
                format!(
                    "{} [{}] adapter={:?} dist={}",
                    b.device,
                    targets.join(","),
                    b.adapter,
                    b.dist_backend
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                "npu [ascend] adapter=Some(\"torch_npu\") dist=hccl",
                "musa [musa] adapter=Some(\"torch_musa\") dist=mccl",
                "mlu [mlu] adapter=Some(\"torch_mlu\") dist=cncl",
                "cuda [hip,maca] adapter=None dist=nccl",
            ]
        );
    }

    #[test]
    fn renames_come_from_renamed_device_module_entries_only() {
        let backends = torch_backends(&rules(), &[Target::Ascend]);
        let npu = &backends[0];
        assert_eq!(
            npu.renames.get("CUDAGraph").map(String::as_str),
            Some("NPUGraph")
        );
        // DoubleTensor → FloatTensor is lossy (approximate): never a rename.
        assert!(!npu.renames.contains_key("DoubleTensor"));
        assert_eq!(npu.unsupported_dtypes, ["float64"]);
    }

    #[test]
    fn every_helper_is_defined_in_the_device_module() {
        let module = device_module(&rules(), &[Target::Ascend]);
        for helper in DEVICE_HELPERS {
            let defined = module.contains(&format!("def {helper}("))
                || module.contains(&format!("\"{helper}\""));
            assert!(defined, "cuport_device has no {helper}");
        }
    }

    #[test]
    fn generated_modules_say_they_are_generated_and_fill_every_placeholder() {
        for module in [
            device_module(&rules(), &[Target::Mlu]),
            build_module(&rules(), &[Target::Mlu]),
        ] {
            // tree.rs recognises generated files by this line near the top.
            assert!(module[..512].contains("Generated by cuport"));
            assert!(!module.contains("@TARGETS@"), "placeholder left:\n{module}");
            assert!(
                !module.contains(GENERATED_MARK),
                "placeholder left:\n{module}"
            );
        }
    }

    #[test]
    fn build_facts_follow_the_tables() {
        let backends = torch_backends(&rules(), &[Target::Ascend, Target::Musa]);
        let extension: Vec<&str> = backends
            .iter()
            .map(|b| b.build.extension.as_str())
            .collect();
        assert_eq!(
            extension,
            [
                "torch_npu.utils.cpp_extension.NpuExtension",
                "torch_musa.utils.musa_extension.MUSAExtension",
                "torch.utils.cpp_extension.CUDAExtension",
            ]
        );
        assert_eq!(
            backends[1].build.build_ext,
            "torch_musa.utils.musa_extension.BuildExtension"
        );
    }

    #[test]
    fn python_literals_escape_quotes() {
        assert_eq!(py_str("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(py_tuple(&["x"]), "(\"x\",)");
        assert_eq!(py_tuple::<&str>(&[]), "()");
    }
}
