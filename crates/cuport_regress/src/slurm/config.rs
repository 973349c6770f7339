//! The `[slurm]` table: where each leg runs (partition, GRES, constraint,
//! account, time limit, extra `sbatch` options, environment) and how the
//! run waits. It lives in a case file, or in a site file given with
//! `--slurm-config` that replaces the case files' tables.
use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{RegressError, Result};

/// Name of the placement every other placement inherits from, and that
/// legs without a placement of their own use.
pub const DEFAULT_PLACEMENT: &str = "default";
/// The GRES name Ascend sites give NPUs (Huawei's Slurm guide uses it).
pub const NPU_GRES: &str = "npu";
/// The variable the Ascend runtime reads to pick its devices.
pub const ASCEND_DEVICES_ENV: &str = "ASCEND_RT_VISIBLE_DEVICES";

/// The `[slurm]` table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmConfig {
    /// Most array tasks of one job running at once (`--array=0-N%K`).
    pub max_concurrent: Option<u32>,
    /// Seconds between two looks at the queue (default 5).
    pub poll_s: Option<f64>,
    /// Seconds to wait for all jobs before cancelling them (default 86400).
    pub wait_timeout_s: Option<f64>,
    /// `[slurm.placement.NAME]`: op legs use their backend's name (`cuda`,
    /// `ascend`, `cpu`...), app legs `reference_placement` and
    /// `candidate_placement`; `default` is inherited by all.
    #[serde(default)]
    pub placement: BTreeMap<String, Placement>,
}

/// Where one kind of leg runs. Every field is optional; unset fields come
/// from the `default` placement, then from Slurm's own defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    pub partition: Option<String>,
    /// `--gres`, e.g. `gpu:1`, `gpu:h100:1`, `npu:1`.
    pub gres: Option<String>,
    /// `--constraint`, e.g. `sm90` or `910b&hbm64`.
    pub constraint: Option<String>,
    pub account: Option<String>,
    /// `--time` in any format Slurm takes (`30`, `01:00:00`, `1-0`).
    /// Default: the leg's own timeout plus two minutes.
    pub time: Option<String>,
    /// More `sbatch` options, each a whole `--opt=value` word.
    #[serde(default)]
    pub sbatch_args: Vec<String>,
    /// Variables exported in the job before the leg starts.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A variable to set from the indices of the GRES this job was given,
    /// for accelerators Slurm sets nothing for. Default:
    /// `ASCEND_RT_VISIBLE_DEVICES` when the GRES is `npu`; `""` turns it off.
    pub devices_env: Option<String>,
}

impl Placement {
    /// `self` with unset fields taken from `base`; `env` and `sbatch_args`
    /// are merged (`self` wins, `base`'s options come first).
    fn over(&self, base: &Placement) -> Placement {
        let pick = |a: &Option<String>, b: &Option<String>| a.clone().or_else(|| b.clone());
        let mut env = base.env.clone();
        env.extend(self.env.clone());
        Placement {
            partition: pick(&self.partition, &base.partition),
            gres: pick(&self.gres, &base.gres),
            constraint: pick(&self.constraint, &base.constraint),
            account: pick(&self.account, &base.account),
            time: pick(&self.time, &base.time),
            sbatch_args: base
                .sbatch_args
                .iter()
                .chain(&self.sbatch_args)
                .cloned()
                .collect(),
            env,
            devices_env: pick(&self.devices_env, &base.devices_env),
        }
    }

    /// The GRES names this placement asks for (`gpu` of `gpu:h100:2`).
    pub fn gres_names(&self) -> Vec<String> {
        self.gres
            .iter()
            .flat_map(|g| g.split(','))
            .filter_map(|one| one.split(':').next())
            .map(|name| name.trim().trim_start_matches("gres/").to_owned())
            .filter(|name| !name.is_empty())
            .collect()
    }

    /// The variable to derive from the GRES indices, and the GRES to read.
    pub fn devices_env(&self) -> Option<(String, String)> {
        let names = self.gres_names();
        match self.devices_env.as_deref() {
            Some("") => None,
            Some(var) => {
                let gres = names
                    .iter()
                    .find(|n| n.as_str() == NPU_GRES)
                    .or(names.first())?;
                Some((var.to_owned(), gres.clone()))
            }
            None => names
                .iter()
                .any(|n| n == NPU_GRES)
                .then(|| (ASCEND_DEVICES_ENV.to_owned(), NPU_GRES.to_owned())),
        }
    }
}

impl SlurmConfig {
    /// The placement `name` merged over `default`; a name with no table of
    /// its own is just `default`.
    pub fn resolve(&self, name: &str) -> Placement {
        let base = self
            .placement
            .get(DEFAULT_PLACEMENT)
            .cloned()
            .unwrap_or_default();
        match self.placement.get(name) {
            Some(own) if name != DEFAULT_PLACEMENT => own.over(&base),
            _ => base,
        }
    }

    /// Check what `sbatch` and the job script cannot take; `path` names the
    /// file in the error.
    pub fn validate(&self, path: &Path) -> Result<()> {
        let err = |message: String| RegressError::Case {
            path: path.to_owned(),
            message,
        };
        if self.max_concurrent == Some(0) {
            return Err(err(
                "[slurm] max_concurrent: must be at least 1 (leave it out for no limit)".into(),
            ));
        }
        for (key, value) in [
            ("poll_s", self.poll_s),
            ("wait_timeout_s", self.wait_timeout_s),
        ] {
            if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                return Err(err(format!(
                    "[slurm] {key}: must be a positive number of seconds"
                )));
            }
        }
        for (name, p) in &self.placement {
            validate_placement(p).map_err(|m| err(format!("[slurm.placement.{name}] {m}")))?;
        }
        Ok(())
    }
}

fn validate_placement(p: &Placement) -> std::result::Result<(), String> {
    let fields = [
        ("partition", &p.partition),
        ("gres", &p.gres),
        ("constraint", &p.constraint),
        ("account", &p.account),
        ("time", &p.time),
    ];
    for (key, value) in fields {
        if let Some(v) = value {
            if v.trim().is_empty() || v.chars().any(char::is_whitespace) {
                return Err(format!("{key}: `{v}` must be one word without spaces"));
            }
        }
    }
    for arg in &p.sbatch_args {
        if !arg.starts_with('-') || arg.chars().any(char::is_control) {
            return Err(format!(
                "sbatch_args: `{arg}` is not an option; write each as one `--name=value` word"
            ));
        }
    }
    for (key, value) in &p.env {
        if !is_shell_name(key) {
            return Err(format!("env: `{key}` is not a valid variable name"));
        }
        if value.contains('\0') {
            return Err(format!("env.{key}: the value contains a NUL byte"));
        }
    }
    if let Some(var) = p.devices_env.as_deref().filter(|v| !v.is_empty()) {
        if !is_shell_name(var) {
            return Err(format!("devices_env: `{var}` is not a valid variable name"));
        }
    }
    Ok(())
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_shell_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A site file for `--slurm-config`: just a `[slurm]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SiteFile {
    slurm: SlurmConfig,
}

/// Read a `--slurm-config` file.
pub fn load(path: &Path) -> Result<SlurmConfig> {
    let text = std::fs::read_to_string(path).map_err(|e| RegressError::io(path, e))?;
    let site: SiteFile = toml::from_str(&text).map_err(|e| RegressError::Case {
        path: path.to_owned(),
        message: format!(
            "{} (a Slurm site file holds one [slurm] table; see regress/README.md)",
            e.to_string().trim_end()
        ),
    })?;
    site.slurm.validate(path)?;
    Ok(site.slurm)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> std::result::Result<SlurmConfig, String> {
        toml::from_str::<SiteFile>(text)
            .map(|s| s.slurm)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn placements_inherit_from_default() -> std::result::Result<(), String> {
        let c = parse(
            "[slurm.placement.default]\naccount = \"proj\"\nsbatch_args = [\"--qos=ci\"]\nenv = { A = \"1\" }\n\
             [slurm.placement.cuda]\npartition = \"cuda\"\ngres = \"gpu:1\"\nsbatch_args = [\"--exclusive\"]\nenv = { B = \"2\" }\n",
        )?;
        let cuda = c.resolve("cuda");
        assert_eq!(cuda.account.as_deref(), Some("proj"));
        assert_eq!(cuda.partition.as_deref(), Some("cuda"));
        assert_eq!(cuda.sbatch_args, ["--qos=ci", "--exclusive"]);
        assert_eq!(cuda.env.len(), 2);
        let other = c.resolve("hip");
        assert_eq!(other.partition, None);
        assert_eq!(other.account.as_deref(), Some("proj"));
        Ok(())
    }

    #[test]
    fn npu_gres_derives_the_ascend_variable() {
        let p = |gres: &str, env: Option<&str>| Placement {
            gres: Some(gres.into()),
            devices_env: env.map(Into::into),
            ..Placement::default()
        };
        assert_eq!(
            p("npu:1", None).devices_env(),
            Some((ASCEND_DEVICES_ENV.into(), "npu".into()))
        );
        assert_eq!(
            p("gpu:1,npu:910b:2", None).devices_env(),
            Some((ASCEND_DEVICES_ENV.into(), "npu".into()))
        );
        assert_eq!(p("gpu:1", None).devices_env(), None);
        assert_eq!(p("npu:1", Some("")).devices_env(), None);
        assert_eq!(
            p("mthreads:1", Some("MUSA_VISIBLE_DEVICES")).devices_env(),
            Some(("MUSA_VISIBLE_DEVICES".into(), "mthreads".into()))
        );
    }

    #[test]
    fn the_example_site_file_loads() -> Result<()> {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../regress/slurm/site.example.toml");
        let c = load(&path)?;
        let ascend = c.resolve("ascend");
        assert_eq!(ascend.account.as_deref(), Some("proj42"));
        assert_eq!(ascend.gres.as_deref(), Some("npu:1"));
        assert_eq!(
            ascend.devices_env(),
            Some((ASCEND_DEVICES_ENV.into(), NPU_GRES.into()))
        );
        assert_eq!(c.resolve("cpu").time.as_deref(), Some("00:10:00"));
        assert_eq!(c.max_concurrent, Some(4));
        Ok(())
    }

    #[test]
    fn bad_values_are_named() -> std::result::Result<(), String> {
        let path = Path::new("site.toml");
        let c = parse("[slurm.placement.x]\nsbatch_args = [\"qos=ci\"]\n")?;
        let e = c.validate(path).map_err(|e| e.to_string());
        assert!(
            e.as_ref()
                .is_err_and(|m| m.contains("[slurm.placement.x] sbatch_args")),
            "{e:?}"
        );
        let c = parse("[slurm.placement.x]\nenv = { \"A-B\" = \"1\" }\n")?;
        assert!(c.validate(path).is_err());
        let c = parse("[slurm.placement.x]\npartition = \"a b\"\n")?;
        assert!(c.validate(path).is_err());
        let c = parse("[slurm]\nmax_concurrent = 0\n")?;
        assert!(c.validate(path).is_err());
        assert!(parse("[slurm.placement.x]\nqueue = \"a\"\n").is_err_and(|m| m.contains("queue")));
        Ok(())
    }
}
