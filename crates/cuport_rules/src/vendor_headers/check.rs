//! Every row of a target against each release's headers: the names a rule
//! makes the port write exist in every release the rule applies to, and the
//! declared signatures and enumerator values are the headers' own.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use cuport_model::{MinimumVersion, SdkVersion, Target, VendorHeaderFacts};

use super::scan::normalise_type;
use super::{vendor_facts, HeaderError, ReleaseHeaders, VendorHeaders};
use crate::diag::Location;
use crate::model::{Flavour, NameKind};
use crate::ruleset::{RuleSet, Signature};

/// A row the headers contradict.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct HeaderProblem {
    /// The row (absent for `[[enum]]` and `[[type]]` rows, which keep none).
    pub origin: Option<Location>,
    pub name: String,
    pub message: String,
}

/// What one release's headers said about the rows.
#[derive(Debug, Clone)]
pub struct ReleaseCheck {
    pub release: SdkVersion,
    pub families: Vec<String>,
    pub header_files: usize,
    /// Rules that apply to the release and write a name of a family its
    /// headers hold.
    pub rules_checked: usize,
    /// `[[function]]` rows compared with the release's declaration.
    pub functions_compared: usize,
    /// Enumerators of `[[enum]]` rows whose value was compared.
    pub enumerators_compared: usize,
    pub problems: Vec<HeaderProblem>,
    /// Names of families this release's headers do not hold.
    pub unchecked: BTreeSet<String>,
    /// Names of `[[function]]`, `[[enum]]` and `[[type]]` rows the release
    /// lacks that no rule applying to it writes.
    pub absent_unused: BTreeSet<String>,
}

/// The outcome over every release.
#[derive(Debug, Clone)]
pub struct HeaderCheck {
    pub target: Target,
    pub releases: Vec<ReleaseCheck>,
    /// Names found only in the untagged headers.
    pub untagged: BTreeSet<String>,
    /// `[[enum]]` names the headers do not declare (the tables group
    /// `static const` values or macros under a name of their own).
    pub grouping_names: BTreeSet<String>,
    /// Rows no release declares at all.
    pub nowhere: Vec<HeaderProblem>,
}

impl HeaderCheck {
    pub fn problem_count(&self) -> usize {
        self.nowhere.len()
            + self
                .releases
                .iter()
                .map(|r| r.problems.len())
                .sum::<usize>()
    }

    /// A plain-text account: per release what was checked and every problem.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for r in &self.releases {
            let _ = writeln!(
                out,
                "{} {}: {} header files ({}); {} rules, {} function signatures, {} enumerator values checked; {} problem(s)",
                self.target,
                r.release,
                r.header_files,
                r.families.join(", "),
                r.rules_checked,
                r.functions_compared,
                r.enumerators_compared,
                r.problems.len()
            );
            for p in &r.problems {
                write_problem(&mut out, p);
            }
            if !r.unchecked.is_empty() {
                let _ = writeln!(
                    out,
                    "  not checked (no headers of their family for this release): {}",
                    join(&r.unchecked)
                );
            }
            if !r.absent_unused.is_empty() {
                let _ = writeln!(
                    out,
                    "  declared by rows, absent here, written by no rule for this release: {}",
                    join(&r.absent_unused)
                );
            }
        }
        for p in &self.nowhere {
            write_problem(&mut out, p);
        }
        if !self.untagged.is_empty() {
            let _ = writeln!(
                out,
                "found only in untagged headers (taken as present in every release): {}",
                join(&self.untagged)
            );
        }
        if !self.grouping_names.is_empty() {
            let _ = writeln!(
                out,
                "enum names of the tables the headers do not declare (their values are constants or macros there): {}",
                join(&self.grouping_names)
            );
        }
        let _ = writeln!(out, "{} problem(s)", self.problem_count());
        out
    }
}

fn write_problem(out: &mut String, p: &HeaderProblem) {
    match &p.origin {
        Some(origin) => {
            let _ = writeln!(out, "  {origin}: {}: {}", p.name, p.message);
        }
        None => {
            let _ = writeln!(out, "  {}: {}", p.name, p.message);
        }
    }
}

fn join(names: &BTreeSet<String>) -> String {
    names
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Which releases a rule's text applies to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Applies {
    Always,
    Since(SdkVersion),
    Before(SdkVersion),
}

impl Applies {
    fn to(&self, release: &SdkVersion) -> bool {
        match self {
            Applies::Always => true,
            Applies::Since(v) => release >= v,
            Applies::Before(v) => release < v,
        }
    }
}

/// A text a rule writes into the port (target name, template, older form).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Use {
    origin: Location,
    cuda: String,
    text: String,
    applies: Applies,
    /// The headers the rule includes with it.
    headers: Vec<String>,
}

impl RuleSet {
    /// Checks every row of `target` (default flavour) against `headers`.
    pub fn check_vendor_headers(
        &self,
        headers: &VendorHeaders,
    ) -> Result<HeaderCheck, HeaderError> {
        let target = headers.target;
        let facts = vendor_facts(target)?;
        let family_of = |name: &str| family(facts, name);
        let uses = self.uses(target);
        let mut check = HeaderCheck {
            target,
            releases: Vec::new(),
            untagged: BTreeSet::new(),
            grouping_names: BTreeSet::new(),
            nowhere: Vec::new(),
        };
        let first_with = |name: &str| {
            headers
                .releases
                .iter()
                .find(|r| r.facts.declares(name))
                .map(|r| r.release)
        };
        for release in &headers.releases {
            let mut r = ReleaseCheck {
                release: release.release,
                families: release.families.clone(),
                header_files: release.facts.files,
                rules_checked: 0,
                functions_compared: 0,
                enumerators_compared: 0,
                problems: Vec::new(),
                unchecked: BTreeSet::new(),
                absent_unused: BTreeSet::new(),
            };
            let holds = |name: &str| {
                family_of(name).is_some_and(|f| release.families.iter().any(|g| g == f))
            };
            let mut written = BTreeSet::new();
            let mut counted = BTreeSet::new();
            for u in uses.iter().filter(|u| u.applies.to(&release.release)) {
                for header in &u.headers {
                    let Some(family) = header_family(facts, header) else {
                        continue;
                    };
                    if !release.families.iter().any(|f| f == family) {
                        continue;
                    }
                    if !has_header(release, headers, header) {
                        r.problems.push(HeaderProblem {
                            origin: Some(u.origin.clone()),
                            name: u.cuda.clone(),
                            message: format!(
                                "includes <{header}>, which the {} headers do not have",
                                release.release
                            ),
                        });
                    }
                }
                for name in vendor_names(&u.text, &family_of) {
                    if !holds(name) {
                        r.unchecked.insert(name.to_owned());
                        continue;
                    }
                    counted.insert((&u.origin, &u.cuda));
                    written.insert(name.to_owned());
                    if release.facts.declares(name) {
                        continue;
                    }
                    if headers.untagged.declares(name) {
                        check.untagged.insert(name.to_owned());
                        continue;
                    }
                    let hint = match first_with(name) {
                        Some(first) if first > release.release => format!(
                            "; first declared by {first}: give the row a boundary (target-version = \"{} >= {first}\")",
                            product(target)
                        ),
                        _ => String::new(),
                    };
                    r.problems.push(HeaderProblem {
                        origin: Some(u.origin.clone()),
                        name: u.cuda.clone(),
                        message: format!(
                            "writes `{name}`, which the {} headers do not declare{hint}",
                            release.release
                        ),
                    });
                }
            }
            r.rules_checked = counted.len();
            r.problems.sort();
            r.problems.dedup();
            self.compare_functions(target, release, headers, &holds, &written, &mut r);
            self.compare_enums(
                target,
                release,
                &holds,
                &written,
                &mut r,
                &mut check.grouping_names,
            );
            for (name, _) in self.type_rows(target) {
                if holds(name) && !declared(release, headers, name) && !written.contains(name) {
                    r.absent_unused.insert(name.to_owned());
                }
            }
            check.releases.push(r);
        }
        check.nowhere = self.declared_nowhere(target, headers, &family_of);
        Ok(check)
    }

    /// Every text the target's rules write, with the releases it applies
    /// to: the default rules and each library flavour (ops-blas on Ascend),
    /// not the SIMT flavour's device names, which asc-devkit's headers
    /// declare (checked by the SIMT tests).
    fn uses(&self, target: Target) -> Vec<Use> {
        let product = product(target);
        let mut uses = BTreeSet::new();
        let flavours = Flavour::ALL
            .into_iter()
            .filter(|f| *f != Flavour::Simt && f.applies_to(target));
        let names = flavours.flat_map(|flavour| {
            self.known_cuda_names_flavour(target, flavour)
                .into_iter()
                .map(move |name| (flavour, name))
        });
        for (flavour, cuda) in names {
            let Some(r) = self.lookup_flavour(target, flavour, cuda) else {
                continue;
            };
            // Header names, device strings and Python paths are not C names.
            if matches!(
                r.kind(),
                NameKind::Header | NameKind::DeviceString | NameKind::Python
            ) {
                continue;
            }
            let minimum = r
                .minimum_version()
                .filter(|m| m.product == product)
                .map(|m: &MinimumVersion| m.version);
            let applies = minimum.map_or(Applies::Always, Applies::Since);
            let mut add = |text: String, applies: Applies| {
                uses.insert(Use {
                    origin: r.origin().clone(),
                    cuda: cuda.to_owned(),
                    text,
                    applies,
                    headers: r.headers().to_vec(),
                });
            };
            if let Some(to) = &r.target_name {
                add(to.to_string(), applies.clone());
            }
            if let Some(template) = r.template() {
                let mut text = without_maps(template.source());
                for map in template.enum_maps() {
                    if let Some(map) = self.enum_map(target, map) {
                        for value in map.values.values() {
                            text.push(' ');
                            text.push_str(value);
                        }
                    }
                }
                add(text, applies.clone());
            }
            for (_, to) in &r.rule.overloads {
                add(to.clone(), applies.clone());
            }
            if let (Some((older, _)), Some(minimum)) = (r.older_sdk(), minimum) {
                add(without_maps(older.source()), Applies::Before(minimum));
            }
        }
        uses.into_iter().collect()
    }

    fn compare_functions(
        &self,
        target: Target,
        release: &ReleaseHeaders,
        headers: &VendorHeaders,
        holds: &dyn Fn(&str) -> bool,
        written: &BTreeSet<String>,
        r: &mut ReleaseCheck,
    ) {
        for sig in self.vendor_functions(target) {
            if !holds(&sig.name) || sig.name.starts_with("cuport_") {
                continue;
            }
            let declared = release
                .facts
                .functions
                .get(&sig.name)
                .or_else(|| headers.untagged.functions.get(&sig.name));
            let Some(declared) = declared else {
                if !written.contains(&sig.name) {
                    r.absent_unused.insert(sig.name.clone());
                }
                continue;
            };
            r.functions_compared += 1;
            if let Some(header) = self.declaring_header(target, &sig.name) {
                if !declared.iter().any(|d| d.header == header) {
                    let found: Vec<&str> = declared.iter().map(|d| d.header.as_str()).collect();
                    r.problems.push(HeaderProblem {
                        origin: Some(sig.origin.clone()),
                        name: sig.name.clone(),
                        message: format!(
                            "the row says <{header}>, {} declares it in {}",
                            release.release,
                            found.join(", ")
                        ),
                    });
                }
            }
            let (returns, params) = row_signature(sig);
            if declared
                .iter()
                .any(|d| d.returns == returns && d.params == params)
            {
                continue;
            }
            let d = &declared[0];
            r.problems.push(HeaderProblem {
                origin: Some(sig.origin.clone()),
                name: sig.name.clone(),
                message: format!(
                    "the row says `{returns} ({})`, {} {} declares `{} ({})`",
                    params.join(", "),
                    release.release,
                    d.header,
                    d.returns,
                    d.params.join(", ")
                ),
            });
        }
    }

    fn compare_enums(
        &self,
        target: Target,
        release: &ReleaseHeaders,
        holds: &dyn Fn(&str) -> bool,
        written: &BTreeSet<String>,
        r: &mut ReleaseCheck,
        grouping: &mut BTreeSet<String>,
    ) {
        for (enum_name, values) in self.target_enums(target) {
            if enum_name.starts_with("cuport_") || !holds(enum_name) {
                continue;
            }
            if !release.facts.types.contains(enum_name) {
                grouping.insert(enum_name.to_owned());
            }
            for (name, value) in enumerators(values) {
                match release.facts.constants.get(&name) {
                    None => {
                        if !written.contains(&name) {
                            r.absent_unused.insert(name);
                        }
                    }
                    Some(Some(declared)) => {
                        r.enumerators_compared += 1;
                        if *declared != value {
                            r.problems.push(HeaderProblem {
                                origin: None,
                                name: format!("{enum_name}::{name}"),
                                message: format!(
                                    "the row's value is {value}, the {} headers' is {declared}",
                                    release.release
                                ),
                            });
                        }
                    }
                    Some(None) => {}
                }
            }
        }
    }

    fn type_rows(&self, target: Target) -> Vec<(&str, &str)> {
        self.tables
            .get(&target)
            .map(|t| {
                t.types
                    .iter()
                    .filter(|(n, _)| !n.starts_with("cuport_"))
                    .map(|(n, d)| (n.as_str(), d.as_str()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `[[function]]`, `[[enum]]` enumerator and `[[type]]` rows that no
    /// release holding their family declares.
    fn declared_nowhere(
        &self,
        target: Target,
        headers: &VendorHeaders,
        family_of: &dyn Fn(&str) -> Option<&'static str>,
    ) -> Vec<HeaderProblem> {
        let holding = |name: &str| -> Vec<&ReleaseHeaders> {
            let family = family_of(name);
            headers
                .releases
                .iter()
                .filter(|r| family.is_some_and(|f| r.families.iter().any(|g| g == f)))
                .collect()
        };
        let nowhere = |name: &str| {
            let releases = holding(name);
            !releases.is_empty()
                && !headers.untagged.declares(name)
                && releases.iter().all(|r| !r.facts.declares(name))
        };
        let mut out = Vec::new();
        for sig in self.vendor_functions(target) {
            if !sig.name.starts_with("cuport_") && nowhere(&sig.name) {
                out.push(HeaderProblem {
                    origin: Some(sig.origin.clone()),
                    name: sig.name.clone(),
                    message: "no release's headers declare this function".into(),
                });
            }
        }
        let enumerators = self
            .target_enums(target)
            .filter(|(n, _)| !n.starts_with("cuport_"))
            .flat_map(|(_, values)| enumerators(values).into_iter().map(|(n, _)| n));
        let types = self
            .type_rows(target)
            .into_iter()
            .map(|(n, _)| n.to_owned());
        for name in enumerators.chain(types) {
            if nowhere(&name) {
                out.push(HeaderProblem {
                    origin: None,
                    message: "no release's headers declare this name".into(),
                    name,
                });
            }
        }
        out
    }
}

/// A template's text with its `${n:map}` placeholders blanked (the map
/// names are not C names; the maps' values are added by the caller).
fn without_maps(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        out.push(' ');
        rest = rest[start..]
            .find('}')
            .map_or("", |end| &rest[start + end + 1..]);
    }
    out.push_str(rest);
    out
}

/// The family of `name`: the one with the longest matching prefix.
fn family(facts: &'static VendorHeaderFacts, name: &str) -> Option<&'static str> {
    facts
        .families
        .iter()
        .flat_map(|f| f.prefixes.iter().map(move |p| (p, f)))
        .filter(|(p, _)| name.starts_with(p.as_str()))
        .max_by_key(|(p, _)| p.len())
        .map(|(_, f)| f.name.as_str())
}

/// The family whose include folders hold `header` (`hccl/hccl.h`).
fn header_family(facts: &'static VendorHeaderFacts, header: &str) -> Option<&'static str> {
    let folder = header.split_once('/')?.0;
    facts
        .families
        .iter()
        .find(|f| f.include_dirs.iter().any(|d| d == folder))
        .map(|f| f.name.as_str())
}

fn has_header(release: &ReleaseHeaders, headers: &VendorHeaders, header: &str) -> bool {
    release
        .dirs
        .iter()
        .chain(&headers.untagged_dirs)
        .any(|d| d.join(header).is_file())
}

fn declared(release: &ReleaseHeaders, headers: &VendorHeaders, name: &str) -> bool {
    release.facts.declares(name) || headers.untagged.declares(name)
}

fn product(target: Target) -> &'static str {
    target
        .profile()
        .versions
        .product
        .as_deref()
        .unwrap_or("SDK")
}

/// The row's return and parameter types, normalised as the headers' are.
fn row_signature(sig: &Signature) -> (String, Vec<String>) {
    let params: Vec<String> = sig.params.iter().map(|p| normalise_type(p)).collect();
    let params = if params == ["void"] {
        Vec::new()
    } else {
        params
    };
    (normalise_type(&sig.returns), params)
}

/// Identifiers of `text` that belong to a family (`cuport_` helpers do not).
fn vendor_names<'t>(
    text: &'t str,
    family_of: &dyn Fn(&str) -> Option<&'static str>,
) -> Vec<&'t str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.starts_with("cuport_") && family_of(w).is_some())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// `NAME = VALUE` enumerators with the value C gives them (the previous
/// value plus one where none is written).
fn enumerators(values: &[String]) -> Vec<(String, i64)> {
    let mut next = 0i64;
    let mut out = BTreeMap::new();
    for value in values {
        let (name, number) = match value.split_once('=') {
            Some((n, v)) => {
                let v = v.trim();
                let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                    Some(hex) => i64::from_str_radix(hex, 16).ok(),
                    None => v.parse().ok(),
                };
                (n.trim(), parsed)
            }
            None => (value.trim(), Some(next)),
        };
        if let Some(number) = number {
            out.insert(name.to_owned(), number);
            next = number.saturating_add(1);
        }
    }
    out.into_iter().collect()
}
