//! The raw command-line arguments of `cuport migrate` (clap types). They
//! become [`Flags`] for the settings resolver and a [`RunPlan`] for the
//! command's steps; neither knows clap.
use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use cuport_model::Target;
use cuport_rewrite::{HipLaunch, InPlace, Level};
use cuport_rules::Flavour;

use crate::run_plan::{Destination, RunPlan, StdoutFormat, Walk};
use crate::settings::Flags;

/// `--to` values: the target ids of the profiles cuport was built with.
pub(crate) fn target_parser() -> impl TypedValueParser<Value = Target> {
    PossibleValuesParser::new(Target::ALL.map(Target::id))
        .try_map(|id| Target::from_id(&id).ok_or("unknown target"))
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AscendBlasArg {
    Aclnn,
    Aclblas,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AscendKernelsArg {
    Simt,
    Vector,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  cuport migrate --to hip src/                      dry run: diagnostics and statistics only
  cuport migrate --to hip src/ --diff               unified diff on stdout, nothing written
  cuport migrate --to ascend src/ --out ../src-npu  a ported copy of the whole tree
  cuport migrate --to hip src/ --in-place           rewrite files, keeping FILE.cuport.orig backups
  cuport migrate --to musa kernel.cu -o kernel.mu   one file
  cuport migrate --to hip src/ --fail-on manual     CI: exit 1 while manual work remains
  cuport migrate --to musa src/ --out ../src-musa --rename-sources
                                                    .cu -> .mu, .cuh -> .muh; includes and build files follow
  cuport migrate --to ascend src/ --out ../src-npu --ascend-kernel-skeletons
                                                    plus OUT/<source>.ascend/<kernel>_kernel.cpp per kernel
  cuport migrate --to ascend src/ --out ../src-npu --ascend-kernels simt
                                                    kernels stay CUDA-shaped for Ascend C SIMT (CANN >= 9.1.0,
                                                    Ascend 950PR/950DT); .cu files become .asc
  cuport migrate --dual --to ascend,hip src/ --out ../src-dual
                                                    one source for CUDA, Ascend and HIP plus the cuport/ shim

Project settings may live in cuport.toml at the root of the migrated tree
([migrate] target, dual, exclude, ignore, rules, hip-kernel-launch, hip-libs, ascend-blas, hip-arch, annotate,
cann-version, rocm-version, ascend-kernels);
flags override them; --show-settings prints the result and where each value came from.

Exit status: 0 done; 1 when --fail-on finds a diagnostic at that level or above;
2 on a usage or input error.")]
pub(crate) struct MigrateArgs {
    /// Directory or file to migrate.
    pub(crate) path: PathBuf,
    /// Target accelerator stack (or `target` in cuport.toml); with --dual, a
    /// comma-separated list (`--to ascend,hip`).
    #[arg(long, value_delimiter = ',', value_parser = target_parser())]
    pub(crate) to: Vec<Target>,
    /// Dual-stack: rewrite to portable names and generate the cuport/ shim,
    /// so one source builds for CUDA (default) and each --to target, chosen
    /// at build time with -DCUPORT_BACKEND_<TARGET>.
    #[arg(long)]
    pub(crate) dual: bool,
    /// Write a ported copy of the tree into DIR (outside the tree).
    #[arg(long, value_name = "DIR", group = "mode")]
    pub(crate) out: Option<PathBuf>,
    /// Rewrite files in place (atomically), keeping FILE.cuport.orig backups.
    #[arg(long, group = "mode")]
    pub(crate) in_place: bool,
    /// With --in-place: keep no backups.
    #[arg(long, requires = "in_place")]
    pub(crate) no_backup: bool,
    /// With --in-place: also rewrite read-only files (their mode is kept);
    /// without it a read-only file stops the run before anything is written.
    #[arg(long, requires = "in_place")]
    pub(crate) force: bool,
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
    /// The CANN release the Ascend port must build with (default: the newest
    /// cuport supports, 9.1.0): rules that need a newer release become CP0016
    /// diagnostics, and the helpers use the APIs that release has.
    #[arg(long, value_name = "VERSION")]
    pub(crate) cann_version: Option<String>,
    /// How Ascend ports cuBLAS and cuBLASLt calls: `aclnn` (default) through
    /// cuport helpers over aclnn operators; `aclblas` as calls of CANN's
    /// ops-blas library (cann_ops_blas.h, cann_ops_blasLt.h; untagged, so the
    /// CANN release that ships it is unconfirmed).
    #[arg(long, value_enum, value_name = "LIBRARY")]
    pub(crate) ascend_blas: Option<AscendBlasArg>,
    /// How Ascend ports CUDA kernels: `vector` (default) leaves each kernel to
    /// a hand port in Ascend C's vector model (Atlas A2/A3); `simt` keeps
    /// kernels CUDA-shaped for Ascend C SIMT (Ascend 950PR/950DT, CANN 9.1.0
    /// or newer), renaming device names, and writes .cu files as .asc.
    #[arg(long, value_enum, value_name = "MODEL")]
    pub(crate) ascend_kernels: Option<AscendKernelsArg>,
    /// The ROCm (HIP) release the HIP port must build with (default: none,
    /// every rule applies): names HIP added later become CP0016 diagnostics.
    #[arg(long, value_name = "VERSION")]
    pub(crate) rocm_version: Option<String>,
    /// AMD GPU architectures for build files (CMake's HIP_ARCHITECTURES),
    /// comma-separated: `gfx90a,gfx942`. Default: gfx90a and gfx942 (MI200,
    /// MI300), noted where written.
    #[arg(long, value_name = "GFX,...", value_delimiter = ',')]
    pub(crate) hip_arch: Vec<String>,
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
    #[command(flatten)]
    pub(crate) walk: crate::walk_args::WalkArgs,
    /// With --to ascend and --out: write an Ascend C skeleton per CUDA kernel
    /// to OUT/<source path>.ascend/<kernel>_kernel.cpp.
    #[arg(long, requires = "out")]
    pub(crate) ascend_kernel_skeletons: bool,
    /// With --out or --in-place: rename sources to the target's conventions
    /// (HIP .cu->.hip; MUSA .cu->.mu, .cuh->.muh; MLU .cu->.mlu, .cuh->.mluh;
    /// Ascend keeps names); includes and build files follow.
    #[arg(long)]
    pub(crate) rename_sources: bool,
    /// With --to ascend: recognise what each kernel computes, confirm or
    /// refute the proposed `[[kernel]]` rules (and those of --rules) by
    /// execution, and replace the confirmed kernels' launches with aclnn
    /// operator calls. COMPILES AND RUNS the scanned kernels on this
    /// machine's CPU (g++, or CUPORT_CXX) against ONNX Runtime (CUPORT_PYTHON
    /// with `pip install onnxruntime onnx numpy`); see docs/kernel-rules.md.
    #[arg(long)]
    pub(crate) verify_kernels: bool,
    /// Print the resolved settings and where each came from, then exit.
    #[arg(long)]
    pub(crate) show_settings: bool,
    /// Also write review reports into DIR: report.json, summary.md,
    /// diagnostics.sarif, changes.csv and unsupported.csv.
    #[arg(long, value_name = "DIR")]
    pub(crate) report: Option<PathBuf>,
}

impl MigrateArgs {
    /// What the run writes, where, and when it fails.
    pub(crate) fn run_plan(&self) -> RunPlan {
        RunPlan {
            path: self.path.clone(),
            destination: self.destination(),
            stdout: match self.format {
                MigrateFormat::Text => StdoutFormat::Text,
                MigrateFormat::Json => StdoutFormat::Json,
            },
            report_dir: self.report.clone(),
            fail_on: self.fail_on.map(|level| match level {
                FailOn::Approximate => Level::Approximate,
                FailOn::Manual => Level::Manual,
                FailOn::Unsupported => Level::Unsupported,
            }),
            walk: Walk {
                hidden: self.walk.hidden,
                no_ignore: self.walk.no_ignore,
            },
            kernel_skeletons: self.ascend_kernel_skeletons,
            rename_sources: self.rename_sources,
            verify_kernels: self.verify_kernels,
        }
    }

    /// The one of --out, --in-place, -o and --diff given (clap's `mode`
    /// group allows one at most).
    fn destination(&self) -> Destination {
        if let Some(dir) = &self.out {
            Destination::Tree(dir.clone())
        } else if self.in_place {
            Destination::InPlace(InPlace {
                backup: !self.no_backup,
                force: self.force,
            })
        } else if let Some(file) = &self.output {
            Destination::File(file.clone())
        } else if self.diff {
            Destination::Diff
        } else {
            Destination::Nowhere
        }
    }

    /// The flags the settings resolver combines with cuport.toml.
    pub(crate) fn flags(&self) -> Flags {
        Flags {
            path: self.path.clone(),
            to: self.to.clone(),
            dual: self.dual,
            exclude: self.walk.exclude.clone(),
            rules: self.rules.clone(),
            hip_kernel_launch: self.hip_kernel_launch.map(|l| match l {
                LaunchArg::Chevron => HipLaunch::Chevron,
                LaunchArg::Ggl => HipLaunch::Ggl,
            }),
            hip_libs: self.hip_libs.map(|l| match l {
                HipLibsArg::Hip => Flavour::Default,
                HipLibsArg::Roc => Flavour::Roc,
            }),
            ascend_blas: self.ascend_blas.map(|l| match l {
                AscendBlasArg::Aclnn => Flavour::Default,
                AscendBlasArg::Aclblas => Flavour::Aclblas,
            }),
            annotate: self.annotate,
            kernel_models: self
                .ascend_kernels
                .map(|model| {
                    let value = match model {
                        AscendKernelsArg::Simt => "simt",
                        AscendKernelsArg::Vector => "vector",
                    };
                    vec![("ascend-kernels".to_owned(), value.to_owned())]
                })
                .unwrap_or_default(),
            hip_arch: self.hip_arch.clone(),
            sdk_versions: [
                ("cann-version", self.cann_version.clone()),
                ("rocm-version", self.rocm_version.clone()),
            ]
            .into_iter()
            .filter_map(|(flag, value)| Some((flag.to_owned(), value?)))
            .collect(),
        }
    }
}
