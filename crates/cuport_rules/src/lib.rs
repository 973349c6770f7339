//! cuport's rule tables: what each CUDA name becomes on HIP, Ascend, MUSA and
//! Cambricon MLU.
//!
//! The tables are TOML files under `mappings/` (schema: `mappings/README.md`),
//! embedded in the binary. [`RuleSet::builtin`] loads them;
//! [`RuleSet::with_user_file`] layers a user file over them with a priority;
//! [`RuleSet::lookup`] resolves one name; [`Template::apply`] rewrites a
//! call's arguments; [`RuleSet::declarations_header`] emits C declarations of
//! every target function the tables use, for compile checks of ported code.

pub mod api_support;
mod arguments;
mod builder;
mod check;
mod declarations;
mod diag;
mod entry_checks;
mod fingerprint;
pub mod kernel_rules;
mod model;
pub mod python_guidance;
mod raw;
mod ruleset;
mod source;
mod stats;
mod template;
pub mod vendor_headers;

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

pub use arguments::{squeeze, ArgumentRule, ArgumentShape};
pub use diag::{DiagKind, Diagnostic, Location, RulesError};
pub use model::{Flavour, Flavours, NameKind, Status};
pub use raw::CudaVersion;
pub use ruleset::{OlderSdk, Resolved, Rule, RuleSet, Signature};
pub use source::Source;
pub use stats::{Counts, Stats};
pub use template::{EnumMap, Template, TemplateError};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/builtin_files.rs"));
}

/// The build script's parsed form of `source` (postcard), when `source` is
/// a built-in file as embedded, not a text that only carries its name.
fn precompiled(source: &Source) -> Option<&'static [u8]> {
    let Cow::Borrowed(text) = &source.text else {
        return None;
    };
    let name = source.name.as_str();
    let at = embedded::BUILTIN_FILES
        .binary_search_by_key(&name, |(name, _)| name)
        .ok()?;
    let (_, embedded) = embedded::BUILTIN_FILES.get(at)?;
    if !source.builtin || !std::ptr::eq(*embedded, *text) {
        return None;
    }
    let at = embedded::PRECOMPILED
        .binary_search_by_key(&name, |(name, _)| name)
        .ok()?;
    embedded::PRECOMPILED.get(at).map(|(_, bytes)| *bytes)
}

/// Builds a rule set from `sources`, keeping whatever is valid, and returns
/// every problem found (sorted by file, line, column). `cuport rules check`
/// uses this; [`RuleSet::from_sources`] fails on any problem instead.
pub fn build(sources: Vec<Source>) -> (RuleSet, Vec<Diagnostic>) {
    build_checked(sources, CrossChecks::Run)
}

/// Whether the checks across files (patterns shadowing entries, enum maps
/// against the enums they map) run. They only report; the built-in tables
/// pass them (`cuport rules check` and `tests/tables.rs`), so loading the
/// built-ins at start-up skips them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CrossChecks {
    Run,
    Skip,
}

fn build_checked(sources: Vec<Source>, checks: CrossChecks) -> (RuleSet, Vec<Diagnostic>) {
    let mut builder = builder::Builder::default();
    let outcomes = parse_all(&sources);
    let parsed: Vec<Arc<source::Parsed>> = outcomes
        .into_iter()
        .filter_map(|outcome| builder.keep_parsed(outcome))
        .map(Arc::new)
        .collect();
    assemble(sources, parsed, builder.diags, checks)
}

/// Parses every source; parsing is most of the start-up cost and files are
/// independent, so they are shared out over scoped threads, largest first
/// (the tables differ in size a hundredfold), and returned in `sources`'
/// order. Not rayon's global pool: a rule set is often built inside a
/// `OnceLock` initialiser, and rayon workers blocked on that lock (from
/// another caller's parallel loop) would never run the parse jobs the
/// initialiser waits for.
fn parse_all(sources: &[Source]) -> Vec<Result<source::Parsed, Diagnostic>> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let mut order: Vec<usize> = (0..sources.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sources[i].text.len()));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let worker = || {
        let mut done = Vec::new();
        loop {
            let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&index) = order.get(at) else {
                return done;
            };
            done.push((index, source::parse(&sources[index])));
        }
    };
    let mut parsed: Vec<(usize, Result<source::Parsed, Diagnostic>)> =
        std::thread::scope(|scope| {
            let workers: Vec<_> = (1..threads.min(sources.len()))
                .map(|_| scope.spawn(worker))
                .collect();
            let mut parsed = worker();
            for handle in workers {
                parsed.extend(
                    handle
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                );
            }
            parsed
        });
    parsed.sort_by_key(|(index, _)| *index);
    parsed.into_iter().map(|(_, outcome)| outcome).collect()
}

/// The set when the build found no problem, else every problem.
fn valid((set, diags): (RuleSet, Vec<Diagnostic>)) -> Result<RuleSet, RulesError> {
    if diags.is_empty() {
        Ok(set)
    } else {
        Err(RulesError::Invalid(diags))
    }
}

/// Compiles parsed files into a rule set. The parsed files are kept in the
/// set, so that layering a user file later parses only that file.
fn assemble(
    sources: Vec<Source>,
    parsed: Vec<Arc<source::Parsed>>,
    diags: Vec<Diagnostic>,
    checks: CrossChecks,
) -> (RuleSet, Vec<Diagnostic>) {
    let mut builder = builder::Builder::default();
    builder.diags = diags;
    for p in &parsed {
        builder.declare(p);
    }
    // Every rule at once: growing the list a doubling at a time copied
    // megabytes of rules and touched twice the memory.
    builder
        .set
        .rules
        .reserve(parsed.iter().map(|p| p.rule_count()).sum());
    for p in &parsed {
        builder.add_rules(p);
    }
    for p in &parsed {
        builder.add_enum_entries(p);
    }
    builder.finish();
    if checks == CrossChecks::Run {
        builder.cross_check(&parsed);
    }
    builder.set.sources = sources;
    builder.set.parsed = parsed;
    let mut diags = builder.diags;
    diags.sort_by(|a, b| (&a.location, a.kind).cmp(&(&b.location, b.kind)));
    (builder.set, diags)
}

/// The fingerprint of the tables made of `sources` that reports carry
/// (FNV-1a, 64 bits, over each file's name, priority and text): two runs
/// with the same fingerprint used the same tables. The built-in files alone
/// have theirs stored at build time.
pub fn sources_fingerprint(sources: &[Source]) -> u64 {
    if are_the_builtin_files(sources) {
        return embedded::BUILTIN_FINGERPRINT;
    }
    fingerprint_of(sources)
}

fn fingerprint_of(sources: &[Source]) -> u64 {
    let mut sorted: Vec<&Source> = sources.iter().collect();
    sorted.sort_by(|a, b| (&a.name, a.priority).cmp(&(&b.name, b.priority)));
    fingerprint::of_sorted(
        sorted
            .iter()
            .map(|s| (s.name.as_str(), s.priority, s.text.as_ref())),
    )
}

/// Whether `sources` are the embedded files, unchanged and in their order.
fn are_the_builtin_files(sources: &[Source]) -> bool {
    sources.len() == embedded::BUILTIN_FILES.len()
        && sources
            .iter()
            .zip(embedded::BUILTIN_FILES)
            .all(|(source, (name, text))| {
                let same_text = matches!(&source.text, Cow::Borrowed(t) if std::ptr::eq(*t, *text));
                source.builtin && source.priority == 0 && source.name == *name && same_text
            })
}

/// The JSON schema of a rule file (`mappings/schema.json`).
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(raw::RuleFile);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

impl RuleSet {
    /// The embedded `mappings/**/*.toml` files.
    pub fn builtin_sources() -> Vec<Source> {
        embedded::BUILTIN_FILES
            .iter()
            .map(|(name, text)| Source {
                name: (*name).to_owned(),
                text: Cow::Borrowed(*text),
                priority: 0,
                builtin: true,
            })
            .collect()
    }

    /// The built-in tables; fails if any file has a problem.
    pub fn builtin() -> Result<RuleSet, RulesError> {
        valid(build_checked(RuleSet::builtin_sources(), CrossChecks::Skip))
    }

    /// Builds from `sources`; fails listing every problem if there is one.
    pub fn from_sources(sources: Vec<Source>) -> Result<RuleSet, RulesError> {
        valid(build(sources))
    }

    /// Reads a user rule file as a source with `priority` (built-ins are 0;
    /// higher wins).
    pub fn user_source(path: &Path, priority: i32) -> Result<Source, RulesError> {
        let text = std::fs::read_to_string(path).map_err(|error| RulesError::Io {
            path: path.display().to_string(),
            error,
        })?;
        Ok(Source {
            name: path.display().to_string(),
            text: Cow::Owned(text),
            priority,
            builtin: false,
        })
    }

    /// This set with a user file layered over it. Only the user file is
    /// parsed; the files already in the set are recompiled from their parsed
    /// form.
    pub fn with_user_file(self, path: &Path, priority: i32) -> Result<RuleSet, RulesError> {
        let source = RuleSet::user_source(path, priority)?;
        let mut builder = builder::Builder::default();
        let Some(new) = builder.keep_parsed(source::parse(&source)) else {
            return Err(RulesError::Invalid(builder.diags));
        };
        let mut sources = self.sources;
        let mut parsed = self.parsed;
        sources.push(source);
        parsed.push(Arc::new(new));
        valid(assemble(sources, parsed, Vec::new(), CrossChecks::Run))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fingerprint stored at build time is what hashing the embedded
    /// files gives; any change to them is hashed, not answered from store.
    #[test]
    fn the_stored_builtin_fingerprint_is_the_computed_one() {
        let mut sources = RuleSet::builtin_sources();
        let stored = sources_fingerprint(&sources);
        assert_eq!(stored, fingerprint_of(&sources));
        if let Some(first) = sources.first_mut() {
            first.text = format!("{}\n", first.text).into();
        }
        assert_ne!(sources_fingerprint(&sources), stored);
        assert_eq!(sources_fingerprint(&sources), fingerprint_of(&sources));
        let mut reordered = RuleSet::builtin_sources();
        reordered.swap(0, 1);
        assert_eq!(
            sources_fingerprint(&reordered),
            stored,
            "order is the sort's"
        );
        let mut with_user = RuleSet::builtin_sources();
        with_user.push(Source {
            name: "mine.toml".into(),
            text: Cow::Borrowed(""),
            priority: 1,
            builtin: false,
        });
        assert_ne!(sources_fingerprint(&with_user), stored);
    }
}
