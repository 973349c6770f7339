//! `torch.cuda.X` in dual-stack mode: reached through `cuport_device`
//! when at least one selected target has it (same name, or a name the
//! tables rename), kept for CUDA otherwise; every target that lacks it is
//! named in a diagnostic.
use cuport_analyze::Site;
use cuport_model::Target;
use cuport_rules::Status;

use super::findings::{lookup, report, table_finding, targets, unknown, Finding};
use super::{device_module_rest, portable_edit, KEPT};
use crate::diagnostic::{codes, Level};
use crate::dual::python_module::{renamed_in_device_module, DEVICE_HELPERS};
use crate::plan::Planner;
use cuport_model::Effort;

/// How one target reaches `torch.cuda.<rest>` through cuport_device.
enum Reach {
    /// `torch.<device>.<rest>`, possibly with a finding (approximate).
    Same(Option<Finding>),
    /// `torch.<device>.<other>`: through `cuport_device.get`.
    Renamed,
    /// Not at all: the finding says why.
    Missing(Finding),
}

fn reach(planner: &Planner<'_>, target: Target, name: &str, consequence: &str) -> Reach {
    let Some(device) = planner.rules.device_string(target, "cuda") else {
        return Reach::Missing(unknown(name, consequence));
    };
    let rest = device_module_rest(name).unwrap_or(name);
    let Some(resolved) = lookup(planner, target, name) else {
        return parent_reach(planner, target, &device, name, consequence);
    };
    let on_device = resolved.target_name.as_deref().and_then(|to| {
        to.strip_prefix(&format!("torch.{device}."))
            .map(str::to_owned)
    });
    match (resolved.status(), on_device) {
        (Status::Exact, _) => Reach::Same(None),
        (Status::Renamed, Some(to)) if to == rest => Reach::Same(None),
        (Status::Renamed, Some(_)) => Reach::Renamed,
        (Status::Approximate, Some(to)) if to == rest => {
            Reach::Same(table_finding(name, Some(&resolved), consequence))
        }
        (Status::Approximate, Some(to)) => {
            let body = format!("`{name}` has only a lossy counterpart there (`torch.{device}.{to}`), which cuport_device does not substitute; {consequence}");
            Reach::Missing(
                Finding::new(codes::DUAL_KEPT, Level::Manual, body)
                    .table_code(&resolved)
                    .with_table_note(&resolved)
                    .effort(Effort::Low),
            )
        }
        _ => match table_finding(name, Some(&resolved), consequence) {
            Some(finding) => Reach::Missing(finding),
            None => Reach::Same(None),
        },
    }
}

/// `torch.cuda.nvtx.range_push` when only `torch.cuda.nvtx` has a row: a
/// renamed module (`torch.mlu.cnpx`) carries its members along.
fn parent_reach(
    planner: &Planner<'_>,
    target: Target,
    device: &str,
    name: &str,
    consequence: &str,
) -> Reach {
    let mut parent = name;
    while let Some((up, _)) = parent.rsplit_once('.') {
        parent = up;
        if device_module_rest(parent).is_none_or(str::is_empty) {
            break;
        }
        if renamed_in_device_module(planner.rules, target, device, parent).is_some() {
            return Reach::Renamed;
        }
        if let Some(resolved) = lookup(planner, target, parent) {
            if let Some(finding) = table_finding(parent, Some(&resolved), consequence) {
                return Reach::Missing(finding);
            }
        }
    }
    Reach::Missing(unknown(name, consequence))
}

/// `torch.cuda.X` → `cuport_device.X` (a helper), `cuport_device.get("X")`
/// (renamed on some target) or `cuport_device.module().X`. When no target
/// has the name, the CUDA spelling is kept.
pub(super) fn device_module_name(planner: &mut Planner<'_>, site: &Site) {
    let rest = device_module_rest(&site.name)
        .unwrap_or_default()
        .to_owned();
    let replacement = portable_device_name(planner, &site.name, &rest);
    let reaches = |planner: &Planner<'_>, consequence: &str| -> Vec<(Target, Reach)> {
        targets(planner)
            .into_iter()
            .map(|t| (t, reach(planner, t, &site.name, consequence)))
            .collect()
    };
    let fails = format!("`{replacement}` fails there");
    let mut found = reaches(planner, &fails);
    let reachable = found.iter().any(|(_, r)| !matches!(r, Reach::Missing(_)));
    if reachable {
        portable_edit(planner, site.range, replacement, site);
    } else {
        found = reaches(planner, KEPT);
    }
    let findings = found
        .into_iter()
        .filter_map(|(t, r)| match r {
            Reach::Same(finding) => finding.map(|f| (t, f)),
            Reach::Renamed => None,
            Reach::Missing(finding) => Some((t, finding)),
        })
        .collect();
    report(planner, site, findings);
}

fn portable_device_name(planner: &Planner<'_>, name: &str, rest: &str) -> String {
    let renamed = targets(planner)
        .into_iter()
        .any(|t| matches!(reach(planner, t, name, ""), Reach::Renamed));
    if renamed {
        format!("cuport_device.get(\"{rest}\")")
    } else if rest.is_empty() {
        "cuport_device.module()".to_owned()
    } else if DEVICE_HELPERS.contains(&rest) {
        format!("cuport_device.{rest}")
    } else {
        format!("cuport_device.module().{rest}")
    }
}
