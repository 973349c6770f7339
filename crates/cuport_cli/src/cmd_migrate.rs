//! `cuport migrate`: port a tree (or one file) to a target.
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anstyle::AnsiColor;
use anyhow::{bail, Context};
use cuport_analyze::EntryKind;
use cuport_analyze::{
    find_files, scan_found, AnalyzeOptions, FoundFiles, ScanOptions, ScanReport, SyntaxCheck,
};
use cuport_model::{KernelModel, Target};
use cuport_report::{RenameEntry, ReportDocument, SkeletonEntry};
use cuport_rewrite::{
    ascend_skeletons, migrate_report, unified_diff, CopySummary, KernelSkeleton, Level,
    MigrateOptions, Migration, Mode, RenamePlan,
};

use crate::kernel_outcomes::{apply_declared, kernel_outcomes, rules_with_evidence, verify_all};
use crate::migrate_args::MigrateArgs;
use crate::output::Output;
use crate::run_plan::{Destination, RunPlan, StdoutFormat};
use crate::settings::{self, Settings};

pub(crate) fn run(args: &MigrateArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let mut settings = settings::resolve(&args.flags())?;
    if args.show_settings {
        print!("{}", settings.describe());
        return Ok(crate::exit::success());
    }
    let plan = args.run_plan();
    check_extra_flags(&plan, &settings)?;
    if plan.verify_kernels {
        settings.kernel_rules = verified_kernel_rules(&plan, &settings, out)?;
    }
    let started = std::time::Instant::now();
    let scan_options = scan_options(&plan, &settings);
    let (rules, scan_options, found) =
        load_rules_beside_reading(&plan, &settings, scan_options, out)?;
    // The run's metadata hashes every user rule file: beside the
    // migration, not after it.
    let (migrated, meta) = std::thread::scope(|scope| {
        let meta = scope.spawn(|| crate::migration_reports::run_meta(&settings, &rules));
        let migrated = migrate(found, &scan_options, &settings, &rules, out);
        let meta = meta
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (migrated, meta)
    });
    let (scan, migration) = migrated?;
    out.info(&format!("migrated in {:.2?}", started.elapsed()));
    let extras = Extras::plan(&plan, &settings.migrate_options(), &scan, &migration, out)?;
    write_mode(&plan, &migration, &extras, out)?;
    // One document of the run: the text summary, --format json and every
    // --report format render from it.
    let meta = meta.with_written(plan.writes());
    let mut document = if plan.shows_diffs() {
        ReportDocument::new(&migration, meta)
    } else {
        ReportDocument::without_diffs(&migration, meta)
    };
    add_extras(&mut document, &plan, &extras);
    report(&plan, &migration, &document, &extras, out)?;
    if let Some(dir) = &plan.report_dir {
        let support = crate::api_support::write_migration_support(
            dir,
            &settings.targets.value,
            &scan,
            &rules,
            out,
        )?;
        crate::migration_reports::write_migration_reports(dir, &document, &support, out)?;
    }
    let code = exit_code(&migration, plan.fail_on);
    // The process ends after this: freeing every source, analysis, diff and
    // rule one allocation at a time took longer than loading the rules
    // (a tenth of a run over cuda-samples); the OS reclaims it all at once.
    std::mem::forget((scan, migration, document, rules));
    Ok(code)
}

/// Usage rules for --ascend-kernel-skeletons and --rename-sources that
/// depend on the resolved target (which may come from cuport.toml).
/// `--verify-kernels`: the rules of --rules and those recognition proposes
/// for the kernels under the migrated path, each run against its
/// reference; what was confirmed, or declared and not refuted, applies.
/// Everything it needs is checked before anything is written.
fn verified_kernel_rules(
    plan: &RunPlan,
    settings: &Settings,
    out: &Output,
) -> anyhow::Result<Vec<cuport_rules::kernel_rules::KernelRule>> {
    let target = settings.target.value;
    let (table, _) = cuport_rules::kernel_rules::OperatorTable::builtin(target.id());
    if settings.dual.value || table.operators.is_empty() || table.unchecked {
        bail!("--verify-kernels replaces kernels with vendor operators in a one-way port to a target with header-checked operator tables and reference forms of them (--to ascend), not {}{}", settings.targets_text(), if settings.dual.value { " with --dual" } else { "" });
    }
    let tools = cuport_regress::evidence::Toolchain::from_env()
        .context("--verify-kernels cannot run; install what is named, or run without it")?;
    let mut outcomes = kernel_outcomes(std::slice::from_ref(&plan.path), &table)?;
    apply_declared(&mut outcomes, &settings.kernel_rules);
    verify_all(&mut outcomes, &tools, out)?;
    let applies = outcomes.iter().filter(|o| o.applies == Some(true)).count();
    out.status(&format!(
        "kernel evidence: {} kernels, {applies} rules apply (confirmed, or declared and not refuted)",
        outcomes.len()
    ));
    Ok(rules_with_evidence(&outcomes))
}

fn check_extra_flags(plan: &RunPlan, settings: &Settings) -> anyhow::Result<()> {
    let target = settings.target.value;
    let targets = &settings.targets.value;
    if settings.dual.value && plan.rename_sources {
        bail!("--rename-sources cannot be used with --dual: the dual-stack source keeps its file names so the CUDA build keeps working");
    }
    if settings.dual.value && matches!(plan.destination, Destination::File(_)) {
        bail!("--dual writes the cuport/ shim next to the sources, which -o OUTFILE cannot hold; use --out DIR, --in-place or --diff");
    }
    if !settings.dual.value && targets.len() > 1 {
        bail!(
            "several targets ({}) need --dual; a one-way migration has one target",
            settings.targets_text()
        );
    }
    let simt = settings
        .kernel_models
        .iter()
        .any(|(_, m)| m.value == KernelModel::Simt);
    if plan.kernel_skeletons && simt {
        bail!("--ascend-kernel-skeletons writes Ascend C vector-model skeletons, but --ascend-kernels simt keeps the kernels as they are; drop one of the two");
    }
    if plan.kernel_skeletons && !targets.contains(&Target::Ascend) {
        bail!(
            "--ascend-kernel-skeletons needs --to ascend (the target is {target}); Ascend C \
             skeletons replace CUDA kernels only on Ascend"
        );
    }
    if plan.rename_sources && !plan.writes_every_file() {
        bail!("--rename-sources needs --out DIR or --in-place (it renames the files written)");
    }
    if plan.rename_sources && !plan.writes_tree() {
        bail!(
            "--rename-sources needs a directory with --in-place ({} is a file); rename one \
             file with -o OUTFILE instead",
            plan.path.display()
        );
    }
    Ok(())
}

/// What --ascend-kernel-skeletons and --rename-sources add to a run.
#[derive(Debug, Default)]
struct Extras {
    skeletons: Vec<KernelSkeleton>,
    renames: RenamePlan,
}

impl Extras {
    fn plan(
        plan: &RunPlan,
        options: &MigrateOptions,
        scan: &ScanReport,
        migration: &Migration,
        out: &Output,
    ) -> anyhow::Result<Self> {
        let mut extras = Extras::default();
        if plan.kernel_skeletons {
            extras.skeletons = ascend_skeletons(scan, migration);
        }
        // A dual-stack source keeps its names (`--rename-sources` is refused
        // with it).
        let Mode::OneWay(target) = options.mode else {
            return Ok(extras);
        };
        let extensions = options.source_renames(target);
        // The SIMT model's language takes kernels only under its extension:
        // a written SIMT port always renames.
        let simt = options.kernel_model(target) == KernelModel::Simt;
        if plan.rename_sources || (simt && plan.writes_tree()) {
            if extensions.is_empty() {
                out.warn(&format!("--rename-sources does nothing for {target}: host code keeps its file names and Ascend C kernels are new .cpp files (see --ascend-kernel-skeletons, or --ascend-kernels simt)"));
            }
            let keys: Vec<String> = migration
                .tree
                .iter()
                .filter(|e| e.kind == EntryKind::File)
                .map(|e| e.path.clone())
                .collect();
            extras.renames = RenamePlan::with_extensions(&keys, extensions)
                .with_context(|| format!("cannot rename the sources of {}", plan.path.display()))?;
        }
        Ok(extras)
    }
}

/// Files read at once while the tables load: the disk serves several
/// reads at once faster than one after the other when the tree is not in
/// the page cache, and the reads mostly wait for it.
const READERS: usize = 8;

/// The rule tables, `scan_options` with the tables' names, and the files
/// of the tree found and read meanwhile: neither needs the other, and a
/// cold tree's reads wait on the disk while loading the tables keeps the
/// cores busy. The tables' name index is built before the analysis needs
/// it, as part of loading.
fn load_rules_beside_reading(
    plan: &RunPlan,
    settings: &Settings,
    scan_options: ScanOptions,
    out: &Output,
) -> anyhow::Result<(
    std::sync::Arc<cuport_rules::RuleSet>,
    ScanOptions,
    FoundFiles,
)> {
    let (rules, found) = std::thread::scope(|scope| {
        let found = scope.spawn(|| {
            let mut found = find_files(&plan.path, &scan_options)?;
            // A cold tree on a slow disk takes a while to read.
            let bar = crate::scanning::BarProgress(out.progress(0, "reading"));
            found.read_all(&scan_options, READERS, &bar);
            bar.0.finish_and_clear();
            Ok::<_, cuport_analyze::AnalyzeError>(found)
        });
        let rules = settings.load_rules().map(|rules| {
            let rules = std::sync::Arc::new(rules);
            let known = crate::scanning::known_names_of(std::sync::Arc::clone(&rules));
            known.prepare();
            (rules, known)
        });
        let found = found
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (rules, found)
    });
    let (rules, known) = rules?;
    let found = found.context("cannot analyse the tree; check the path")?;
    let scan_options = ScanOptions {
        known_names: Some(known),
        ..scan_options
    };
    Ok((rules, scan_options, found))
}

/// How the migration scans the tree (the tables' names are added once
/// they are loaded: [`load_rules_beside_reading`]).
fn scan_options(plan: &RunPlan, settings: &Settings) -> ScanOptions {
    ScanOptions {
        excludes: settings.excludes.value.clone(),
        include_hidden: plan.walk.hidden,
        no_ignore: plan.walk.no_ignore,
        analyze: AnalyzeOptions {
            syntax_check: SyntaxCheck::Off,
        },
        keep_sources: true,
        // A copy or in-place run reproduces the whole tree the scan lists.
        inventory: plan.writes_every_file(),
        ..ScanOptions::default()
    }
}

fn migrate(
    found: FoundFiles,
    scan_options: &ScanOptions,
    settings: &Settings,
    rules: &std::sync::Arc<cuport_rules::RuleSet>,
    out: &Output,
) -> anyhow::Result<(ScanReport, Migration)> {
    let bar = crate::scanning::BarProgress(out.progress(0, "analysing"));
    let mut report =
        scan_found(found, scan_options, &bar).context("cannot analyse the tree; check the path")?;
    bar.0.finish_and_clear();
    for skipped in &report.skipped {
        out.warn(&format!("{}: skipped: {}", skipped.path, skipped.reason));
    }
    settings.drop_ignored(&mut report)?;
    let migration = migrate_report(&report, rules, &settings.migrate_options())?;
    Ok((report, migration))
}

fn write_mode(
    plan: &RunPlan,
    migration: &Migration,
    extras: &Extras,
    out: &Output,
) -> anyhow::Result<()> {
    match &plan.destination {
        Destination::Tree(dir) => {
            if migration.root_is_file {
                bail!("--out needs a directory to migrate; for one file use -o OUTFILE");
            }
            let copy = migration.write_copy(dir, &extras.renames)?;
            report_copy(&copy, dir, out);
            let skeletons = migration.write_skeletons(dir, &extras.skeletons)?;
            out.info(&format!("wrote {skeletons} Ascend C kernel skeletons"));
        }
        Destination::InPlace(how) => {
            let written = migration.write_in_place_renamed(*how, &extras.renames)?;
            out.status(&format!("rewrote {written} files in place"));
        }
        Destination::File(file) => {
            if !migration.root_is_file {
                bail!("-o OUTFILE needs PATH to be one source file, and {} is a directory; use --out DIR for a tree", plan.path.display());
            }
            for path in migration.write_single(file)? {
                out.status(&format!("wrote {}", path.display()));
            }
        }
        Destination::Diff | Destination::Nowhere => {}
    }
    Ok(())
}

/// What the copy holds, and every entry it could not reproduce.
fn report_copy(copy: &CopySummary, dir: &Path, out: &Output) {
    out.status(&format!(
        "wrote {} files under {}: {} migrated, {} copied as they are, {} generated; {} directories, {} symbolic links; {} left out",
        copy.files(),
        dir.display(),
        copy.migrated,
        copy.copied,
        copy.generated,
        copy.directories,
        copy.symlinks,
        copy.left_out.len()
    ));
    for (path, reason) in &copy.left_out {
        out.warn(&format!("{path}: left out of the copy: {reason}"));
    }
}

fn report(
    plan: &RunPlan,
    migration: &Migration,
    document: &ReportDocument,
    extras: &Extras,
    out: &Output,
) -> anyhow::Result<()> {
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    match (plan.stdout, &plan.destination) {
        (StdoutFormat::Json, _) => {
            // Through a JSON value, whose keys are sorted.
            let document = serde_json::to_value(document)?;
            serde_json::to_writer_pretty(&mut stdout, &document)?;
            writeln!(stdout)?;
        }
        (StdoutFormat::Text, Destination::Diff) => {
            for file in migration.changed_files() {
                write!(stdout, "{}", unified_diff(file))?;
            }
            for diff in migration.generated_diffs() {
                write!(stdout, "{diff}")?;
            }
            stdout.flush()?;
            write_diagnostics(&mut std::io::stderr().lock(), migration, out)?;
        }
        (StdoutFormat::Text, _) => {
            write_diagnostics(&mut stdout, migration, out)?;
            let emphasis = out.emphasis();
            write!(
                stdout,
                "{}",
                cuport_report::summary_text(document, emphasis)
            )?;
            write_extras_summary(&mut stdout, plan, extras)?;
        }
    }
    stdout.flush()?;
    Ok(())
}

/// The skeletons (paths under --out) and renames in the document, present
/// when their flag was given.
fn add_extras(document: &mut ReportDocument, plan: &RunPlan, extras: &Extras) {
    if let Some(dir) = plan.skeleton_dir() {
        let entries = extras.skeletons.iter().map(|skeleton| SkeletonEntry {
            kernel: skeleton.kernel.clone(),
            source: skeleton.source.clone(),
            line: skeleton.line,
            path: skeleton.path.clone(),
            operator: skeleton.operator.clone(),
            written: Some(dir.join(&skeleton.path).display().to_string()),
        });
        document.skeletons = Some(entries.collect());
    }
    if plan.rename_sources || !extras.renames.is_empty() {
        let entries = extras.renames.renames.iter().map(|(from, to)| RenameEntry {
            from: from.clone(),
            to: to.clone(),
        });
        document.renames = Some(entries.collect());
    }
}

fn write_extras_summary(
    w: &mut impl Write,
    plan: &RunPlan,
    extras: &Extras,
) -> std::io::Result<()> {
    if let Some(dir) = plan.skeleton_dir() {
        writeln!(
            w,
            "\nAscend C kernel skeletons ({}), each a starting point for a manual port:",
            extras.skeletons.len()
        )?;
        for s in &extras.skeletons {
            let operator = s
                .operator
                .as_deref()
                .map(|o| format!("; looks like {o}"))
                .unwrap_or_default();
            writeln!(
                w,
                "  {} (`{}`, {}:{}{operator})",
                dir.join(&s.path).display(),
                s.kernel,
                s.source,
                s.line
            )?;
        }
    }
    if !extras.renames.is_empty() {
        writeln!(w, "\nRenamed sources ({}):", extras.renames.renames.len())?;
        for (from, to) in &extras.renames.renames {
            writeln!(w, "  {from} -> {to}")?;
        }
    }
    Ok(())
}

fn write_diagnostics(
    w: &mut impl Write,
    migration: &Migration,
    out: &Output,
) -> std::io::Result<()> {
    for file in &migration.files {
        for d in &file.result.diagnostics {
            let color = match d.level {
                Level::Note => AnsiColor::Blue,
                Level::Approximate => AnsiColor::Yellow,
                Level::Manual => AnsiColor::Magenta,
                Level::Unsupported => AnsiColor::Red,
            };
            let style = out.style(color, true);
            let effort = d
                .effort
                .map(|e| format!(" [effort: {e}]"))
                .unwrap_or_default();
            writeln!(
                w,
                "{}:{}:{}: {style}{}{style:#} {}: {}{effort}",
                file.path,
                d.line,
                d.column,
                d.level.id(),
                d.code,
                d.message
            )?;
            if let Some(suggestion) = &d.suggestion {
                writeln!(w, "    help: {suggestion}")?;
            }
            if let Some(reference) = &d.reference {
                writeln!(w, "    see: {reference}")?;
            }
        }
    }
    Ok(())
}

fn exit_code(migration: &Migration, fail_on: Option<Level>) -> ExitCode {
    let Some(threshold) = fail_on else {
        return crate::exit::success();
    };
    let failing = migration
        .files
        .iter()
        .flat_map(|f| &f.result.diagnostics)
        .any(|d| d.level >= threshold);
    crate::exit::gate(failing)
}
