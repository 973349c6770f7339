//! One-way planning: each site is looked up in the rule tables for the
//! target and becomes an edit, a diagnostic, or both (an approximate
//! mapping is applied and reported).
use cuport_analyze::Site;
use cuport_model::Code;
use cuport_model::{Language, Library, SiteKind, Target, TextRange, WarpDiagnostic};
use cuport_rules::{Resolved, Status, Template};

use super::{plan_sites, FileInput, PendingRewrite, PlanSite, PlannedFile, Planner};
use crate::diagnostic::{codes, Diagnostic, Level};
use crate::options::HipLaunch;
use crate::sdk::newer_release_needed;
use crate::source_text::{holds_directive_line, is_one_call_of, qualified_name_start};
use cuport_model::Effort;

/// Plans a file for the one-way target.
pub(crate) fn plan_file(input: &FileInput<'_>) -> PlannedFile {
    let mut planner = Planner::for_file(input, input.options);
    let stats = plan_sites(&mut planner, input);
    planner.collapsed_overloads(&input.analysis.sites);
    planner.mark_cuda_sources();
    planner.compose_rewrites();
    PlannedFile {
        planned: planner.out,
        stats,
        runtime_header: input
            .options
            .planned_target()
            .profile()
            .target
            .runtime_header
            .clone(),
    }
}

/// A one-way planner is the shared context itself.
impl PlanSite for Planner<'_> {
    fn plan_site(&mut self, site: &Site) {
        self.one_way_site(site);
    }

    fn diagnostics(&self) -> &[Diagnostic] {
        &self.out.diagnostics
    }
}

impl<'a> Planner<'a> {
    /// Plans one site for the one-way target.
    pub(crate) fn one_way_site(&mut self, site: &Site) {
        if self.inside_replaced_kernel(site) || self.inside_dead_helper(site) {
            return;
        }
        match site.kind {
            SiteKind::KernelDefinition => self.kernel_definition(site),
            SiteKind::KernelLaunch => self.kernel_launch(site),
            SiteKind::WarpSizeAssumption => self.warp_size(site),
            SiteKind::Qualifier => self.qualifier(site),
            SiteKind::Include => self.include(site),
            SiteKind::DeviceString => self.device_string(site),
            SiteKind::DistributedBackend | SiteKind::EnvironmentVariable => {
                self.string_literal(site)
            }
            // `torch.autocast(device_type="cuda")`: the device string inside is
            // ported on its own, which is all the call needs.
            SiteKind::FrameworkCall
                if site.name.ends_with("[cuda]") && self.lookup("cuda").is_some() => {}
            SiteKind::BuildRule if self.cmake_one_way_site(site) => {}
            SiteKind::BuildRule if self.make_site(site) => {}
            SiteKind::PreprocessorCondition if site.library != Library::Preprocessor => {
                self.api_name_in_condition(site)
            }
            _ => self.mapped(site),
        }
    }

    /// `#ifdef cuDeviceGetUuid_v2`, `#if LOWP == CUDA_R_16BF`: an API name
    /// in a condition tests whether it is a macro (an enum reads 0).
    /// Whether the target's name is a macro too is not in the tables, so
    /// the condition is left as written and reported.
    fn api_name_in_condition(&mut self, site: &Site) {
        let Some(resolved) = self.lookup(&site.name) else {
            self.unknown(site);
            return;
        };
        let spelled = match resolved.target_name.as_deref() {
            Some(to) if to != site.name => format!("{} spells it `{to}`", self.target()),
            Some(_) => return,
            None => format!("{} has no counterpart", self.target()),
        };
        let message = format!(
            "`{}` (a {} API name) is tested in a preprocessor condition; {spelled}, and the tables do not say whether that is a macro there. The condition is left as written: decide which branch the {} build takes",
            site.name,
            site.library.name(),
            self.target()
        );
        self.diagnose(site, codes::API_NAME_IN_CONDITION, Level::Manual, message)
            .effort = Some(Effort::Low);
    }

    /// A name the rule tables decide: rename, rewrite through a template,
    /// or report.
    fn mapped(&mut self, site: &Site) {
        let Some(mut resolved) = self.lookup(&site.name) else {
            self.unknown(site);
            return;
        };
        // CUDA's C++ overload that is another function on the target
        // (`cudaEventCreate(&e, flags)`: hipEventCreateWithFlags).
        if site.call.is_some() {
            if let Some(to) = resolved.overload(self.passed_arguments(&site.args)) {
                resolved.target_name = Some(std::borrow::Cow::Borrowed(to));
            }
        }
        if self.needs_newer_sdk(site, &resolved) || self.legacy_api_call(site, &resolved) {
            return;
        }
        let code = resolved.code().unwrap_or(codes::UNKNOWN_NAME);
        let status = resolved.status();
        if status == Status::Approximate && self.is_value_use(site) {
            self.value_use(site, &resolved, code);
            return;
        }
        if self.arity_differs(site, &resolved) {
            return;
        }
        let applied = match status {
            Status::Exact => true,
            Status::Approximate if resolved.template().is_some() => {
                self.rewrite(site, &resolved, code)
            }
            Status::Renamed | Status::Approximate => {
                let renamed = self.rename(site, &resolved, code);
                if renamed {
                    self.wrap_arguments(site, code);
                }
                renamed
            }
            Status::Rewrite => self.rewrite(site, &resolved, code),
            Status::Manual | Status::Unsupported => false,
        };
        if applied {
            // Library headers come with the include they replace (see
            // `headers`); only cuport's own shim is added for the call.
            let helpers = self.helpers_called(site, &resolved);
            if !helpers.is_empty() {
                self.out
                    .headers
                    .push(format!("\"{}\"", crate::helper_files::SHIM_HEADER));
            }
            self.out.imports.extend(resolved.imports().iter().cloned());
            self.helpers_needed(site, &helpers);
        }
        let level = match status {
            Status::Exact | Status::Renamed | Status::Rewrite => None,
            Status::Approximate => Some(Level::Approximate),
            Status::Manual => Some(Level::Manual),
            Status::Unsupported => Some(Level::Unsupported),
        };
        if let Some(level) = level {
            self.table_diagnostic(site, &resolved, code, level);
        }
        if is_version_macro(&site.name) && site.kind == SiteKind::PreprocessorCondition {
            self.version_condition(site);
        }
    }

    /// A call renamed to a target function that takes another number of
    /// arguments (`cudaEventCreate(&e, flags)`, the C++ overload, renamed to
    /// the one-argument `aclrtCreateEvent`) would not compile: it is left as
    /// it is, for a person, with the target's parameter list.
    /// A call of a library's legacy API (cuBLAS's handle-less `cublas.h`
    /// functions) in a file that includes only the legacy header: the
    /// target has no such function, so the call stays with a diagnostic
    /// (`[[legacy-api]]` of the profile).
    fn legacy_api_call(&mut self, site: &Site, resolved: &Resolved<'_>) -> bool {
        if site.call.is_none() {
            return false;
        }
        let Some(legacy) = self
            .profile()
            .legacy_apis
            .iter()
            .find(|l| l.library == site.library)
        else {
            return false;
        };
        let current = format!("{}{}", site.name, legacy.suffix);
        let includes = crate::headers::included_paths(self.src);
        let includes_legacy_only = includes.iter().any(|h| h.ends_with(&legacy.header))
            && !includes.iter().any(|h| h.ends_with(&legacy.current_header));
        if !includes_legacy_only || self.lookup(&current).is_none() {
            return false;
        }
        let code = resolved.code().unwrap_or(codes::NOT_REWRITABLE);
        let message = format!(
            "`{}` is called through the legacy API of {} (this file includes {}, not {}), which {} has no form of: {}",
            site.name,
            legacy.header,
            legacy.header,
            legacy.current_header,
            self.target(),
            legacy.note
        );
        let diagnostic = self.diagnose(site, code, Level::Manual, message);
        diagnostic.reference = Some(legacy.reference.clone());
        diagnostic.effort = Some(Effort::Low);
        true
    }

    fn arity_differs(&mut self, site: &Site, resolved: &Resolved<'_>) -> bool {
        let renames_a_call = resolved.template().is_none()
            && matches!(resolved.status(), Status::Renamed | Status::Approximate)
            && site.call.is_some();
        let Some(to) = resolved.target_name.as_deref().filter(|_| renames_a_call) else {
            return false;
        };
        let Some(signature) = self.rules.signature(self.target(), to) else {
            return false;
        };
        let variadic = signature.params.iter().any(|p| p.trim() == "...");
        let passed = self.passed_arguments(&site.args);
        if variadic || passed == signature.params.len() {
            return false;
        }
        let message = format!(
            "`{}` is called with {passed} argument(s) here, but `{to}` takes {}: `{to}({})`; port this call by hand",
            site.name,
            signature.params.len(),
            signature.params.join(", ")
        );
        let note = resolved.note().map(str::to_owned);
        let diagnostic = self.diagnose(site, codes::NOT_REWRITABLE, Level::Manual, message);
        diagnostic.suggestion = note;
        diagnostic.effort = Some(Effort::Low);
        true
    }

    /// A rule whose target name exists only from a newer SDK release than
    /// the one the port is made for: the site stays as it is, with a
    /// diagnostic naming the release it needs.
    fn needs_newer_sdk(&mut self, site: &Site, resolved: &Resolved<'a>) -> bool {
        let target = self.target();
        let Some(selected) = self.options.sdk_version(target) else {
            return false;
        };
        let Some(minimum) = newer_release_needed(resolved, target, Some(selected)) else {
            return false;
        };
        if let Some((template, note)) = resolved.older_sdk() {
            let code = resolved.code().unwrap_or(codes::UNKNOWN_NAME);
            if self.older_name(site, resolved, template, code)
                || self.rewrite_with(site, template, code)
            {
                // A call (`__shfl_down(...)`) is named by its callee; a value
                // (`HCCL_SUCCESS` for a call the release lacks) as written.
                let callee = template.callee().unwrap_or(template.source());
                let message = format!(
                    "`{}` needs {minimum}; for {} {selected} it becomes `{callee}`, which is not exactly equivalent",
                    site.name, minimum.product
                );
                let diagnostic = self.diagnose(site, code, Level::Approximate, message);
                diagnostic.suggestion = Some(note.to_owned());
                diagnostic.reference = resolved.reference().map(str::to_owned);
                // A cuport helper that defines the older form is included
                // (and written); library headers come with the includes
                // they replace, as for every rule.
                let helpers = resolved
                    .older_sdk_headers()
                    .iter()
                    .filter(|h| h.starts_with("cuport_"));
                for helper in helpers {
                    self.out.headers.push(format!("\"{helper}\""));
                }
                return true;
            }
        }
        let to = resolved.target_name.as_deref().unwrap_or("its port");
        let becomes = if to == site.name {
            format!("`{to}` needs {minimum}")
        } else {
            format!("`{}` would become `{to}`, which needs {minimum}", site.name)
        };
        let message = format!(
            "{becomes}; this port is for {}",
            self.profile().versions.describe(selected)
        );
        let note = resolved
            .note()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let suggestion = format!(
            "port it by hand for {selected}, or make the port for {} {} or newer{note}",
            minimum.product, minimum.version
        );
        let reference = resolved.reference().map(str::to_owned);
        let diagnostic = self.diagnose(site, codes::SDK_TOO_OLD, Level::Manual, message);
        diagnostic.suggestion = Some(suggestion);
        diagnostic.reference = reference;
        diagnostic.effort = Some(Effort::Low);
        true
    }

    /// A type or value the selected release knows by another name
    /// (`__nv_bfloat16` is `hip_bfloat16` before HIP 6.2): renamed to the
    /// older form's bare name. Calls go through the template instead.
    fn older_name(
        &mut self,
        site: &Site,
        resolved: &Resolved<'a>,
        template: &'a Template,
        code: Code,
    ) -> bool {
        let Some(name) = template.plain_name().filter(|_| site.call.is_none()) else {
            return false;
        };
        let mut older = resolved.clone();
        older.target_name = Some(std::borrow::Cow::Borrowed(name));
        self.rename(site, &older, code)
    }

    /// Whether a CUDA macro is used for its value (`__CUDA_ARCH__ >= 800`,
    /// `CUDA_VERSION >= 12080`) rather than tested for existence
    /// (`#ifdef`, `defined(...)`), which is all an approximate mapping keeps.
    fn is_value_use(&self, site: &Site) -> bool {
        if site.library != Library::Preprocessor {
            return false;
        }
        let line_start = self
            .lines
            .line_range(self.lines.line_of(site.range.start))
            .map_or(0, |r| r.start);
        let before = self
            .text(TextRange::new(line_start, site.range.start))
            .trim_end();
        let before = before.strip_suffix('(').map_or(before, str::trim_end);
        let tested = before.ends_with("defined")
            || before.ends_with("#ifdef")
            || before.ends_with("#ifndef")
            || before
                .trim_start_matches('#')
                .trim_start()
                .starts_with("ifdef")
            || before
                .trim_start_matches('#')
                .trim_start()
                .starts_with("ifndef")
            || before
                .trim_start_matches('#')
                .trim_start()
                .starts_with("define")
            || before
                .trim_start_matches('#')
                .trim_start()
                .starts_with("undef");
        !tested
    }

    /// A macro compared by value whose target counterpart has another value
    /// (or none): left as it is, for a person, never rewritten into a test
    /// that silently takes another branch.
    fn value_use(&mut self, site: &Site, resolved: &Resolved<'_>, code: Code) {
        let target = self.target();
        let to = resolved.target_name.as_deref().unwrap_or("no counterpart");
        let message = format!(
            "`{}` is used for its value here; {target}'s `{to}` does not carry the same value, so the condition is left as it is (it is false on {target} unless you rewrite it)",
            site.name
        );
        let note = resolved.note().map(str::to_owned);
        let reference = resolved.reference().map(str::to_owned);
        let diagnostic = self.diagnose(site, code, Level::Manual, message);
        diagnostic.suggestion = note;
        diagnostic.reference = reference;
        diagnostic.effort = Some(Effort::Low);
    }

    /// A rewrite into a cuport helper (`cuport_blas_sgemm` over aclnn's
    /// two-phase API): the run writes the helper (cuport_shim.h and
    /// cuport_ascend_helpers.cpp at the root of the output), which the build
    /// must compile in.
    fn helpers_needed(&mut self, site: &Site, helpers: &[String]) {
        if helpers.is_empty() {
            return;
        }
        let message = format!(
            "`{}` now calls cuport helper `{}`, declared in cuport_shim.h and implemented in cuport_ascend_helpers.cpp (both written at the root of the output)",
            site.name,
            helpers.join("`, `")
        );
        let diagnostic = self.diagnose(site, codes::HELPER_REQUIRED, Level::Note, message);
        diagnostic.effort = Some(Effort::Low);
        diagnostic.suggestion = Some("compile cuport_ascend_helpers.cpp into the program and put the output root on the include path; the helper's contract is in the rule's note (`cuport rules show NAME`); it has not run on Ascend hardware".into());
    }

    /// The helpers this call's rewrite writes: an enum map's run-time
    /// converter only when the argument is not one of the map's literals
    /// (`cudaEventDisableTiming` maps to `ACL_EVENT_SYNC` in place).
    fn helpers_called(&self, site: &Site, resolved: &Resolved<'_>) -> Vec<String> {
        let Some(template) = resolved.template() else {
            return resolved.helpers().to_vec();
        };
        let args: Vec<&str> = site.args.iter().map(|&r| self.text(r)).collect();
        let used = template.conversions_for(&args);
        let unused: Vec<&str> = template
            .maps_at_run_time()
            .into_iter()
            .filter_map(|m| m.fallback.as_deref())
            .filter(|f| !used.contains(f))
            .collect();
        resolved
            .helpers()
            .iter()
            .filter(|h| !unused.contains(&h.as_str()))
            .cloned()
            .collect()
    }

    fn table_diagnostic(&mut self, site: &Site, resolved: &Resolved<'_>, code: Code, level: Level) {
        let target = self.target();
        let to = resolved.target_name.as_deref().map(str::to_owned);
        let message = match (level, &to) {
            (Level::Approximate, Some(to)) if *to == site.name => format!(
                "`{}` is kept on {target} but does not behave exactly the same",
                site.name
            ),
            (Level::Approximate, Some(to)) => format!(
                "`{}` became `{to}` on {target}, which is not exactly equivalent",
                site.name
            ),
            (Level::Unsupported, _) => format!("`{}` has no counterpart on {target}", site.name),
            _ => format!("`{}` has no automatic equivalent on {target}", site.name),
        };
        let note = resolved.note().map(str::to_owned);
        let reference = resolved.reference().map(str::to_owned);
        let effort = resolved.effort();
        let diagnostic = self.diagnose(site, code, level, message);
        diagnostic.suggestion = note;
        diagnostic.reference = reference;
        diagnostic.effort = effort;
    }

    fn unknown(&mut self, site: &Site) {
        if self.is_native_kernel_language(site) || self.same_python_name(site) {
            return;
        }
        if site.kind == SiteKind::CudaOnlyImport {
            let message = format!(
                "`{}` only runs on NVIDIA GPUs; find a {} build or replace it",
                site.name,
                self.target()
            );
            self.diagnose(site, codes::CUDA_ONLY_PACKAGE, Level::Manual, message)
                .effort = Some(Effort::Medium);
            return;
        }
        if site.kind == SiteKind::BuildRule {
            let message = format!(
                "build rule `{}` is not rewritten for {}; adapt it by hand",
                site.name,
                self.target()
            );
            self.diagnose(site, codes::BUILD_MANUAL, Level::Manual, message)
                .effort = Some(Effort::Low);
            return;
        }
        if is_version_macro(&site.name) && site.kind == SiteKind::PreprocessorCondition {
            self.version_condition(site);
            return;
        }
        if self.consumed_by_rewrite(site) {
            return;
        }
        if let Some((map, value)) = self.rules.enum_map_of_value(self.target(), &site.name) {
            if self.for_dual_stack && map.converts_at_run_time() {
                // The dual-stack shim defines the value as CUDA's number and
                // the call's macro converts it at run time.
                return;
            }
            let message = format!(
                "`{}` is converted only where a call's rewrite maps it (enum map `{}`, to `{value}`); this use is not such an argument, so port it by hand",
                site.name, map.name
            );
            self.diagnose(site, codes::NOT_REWRITABLE, Level::Manual, message)
                .effort = Some(Effort::Low);
            return;
        }
        if self.counterpart_diagnostic(site) {
            return;
        }
        let message = format!(
            "`{}` ({}) is not in the rule tables for {}",
            site.name,
            site.library,
            self.target()
        );
        let diagnostic = self.diagnose(site, codes::UNKNOWN_NAME, Level::Manual, message);
        diagnostic.suggestion = Some(
            "port it by hand, or add a rule with `--rules FILE` (see mappings/README.md)".into(),
        );
    }

    /// CP0035 for a name of a library whose counterpart on the target the
    /// profile names; returns whether it wrote one.
    fn counterpart_diagnostic(&mut self, site: &Site) -> bool {
        let target = self.target();
        let Some(counterpart) = target.profile().counterpart(site.library) else {
            return false;
        };
        let names = counterpart
            .prefix
            .as_deref()
            .map(|prefix| format!(", names `{prefix}*`"))
            .unwrap_or_default();
        let message = format!(
            "`{}` ({}) is not in the rule tables for {target}; its counterpart there is {} (`{}`{names}): {}",
            site.name, site.library, counterpart.name, counterpart.header, counterpart.note
        );
        let suggestion = format!(
            "port it by hand against {} (`{}`), or add a rule with `--rules FILE`",
            counterpart.name, counterpart.header
        );
        let diagnostic = self.diagnose(site, codes::LIBRARY_COUNTERPART, Level::Manual, message);
        diagnostic.suggestion = Some(suggestion);
        diagnostic.reference = Some(counterpart.source.clone());
        true
    }

    /// A CUDA name inside an argument that a pending template rewrite
    /// consumes: an enum value it maps through an enum map
    /// (`cudaEventDisableTiming` in `cudaEventCreateWithFlags(&e,
    /// cudaEventDisableTiming)`), or an argument it drops (`cublasGemmEx`'s
    /// `CUBLAS_GEMM_DEFAULT`; the rule's note says what that loses). The
    /// name is not in the output, so it is no unknown name.
    fn consumed_by_rewrite(&self, site: &Site) -> bool {
        self.pending.iter().any(|rewrite| {
            rewrite.args.iter().enumerate().any(|(index, &arg)| {
                let inside = arg.start <= site.range.start && site.range.end <= arg.end;
                let mapped = self.text(arg).trim() == site.name
                    && rewrite.template.maps_argument_value(index, &site.name);
                inside && (mapped || !rewrite.template.uses_argument(index))
            })
        })
    }

    /// A PyTorch path another target's tables port but that does not say
    /// CUDA (`torch.profiler.profile`): where this target has no rule for
    /// it, it is the same API here.
    fn same_python_name(&self, site: &Site) -> bool {
        self.language == Language::Python && super::same_api_without_a_rule(site)
    }

    /// Kernel-language names HIP and MUSA accept unchanged (built-in
    /// variables, qualifiers) need no table row.
    fn is_native_kernel_language(&self, site: &Site) -> bool {
        let native_target = self.kernels().compiles();
        let builtin = matches!(
            site.name.as_str(),
            "threadIdx" | "blockIdx" | "blockDim" | "gridDim" | "warpSize"
        );
        // A namespaced name (`nvcuda::wmma::fragment`) is a library's, not
        // the kernel language's: unknown, it is reported.
        let native_kind =
            matches!(site.kind, SiteKind::Qualifier | SiteKind::Type) && !site.name.contains("::");
        native_target && site.library == Library::Device && (builtin || native_kind)
    }

    fn version_condition(&mut self, site: &Site) {
        let message = format!(
            "preprocessor condition on `{}` (a CUDA version); check the branch the target takes",
            site.name
        );
        self.diagnose(site, codes::CUDA_VERSION_CONDITION, Level::Note, message);
    }

    /// Replaces the name (for Python methods: the last segment) with the
    /// target's name. Returns whether an edit was made.
    fn rename(&mut self, site: &Site, resolved: &Resolved<'_>, code: Code) -> bool {
        let Some(to) = resolved.target_name.as_deref() else {
            return false;
        };
        if to == site.name {
            // Same name on the target (an approximate mapping that keeps it).
            return true;
        }
        let written = self.text(site.range);
        // A CMake command's CUDA argument (`project(CUDA)` is reported on the
        // word `CUDA`): the word itself is replaced.
        let command_argument =
            site.kind == SiteKind::BuildRule && site.name.ends_with(&format!("({written})"));
        // A build setting's value list (`80 90` of CMAKE_CUDA_ARCHITECTURES)
        // is replaced whole by the target's list.
        let value_list = site.kind == SiteKind::BuildRule
            && site.name == cuport_analyze::CUDA_ARCHITECTURE_VALUES;
        // A Makefile's versioned install prefix (`/usr/local/cuda-12.4`) is
        // replaced whole.
        let versioned_prefix = self.language == Language::Makefile
            && site.name == cuport_analyze::CUDA_PREFIX
            && written.starts_with(&site.name);
        let replacement =
            if written == site.name || command_argument || value_list || versioned_prefix {
                to.to_owned()
            } else if self.language == Language::Python
                && site.name.ends_with(&format!(".{written}"))
                && (self.src[..site.range.start].ends_with(b".")
                    || crate::pysource::in_import_statement(self.src, site.range.start))
            {
                // `from torch.cuda import amp` (the imported name itself) and
                // methods (`x.cuda()`): the same number of trailing segments.
                self.check_import_path(site, to);
                let parts: Vec<&str> = to.split('.').collect();
                let keep = written.split('.').count().min(parts.len());
                parts[parts.len() - keep..].join(".")
            } else if let Some(replacement) = self.python_path_through_alias(site, written, to) {
                replacement
            } else if self.language.is_c_family()
                && written.contains("::")
                && last_segment(written) == last_segment(&site.name)
            {
                // `wmma::fragment` after `using namespace nvcuda;` (the analyser
                // names it `nvcuda::wmma::fragment`): the target's name is
                // written in full, whatever the alias stood for.
                to.to_owned()
            } else if self.reached_through_using(site, written, to) {
                return true;
            } else {
                let message = format!(
                    "`{written}` refers to `{}` through an alias; rename it by hand to `{to}`",
                    site.name
                );
                self.diagnose(site, codes::NOT_REWRITABLE, Level::Manual, message)
                    .effort = Some(Effort::Low);
                return false;
            };
        if replacement != written {
            self.edit(site.range, replacement, code, &site.name);
        }
        true
    }

    /// An unqualified name a `using namespace` brought in
    /// (`BLOCK_LOAD_WARP_TRANSPOSE` after `using namespace cub;`) that
    /// needs no edit: the target's name is the same in the namespace the
    /// directive is ported to (`hipcub`), so it resolves there as written.
    fn reached_through_using(&self, site: &Site, written: &str, to: &str) -> bool {
        let Some((namespace, name)) = site.name.rsplit_once("::") else {
            return false;
        };
        let Some((to_namespace, to_name)) = to.rsplit_once("::") else {
            return false;
        };
        let directive_becomes = self
            .lookup(namespace)
            .and_then(|resolved| resolved.target_name.map(|t| t.into_owned()))
            .unwrap_or_else(|| namespace.to_owned());
        self.language.is_c_family()
            && written == name
            && to_name == name
            && directive_becomes == to_namespace
    }

    /// A dotted path written through an import alias or a name imported on
    /// its own (`cudnn.allow_tf32` after `import torch.backends.cudnn as
    /// cudnn`, `ProfilerActivity.CUDA` after `from torch.profiler import
    /// ProfilerActivity`). Where the target keeps the alias's module the
    /// alias stays (`amp.GradScaler`); elsewhere the target's full path is
    /// written and its root module imported (`torch.npu.conv.allow_hf32`).
    fn python_path_through_alias(
        &mut self,
        site: &Site,
        written: &str,
        to: &str,
    ) -> Option<String> {
        let chain = written
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
        if self.language != Language::Python || !chain {
            return None;
        }
        let (alias, rest) = written.split_once('.').unwrap_or((written, ""));
        let aliased = if rest.is_empty() {
            site.name.as_str()
        } else {
            site.name.strip_suffix(rest)?.strip_suffix('.')?
        };
        (!alias.is_empty() && !aliased.is_empty())
            .then(|| self.python_full_path(aliased, alias, to))
    }

    /// `to` written relative to `alias` (which stands for `aliased`) when
    /// it lies under that module, else in full with its root imported.
    fn python_full_path(&mut self, aliased: &str, alias: &str, to: &str) -> String {
        if let Some(rest) = to.strip_prefix(aliased).filter(|r| r.starts_with('.')) {
            return format!("{alias}{rest}");
        }
        let root = to.split('.').next().unwrap_or(to);
        self.out.imports.push(format!("import {root}"));
        to.to_owned()
    }

    /// A name imported on its own (`from torch.utils.cpp_extension import
    /// BuildExtension`) whose target lives in another module: the use keeps
    /// working only if the import changes too.
    fn check_import_path(&mut self, site: &Site, to: &str) {
        let written_segments = self.text(site.range).split('.').count();
        let module = |path: &str| {
            let parts: Vec<&str> = path.split('.').collect();
            parts[..parts.len().saturating_sub(written_segments)].join(".")
        };
        let (from_module, to_module) = (module(&site.name), module(to));
        if from_module != to_module {
            let message = format!(
                "`{}` is imported by name; import it from `{to_module}` instead of `{from_module}`",
                site.name
            );
            self.diagnose(site, codes::NOT_REWRITABLE, Level::Manual, message)
                .effort = Some(Effort::Low);
        }
    }

    /// Rewrites a whole call through the entry's argument template (once
    /// every site is planned: see [`Planner::compose_rewrites`]).
    fn rewrite(&mut self, site: &Site, resolved: &Resolved<'a>, code: Code) -> bool {
        match resolved.template() {
            Some(template) => self.rewrite_with(site, template, code),
            None => self.rewrite_needs_call(site, resolved.note()),
        }
    }

    fn rewrite_needs_call(&mut self, site: &Site, note: Option<&str>) -> bool {
        let message = if self.language == Language::Python {
            format!("`{}` needs its call or assignment rewritten, but it is neither called nor assigned as a statement here", site.name)
        } else {
            format!("`{}` needs its call rewritten, but it is not called here (taken by address or in a macro?)", site.name)
        };
        let diagnostic = self.diagnose(site, codes::NOT_REWRITABLE, Level::Manual, message);
        diagnostic.effort = Some(Effort::Low);
        diagnostic.suggestion = note.map(str::to_owned);
        false
    }

    /// Rewrites the call at `site` through `template` once every site is
    /// planned.
    fn rewrite_with(&mut self, site: &Site, template: &'a Template, code: Code) -> bool {
        let Some(call) = site.call else {
            let note = self
                .lookup(&site.name)
                .and_then(|r| r.note().map(str::to_owned));
            return self.rewrite_needs_call(site, note.as_deref());
        };
        self.pending.push(PendingRewrite {
            call,
            args: site.args.clone(),
            template,
            code,
            cuda_name: site.name.clone(),
        });
        true
    }

    fn include(&mut self, site: &Site) {
        let Some(mut resolved) = self.lookup(&site.name) else {
            self.unknown(site);
            return;
        };
        // A header the selected release has under its older name
        // (`hip/hip_bfloat16.h` for `cuda_bf16.h` before HIP 6.2); the
        // names it declares carry the diagnostics.
        if let Some(older) = self.older_header(&resolved) {
            resolved.target_name = Some(std::borrow::Cow::Borrowed(older));
        }
        let code = resolved.code().unwrap_or(codes::UNKNOWN_NAME);
        match (resolved.status(), resolved.target_name.as_deref()) {
            (Status::Exact, _) => {}
            (Status::Renamed | Status::Approximate, Some(to)) if self.includes_again(site, to) => {
                // `cuda.h` then `cuda_runtime.h`, or fifteen `curand_*.h`
                // headers that all become hiprand_kernel.h: a second include
                // of the same header in the same branch is deleted, as a
                // reviewer would.
                if let Some(range) = self.lone_include_line(site) {
                    self.edit(range, String::new(), code, &site.name);
                }
            }
            (Status::Renamed | Status::Approximate, Some(to)) => {
                // The delimiters as written; an include cut off before its
                // closing `>` or `"` stays so (a fuzzing finding:
                // `fuzz_regressions::unterminated_include_keeps_its_name_whole`).
                let written = self.text(site.range);
                let open = written.get(..1).unwrap_or("<");
                let close = if open == "<" { ">" } else { "\"" };
                let close = if written.len() > 1 && written.ends_with(close) {
                    close
                } else {
                    ""
                };
                let replacement = format!("{open}{to}{close}");
                self.edit(site.range, replacement, code, &site.name);
                if resolved.status() == Status::Approximate {
                    self.table_diagnostic(site, &resolved, code, Level::Approximate);
                }
            }
            (Status::Rewrite, _) if resolved.template().is_some_and(|t| t.source().is_empty()) => {
                // The target needs no counterpart (HIPIFY deletes such includes).
                let line = self.lines.line_of(site.range.start);
                if let Some(range) = self.lines.line_range(line) {
                    self.edit(range, String::new(), code, &site.name);
                }
            }
            (status, _) => {
                let level = if status == Status::Unsupported {
                    Level::Unsupported
                } else {
                    Level::Manual
                };
                self.table_diagnostic(site, &resolved, code, level);
            }
        }
    }

    /// The older form's header when the selected release is older than
    /// the header row's `target-version`.
    fn older_header(&self, resolved: &Resolved<'a>) -> Option<&'a str> {
        let target = self.target();
        let selected = self.options.sdk_version(target)?;
        newer_release_needed(resolved, target, Some(selected))?;
        resolved.older_sdk()?.0.plain_name()
    }

    /// Whether an earlier include of this file became `to` in the same
    /// preprocessor branch or unconditionally; records this one otherwise.
    fn includes_again(&mut self, site: &Site, to: &str) -> bool {
        let earlier = self.included.iter().any(|(header, branch)| {
            header == to && (branch.is_none() || *branch == site.condition)
        });
        if !earlier {
            self.included.push((to.to_owned(), site.condition));
        }
        earlier && self.lone_include_line(site).is_some()
    }

    /// The whole line of the include at `site` when it holds nothing else
    /// (no comment, no continuation) and sits in no call's argument list,
    /// so that deleting it loses nothing (an include among a call's
    /// arguments keeps the call as written, CP0029; deleting it would let a
    /// rerun rewrite the call: a fuzzing finding,
    /// `fuzz_regressions::a_repeated_include_among_arguments_stays`).
    fn lone_include_line(&self, site: &Site) -> Option<TextRange> {
        if self.inside_a_call(site.range.start) {
            return None;
        }
        let range = self
            .lines
            .line_range(self.lines.line_of(site.range.start))?;
        let line = self.text(range).trim_end();
        let name_end = site.range.end.checked_sub(range.start)?;
        let rest = line.get(name_end..)?.trim();
        let directive = line.trim_start().strip_prefix('#')?.trim_start();
        (directive.starts_with("include") && rest.is_empty()).then_some(range)
    }

    /// `"cuda"`, `"cuda:1"`, `f"cuda:{rank}"`: only the device word changes.
    fn device_string(&mut self, site: &Site) {
        let Some(resolved) = self.lookup(&site.name).or_else(|| self.lookup("cuda")) else {
            self.unknown(site);
            return;
        };
        let Some(device) = resolved.target_name.as_deref() else {
            self.mapped(site);
            return;
        };
        let device = device.split(':').next().unwrap_or(device);
        let written = self.text(site.range);
        if let Some(at) = written.find("cuda") {
            if device != "cuda" {
                let range = TextRange::new(site.range.start + at, site.range.start + at + 4);
                let code = resolved.code().unwrap_or(codes::UNKNOWN_NAME);
                self.edit(range, device.to_owned(), code, &site.name);
                self.out.imports.extend(resolved.imports().iter().cloned());
            }
        }
    }

    /// `"nccl"`, `"CUDA_VISIBLE_DEVICES"`: the string's content is the name.
    fn string_literal(&mut self, site: &Site) {
        let Some(resolved) = self.lookup(&site.name) else {
            self.unknown(site);
            return;
        };
        let code = resolved.code().unwrap_or(codes::UNKNOWN_NAME);
        let written = self.text(site.range);
        match (
            resolved.status(),
            resolved.target_name.as_deref(),
            written.find(site.name.as_str()),
        ) {
            (Status::Exact, _, _) => {}
            (Status::Renamed | Status::Approximate, Some(to), Some(at)) => {
                let range = TextRange::new(
                    site.range.start + at,
                    site.range.start + at + site.name.len(),
                );
                if to != site.name {
                    self.edit(range, to.to_owned(), code, &site.name);
                }
                self.out.imports.extend(resolved.imports().iter().cloned());
                if resolved.status() == Status::Approximate {
                    self.table_diagnostic(site, &resolved, code, Level::Approximate);
                }
            }
            (status, _, _) => {
                let level = if status == Status::Unsupported {
                    Level::Unsupported
                } else {
                    Level::Manual
                };
                self.table_diagnostic(site, &resolved, code, level);
            }
        }
    }

    fn qualifier(&mut self, site: &Site) {
        if self.kernels().compiles() {
            // Kernels compile as they are, but a qualifier the target lacks
            // (`__grid_constant__` on HIP) has a rule saying so.
            let ported = self
                .lookup(&site.name)
                .is_some_and(|r| r.status() != Status::Exact);
            if ported {
                self.mapped(site);
            }
            return;
        }
        if site.name == "__global__" || site.name == "__restrict__" {
            return;
        }
        let message = format!(
            "`{}` marks device code, which {} cannot compile from CUDA C++",
            site.name,
            self.target()
        );
        let guidance = &self.profile().kernels.guidance;
        let diagnostic = self.diagnose(site, codes::KERNEL_MANUAL, Level::Manual, message);
        diagnostic.effort = Some(Effort::Medium);
        diagnostic.suggestion = Some(guidance.clone());
    }

    fn kernel_definition(&mut self, site: &Site) {
        let kernels = &self.profile().kernels;
        if self.replace_kernel(site) {
            return;
        }
        if self.kernels().compiles() {
            // Under SIMT a rule that was not applied leaves the kernel to
            // SIMT: say why (a HIP-like target has no operator tables).
            if crate::kernel_stage::generates_code(self.target()) {
                self.rule_not_applied(site);
            }
            return;
        }
        if self.name_operators(site) {
            return;
        }
        self.rule_not_applied(site);
        let body = site.body.map_or("", |b| self.text(b));
        let params: Vec<String> = site
            .args
            .iter()
            .map(|&r| self.text(r).to_string())
            .collect();
        let operator = crate::kernels::recognise(&params, body, self.target());
        let message = format!(
            "kernel `{}` must be ported by hand to {}",
            site.name, kernels.language
        );
        let suggestion = match operator {
            Some(op) => format!("{}; this kernel looks like {op}", kernels.guidance),
            None => kernels.guidance.clone(),
        };
        let diagnostic = self.diagnose(site, codes::KERNEL_MANUAL, Level::Manual, message);
        diagnostic.effort = Some(Effort::High);
        diagnostic.suggestion = Some(suggestion);
    }

    fn kernel_launch(&mut self, site: &Site) {
        // `--hip-kernel-launch ggl` is HIP's own launch macro.
        if self.target() == Target::Hip && self.options.hip_launch == HipLaunch::Ggl {
            self.ggl_launch(site);
            return;
        }
        let kernels = &self.profile().kernels;
        if self.operator_launch(site) {
            return;
        }
        if self.kernels().compiles() {
            self.respell_spaced_chevrons(site);
            return;
        }
        let message = format!(
            "launch of `{}` must be ported with the kernel ({})",
            site.name, kernels.language
        );
        let diagnostic = self.diagnose(site, codes::LAUNCH_MANUAL, Level::Manual, message);
        diagnostic.effort = Some(Effort::Medium);
        diagnostic.suggestion = Some(kernels.guidance.clone());
    }

    /// `k << <g, b >> > (a)` → `k<<<g, b>>> (a)`: nvcc reads the spaced
    /// spelling as a launch, clang-based compilers do not.
    fn respell_spaced_chevrons(&mut self, site: &Site) {
        for (range, text) in super::chevron_respellings(site) {
            self.edit(range, text.to_owned(), codes::LAUNCH_SPELLING, &site.name);
        }
    }

    /// `k<<<g, b, s, q>>>(a)` → `hipLaunchKernelGGL(k, dim3(g), dim3(b), s, q, a)`.
    /// Only the text around the launch configuration and the arguments is
    /// replaced: what is inside them (a renamed enum, an API call, a
    /// `cudaStreamPerThread`) keeps its own edits, which one edit of the
    /// whole launch would overlap and drop (a fuzzing finding:
    /// `fuzz_regressions::ggl_launch_keeps_the_edits_in_its_arguments`).
    fn ggl_launch(&mut self, site: &Site) {
        let Some(call) = site.call else { return };
        let config = &site.launch_config;
        let (Some(grid), Some(block)) = (config.first(), config.get(1)) else {
            return;
        };
        if holds_directive_line(self.text(call)) {
            // hipLaunchKernelGGL is a macro: a directive inside its arguments
            // is undefined behaviour ([cpp.replace]), and rebuilding the
            // launch around the directive lines would put code on them
            // (`dim3(block\n#ifdef X), smem`). The chevron form compiles
            // with hipcc as it is.
            let message = format!(
                "the launch of `{}` has preprocessor directives inside its template arguments, launch configuration or arguments; it stays a `<<<...>>>` launch (hipcc compiles it), since hipLaunchKernelGGL is a macro and cannot carry them. Where the macro form is needed (HIP-CPU), write one hipLaunchKernelGGL per branch",
                site.name
            );
            self.diagnose(site, codes::DIRECTIVE_IN_ARGUMENTS, Level::Manual, message)
                .effort = Some(Effort::Low);
            self.respell_spaced_chevrons(site);
            return;
        }
        // The kernel's name and template arguments stay where they are, with
        // their own edits (`k<cuComplex>`): only text around them changes.
        // A qualified name (`::k`, `ns::k`) goes into the macro whole.
        let start = qualified_name_start(self.src, call.start);
        let (opening, name_end) = match site.template_args {
            Some(targs) => ("hipLaunchKernelGGL(HIP_KERNEL_NAME(", targs.end),
            None => ("hipLaunchKernelGGL(", site.range.end),
        };
        let name_close = if site.template_args.is_some() {
            ")"
        } else {
            ""
        };
        // What follows the last configuration value: the arguments, or the
        // end of the launch.
        let (end, close) = match site.args.first() {
            Some(first) => (first.start, ", "),
            None => (call.end, ")"),
        };
        let (end, close) = self.keep_line_breaks_after_paren(config, end, close);
        // A value already written `dim3(...)` is not wrapped again.
        let wrap = |range: TextRange| !is_one_call_of(self.text(range), "dim3");
        let (open_grid, close_grid) = if wrap(*grid) {
            ("dim3(", ")")
        } else {
            ("", "")
        };
        let (open_block, close_block) = if wrap(*block) {
            ("dim3(", ")")
        } else {
            ("", "")
        };
        let mut pieces = vec![
            (start, start, opening.to_owned()),
            (name_end, grid.start, format!("{name_close}, {open_grid}")),
            (grid.end, block.start, format!("{close_grid}, {open_block}")),
        ];
        match (config.get(2), config.get(3)) {
            (None, _) => pieces.push((block.end, end, format!("{close_block}, 0, 0{close}"))),
            (Some(smem), None) => {
                pieces.push((block.end, smem.start, format!("{close_block}, ")));
                pieces.push((smem.end, end, format!(", 0{close}")));
            }
            (Some(smem), Some(stream)) => {
                pieces.push((block.end, smem.start, format!("{close_block}, ")));
                pieces.push((smem.end, stream.start, ", ".to_owned()));
                pieces.push((stream.end, end, close.to_owned()));
            }
        }
        for (start, end, text) in pieces {
            let range = TextRange::new(start, end);
            if self.text(range) != text {
                self.edit(range, text, codes::HIP_GGL_LAUNCH, &site.name);
            }
        }
    }

    /// Where the text replaced after the configuration ends: a line break
    /// between the launch's `(` and its arguments (or its `)`), as in a
    /// launch inside a macro continued with `\`, stays where it is, so the
    /// edit ends after the `(` (and the `)` stays too).
    fn keep_line_breaks_after_paren(
        &self,
        config: &[TextRange],
        end: usize,
        close: &'static str,
    ) -> (usize, &'static str) {
        let Some(last) = config.last() else {
            return (end, close);
        };
        let between = &self.src[last.end..end];
        let Some(paren) = between.iter().rposition(|&b| b == b'(') else {
            return (end, close);
        };
        if !between[paren..].contains(&b'\n') {
            return (end, close);
        }
        // The kept text starts with blanks or the line break: no blank of
        // our own before it.
        let close = if close == ")" { "" } else { "," };
        (last.end + paren + 1, close)
    }

    fn warp_size(&mut self, site: &Site) {
        let profile = self.profile();
        // The SIMT model's warps are 32 wide: the assumption holds there.
        let simt_warp = profile.kernels.simt.as_ref().map(|s| s.limits.warp_size);
        if self.kernels() == crate::kernel_stage::Disposition::Simt && simt_warp == Some(32) {
            return;
        }
        let level = match profile.warp.diagnostic {
            WarpDiagnostic::Manual => Level::Manual,
            WarpDiagnostic::Note => Level::Note,
        };
        let message = match &profile.warp.message {
            Some(text) => format!("`{}` {text}", site.name),
            None => format!(
                "`{}` assumes a 32-wide warp; {} has no warps, so this goes with the kernel port",
                site.name, profile.kernels.language
            ),
        };
        self.diagnose(site, codes::WARP_SIZE, level, message).effort = Some(Effort::Low);
    }
}

/// `c` of `a::b::c`.
fn last_segment(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

fn is_version_macro(name: &str) -> bool {
    matches!(
        name,
        "CUDART_VERSION"
            | "CUDA_VERSION"
            | "__CUDACC_VER_MAJOR__"
            | "__CUDACC_VER_MINOR__"
            | "__CUDACC_VER_BUILD__"
            | "__CUDA_API_VERSION"
    )
}
