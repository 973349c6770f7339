//! Kernels that `[[kernel]]` rules map to vendor operators: the
//! definition becomes the function that runs the operators
//! (`crate::operator_helper`), each launch a call of it on the launch's
//! stream, and the code inside the definition is no longer planned.
use cuport_analyze::Site;
use cuport_model::{Effort, TextRange};

use super::Planner;
use crate::diagnostic::{codes, Level};
use crate::kernel_stage::{
    blocked_here, missing_launch_names, operator_mapping, param_names, vector_tensors, KernelAt,
    OperatorMapping, ParamsSeen, ReplacedKernel,
};
use crate::operator_helper::{helper_name, helper_text, launch_arguments};
use crate::source_text::holds_directive_line;
use crate::vector_args::{vector_arg, void_param, VectorArg};

/// The generated header the replacing functions include.
pub(crate) const KERNEL_OPS_HEADER: &str = "cuport_kernel_ops.h";

impl<'a> Planner<'a> {
    /// A site inside a kernel definition a rule replaces (the definition
    /// itself is planned: it becomes the replacing function).
    pub(crate) fn inside_replaced_kernel(&self, site: &Site) -> bool {
        self.replaced.iter().any(|k| {
            k.name_at != site.range.start
                && k.span.start <= site.range.start
                && site.range.end <= k.span.end
        })
    }

    /// Whether `site` lies in code only replaced kernels needed (a
    /// `__device__` function, a launch's `dim3`); the first such site of
    /// each removes it.
    pub(crate) fn inside_dead_helper(&mut self, site: &Site) -> bool {
        if self
            .dropped
            .iter()
            .any(|r| r.start <= site.range.start && site.range.end <= r.end)
        {
            return true;
        }
        let Some(index) = self
            .dead_helpers
            .iter()
            .position(|(h, _)| h.span.start <= site.range.start && site.range.end <= h.span.end)
        else {
            return false;
        };
        let (helper, removed) = self.dead_helpers[index].clone();
        if !removed {
            self.dead_helpers[index].1 = true;
            let message = helper.message();
            self.edit(
                helper.span,
                helper.replacement(),
                codes::KERNEL_OPERATOR,
                helper.name,
            );
            for line in &helper.also {
                self.edit(*line, String::new(), codes::KERNEL_OPERATOR, helper.name);
            }
            self.diagnose(site, codes::KERNEL_OPERATOR, Level::Note, message);
        }
        true
    }

    /// The kernel defined at `site` that an applied rule replaces, with the
    /// text of the function that replaces it. A rule that cannot become
    /// one is reported (CP0037) and the kernel planned as any other.
    pub(crate) fn replacement(&mut self, site: &Site) -> Option<(ReplacedKernel<'a>, String)> {
        let kernel = self
            .replaced
            .iter()
            .find(|k| k.name_at == site.range.start)
            .cloned()?;
        let table = crate::kernels::operator_table(kernel.target)?;
        let vectors = vector_tensors(self.src, self.sites, &site.name, kernel.rule, kernel.target);
        let params: Vec<String> = site
            .args
            .iter()
            .enumerate()
            .map(
                |(index, &r)| match vectors.iter().find(|v| v.index == index) {
                    Some(vector) => void_param(self.text(r), &vector.element),
                    None => self.text(r).to_owned(),
                },
            )
            .collect();
        match helper_text(kernel.rule, table, &params, kernel.linkage) {
            Ok(text) => Some((kernel, text)),
            Err(err) => {
                let message = format!(
                    "the [[kernel]] rule for `{}` was not applied: {err}",
                    site.name
                );
                self.diagnose(site, codes::KERNEL_RULE_NOT_APPLIED, Level::Manual, message)
                    .effort = Some(Effort::Low);
                self.replaced.retain(|k| k.name_at != site.range.start);
                None
            }
        }
    }

    /// Replaces the kernel defined at `site` with the function that runs
    /// its rule's operators; false when no applied rule names it.
    pub(crate) fn replace_kernel(&mut self, site: &Site) -> bool {
        let Some((kernel, text)) = self.replacement(site) else {
            return false;
        };
        self.edit(kernel.span, text, codes::KERNEL_OPERATOR, &site.name);
        self.operator_headers(kernel.rule);
        let operators = operator_names(kernel.rule);
        let message = format!(
            "kernel `{}` is replaced by `{}`, which runs {operators} on the launch's stream (its [[kernel]] rule)",
            site.name,
            helper_name(&site.name)
        );
        let diagnostic = self.diagnose(site, codes::KERNEL_OPERATOR, Level::Note, message);
        diagnostic.effort = Some(Effort::Low);
        diagnostic.suggestion = Some(format!(
            "review the rule's shapes against the launches; the function waits for the stream before it returns and is declared with {KERNEL_OPS_HEADER}, written at the root of the output; it has not run on Ascend hardware"
        ));
        true
    }

    /// The kernel defined at `site` maps, by its rule, to operators of a
    /// table no header checked (CNNL): one diagnostic names the calls, their
    /// header and how far they are confirmed; nothing is generated. False
    /// when no such rule applies.
    pub(crate) fn name_operators(&mut self, site: &Site) -> bool {
        let Some(table) = crate::kernels::operator_table(self.target()) else {
            return false;
        };
        if !table.unchecked {
            return false;
        }
        let names = param_names(self.src, site);
        let OperatorMapping::Applies(rule) = operator_mapping(
            self.options,
            self.target(),
            KernelAt {
                name: &site.name,
                file: self.path,
            },
            ParamsSeen::Names(&names),
        ) else {
            return false;
        };
        let mut calls = Vec::new();
        let mut statuses = Vec::new();
        for call in &rule.calls {
            let Some(op) = table.operator(&call.operator) else {
                continue;
            };
            let args: Vec<String> = op
                .params
                .iter()
                .filter_map(|p| call.args.get(&p.name).map(|v| format!("{} = {v}", p.name)))
                .collect();
            calls.push(format!(
                "{}({}) from {}",
                op.name,
                args.join(", "),
                op.header
            ));
            statuses.push(format!("{}: {}", op.name, table.status(op)));
        }
        let message = format!(
            "kernel `{}` computes {} (its [[kernel]] rule); call that on the host where the kernel is launched",
            site.name,
            calls.join(" then ")
        );
        let why = table
            .note
            .as_deref()
            .unwrap_or("its operator tables were not checked against headers");
        let diagnostic = self.diagnose(
            site,
            codes::KERNEL_OPERATOR_UNCHECKED,
            Level::Manual,
            message,
        );
        diagnostic.effort = Some(Effort::Low);
        diagnostic.suggestion = Some(format!(
            "{}; cuport generates no code for it: {why}",
            statuses.join("; ")
        ));
        true
    }

    /// A rule names the kernel defined at `site` but was not applied: say
    /// why, beside the manual-port diagnostic.
    pub(crate) fn rule_not_applied(&mut self, site: &Site) {
        let said = self
            .out
            .diagnostics
            .iter()
            .any(|d| d.range == site.range && d.code == codes::KERNEL_RULE_NOT_APPLIED);
        if said {
            return;
        }
        let names = param_names(self.src, site);
        let why = match operator_mapping(
            self.options,
            self.target(),
            KernelAt {
                name: &site.name,
                file: self.path,
            },
            ParamsSeen::Names(&names),
        ) {
            OperatorMapping::None => return,
            _ if site.template_args.is_some() => {
                "it is a template (one function per instantiation would be needed)".to_owned()
            }
            OperatorMapping::Stale(rule) => format!(
                "its parameters are ({}), the kernel's ({})",
                rule.params.join(", "),
                names.join(", ")
            ),
            OperatorMapping::NotInRelease(operator) => self.not_in_release(operator),
            OperatorMapping::Unconfirmed => {
                "it is a proposal whose evidence did not run (its summary says why); to apply it anyway, declare it (drop `confidence` and `evidence`) and pass it with --rules".to_owned()
            }
            OperatorMapping::Refuted => {
                "its evidence refuted it (running the kernel did not match the operators; see the rule file)".to_owned()
            }
            OperatorMapping::Applies(rule) => {
                blocked_here(self.src, self.sites, &site.name, rule, self.target(), self.launch_args()).unwrap_or_else(|| {
                    "its definition could not be delimited (a directive between `__global__` and the name)".to_owned()
                })
            }
        };
        let message = format!(
            "the [[kernel]] rule for `{}` was not applied: {why}",
            site.name
        );
        self.diagnose(site, codes::KERNEL_RULE_NOT_APPLIED, Level::Manual, message)
            .effort = Some(Effort::Low);
    }

    fn not_in_release(&self, operator: &str) -> String {
        let release = self
            .options
            .sdk_version(self.target())
            .map_or_else(|| "the selected release".to_owned(), |v| v.to_string());
        format!("`{operator}` is not known to be declared by the headers of {release} (the operator tables list the releases checked)")
    }

    /// The applied rule a launch of `site`'s kernel becomes a call of the
    /// operator function by; None where the launch stays.
    pub(crate) fn launch_rule(
        &self,
        site: &Site,
    ) -> Option<&'a cuport_rules::kernel_rules::KernelRule> {
        let call = site.call?;
        if !crate::kernel_stage::generates_code(self.target()) {
            return None;
        }
        let passed = self.passed_arguments(&site.args);
        let OperatorMapping::Applies(rule) = operator_mapping(
            self.options,
            self.target(),
            KernelAt {
                name: &site.name,
                file: self.path,
            },
            ParamsSeen::Count(passed),
        ) else {
            return None;
        };
        if site.args.is_empty() || passed == 0 {
            return None;
        }
        let blocked = blocked_here(
            self.src,
            self.sites,
            &site.name,
            rule,
            self.target(),
            self.launch_args(),
        );
        let kept = blocked.is_some()
            || site.template_args.is_some()
            || holds_directive_line(self.text(call));
        (!kept).then_some(rule)
    }

    /// `k<<<g, b, s, q>>>(a, b)` → `cuport_kernel_k(q, a, b)` for a kernel
    /// an applied rule maps; false for any other launch. Only the text
    /// around the stream and the arguments changes: what is inside them
    /// keeps its own edits.
    pub(crate) fn operator_launch(&mut self, site: &Site) -> bool {
        let (Some(call), Some(first), Some(rule)) =
            (site.call, site.args.first(), self.launch_rule(site))
        else {
            return false;
        };
        let start = crate::source_text::qualified_name_start(self.src, call.start);
        let name = helper_name(&site.name);
        // The configuration goes (the stream stays, as the first argument):
        // what is inside it is not planned.
        match site.launch_config.get(3) {
            Some(stream) => self.dropped.extend([
                TextRange::new(start, stream.start),
                TextRange::new(stream.end, first.start),
            ]),
            None => self.dropped.push(TextRange::new(start, first.start)),
        }
        match site.launch_config.get(3) {
            Some(stream) => {
                self.edit(
                    TextRange::new(start, stream.start),
                    format!("{name}("),
                    codes::KERNEL_OPERATOR,
                    &site.name,
                );
                self.edit(
                    TextRange::new(stream.end, first.start),
                    ", ".to_owned(),
                    codes::KERNEL_OPERATOR,
                    &site.name,
                );
            }
            None => self.edit(
                TextRange::new(start, first.start),
                format!("{name}(nullptr, "),
                codes::KERNEL_OPERATOR,
                &site.name,
            ),
        }
        self.drop_vector_casts(site, rule);
        let passed_down = self.pass_launch_values_down(site, rule);
        let extra = launch_arguments(rule);
        if let (Some(last), false) = (site.args.last(), extra.is_empty()) {
            self.edit(
                TextRange::new(last.end, last.end),
                format!(", {}", extra.join(", ")),
                codes::KERNEL_OPERATOR,
                &site.name,
            );
        }
        self.operator_headers(rule);
        let message = format!(
            "launch of `{}` calls `{name}` ({}), which returns an aclError (0: success) when the operators are done; aclrtGetLastError does not see its failures{passed_down}",
            site.name,
            operator_names(rule)
        );
        // The effort is counted once, on the definition (reviewing the rule).
        self.diagnose(site, codes::KERNEL_OPERATOR, Level::Note, message)
            .suggestion = Some(format!(
            "check the value `{name}` returns where the CUDA code checked the launch"
        ));
        true
    }

    /// Gives the function that holds `site` the launch values' names it
    /// lacks as parameters, passed by each of its calls in the file
    /// (`crate::pass_down`; `blocked_here` has refused a launch where that
    /// is not possible). The clause the launch's note gets, empty when
    /// nothing was missing.
    fn pass_launch_values_down(
        &mut self,
        site: &Site,
        rule: &cuport_rules::kernel_rules::KernelRule,
    ) -> String {
        let missing = missing_launch_names(self.src, site, rule);
        if missing.is_empty() {
            return String::new();
        }
        let Ok(plan) = crate::pass_down::pass_down(self.src, site.range.start, missing) else {
            return String::new();
        };
        let mut inserts = vec![(plan.params_close, plan.parameters_text())];
        inserts.extend(
            plan.calls
                .iter()
                .map(|&(close, empty)| (close, plan.arguments_text(empty))),
        );
        for (at, text) in inserts {
            let range = TextRange::new(at, at);
            // Another launch in the same function may have added it.
            let added = self
                .out
                .edits
                .iter()
                .any(|e| e.range == range && e.replacement == text);
            if !added {
                self.edit(range, text, codes::KERNEL_OPERATOR, &site.name);
            }
        }
        format!(
            "; `{}` takes {} as new parameters (`{}`), which its {} call(s) in this file pass; a call from another file must pass them too",
            plan.function,
            plan.names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
            plan.parameters_text().trim_start_matches(", "),
            plan.calls.len()
        )
    }

    /// `(float4*) out` → `out` in a launch's arguments: the operator
    /// function takes the buffer as `void*`, and the target has no `float4`
    /// (`blocked_here` has refused a launch whose cast cannot go).
    fn drop_vector_casts(&mut self, site: &Site, rule: &cuport_rules::kernel_rules::KernelRule) {
        for vector in vector_tensors(self.src, self.sites, &site.name, rule, self.target()) {
            let Some(&arg) = site.args.get(vector.index) else {
                continue;
            };
            if let VectorArg::Cast(ranges) = vector_arg(self.src, arg, &vector.element) {
                for range in ranges {
                    self.edit(range, String::new(), codes::KERNEL_OPERATOR, &site.name);
                    self.dropped.push(range);
                }
            }
        }
    }

    /// The generated header and each operator's own header.
    fn operator_headers(&mut self, rule: &cuport_rules::kernel_rules::KernelRule) {
        self.out.headers.push(format!("\"{KERNEL_OPS_HEADER}\""));
        let Some(table) = crate::kernels::operator_table(self.target()) else {
            return;
        };
        for call in &rule.calls {
            if let Some(op) = table.operator(&call.operator) {
                self.out.headers.push(op.header.clone());
            }
        }
    }
}

fn operator_names(rule: &cuport_rules::kernel_rules::KernelRule) -> String {
    let names: Vec<&str> = rule.calls.iter().map(|c| c.operator.as_str()).collect();
    names.join(" + ")
}
