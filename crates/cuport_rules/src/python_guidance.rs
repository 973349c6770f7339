//! What a target offers projects beyond `torch.*` itself: the CUDA-only
//! Python packages and their documented replacements (`third_party.toml`),
//! and precision, performance and porting advice keyed to the APIs and
//! keyword arguments of Python code, or to the CUDA libraries C/C++/CUDA
//! code uses, that trigger it (`advice.toml`). Both files are hand-written,
//! sit next to the generated support lists in
//! `mappings/<target>/api-support/`, and name a source for every entry; an
//! entry may also name the vendor operators behind its alternative
//! (`operators`, with `operators_source`). A defect is reported as
//! `file:line: message`.
use cuport_model::{dotted_within, Library, LineIndex};
use serde::Deserialize;
use toml::Spanned;

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
    /// The vendor operators the alternative runs (`aclnnFlashAttentionScore`).
    #[serde(default)]
    pub operators: Vec<String>,
    /// Where the vendor says the alternative runs `operators`.
    #[serde(default)]
    pub operators_source: String,
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
    /// The vendor operators the alternative runs.
    #[serde(default)]
    pub operators: Vec<String>,
    #[serde(default)]
    pub operators_source: String,
    #[serde(default)]
    pub api: Vec<Spanned<PackageApi>>,
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
            .map(Spanned::get_ref)
            .filter(|a| dotted_within(path, &a.path))
            .max_by_key(|a| a.path.len())
    }
}

/// Whether advice is about results, about speed, or about the route a
/// port can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AdviceKind {
    Precision,
    Performance,
    /// Which target library or `cuport migrate` option a port can use.
    Porting,
}

impl AdviceKind {
    pub const ALL: [AdviceKind; 3] = [
        AdviceKind::Precision,
        AdviceKind::Performance,
        AdviceKind::Porting,
    ];

    pub fn id(self) -> &'static str {
        match self {
            AdviceKind::Precision => "precision",
            AdviceKind::Performance => "performance",
            AdviceKind::Porting => "porting",
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
    /// CUDA libraries whose use in C, C++ or CUDA sources (a call, type,
    /// constant or include of the library) triggers it, once per file.
    #[serde(default)]
    pub libraries: Vec<Library>,
    pub advice: String,
    pub source: String,
    /// The vendor operators the advice names.
    #[serde(default)]
    pub operators: Vec<String>,
    #[serde(default)]
    pub operators_source: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PackagesFile {
    #[serde(default)]
    package: Vec<Spanned<ThirdPartyPackage>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AdviceFile {
    #[serde(default)]
    advice: Vec<Spanned<AdviceRule>>,
}

/// One entry's defect: the byte offset of the entry and what is wrong.
type Defect = (usize, String);

/// A target's package table and advice rules.
#[derive(Debug, Default)]
pub struct PythonGuidance {
    pub packages: Vec<ThirdPartyPackage>,
    pub advice: Vec<AdviceRule>,
}

impl PythonGuidance {
    /// Reads `third_party.toml` and `advice.toml` of a support-list folder
    /// (either may be absent). `file` finds an embedded file by name. The
    /// error names the file and, for a defect of an entry, its line
    /// (`dir/advice.toml:12`).
    pub(crate) fn load(
        dir: &str,
        file: &dyn Fn(&str) -> Option<&'static str>,
    ) -> Result<PythonGuidance, (String, String)> {
        let packages_name = format!("{dir}/third_party.toml");
        let packages: PackagesFile = parse(&packages_name, file)?;
        let at_line = |name: &str, (offset, message): Defect| {
            let text = file(name).unwrap_or_default();
            let line = LineIndex::new(text.as_bytes()).line_col(offset).line;
            (format!("{name}:{line}"), message)
        };
        check_packages(&packages.package).map_err(|d| at_line(&packages_name, d))?;
        let advice_name = format!("{dir}/advice.toml");
        let advice: AdviceFile = parse(&advice_name, file)?;
        check_advice(&advice.advice).map_err(|d| at_line(&advice_name, d))?;
        Ok(PythonGuidance {
            packages: packages
                .package
                .into_iter()
                .map(Spanned::into_inner)
                .collect(),
            advice: advice.advice.into_iter().map(Spanned::into_inner).collect(),
        })
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

/// Every package and per-API entry names a source, and its operators are
/// well formed.
fn check_packages(packages: &[Spanned<ThirdPartyPackage>]) -> Result<(), Defect> {
    for spanned in packages {
        let package = spanned.get_ref();
        let at = spanned.span().start;
        sourced(at, &package.module, &package.source)?;
        operators_ok(
            at,
            &package.module,
            &package.operators,
            &package.operators_source,
        )?;
        for api in &package.api {
            let (at, api) = (api.span().start, api.get_ref());
            sourced(at, &api.path, &api.source)?;
            operators_ok(at, &api.path, &api.operators, &api.operators_source)?;
        }
    }
    Ok(())
}

/// Ids are unique, every rule has a trigger and a source, and its operators
/// are well formed.
fn check_advice(advice: &[Spanned<AdviceRule>]) -> Result<(), Defect> {
    let mut ids = rustc_hash::FxHashSet::default();
    for spanned in advice {
        let (at, rule) = (spanned.span().start, spanned.get_ref());
        if !ids.insert(rule.id.as_str()) {
            return Err((at, format!("advice `{}` is defined twice", rule.id)));
        }
        if rule.apis.is_empty() && rule.keywords.is_empty() && rule.libraries.is_empty() {
            return Err((
                at,
                format!(
                    "advice `{}` has no apis, no keywords and no libraries",
                    rule.id
                ),
            ));
        }
        sourced(at, &rule.id, &rule.source)?;
        operators_ok(at, &rule.id, &rule.operators, &rule.operators_source)?;
    }
    Ok(())
}

fn sourced(at: usize, name: &str, source: &str) -> Result<(), Defect> {
    if source.trim().is_empty() {
        return Err((at, format!("`{name}` names no source")));
    }
    Ok(())
}

/// Operators are aclnn names (`aclnnRmsNorm`), listed once, with a source
/// of their own; a source without operators is a slip too.
fn operators_ok(at: usize, name: &str, operators: &[String], source: &str) -> Result<(), Defect> {
    let mut seen = rustc_hash::FxHashSet::default();
    for op in operators {
        let well_formed = op
            .strip_prefix("aclnn")
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()))
            && op.chars().all(|c| c.is_ascii_alphanumeric());
        if !well_formed {
            return Err((
                at,
                format!("`{name}`: operator `{op}` is not an aclnn operator name (aclnnXxx)"),
            ));
        }
        if !seen.insert(op.as_str()) {
            return Err((at, format!("`{name}`: operator `{op}` is listed twice")));
        }
    }
    match (operators.is_empty(), source.trim().is_empty()) {
        (false, true) => Err((
            at,
            format!("`{name}` names operators but no operators_source"),
        )),
        (true, false) => Err((
            at,
            format!("`{name}` has an operators_source but no operators"),
        )),
        _ => Ok(()),
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
    use cuport_model::{Library, Target};

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
    fn an_entry_without_a_source_is_refused_at_its_line() {
        let text = "# c\n[[advice]]\nid = \"x\"\nkind = \"precision\"\napis = [\"torch.x\"]\nadvice = \"a\"\nsource = \" \"\n";
        let file = |name: &str| name.ends_with("advice.toml").then_some(text);
        let error = PythonGuidance::load("d", &file).unwrap_err();
        assert_eq!(error.0, "d/advice.toml:2");
        assert!(error.1.contains("names no source"), "{}", error.1);
    }

    /// Loads `text` as `d/<name>` and returns the error, `file:line: message`.
    fn refused(name: &str, text: &'static str) -> String {
        let file = move |n: &str| n.ends_with(name).then_some(text);
        let (file, message) = PythonGuidance::load("d", &file).unwrap_err();
        format!("{file}: {message}")
    }

    #[test]
    fn operator_defects_are_reported_where_they_are() {
        let rule = |extra: &str| {
            let text = format!(
                "[[advice]]\nid = \"ok\"\nkind = \"porting\"\nlibraries = [\"cublas\"]\nadvice = \"a\"\nsource = \"s\"\n\n[[advice]]\nid = \"x\"\nkind = \"performance\"\napis = [\"torch.x\"]\nadvice = \"a\"\nsource = \"s\"\n{extra}"
            );
            refused("advice.toml", Box::leak(text.into_boxed_str()))
        };
        let bad_name = rule("operators = [\"FlashAttentionScore\"]\noperators_source = \"s\"\n");
        assert!(
            bad_name.starts_with("d/advice.toml:8: `x`: operator `FlashAttentionScore` is not an aclnn operator name"),
            "{bad_name}"
        );
        let twice = rule("operators = [\"aclnnMm\", \"aclnnMm\"]\noperators_source = \"s\"\n");
        assert!(twice.contains("listed twice"), "{twice}");
        let unsourced = rule("operators = [\"aclnnMm\"]\n");
        assert_eq!(
            unsourced,
            "d/advice.toml:8: `x` names operators but no operators_source"
        );
        let orphan = rule("operators_source = \"s\"\n");
        assert!(orphan.contains("no operators"), "{orphan}");
        let library = rule("libraries = [\"cublas-xt\"]\n");
        assert!(library.contains("cublas-xt"), "{library}");
        let package = refused(
            "third_party.toml",
            "[[package]]\nmodule = \"m\"\npip = \"m\"\nwhy = \"w\"\nstatus = \"partial\"\nalternative = \"a\"\nnote = \"n\"\nsource = \"s\"\n\n[[package.api]]\npath = \"m.f\"\nalternative = \"a\"\nnote = \"n\"\nsource = \"s\"\noperators = [\"aclnn_rms_norm\"]\noperators_source = \"s\"\n",
        );
        assert!(
            package.starts_with("d/third_party.toml:10: `m.f`: operator `aclnn_rms_norm`"),
            "{package}"
        );
    }

    #[test]
    fn ascend_names_the_blas_routes_and_the_operators_behind_alternatives() {
        let guidance = SupportLists::builtin(Target::Ascend).unwrap().guidance;
        let blas: Vec<&AdviceRule> = guidance
            .advice
            .iter()
            .filter(|a| a.libraries.contains(&Library::Cublas))
            .collect();
        assert_eq!(blas.len(), 1, "one porting rule for cuBLAS");
        let rule = blas[0];
        assert_eq!(rule.kind, AdviceKind::Porting);
        assert!(rule.libraries.contains(&Library::CublasLt));
        for needle in [
            "--ascend-blas aclblas",
            "cann_ops_blas.h",
            "unconfirmed",
            "aclnn",
        ] {
            assert!(rule.advice.contains(needle), "{needle}: {}", rule.advice);
        }
        assert!(rule.source.contains("cann_ops_blas.h"), "{}", rule.source);
        let flash = guidance
            .package_of("flash_attn.flash_attn_func")
            .and_then(|p| p.api_of("flash_attn.flash_attn_func"))
            .unwrap();
        assert!(flash
            .operators
            .contains(&"aclnnFlashAttentionScore".to_owned()));
        assert!(flash.operators_source.contains("Ascend/op-plugin"));
        let rms = guidance
            .package_of("apex.normalization.FusedRMSNorm")
            .and_then(|p| p.api_of("apex.normalization.FusedRMSNorm"))
            .unwrap();
        assert_eq!(rms.operators, ["aclnnRmsNorm"]);
    }
}
