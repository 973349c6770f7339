//! PyTorch training code as public repositories write it (issue: PyTorch
//! ports with nothing missed): device names built from ranks, CUDA names
//! reached through aliases, cuDNN switches, NCCL version checks, the
//! profiler, files that start with a byte-order mark.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::migrate_dir;
use cuport_model::Target;
use cuport_rewrite::{FileMigration, MigrateOptions, Migration};

fn migrate(files: &[(&str, &[u8])], options: &MigrateOptions) -> Migration {
    let root = tempfile::tempdir().unwrap();
    for (path, text) in files {
        std::fs::write(root.path().join(path), text).unwrap();
    }
    migrate_dir(root.path(), options)
}

fn only(migration: &Migration) -> &FileMigration {
    assert_eq!(migration.files.len(), 1, "one file migrated");
    &migration.files[0].result
}

fn port(source: &str, target: Target) -> (String, Vec<(u32, String, String)>) {
    let migration = migrate(
        &[("train.py", source.as_bytes())],
        &MigrateOptions::new(target),
    );
    let file = only(&migration);
    let diagnostics = file
        .diagnostics
        .iter()
        .map(|d| (d.line, d.code.to_string(), d.cuda_name.clone()))
        .collect();
    (String::from_utf8(file.output.clone()).unwrap(), diagnostics)
}

fn diagnosed(diagnostics: &[(u32, String, String)], name: &str) -> bool {
    diagnostics.iter().any(|(_, _, n)| n == name)
}

/// `'cuda:{}'.format(gpu)`, `"cuda:%d" % rank` and `"cuda:" + str(rank)`
/// name a device as surely as `f"cuda:{rank}"`; they were left as CUDA.
#[test]
fn device_names_built_from_ranks_are_ported() {
    let source = "import torch\na = torch.device('cuda:{}'.format(gpu))\nb = \"cuda:%d\" % rank\nc = \"cuda:\" + str(rank)\nd = \"cuda:{0}\".format(rank)\n";
    let (text, _) = port(source, Target::Ascend);
    for expected in [
        "torch.device('npu:{}'.format(gpu))",
        "b = \"npu:%d\" % rank",
        "c = \"npu:\" + str(rank)",
        "d = \"npu:{0}\".format(rank)",
    ] {
        assert!(text.contains(expected), "{expected} in:\n{text}");
    }
}

/// A device name that flows into code is ported wherever it sits; the
/// same word in a message for a person (print, logging, warnings, raise)
/// is text and stays.
#[test]
fn device_strings_in_messages_stay_and_in_data_flow_change() {
    let source = "import torch\nimport logging\nimport warnings\nlog = logging.getLogger()\nif args.device == \"cuda\":\n    table = {\"cuda\": 1}\np.add_argument(\"--d\", default=\"cuda\", choices=[\"cuda\", \"cpu\"])\nprint(\"cuda\")\nlog.info(\"%s\", \"cuda:0\")\nlogging.warning(\"cuda\")\nwarnings.warn(\"cuda:{}\".format(0))\nraise ValueError(\"cuda\")\n";
    let (text, diagnostics) = port(source, Target::Ascend);
    for expected in [
        "args.device == \"npu\"",
        "{\"npu\": 1}",
        "default=\"npu\", choices=[\"npu\", \"cpu\"]",
        "print(\"cuda\")",
        "log.info(\"%s\", \"cuda:0\")",
        "logging.warning(\"cuda\")",
        "warnings.warn(\"cuda:{}\".format(0))",
        "raise ValueError(\"cuda\")",
    ] {
        assert!(text.contains(expected), "{expected} in:\n{text}");
    }
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
}

/// The bf16 check of public FSDP examples: every CUDA name in it was left
/// as it was, without a word, and the check turned bf16 off on NPU.
#[test]
fn names_the_tables_know_are_found_through_aliases() {
    let source = "import torch\nimport torch.distributed as dist\nimport torch.cuda.nccl as nccl\n\ndef bf16():\n    return (\n        torch.version.cuda\n        and dist.is_nccl_available()\n        and torch.distributed.is_nccl_available()\n        and nccl.version() >= (2, 10)\n    )\n";
    let (text, diagnostics) = port(source, Target::Ascend);
    assert!(text.contains("        torch.version.cann\n"), "{text}");
    assert!(text.contains("and dist.is_hccl_available()"), "{text}");
    assert!(
        text.contains("and torch.distributed.is_hccl_available()"),
        "{text}"
    );
    assert!(text.contains("nccl.version() >= (2, 10)"), "{text}");
    for name in [
        "torch.version.cuda",
        "torch.cuda.nccl",
        "torch.cuda.nccl.version",
    ] {
        assert!(diagnosed(&diagnostics, name), "{name}: {diagnostics:?}");
    }
}

/// `cudnn.deterministic = True` became `torch.use_deterministic_algorithms =
/// True`, which replaced the function instead of calling it, and a second
/// run no longer saw the line.
#[test]
fn cudnn_deterministic_becomes_a_call_and_reads_are_reported() {
    let source = "import torch\nimport torch.backends.cudnn as cudnn\ncudnn.deterministic = True\ntorch.backends.cudnn.deterministic = flag\nif cudnn.deterministic:\n    pass\n";
    let (text, diagnostics) = port(source, Target::Ascend);
    assert!(
        text.contains("\ntorch.use_deterministic_algorithms(True, warn_only=True)\n"),
        "{text}"
    );
    assert!(
        text.contains("\ntorch.use_deterministic_algorithms(flag, warn_only=True)\n"),
        "{text}"
    );
    assert!(text.contains("if cudnn.deterministic:"), "{text}");
    assert!(
        diagnostics
            .iter()
            .any(|(line, code, _)| *line == 5 && code == "CP0003"),
        "{diagnostics:?}"
    );
    assert!(diagnosed(&diagnostics, "torch.backends.cudnn"));
    let (again, second) = port(&text, Target::Ascend);
    assert_eq!(again, text, "a second run changes nothing");
    assert!(diagnosed(&second, "torch.backends.cudnn.deterministic"));
}

/// The profiler's activities must come from the profiler that takes them:
/// torch_npu documents `torch_npu.profiler.profile` with its own
/// `ProfilerActivity`, `schedule` and `tensorboard_trace_handler`.
#[test]
fn the_profiler_moves_to_torch_npu_as_a_whole() {
    let source = "import torch\nfrom torch.profiler import profile, ProfilerActivity, record_function\nwith profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=torch.profiler.schedule(wait=1, active=1), on_trace_ready=torch.profiler.tensorboard_trace_handler(\"t\")):\n    with record_function(\"s\"):\n        pass\n";
    let (text, _) = port(source, Target::Ascend);
    assert!(text.contains("with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU], schedule=torch_npu.profiler.schedule(wait=1, active=1), on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(\"t\")):"), "{text}");
    assert!(text.contains("with record_function(\"s\"):"), "{text}");
    assert!(text.contains("\nimport torch_npu\n"), "{text}");
    // A target without torch_npu's profiler keeps torch's, without a word.
    let (hip, diagnostics) = port(source, Target::Hip);
    assert!(hip.contains("with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"));
    assert!(!diagnosed(&diagnostics, "torch.profiler.profile"));
}

/// A module alias whose target lives elsewhere (`cudnn.allow_tf32` →
/// `torch.npu.conv.allow_hf32`) is written in full, with the import its
/// root needs; one under the same module keeps the alias.
#[test]
fn aliased_paths_are_written_in_full_where_the_module_changes() {
    let source = "import torch.backends.cudnn as cudnn\nfrom torch.cuda import amp\ncudnn.allow_tf32 = True\nscaler = amp.GradScaler()\n";
    let (text, diagnostics) = port(source, Target::Ascend);
    assert!(
        text.contains("\ntorch.npu.conv.allow_hf32 = True\n"),
        "{text}"
    );
    assert!(
        text.contains("scaler = torch.npu.amp.GradScaler()"),
        "{text}"
    );
    assert!(
        text.starts_with("import torch\n") || text.contains("\nimport torch\n"),
        "{text}"
    );
    assert!(
        !diagnostics.iter().any(|(_, code, _)| code == "CP0003"),
        "{diagnostics:?}"
    );
    let (again, _) = port(&text, Target::Ascend);
    assert_eq!(again, text);
}

/// An editor's byte-order mark must stay the first bytes: Python rejects
/// U+FEFF anywhere else, and the import went in front of it.
#[test]
fn a_byte_order_mark_stays_first() {
    let bom = "\u{feff}";
    for source in [
        format!("{bom}import torch\nx = torch.zeros(1).cuda()\n"),
        format!("{bom}\"\"\"Doc.\"\"\"\nx = batch.cuda()\n"),
        format!("{bom}x = batch.cuda()\n"),
    ] {
        for target in [Target::Ascend, Target::Mlu] {
            let (text, _) = port(&source, target);
            assert!(text.starts_with(bom), "{target:?}:\n{text:?}");
            assert_eq!(text.matches(bom).count(), 1, "{text:?}");
        }
    }
}

/// ROCm builds of PyTorch set `torch.version.hip` and leave
/// `torch.version.cuda` None.
#[test]
fn torch_version_cuda_on_hip_reads_the_hip_version() {
    let (text, diagnostics) = port(
        "import torch\nok = torch.version.cuda is not None\n",
        Target::Hip,
    );
    assert!(
        text.contains("ok = torch.version.hip is not None"),
        "{text}"
    );
    assert!(diagnosed(&diagnostics, "torch.version.cuda"));
}

/// Dual-stack output must stay Python: an f-string cannot hold the `{}` of
/// a `.format` template.
#[test]
fn dual_stack_device_templates_stay_valid_python() {
    let mut options = MigrateOptions::new(Target::Ascend);
    options.mode = cuport_rewrite::Mode::Dual(vec![Target::Ascend]);
    let migration = migrate(
        &[(
            "train.py",
            b"import torch\nd = torch.device('cuda:{}'.format(gpu))\ne = \"cuda:%d\" % rank\n",
        )],
        &options,
    );
    let file = migration
        .files
        .iter()
        .find(|f| f.path == "train.py")
        .unwrap();
    let text = String::from_utf8(file.result.output.clone()).unwrap();
    assert!(
        text.contains("torch.device((cuport_device.accelerator + ':{}').format(gpu))"),
        "{text}"
    );
    assert!(
        text.contains("e = f\"{cuport_device.accelerator}:%d\" % rank"),
        "{text}"
    );
}

/// C code in a `.py` file (a fuzzing finding: a tree whose rerun generated
/// `cuport/driver.h`): bare C names the tables know are no PyTorch APIs.
#[test]
fn c_names_in_python_are_not_framework_calls() {
    let mut options = MigrateOptions::new(Target::Musa);
    options.mode = cuport_rewrite::Mode::Dual(vec![Target::Musa]);
    let migration = migrate(
        &[(
            "train.py",
            b"cuModuleLoad(m, path)\ncuLaunchKernel(f)\nx = cudaMalloc\n",
        )],
        &options,
    );
    assert!(
        migration
            .generated
            .iter()
            .all(|g| !g.path.ends_with("driver.h")),
        "{:?}",
        migration
            .generated
            .iter()
            .map(|g| &g.path)
            .collect::<Vec<_>>()
    );
}

/// flash-attention: `torch.version.cuda.split(".")` and
/// `torch.distributed.Backend.NCCL` were no touchpoints at all: the chain
/// is longer than the name the tables know, and the backend constant had
/// no rule.
#[test]
fn a_known_name_at_the_head_of_a_longer_chain_is_found() {
    let source = "import torch\nver = tuple(map(int, torch.version.cuda.split(\".\")))\nif backend == torch.distributed.Backend.NCCL:\n    pass\n";
    let (text, diagnostics) = port(source, Target::Ascend);
    assert!(text.contains("torch.version.cann.split(\".\")"), "{text}");
    assert!(
        diagnosed(&diagnostics, "torch.version.cuda"),
        "{diagnostics:?}"
    );
    assert!(
        text.contains("backend == torch.distributed.Backend.HCCL:"),
        "{text}"
    );
    let (text, _) = port(source, Target::Mlu);
    assert!(text.contains("torch.distributed.Backend.CNCL"), "{text}");
    let (text, diagnostics) = port(source, Target::Hip);
    assert!(text.contains("torch.version.hip.split"), "{text}");
    assert!(text.contains("torch.distributed.Backend.NCCL"), "{text}");
    assert!(
        !diagnostics.iter().any(|(_, code, _)| code == "CP0001"),
        "{diagnostics:?}"
    );
}
