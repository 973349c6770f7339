//! Per-entry checks run while an entry is added: required fields per status
//! and argument templates (syntax, enum maps, `$n` range, arity).
use cuport_model::{Library, Target};
use toml::Spanned;

use crate::builder::Builder;
use crate::diag::DiagKind;
use crate::model::{NameKind, Status};
use crate::raw::{RawEntry, RawOlderSdk};
use crate::ruleset::Rule;
use crate::source::Parsed;
use crate::template::Template;

impl Builder {
    pub(crate) fn check_status(&mut self, p: &Parsed, e: &RawEntry, rule: &Rule) {
        let name = e.cuda.get_ref();
        let missing = |field: &str, why: &str| {
            let msg = format!("`{name}` is `{}` but has no `{field}`: {why}", e.status);
            (DiagKind::MissingField, msg)
        };
        let mut problems = Vec::new();
        match e.status {
            Status::Renamed if e.to.is_none() => {
                problems.push(missing("to", "name the target identifier"))
            }
            Status::Rewrite if e.template.is_none() => {
                problems.push(missing(
                    "template",
                    "give the argument template, e.g. \"f($1, $2)\"",
                ));
            }
            Status::Approximate if e.note.is_none() => {
                problems.push(missing("note", "say what differs"))
            }
            Status::Manual if e.note.is_none() => {
                problems.push(missing("note", "give porting guidance"))
            }
            Status::Manual if e.effort.is_none() => {
                problems.push(missing("effort", "low, medium or high"))
            }
            Status::Unsupported if e.note.is_none() => {
                problems.push(missing("note", "say what to do instead"))
            }
            _ => {}
        }
        if !e.status.is_mechanical() && rule.reference.is_none() {
            problems.push(missing("reference", "cite the vendor doc page or header"));
        }
        if e.status == Status::Unsupported && e.to.is_some() {
            let msg = format!(
                "`{name}` is `unsupported` but names a target `to`; drop `to` or change the status"
            );
            problems.push((DiagKind::Conflict, msg));
        }
        if let Some(to) = &e.to {
            if let Some(why) = name_shape_problem(rule.kind, rule.library, to) {
                let msg = format!("`{name}`: field `to` = {to:?} is not {why}; cuport writes `to` into the code as it is");
                problems.push((DiagKind::BadName, msg));
            }
        }
        if e.unconfirmed && e.status.is_mechanical() {
            let msg = format!("`{name}` is marked unconfirmed, so it cannot be `{}`; use approximate or manual until the fact is checked", e.status);
            problems.push((DiagKind::Unconfirmed, msg));
        }
        // Located only when there is a problem: every built-in entry is
        // checked at start-up, and locating one copies the file's name.
        for (kind, message) in problems {
            self.error(p.at(&e.cuda), kind, message);
        }
    }

    pub(crate) fn compile_template(
        &mut self,
        p: &Parsed,
        target: Target,
        e: &RawEntry,
        source: &Spanned<String>,
        rule: &mut Rule,
    ) {
        if e.status == Status::Renamed || e.status == Status::Exact {
            let msg = format!(
                "`{}` has a template but status `{}`; use `rewrite`",
                e.cuda.get_ref(),
                e.status
            );
            self.error(p.at(source), DiagKind::BadTemplate, msg);
        }
        let Some(template) = self.linked_template(p, target, e, source, "template") else {
            return;
        };
        self.check_arity(p, target, source, &template);
        rule.helpers = self.helpers_used(target, &template);
        rule.template = Some(template);
    }

    /// `older-sdk`: a template like `template`, for releases older than the
    /// entry's `target-version`, which must state a minimum.
    pub(crate) fn compile_older_sdk(
        &mut self,
        p: &Parsed,
        target: Target,
        e: &RawEntry,
        older: &RawOlderSdk,
        rule: &mut Rule,
    ) {
        let at = p.at(&older.template);
        let states_minimum = rule
            .target_version
            .as_deref()
            .and_then(cuport_model::MinimumVersion::from_text)
            .is_some();
        if !states_minimum {
            let msg = format!("`{}` has `older-sdk` but no `target-version` of the form `PRODUCT >= VERSION` saying which releases are older", e.cuda.get_ref());
            return self.error(at, DiagKind::MissingField, msg);
        }
        if let Some(template) =
            self.linked_template(p, target, e, &older.template, "older-sdk.template")
        {
            rule.older_sdk = Some(crate::ruleset::OlderSdk {
                template,
                note: older.note.clone(),
                headers: older.headers.clone(),
            });
        }
    }

    /// `source` (the entry's `field`) parsed, linked to the target's enum
    /// maps and checked to be one expression whose arguments the CUDA
    /// function has; `None` after reporting why not.
    fn linked_template(
        &mut self,
        p: &Parsed,
        target: Target,
        e: &RawEntry,
        source: &Spanned<String>,
        field: &str,
    ) -> Option<Template> {
        let at = p.at(source);
        let maps = self.set.tables.entry(target).or_default().enum_maps.clone();
        let parsed =
            Template::parse(source.get_ref()).and_then(|t| t.link(|n| maps.get(n).cloned()));
        let template = match parsed {
            Ok(t) => t,
            Err(err) => {
                self.error(at, DiagKind::BadTemplate, err.to_string());
                return None;
            }
        };
        if let Some(why) = expression_problem(source.get_ref()) {
            let msg = format!(
                "field `{field}` {:?} {why}; a template replaces one call with one expression",
                source.get_ref()
            );
            self.error(at, DiagKind::BadTemplate, msg);
            return None;
        }
        self.check_arg_range(p, e, source, &template);
        Some(template)
    }

    fn check_arg_range(
        &mut self,
        p: &Parsed,
        e: &RawEntry,
        source: &Spanned<String>,
        t: &Template,
    ) {
        let Some(params) = &e.cuda_params else {
            if t.max_arg() > 0 {
                let msg = format!("the template of `{}` uses ${} but the entry has no `cuda-params`; list the CUDA parameter names", e.cuda.get_ref(), t.max_arg());
                self.error(p.at(source), DiagKind::MissingField, msg);
            }
            return;
        };
        if t.max_arg() > params.len() {
            let msg = format!(
                "template uses ${} but `{}` takes {} argument(s) ({})",
                t.max_arg(),
                e.cuda.get_ref(),
                params.len(),
                params.join(", ")
            );
            self.error(p.at(source), DiagKind::ArgOutOfRange, msg);
        }
    }

    fn check_arity(&mut self, p: &Parsed, target: Target, source: &Spanned<String>, t: &Template) {
        let (Some(callee), Some(arity)) = (t.callee(), t.arity()) else {
            return;
        };
        let Some(table) = self.set.tables.get(&target) else {
            return;
        };
        let Some(sig) = table
            .functions
            .get(callee)
            .or_else(|| table.helpers.get(callee))
        else {
            return;
        };
        if sig.params.iter().any(|p| p.trim() == "...") {
            return;
        }
        if sig.params.len() != arity {
            let msg = format!("template calls `{callee}` with {arity} argument(s), but its signature (at {}) has {}", sig.origin, sig.params.len());
            self.error(p.at(source), DiagKind::TemplateArity, msg);
        }
    }

    fn helpers_used(&self, target: Target, t: &Template) -> Vec<String> {
        let Some(table) = self.set.tables.get(&target) else {
            return Vec::new();
        };
        let mut helpers: Vec<String> = t
            .callee()
            .filter(|c| table.helpers.contains_key(*c))
            .map(str::to_owned)
            .into_iter()
            .collect();
        for map in t.enum_maps() {
            let fallback = table.enum_maps.get(map).and_then(|m| m.fallback.clone());
            // A fallback may also be a cast such as `(int)`; only helpers count.
            helpers.extend(fallback.filter(|f| table.helpers.contains_key(f)));
        }
        helpers.sort();
        helpers.dedup();
        helpers
    }
}

/// Why `to` cannot be written where a name of `kind` goes, if it cannot: a
/// rule file generates code, so a `to` must be a name, never a statement.
fn name_shape_problem(kind: NameKind, library: Option<Library>, to: &str) -> Option<&'static str> {
    let ident = |s: &str| {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let ok = match kind {
        NameKind::Header => {
            !to.is_empty()
                && to
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_./+-".contains(c))
        }
        NameKind::Python => to.split('.').all(ident),
        NameKind::DeviceString => {
            let (device, index) = to.split_once(':').unwrap_or((to, "0"));
            ident(device) && index.chars().all(|c| c.is_ascii_digit())
        }
        _ if library == Some(Library::Build) => is_cmake_word(to),
        _ => is_c_name(to, &ident),
    };
    (!ok).then_some(match kind {
        NameKind::Header => "a header path (letters, digits, `_./+-`)",
        NameKind::Python => "a dotted Python name",
        NameKind::DeviceString => "a device name (`npu`, `npu:0`)",
        _ if library == Some(Library::Build) => "a CMake word (name, `A::B` target or `cmd(ARGS)`)",
        _ => "a C/C++ identifier or qualified name (`a::b`)",
    })
}

/// Why a template's text is not one expression, if it is not: statements
/// (`;`), comments, line breaks or unbalanced brackets would change code
/// around the call it replaces. (An empty template deletes an include.)
fn expression_problem(template: &str) -> Option<&'static str> {
    if template.contains(';') || template.contains("//") || template.contains("/*") {
        return Some("contains `;` or a comment");
    }
    if template.contains(['\n', '\r']) {
        return Some("spans several lines");
    }
    let mut depth: Vec<char> = Vec::new();
    let mut in_string = false;
    for c in template.chars() {
        match c {
            '"' => in_string = !in_string,
            _ if in_string => {}
            '(' | '[' | '{' => depth.push(c),
            ')' | ']' | '}' => {
                let open = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if depth.pop() != Some(open) {
                    return Some("has unbalanced brackets");
                }
            }
            _ => {}
        }
    }
    (!depth.is_empty() || in_string).then_some("has unbalanced brackets or quotes")
}

/// A C/C++ name as a rename may write it: `a::b`, with template arguments
/// of names and numbers (`engine<false>`) and trailing `*` for a type.
fn is_c_name(to: &str, ident: &dyn Fn(&str) -> bool) -> bool {
    let to = to.trim_end_matches(['*', ' ']);
    let (name, args) = match to.split_once('<') {
        Some((name, rest)) => (name, rest.strip_suffix('>')),
        None => (to, Some("")),
    };
    let args_ok = args.is_some_and(|a| {
        a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_:, <>*".contains(c))
    });
    args_ok
        && name
            .strip_prefix("::")
            .unwrap_or(name)
            .split("::")
            .all(ident)
}

/// A CMake word a build rule may produce: a name, an imported target
/// (`hip::host`), a variable, or a one-line command call without `;`.
fn is_cmake_word(to: &str) -> bool {
    !to.is_empty()
        && !to.contains(['\n', ';', '#', '"'])
        && to.chars().filter(|&c| c == '(').count() == to.chars().filter(|&c| c == ')').count()
}
