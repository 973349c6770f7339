//! Builds a [`RuleSet`] from rule-file sources: parse, declare the targets'
//! functions, types and enum maps, then add the mappings.
use std::sync::Arc;

use cuport_model::Target;
use toml::Spanned;

use crate::diag::{DiagKind, Diagnostic, Location};
use crate::model::{NameKind, Status};
use crate::raw::{Meta, RawEntry, RawEnumMap, RawFunction, RawPattern, RawUnsupported};
use cuport_model::Code;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::ruleset::{
    ExplicitTarget, Glob, Hit, Layer, Pattern, Rule, RuleSet, Signature, Slot, TargetTable,
};
use crate::source::Parsed;
use crate::template::EnumMap;

#[derive(Default)]
pub(crate) struct Builder {
    pub(crate) set: RuleSet,
    pub(crate) diags: Vec<Diagnostic>,
    /// Each `target-version` text read once: thousands of rules share a
    /// few dozen.
    versions: FxHashMap<String, Option<cuport_model::MinimumVersion>>,
}

impl Builder {
    pub(crate) fn error(&mut self, location: Location, kind: DiagKind, message: String) {
        self.diags.push(Diagnostic {
            location,
            kind,
            message,
        });
    }

    /// Records the outcome of [`parse`]: the parsed file, or its error.
    pub(crate) fn keep_parsed(&mut self, outcome: Result<Parsed, Diagnostic>) -> Option<Parsed> {
        match outcome {
            Ok(parsed) => Some(parsed),
            Err(diagnostic) => {
                self.diags.push(diagnostic);
                None
            }
        }
    }

    /// First pass: target declarations and enum maps, so that entries in any
    /// file can use what any other file declares.
    pub(crate) fn declare(&mut self, p: &Parsed) {
        for cuda_enum in &p.file.cuda_enum {
            let name = cuda_enum.name.get_ref().clone();
            let mut enumerators = Vec::new();
            for value in &cuda_enum.values {
                let (enumerator, number) = match value.split_once('=') {
                    Some((e, n)) => (e.trim(), Some(n.trim())),
                    None => (value.trim(), None),
                };
                if let Some(number) = number {
                    let number = number.to_owned();
                    self.set
                        .cuda_enum_values
                        .insert(enumerator.to_owned(), number);
                }
                enumerators.push(enumerator.to_owned());
            }
            self.set.cuda_enums.insert(name, enumerators);
        }
        let Some(target) = p.target() else {
            self.require_target(p);
            return;
        };
        self.check_flavour(p, target);
        for f in &p.file.function {
            let sig = signature(p, f);
            let table = self.set.tables.entry(target).or_default();
            if let Some(header) = &f.header {
                table.declared_in.insert(sig.name.clone(), header.clone());
            }
            if let Some(old) = table.functions.insert(sig.name.clone(), sig) {
                self.redeclared(p, &f.name, &old.origin);
            }
        }
        for h in &p.file.helper {
            let sig = signature(p, h);
            let table = self.set.tables.entry(target).or_default();
            if let Some(old) = table.helpers.insert(sig.name.clone(), sig) {
                self.redeclared(p, &h.name, &old.origin);
            }
        }
        let table = self.set.tables.entry(target).or_default();
        for t in &p.file.types {
            table.types.push((t.name.get_ref().clone(), t.decl.clone()));
        }
        for e in &p.file.enums {
            table
                .enums
                .insert(e.name.get_ref().clone(), e.values.clone());
        }
        let headers = p.file.types.iter().map(|t| (&t.name, &t.header));
        let headers = headers.chain(p.file.enums.iter().map(|e| (&e.name, &e.header)));
        for (name, header) in headers {
            if let Some(header) = header {
                table
                    .declared_in
                    .insert(name.get_ref().clone(), header.clone());
            }
        }
        for m in &p.file.enum_map {
            self.declare_enum_map(p, target, m);
        }
        for a in &p.file.argument {
            self.declare_argument(p, target, a);
        }
    }

    fn declare_argument(&mut self, p: &Parsed, target: Target, a: &crate::raw::RawArgument) {
        let not_needed_from = match &a.not_needed_from {
            Some(text) => match cuport_model::MinimumVersion::from_text(text) {
                Some(minimum) => Some(minimum),
                None => {
                    let msg = format!(
                        "`not-needed-from = \"{text}\"` is not `PRODUCT >= VERSION` (`HIP >= 6.3.0`)"
                    );
                    self.error(p.at(&a.wrap), DiagKind::BadTemplate, msg);
                    return;
                }
            },
            None => None,
        };
        if a.position == 0 {
            let msg = "`position` counts from 1 (the first argument)".to_owned();
            self.error(p.at(&a.cuda), DiagKind::BadTemplate, msg);
            return;
        }
        let rule = crate::arguments::ArgumentRule::new(
            a.cuda.get_ref().clone(),
            a.position,
            a.wrap.get_ref(),
            &a.already,
            a.when,
            a.declared.as_deref(),
            not_needed_from,
            a.note.clone(),
            a.reference.clone(),
        );
        let Ok(rule) = rule else {
            let msg = format!(
                "`wrap = \"{}\"` needs exactly one `$` where the argument goes",
                a.wrap.get_ref()
            );
            self.error(p.at(&a.wrap), DiagKind::BadTemplate, msg);
            return;
        };
        let table = self.set.tables.entry(target).or_default();
        let rules = table.arguments.entry(rule.cuda.clone()).or_default();
        if rules.iter().any(|r| r.position == rule.position) {
            let msg = format!(
                "argument {} of `{}` has two [[argument]] rules; keep one",
                a.position,
                a.cuda.get_ref()
            );
            self.error(p.at(&a.cuda), DiagKind::Duplicate, msg);
            return;
        }
        rules.push(rule);
    }

    fn require_target(&mut self, p: &Parsed) {
        let f = &p.file;
        let empty = f.entry.is_empty()
            && f.pattern.is_empty()
            && f.unsupported.is_empty()
            && f.enum_map.is_empty()
            && f.function.is_empty()
            && f.helper.is_empty()
            && f.argument.is_empty();
        let needs = !empty;
        if needs {
            let msg = "[meta] has no `target`, but the file has rules or declarations; add `target = \"hip\"` (or ascend, musa, mlu)";
            self.error(p.at_offset(0), DiagKind::MissingField, msg.to_owned());
        }
    }

    fn check_flavour(&mut self, p: &Parsed, target: Target) {
        let Some(flavour) = &p.file.meta.flavour else {
            return;
        };
        if !flavour.get_ref().applies_to(target) {
            let owners: Vec<&str> = Target::ALL
                .iter()
                .filter(|t| flavour.get_ref().applies_to(**t))
                .map(|t| t.id())
                .collect();
            let msg = format!(
                "flavour `{}` exists only for target {}; remove `flavour` or set `target` to one of them",
                flavour.get_ref(),
                owners.join(", ")
            );
            self.error(p.at(flavour), DiagKind::Conflict, msg);
        }
    }

    fn redeclared(&mut self, p: &Parsed, name: &Spanned<String>, first: &Location) {
        let msg = format!(
            "`{}` is declared twice (first at {first}); keep one declaration",
            name.get_ref()
        );
        self.error(p.at(name), DiagKind::Duplicate, msg);
    }

    fn declare_enum_map(&mut self, p: &Parsed, target: Target, m: &RawEnumMap) {
        let map = Arc::new(EnumMap {
            name: m.name.get_ref().clone(),
            cuda_enum: m.cuda_enum.get_ref().clone(),
            values: m.map.get_ref().clone().into_iter().collect(),
            fallback: m.fallback.clone(),
        });
        let table = self.set.tables.entry(target).or_default();
        if table.enum_maps.insert(map.name.clone(), map).is_some() {
            let msg = format!(
                "enum map `{}` is defined twice for {target}; rename one",
                m.name.get_ref()
            );
            self.error(p.at(&m.name), DiagKind::Duplicate, msg);
        }
    }

    /// Second pass: entries, unsupported lists and patterns.
    pub(crate) fn add_rules(&mut self, p: &Parsed) {
        let Some(target) = p.target() else { return };
        for entry in &p.file.entry {
            self.add_entry(p, target, entry);
        }
        for group in &p.file.unsupported {
            self.add_unsupported(p, target, group);
        }
        for pattern in &p.file.pattern {
            self.add_pattern(p, target, pattern);
        }
    }

    /// Third pass: enum-map values become enum-value entries unless an
    /// explicit entry already covers them.
    pub(crate) fn add_enum_entries(&mut self, p: &Parsed) {
        let Some(target) = p.target() else { return };
        for m in p.file.enum_map.iter().filter(|m| m.entries) {
            let mut rule = self.base_rule(p, target, m.code.as_ref(), m.library, p.at(&m.name));
            rule.status = Status::Renamed;
            rule.kind = NameKind::EnumValue;
            rule.note.clone_from(&m.note);
            rule.reference = m.reference.clone().or(rule.reference);
            let idx = self.push_rule(rule);
            for (cuda, to) in m.map.get_ref() {
                self.insert_enum_value(p, target, cuda, to, idx);
            }
        }
    }

    fn insert_enum_value(&mut self, p: &Parsed, target: Target, cuda: &str, to: &str, rule: usize) {
        let layer = target_layer(&mut self.set.tables, target, p.flavour());
        match layer.explicit.get(cuda) {
            Some(e)
                if e.to.as_deref().is_some_and(|t| t != to) && e.slot.priority == p.priority =>
            {
                let first = self.set.rules[e.slot.rule].origin.clone();
                let msg = format!("enum map maps `{cuda}` to `{to}`, but the entry at {first} maps it to `{}`; make them agree", e.to.as_deref().unwrap_or_default());
                let at = self.set.rules[rule].origin.clone();
                self.error(at, DiagKind::Conflict, msg);
            }
            Some(_) => {}
            None => {
                let slot = Slot {
                    rule,
                    priority: p.priority,
                };
                layer.explicit.insert(
                    cuda.to_owned(),
                    ExplicitTarget {
                        slot,
                        to: Some(to.to_owned()),
                    },
                );
            }
        }
    }

    pub(crate) fn push_rule(&mut self, mut rule: Rule) -> usize {
        rule.minimum_version = rule.target_version.as_deref().and_then(|text| {
            if let Some(known) = self.versions.get(text) {
                return known.clone();
            }
            let version = cuport_model::MinimumVersion::from_text(text);
            self.versions.insert(text.to_owned(), version.clone());
            version
        });
        self.set.rules.push(rule);
        self.set.rules.len() - 1
    }

    /// A rule with the file's defaults and a checked code.
    pub(crate) fn base_rule(
        &mut self,
        p: &Parsed,
        target: Target,
        code: Option<&Spanned<String>>,
        library: Option<cuport_model::Library>,
        origin: Location,
    ) -> Rule {
        let meta: &Meta = &p.file.meta;
        let library = library.or(meta.library);
        let code = self.rule_code(p, target, code.or(meta.code.as_ref()), library, &origin);
        Rule {
            code,
            status: Status::Renamed,
            kind: meta.kind.unwrap_or(NameKind::Function),
            library,
            note: None,
            reference: meta.reference.clone(),
            effort: None,
            headers: meta.headers.clone(),
            imports: meta.imports.clone(),
            libraries: meta.libraries.clone(),
            target_version: meta.target_version.clone(),
            cuda_version: None,
            unconfirmed: false,
            flavour: p.flavour(),
            template: None,
            older_sdk: None,
            minimum_version: None,
            cuda_params: None,
            helpers: Vec::new(),
            overloads: Vec::new(),
            origin,
            priority: p.priority,
            source: p.source.clone(),
        }
    }

    fn rule_code(
        &mut self,
        p: &Parsed,
        target: Target,
        code: Option<&Spanned<String>>,
        library: Option<cuport_model::Library>,
        origin: &Location,
    ) -> Option<Code> {
        let Some(text) = code else {
            let msg =
                "no rule code: give the entry `code = \"CPnnnn\"` or the file a default in [meta]"
                    .to_owned();
            self.error(origin.clone(), DiagKind::MissingField, msg);
            return None;
        };
        let Some(parsed) = Code::parse(text.get_ref()) else {
            let msg = format!(
                "`{}` is not a rule code; codes are `CP` and four digits",
                text.get_ref()
            );
            self.error(p.at(text), DiagKind::BadCode, msg);
            return None;
        };
        let range = match (p.builtin, library) {
            (false, _) => Code::USER_RANGE,
            (true, Some(lib)) => Code::range_for(target, lib),
            (true, None) => {
                let base = *Code::range_for(target, cuport_model::Library::Runtime).start();
                base..=base + 999
            }
        };
        if !parsed.is_in(&range) {
            let owner = if p.builtin {
                format!(
                    "{target}{}",
                    library.map_or(String::new(), |l| format!(" / {}", l.id()))
                )
            } else {
                "user rule files".to_owned()
            };
            let msg = format!("{parsed} is outside CP{:04}–CP{:04}, the range for {owner}; see mappings/README.md", range.start(), range.end());
            self.error(p.at(text), DiagKind::BadCode, msg);
        }
        Some(parsed)
    }

    fn add_entry(&mut self, p: &Parsed, target: Target, e: &RawEntry) {
        let origin = p.at(&e.cuda);
        let mut rule = self.base_rule(p, target, e.code.as_ref(), e.library, origin);
        rule.status = e.status;
        rule.kind = e.kind.unwrap_or(rule.kind);
        rule.note.clone_from(&e.note);
        rule.reference = e.reference.clone().or(rule.reference);
        rule.effort = e.effort;
        override_list(&mut rule.headers, &e.headers);
        override_list(&mut rule.imports, &e.imports);
        override_list(&mut rule.libraries, &e.libraries);
        rule.target_version = e.target_version.clone().or(rule.target_version);
        rule.cuda_version.clone_from(&e.cuda_version);
        rule.unconfirmed = e.unconfirmed;
        rule.cuda_params.clone_from(&e.cuda_params);
        rule.overloads = e
            .overloads
            .iter()
            .map(|o| (o.arguments, o.to.clone()))
            .collect();
        if let Some(template) = &e.template {
            self.compile_template(p, target, e, template, &mut rule);
        }
        if let Some(older) = &e.older_sdk {
            self.compile_older_sdk(p, target, e, older, &mut rule);
        }
        let to = self.entry_target(p, e, &rule);
        self.check_status(p, e, &rule);
        let idx = self.push_rule(rule);
        self.insert_explicit(p, target, &e.cuda, idx, to);
    }

    fn entry_target(&mut self, p: &Parsed, e: &RawEntry, rule: &Rule) -> Option<String> {
        let callee = rule
            .template
            .as_ref()
            .and_then(|t| t.callee())
            .map(str::to_owned);
        match e.status {
            Status::Exact => {
                if e.to.as_ref().is_some_and(|to| to != e.cuda.get_ref()) {
                    let msg = "`exact` means the target keeps the CUDA name; use `renamed` for a different name".to_owned();
                    self.error(p.at(&e.cuda), DiagKind::Conflict, msg);
                }
                Some(e.cuda.get_ref().clone())
            }
            Status::Unsupported => None,
            _ => e.to.clone().or(callee),
        }
    }

    fn insert_explicit(
        &mut self,
        p: &Parsed,
        target: Target,
        cuda: &Spanned<String>,
        rule: usize,
        to: Option<String>,
    ) {
        let slot = Slot {
            rule,
            priority: p.priority,
        };
        let layer = target_layer(&mut self.set.tables, target, p.flavour());
        let name = cuda.get_ref();
        if let Some(old) = layer.explicit.get(name) {
            if old.slot.priority == p.priority {
                let first = self.set.rules[old.slot.rule].origin.clone();
                let msg = format!("`{name}` is mapped for {target} twice (first at {first}); keep one entry, or put the override in a file with a higher priority");
                self.error(p.at(cuda), DiagKind::Duplicate, msg);
                return;
            }
            if old.slot.priority > p.priority {
                return;
            }
        }
        layer
            .explicit
            .insert(name.clone(), ExplicitTarget { slot, to });
    }

    fn add_unsupported(&mut self, p: &Parsed, target: Target, g: &RawUnsupported) {
        let Some(first) = g.names.first() else { return };
        let mut rule = self.base_rule(p, target, g.code.as_ref(), g.library, p.at(first));
        rule.status = Status::Unsupported;
        rule.kind = g.kind.unwrap_or(rule.kind);
        rule.note = Some(g.note.clone());
        rule.reference = g.reference.clone().or(rule.reference);
        rule.headers.clear();
        rule.libraries.clear();
        rule.imports.clear();
        let idx = self.push_rule(rule);
        for name in &g.names {
            self.insert_explicit(p, target, name, idx, None);
        }
    }

    fn add_pattern(&mut self, p: &Parsed, target: Target, raw: &RawPattern) {
        let (Some(from), Some(to)) = (Glob::parse(raw.from.get_ref()), Glob::parse(&raw.to)) else {
            let msg = format!(
                "pattern `{}` → `{}`: each side needs exactly one `*`",
                raw.from.get_ref(),
                raw.to
            );
            self.error(p.at(&raw.from), DiagKind::BadPattern, msg);
            return;
        };
        let mut rule = self.base_rule(p, target, Some(&raw.code), raw.library, p.at(&raw.from));
        rule.status = raw.status.unwrap_or(Status::Renamed);
        rule.kind = raw.kind.unwrap_or(rule.kind);
        rule.note.clone_from(&raw.note);
        rule.reference = raw.reference.clone().or(rule.reference);
        rule.target_version = raw.target_version.clone().or(rule.target_version);
        override_list(&mut rule.headers, &raw.headers);
        override_list(&mut rule.imports, &raw.imports);
        override_list(&mut rule.libraries, &raw.libraries);
        if !rule.status.is_mechanical() {
            let msg = "a pattern only renames; its status must be `renamed` or `exact`".to_owned();
            self.error(p.at(&raw.from), DiagKind::BadPattern, msg);
        }
        let exists = self.pattern_names(p, &to, &raw.exists);
        let idx = self.push_rule(rule);
        let exceptions: FxHashSet<String> =
            raw.exceptions.iter().map(|e| e.get_ref().clone()).collect();
        let layer = target_layer(&mut self.set.tables, target, p.flavour());
        layer.patterns.push(Pattern {
            rule: idx,
            from,
            to,
            exists,
            exceptions,
            priority: p.priority,
        });
    }

    fn pattern_names(
        &mut self,
        p: &Parsed,
        to: &Glob,
        names: &[Spanned<String>],
    ) -> FxHashSet<String> {
        let mut exists =
            FxHashSet::with_capacity_and_hasher(names.len(), rustc_hash::FxBuildHasher);
        for name in names {
            if to.capture(name.get_ref()).is_none() {
                let msg = format!(
                    "`{}` does not match the pattern's `to` glob `{}*{}`",
                    name.get_ref(),
                    to.prefix,
                    to.suffix
                );
                self.error(p.at(name), DiagKind::BadPattern, msg);
            } else if !exists.insert(name.get_ref().clone()) {
                let msg = format!("`{}` is listed twice in `exists`", name.get_ref());
                self.error(p.at(name), DiagKind::Duplicate, msg);
            }
        }
        exists
    }

    /// Sorts patterns and resolves every name a lookup can hit, so that
    /// lookups need no pattern scan.
    pub(crate) fn finish(&mut self) {
        // Layers are independent and resolving one is a tenth of the
        // start-up: each gets a scoped thread (not rayon's pool, for the
        // reason `parse_all` gives).
        let layers = self
            .set
            .tables
            .values_mut()
            .flat_map(|t| t.layers.values_mut());
        std::thread::scope(|scope| {
            for layer in layers {
                scope.spawn(|| finish_layer(layer));
            }
        });
    }
}

fn finish_layer(layer: &mut Layer) {
    layer
        .patterns
        .sort_by_key(|pat| std::cmp::Reverse(pat.priority));
    layer.resolved = resolve_layer(layer);
}

/// The same answers as [`Layer::scan`] for every name, computed from the
/// patterns' `exists` lists instead of trying each pattern on each name: a
/// pattern maps the CUDA name behind each listed target name unless an
/// earlier pattern took it or an explicit entry of at least its priority
/// exists; explicit entries cover the rest.
fn resolve_layer(layer: &Layer) -> FxHashMap<String, Hit> {
    let listed: usize = layer.patterns.iter().map(|p| p.exists.len()).sum();
    let mut resolved: FxHashMap<String, Hit> =
        FxHashMap::with_capacity_and_hasher(listed + layer.explicit.len(), Default::default());
    for pattern in &layer.patterns {
        for target_name in &pattern.exists {
            let Some(cuda) = pattern.invert(target_name) else {
                continue;
            };
            if pattern.exceptions.contains(&cuda) || resolved.contains_key(&cuda) {
                continue;
            }
            let explicit_wins = layer
                .explicit
                .get(&cuda)
                .is_some_and(|e| e.slot.priority >= pattern.priority);
            if !explicit_wins {
                let hit = Hit {
                    rule: pattern.rule,
                    to: Some(target_name.clone()),
                    via_pattern: true,
                };
                resolved.insert(cuda, hit);
            }
        }
    }
    for (cuda, e) in &layer.explicit {
        resolved.entry(cuda.clone()).or_insert_with(|| Hit {
            rule: e.slot.rule,
            to: e.to.clone(),
            via_pattern: false,
        });
    }
    resolved
}

fn override_list(list: &mut Vec<String>, own: &Option<Vec<String>>) {
    if let Some(own) = own {
        list.clone_from(own);
    }
}

fn signature(p: &Parsed, f: &RawFunction) -> Signature {
    Signature {
        name: f.name.get_ref().clone(),
        returns: f.returns.clone(),
        params: f.params.clone(),
        note: f.note.clone(),
        origin: p.at(&f.name),
    }
}

/// The layer of `target`'s table that a file of `flavour` adds to (a free
/// function, so the rules stay readable while the layer is borrowed).
fn target_layer(
    tables: &mut std::collections::BTreeMap<Target, TargetTable>,
    target: Target,
    flavour: crate::model::Flavour,
) -> &mut Layer {
    tables.entry(target).or_default().layer_mut(flavour)
}
