//! Resolved migrate settings: command-line flags over `cuport.toml` over
//! defaults, each value remembering where it came from.
use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use cuport_analyze::{ScanReport, SkippedFile};
use cuport_model::{KernelModel, SdkVersion, Target};
use cuport_rewrite::{HipLaunch, MigrateOptions, Mode};
use cuport_rules::kernel_rules::{load_kernel_rules, KernelRule, OperatorTable};
use cuport_rules::{Flavour, RuleSet};
use serde::Deserialize;

pub(crate) const CONFIG_FILE: &str = "cuport.toml";

/// What the command line said, in the settings' own terms (the CLI's
/// argument types stay in `migrate_args`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Flags {
    pub(crate) path: PathBuf,
    pub(crate) to: Vec<Target>,
    pub(crate) dual: bool,
    pub(crate) exclude: Vec<String>,
    pub(crate) rules: Vec<PathBuf>,
    pub(crate) hip_kernel_launch: Option<HipLaunch>,
    pub(crate) hip_libs: Option<Flavour>,
    pub(crate) ascend_blas: Option<Flavour>,
    pub(crate) annotate: bool,
    pub(crate) hip_arch: Vec<String>,
    /// `(flag, version)` as given: `("cann-version", "8.2.RC1")`.
    pub(crate) sdk_versions: Vec<(String, String)>,
    /// `(flag, model)` as given: `("ascend-kernels", "simt")`.
    pub(crate) kernel_models: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub(crate) struct Setting<T> {
    pub(crate) value: T,
    pub(crate) source: String,
}

impl<T> Setting<T> {
    fn new(value: T, source: impl Into<String>) -> Self {
        Self {
            value,
            source: source.into(),
        }
    }
}

#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) config: Option<PathBuf>,
    /// The first target (the one-way target).
    pub(crate) target: Setting<Target>,
    /// Every target (several only with --dual).
    pub(crate) targets: Setting<Vec<Target>>,
    pub(crate) dual: Setting<bool>,
    pub(crate) excludes: Setting<Vec<String>>,
    pub(crate) ignore: Setting<Vec<String>>,
    pub(crate) rules: Setting<Vec<PathBuf>>,
    pub(crate) hip_launch: Setting<HipLaunch>,
    pub(crate) hip_libs: Setting<Flavour>,
    /// cuBLAS/cuBLASLt on Ascend: aclnn helpers (default) or ops-blas.
    pub(crate) ascend_blas: Setting<Flavour>,
    /// AMD GPU architectures build files name (empty: the HIP profile's).
    pub(crate) hip_arch: Setting<Vec<String>>,
    pub(crate) annotate: Setting<bool>,
    /// The SDK release each target's port is made for, where one was chosen.
    pub(crate) sdk_versions: Vec<(Target, Setting<SdkVersion>)>,
    /// The kernel model each target's port uses, where one was chosen.
    pub(crate) kernel_models: Vec<(Target, Setting<KernelModel>)>,
    /// The `[[kernel]]` rules of the rule files.
    pub(crate) kernel_rules: Vec<KernelRule>,
    /// The rule files that hold only `[[kernel]]` rules.
    pub(crate) kernel_only_files: Vec<PathBuf>,
}

/// `[migrate]` in `cuport.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct ConfigFile {
    #[serde(default)]
    migrate: MigrateConfig,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct MigrateConfig {
    target: Option<String>,
    dual: Option<bool>,
    #[serde(default)]
    exclude: Vec<String>,
    /// Files (globs) that are analysed but never rewritten.
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    rules: Vec<PathBuf>,
    hip_kernel_launch: Option<String>,
    hip_libs: Option<String>,
    ascend_blas: Option<String>,
    hip_arch: Option<Vec<String>>,
    annotate: Option<bool>,
    #[serde(alias = "cann_version")]
    cann_version: Option<String>,
    #[serde(alias = "rocm_version")]
    rocm_version: Option<String>,
    #[serde(alias = "ascend_kernels")]
    ascend_kernels: Option<String>,
}

pub(crate) fn resolve(args: &Flags) -> anyhow::Result<Settings> {
    let config_path = config_path(&args.path);
    let config = match &config_path {
        Some(path) => read_config(path)?,
        None => ConfigFile::default(),
    }
    .migrate;
    let from_file = |key: &str| {
        config_path
            .as_ref()
            .map_or_else(String::new, |p| format!("{} ({key})", p.display()))
    };
    let config_dir = config_path
        .as_ref()
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let targets = resolve_targets(args, &config, &from_file)?;
    let sdk_versions = resolve_sdk_versions(args, &config, &targets.value, &from_file)?;
    let kernel_models =
        resolve_kernel_models(args, &config, &targets.value, &sdk_versions, &from_file)?;
    let mut settings = Settings {
        sdk_versions,
        kernel_models,
        target: Setting::new(
            targets.value.first().copied().unwrap_or(Target::Hip),
            targets.source.clone(),
        ),
        targets,
        dual: if args.dual {
            Setting::new(true, "--dual")
        } else {
            config.dual.map_or_else(
                || Setting::new(false, "default"),
                |v| Setting::new(v, from_file("dual")),
            )
        },
        excludes: merge_list(
            &args.exclude,
            config.exclude,
            "--exclude",
            &from_file("exclude"),
        ),
        ignore: {
            let source = if config.ignore.is_empty() {
                "default".to_owned()
            } else {
                from_file("ignore")
            };
            ignore_globs(&config.ignore, &source)?;
            Setting::new(config.ignore, source)
        },
        rules: {
            let mut rules: Vec<PathBuf> = config.rules.iter().map(|r| config_dir.join(r)).collect();
            let source = if args.rules.is_empty() {
                from_file("rules")
            } else {
                "--rules (after cuport.toml's)".into()
            };
            rules.extend(args.rules.iter().cloned());
            Setting::new(rules, source)
        },
        hip_launch: resolve_launch(args, config.hip_kernel_launch.as_deref(), &from_file)?,
        hip_libs: resolve_flavour(
            &HIP_LIBS,
            args.hip_libs,
            config.hip_libs.as_deref(),
            &from_file,
        )?,
        ascend_blas: resolve_flavour(
            &ASCEND_BLAS,
            args.ascend_blas,
            config.ascend_blas.as_deref(),
            &from_file,
        )?,
        hip_arch: resolve_hip_arch(args, config.hip_arch.clone(), &from_file)?,
        annotate: if args.annotate {
            Setting::new(true, "--annotate")
        } else {
            config.annotate.map_or_else(
                || Setting::new(false, "default"),
                |v| Setting::new(v, from_file("annotate")),
            )
        },
        config: config_path,
        kernel_rules: Vec::new(),
        kernel_only_files: Vec::new(),
    };
    (settings.kernel_rules, settings.kernel_only_files) = kernel_rules_in(&settings.rules.value)?;
    Ok(settings)
}

/// The `[[kernel]]` rules of the rule files (`cuport kernels` writes such
/// files; a mapping rule file may hold some too). A problem in any of them
/// stops the run, with its file:line:column.
/// Also the files that hold nothing else, which the mapping rule loader
/// does not read.
fn kernel_rules_in(files: &[PathBuf]) -> anyhow::Result<(Vec<KernelRule>, Vec<PathBuf>)> {
    let mut rules = Vec::new();
    let mut kernel_only = Vec::new();
    for path in files {
        let Some(text) = rule_file_with_kernels(path)? else {
            continue;
        };
        if text.only_kernels {
            kernel_only.push(path.clone());
        }
        let target = text.target;
        let (table, _) = OperatorTable::builtin(&target);
        let (found, problems) = load_kernel_rules(&path.display().to_string(), &text.text, &table);
        if let Some(first) = problems.first() {
            bail!("{first}; fix the rule, or regenerate the file with `cuport kernels`");
        }
        rules.extend(found);
    }
    Ok((rules, kernel_only))
}

/// A rule file's text, when it has `[[kernel]]` entries, and the target
/// they name (`ascend` where none says).
struct KernelRuleFile {
    text: String,
    target: String,
    /// No `[meta]`: only `[[kernel]]` rules.
    only_kernels: bool,
}

fn rule_file_with_kernels(path: &Path) -> anyhow::Result<Option<KernelRuleFile>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read rule file {}; check the path given to --rules or in cuport.toml",
            path.display()
        )
    })?;
    let table: toml::Table = match toml::from_str(&text) {
        Ok(table) => table,
        // The rule loader reports the syntax error with its line.
        Err(_) => return Ok(None),
    };
    let Some(kernels) = table.get("kernel").and_then(toml::Value::as_array) else {
        return Ok(None);
    };
    let target = kernels
        .iter()
        .find_map(|k| k.get("target").and_then(toml::Value::as_str))
        .unwrap_or("ascend")
        .to_owned();
    let only_kernels = !table.contains_key("meta");
    Ok(Some(KernelRuleFile {
        text,
        target,
        only_kernels,
    }))
}

/// The `ignore` globs compiled; a pattern that is not a glob is an error
/// naming where it was set, never dropped.
fn ignore_globs(globs: &[String], source: &str) -> anyhow::Result<globset::GlobSet> {
    let mut builder = globset::GlobSetBuilder::new();
    for glob in globs {
        let compiled = globset::Glob::new(glob).map_err(|e| {
            anyhow::anyhow!("{source}: {glob:?} is not a valid glob ({e}); fix the pattern (`*`, `**`, `?`, `[...]`, `{{a,b}}`)")
        })?;
        builder.add(compiled);
    }
    builder.build().map_err(|e| {
        anyhow::anyhow!("{source}: the ignore globs do not build ({e}); fix the patterns")
    })
}

/// `--hip-arch`, else `hip-arch` in cuport.toml, else none (the profile's
/// default); every name must be an AMD GPU target (`gfx90a`,
/// `gfx90a:xnack+`).
fn resolve_hip_arch(
    args: &Flags,
    config: Option<Vec<String>>,
    from_file: &dyn Fn(&str) -> String,
) -> anyhow::Result<Setting<Vec<String>>> {
    let setting = match (args.hip_arch.is_empty(), config) {
        (false, _) => Setting::new(args.hip_arch.clone(), "--hip-arch"),
        (true, Some(list)) => Setting::new(list, from_file("hip-arch")),
        (true, None) => Setting::new(Vec::new(), "default"),
    };
    for name in &setting.value {
        let (gpu, features) = name.split_once(':').unwrap_or((name, ""));
        let valid_gpu = gpu
            .strip_prefix("gfx")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_hexdigit()));
        let valid_features = features
            .split(':')
            .all(|f| f.is_empty() || f.ends_with(['+', '-']));
        if !valid_gpu || !valid_features {
            anyhow::bail!(
                "`{name}` (from {}) is not an AMD GPU architecture; write names such as gfx90a, gfx942 or gfx1100",
                setting.source
            );
        }
    }
    Ok(setting)
}

fn config_path(path: &Path) -> Option<PathBuf> {
    let dir = if path.is_dir() { path } else { path.parent()? };
    let candidate = dir.join(CONFIG_FILE);
    candidate.is_file().then_some(candidate)
}

fn read_config(path: &Path) -> anyhow::Result<ConfigFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    toml::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: {e}fix or remove the file; keys are documented in `cuport migrate --help`",
            path.display()
        )
    })
}

fn resolve_targets(
    args: &Flags,
    config: &MigrateConfig,
    from_file: &dyn Fn(&str) -> String,
) -> anyhow::Result<Setting<Vec<Target>>> {
    if !args.to.is_empty() {
        let mut targets: Vec<Target> = Vec::new();
        for &target in &args.to {
            if !targets.contains(&target) {
                targets.push(target);
            }
        }
        return Ok(Setting::new(targets, "--to"));
    }
    let Some(ids) = &config.target else {
        bail!(
            "no target: pass --to {} or set `target` under [migrate] in {CONFIG_FILE}",
            Target::ids_text()
        );
    };
    let mut targets = Vec::new();
    for id in ids.split(',').map(str::trim) {
        let Some(target) = Target::from_id(id) else {
            bail!(
                "{}: unknown target {id:?}; use {} (comma-separated with dual = true)",
                from_file("target"),
                Target::ids_text()
            );
        };
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    Ok(Setting::new(targets, from_file("target")))
}

/// `--cann-version` / `--rocm-version` (or their cuport.toml keys) for the
/// target whose profile names that flag; a version for a target the run
/// does not migrate to, or older than the oldest supported, is an error.
fn resolve_sdk_versions(
    args: &Flags,
    config: &MigrateConfig,
    targets: &[Target],
    from_file: &dyn Fn(&str) -> String,
) -> anyhow::Result<Vec<(Target, Setting<SdkVersion>)>> {
    let configured = [
        ("cann-version", config.cann_version.as_ref()),
        ("rocm-version", config.rocm_version.as_ref()),
    ];
    let mut chosen: Vec<(String, String, String)> = args
        .sdk_versions
        .iter()
        .map(|(flag, value)| (flag.clone(), value.clone(), format!("--{flag}")))
        .collect();
    for (key, value) in configured {
        let given = chosen.iter().any(|(flag, _, _)| flag == key);
        if let (Some(value), false) = (value, given) {
            chosen.push((key.to_owned(), value.clone(), from_file(key)));
        }
    }
    let mut resolved = Vec::new();
    for (flag, value, source) in chosen {
        let Some(target) = Target::ALL
            .iter()
            .copied()
            .find(|t| t.profile().versions.flag.as_deref() == Some(flag.as_str()))
        else {
            bail!("{source}: no target takes this setting (a cuport bug; please report it)");
        };
        if !targets.contains(&target) {
            bail!(
                "{source}: {flag} is for --to {target}, but this run migrates to {}; remove it or add {target} to the targets",
                targets.iter().map(|t| t.id()).collect::<Vec<_>>().join(", ")
            );
        }
        let version = SdkVersion::parse(&value).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
        let versions = &target.profile().versions;
        let product = versions.product.as_deref().unwrap_or("SDK");
        if let Some(oldest) = versions.oldest {
            if version < oldest {
                bail!("{source}: {product} {version} is older than the oldest release cuport ports to ({product} {oldest}); choose {oldest} or newer");
            }
        }
        resolved.push((target, Setting::new(version, source)));
    }
    Ok(resolved)
}

/// `--ascend-kernels` (or its cuport.toml key) for the target whose
/// profile has that SIMT flag. The SIMT model needs the target in the run
/// and an SDK release that has it (the one chosen, else the default).
fn resolve_kernel_models(
    args: &Flags,
    config: &MigrateConfig,
    targets: &[Target],
    sdk_versions: &[(Target, Setting<SdkVersion>)],
    from_file: &dyn Fn(&str) -> String,
) -> anyhow::Result<Vec<(Target, Setting<KernelModel>)>> {
    let mut chosen: Vec<(String, String, String)> = args
        .kernel_models
        .iter()
        .map(|(flag, value)| (flag.clone(), value.clone(), format!("--{flag}")))
        .collect();
    if let (Some(value), true) = (&config.ascend_kernels, chosen.is_empty()) {
        let key = "ascend-kernels";
        chosen.push((key.to_owned(), value.clone(), from_file(key)));
    }
    let mut resolved = Vec::new();
    for (flag, value, source) in chosen {
        let Some((target, simt)) = Target::ALL.iter().find_map(|t| {
            let simt = t.profile().kernels.simt.as_ref()?;
            (simt.flag == flag).then_some((*t, simt))
        }) else {
            bail!("{source}: no target takes this setting (a cuport bug; please report it)");
        };
        let Some(model) = target.profile().kernel_model_named(&value) else {
            bail!(
                "{source}: unknown value {value:?}; use simt or {}",
                simt.default_value
            );
        };
        if !targets.contains(&target) {
            bail!(
                "{source}: {flag} is for --to {target}, but this run migrates to {}; remove it or add {target} to the targets",
                targets.iter().map(|t| t.id()).collect::<Vec<_>>().join(", ")
            );
        }
        if model == KernelModel::Simt {
            check_simt_release(target, simt, sdk_versions, &source)?;
        }
        resolved.push((target, Setting::new(model, source)));
    }
    Ok(resolved)
}

/// The SIMT model exists only from its `since` release on.
fn check_simt_release(
    target: Target,
    simt: &cuport_model::SimtFacts,
    sdk_versions: &[(Target, Setting<SdkVersion>)],
    source: &str,
) -> anyhow::Result<()> {
    let versions = &target.profile().versions;
    let selected = sdk_versions
        .iter()
        .find(|(t, _)| *t == target)
        .map(|(_, v)| (v.value, v.source.clone()))
        .or_else(|| versions.default.map(|v| (v, "default".to_owned())));
    let product = versions.product.as_deref().unwrap_or("SDK");
    if let Some((version, from)) = selected.filter(|(v, _)| *v < simt.since) {
        bail!(
            "{source}: {} needs {product} {} or newer, but the port is for {product} {version} ({from}): {}. Choose --{} {} or newer, or --{} {} for the vector model",
            simt.language,
            simt.since,
            simt.since_note,
            versions.flag_name(),
            simt.since,
            simt.flag,
            simt.default_value
        );
    }
    Ok(())
}

fn resolve_launch(
    args: &Flags,
    config: Option<&str>,
    from_file: &dyn Fn(&str) -> String,
) -> anyhow::Result<Setting<HipLaunch>> {
    Ok(match (args.hip_kernel_launch, config) {
        (Some(launch), _) => Setting::new(launch, "--hip-kernel-launch"),
        (None, Some("chevron")) => Setting::new(HipLaunch::Chevron, from_file("hip-kernel-launch")),
        (None, Some("ggl")) => Setting::new(HipLaunch::Ggl, from_file("hip-kernel-launch")),
        (None, Some(other)) => bail!(
            "{}: unknown value {other:?}; use chevron or ggl",
            from_file("hip-kernel-launch")
        ),
        (None, None) => Setting::new(HipLaunch::Chevron, "default"),
    })
}

/// A library-flavour choice (`--hip-libs`, `--ascend-blas`): the flag,
/// else cuport.toml's `key`, else the default flavour.
struct FlavourChoice {
    key: &'static str,
    parse: fn(&str) -> Option<Flavour>,
    values: &'static str,
}

const HIP_LIBS: FlavourChoice = FlavourChoice {
    key: "hip-libs",
    parse: Flavour::from_hip_libs,
    values: "hip or roc",
};

const ASCEND_BLAS: FlavourChoice = FlavourChoice {
    key: "ascend-blas",
    parse: Flavour::from_ascend_blas,
    values: "aclnn or aclblas",
};

fn resolve_flavour(
    choice: &FlavourChoice,
    flag: Option<Flavour>,
    config: Option<&str>,
    from_file: &dyn Fn(&str) -> String,
) -> anyhow::Result<Setting<Flavour>> {
    Ok(match (flag, config) {
        (Some(flavour), _) => Setting::new(flavour, format!("--{}", choice.key)),
        (None, Some(value)) => match (choice.parse)(value) {
            Some(flavour) => Setting::new(flavour, from_file(choice.key)),
            None => bail!(
                "{}: unknown value {value:?}; use {}",
                from_file(choice.key),
                choice.values
            ),
        },
        (None, None) => Setting::new(Flavour::Default, "default"),
    })
}

fn merge_list(
    flags: &[String],
    config: Vec<String>,
    flag: &str,
    file_source: &str,
) -> Setting<Vec<String>> {
    let source = match (flags.is_empty(), config.is_empty()) {
        (true, true) => "default".to_owned(),
        (true, false) => file_source.to_owned(),
        (false, true) => flag.to_owned(),
        (false, false) => format!("{file_source} and {flag}"),
    };
    let mut all = config;
    all.extend(flags.iter().cloned());
    Setting::new(all, source)
}

impl Settings {
    /// `ascend, hip`: the targets as written in messages.
    pub(crate) fn targets_text(&self) -> String {
        let ids: Vec<&str> = self.targets.value.iter().map(|t| t.id()).collect();
        ids.join(", ")
    }

    pub(crate) fn migrate_options(&self) -> MigrateOptions {
        MigrateOptions {
            mode: if self.dual.value {
                Mode::Dual(self.targets.value.clone())
            } else {
                Mode::OneWay(self.target.value)
            },
            flavours: [self.hip_libs.value, self.ascend_blas.value]
                .into_iter()
                .collect(),
            hip_launch: self.hip_launch.value,
            gpu_architectures: self.hip_arch.value.clone(),
            annotate: self.annotate.value,
            sdk_versions: self
                .sdk_versions
                .iter()
                .map(|(target, version)| (*target, version.value))
                .collect(),
            kernel_models: self
                .kernel_models
                .iter()
                .map(|(target, model)| (*target, model.value))
                .collect(),
            kernel_rules: self.kernel_rules.clone(),
        }
    }

    pub(crate) fn load_rules(&self) -> anyhow::Result<RuleSet> {
        let mut rules = RuleSet::builtin()
            .context("the built-in rule tables failed to load (a cuport bug; please report it)")?;
        let mapping_files = self
            .rules
            .value
            .iter()
            .filter(|p| !self.kernel_only_files.contains(p));
        for (index, path) in mapping_files.enumerate() {
            let priority = i32::try_from(index + 1).unwrap_or(i32::MAX);
            // The error names the file, line and field.
            rules = rules.with_user_file(path, priority)?;
            self.check_rules_target(&rules, path)?;
        }
        Ok(rules)
    }

    /// `--ascend-blas` as written: `aclnn` or `aclblas`.
    pub(crate) fn ascend_blas_id(&self) -> &'static str {
        match self.ascend_blas.value {
            Flavour::Aclblas => "aclblas",
            _ => "aclnn",
        }
    }

    /// A user rule file for a target this run does not migrate to would be
    /// ignored: that is an error, not a silent no-op.
    fn check_rules_target(&self, rules: &RuleSet, path: &Path) -> anyhow::Result<()> {
        let name = path.display().to_string();
        match rules.file_target(&name) {
            Some(target) if !self.targets.value.contains(&target) => bail!(
                "{name}: [meta] target = \"{target}\", but this run migrates to {}; its rules would not apply. Pass it with --to {target}, or remove it from --rules / cuport.toml",
                self.targets_text()
            ),
            _ => Ok(()),
        }
    }

    /// Files matched by `ignore` are analysed but not rewritten.
    pub(crate) fn drop_ignored(&self, report: &mut ScanReport) -> anyhow::Result<()> {
        if self.ignore.value.is_empty() {
            return Ok(());
        }
        let set = ignore_globs(&self.ignore.value, &self.ignore.source)?;
        let (ignored, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut report.files)
            .into_iter()
            .partition(|f| set.is_match(&f.path));
        report.files = kept;
        report
            .skipped
            .extend(ignored.into_iter().map(|f| SkippedFile {
                path: f.path,
                reason: format!("ignored by {}", self.ignore.source),
            }));
        Ok(())
    }

    pub(crate) fn describe(&self) -> String {
        let mut text = String::new();
        let config = self
            .config
            .as_ref()
            .map_or_else(|| "none".to_owned(), |p| p.display().to_string());
        let _ = writeln!(text, "config file        {config}");
        let _ = writeln!(
            text,
            "target             {:<24} from {}",
            self.targets_text(),
            self.targets.source
        );
        let _ = writeln!(
            text,
            "dual               {:<24} from {}",
            self.dual.value, self.dual.source
        );
        let _ = writeln!(
            text,
            "exclude            {:<24} from {}",
            format!("{:?}", self.excludes.value),
            self.excludes.source
        );
        let _ = writeln!(
            text,
            "ignore             {:<24} from {}",
            format!("{:?}", self.ignore.value),
            self.ignore.source
        );
        let rules: Vec<String> = self
            .rules
            .value
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let _ = writeln!(
            text,
            "rules              {:<24} from {}",
            format!("{rules:?}"),
            self.rules.source
        );
        let launch = match self.hip_launch.value {
            HipLaunch::Chevron => "chevron",
            HipLaunch::Ggl => "ggl",
        };
        let _ = writeln!(
            text,
            "hip-kernel-launch  {launch:<24} from {}",
            self.hip_launch.source
        );
        let _ = writeln!(
            text,
            "hip-libs           {:<24} from {}",
            self.hip_libs.value.id(),
            self.hip_libs.source
        );
        let _ = writeln!(
            text,
            "ascend-blas        {:<24} from {}",
            self.ascend_blas_id(),
            self.ascend_blas.source
        );
        let arch = if self.hip_arch.value.is_empty() {
            "(profile default)".to_owned()
        } else {
            self.hip_arch.value.join(",")
        };
        let _ = writeln!(
            text,
            "hip-arch           {arch:<24} from {}",
            self.hip_arch.source
        );
        let _ = writeln!(
            text,
            "annotate           {:<24} from {}",
            self.annotate.value, self.annotate.source
        );
        for (target, version) in &self.sdk_versions {
            let flag = target.profile().versions.flag_name();
            let _ = writeln!(
                text,
                "{flag:<18} {:<24} from {}",
                version.value, version.source
            );
        }
        for target in &self.targets.value {
            let Some(simt) = &target.profile().kernels.simt else {
                continue;
            };
            let chosen = self.kernel_models.iter().find(|(t, _)| t == target);
            let (value, source) = match chosen {
                Some((_, m)) if m.value == KernelModel::Simt => ("simt", m.source.as_str()),
                Some((_, m)) => (simt.default_value.as_str(), m.source.as_str()),
                None => (simt.default_value.as_str(), "default"),
            };
            let _ = writeln!(text, "{:<18} {value:<24} from {source}", simt.flag);
        }
        for target in &self.targets.value {
            let chosen = self.sdk_versions.iter().any(|(t, _)| t == target);
            let versions = &target.profile().versions;
            if let (false, Some(flag), Some(default)) = (chosen, &versions.flag, versions.default) {
                let _ = writeln!(text, "{flag:<18} {default:<24} from default");
            }
        }
        text
    }
}
