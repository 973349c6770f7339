#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::sync::OnceLock;

use cuport_analyze::{analyze_source, AnalyzeOptions};
use cuport_model::{Language, Target};
use cuport_rules::RuleSet;

use super::dtype::fp64_uses;
use crate::file::migrate_file;
use crate::options::MigrateOptions;
use crate::Diagnostic;

fn rules() -> &'static RuleSet {
    static RULES: OnceLock<RuleSet> = OnceLock::new();
    RULES.get_or_init(|| RuleSet::builtin().expect("built-in rules load"))
}

/// The dual rewrite of `src` for `targets`: output and diagnostics.
fn dual(src: &str, targets: &[Target]) -> (String, Vec<Diagnostic>) {
    let analysis = analyze_source(Language::Python, src.as_bytes(), &AnalyzeOptions::default());
    let mut options = MigrateOptions::new(targets[0]);
    options.mode = crate::options::Mode::Dual(targets.to_vec());
    let migrated = migrate_file(
        "",
        Language::Python,
        src.as_bytes(),
        &analysis,
        rules(),
        &options,
    );
    let output = String::from_utf8(migrated.output).unwrap();
    (output, migrated.diagnostics)
}

fn body(output: &str) -> String {
    output
        .lines()
        .filter(|l| !l.starts_with("import "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn device_strings_become_the_accelerator_with_their_index() {
    let src = "import torch\na = torch.device(\"cuda\")\nb = 'cuda:1'\nc = f\"cuda:{rank}\"\n";
    let (out, diagnostics) = dual(src, &[Target::Ascend]);
    assert_eq!(
        body(&out),
        "a = torch.device(cuport_device.accelerator)\nb = f'{cuport_device.accelerator}:1'\nc = f\"{cuport_device.accelerator}:{rank}\""
    );
    assert!(
        out.contains("import torch\nimport cuport_device\n"),
        "{out}"
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
}

#[test]
fn amp_device_types_and_backends_use_their_own_names() {
    let src = "import torch\nwith torch.autocast(device_type=\"cuda\"):\n    pass\ndist.init_process_group(backend=\"nccl\")\n";
    let (out, _) = dual(src, &[Target::Mlu]);
    assert!(
        out.contains("torch.autocast(device_type=cuport_device.amp_device_type)"),
        "{out}"
    );
    assert!(out.contains("backend=cuport_device.dist_backend"), "{out}");
}

#[test]
fn glued_and_bytes_literals_are_kept_and_reported() {
    let src = "import torch\nd = torch.device(\"cuda\" \":0\")\n";
    let (out, diagnostics) = dual(src, &[Target::Ascend]);
    assert_eq!(out, src);
    assert_eq!(diagnostics[0].code, crate::codes::DUAL_KEPT);
}

#[test]
fn tensor_cuda_calls_become_to_with_their_arguments() {
    let src = "import torch\na = x.cuda()\nb = m.cuda(non_blocking=True)\nc = x.cuda(rank, non_blocking=True)\nd = x.cuda(device=1)\n";
    let (out, diagnostics) = dual(src, &[Target::Ascend, Target::Hip]);
    assert_eq!(
        body(&out),
        "a = x.to(cuport_device.accelerator)\nb = m.to(cuport_device.accelerator, non_blocking=True)\nc = x.to(cuport_device.device(rank), non_blocking=True)\nd = x.cuda(device=1)"
    );
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0].line, 5);
}

#[test]
fn is_cuda_compares_the_device_type_in_parentheses() {
    let src = "import torch\nassert batch[0].is_cuda or cpu\nx.is_cuda = True\n";
    let (out, diagnostics) = dual(src, &[Target::Musa]);
    assert!(
        out.contains("assert (batch[0].device.type == cuport_device.accelerator) or cpu"),
        "{out}"
    );
    assert!(out.contains("x.is_cuda = True"), "{out}");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
}

#[test]
fn device_module_calls_use_helpers_module_or_renames() {
    let src = "import torch\ntorch.cuda.synchronize()\nn = torch.cuda.mem_get_info()\ng = torch.cuda.CUDAGraph()\n";
    let (out, diagnostics) = dual(src, &[Target::Ascend, Target::Mlu]);
    assert_eq!(
        body(&out),
        "cuport_device.synchronize()\nn = cuport_device.module().mem_get_info()\ng = cuport_device.get(\"CUDAGraph\")()"
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
}

#[test]
fn a_target_without_the_name_is_named_in_a_diagnostic() {
    let src = "import torch\ntorch.cuda.synchronize()\n";
    let (out, diagnostics) = dual(src, &[Target::Ascend, Target::Musa]);
    assert!(out.contains("cuport_device.synchronize()"), "{out}");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert!(
        diagnostics[0].message.starts_with("musa: "),
        "{diagnostics:?}"
    );
}

#[test]
fn names_no_target_has_are_kept() {
    let src = "import torch\ntorch.cuda.nvtx.range_push(\"x\")\n";
    let (out, diagnostics) = dual(src, &[Target::Ascend]);
    assert_eq!(out, src);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert!(diagnostics[0].message.contains("kept"), "{diagnostics:?}");
}

#[test]
fn a_renamed_parent_module_carries_its_members() {
    let src = "import torch\ntorch.cuda.nvtx.range_pop()\n";
    let (out, diagnostics) = dual(src, &[Target::Mlu]);
    assert!(
        out.contains("cuport_device.get(\"nvtx.range_pop\")()"),
        "{out}"
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
}

#[test]
fn imports_stay_and_lossy_names_are_not_substituted() {
    let src = "import torch\nfrom torch.cuda import amp\nt = torch.cuda.DoubleTensor(3)\n";
    let (out, diagnostics) = dual(src, &[Target::Ascend]);
    assert!(out.contains("from torch.cuda import amp\n"), "{out}");
    assert!(out.contains("torch.cuda.DoubleTensor(3)"), "{out}");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
}

#[test]
fn setup_py_builds_through_cuport_build() {
    let src = "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\next = CUDAExtension(\"m\", [\"a.cpp\"])\nsetup(cmdclass={\"build_ext\": BuildExtension})\n";
    let (out, diagnostics) = dual(src, &[Target::Hip]);
    assert!(out.starts_with("import cuport_build\n"), "{out}");
    assert!(
        out.contains("ext = cuport_build.extension(\"m\", [\"a.cpp\"])"),
        "{out}"
    );
    assert!(
        out.contains("{\"build_ext\": cuport_build.build_ext_class()}"),
        "{out}"
    );
    assert_eq!(
        diagnostics.len(),
        1,
        "hip's approximate CUDAExtension: {diagnostics:?}"
    );
}

#[test]
fn fp64_is_found_in_code_only() {
    let src = "# torch.float64 in a comment\nx = torch.zeros(2, dtype=torch.float64)\ny = x.double()\ns = 'torch.double'\nz = torch.double_buffer\n";
    let names: Vec<&str> = fp64_uses(src.as_bytes())
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(names, ["torch.float64", "torch.Tensor.double"]);
}

#[test]
fn fp64_is_reported_for_targets_without_it_only() {
    let src = b"import torch\nx = torch.ones(2, dtype=torch.float64).double()\n";
    let lines = cuport_model::LineIndex::new(src);
    let mut reported = Vec::new();
    for targets in [
        vec![Target::Ascend, Target::Hip],
        vec![Target::Hip, Target::Musa],
    ] {
        let mut options = MigrateOptions::new(targets[0]);
        options.mode = crate::options::Mode::Dual(targets);
        let mut planner =
            crate::plan::Planner::new(src, Language::Python, rules(), &options, &lines);
        super::finish_file(&mut planner);
        reported.push(planner.out.diagnostics);
    }
    let messages: Vec<&str> = reported[0].iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages.iter().all(|m| m.starts_with("ascend: fp64")),
        "{messages:?}"
    );
    assert_eq!(reported[0][0].code, crate::codes::DUAL_UNSUPPORTED_DTYPE);
    assert!(reported[1].is_empty(), "{:?}", reported[1]);
}
