//! Run metadata: which cuport, which rule tables, which target and options,
//! and when. The time is RFC 3339 UTC, computed with std only.
use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use cuport_model::Target;
use cuport_rules::{RuleSet, Source};
use serde::{Deserialize, Serialize};

/// How a migration was run; stored as the `run` section of report.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunMeta {
    pub cuport_version: String,
    pub target: Target,
    pub rules: RulesInfo,
    /// The options that shaped the output (`annotate`, `dual-stack`, ...),
    /// as the command line spelled them.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// When the report was made, RFC 3339 in UTC (`2026-12-02T12:00:00Z`).
    pub generated_at: String,
    /// Whether the run wrote its output (`--out`, `--in-place`, `-o`) or
    /// only showed what it would write.
    #[serde(default)]
    pub written: bool,
}

/// Identifies the rule tables a migration used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RulesInfo {
    /// A release version of the tables, when they carry one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `fnv1a64:` and 16 hex digits over every source's name, priority and
    /// text: two runs with the same hash used the same tables.
    pub hash: String,
    /// Number of rule files (built-in and user).
    pub files: usize,
    /// Names of user rule files layered over the built-in tables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_files: Vec<String>,
}

impl RulesInfo {
    /// The tables made of `sources` (pass `RuleSet::sources()`).
    pub fn of_sources(sources: &[Source]) -> Self {
        let mut user_files: Vec<&Source> = sources.iter().filter(|s| !s.builtin).collect();
        user_files.sort_by(|a, b| (&a.name, a.priority).cmp(&(&b.name, b.priority)));
        Self {
            version: None,
            hash: format!(
                "fnv1a64:{:016x}",
                cuport_rules::sources_fingerprint(sources)
            ),
            files: sources.len(),
            user_files: user_files.iter().map(|s| s.name.clone()).collect(),
        }
    }

    /// The embedded tables alone.
    pub fn builtin() -> Self {
        Self::of_sources(&RuleSet::builtin_sources())
    }
}

impl RunMeta {
    /// What the run ported to, as a heading says it: the target, or for a
    /// dual-stack run CUDA plus its targets.
    pub fn describe_target(&self) -> String {
        match self.dual_targets() {
            Some(targets) => format!("dual-stack (CUDA + {targets})"),
            None => self.target.to_string(),
        }
    }

    /// A dual-stack run's targets as a heading lists them (`ascend, hip`);
    /// none for a one-way port.
    pub fn dual_targets(&self) -> Option<String> {
        self.options.get("dual").map(|t| t.replace(',', ", "))
    }

    /// Records whether the run wrote its output.
    pub fn with_written(mut self, written: bool) -> Self {
        self.written = written;
        self
    }

    /// Metadata for a run now, with this cuport's version and no options.
    pub fn new(target: Target, rules: RulesInfo) -> Self {
        Self {
            cuport_version: env!("CARGO_PKG_VERSION").to_owned(),
            target,
            rules,
            options: BTreeMap::new(),
            generated_at: rfc3339(SystemTime::now()),
            written: false,
        }
    }

    /// Records one option (`with_option("annotate", "true")`).
    pub fn with_option(mut self, name: &str, value: impl ToString) -> Self {
        self.options.insert(name.to_owned(), value.to_string());
        self
    }
}

/// `time` as RFC 3339 in UTC, whole seconds; times before 1970 clamp to it.
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rest = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn formats_known_instants() {
        let at = |secs| rfc3339(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_798_761_599), "2026-12-31T23:59:59Z");
        assert_eq!(at(4_107_542_400), "2100-03-01T00:00:00Z");
    }

    #[test]
    fn the_hash_changes_with_any_source_text() {
        let mut sources = RuleSet::builtin_sources();
        let before = RulesInfo::of_sources(&sources);
        assert_eq!(before, RulesInfo::builtin());
        assert!(before.hash.starts_with("fnv1a64:") && before.hash.len() == 24);
        if let Some(first) = sources.first_mut() {
            first.text = format!("{}\n", first.text).into();
        }
        assert_ne!(RulesInfo::of_sources(&sources).hash, before.hash);
    }
}
