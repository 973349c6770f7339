//! C/C++/CUDA sites in dual-stack mode. Host-API names become portable
//! names the shim provides, CUDA includes become the shim's headers, and on
//! targets whose kernels need a port (Ascend, MLU) kernel definitions go
//! behind `CUPORT_CUDA_KERNELS` and launches through `CUPORT_KERNEL_LAUNCH`.
//! Diagnostics are the one-way migration's, for each target.
use cuport_analyze::Site;
use cuport_model::{Language, Library, SiteKind, Target, TextRange};
use cuport_rules::Status;

use super::names::{portable_name, shim_header};
use super::shim::{backend_macro, shimmed_library, target_header};
use super::state::{DualPlanner, Launch};
use crate::diagnostic::{codes, Level};
use crate::headers::{is_annotation, line_continues, logical_line_end, logical_line_start};
use crate::operator_helper::{helper_name, launch_arguments};
use crate::plan::{chevron_respellings, Planned, Planner};
use crate::source_text::past_comment_or_literal;
use cuport_model::Effort;

/// The guard that keeps CUDA kernels where they compile (and everywhere when
/// the shim is absent).
const KERNELS_GUARD: &str = "#if !defined(CUPORT_CUDA_KERNELS) || CUPORT_CUDA_KERNELS";

/// Plans one C-family site for a dual-stack run.
pub(crate) fn plan_site(planner: &mut DualPlanner<'_>, site: &Site) {
    if site.kind == SiteKind::Include && in_backend_branch(planner, site) {
        // A target's header in a switch cuport wrote (a second run): its
        // file name may look like CUDA's (`hip/device_functions.h`).
        return;
    }
    let one_way = one_way_plans(planner, site);
    // A shimmed include is the shim's business on every target: its section
    // includes what the target's rules need.
    let shimmed_include =
        site.kind == SiteKind::Include && shimmed_library(&site.name, Some(site.library)).is_some();
    // The build rewrite covers these on every backend through cuport.cmake.
    let dual_build = planner.language == Language::Cmake && super::build::handles(&site.name);
    for (target, planned) in &one_way {
        if replaced_on(planner, site, *target) {
            // That backend runs the operators instead of this code.
            continue;
        }
        for diagnostic in &planned.diagnostics {
            let dual_handles = shimmed_include
                || dual_build
                || diagnostic.code == codes::HELPER_REQUIRED
                || diagnostic.code == codes::TEMPLATE_FAILED;
            // Target-independent notes (a CUDA version test) come once.
            let repeated = planner.out.diagnostics.iter().any(|d| {
                d.range == diagnostic.range
                    && d.code == diagnostic.code
                    && d.message == diagnostic.message
            });
            if !dual_handles && !repeated {
                planner.out.diagnostics.push(diagnostic.clone());
            }
        }
    }
    let handled = match site.kind {
        SiteKind::Include => include(planner, site),
        SiteKind::BuildRule if planner.language == Language::Cmake => {
            super::build::plan_site(planner, site)
        }
        _ if site.library == Library::Preprocessor => preprocessor_test(planner, site, &one_way),
        // An API name in a condition stays as CUDA tests it (reported).
        SiteKind::PreprocessorCondition => false,
        SiteKind::KernelDefinition => kernel_definition(planner, site),
        SiteKind::KernelLaunch => kernel_launch(planner, site),
        _ => name(planner, site),
    };
    if !handled {
        report_kept(planner, site, &one_way);
    }
}

/// The one-way plan of `site` for each dual target.
fn one_way_plans(planner: &DualPlanner<'_>, site: &Site) -> Vec<(Target, Planned)> {
    planner
        .per_target
        .iter()
        .map(|options| {
            let mut sub = Planner::new(
                planner.src,
                planner.language,
                planner.rules,
                options,
                planner.lines,
            );
            sub.for_dual_stack = true;
            sub.path = planner.path;
            // Whether a rule applies depends on the file's other sites
            // (the kernel's definition, its launches: `blocked_here`).
            sub.sites = planner.sites;
            sub.one_way_site(site);
            let rewrite_code = sub.pending.first().map(|rewrite| rewrite.code());
            let mut planned = sub.out;
            if let Some(code) = rewrite_code {
                planned.edits.push(crate::edit::Edit {
                    range: site.range,
                    replacement: String::new(),
                    code,
                    cuda_name: site.name.clone(),
                    kind: crate::edit::EditKind::Port,
                });
            }
            (options.planned_target(), planned)
        })
        .collect()
}

fn targets<'p>(planner: &'p DualPlanner<'_>) -> impl Iterator<Item = Target> + 'p {
    planner.per_target.iter().map(|o| o.planned_target())
}

fn kernels_need_port(planner: &DualPlanner<'_>) -> bool {
    planner
        .per_target
        .iter()
        .any(|o| !o.kernels_compile(o.planned_target()))
}

/// A host-API name: renamed to its portable spelling when the shim provides
/// it on some target. Device names that HIP/MUSA rename are provided by the
/// shim under their CUDA spelling, so they stay.
fn name(planner: &mut DualPlanner<'_>, site: &Site) -> bool {
    let rule_library = targets(planner)
        .find_map(|t| planner.rules.lookup(t, &site.name))
        .and_then(|r| r.library());
    let shimmed = shimmed_library(&site.name, rule_library.or(Some(site.library)));
    // Only names some table knows: an unknown `cuStatus` or `cudaModule`
    // is as likely the project's own variable (its CP0001 stays). A known
    // name a selected target lacks is declared unavailable there.
    let known = planner.rules.is_known(&site.name);
    match (shimmed, portable_name(&site.name)) {
        (Some(library), Some(portable)) if known => {
            let written = planner.text(site.range);
            if written != site.name {
                return false;
            }
            // The portable name comes from the shim header that replaced the
            // library's include, in this file or in one that includes it
            // (the include policy: nothing is added for a name alone).
            let _ = library;
            planner.edit(site.range, portable, codes::DUAL_PORTABLE, &site.name);
            true
        }
        _ => site.library == Library::Device && device_name_provided(planner, site),
    }
}

/// Whether every target that spells a device name differently gets it
/// from the shim (`#define cuda_name target_name` in `cuport/runtime.h`).
fn device_name_provided(planner: &DualPlanner<'_>, site: &Site) -> bool {
    planner.per_target.iter().all(|o| {
        let t = o.planned_target();
        let Some(resolved) = planner
            .rules
            .lookup_flavour(t, o.flavour_for(t), &site.name)
        else {
            return true;
        };
        match resolved.status() {
            Status::Renamed | Status::Approximate | Status::Rewrite => {
                o.kernels_compile(t) && portable_name(&site.name).is_some()
            }
            _ => true,
        }
    })
}

/// A CUDA header the tables know becomes a backend switch: each target's
/// counterpart, else the original include for the CUDA build (which so sees
/// exactly the headers it saw before). A library the shim renames is also
/// given its shim header (`#include "../cuport/blas.h"`) for the portable
/// names. A header no table knows (a project's own `helper_cuda.h` outside
/// the migrated folder) is kept as it is; its diagnostic says why.
fn include(planner: &mut DualPlanner<'_>, site: &Site) -> bool {
    if !planner.rules.is_known(&site.name) {
        return true;
    }
    let shim = shimmed_library(&site.name, Some(site.library))
        .and_then(shim_header)
        .map(|header| format!("#include \"{}cuport/{header}\"", planner.prefix));
    include_switch(planner, site, shim.as_deref())
}

fn include_switch(planner: &mut DualPlanner<'_>, site: &Site, shim: Option<&str>) -> bool {
    let line = planner.lines.line_of(site.range.start);
    let Some(range) = planner.lines.line_range(line) else {
        return false;
    };
    if in_cuda_branch(planner, line) {
        // Already the CUDA branch of a switch (a second run).
        return true;
    }
    let newline = if planner.text(range).ends_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let original = planner
        .text(range)
        .trim_end_matches(['\r', '\n'])
        .to_owned();
    if original.ends_with('\\') || logical_line_start(planner.src, planner.lines, line) != line {
        // The include goes on over the next line, or its header name is on
        // a line a backslash continues: a switch around this line would
        // continue into its own `#endif`, or split the directive (fuzzing
        // findings: `fuzz_regressions::include_continued_by_a_backslash_is_kept`,
        // `an_include_whose_name_is_on_a_continued_line_is_kept`).
        return false;
    }
    // The runtime header first where the target header may need it (HIP's
    // cooperative groups do); a library's own shim header brings what its
    // names need.
    let mut text = String::new();
    match shim {
        Some(shim) if site.library != Library::Runtime => {
            text.push_str(&format!("{shim}{newline}"));
        }
        _ => text.push_str(&format!(
            "#include {}{newline}",
            runtime_include(&planner.prefix)
        )),
    }
    let per_target: Vec<(Target, Option<String>)> = targets(planner)
        .map(|t| {
            let header =
                target_header(planner.rules, planner.options.flavour_for(t), t, &site.name);
            (t, header)
        })
        .collect();
    if shim.is_none()
        && per_target
            .iter()
            .all(|(_, h)| h.as_deref() == Some(site.name.as_str()))
    {
        return true;
    }
    for (i, (target, header)) in per_target.iter().enumerate() {
        let keyword = if i == 0 { "#if" } else { "#elif" };
        text.push_str(&format!(
            "{keyword} defined({}){newline}",
            backend_macro(*target)
        ));
        match header {
            // cuport's own headers sit in the shim folder.
            Some(h) if h.starts_with("cuport_") => text.push_str(&format!(
                "#include \"{}cuport/{h}\"{newline}",
                planner.prefix
            )),
            Some(h) => text.push_str(&format!("#include <{h}>{newline}")),
            None => text.push_str(&format!(
                "/* {}: no counterpart on {target} (see the cuport diagnostic) */{newline}",
                site.name
            )),
        }
    }
    text.push_str(&format!("#else{newline}{original}{newline}#endif{newline}"));
    planner.edit(range, text, codes::DUAL_PORTABLE, &site.name);
    true
}

/// Puts a kernel definition behind [`KERNELS_GUARD`] when a target needs a
/// kernel port; HIP and MUSA compile it as it is.
fn kernel_definition(planner: &mut DualPlanner<'_>, site: &Site) -> bool {
    if !kernels_need_port(planner) {
        return true;
    }
    let Some(body) = site.body else {
        // A declaration: harmless on the host compiler once `__global__` is
        // gone with the definition, but say so.
        return false;
    };
    if in_directive(planner, site.range.start) {
        // A kernel in a macro's body (continued lines): a guard's own
        // directive lines would end the macro there (a fuzz finding). It
        // is reported as kept instead.
        return false;
    }
    let start = definition_start(planner, site.range.start);
    let start_line = planner.lines.line_of(start);
    if previous_line(planner, start_line) == Some(KERNELS_GUARD) {
        return true;
    }
    let line_end = planner
        .lines
        .line_range(planner.lines.line_of(body.end.saturating_sub(1)))
        .map_or(body.end, |r| r.end);
    if comment_crosses(planner.src, start, site.range.start)
        || comment_crosses(planner.src, body.end, line_end)
    {
        // A comment that ends on the kernel's first line or starts after
        // its closing brace (`} /* ...` over several lines) would hold the
        // guard's `#if` or `#endif` (a fuzz finding:
        // `fuzz_regressions::no_kernel_guard_inside_a_comment`). It is
        // reported as kept instead.
        return false;
    }
    let newline = if planner
        .src
        .get(..line_end)
        .is_some_and(|s| s.ends_with(b"\r\n"))
    {
        "\r\n"
    } else {
        "\n"
    };
    if !planner
        .src
        .get(..line_end)
        .is_some_and(|s| s.ends_with(b"\n"))
    {
        planner.edit(
            TextRange::new(line_end, line_end),
            format!("{newline}#endif /* CUDA kernel {} */{newline}", site.name),
            codes::DUAL_PORTABLE,
            &site.name,
        );
    } else {
        planner.edit(
            TextRange::new(line_end, line_end),
            format!("#endif /* CUDA kernel {} */{newline}", site.name),
            codes::DUAL_PORTABLE,
            &site.name,
        );
    }
    planner.edit(
        TextRange::new(start, start),
        format!("{KERNELS_GUARD}{newline}"),
        codes::DUAL_PORTABLE,
        &site.name,
    );
    operator_function(planner, site, line_end, newline);
    true
}

/// Whether a comment or literal crosses the edge of the line part
/// `src[from..to]`: one that started before `from` ends in it (a `*/` the
/// part did not open), or one it opens runs past `to` (a block comment, or
/// a line that a backslash continues).
fn comment_crosses(src: &[u8], from: usize, to: usize) -> bool {
    let to = to.min(src.len());
    let mut at = from;
    while at < to {
        if src[at..].starts_with(b"*/") {
            return true;
        }
        match past_comment_or_literal(src, at, src.len()) {
            Some(past) if past > to => return true,
            Some(past) => at = past.max(at + 1),
            None => at += 1,
        }
    }
    line_continues(&src[from.min(to)..to])
}

/// Whether `site` is in (or is) a kernel definition `target` replaces with
/// operator calls.
fn replaced_on(planner: &DualPlanner<'_>, site: &Site, target: Target) -> bool {
    planner.replaced.iter().any(|k| {
        k.target == target && k.span.start <= site.range.start && site.range.end <= k.span.end
    })
}

/// The target whose operators a launch of `site`'s kernel calls, if an
/// applied `[[kernel]]` rule maps it there.
fn operator_launch_target(planner: &DualPlanner<'_>, site: &Site) -> Option<(Target, Vec<String>)> {
    let passed = planner.passed_arguments(&site.args);
    planner.per_target.iter().find_map(|options| {
        let target = options.planned_target();
        let operators = crate::kernel_stage::disposition(options, target)
            == crate::kernel_stage::Disposition::Skeleton
            && crate::kernel_stage::generates_code(target);
        if !operators {
            return None;
        }
        match crate::kernel_stage::operator_mapping(
            options,
            target,
            crate::kernel_stage::KernelAt {
                name: &site.name,
                file: planner.path,
            },
            crate::kernel_stage::ParamsSeen::Count(passed),
        ) {
            crate::kernel_stage::OperatorMapping::Applies(rule) => {
                let blocked = crate::kernel_stage::blocked_here(
                    planner.src,
                    planner.sites,
                    &site.name,
                    rule,
                    target,
                    crate::kernel_stage::LaunchArgs::SharedWithCuda,
                );
                blocked.is_none().then(|| (target, launch_arguments(rule)))
            }
            _ => None,
        }
    })
}

/// After a guarded kernel that a `[[kernel]]` rule maps for a target: the
/// function that runs the operators, for the backends that have them
/// (`CUPORT_KERNEL_OPERATORS`, cuport/backend.h).
fn operator_function(planner: &mut DualPlanner<'_>, site: &Site, at: usize, newline: &str) {
    let Some((kernel, text)) = planner.replacement(site) else {
        return;
    };
    let block = format!(
        "#if CUPORT_KERNEL_OPERATORS{newline}{}#endif /* operators for {} */{newline}",
        text.replace('\n', newline),
        site.name
    );
    planner.edit(
        TextRange::new(at, at),
        block,
        codes::KERNEL_OPERATOR,
        &site.name,
    );
    let message = format!(
        "kernel `{}` stays for the backends that compile CUDA kernels; on {} `{}` runs its [[kernel]] rule's operators instead",
        site.name,
        kernel.target,
        helper_name(&site.name)
    );
    planner
        .diagnose(site, codes::KERNEL_OPERATOR, Level::Note, message)
        .effort = Some(Effort::Low);
}

/// Whether `site` is the include of a target's branch in a backend switch
/// (`#if defined(CUPORT_BACKEND_HIP)` or `#elif ...` right above it; a
/// fuzzing finding: `fuzz_regressions::
/// runtime_header_is_added_in_the_first_run_next_to_any_cuda_include`).
fn in_backend_branch(planner: &DualPlanner<'_>, site: &Site) -> bool {
    let line = planner.lines.line_of(site.range.start);
    previous_line(planner, line).is_some_and(opens_backend_branch)
}

/// Whether `line` is the CUDA branch of cuport's include switch: `#else`
/// right above it, after a target's branch. A lone `#else` of the
/// project's own is not one (a fuzzing finding:
/// `fuzz_regressions::include_after_a_projects_else_is_switched_once`).
fn in_cuda_branch(planner: &DualPlanner<'_>, line: usize) -> bool {
    previous_line(planner, line) == Some("#else")
        && line
            .checked_sub(3)
            .and_then(|opening| previous_line(planner, opening + 1))
            .is_some_and(opens_backend_branch)
}

fn opens_backend_branch(text: &str) -> bool {
    [
        "#if defined(CUPORT_BACKEND_",
        "#elif defined(CUPORT_BACKEND_",
    ]
    .iter()
    .any(|opening| text.starts_with(opening))
}

/// The text of the line above `line`, trimmed.
fn previous_line<'a>(planner: &DualPlanner<'a>, line: usize) -> Option<&'a str> {
    let range = planner.lines.line_range(line.checked_sub(1)?)?;
    Some(planner.text(range).trim())
}

/// The start of the line where the definition begins: the `__global__`
/// line, or a `template <...>` line right above it. `--annotate` notes
/// between them belong to the definition: the first run writes them below
/// the guard, and a rerun must still find the guard above them (a fuzzing
/// finding: `fuzz_regressions::annotated_kernel_is_guarded_once`).
fn definition_start(planner: &DualPlanner<'_>, name_at: usize) -> usize {
    let src = planner.src;
    let before = &src[..name_at.min(src.len())];
    let global_at = last_global_qualifier(before).unwrap_or(name_at);
    let mut line = planner.lines.line_of(global_at);
    while line > 0 {
        let Some(previous) = planner.lines.line_range(line - 1) else {
            break;
        };
        let text = planner.text(previous).trim();
        // A line with a brace or a semicolon is no prefix of this kernel's
        // declaration: `extern "C" {` opens a block whose close the guard
        // would leave outside, and `template}` closes the kernel before (a
        // fuzzing finding: `fuzz_regressions::unbalanced_braces_between_kernels_port_once`).
        let prefix = (text.starts_with("template") || text.starts_with("extern \"C\""))
            && !text.contains(['{', '}', ';']);
        if prefix || is_annotation(text.as_bytes()) {
            line -= 1;
        } else {
            break;
        }
    }
    planner
        .lines
        .line_range(line)
        .map_or(global_at, |r| r.start)
}

/// Where the last `__global__` qualifier in `before` starts: a whole word,
/// not part of a longer name (an `--annotate` note naming `cuT__global__`
/// between the qualifier and the kernel's name hid the guard from a rerun;
/// a fuzzing finding: `fuzz_regressions::global_inside_a_longer_name_is_no_qualifier`).
fn last_global_qualifier(before: &[u8]) -> Option<usize> {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let qualifier = b"__global__";
    let mut end = before.len();
    while let Some(at) = memchr::memmem::rfind(&before[..end], qualifier) {
        let after = at + qualifier.len();
        let open_before = at == 0 || !is_word(before[at - 1]);
        let open_after = after >= before.len() || !is_word(before[after]);
        if open_before && open_after {
            return Some(at);
        }
        end = at + qualifier.len() - 1;
    }
    None
}

fn kernel_launch(planner: &mut DualPlanner<'_>, site: &Site) -> bool {
    if !kernels_need_port(planner) {
        // The launch stays as written for every backend: hipcc needs `<<<`.
        for (range, text) in chevron_respellings(site) {
            planner.edit(range, text.to_owned(), codes::LAUNCH_SPELLING, &site.name);
        }
        return true;
    }
    let Some(call) = site.call else {
        return false;
    };
    let text = planner.text(call);
    let chevrons = match site.spaced_chevrons {
        Some([open, _]) => open.start.checked_sub(call.start),
        None => text.find("<<<"),
    };
    let Some(chevrons) = chevrons else {
        return false;
    };
    let leaves_its_directive = in_directive(planner, call.start)
        && call.start + logical_line_end(&planner.src[call.start..]) < call.end;
    if leaves_its_directive
        || text
            .lines()
            .skip(1)
            .any(|l| l.trim_start().starts_with('#'))
    {
        // Preprocessor lines inside the launch cannot go into a macro call,
        // nor can a launch that a directive line starts and code ends (`#define
        // C a<<<` then `>>>()`, a fuzz finding).
        let why = if leaves_its_directive {
            "starts on a preprocessor line and ends after it"
        } else {
            "has preprocessor lines inside it"
        };
        let message = format!(
            "launch of `{}` {why}, so it cannot become CUPORT_KERNEL_LAUNCH; put it behind `#if !defined(CUPORT_CUDA_KERNELS) || CUPORT_CUDA_KERNELS` by hand",
            site.name
        );
        planner
            .diagnose(site, codes::DUAL_NOT_WRAPPED, Level::Manual, message)
            .effort = Some(Effort::Low);
        return true;
    }
    let operator = operator_launch_target(planner, site);
    let operator_values = operator
        .as_ref()
        .map(|(_, values)| values.clone())
        .unwrap_or_default();
    let operator_function = operator.map(|_| helper_name(&site.name));
    planner.launches.push(Launch {
        call,
        kernel: TextRange::new(call.start, call.start + chevrons),
        config: site.launch_config.clone(),
        args: site.args.clone(),
        cuda_name: site.name.clone(),
        operator_function,
        operator_values,
    });
    true
}

/// Writes the pending launches as `CUPORT_KERNEL_LAUNCH((k), (g, b), args)`,
/// with the edits inside their arguments folded in.
pub(crate) fn compose_launches(planner: &mut DualPlanner<'_>) {
    let mut launches = std::mem::take(&mut planner.launches);
    launches.sort_by_key(|l| l.call.len());
    for launch in launches {
        // The kernel with its template arguments, edits inside them folded
        // in like the arguments' (`k<cudaStream_t>`; a fuzzing finding:
        // `fuzz_regressions::launch_macro_keeps_the_edits_in_template_arguments`).
        let kernel = planner.argument_text(launch.kernel).trim().to_owned();
        let config: Vec<String> = launch
            .config
            .iter()
            .map(|&r| planner.argument_text(r).trim().to_owned())
            .collect();
        let mut text = match &launch.operator_function {
            // The stream is the operator call's first argument.
            Some(function) if !launch.operator_values.is_empty() => format!(
                "CUPORT_OPERATOR_LAUNCH_VALUES({function}, ({}), ({kernel}), ({}), ({})",
                config.get(3).map_or("nullptr", String::as_str),
                config.join(", "),
                launch.operator_values.join(", ")
            ),
            Some(function) => format!(
                "CUPORT_OPERATOR_LAUNCH({function}, ({}), ({kernel}), ({})",
                config.get(3).map_or("nullptr", String::as_str),
                config.join(", ")
            ),
            None => format!("CUPORT_KERNEL_LAUNCH(({kernel}), ({})", config.join(", ")),
        };
        let call = launch.call;
        // A launch that goes on on the next line after its `(` (in a macro
        // continued with `\`): only the part before the line break is
        // rewritten, the arguments and `)` stay as written (with their own
        // edits), so no edit joins the directive's lines.
        let head_end = paren_before_line_break(planner.src, &launch);
        let replaced = match head_end {
            Some(end) => {
                if !launch.args.is_empty() {
                    text.push(',');
                }
                TextRange::new(call.start, end)
            }
            None => {
                for arg in &launch.args {
                    text.push_str(", ");
                    text.push_str(planner.argument_text(*arg).trim());
                }
                text.push(')');
                call
            }
        };
        planner
            .out
            .edits
            .retain(|e| !(replaced.start <= e.range.start && e.range.end <= replaced.end));
        planner.edit(replaced, text, codes::DUAL_PORTABLE, &launch.cuda_name);
    }
}

/// Where the launch's `(` ends when a line break follows it before the
/// first argument (or the `)`).
fn paren_before_line_break(src: &[u8], launch: &Launch) -> Option<usize> {
    let from = launch.config.last().map_or(launch.call.start, |r| r.end);
    let to = launch
        .args
        .first()
        .map_or(launch.call.end, |a| a.start)
        .max(from);
    let between = src.get(from..to)?;
    let paren = between.iter().position(|&b| b == b'(')?;
    between[paren..]
        .contains(&b'\n')
        .then_some(from + paren + 1)
}

/// `#ifdef __CUDACC__` → `#if defined(__CUDACC__) || defined(__HIPCC__)`:
/// a test of a compiler macro holds for every backend that spells it its
/// own way (the CUDA result is unchanged). Other uses of the macro are
/// reported.
fn preprocessor_test(
    planner: &mut DualPlanner<'_>,
    site: &Site,
    one_way: &[(Target, Planned)],
) -> bool {
    let mut spellings: Vec<String> = Vec::new();
    for (_, planned) in one_way {
        for edit in &planned.edits {
            let to = edit.replacement.trim();
            let identifier = portable_name(to).is_some() && !to.is_empty();
            if identifier && to != site.name && !spellings.iter().any(|s| s == to) {
                spellings.push(to.to_owned());
            }
        }
    }
    if spellings.is_empty() {
        // No target spells it differently: nothing to change.
        return one_way.iter().all(|(_, p)| p.edits.is_empty());
    }
    let line = planner.lines.line_of(site.range.start);
    let Some(range) = planner.lines.line_range(line) else {
        return false;
    };
    // A line that continues the one before (`...\` then `#ifdef X`) is no
    // directive: the `#` is not at the start of a logical line (a fuzzing
    // finding: `fuzz_regressions::a_continued_line_is_no_directive`).
    let before = &planner.src[..range.start];
    if before.ends_with(b"\\\n") || before.ends_with(b"\\\r\n") {
        return false;
    }
    let text = planner.text(range);
    let body = text.trim_end_matches(['\r', '\n']);
    let directive: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let name = site.name.as_str();
    let any = |negate: bool| -> String {
        let (not, join) = if negate { ("!", " && ") } else { ("", " || ") };
        std::iter::once(name.to_owned())
            .chain(spellings.iter().cloned())
            .map(|n| format!("{not}defined({n})"))
            .collect::<Vec<_>>()
            .join(join)
    };
    let replacement = if directive == format!("#ifdef {name}")
        || directive == format!("# ifdef {name}")
    {
        format!("#if {}", any(false))
    } else if directive == format!("#ifndef {name}") || directive == format!("# ifndef {name}") {
        format!("#if {}", any(true))
    } else {
        return defined_operator(planner, site, &spellings);
    };
    let at = TextRange::new(range.start, range.start + body.len());
    planner.edit(at, replacement, codes::DUAL_PORTABLE, &site.name);
    true
}

/// `defined(__CUDACC__)` inside an `#if` → `(defined(__CUDACC__) ||
/// defined(__HIPCC__))`; already widened ones are left alone.
fn defined_operator(planner: &mut DualPlanner<'_>, site: &Site, spellings: &[String]) -> bool {
    if !in_directive(planner, site.range.start) {
        // `defined(...)` means something only to the preprocessor (a fuzzing
        // finding: `fuzz_regressions::a_condition_outside_a_directive_is_not_widened`).
        return false;
    }
    let before = &planner.src[..site.range.start];
    let Ok(before) = std::str::from_utf8(before) else {
        return false;
    };
    let trimmed = before.trim_end_matches([' ', '\t']);
    let Some(open) = trimmed.strip_suffix('(') else {
        return false;
    };
    let Some(defined_at) = open
        .trim_end_matches([' ', '\t'])
        .strip_suffix("defined")
        .map(str::len)
    else {
        return false;
    };
    let after = &planner.src[site.range.end..];
    // The `)` closes the operator only on the directive's own line (a
    // backslash may continue it); `#if defined(X` with `)` on the next,
    // code, line is a fuzz finding that the rewrite glued together.
    let line_end = logical_line_end(after);
    let Some(close) = after[..line_end]
        .iter()
        .position(|&b| !matches!(b, b' ' | b'\t' | b'\\' | b'\r' | b'\n'))
        .filter(|&k| after[k] == b')')
    else {
        return false;
    };
    let rest = String::from_utf8_lossy(&after[..line_end]);
    if spellings
        .iter()
        .all(|s| rest.contains(&format!("defined({s})")))
    {
        return true;
    }
    let mut text = format!("(defined({})", site.name);
    for spelling in spellings {
        text.push_str(&format!(" || defined({spelling})"));
    }
    text.push(')');
    let range = TextRange::new(defined_at, site.range.end + close + 1);
    planner.edit(range, text, codes::DUAL_PORTABLE, &site.name);
    true
}

/// Whether `at` lies on a preprocessor directive's logical line.
fn in_directive(planner: &DualPlanner<'_>, at: usize) -> bool {
    let line = logical_line_start(planner.src, planner.lines, planner.lines.line_of(at));
    let Some(range) = planner.lines.line_range(line) else {
        return false;
    };
    let text = &planner.src[range.start..range.end];
    let indent = text
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    text.get(indent) == Some(&b'#')
}

/// A site the dual source keeps as written although a target's one-way
/// migration would change it: nothing may be dropped silently. A one-way
/// diagnostic already says what to do, except an approximate one on a
/// call, which describes the rewrite (`cooperative_groups::reduce` became
/// `cuport_cg::reduce`) that the dual source did not make.
fn report_kept(planner: &mut DualPlanner<'_>, site: &Site, one_way: &[(Target, Planned)]) {
    for (target, planned) in one_way {
        let rewrite_described = site.call.is_some()
            && planned
                .diagnostics
                .iter()
                .all(|d| d.level == Level::Approximate);
        if planned.edits.is_empty() || !(planned.diagnostics.is_empty() || rewrite_described) {
            continue;
        }
        let spelled: Vec<&str> = planned
            .edits
            .iter()
            .map(|e| e.replacement.as_str())
            .filter(|r| !r.is_empty())
            .collect();
        let message = match spelled.first() {
            Some(to) => format!(
                "`{}` is kept in the dual-stack source, but {target} spells it `{to}`; make this code work on both (e.g. test both macros, or select with {})",
                site.name,
                backend_macro(*target)
            ),
            None => format!(
                "`{}` is kept in the dual-stack source, but {target} needs it rewritten; port it behind {}",
                site.name,
                backend_macro(*target)
            ),
        };
        let diagnostic = planner.diagnose(site, codes::DUAL_KEPT, Level::Manual, message);
        diagnostic.effort = Some(Effort::Low);
    }
}

/// `#include` spelling of the shim's runtime header for a file `depth`
/// directories below the root.
pub(crate) fn runtime_include(prefix: &str) -> String {
    format!("\"{prefix}cuport/runtime.h\"")
}
