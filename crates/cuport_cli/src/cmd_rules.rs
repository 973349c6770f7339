//! `cuport rules`: list, show, check, count and tabulate the rule tables.
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use cuport_model::{Library, Target};
use cuport_rules::{Flavour, Flavours, Resolved, RuleSet, Source, Status};

use crate::output::Output;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  cuport rules show cudaMemcpy\n  cuport rules list --to ascend --library nccl\n  cuport rules show __shfl_down_sync --to ascend --ascend-kernels simt\n  cuport rules check my-rules.toml\n  cuport rules stats --format json\n  cuport rules check-headers --vendor ~/.cache/cuport-cann-headers/cannvendor"
)]
pub(crate) struct RulesArgs {
    /// A user rule file layered over the built-ins; repeat for more (later files win).
    #[arg(long = "rules", global = true, value_name = "FILE")]
    rules: Vec<PathBuf>,
    /// HIP library family for list and show: hip (hipBLAS, hipSPARSE, ...) or roc (rocBLAS, rocSPARSE, ...).
    #[arg(long = "hip-libs", global = true, value_parser = parse_flavour, default_value = "hip")]
    hip_libs: Flavour,
    /// Ascend kernel model for list and show: vector (the default tables) or
    /// simt (Ascend C SIMT's device names, as `migrate --ascend-kernels simt`).
    #[arg(
        long = "ascend-kernels",
        global = true,
        value_enum,
        value_name = "MODEL"
    )]
    ascend_kernels: Option<crate::migrate_args::AscendKernelsArg>,
    /// cuBLAS/cuBLASLt on Ascend for list and show: aclnn (helpers over aclnn
    /// operators) or aclblas (CANN's ops-blas), as `migrate --ascend-blas`.
    #[arg(long = "ascend-blas", global = true, value_parser = parse_ascend_blas, default_value = "aclnn")]
    ascend_blas: Flavour,
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Debug, clap::Subcommand)]
enum RulesCommand {
    /// List mapped CUDA names.
    List {
        /// Only this target.
        #[arg(long, value_parser = crate::migrate_args::target_parser())]
        to: Option<Target>,
        /// Only this CUDA library (runtime, cublas, nccl, torch, ...).
        #[arg(long, value_parser = parse_library)]
        library: Option<Library>,
        /// Only this status (exact, renamed, rewrite, approximate, manual, unsupported).
        #[arg(long, value_parser = parse_status)]
        status: Option<Status>,
    },
    /// Show every target's mapping of one CUDA name.
    Show {
        /// A CUDA name: function, type, enum value, header, `torch.cuda.*` path or device string.
        name: String,
        #[arg(long, value_parser = crate::migrate_args::target_parser())]
        to: Option<Target>,
    },
    /// Validate the built-in tables and the given rule files; exit 1 on any problem.
    Check {
        /// User rule files to check on top of the built-ins.
        files: Vec<PathBuf>,
    },
    /// Count resolved CUDA names per target and library.
    Stats {
        #[arg(long, value_enum, default_value_t = StatsFormat::Text)]
        format: StatsFormat,
    },
    /// Print the support matrix (committed as mappings/MATRIX.md and MATRIX.csv).
    Matrix {
        #[arg(long, value_enum, default_value_t = MatrixFormat::Md)]
        format: MatrixFormat,
    },
    /// Print C declarations of every target function the tables use.
    Declarations {
        #[arg(long, value_parser = crate::migrate_args::target_parser())]
        to: Target,
        /// Leave out cuport's own types and helpers (declared by the
        /// generated cuport/cuport_shim.h of a dual-stack build).
        #[arg(long)]
        vendor_only: bool,
    },
    /// Check the target's rows against the vendor's own headers of each
    /// release: every name a rule writes exists in each release the rule
    /// applies to, signatures and enumerator values agree; exit 1 on any problem.
    CheckHeaders {
        #[arg(long, value_parser = crate::migrate_args::target_parser(), default_value = "ascend")]
        to: Target,
        /// The unpacked header archive (`../shared/vendor/unpack-cann-headers.sh`
        /// prints it): one include directory per release, as the target's
        /// `[vendor-headers] release-include` says (`cann-<release>/include`).
        #[arg(long = "vendor", visible_alias = "cann-vendor", value_name = "DIR")]
        vendor: Option<PathBuf>,
        /// More include directories of one release, `RELEASE=DIR`: HCCL,
        /// which CANN's open repositories lack, from a torch-npu wheel
        /// (`9.1.0=<wheel>/torch_npu/include/third_party/hccl/inc`). Repeatable.
        #[arg(long = "include", value_name = "RELEASE=DIR", value_parser = parse_release_dir)]
        include: Vec<(String, PathBuf)>,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum StatsFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum MatrixFormat {
    Md,
    Csv,
}

fn parse_flavour(s: &str) -> Result<Flavour, String> {
    Flavour::from_hip_libs(s).ok_or_else(|| format!("unknown --hip-libs `{s}`; use hip or roc"))
}

fn parse_ascend_blas(s: &str) -> Result<Flavour, String> {
    Flavour::from_ascend_blas(s)
        .ok_or_else(|| format!("unknown --ascend-blas `{s}`; use aclnn or aclblas"))
}

fn parse_library(s: &str) -> Result<Library, String> {
    Library::from_id(s).ok_or_else(|| {
        let ids: Vec<&str> = Library::ALL.iter().map(|l| l.id()).collect();
        format!("unknown library `{s}`; use one of {}", ids.join(", "))
    })
}

fn parse_release_dir(s: &str) -> Result<(String, PathBuf), String> {
    let (release, dir) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not RELEASE=DIR"))?;
    Ok((release.trim().to_owned(), PathBuf::from(dir)))
}

fn parse_status(s: &str) -> Result<Status, String> {
    Status::from_id(s).ok_or_else(|| {
        format!(
            "unknown status `{s}`; use exact, renamed, rewrite, approximate, manual or unsupported"
        )
    })
}

impl RulesArgs {
    /// The rule flavours names of `target` are looked up in.
    fn flavour(&self, target: Target) -> Flavours {
        let simt = self.ascend_kernels == Some(crate::migrate_args::AscendKernelsArg::Simt);
        let chosen = [
            simt.then_some(Flavour::Simt),
            Some(self.hip_libs),
            Some(self.ascend_blas),
        ];
        chosen
            .into_iter()
            .flatten()
            .filter(|f| f.applies_to(target))
            .collect()
    }
}

pub(crate) fn run(args: &RulesArgs, out: &Output) -> anyhow::Result<ExitCode> {
    if let RulesCommand::Check { files } = &args.command {
        return check(args, files, out);
    }
    let set = load(args)?;
    match &args.command {
        RulesCommand::List {
            to,
            library,
            status,
        } => emit(&list(&set, &|t| args.flavour(t), *to, *library, *status))?,
        RulesCommand::Show { name, to } => return show(&set, &|t| args.flavour(t), name, *to, out),
        RulesCommand::Stats { format } => emit(&stats(&set, *format)?)?,
        RulesCommand::Matrix { format } => {
            let stats = set.stats();
            emit(&match format {
                MatrixFormat::Md => stats.matrix_markdown(),
                MatrixFormat::Csv => stats.matrix_csv(),
            })?;
        }
        RulesCommand::Declarations { to, vendor_only } => {
            let header = if *vendor_only {
                set.vendor_declarations_header(*to)
            } else {
                set.declarations_header(*to)
            };
            emit(&header)?;
        }
        RulesCommand::CheckHeaders {
            to,
            vendor,
            include,
        } => {
            if vendor.is_none() && include.is_empty() {
                anyhow::bail!("give the headers: --vendor DIR and/or --include RELEASE=DIR");
            }
            let headers = cuport_rules::vendor_headers::VendorHeaders::discover(
                *to,
                vendor.as_deref(),
                include,
            )?;
            let check = set.check_vendor_headers(&headers)?;
            emit(&check.render())?;
            return Ok(crate::exit::gate(check.problem_count() > 0));
        }
        RulesCommand::Check { .. } => {}
    }
    Ok(crate::exit::success())
}

/// Writes `text` to stdout; a reader that stops early (`| head`) is not an error.
fn emit(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

fn sources(args: &RulesArgs, extra: &[PathBuf]) -> anyhow::Result<Vec<Source>> {
    let mut sources = RuleSet::builtin_sources();
    for (i, path) in args.rules.iter().chain(extra).enumerate() {
        let priority = i32::try_from(i + 1).unwrap_or(i32::MAX);
        sources.push(RuleSet::user_source(path, priority)?);
    }
    Ok(sources)
}

fn load(args: &RulesArgs) -> anyhow::Result<RuleSet> {
    RuleSet::from_sources(sources(args, &[])?).context("loading the rule tables")
}

fn check(args: &RulesArgs, files: &[PathBuf], out: &Output) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let sources = sources(args, files)?;
    let count = sources.len();
    let (_, diags) = cuport_rules::build(sources);
    out.info(&format!(
        "checked {count} rule files in {:.1?}",
        started.elapsed()
    ));
    let red = out.style(anstyle::AnsiColor::Red, true);
    for d in &diags {
        println!(
            "{}: {red}error{red:#}[{}]: {}",
            d.location,
            d.kind.id(),
            d.message
        );
    }
    if diags.is_empty() {
        println!("{count} rule files OK");
        Ok(crate::exit::success())
    } else {
        println!("{} problem(s) in {count} rule files", diags.len());
        Ok(crate::exit::findings())
    }
}

fn list(
    set: &RuleSet,
    flavour_of: &dyn Fn(Target) -> Flavours,
    to: Option<Target>,
    library: Option<Library>,
    status: Option<Status>,
) -> String {
    let mut buf = String::new();
    for target in Target::ALL
        .into_iter()
        .filter(|t| to.is_none_or(|w| w == *t))
    {
        let flavour = flavour_of(target);
        for name in set.known_cuda_names_flavour(target, flavour) {
            let Some(r) = set.lookup_flavour(target, flavour, name) else {
                continue;
            };
            if library.is_some_and(|l| r.library() != Some(l))
                || status.is_some_and(|s| r.status() != s)
            {
                continue;
            }
            let lib = r.library().map_or("-", |l| l.id());
            let code = r.code().map_or_else(|| "-".to_owned(), |c| c.to_string());
            let target_name = r.target_name.as_deref().unwrap_or("-");
            let _ = writeln!(
                buf,
                "{target}\t{lib}\t{}\t{name}\t{target_name}\t{code}",
                r.status()
            );
        }
    }
    buf
}

fn show(
    set: &RuleSet,
    flavour_of: &dyn Fn(Target) -> Flavours,
    name: &str,
    to: Option<Target>,
    out: &Output,
) -> anyhow::Result<ExitCode> {
    let mut found = false;
    let mut buf = String::new();
    for target in Target::ALL
        .into_iter()
        .filter(|t| to.is_none_or(|w| w == *t))
    {
        match set.lookup_flavour(target, flavour_of(target), name) {
            Some(r) => {
                found = true;
                print_resolved(&mut buf, name, &r, out);
            }
            None => {
                let _ = writeln!(buf, "{target}: no rule for `{name}`\n");
            }
        }
    }
    emit(&buf)?;
    if found {
        Ok(crate::exit::success())
    } else {
        out.warn(&format!(
            "`{name}` is not in any rule table; `cuport rules list` shows what is"
        ));
        Ok(crate::exit::findings())
    }
}

fn print_resolved(buf: &mut String, name: &str, r: &Resolved<'_>, out: &Output) {
    let bold = out.bold();
    let target_name = r.target_name.as_deref().unwrap_or("(none)");
    let flavour = match r.rule.flavour {
        Flavour::Default => String::new(),
        other => format!(" ({other})"),
    };
    let _ = writeln!(
        buf,
        "{bold}{}{flavour}{bold:#}: {name} → {target_name}  [{}]",
        r.target,
        r.status()
    );
    let mut field = |label: &str, value: String| {
        if !value.is_empty() {
            let _ = writeln!(buf, "  {label:<10} {value}");
        }
    };
    field("code", r.code().map(|c| c.to_string()).unwrap_or_default());
    field(
        "library",
        r.library().map(|l| l.id().to_owned()).unwrap_or_default(),
    );
    field(
        "template",
        r.template()
            .map(|t| t.source().to_owned())
            .unwrap_or_default(),
    );
    field("helpers", r.helpers().join(", "));
    field("headers", r.headers().join(", "));
    field("imports", r.imports().join(", "));
    field("link", r.libraries().join(", "));
    field(
        "effort",
        r.effort()
            .map(|e| format!("{e:?}").to_lowercase())
            .unwrap_or_default(),
    );
    field("note", r.note().unwrap_or_default().to_owned());
    field("reference", r.reference().unwrap_or_default().to_owned());
    field("version", r.rule.target_version.clone().unwrap_or_default());
    field(
        "confirmed",
        if r.unconfirmed() {
            "no (not verified against a vendor header or doc)".to_owned()
        } else {
            String::new()
        },
    );
    field(
        "pattern",
        if r.via_pattern {
            "yes".to_owned()
        } else {
            String::new()
        },
    );
    field("rule file", r.origin().to_string());
    buf.push('\n');
}

fn stats(set: &RuleSet, format: StatsFormat) -> anyhow::Result<String> {
    let stats = set.stats();
    if let StatsFormat::Json = format {
        return Ok(serde_json::to_string_pretty(&stats)? + "\n");
    }
    let mut buf = String::new();
    let _ = writeln!(
        buf,
        "{:<8} {:<20} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "target", "library", "exact", "renamed", "rewrite", "approx", "manual", "unsupp", "total"
    );
    for (label, t) in stats.sections() {
        let rows = t
            .libraries
            .iter()
            .map(|(l, c)| (*l, c))
            .chain(std::iter::once(("ALL", &t.total)));
        for (lib, c) in rows {
            let _ = write!(buf, "{label:<8} {lib:<20}");
            for n in c.columns() {
                let _ = write!(buf, " {n:>7}");
            }
            let _ = writeln!(buf);
        }
    }
    Ok(buf)
}
