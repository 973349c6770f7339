//! `cuport migrate`: port a tree (or one file) to a target.
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anstyle::AnsiColor;
use anyhow::{bail, Context};
use cuport_analyze::{scan_tree, AnalyzeOptions, ScanOptions, SyntaxCheck};
use cuport_rewrite::{migrate_report, tree_files, unified_diff, Level, Migration};

use crate::migrate_report_json::{self, MigrateDocument};
use crate::output::Output;
use crate::settings::{self, Settings};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TargetArg {
    Hip,
    Ascend,
    Musa,
    Mlu,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FailOn {
    Approximate,
    Manual,
    Unsupported,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MigrateFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LaunchArg {
    Chevron,
    Ggl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum HipLibsArg {
    Hip,
    Roc,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  cuport migrate --to hip src/                      dry run: diagnostics and statistics only
  cuport migrate --to hip src/ --diff               unified diff on stdout, nothing written
  cuport migrate --to ascend src/ --out ../src-npu  a ported copy of the whole tree
  cuport migrate --to hip src/ --in-place           rewrite files, keeping FILE.cuport.orig backups
  cuport migrate --to musa kernel.cu -o kernel.mu   one file
  cuport migrate --to hip src/ --fail-on manual     CI: exit 1 while manual work remains

Project settings may live in cuport.toml at the root of the migrated tree
([migrate] target, exclude, ignore, rules, hip-kernel-launch, hip-libs, annotate);
flags override them; --show-settings prints the result and where each value came from.

Exit status: 0 done; 1 when --fail-on finds a diagnostic at that level or above;
2 on a usage or input error.")]
pub(crate) struct MigrateArgs {
    /// Directory or file to migrate.
    pub(crate) path: PathBuf,
    /// Target accelerator stack (or `target` in cuport.toml).
    #[arg(long, value_enum)]
    pub(crate) to: Option<TargetArg>,
    /// Write a ported copy of the tree into DIR (outside the tree).
    #[arg(long, value_name = "DIR", group = "mode")]
    pub(crate) out: Option<PathBuf>,
    /// Rewrite files in place (atomically), keeping FILE.cuport.orig backups.
    #[arg(long, group = "mode")]
    pub(crate) in_place: bool,
    /// With --in-place: keep no backups.
    #[arg(long, requires = "in_place")]
    pub(crate) no_backup: bool,
    /// Print a unified diff and write nothing.
    #[arg(long, group = "mode")]
    pub(crate) diff: bool,
    /// Migrate the single file PATH into OUTFILE.
    #[arg(short = 'o', value_name = "OUTFILE", group = "mode")]
    pub(crate) output: Option<PathBuf>,
    /// How HIP kernel launches are written.
    #[arg(long, value_enum)]
    pub(crate) hip_kernel_launch: Option<LaunchArg>,
    /// HIP library flavour: hipBLAS/hipSPARSE/... or rocBLAS/rocSPARSE/...
    #[arg(long, value_enum)]
    pub(crate) hip_libs: Option<HipLibsArg>,
    /// Exit 1 when a diagnostic at this level or above remains.
    #[arg(long, value_enum)]
    pub(crate) fail_on: Option<FailOn>,
    /// What goes to stdout (diagnostics and statistics; the diff with --diff).
    #[arg(long, value_enum, default_value_t = MigrateFormat::Text)]
    pub(crate) format: MigrateFormat,
    /// Extra rule file layered over the built-in tables; repeatable (later wins).
    #[arg(long, value_name = "FILE")]
    pub(crate) rules: Vec<PathBuf>,
    /// Also write each diagnostic into the output as a `CUPORT` comment.
    #[arg(long)]
    pub(crate) annotate: bool,
    /// Leave out paths matching this glob; repeatable.
    #[arg(long, value_name = "GLOB")]
    pub(crate) exclude: Vec<String>,
    /// Also migrate hidden files and directories.
    #[arg(long)]
    pub(crate) hidden: bool,
    /// Do not honour .gitignore and .ignore files.
    #[arg(long)]
    pub(crate) no_ignore: bool,
    /// Print the resolved settings and where each came from, then exit.
    #[arg(long)]
    pub(crate) show_settings: bool,
}

pub(crate) fn run(args: &MigrateArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let settings = settings::resolve(args)?;
    if args.show_settings {
        print!("{}", settings.describe());
        return Ok(ExitCode::SUCCESS);
    }
    let rules = settings.load_rules()?;
    let started = std::time::Instant::now();
    let migration = migrate(args, &settings, &rules, out)?;
    out.info(&format!("migrated in {:.2?}", started.elapsed()));
    write_mode(args, &migration, out)?;
    report(args, &migration, &settings, out)?;
    Ok(exit_code(&migration, args.fail_on))
}

fn migrate(
    args: &MigrateArgs,
    settings: &Settings,
    rules: &cuport_rules::RuleSet,
    out: &Output,
) -> anyhow::Result<Migration> {
    let scan_options = ScanOptions {
        excludes: settings.excludes.value.clone(),
        include_hidden: args.hidden,
        no_ignore: args.no_ignore,
        analyze: AnalyzeOptions {
            syntax_check: SyntaxCheck::Off,
        },
        known_names: crate::cmd_scan::known_names_of(rules),
        ..ScanOptions::default()
    };
    let bar = crate::cmd_scan::BarProgress(out.progress(0, "analysing"));
    let mut report = scan_tree(&args.path, &scan_options, &bar)
        .context("cannot analyse the tree; check the path")?;
    bar.0.finish_and_clear();
    for skipped in &report.skipped {
        out.warn(&format!("{}: skipped: {}", skipped.path, skipped.reason));
    }
    settings.drop_ignored(&mut report);
    let migration = migrate_report(&report, rules, &settings.migrate_options())?;
    Ok(migration)
}

fn write_mode(args: &MigrateArgs, migration: &Migration, out: &Output) -> anyhow::Result<()> {
    if let Some(dir) = &args.out {
        if migration.root.is_file() {
            bail!("--out needs a directory to migrate; for one file use -o OUTFILE");
        }
        let files = tree_files(&migration.root, args.hidden, args.no_ignore)?;
        let written = migration.write_copy(dir, &files)?;
        out.info(&format!("wrote {written} files under {}", dir.display()));
    } else if args.in_place {
        let written = migration.write_in_place(!args.no_backup)?;
        out.info(&format!("rewrote {written} files in place"));
    } else if let Some(file) = &args.output {
        if !migration.root.is_file() {
            bail!("-o OUTFILE needs PATH to be one source file, and {} is a directory; use --out DIR for a tree", args.path.display());
        }
        let [only] = migration.files.as_slice() else {
            bail!(
                "-o OUTFILE needs PATH to be one source file cuport analyses ({} given)",
                args.path.display()
            );
        };
        write_file(file, &only.result.output, &migration.root)?;
    }
    Ok(())
}

/// Atomic (temporary file, then rename), with the source file's permissions.
fn write_file(
    path: &std::path::Path,
    bytes: &[u8],
    source: &std::path::Path,
) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write into {}", dir.display()))?;
    temp.write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    if let Ok(metadata) = std::fs::metadata(source) {
        temp.as_file()
            .set_permissions(metadata.permissions())
            .with_context(|| format!("cannot set permissions of {}", path.display()))?;
    }
    temp.persist(path)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {}", path.display(), e.error))?;
    Ok(())
}

fn report(
    args: &MigrateArgs,
    migration: &Migration,
    settings: &Settings,
    out: &Output,
) -> anyhow::Result<()> {
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    match (args.format, args.diff) {
        (MigrateFormat::Json, _) => {
            let document = MigrateDocument::new(migration, settings, args.diff);
            serde_json::to_writer_pretty(&mut stdout, &document)?;
            writeln!(stdout)?;
        }
        (MigrateFormat::Text, true) => {
            for file in migration.changed_files() {
                write!(stdout, "{}", unified_diff(file))?;
            }
            stdout.flush()?;
            write_diagnostics(&mut std::io::stderr().lock(), migration, out)?;
        }
        (MigrateFormat::Text, false) => {
            write_diagnostics(&mut stdout, migration, out)?;
            let wrote = args.out.is_some() || args.in_place || args.output.is_some();
            migrate_report_json::write_summary(&mut stdout, migration, settings, wrote, out)?;
        }
    }
    stdout.flush()?;
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
                .as_deref()
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

fn exit_code(migration: &Migration, fail_on: Option<FailOn>) -> ExitCode {
    let Some(fail_on) = fail_on else {
        return ExitCode::SUCCESS;
    };
    let threshold = match fail_on {
        FailOn::Approximate => Level::Approximate,
        FailOn::Manual => Level::Manual,
        FailOn::Unsupported => Level::Unsupported,
    };
    let failing = migration
        .files
        .iter()
        .flat_map(|f| &f.result.diagnostics)
        .any(|d| d.level >= threshold);
    if failing {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
