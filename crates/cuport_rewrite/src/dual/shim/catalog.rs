//! Every portable name the rule tables give each backend, grouped by the
//! shim header (library) that provides it. Built once per run from the
//! tables: a name a one-way migration knows is never missing here.
use std::collections::BTreeMap;

use cuport_model::{KernelModel, Library, MinimumVersion, SdkVersion, Target};
use cuport_rules::{EnumMap, Flavours, NameKind, RuleSet, Status};

use super::entry::{macro_provision, older_provision, provision, with_argument_rules, Provision};
use crate::diagnostic::codes;
use crate::dual::names::{is_shimmed, portable_name};
use crate::sdk::newer_release_needed;

/// One backend's provision of every portable name, per library.
#[derive(Debug, Default)]
pub(crate) struct Section {
    /// Library → CUDA name → (portable name, provision).
    pub(crate) names: BTreeMap<Library, BTreeMap<String, (String, Provision)>>,
    /// Library → target headers the section includes.
    pub(crate) headers: BTreeMap<Library, Vec<String>>,
    /// Library → target libraries to link (from the rules' `libraries`).
    pub(crate) libraries: BTreeMap<Library, Vec<String>>,
    /// Kernel-language names this backend spells differently (HIP, MUSA:
    /// `__nv_bfloat16` → `hip_bfloat16`; Ascend C SIMT: `__syncthreads` →
    /// `asc_syncthreads`, `__shfl_down_sync(mask, v, d)` →
    /// `asc_shfl_down(v, d)`): kernels keep the CUDA spelling and the shim
    /// defines it, so one kernel source compiles for both.
    pub(crate) device_renames: BTreeMap<String, Provision>,
    /// Headers of the SIMT model's device API, and the macro its compiler
    /// defines for device code, under which they are included (the
    /// devkit's own headers are guarded by it; host-only C++ compiled by
    /// g++ includes the shim too).
    pub(crate) device_headers: Vec<String>,
    pub(crate) device_guard: Option<&'static str>,
}

impl Section {
    /// The section for `target` with `flavours` (HIP's roc libraries; the
    /// SIMT flavour where the run ports kernels to a SIMT model).
    /// `kernels_compile`: the target compiles the CUDA kernels (natively or through its SIMT
    /// model), so the shim defines the device names it spells differently.
    pub(crate) fn build(
        rules: &RuleSet,
        target: Target,
        flavours: Flavours,
        sdk: Option<SdkVersion>,
        kernels: KernelModel,
    ) -> Section {
        let mut section = Section::default();
        let kernels_compile = kernels != KernelModel::Port;
        if kernels == KernelModel::Simt {
            section.device_guard = target
                .profile()
                .kernels
                .simt
                .as_ref()
                .map(|s| s.device_guard.as_str());
        }
        for cuda_name in rules.known_cuda_names_flavour(target, flavours) {
            let Some(resolved) = rules.lookup_flavour(target, flavours, cuda_name) else {
                continue;
            };
            let kind = resolved.kind();
            // Set only when a release was selected and it is older than the
            // rule's: then the rule's older form applies (`__shfl_xor` for
            // `__shfl_xor_sync` before HIP 7.0), or the name is unavailable.
            let needed = newer_release_needed(&resolved, target, sdk);
            if kernels_compile {
                let older = needed
                    .as_ref()
                    .and_then(|_| resolved.older_sdk())
                    .map(|(template, _)| template);
                let headers = release_headers(&resolved, needed.is_some());
                section.add_device_rename(cuda_name, &resolved, older, headers);
            }
            if !matches!(
                kind,
                NameKind::Function | NameKind::Type | NameKind::EnumValue | NameKind::Macro
            ) {
                continue;
            }
            let Some(library) = shimmed_library(cuda_name, resolved.library()) else {
                continue;
            };
            let Some(portable) = portable_name(cuda_name) else {
                continue;
            };
            if resolved.status().is_mechanical() || resolved.status() == Status::Approximate {
                let headers = section.headers.entry(library).or_default();
                headers.extend(release_headers(&resolved, needed.is_some()).iter().cloned());
                let libraries = section.libraries.entry(library).or_default();
                libraries.extend(resolved.libraries().iter().cloned());
            }
            let provided = match (needed, sdk) {
                (None, _) | (_, None) => {
                    let product = target.profile().versions.product.as_deref();
                    let wraps: Vec<_> = rules
                        .argument_rules(target, cuda_name)
                        .iter()
                        .filter(|r| r.needed_for(product, sdk.as_ref()))
                        .collect();
                    with_argument_rules(provision(cuda_name, &resolved, target), &resolved, &wraps)
                }
                (Some(minimum), Some(sdk)) => match resolved.older_sdk() {
                    Some((older, _)) => older_provision(&resolved, older),
                    None => too_new(cuda_name, &resolved, target, &minimum, sdk),
                },
            };
            section
                .names
                .entry(library)
                .or_default()
                .insert(cuda_name.to_owned(), (portable, provided));
        }
        for map in rules.enum_maps(target) {
            section.add_enum_map(rules, map);
        }
        // The shim stands in for cuda_runtime.h, which brings C headers the
        // target's runtime header does not (`<math.h>`'s global isfinite
        // on HIP): it includes them itself.
        section.headers.entry(Library::Runtime).or_default().extend(
            target
                .profile()
                .implicit_std_headers
                .headers
                .keys()
                .cloned(),
        );
        for list in section
            .headers
            .values_mut()
            .chain(section.libraries.values_mut())
            .chain(std::iter::once(&mut section.device_headers))
        {
            list.sort();
            list.dedup();
        }
        section
    }

    fn add_device_rename(
        &mut self,
        cuda_name: &str,
        resolved: &cuport_rules::Resolved<'_>,
        older: Option<&cuport_rules::Template>,
        release_headers: &[String],
    ) {
        let library = resolved
            .library()
            .or_else(|| cuport_analyze::library_of(cuda_name));
        if library != Some(Library::Device) || portable_name(cuda_name).is_none() {
            return;
        }
        let provision = match (resolved.status(), resolved.template(), older) {
            (_, _, Some(older)) => older_provision(resolved, older),
            (Status::Rewrite | Status::Approximate, Some(template), None) => {
                macro_provision(resolved, template)
            }
            (Status::Renamed | Status::Approximate, None, None) => {
                match resolved.target_name.as_deref() {
                    Some(to) if to != cuda_name && portable_name(to).is_some() => {
                        Provision::Alias {
                            to: to.to_owned(),
                            approximate: false,
                        }
                    }
                    _ => return,
                }
            }
            _ => return,
        };
        self.device_renames.insert(cuda_name.to_owned(), provision);
        let headers = match self.device_guard {
            Some(_) => &mut self.device_headers,
            None => self.headers.entry(Library::Runtime).or_default(),
        };
        headers.extend(release_headers.iter().cloned());
    }

    /// Names the project uses that no table knows for `target`.
    pub(crate) fn add_unknown(
        &mut self,
        used: &BTreeMap<Library, BTreeMap<String, NameKind>>,
        target: Target,
    ) {
        for (library, names) in used {
            for (cuda_name, kind) in names {
                let Some(portable) = portable_name(cuda_name) else {
                    continue;
                };
                if self.names.values().any(|n| n.contains_key(cuda_name)) {
                    continue;
                }
                let known = self.names.entry(*library).or_default();
                let message = format!("{cuda_name} is not in cuport's rule tables for {target}; port it by hand or add a rule with --rules [{}]", codes::UNKNOWN_NAME);
                let provided = Provision::Unavailable {
                    kind: *kind,
                    message,
                };
                known.insert(cuda_name.clone(), (portable, provided));
            }
        }
    }

    /// Values of an enum map that has no entries of its own: the target's
    /// value, or CUDA's number when a helper converts at run time.
    fn add_enum_map(&mut self, rules: &RuleSet, map: &EnumMap) {
        for (cuda_value, target_value) in &map.values {
            let Some(library) = shimmed_library(cuda_value, None) else {
                continue;
            };
            let Some(portable) = portable_name(cuda_value) else {
                continue;
            };
            let names = self.names.entry(library).or_default();
            if names.contains_key(cuda_value) {
                continue;
            }
            let provided = if map.converts_at_run_time() {
                match rules.cuda_enum_value(cuda_value) {
                    Some(number) => Provision::Alias {
                        to: number.to_owned(),
                        approximate: false,
                    },
                    None => Provision::Unavailable {
                        kind: NameKind::EnumValue,
                        message: format!("{cuda_value}: enum map `{}` converts CUDA values at run time but mappings/cuda/ records no number for it", map.name),
                    },
                }
            } else {
                Provision::Alias {
                    to: format!("({target_value})"),
                    approximate: false,
                }
            };
            names.insert(cuda_value.clone(), (portable, provided));
        }
    }
}

/// The shimmed library of a table name: the rule's own, else by spelling.
pub(crate) fn shimmed_library(cuda_name: &str, rule_library: Option<Library>) -> Option<Library> {
    let library = rule_library.or_else(|| cuport_analyze::library_of(cuda_name))?;
    is_shimmed(library).then_some(library)
}

/// A name whose target counterpart needs a newer SDK release than the one
/// the shim is made for: using it fails to compile and says which.
fn too_new(
    cuda_name: &str,
    resolved: &cuport_rules::Resolved<'_>,
    target: Target,
    minimum: &MinimumVersion,
    sdk: SdkVersion,
) -> Provision {
    let to = resolved.target_name.as_deref().unwrap_or("its port");
    Provision::Unavailable {
        kind: resolved.kind(),
        message: format!(
            "{cuda_name} would become {to}, which needs {minimum}; this shim is made for {} [{}]",
            target.profile().versions.describe(sdk),
            codes::SDK_TOO_OLD
        ),
    }
}

/// The headers declaring what the selected release has of a name: the
/// rule's, or, for a release older than the rule's minimum, those of its
/// older form (none when it has no older form: a header the release lacks
/// would break the whole shim).
fn release_headers<'a>(resolved: &cuport_rules::Resolved<'a>, older_release: bool) -> &'a [String] {
    match (older_release, resolved.older_sdk()) {
        (false, _) => resolved.headers(),
        (true, Some(_)) => resolved.older_sdk_headers(),
        (true, None) => &[],
    }
}
