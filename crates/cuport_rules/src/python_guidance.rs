//! What a target offers PyTorch projects beyond `torch.*` itself: the
//! CUDA-only Python packages and their documented replacements
//! (`third_party.toml`), and precision and performance advice keyed to the
//! APIs and keyword arguments that trigger it (`advice.toml`). Both files
//! are hand-written, sit next to the generated support lists in
//! `mappings/<target>/api-support/`, and name a source for every entry.
use cuport_model::dotted_within;
use serde::Deserialize;

/// How far a target replaces a CUDA-only package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PackageStatus {
    /// A documented replacement covers it.
    Alternative,
    /// A documented replacement covers part of it.
    Partial,
    /// Nothing documented: port by hand.
    Manual,
}

impl PackageStatus {
    pub fn id(self) -> &'static str {
        match self {
            PackageStatus::Alternative => "alternative",
            PackageStatus::Partial => "partial",
            PackageStatus::Manual => "manual",
        }
    }
}

/// One API of a package with its own replacement (matched as a dotted
/// prefix of the used path).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackageApi {
    pub path: String,
    pub alternative: String,
    pub note: String,
    pub source: String,
}

/// A Python package that runs only on CUDA.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThirdPartyPackage {
    /// The import name (`flash_attn`), or a dotted sub-module (`numba.cuda`).
    pub module: String,
    pub pip: String,
    pub why: String,
    pub status: PackageStatus,
    pub alternative: String,
    pub note: String,
    pub source: String,
    #[serde(default)]
    pub api: Vec<PackageApi>,
}

impl ThirdPartyPackage {
    /// Whether a dotted path lies in this package (`flash_attn.x` in
    /// `flash_attn`, not `flash_attnx`).
    pub fn contains(&self, path: &str) -> bool {
        dotted_within(path, &self.module)
    }

    /// The most specific per-API entry for `path`.
    pub fn api_of(&self, path: &str) -> Option<&PackageApi> {
        self.api
            .iter()
            .filter(|a| dotted_within(path, &a.path))
            .max_by_key(|a| a.path.len())
    }
}

/// Whether advice is about results or about speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AdviceKind {
    Precision,
    Performance,
}

impl AdviceKind {
    pub fn id(self) -> &'static str {
        match self {
            AdviceKind::Precision => "precision",
            AdviceKind::Performance => "performance",
        }
    }
}

/// One piece of advice and what triggers it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdviceRule {
    /// Stable within the target (`fp64`).
    pub id: String,
    pub kind: AdviceKind,
    /// Resolved PyTorch paths whose use triggers it.
    #[serde(default)]
    pub apis: Vec<String>,
    /// Keyword-argument names whose use in any call triggers it.
    #[serde(default)]
    pub keywords: Vec<String>,
    pub advice: String,
    pub source: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PackagesFile {
    #[serde(default)]
    package: Vec<ThirdPartyPackage>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AdviceFile {
    #[serde(default)]
    advice: Vec<AdviceRule>,
}

/// A target's package table and advice rules.
#[derive(Debug, Default)]
pub struct PythonGuidance {
    pub packages: Vec<ThirdPartyPackage>,
    pub advice: Vec<AdviceRule>,
}

impl PythonGuidance {
    /// Reads `third_party.toml` and `advice.toml` of a support-list folder
    /// (either may be absent). `file` finds an embedded file by name.
    pub(crate) fn load(
        dir: &str,
        file: &dyn Fn(&str) -> Option<&'static str>,
    ) -> Result<PythonGuidance, (String, String)> {
        let packages_name = format!("{dir}/third_party.toml");
        let packages: PackagesFile = parse(&packages_name, file)?;
        let advice_name = format!("{dir}/advice.toml");
        let advice: AdviceFile = parse(&advice_name, file)?;
        let guidance = PythonGuidance {
            packages: packages.package,
            advice: advice.advice,
        };
        guidance.check().map_err(|m| (advice_name, m))?;
        Ok(guidance)
    }

    /// Ids are unique and every entry says where it comes from.
    fn check(&self) -> Result<(), String> {
        let mut ids = rustc_hash::FxHashSet::default();
        for rule in &self.advice {
            if !ids.insert(rule.id.as_str()) {
                return Err(format!("advice `{}` is defined twice", rule.id));
            }
            if rule.apis.is_empty() && rule.keywords.is_empty() {
                return Err(format!("advice `{}` has no apis and no keywords", rule.id));
            }
        }
        let unsourced = self
            .packages
            .iter()
            .map(|p| (&p.module, &p.source))
            .chain(self.advice.iter().map(|a| (&a.id, &a.source)))
            .find(|(_, source)| source.trim().is_empty());
        match unsourced {
            Some((name, _)) => Err(format!("`{name}` names no source")),
            None => Ok(()),
        }
    }

    /// The package a dotted path lies in (the most specific module).
    pub fn package_of(&self, path: &str) -> Option<&ThirdPartyPackage> {
        self.packages
            .iter()
            .filter(|p| p.contains(path))
            .max_by_key(|p| p.module.len())
    }

    /// Every API path some advice is keyed to.
    pub fn advice_apis(&self) -> impl Iterator<Item = &str> {
        self.advice
            .iter()
            .flat_map(|a| a.apis.iter().map(String::as_str))
    }

    /// Every keyword name some advice is keyed to.
    pub fn advice_keywords(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .advice
            .iter()
            .flat_map(|a| a.keywords.iter().cloned())
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

fn parse<T: Default + serde::de::DeserializeOwned>(
    name: &str,
    file: &dyn Fn(&str) -> Option<&'static str>,
) -> Result<T, (String, String)> {
    match file(name) {
        None => Ok(T::default()),
        Some(text) => toml::from_str(text).map_err(|e| (name.to_owned(), e.to_string())),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::api_support::SupportLists;
    use cuport_model::Target;

    #[test]
    fn both_targets_have_sourced_packages_and_advice() {
        for target in [Target::Ascend, Target::Mlu] {
            let guidance = SupportLists::builtin(target).expect("loads").guidance;
            for module in [
                "flash_attn",
                "apex",
                "xformers",
                "bitsandbytes",
                "deepspeed",
                "triton",
                "cupy",
            ] {
                let package = guidance
                    .package_of(&format!("{module}.something"))
                    .unwrap_or_else(|| panic!("{target}: {module} listed"));
                assert_eq!(package.module, module);
                let manual = package.status == PackageStatus::Manual;
                assert_eq!(manual, package.alternative.is_empty(), "{target} {module}");
            }
            assert!(guidance.package_of("flash_attnx").is_none());
            assert!(
                guidance.package_of("numba.jit").is_none(),
                "only numba.cuda is CUDA-only"
            );
            assert!(guidance.package_of("numba.cuda.jit").is_some());
            assert!(guidance.advice.len() >= 8, "{target}");
            for rule in &guidance.advice {
                assert!(
                    rule.apis.iter().all(|a| a.starts_with("torch.")),
                    "{target} {}: resolved torch paths only",
                    rule.id
                );
            }
            assert!(guidance
                .advice_keywords()
                .contains(&"pin_memory".to_owned()));
        }
    }

    #[test]
    fn the_most_specific_api_entry_wins() {
        let guidance = SupportLists::builtin(Target::Ascend).unwrap().guidance;
        let apex = guidance.package_of("apex.optimizers.FusedAdam").unwrap();
        let api = apex
            .api_of("apex.optimizers.FusedAdam")
            .expect("apex.optimizers entry");
        assert!(api.path.starts_with("apex.optimizers"));
        assert!(apex.api_of("apex.optimizersx").is_none());
    }

    #[test]
    fn an_entry_without_a_source_is_refused() {
        let text = "[[advice]]\nid = \"x\"\nkind = \"precision\"\napis = [\"torch.x\"]\nadvice = \"a\"\nsource = \" \"\n";
        let file = |name: &str| name.ends_with("advice.toml").then_some(text);
        let error = PythonGuidance::load("d", &file).unwrap_err();
        assert_eq!(error.0, "d/advice.toml");
        assert!(error.1.contains("names no source"), "{}", error.1);
    }
}
