//! The reports `cuport migrate --report DIR` writes and the run metadata
//! report.json records; `cuport report` renders the same document again.
use std::path::{Path, PathBuf};

use anyhow::Context;
use cuport_model::{KernelModel, Target};
use cuport_report::{write_rendered, Format, ReportDocument, RulesInfo, RunMeta};
use cuport_rules::RuleSet;

use crate::output::Output;
use crate::settings::Settings;

/// How a migration was run, for report.json's `run` section.
pub(crate) fn run_meta(settings: &Settings, rules: &RuleSet) -> RunMeta {
    let list = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut meta = RunMeta::new(
        settings.target.value,
        RulesInfo::of_sources(rules.sources()),
    )
    .with_option("annotate", settings.annotate.value)
    .with_option(
        "hip-launch",
        format!("{:?}", settings.hip_launch.value).to_lowercase(),
    )
    .with_option("hip-libs", settings.hip_libs.value.id());
    if settings.targets.value.contains(&Target::Ascend) {
        meta = meta.with_option("ascend-blas", settings.ascend_blas_id());
    }
    if settings.dual.value {
        meta = meta.with_option("dual", settings.targets_text().replace(' ', ""));
    }
    // The release each target's port was made for, chosen or the
    // profile's default: rules are gated by it.
    let options = settings.migrate_options();
    for &target in &settings.targets.value {
        let flag = target.profile().versions.flag.as_deref();
        if let (Some(flag), Some(version)) = (flag, options.sdk_version(target)) {
            meta = meta.with_option(flag, version);
        }
    }
    for (target, model) in &settings.kernel_models {
        if let Some(simt) = &target.profile().kernels.simt {
            let name = if model.value == KernelModel::Simt {
                "simt"
            } else {
                simt.default_value.as_str()
            };
            meta = meta.with_option(&simt.flag, name);
        }
    }
    if !settings.hip_arch.value.is_empty() {
        meta = meta.with_option("hip-arch", settings.hip_arch.value.join(","));
    }
    if !settings.excludes.value.is_empty() {
        meta = meta.with_option("exclude", settings.excludes.value.join(","));
    }
    if !settings.ignore.value.is_empty() {
        meta = meta.with_option("ignore", settings.ignore.value.join(","));
    }
    if !settings.rules.value.is_empty() {
        meta = meta.with_option("rules", list(&settings.rules.value));
    }
    if let Some(config) = &settings.config {
        meta = meta.with_option("config", config.display());
    }
    meta
}

/// What `cuport migrate --report DIR` writes: every format.
const MIGRATE_FORMATS: [Format; 5] = [
    Format::Json,
    Format::Markdown,
    Format::Sarif,
    Format::Csv,
    Format::Html,
];

/// Writes every report format for `cuport migrate --report DIR`;
/// report.html gets a section per PyTorch API support analysis.
pub(crate) fn write_migration_reports(
    dir: &Path,
    document: &ReportDocument,
    support: &[cuport_report::ApiSupportReport],
    out: &Output,
) -> anyhow::Result<()> {
    let (with_sections, formats) = MIGRATE_FORMATS
        .iter()
        .partition::<Vec<Format>, _>(|&&f| f == Format::Html && !support.is_empty());
    let mut written = write_rendered(document, dir, &formats)
        .with_context(|| format!("could not write the reports to {}", dir.display()))?;
    if !with_sections.is_empty() {
        let sections: Vec<String> = support
            .iter()
            .map(cuport_report::api_support_section)
            .collect();
        let page = dir.join("report.html");
        std::fs::write(&page, cuport_report::report_html_with(document, &sections)?)
            .with_context(|| format!("could not write {}", page.display()))?;
        written.push(page);
    }
    for path in written {
        out.info(&format!("wrote {}", path.display()));
    }
    Ok(())
}
