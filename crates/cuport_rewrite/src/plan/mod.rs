//! The planning context one-way and dual-stack planning share: the source,
//! its lines, the rule tables, and what planning has produced so far
//! (edits, diagnostics, headers and imports the edits need, template
//! rewrites waiting for the edits inside their arguments). The one-way rules
//! are in [`one_way`]; dual-stack planning (`crate::dual`) composes them.
mod arguments;
mod cmake_build;
mod cmake_glob;
mod in_place;
mod make_build;
pub(crate) mod one_way;
mod operator_kernels;
mod overloads;

pub(crate) use operator_kernels::KERNEL_OPS_HEADER;
pub(crate) use overloads::unmatched;

use cuport_analyze::{FileAnalysis, Site};
use cuport_model::{
    Code, Language, Library, LineIndex, SiteKind, Target, TargetProfile, TextRange,
};
use cuport_rules::{Resolved, RuleSet, Template};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::edit::{Edit, EditKind};
use crate::options::MigrateOptions;
use crate::result::FileStats;
use crate::suppress::Suppressions;
use cuport_model::Effort;

/// What one site turned into.
#[derive(Debug, Default, Clone)]
pub(crate) struct Planned {
    pub(crate) edits: Vec<Edit>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Target headers (C family) or imports (Python) the edits need.
    pub(crate) headers: Vec<String>,
    pub(crate) imports: Vec<String>,
}

impl Planned {
    /// Whether a planned edit already touches some of `range` (a pass
    /// leaves such text to the edit).
    pub(crate) fn overlaps_an_edit(&self, range: TextRange) -> bool {
        self.edits
            .iter()
            .any(|e| e.range.start < range.end && range.start < e.range.end)
    }

    /// What a planned edit replaces exactly `range` with (a renamed type).
    pub(crate) fn renamed_to(&self, range: TextRange) -> Option<String> {
        self.edits
            .iter()
            .find(|e| e.range == range)
            .map(|e| e.replacement.trim().to_owned())
    }
}

/// A call rewritten through a template. Applied after every site is
/// planned, so that edits inside its arguments (a renamed type in a
/// `sizeof`, a nested call) are applied to the argument text first.
#[derive(Debug)]
pub(crate) struct PendingRewrite<'a> {
    call: TextRange,
    args: Vec<TextRange>,
    template: &'a Template,
    code: Code,
    cuda_name: String,
}

impl PendingRewrite<'_> {
    /// The code of the rule whose template the rewrite applies.
    pub(crate) fn code(&self) -> Code {
        self.code
    }
}

/// One file to plan, with everything planning reads.
pub(crate) struct FileInput<'a> {
    /// Relative to the migrated root, `/`-separated.
    pub(crate) path: &'a str,
    pub(crate) language: Language,
    pub(crate) src: &'a [u8],
    pub(crate) analysis: &'a FileAnalysis,
    pub(crate) rules: &'a RuleSet,
    pub(crate) options: &'a MigrateOptions,
    pub(crate) lines: &'a LineIndex,
    pub(crate) suppressions: &'a Suppressions,
    /// The file's words, found on first use ([`FileInput::code_words`]).
    pub(crate) words: std::cell::OnceCell<Vec<(usize, &'a str)>>,
    /// The file's valid UTF-8 text (all of it for a valid file), decoded
    /// on first use ([`FileInput::valid_text`]).
    pub(crate) valid_text: std::cell::OnceCell<&'a str>,
}

impl<'a> FileInput<'a> {
    /// Every identifier of the file outside comments and literals, with
    /// its offset. Several passes walk them; walking the text once per
    /// pass was an eighth of a port's time (callgrind on cuda-samples).
    pub(crate) fn code_words(&self) -> &[(usize, &'a str)] {
        self.words.get_or_init(|| {
            let src = self.src;
            crate::source_text::code_words_decoded(src, 0, src.len(), self.valid_text())
        })
    }

    /// The file's valid UTF-8 text (all of it for a valid file), checked
    /// once however many passes ask.
    pub(crate) fn valid_text(&self) -> &'a str {
        self.valid_text
            .get_or_init(|| crate::source_text::valid_prefix(self.src))
    }

    /// The length of [`FileInput::valid_text`].
    pub(crate) fn valid_up_to(&self) -> usize {
        self.valid_text().len()
    }
}

/// What planning one file produced.
pub(crate) struct PlannedFile {
    pub(crate) planned: Planned,
    pub(crate) stats: FileStats,
    /// The runtime header a `.cu` file that relied on nvcc's implicit
    /// include gets, as it is spelled in an `#include`.
    pub(crate) runtime_header: String,
}

/// The shared planning context (see the module documentation).
pub(crate) struct Planner<'a> {
    pub(crate) src: &'a [u8],
    pub(crate) pending: Vec<PendingRewrite<'a>>,
    pub(crate) language: Language,
    pub(crate) rules: &'a RuleSet,
    pub(crate) options: &'a MigrateOptions,
    pub(crate) lines: &'a LineIndex,
    pub(crate) out: Planned,
    /// Planning one target's view of a dual-stack site: the shim keeps
    /// CUDA's values of enum maps that convert at run time.
    pub(crate) for_dual_stack: bool,
    /// Target headers the file's includes became so far, with the
    /// preprocessor branch of each (`Site::condition`).
    pub(crate) included: Vec<(String, Option<u32>)>,
    /// Kernel definitions `[[kernel]]` rules replace with operator calls:
    /// the sites inside them are not planned.
    pub(crate) replaced: Vec<crate::kernel_stage::ReplacedKernel<'a>>,
    /// `__device__` functions only the replaced kernels called: they go
    /// with them (`crate::dead_helpers`), and whether each is gone yet.
    pub(crate) dead_helpers: Vec<(crate::dead_helpers::DeadHelper<'a>, bool)>,
    /// Text a launch's rewrite removed (its chevrons, a cast to `float4*`):
    /// the sites inside are not planned.
    pub(crate) dropped: Vec<TextRange>,
    /// The file, relative to the migrated root (`[[kernel]]` rules may be
    /// for one file).
    pub(crate) path: &'a str,
    /// The argument lists of the file's calls: a directive inside one is
    /// part of that call, and deleting it would change what a rerun sees.
    pub(crate) calls: Vec<TextRange>,
    /// The file's sites, for what a decision about one kernel needs of all
    /// its launches (a rule's launch values must be in scope at each).
    pub(crate) sites: &'a [cuport_analyze::Site],
}

impl<'a> Planner<'a> {
    pub(crate) fn new(
        src: &'a [u8],
        language: Language,
        rules: &'a RuleSet,
        options: &'a MigrateOptions,
        lines: &'a LineIndex,
    ) -> Self {
        Planner {
            src,
            pending: Vec::new(),
            language,
            rules,
            options,
            lines,
            out: Planned::default(),
            for_dual_stack: false,
            included: Vec::new(),
            replaced: Vec::new(),
            dead_helpers: Vec::new(),
            dropped: Vec::new(),
            path: "",
            calls: Vec::new(),
            sites: &[],
        }
    }

    /// A context for `input` planned with `options` (a dual-stack run plans
    /// each site once more per target, with that target's options).
    pub(crate) fn for_file(input: &FileInput<'a>, options: &'a MigrateOptions) -> Self {
        let mut planner =
            Planner::new(input.src, input.language, input.rules, options, input.lines);
        planner.path = input.path;
        planner.sites = &input.analysis.sites;
        planner.replaced = crate::kernel_stage::replaced_kernels(
            input.analysis,
            input.src,
            input.path,
            options,
            options.planned_target(),
            crate::kernel_stage::LaunchArgs::Own,
        );
        planner.calls = input.analysis.sites.iter().filter_map(|s| s.call).collect();
        planner.dead_helpers = planner.dead_code(input.analysis);
        planner
    }

    /// What only the kernels replaced by operator calls needed, in a one-way
    /// port (`crate::dead_helpers`): `__device__` functions (not in a
    /// header, whose functions may serve other files) and `dim3` variables
    /// of launches that become calls.
    fn dead_code(
        &self,
        analysis: &cuport_analyze::FileAnalysis,
    ) -> Vec<(crate::dead_helpers::DeadHelper<'a>, bool)> {
        if self.in_dual_stack() {
            return Vec::new();
        }
        let mut dead = Vec::new();
        if !self.replaced.is_empty() && !cuport_analyze::is_header_path(self.path) {
            let spans: Vec<TextRange> = self.replaced.iter().map(|k| k.span).collect();
            dead = crate::dead_helpers::dead_helpers(self.src, &analysis.sites, &spans);
        }
        let configs: Vec<TextRange> = self
            .sites
            .iter()
            .filter(|s| s.kind == SiteKind::KernelLaunch && self.launch_rule(s).is_some())
            .flat_map(|s| s.launch_config.iter().take(2).copied())
            .collect();
        if !configs.is_empty() {
            dead.extend(crate::dead_helpers::dead_launch_configs(self.src, &configs));
        }
        if !self.replaced.is_empty() {
            let gone: Vec<TextRange> = self
                .replaced
                .iter()
                .map(|k| k.span)
                .chain(dead.iter().map(|d| d.span))
                .collect();
            dead.extend(crate::dead_helpers::dead_cooperative_groups(
                self.src,
                &analysis.sites,
                &gone,
            ));
        }
        dead.into_iter().map(|d| (d, false)).collect()
    }

    /// Whether `at` lies inside a call's argument list.
    pub(crate) fn inside_a_call(&self, at: usize) -> bool {
        self.calls.iter().any(|c| c.start < at && at < c.end)
    }

    /// How many arguments a call with these argument ranges passes (`f()`
    /// has one empty range and passes none).
    pub(crate) fn passed_arguments(&self, args: &[TextRange]) -> usize {
        match args {
            [only] if self.text(*only).trim().is_empty() => 0,
            args => args.len(),
        }
    }

    pub(crate) fn text(&self, range: TextRange) -> &'a str {
        self.src
            .get(range.start..range.end)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("")
    }

    fn target(&self) -> Target {
        self.options.planned_target()
    }

    /// Whether this planning is for a dual-stack source (its own sites or
    /// one target's branch of them).
    fn in_dual_stack(&self) -> bool {
        self.for_dual_stack || matches!(self.options.mode, crate::options::Mode::Dual(_))
    }

    /// How launches here pass their arguments to an operator function.
    pub(crate) fn launch_args(&self) -> crate::kernel_stage::LaunchArgs {
        if self.in_dual_stack() {
            crate::kernel_stage::LaunchArgs::SharedWithCuda
        } else {
            crate::kernel_stage::LaunchArgs::Own
        }
    }

    fn profile(&self) -> &'static TargetProfile {
        self.options.planned_target().profile()
    }

    /// What the kernel stage makes of this file's kernels on the target.
    fn kernels(&self) -> crate::kernel_stage::Disposition {
        crate::kernel_stage::disposition(self.options, self.target())
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<Resolved<'a>> {
        self.rules
            .lookup_flavour(self.target(), self.options.flavour_for(self.target()), name)
    }

    pub(crate) fn diagnose(
        &mut self,
        site: &Site,
        code: Code,
        level: Level,
        message: String,
    ) -> &mut Diagnostic {
        self.out
            .diagnostics
            .push(Diagnostic::on_site(site, self.lines, code, level, message));
        let last = self.out.diagnostics.len() - 1;
        &mut self.out.diagnostics[last]
    }

    pub(crate) fn edit(
        &mut self,
        range: TextRange,
        replacement: String,
        code: Code,
        cuda_name: &str,
    ) {
        self.out.edits.push(Edit {
            range,
            replacement,
            code,
            cuda_name: cuda_name.to_owned(),
            kind: EditKind::Port,
        });
    }

    /// Applies pending template rewrites, innermost first: edits that fall
    /// inside an argument are applied to that argument's text and folded
    /// into the rewrite, so nothing inside a rewritten call is lost.
    pub(crate) fn compose_rewrites(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_by_key(|p| p.call.len());
        for rewrite in pending {
            let call = rewrite.call;
            let bytes = self.src.get(call.start..call.end).unwrap_or_default();
            let Ok(call_text) = std::str::from_utf8(bytes) else {
                // `text` would read the arguments as nothing, and the
                // rewrite would drop them (a fuzz finding:
                // `fuzz_regressions::a_call_with_bytes_that_are_not_utf8_is_kept`).
                self.template_failed(
                    &rewrite,
                    "its text holds bytes that are not UTF-8, which the rewrite would lose",
                );
                continue;
            };
            if crate::source_text::holds_directive_line(call_text) {
                self.directive_in_arguments(&rewrite);
                continue;
            }
            let ends_a_statement = rewrite
                .args
                .iter()
                .any(|a| crate::source_text::ends_a_statement(self.src, a.start, a.end));
            if ends_a_statement {
                // The names after the `;` read as a declaration, left for a
                // second run to port once the call was rebuilt (a fuzz
                // finding: `fuzz_regressions::a_call_whose_argument_ends_a_statement_is_kept`).
                self.template_failed(
                    &rewrite,
                    "an argument holds a `;` that ends a statement, which the rewrite would move",
                );
                continue;
            }
            if self.apply_in_place(&rewrite) {
                continue;
            }
            match self.apply_template(&rewrite) {
                Ok(text) => {
                    let call = rewrite.call;
                    self.out
                        .edits
                        .retain(|e| !(call.start <= e.range.start && e.range.end <= call.end));
                    self.edit(call, text, rewrite.code, &rewrite.cuda_name);
                }
                Err(error) => self.template_failed(&rewrite, &error.to_string()),
            }
        }
    }

    /// Applies the template to the edited arguments. An enum-mapped argument
    /// needs the CUDA enum value as written, so when the map rejects an
    /// argument that an inner edit renamed, the original text is used.
    fn apply_template(
        &self,
        rewrite: &PendingRewrite<'a>,
    ) -> Result<String, cuport_rules::TemplateError> {
        let mut args: Vec<String> = rewrite
            .args
            .iter()
            .map(|&range| self.argument_text(range))
            .collect();
        self.wrapped_argument_texts(&rewrite.cuda_name, &mut args);
        loop {
            let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let error = match rewrite.template.apply(&arg_refs) {
                Ok(text) => return Ok(text),
                Err(error) => error,
            };
            let cuport_rules::TemplateError::NotAnEnumLiteral { arg, .. } = &error else {
                return Err(error);
            };
            let Some(index) = args
                .iter()
                .zip(&rewrite.args)
                .position(|(edited, &range)| edited == arg && self.text(range) != edited.as_str())
            else {
                return Err(error);
            };
            args[index] = self.text(rewrite.args[index]).to_owned();
        }
    }

    /// The argument's source text with the edits inside it applied.
    pub(crate) fn argument_text(&self, range: TextRange) -> String {
        let mut inner: Vec<&Edit> = self
            .out
            .edits
            .iter()
            .filter(|e| range.start <= e.range.start && e.range.end <= range.end)
            .collect();
        inner.sort_by_key(|e| e.range.start);
        let mut text = String::new();
        let mut cursor = range.start;
        for edit in inner {
            if edit.range.start < cursor {
                continue;
            }
            text.push_str(self.text(TextRange::new(cursor, edit.range.start)));
            text.push_str(&edit.replacement);
            cursor = edit.range.end;
        }
        text.push_str(self.text(TextRange::new(cursor, range.end)));
        text
    }

    /// A template rebuilds the call from its arguments, which may be
    /// reordered, dropped or given a default: with a directive line among
    /// them the call is left as written.
    fn directive_in_arguments(&mut self, rewrite: &PendingRewrite<'_>) {
        let error = format!(
            "`{}` has preprocessor directives among its arguments, and its rewrite (`{}`) rebuilds the argument list, which would move them; the call is left as written",
            rewrite.cuda_name,
            rewrite.template.source()
        );
        self.call_diagnostic(rewrite, codes::DIRECTIVE_IN_ARGUMENTS, error);
    }

    fn template_failed(&mut self, rewrite: &PendingRewrite<'_>, error: &str) {
        let message = format!(
            "`{}` could not be rewritten automatically: {error}",
            rewrite.cuda_name
        );
        self.call_diagnostic(rewrite, codes::TEMPLATE_FAILED, message);
    }

    fn call_diagnostic(&mut self, rewrite: &PendingRewrite<'_>, code: Code, message: String) {
        let at = self.lines.line_col(rewrite.call.start);
        self.out.diagnostics.push(Diagnostic {
            code,
            level: Level::Manual,
            effort: Some(Effort::Low),
            message,
            line: at.line,
            column: at.column,
            range: rewrite.call,
            cuda_name: rewrite.cuda_name.clone(),
            library: Library::Runtime,
            kind: SiteKind::RuntimeApi,
            suggestion: Some(format!(
                "rewrite by hand following `{}`",
                rewrite.template.source()
            )),
            reference: None,
        });
    }
}

/// A planner of one file's sites: one-way ([`Planner`] itself) or
/// dual-stack (which composes one-way planning per target).
pub(crate) trait PlanSite {
    fn plan_site(&mut self, site: &Site);
    fn diagnostics(&self) -> &[Diagnostic];
}

/// Plans every site of the file that no `cuport:` marker suppresses and
/// counts each in the statistics by the diagnostics it raised.
pub(crate) fn plan_sites(planner: &mut impl PlanSite, input: &FileInput<'_>) -> FileStats {
    let mut stats = FileStats::default();
    for site in &input.analysis.sites {
        // A call that reaches into a suppressed line is suppressed whole: its
        // rewrite would replace text the marker protects (a fuzzing finding:
        // `fuzz_regressions::a_call_reaching_into_a_suppressed_block_is_left`).
        let span = site.call.unwrap_or(site.range);
        let (first, last) = (
            input.lines.line_of(span.start.min(site.range.start)),
            input.lines.line_of(span.end.max(site.range.end)),
        );
        if (first..=last).any(|line| input.suppressions.covers(line)) {
            stats.suppressed += 1;
            continue;
        }
        let before = planner.diagnostics().len();
        planner.plan_site(site);
        stats.count_site(site.library, site.kind, &planner.diagnostics()[before..]);
    }
    stats
}

/// A PyTorch path that does not say CUDA (`torch.profiler.profile`), which
/// some target's tables port: where a target has no rule for it, it is
/// the same API there, with nothing to report.
pub(crate) fn same_api_without_a_rule(site: &Site) -> bool {
    site.kind == SiteKind::FrameworkCall && !cuport_analyze::names_cuda(&site.name)
}

/// The edits that respell a launch written `<< <` ... `>> >` as `<<<` ...
/// `>>>` (none for a launch spelled the usual way).
pub(crate) fn chevron_respellings(site: &Site) -> Vec<(TextRange, &'static str)> {
    match site.spaced_chevrons {
        Some([open, close]) => vec![(open, "<<<"), (close, ">>>")],
        None => Vec::new(),
    }
}
