//! Python sites in dual-stack mode: CUDA-only spellings are rewritten to
//! the generated `cuport_device` / `cuport_build` modules, which choose the
//! backend at run (or build) time, so one script runs on CUDA and on every
//! selected target. What has no portable spelling is kept for CUDA and
//! reported for each target that spells it differently.
//!
//! The rewritten file gains `import cuport_device` (after `import torch`);
//! the module must be importable from it: see `python_module`.
mod device_module;
mod dtype;
mod findings;

use cuport_analyze::Site;
use cuport_model::{SiteKind, Target, TextRange};
use cuport_rules::Status;

use crate::diagnostic::{codes, Level};
use crate::dual::python_module::torch_backends;
use crate::plan::Planner;
use crate::pysource as scan;
use cuport_model::Effort;
use findings::{lookup, report, table_finding, targets, unknown, Finding};

// `finish_file` once per dual-stack Python file, after its sites.
pub(crate) use dtype::finish_file;

const IMPORT_DEVICE: &str = "import cuport_device";
const IMPORT_BUILD: &str = "import cuport_build";
const EXTENSION: &str = "torch.utils.cpp_extension.CUDAExtension";
const BUILD_EXTENSION: &str = "torch.utils.cpp_extension.BuildExtension";
const KEPT: &str = "it is kept as written, for CUDA";

/// Plans one Python site for a dual-stack run.
pub(crate) fn plan_site(planner: &mut Planner<'_>, site: &Site) {
    if site.kind == SiteKind::CudaOnlyImport {
        return keep(planner, site);
    }
    // Imports stay valid on every backend (torch.cuda exists in every torch
    // build); the names they bind are rewritten where they are used.
    if scan::in_import_statement(planner.src, site.range.start) {
        return;
    }
    match site.kind {
        SiteKind::DeviceString => device_string(planner, site),
        SiteKind::DistributedBackend => dist_backend(planner, site),
        // `torch.autocast(device_type="cuda")`: the string inside is the site.
        SiteKind::FrameworkCall if site.name.ends_with("[cuda]") => {}
        SiteKind::FrameworkCall if site.name == "torch.Tensor.cuda" => tensor_cuda(planner, site),
        SiteKind::FrameworkCall if site.name == "torch.Tensor.is_cuda" => {
            tensor_is_cuda(planner, site)
        }
        SiteKind::FrameworkCall if device_module_rest(&site.name).is_some() => {
            device_module::device_module_name(planner, site)
        }
        SiteKind::BuildRule if site.name == EXTENSION => extension(planner, site),
        SiteKind::BuildRule if site.name == BUILD_EXTENSION => build_extension(planner, site),
        _ => keep(planner, site),
    }
}

/// `torch.cuda.X.Y` → `Some("X.Y")`; `torch.cuda` → `Some("")`.
fn device_module_rest(name: &str) -> Option<&str> {
    match name.strip_prefix("torch.cuda") {
        Some("") => Some(""),
        Some(rest) => rest.strip_prefix('.'),
        None => None,
    }
}

/// Replaces `range` with `text`. Where the replacement starts or ends with
/// a name and the source has a name right next to it, a space keeps the
/// two apart: `"cuda"if ok else "cpu"` is valid Python and must not become
/// `cuport_device.acceleratorif ok ...` (a fuzzing finding:
/// `fuzz_regressions::python_literal_next_to_a_keyword_stays_apart`).
fn portable_edit(planner: &mut Planner<'_>, range: TextRange, mut text: String, site: &Site) {
    let name_byte =
        |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80);
    let before = range.start.checked_sub(1).and_then(|i| planner.src.get(i));
    if name_byte(text.as_bytes().last()) && name_byte(planner.src.get(range.end)) {
        text.push(' ');
    }
    if name_byte(text.as_bytes().first()) && name_byte(before) {
        text.insert(0, ' ');
    }
    planner.edit(range, text, codes::DUAL_PORTABLE, &site.name);
    planner.out.imports.push(IMPORT_DEVICE.to_owned());
}

fn not_portable(planner: &mut Planner<'_>, site: &Site, why: &str, instead: &str) {
    let message = format!("`{}` is kept for CUDA: {why}", site.name);
    let diagnostic = planner.diagnose(site, codes::DUAL_KEPT, Level::Manual, message);
    diagnostic.effort = Some(Effort::Low);
    diagnostic.suggestion = Some(instead.to_owned());
}

/// A site with no portable spelling: kept, and reported for every target
/// whose tables spell it differently.
fn keep(planner: &mut Planner<'_>, site: &Site) {
    let mut found = Vec::new();
    for target in targets(planner) {
        let resolved = lookup(planner, target, &site.name);
        let finding = match (&resolved, site.kind) {
            (None, SiteKind::CudaOnlyImport) => Some(cuda_only_package(&site.name)),
            (None, SiteKind::BuildRule) => build_rule(planner, target, &site.name),
            // A path that does not say CUDA (`torch.profiler.profile`) and
            // that this target does not port is the same API there.
            (None, _) if crate::plan::same_api_without_a_rule(site) => None,
            _ => table_finding(&site.name, resolved.as_ref(), KEPT),
        };
        found.extend(finding.map(|f| (target, f)));
    }
    report(planner, site, found);
}

fn cuda_only_package(name: &str) -> Finding {
    let body = format!("`{name}` only runs on NVIDIA GPUs; it is kept for CUDA");
    Finding::new(codes::CUDA_ONLY_PACKAGE, Level::Manual, body)
        .effort(Effort::Medium)
        .suggest("import and use it only when `cuport_device.device_type == \"cuda\"`, or find a build for the target")
}

/// Build rules the tables do not know. `.cu` sources build wherever the
/// extension builder compiles them (CUDAExtension hipifies them on ROCm).
fn build_rule(planner: &Planner<'_>, target: Target, name: &str) -> Option<Finding> {
    if name == "sources=[*.cu]" {
        let builds_cu = torch_backends(planner.rules, &[target])
            .iter()
            .find(|b| b.targets.contains(&target))
            .is_some_and(|b| b.build.device_suffixes.contains(&".cu"));
        if builds_cu {
            return None;
        }
        let body = "`.cu` sources do not build there; port the kernels and list the ported sources per backend (`cuport_build.extension(..., per_backend={...})`)".to_owned();
        return Some(Finding::new(codes::BUILD_MANUAL, Level::Manual, body).effort(Effort::Low));
    }
    let body = format!("build rule `{name}` is kept for CUDA and has no portable form; adapt it per backend by hand");
    Some(Finding::new(codes::BUILD_MANUAL, Level::Manual, body).effort(Effort::Low))
}

/// Whether the string at `range` is glued to a neighbouring literal
/// (`"cuda" ":0"`), where an expression cannot stand in for it.
fn concatenated(src: &[u8], range: TextRange) -> bool {
    let before = scan::previous_byte(src, range.start).is_some_and(|(i, b)| {
        (b == b'"' || b == b'\'')
            && scan::same_statement(src, TextRange::new(i + 1, range.start), range.start)
    });
    let after = scan::string_after(src, range.end).is_some_and(|next| {
        scan::same_statement(src, TextRange::new(range.end, next), range.start)
    });
    before || after
}

/// The prefix letters and the opening quote (one or three characters).
fn string_parts(written: &str) -> Option<(&str, &str)> {
    let prefix_len = written.find(['"', '\''])?;
    let rest = &written[prefix_len..];
    let quote = &rest[..1];
    let triple = rest.len() >= 6 && rest[..3].chars().all(|c| c.to_string() == quote);
    Some((
        &written[..prefix_len],
        if triple { &rest[..3] } else { quote },
    ))
}

/// Whether the string at `at` is an amp device type: `device_type="cuda"`
/// or the first argument of autocast / GradScaler.
fn amp_context(src: &[u8], at: usize) -> bool {
    let before = String::from_utf8_lossy(&src[at.saturating_sub(64)..at]);
    let before = before.trim_end();
    (before.ends_with("device_type=") && !before.ends_with("=="))
        || before.ends_with("autocast(")
        || before.ends_with("GradScaler(")
}

/// `"cuda"` → `cuport_device.accelerator`, `"cuda:1"` →
/// `f"{cuport_device.accelerator}:1"`, `f"cuda:{i}"` →
/// `f"{cuport_device.accelerator}:{i}"`.
fn device_string(planner: &mut Planner<'_>, site: &Site) {
    let missing: Vec<(Target, Finding)> = targets(planner)
        .into_iter()
        .filter(|&t| planner.rules.device_string(t, "cuda").is_none())
        .map(|t| (t, unknown("cuda", KEPT)))
        .collect();
    report(planner, site, missing);
    let written = planner.text(site.range);
    let Some((prefix, quote)) = string_parts(written) else {
        return;
    };
    if prefix.contains(['b', 'B']) || concatenated(planner.src, site.range) {
        return not_portable(
            planner,
            site,
            "the literal is bytes or glued to another string",
            "spell the device as `cuport_device.accelerator` by hand",
        );
    }
    let start = site.range.start + prefix.len() + quote.len();
    if prefix.contains(['f', 'F']) {
        let word = TextRange::new(start, start + 4);
        if planner.text(word) == "cuda" {
            portable_edit(planner, word, "{cuport_device.accelerator}".into(), site);
        }
        return;
    }
    let replacement = match site.name.strip_prefix("cuda:") {
        // `'cuda:{}'.format(i)`: an f-string would read `{}` as an
        // expression, so the device word is concatenated instead.
        Some(index) if index.contains(['{', '}']) => {
            format!("(cuport_device.accelerator + {prefix}{quote}:{index}{quote})")
        }
        Some(index) => format!("f{quote}{{cuport_device.accelerator}}:{index}{quote}"),
        None if amp_context(planner.src, site.range.start) => {
            "cuport_device.amp_device_type".into()
        }
        None => "cuport_device.accelerator".into(),
    };
    portable_edit(planner, site.range, replacement, site);
}

/// `"nccl"` → `cuport_device.dist_backend`.
fn dist_backend(planner: &mut Planner<'_>, site: &Site) {
    // `torch.cuda.nccl` became `cuport_device.get("nccl")`: the name of the
    // module's attribute, not a backend (a fuzz finding, renamed by a
    // second run).
    let before = &planner.src[..site.range.start];
    if before.trim_ascii_end().ends_with(b"cuport_device.get(") {
        return;
    }
    let unknown: Vec<(Target, Finding)> = targets(planner)
        .into_iter()
        .filter(|&t| planner.rules.device_string(t, "nccl").is_none())
        .map(|t| (t, unknown("nccl", KEPT)))
        .collect();
    report(planner, site, unknown);
    let written = planner.text(site.range);
    let bytes = string_parts(written).is_some_and(|(p, _)| p.contains(['b', 'B']));
    if bytes || concatenated(planner.src, site.range) {
        return not_portable(
            planner,
            site,
            "the literal is bytes or glued to another string",
            "spell the backend as `cuport_device.dist_backend` by hand",
        );
    }
    portable_edit(
        planner,
        site.range,
        "cuport_device.dist_backend".into(),
        site,
    );
}

/// `x.cuda()` → `x.to(cuport_device.accelerator)`, `x.cuda(i, ...)` →
/// `x.to(cuport_device.device(i), ...)`. Only `cuda(` and the end of the
/// device argument are edited, so edits inside the arguments still apply.
fn tensor_cuda(planner: &mut Planner<'_>, site: &Site) {
    let Some(call) = scan::call_after(planner.src, site.range.end) else {
        return not_portable(
            planner,
            site,
            "it is not called here",
            "use `.to(cuport_device.accelerator)`",
        );
    };
    let positional: Vec<TextRange> = call.positional().map(|a| a.range).collect();
    let awkward = call
        .args
        .iter()
        .any(|a| a.starred || a.keyword.as_deref() == Some("device"));
    let head = TextRange::new(site.range.start, call.open + 1);
    match positional.as_slice() {
        _ if awkward => not_portable(
            planner,
            site,
            "its device is passed by keyword or unpacked",
            "write `.to(cuport_device.device(DEVICE), ...)` by hand",
        ),
        [] if call.args.is_empty() => {
            portable_edit(planner, head, "to(cuport_device.accelerator".into(), site)
        }
        [] => portable_edit(planner, head, "to(cuport_device.accelerator, ".into(), site),
        [device] => {
            let end = TextRange::new(device.end, device.end);
            portable_edit(planner, head, "to(cuport_device.device(".into(), site);
            portable_edit(planner, end, ")".into(), site);
        }
        _ => not_portable(
            planner,
            site,
            "it has several positional arguments",
            "write `.to(cuport_device.device(DEVICE), non_blocking=...)` by hand",
        ),
    }
}

/// `x.is_cuda` → `(x.device.type == cuport_device.accelerator)`.
fn tensor_is_cuda(planner: &mut Planner<'_>, site: &Site) {
    let src = planner.src;
    let dot = site.range.start.checked_sub(1).filter(|&d| src[d] == b'.');
    let assigned = scan::called_or_assigned(scan::rest_of_line(src, site.range.end));
    let object = dot
        .filter(|_| !assigned)
        .and_then(|d| scan::object_start(src, d));
    let Some(object) = object else {
        return not_portable(
            planner,
            site,
            "it is assigned, called or on an expression cuport cannot delimit",
            "compare `x.device.type == cuport_device.accelerator` by hand",
        );
    };
    portable_edit(planner, TextRange::new(object, object), "(".into(), site);
    portable_edit(
        planner,
        site.range,
        "device.type == cuport_device.accelerator)".into(),
        site,
    );
}

/// `CUDAExtension(...)` → `cuport_build.extension(...)`.
fn extension(planner: &mut Planner<'_>, site: &Site) {
    if scan::call_after(planner.src, site.range.end).is_none() {
        return keep(planner, site);
    }
    planner.edit(
        site.range,
        "cuport_build.extension".into(),
        codes::DUAL_PORTABLE,
        &site.name,
    );
    planner.out.imports.push(IMPORT_BUILD.to_owned());
    let mut found = Vec::new();
    for target in targets(planner) {
        let Some(resolved) = lookup(planner, target, EXTENSION) else {
            continue;
        };
        let builder = resolved
            .target_name
            .as_deref()
            .unwrap_or(EXTENSION)
            .to_owned();
        let level = match resolved.status() {
            Status::Exact | Status::Renamed => continue,
            Status::Manual => Level::Manual,
            Status::Unsupported => Level::Unsupported,
            Status::Approximate | Status::Rewrite => Level::Approximate,
        };
        let body = format!("`cuport_build.extension` builds it with `{builder}` there");
        let finding = Finding::new(codes::DUAL_KEPT, level, body)
            .table_code(&resolved)
            .with_table_note(&resolved);
        found.push((target, finding));
    }
    report(planner, site, found);
}

/// `BuildExtension` → `cuport_build.build_ext_class()`.
fn build_extension(planner: &mut Planner<'_>, site: &Site) {
    planner.edit(
        site.range,
        "cuport_build.build_ext_class()".into(),
        codes::DUAL_PORTABLE,
        &site.name,
    );
    planner.out.imports.push(IMPORT_BUILD.to_owned());
    let targets = targets(planner);
    let found: Vec<(Target, Finding)> = torch_backends(planner.rules, &targets)
        .into_iter()
        .filter(|b| !b.build.unconfirmed.is_empty())
        .flat_map(|b| {
            let body = format!("`cuport_build.build_ext_class()` uses `{}` there, which neither the tables nor the vendor notes confirm", b.build.build_ext);
            let finding = Finding::new(codes::DUAL_KEPT, Level::Note, body);
            b.targets.into_iter().map(move |t| (t, finding.clone()))
        })
        .collect();
    report(planner, site, found);
}

#[cfg(test)]
mod tests;
