//! The compiled rule set and the lookups the migrate stage uses.
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

use cuport_model::{Library, SiteKind, Target};

use crate::diag::Location;
use crate::model::{Flavour, Flavours, NameKind, Status};
use crate::raw::CudaVersion;
use crate::source::Source;
use crate::template::{EnumMap, Template};
use cuport_model::{Code, Effort};

/// One rule as loaded: an explicit entry, a pattern, an unsupported group or
/// an enum map's values. Lookups hand out references to it.
#[derive(Debug, Clone)]
pub struct Rule {
    pub code: Option<Code>,
    pub status: Status,
    pub kind: NameKind,
    pub library: Option<Library>,
    pub note: Option<String>,
    pub reference: Option<String>,
    pub effort: Option<Effort>,
    pub headers: Vec<String>,
    pub imports: Vec<String>,
    pub libraries: Vec<String>,
    pub target_version: Option<String>,
    /// `target_version` when it states `PRODUCT >= VERSION`, parsed once.
    pub minimum_version: Option<cuport_model::MinimumVersion>,
    pub cuda_version: Option<CudaVersion>,
    pub unconfirmed: bool,
    /// `roc` for rules that apply only with `--hip-libs=roc`.
    pub flavour: Flavour,
    pub template: Option<Template>,
    /// The rewrite for SDK releases older than `target_version` states,
    /// and what it loses.
    pub older_sdk: Option<OlderSdk>,
    /// The CUDA function's parameter names (`cuda-params`), for templates.
    pub cuda_params: Option<Vec<String>>,
    /// Helper functions (shim) the template calls.
    pub helpers: Vec<String>,
    /// (argument count, target name): CUDA's C++ overloads that are
    /// functions of other names on the target.
    pub overloads: Vec<(usize, String)>,
    pub origin: Location,
    pub priority: i32,
    /// The file's `source` line: where its facts come from.
    pub source: std::sync::Arc<str>,
}

/// An entry's `older-sdk`: the form for releases older than its
/// `target-version`.
#[derive(Debug, Clone)]
pub struct OlderSdk {
    pub template: Template,
    /// What the older form loses.
    pub note: String,
    /// The headers declaring the older form, where they differ from the
    /// entry's.
    pub headers: Option<Vec<String>>,
}

/// A C signature as documented by the vendor (or promised by the shim).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub name: String,
    pub returns: String,
    pub params: Vec<String>,
    pub note: Option<String>,
    pub origin: Location,
}

/// `prefix*suffix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Glob {
    pub(crate) prefix: String,
    pub(crate) suffix: String,
}

impl Glob {
    pub(crate) fn parse(text: &str) -> Option<Glob> {
        let (prefix, suffix) = text.split_once('*')?;
        (!suffix.contains('*')).then(|| Glob {
            prefix: prefix.to_owned(),
            suffix: suffix.to_owned(),
        })
    }

    /// The text the `*` stands for, if `name` matches (never empty).
    pub(crate) fn capture<'n>(&self, name: &'n str) -> Option<&'n str> {
        let rest = name.strip_prefix(self.prefix.as_str())?;
        let mid = rest.strip_suffix(self.suffix.as_str())?;
        (!mid.is_empty()).then_some(mid)
    }

    pub(crate) fn expand(&self, mid: &str) -> String {
        // Not format!: loading the tables expands every listed name of every
        // pattern (about 100,000), and formatting took a third of that.
        let mut name = String::with_capacity(self.prefix.len() + mid.len() + self.suffix.len());
        name.push_str(&self.prefix);
        name.push_str(mid);
        name.push_str(&self.suffix);
        name
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    pub(crate) rule: usize,
    pub(crate) from: Glob,
    pub(crate) to: Glob,
    pub(crate) exists: FxHashSet<String>,
    pub(crate) exceptions: FxHashSet<String>,
    pub(crate) priority: i32,
}

impl Pattern {
    #[cfg(test)]
    pub(crate) fn apply(&self, cuda_name: &str) -> Option<String> {
        if self.exceptions.contains(cuda_name) {
            return None;
        }
        let target = self.to.expand(self.from.capture(cuda_name)?);
        self.exists.contains(&target).then_some(target)
    }

    /// The CUDA name that produces `target_name`.
    pub(crate) fn invert(&self, target_name: &str) -> Option<String> {
        self.to
            .capture(target_name)
            .map(|mid| self.from.expand(mid))
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    pub(crate) rule: usize,
    pub(crate) priority: i32,
}

#[derive(Debug, Clone)]
pub(crate) struct ExplicitTarget {
    pub(crate) slot: Slot,
    pub(crate) to: Option<String>,
}

/// What a lookup of one name yields, computed once when the set is built.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub(crate) rule: usize,
    pub(crate) to: Option<String>,
    pub(crate) via_pattern: bool,
}

/// The mappings of one flavour of a target.
#[derive(Debug, Default, Clone)]
pub(crate) struct Layer {
    pub(crate) explicit: FxHashMap<String, ExplicitTarget>,
    pub(crate) patterns: Vec<Pattern>,
    /// Every CUDA name a lookup resolves (explicit and pattern expansions),
    /// resolved once, so that a lookup is one hash probe, not a pattern scan.
    pub(crate) resolved: FxHashMap<String, Hit>,
}

impl Layer {
    /// Resolves `cuda_name` by trying each pattern (the reference semantics
    /// the precomputed `resolved` map must agree with; tests compare them):
    /// explicit
    /// entries win over patterns of the same or lower priority; a pattern
    /// applies only when the name it produces is listed as existing.
    #[cfg(test)]
    pub(crate) fn scan(&self, cuda_name: &str) -> Option<Hit> {
        let explicit = self.explicit.get(cuda_name);
        for pattern in &self.patterns {
            if explicit.is_some_and(|e| e.slot.priority >= pattern.priority) {
                break;
            }
            if let Some(name) = pattern.apply(cuda_name) {
                return Some(Hit {
                    rule: pattern.rule,
                    to: Some(name),
                    via_pattern: true,
                });
            }
        }
        explicit.map(|e| Hit {
            rule: e.slot.rule,
            to: e.to.clone(),
            via_pattern: false,
        })
    }
}

/// Everything known about one target.
#[derive(Debug, Default, Clone)]
pub(crate) struct TargetTable {
    pub(crate) layers: BTreeMap<Flavour, Layer>,
    pub(crate) functions: BTreeMap<String, Signature>,
    pub(crate) helpers: BTreeMap<String, Signature>,
    /// Type declarations in file order (C needs declaration before use).
    pub(crate) types: Vec<(String, String)>,
    pub(crate) enums: BTreeMap<String, Vec<String>>,
    pub(crate) enum_maps: HashMap<String, Arc<EnumMap>>,
    /// Declared name → the vendor header a row says declares it.
    pub(crate) declared_in: BTreeMap<String, String>,
    /// CUDA function → its `[[argument]]` rules.
    pub(crate) arguments: BTreeMap<String, Vec<crate::arguments::ArgumentRule>>,
}

impl TargetTable {
    pub(crate) fn layer(&self, flavour: Flavour) -> Option<&Layer> {
        self.layers.get(&flavour)
    }

    pub(crate) fn layer_mut(&mut self, flavour: Flavour) -> &mut Layer {
        self.layers.entry(flavour).or_default()
    }

    fn hit(&self, flavour: Flavour, cuda_name: &str) -> Option<&Hit> {
        self.layer(flavour)?.resolved.get(cuda_name)
    }
}

/// All rule tables, compiled for lookups.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub(crate) sources: Vec<Source>,
    /// The sources that parsed, kept so a user layer needs no re-parse.
    pub(crate) parsed: Vec<Arc<crate::source::Parsed>>,
    pub(crate) rules: Vec<Rule>,
    pub(crate) tables: BTreeMap<Target, TargetTable>,
    pub(crate) cuda_enums: BTreeMap<String, Vec<String>>,
    /// CUDA enumerators whose numeric value the tables record (`= 0x02`).
    pub(crate) cuda_enum_values: BTreeMap<String, String>,
    /// Per target, every header an include rule produces (computed once).
    pub(crate) target_headers: std::sync::OnceLock<BTreeMap<Target, BTreeSet<String>>>,
    /// The touchpoint of every C/C++ name worth a site (computed once).
    pub(crate) name_sites: std::sync::OnceLock<NameSites>,
    /// Per target, the names of its `member` rules, computed on the
    /// target's first use: every file of a run asks, and finding them reads
    /// every name of the target.
    pub(crate) member_names: cuport_model::PerTarget<Vec<String>>,
}

/// What a CUDA name becomes on one target.
#[derive(Debug, Clone)]
pub struct Resolved<'a> {
    pub target: Target,
    /// The target's name (None for `unsupported` and name-less `manual` entries).
    pub target_name: Option<Cow<'a, str>>,
    /// Whether a pattern rule (rather than an explicit entry) produced it.
    pub via_pattern: bool,
    pub rule: &'a Rule,
}

impl<'a> Resolved<'a> {
    pub fn status(&self) -> Status {
        self.rule.status
    }
    pub fn template(&self) -> Option<&'a Template> {
        self.rule.template.as_ref()
    }
    /// The target name of the overload a call with `arguments` arguments
    /// calls, when it differs from the rule's name.
    pub fn overload(&self, arguments: usize) -> Option<&'a str> {
        self.rule
            .overloads
            .iter()
            .find(|(count, _)| *count == arguments)
            .map(|(_, to)| to.as_str())
    }
    pub fn headers(&self) -> &'a [String] {
        &self.rule.headers
    }
    pub fn imports(&self) -> &'a [String] {
        &self.rule.imports
    }
    pub fn libraries(&self) -> &'a [String] {
        &self.rule.libraries
    }
    pub fn note(&self) -> Option<&'a str> {
        self.rule.note.as_deref()
    }
    /// The rewrite for SDK releases older than the rule's minimum, and its note.
    pub fn older_sdk(&self) -> Option<(&'a Template, &'a str)> {
        self.rule
            .older_sdk
            .as_ref()
            .map(|older| (&older.template, older.note.as_str()))
    }
    /// The headers that declare the older form (the entry's when the older
    /// form names none of its own).
    pub fn older_sdk_headers(&self) -> &'a [String] {
        match &self.rule.older_sdk {
            Some(OlderSdk {
                headers: Some(headers),
                ..
            }) => headers,
            _ => &self.rule.headers,
        }
    }
    /// The target versions the mapping holds for (`CANN >= 9.1.0`).
    pub fn target_version(&self) -> Option<&'a str> {
        self.rule.target_version.as_deref()
    }
    /// The minimum release `target_version` states, if it states one.
    pub fn minimum_version(&self) -> Option<&'a cuport_model::MinimumVersion> {
        self.rule.minimum_version.as_ref()
    }
    pub fn reference(&self) -> Option<&'a str> {
        self.rule.reference.as_deref()
    }
    pub fn code(&self) -> Option<Code> {
        self.rule.code
    }
    pub fn effort(&self) -> Option<Effort> {
        self.rule.effort
    }
    pub fn library(&self) -> Option<Library> {
        self.rule.library
    }
    pub fn kind(&self) -> NameKind {
        self.rule.kind
    }
    pub fn helpers(&self) -> &'a [String] {
        &self.rule.helpers
    }
    pub fn unconfirmed(&self) -> bool {
        self.rule.unconfirmed
    }
    pub fn origin(&self) -> &'a Location {
        &self.rule.origin
    }
    pub fn cuda_params(&self) -> Option<&'a [String]> {
        self.rule.cuda_params.as_deref()
    }
}

impl RuleSet {
    /// What `cuda_name` becomes on `target` (default flavour): explicit
    /// entries win over patterns of the same priority; a pattern applies only
    /// when the name it produces is listed as existing on the target. A device
    /// string with an index (`cuda:1`) maps its device part (`npu:1`).
    pub fn lookup(&self, target: Target, cuda_name: &str) -> Option<Resolved<'_>> {
        self.lookup_flavour(target, Flavour::Default, cuda_name)
    }

    /// [`RuleSet::lookup`] for a flavour: with [`Flavour::Roc`] on HIP, the
    /// roc rules (rocBLAS, rocSPARSE, ...) win where they map the name, and
    /// the default HIP rules apply to everything else (runtime, driver, ...).
    pub fn lookup_flavour(
        &self,
        target: Target,
        flavours: impl Into<Flavours>,
        cuda_name: &str,
    ) -> Option<Resolved<'_>> {
        let flavours = flavours.into();
        self.resolve(target, flavours, cuda_name)
            .or_else(|| self.resolve_indexed_device(target, flavours, cuda_name))
    }

    fn resolve(&self, target: Target, flavours: Flavours, cuda_name: &str) -> Option<Resolved<'_>> {
        let table = self.tables.get(&target)?;
        let base = table.hit(Flavour::Default, cuda_name);
        let own = flavours.own().find_map(|f| table.hit(f, cuda_name));
        let hit = match (own, base) {
            (Some(o), Some(b)) if self.rules[b.rule].priority > self.rules[o.rule].priority => b,
            (Some(o), _) => o,
            (None, b) => b?,
        };
        Some(Resolved {
            target,
            target_name: hit.to.as_deref().map(Cow::Borrowed),
            via_pattern: hit.via_pattern,
            rule: &self.rules[hit.rule],
        })
    }

    /// `cuda:1` → the device-string rule for `cuda`, with the index kept.
    fn resolve_indexed_device(
        &self,
        target: Target,
        flavours: Flavours,
        text: &str,
    ) -> Option<Resolved<'_>> {
        let (device, index) = split_device_index(text)?;
        let mut resolved = self.resolve(target, flavours, device)?;
        if resolved.kind() != NameKind::DeviceString {
            return None;
        }
        resolved.target_name = resolved
            .target_name
            .map(|name| Cow::Owned(format!("{name}:{index}")));
        Some(resolved)
    }

    /// The target's spelling of a PyTorch device or backend string (`cuda`,
    /// `cuda:1`, `nccl`): `npu:1` on Ascend, `cuda:1` on HIP. None when the
    /// text is not a device string the tables know, or the target has none.
    pub fn device_string(&self, target: Target, text: &str) -> Option<String> {
        let resolved = self.lookup(target, text)?;
        if resolved.kind() != NameKind::DeviceString {
            return None;
        }
        resolved.target_name.map(Cow::into_owned)
    }

    /// Every CUDA name that resolves on `target` (default flavour), sorted.
    pub fn known_cuda_names(&self, target: Target) -> impl Iterator<Item = &str> + '_ {
        let mut names: Vec<&str> = self.layer_names(target, Flavour::Default).collect();
        names.sort_unstable();
        names.into_iter()
    }

    /// The `Owner::member` rules of `target` (kind `member`), in name order.
    pub fn members(&self, target: Target) -> impl Iterator<Item = (&str, Resolved<'_>)> + '_ {
        self.member_names
            .get_or_init(target, || self.index_members(target))
            .iter()
            .filter_map(move |name| Some((name.as_str(), self.lookup(target, name)?)))
    }

    fn index_members(&self, target: Target) -> Vec<String> {
        // Members are named `Owner::member`; most names have no `::` (and
        // no `:`, which a byte search rules out faster).
        let mut names: Vec<String> = self
            .layer_names(target, Flavour::Default)
            .filter(|name| name.contains(':') && name.contains("::"))
            .filter(|name| {
                self.lookup(target, name)
                    .is_some_and(|r| r.kind() == NameKind::Member)
            })
            .map(str::to_owned)
            .collect();
        names.sort_unstable();
        names
    }

    /// Every CUDA name that resolves on `target` with `flavour`, sorted: the
    /// flavour's own names and the default ones it falls back to.
    pub fn known_cuda_names_flavour(
        &self,
        target: Target,
        flavours: impl Into<Flavours>,
    ) -> Vec<&str> {
        let mut names: BTreeSet<&str> = self.layer_names(target, Flavour::Default).collect();
        for flavour in flavours.into().own() {
            names.extend(self.layer_names(target, flavour));
        }
        names.into_iter().collect()
    }

    /// The names one layer resolves, in no order: the callers that need an
    /// order sort what they keep (a run seldom needs the whole list, so
    /// loading the tables no longer sorts it).
    fn layer_names(&self, target: Target, flavour: Flavour) -> impl Iterator<Item = &str> + '_ {
        self.tables
            .get(&target)
            .and_then(|t| t.layer(flavour))
            .into_iter()
            .flat_map(|l| l.resolved.keys().map(String::as_str))
    }

    /// Whether any target's tables know `cuda_name` (mapped or marked
    /// unsupported), including indexed device strings such as `cuda:1`.
    pub fn is_known(&self, cuda_name: &str) -> bool {
        let known = |name: &str| {
            self.tables
                .values()
                .flat_map(|t| t.layers.values())
                .any(|l| l.resolved.contains_key(name))
        };
        known(cuda_name)
            || Target::ALL.into_iter().any(|t| {
                self.resolve_indexed_device(t, Flavour::Default.into(), cuda_name)
                    .is_some()
            })
    }

    /// What kind of touchpoint a C/C++ name or dotted Python path the tables
    /// know is, for the analyser's table-driven recognition: the library of
    /// its rule and a site kind from the rule's name kind. `None` for names
    /// no table knows and for headers and device strings.
    pub fn site_of(&self, cuda_name: &str) -> Option<(Library, SiteKind)> {
        self.name_sites
            .get_or_init(|| NameSites::new(self.index_name_sites()))
            .get(cuda_name)
    }

    /// Every name [`RuleSet::site_of`] answers for. A name that looks like
    /// CUDA's counts wherever a table knows it; one that looks like plain C
    /// (`abs`, `min`, `GLenum`) only where some target spells it otherwise
    /// or cannot port it (`umin`, which HIP lacks): elsewhere it is the same
    /// code on every target, and a project's own `min` no touchpoint.
    fn index_name_sites(&self) -> FxHashMap<String, (Library, SiteKind)> {
        // One probe per layer entry: a name is in many layers (every target,
        // every flavour), its site is the first layer's, and it is ported
        // otherwise if any layer ports it otherwise.
        let mut sites: FxHashMap<&str, ((Library, SiteKind), bool)> = FxHashMap::default();
        for layer in self.tables.values().flat_map(|t| t.layers.values()) {
            for (name, hit) in &layer.resolved {
                let Some(rule) = self.rules.get(hit.rule) else {
                    continue;
                };
                let Some(site) = rule_site(rule) else {
                    continue;
                };
                let same = rule.status == Status::Exact && hit.to.as_deref() == Some(name.as_str());
                sites
                    .entry(name.as_str())
                    .and_modify(|(_, otherwise)| *otherwise |= !same)
                    .or_insert((site, !same));
            }
        }
        sites
            .into_iter()
            .filter(|(name, (_, ported_otherwise))| {
                *ported_otherwise || cuport_model::looks_like_cuda_name(name)
            })
            .map(|(name, (site, _))| (name.to_owned(), site))
            .collect()
    }

    /// Whether `header` (as written in an `#include`) is one the tables
    /// produce for `target` (`hip/hip_fp16.h`): a file including it has been
    /// ported already. A header the target keeps as CUDA names it
    /// (rocThrust's `thrust/sort.h`) says nothing of that.
    pub fn is_target_header(&self, target: Target, header: &str) -> bool {
        let headers = self.target_headers.get_or_init(|| {
            let mut all: BTreeMap<Target, BTreeSet<String>> = BTreeMap::new();
            for (&t, table) in &self.tables {
                let set = all.entry(t).or_default();
                for layer in table.layers.values() {
                    for (cuda, hit) in &layer.resolved {
                        let rule = self.rules.get(hit.rule);
                        let kept = hit.to.as_deref() == Some(cuda.as_str());
                        if !kept && rule.is_some_and(|r| r.kind == NameKind::Header) {
                            set.extend(hit.to.iter().cloned());
                        }
                    }
                }
            }
            all
        });
        headers.get(&target).is_some_and(|set| set.contains(header))
    }

    /// Helper functions the shim must implement for `target`.
    pub fn helpers(&self, target: Target) -> impl Iterator<Item = &Signature> + '_ {
        self.tables
            .get(&target)
            .into_iter()
            .flat_map(|t| t.helpers.values())
    }

    /// The target signature of `name`, if the tables record one.
    /// The `[[argument]]` rules of `target` for calls of `cuda_name`.
    pub fn argument_rules(
        &self,
        target: Target,
        cuda_name: &str,
    ) -> &[crate::arguments::ArgumentRule] {
        self.tables
            .get(&target)
            .and_then(|t| t.arguments.get(cuda_name))
            .map_or(&[], Vec::as_slice)
    }

    pub fn signature(&self, target: Target, name: &str) -> Option<&Signature> {
        let table = self.tables.get(&target)?;
        table
            .functions
            .get(name)
            .or_else(|| table.helpers.get(name))
    }

    /// The enum map of `target` that lists the CUDA value `cuda_value`, and
    /// the target value it maps to (a value only templates convert:
    /// `cudaEventDisableTiming` in the `event-flags` map).
    pub fn enum_map_of_value(&self, target: Target, cuda_value: &str) -> Option<(&EnumMap, &str)> {
        let maps = &self.tables.get(&target)?.enum_maps;
        let mut names: Vec<&String> = maps.keys().collect();
        names.sort();
        names.into_iter().find_map(|name| {
            let map = maps.get(name)?;
            let value = map.values.get(cuda_value)?;
            Some((map.as_ref(), value.as_str()))
        })
    }

    /// An enum map by name, for callers that map values outside templates.
    pub fn enum_map(&self, target: Target, name: &str) -> Option<&EnumMap> {
        self.tables
            .get(&target)?
            .enum_maps
            .get(name)
            .map(|m| m.as_ref())
    }

    /// Every enum map of `target`, sorted by name.
    pub fn enum_maps(&self, target: Target) -> Vec<&EnumMap> {
        let mut maps: Vec<&EnumMap> = self
            .tables
            .get(&target)
            .into_iter()
            .flat_map(|t| t.enum_maps.values().map(|m| m.as_ref()))
            .collect();
        maps.sort_by(|a, b| a.name.cmp(&b.name));
        maps
    }

    /// The numeric value of a CUDA enumerator, where `mappings/cuda/`
    /// records it (`cudaEventDisableTiming = 0x02`).
    pub fn cuda_enum_value(&self, enumerator: &str) -> Option<&str> {
        self.cuda_enum_values.get(enumerator).map(String::as_str)
    }

    /// The files the set was built from.
    /// The target a rule file of this set (by its source name) is for;
    /// `None` for fact files without one or an unknown name.
    pub fn file_target(&self, name: &str) -> Option<Target> {
        self.parsed
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.target())
    }

    pub fn sources(&self) -> &[Source] {
        &self.sources
    }
}

/// `cuda:1` → (`cuda`, `1`); None unless the part after the colon is a number.
fn split_device_index(text: &str) -> Option<(&str, &str)> {
    let (device, index) = text.split_once(':')?;
    let is_index = !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit());
    (is_index && !device.is_empty()).then_some((device, index))
}

/// The touchpoint a rule's CUDA name is: its library and a site kind from
/// the rule's name kind. `None` for headers, Python paths and device strings.
fn rule_site(rule: &Rule) -> Option<(Library, SiteKind)> {
    let library = rule.library?;
    // Build-file words (`nvcc`, `lib64`, `CUDA_ARCHITECTURES`) are found by
    // the CMake and Makefile scanners in their context; in C++ or Python
    // they are a project's own names.
    if library == Library::Build {
        return None;
    }
    let kind = match rule.kind {
        NameKind::Function => match library {
            Library::Runtime => SiteKind::RuntimeApi,
            Library::Driver => SiteKind::DriverApi,
            _ => SiteKind::LibraryCall,
        },
        NameKind::Type => SiteKind::Type,
        NameKind::EnumValue => SiteKind::EnumConstant,
        NameKind::Macro => SiteKind::Macro,
        NameKind::Intrinsic => SiteKind::DeviceIntrinsic,
        // A dotted Python path the tables know (`torch.version.cuda`) is a
        // framework touchpoint wherever the project reaches it.
        NameKind::Python => SiteKind::FrameworkCall,
        NameKind::Header | NameKind::DeviceString | NameKind::Member => return None,
    };
    Some((library, kind))
}

/// [`RuleSet::site_of`]'s index. The scan asks it of nearly every
/// identifier of every file (660,000 times on cuda-samples); a name whose
/// first byte and length no indexed name has (`i`, a project's own long
/// names) is answered without hashing: the lookups took a third less.
#[derive(Debug, Clone)]
pub(crate) struct NameSites {
    sites: FxHashMap<String, (Library, SiteKind)>,
    /// For each first byte, bit `min(length, 63)` is set where an indexed
    /// name starts with that byte and has that length.
    shapes: Vec<u64>,
}

impl NameSites {
    fn new(sites: FxHashMap<String, (Library, SiteKind)>) -> Self {
        let mut shapes = vec![0u64; 256];
        for name in sites.keys() {
            if let Some(&first) = name.as_bytes().first() {
                shapes[usize::from(first)] |= 1 << name.len().min(63);
            }
        }
        Self { sites, shapes }
    }

    fn get(&self, name: &str) -> Option<(Library, SiteKind)> {
        let shape_indexed = name
            .as_bytes()
            .first()
            .is_none_or(|&first| self.shapes[usize::from(first)] >> name.len().min(63) & 1 == 1);
        if !shape_indexed {
            return None;
        }
        self.sites.get(name).copied()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The precomputed map answers exactly what trying each pattern would.
    #[test]
    fn precomputed_lookups_agree_with_the_pattern_scan() {
        let set = RuleSet::builtin().expect("built-ins load");
        let mut checked = 0;
        for layer in set.tables.values().flat_map(|t| t.layers.values()) {
            let probes = layer.resolved.keys().map(String::as_str).chain([
                "cudaNoSuchThing",
                "cuNoSuch",
                "cublasNoSuch_v2",
                "",
            ]);
            for name in probes {
                let fast = layer.resolved.get(name).map(|h| (h.rule, h.to.clone()));
                let slow = layer.scan(name).map(|h| (h.rule, h.to));
                assert_eq!(fast, slow, "{name}");
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    /// The shape check in front of the name index answers every indexed
    /// name as the index does, and every other name with None.
    #[test]
    fn site_of_answers_as_the_index_does() {
        let set = RuleSet::builtin().expect("built-ins load");
        let index = set.index_name_sites();
        assert!(index.len() > 1_000, "{}", index.len());
        for (name, site) in &index {
            assert_eq!(set.site_of(name), Some(*site), "{name}");
            // Names one byte longer or shorter, or with another first
            // byte, share the rest of a real name's spelling.
            for other in [
                format!("{name}_"),
                format!("x{name}"),
                name.get(1..).unwrap_or_default().to_owned(),
            ] {
                assert_eq!(set.site_of(&other), index.get(&other).copied(), "{other}");
            }
        }
        let long = "cuda".repeat(40);
        for probe in ["", "i", "float", "cudaNoSuchThing", long.as_str()] {
            assert_eq!(set.site_of(probe), index.get(probe).copied(), "{probe}");
        }
    }
}
