//! `run --slurm`: every leg of every case becomes an array task of its
//! placement's job; the cases are judged, exactly as locally, once all
//! jobs are final.
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::case::{AppCase, LoadedFile, OpCase};
use crate::device::DeviceIdentity;
use crate::error::{RegressError, Result};
use crate::report::LegReport;
use crate::report::{CaseReport, CrossRatio, RunReport};
use crate::slurm::config::DEFAULT_PLACEMENT;
use crate::slurm::script::{CPU_FILE, OUT_DIR};
use crate::slurm::{batch, BatchLeg, BatchOptions, LegOutcome, SlurmConfig};

use super::app::{app_exec_case, judge_exec_case, ExecCase};
use super::gate::GateSettings;
use super::legs::{blank_report, failed, settle, Finished};
use super::op::{judge_op_legs, over_memory, plan_op_legs};
use super::{finish, RunOptions};

/// Default seconds between polls of the queue.
pub const DEFAULT_POLL_S: f64 = 5.0;
/// Default seconds to wait for all jobs before cancelling them.
pub const DEFAULT_WAIT_TIMEOUT_S: f64 = 86_400.0;

/// Settings of a Slurm run; `None` fields come from the `[slurm]` tables.
pub struct SlurmRunOptions {
    /// Shared-filesystem folder for scripts, legs' files and logs.
    pub run_dir: PathBuf,
    /// A site's `[slurm]` table, used instead of the case files' tables.
    pub site: Option<SlurmConfig>,
    pub max_concurrent: Option<u32>,
    pub poll: Option<Duration>,
    pub wait_timeout: Option<Duration>,
}

enum Pending<'f> {
    Op {
        file: &'f LoadedFile,
        case: &'f OpCase,
        gate: Box<GateSettings>,
        legs: Range<usize>,
    },
    /// Judged before submitting anything (over its memory limit).
    Done(Box<CaseReport>),
    App {
        case: Box<ExecCase>,
        legs: Range<usize>,
    },
}

/// Submit every leg, wait for all of them, then judge every case.
pub fn run_files_slurm(
    files: &[LoadedFile],
    opts: &RunOptions<'_>,
    slurm: &SlurmRunOptions,
    on_case: &mut dyn FnMut(&CaseReport),
) -> Result<RunReport> {
    let (pending, legs, metas) = plan(files, opts, slurm)?;
    // Ctrl-C cancels the jobs (`scancel`); the cases are judged anyway.
    let stop = || (opts.stop)().map(|why| why.reason);
    let batch_opts = BatchOptions {
        run_dir: &slurm.run_dir,
        max_concurrent: setting(files, slurm, slurm.max_concurrent, |c| c.max_concurrent),
        poll: slurm.poll.unwrap_or_else(|| {
            secs(setting(files, slurm, None, |c| c.poll_s).unwrap_or(DEFAULT_POLL_S))
        }),
        wait_timeout: slurm.wait_timeout.unwrap_or_else(|| {
            secs(
                setting(files, slurm, None, |c| c.wait_timeout_s).unwrap_or(DEFAULT_WAIT_TIMEOUT_S),
            )
        }),
        stop: &stop,
    };
    let outcomes = batch::run(&legs, &batch_opts)?;
    let mut finished: Vec<Option<Finished>> = outcomes
        .into_iter()
        .zip(legs.iter().zip(&metas))
        .map(|(o, (leg, meta))| Some(to_finished(o, leg, meta)))
        .collect();
    let mut take = |range: Range<usize>| -> Vec<Finished> {
        range.filter_map(|i| finished[i].take()).collect()
    };
    let (mut cases, mut cross) = (Vec::new(), Vec::<CrossRatio>::new());
    for p in pending {
        let (report, ratios) = match p {
            Pending::Op {
                file,
                case,
                gate,
                legs,
            } => judge_op_legs(file, case, take(legs), &gate),
            Pending::Done(report) => (*report, Vec::new()),
            Pending::App { case, legs } => {
                let mut two = take(legs).into_iter();
                match (two.next(), two.next()) {
                    (Some(r), Some(c)) => judge_exec_case(&case, r, c),
                    _ => continue,
                }
            }
        };
        on_case(&report);
        cases.push(report);
        cross.extend(ratios);
    }
    let mut report = finish(cases, cross, opts.baseline.as_ref(), opts.uncertain_fails);
    if let Some(why) = (opts.stop)() {
        report.interrupt(why);
    }
    Ok(report)
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.001))
}

/// The command-line value, else the site table's (with `--slurm-config`),
/// else the first case file's that sets it.
fn setting<T: Copy>(
    files: &[LoadedFile],
    slurm: &SlurmRunOptions,
    cli: Option<T>,
    get: impl Fn(&SlurmConfig) -> Option<T>,
) -> Option<T> {
    cli.or_else(|| match &slurm.site {
        Some(site) => get(site),
        None => files
            .iter()
            .filter_map(|f| f.file.slurm.as_ref())
            .find_map(&get),
    })
}

type Plan<'f> = (Vec<Pending<'f>>, Vec<BatchLeg>, Vec<LegMeta>);

fn plan<'f>(
    files: &'f [LoadedFile],
    opts: &RunOptions<'_>,
    slurm: &SlurmRunOptions,
) -> Result<Plan<'f>> {
    let keep = |n: &str| opts.filter.as_deref().is_none_or(|f| n.contains(f));
    let (mut pending, mut legs, mut metas) = (Vec::new(), Vec::new(), Vec::new());
    let empty = SlurmConfig::default();
    for file in files {
        let config = slurm
            .site
            .as_ref()
            .or(file.file.slurm.as_ref())
            .unwrap_or(&empty);
        // Jobs start in the run directory, maybe on another node: every
        // path they get must be absolute.
        let path = absolute(&file.path)?;
        for case in file.file.cases.iter().filter(|c| keep(&c.name)) {
            let gate = GateSettings::for_op(opts, file, case);
            if let Some(report) = over_memory(file, case, &gate) {
                pending.push(Pending::Done(Box::new(report)));
                continue;
            }
            let start = legs.len();
            let backends = file.backends_of(case);
            for (planned, backend) in plan_op_legs(file, &path, case, opts)
                .into_iter()
                .zip(backends)
            {
                metas.push(LegMeta {
                    backend: planned.label.clone(),
                    role: planned.role,
                    memory: gate.memory,
                });
                legs.push(BatchLeg {
                    placement: config.resolve(&backend),
                    placement_name: placement_name(config, &backend),
                    name: leg_folder(legs.len(), &case.name, &planned.label),
                    request: planned.request,
                });
            }
            let range = start..legs.len();
            pending.push(Pending::Op {
                file,
                case,
                gate: Box::new(gate),
                legs: range,
            });
        }
        for app in file.file.apps.iter().filter(|a| keep(&a.name)) {
            let mut case = app_exec_case(file, app, opts);
            case.cwd = case.cwd.as_deref().map(absolute).transpose()?;
            let start = legs.len();
            let roles = [
                ("reference", &app.reference_placement, &case.reference),
                ("candidate", &app.candidate_placement, &case.candidate),
            ];
            for (role, named, command) in roles {
                let name = app_placement(file, config, app, role, named.as_deref())?;
                metas.push(LegMeta {
                    backend: "exec".to_owned(),
                    role,
                    memory: case.gate.memory,
                });
                legs.push(BatchLeg {
                    placement: config.resolve(&name),
                    placement_name: name,
                    name: leg_folder(legs.len(), &app.name, role),
                    request: case.request(command),
                });
            }
            // Legs on different placements ran on different hardware: their
            // speed ratio is information, not a gate, unless asked for.
            if app.gate_cross.is_none() && legs[start].placement != legs[start + 1].placement {
                case.gate_cross = false;
            }
            let range = start..legs.len();
            pending.push(Pending::App {
                case: Box::new(case),
                legs: range,
            });
        }
    }
    Ok((pending, legs, metas))
}

fn absolute(path: &Path) -> Result<PathBuf> {
    let path = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    std::path::absolute(path).map_err(|e| RegressError::io(path, e))
}

/// Op legs use their backend's placement when there is one.
fn placement_name(config: &SlurmConfig, backend: &str) -> String {
    if config.placement.contains_key(backend) {
        backend.to_owned()
    } else {
        DEFAULT_PLACEMENT.to_owned()
    }
}

fn app_placement(
    file: &LoadedFile,
    config: &SlurmConfig,
    app: &AppCase,
    role: &str,
    named: Option<&str>,
) -> Result<String> {
    match named {
        None => Ok(DEFAULT_PLACEMENT.to_owned()),
        Some(name) if config.placement.contains_key(name) => Ok(name.to_owned()),
        Some(name) => Err(RegressError::Case {
            path: file.path.clone(),
            message: format!(
                "app `{}`, field `{role}_placement`: no [slurm.placement.{name}] table (known: {}); add one to this file or to the --slurm-config file",
                app.name,
                known(config)
            ),
        }),
    }
}

fn known(config: &SlurmConfig) -> String {
    if config.placement.is_empty() {
        return "none".to_owned();
    }
    config
        .placement
        .keys()
        .cloned()
        .collect::<Vec<_>>()
        .join(", ")
}

/// `007-gemm-f32-cuda`: index first (unique), then readable words.
fn leg_folder(index: usize, case: &str, label: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .take(60)
            .collect()
    };
    format!("{index:03}-{}-{}", clean(case), clean(label))
}

/// The report's name of a leg: backend label (`exec` for app legs) and role.
struct LegMeta {
    backend: String,
    role: &'static str,
    /// The case's memory limit (bounds the tensors read back).
    memory: u64,
}

fn to_finished(outcome: LegOutcome, leg: &BatchLeg, meta: &LegMeta) -> Finished {
    let mut report = blank_report(&meta.backend, meta.role, leg.request.command.display());
    report.slurm = Some(outcome.slurm);
    match outcome.result {
        Ok((state, wall)) => {
            let mut done = settle(
                report,
                state,
                wall,
                outcome.log_excerpt,
                &outcome.dir.join(OUT_DIR),
                meta.memory,
            );
            on_node(&mut done.report, &outcome.dir);
            done
        }
        Err(reason) => {
            report.log_excerpt = outcome.log_excerpt;
            failed(report, reason)
        }
    }
}

/// A leg that did not describe its device was measured on the node's CPU,
/// not on this host's, which is what [`settle`] assumes.
fn on_node(report: &mut LegReport, leg_dir: &Path) {
    let node = report.slurm.as_ref().and_then(|s| s.node.clone());
    let Some(device) = report.device.as_mut() else {
        return;
    };
    let here = DeviceIdentity::this_cpu(&device.backend);
    if device.model != here.model || device.host != here.host {
        return;
    }
    if let Some(model) = node_cpu(leg_dir) {
        device.model = model;
    }
    if let Some(node) = node {
        device.host = node;
    }
}

/// The node's CPU as [`DeviceIdentity::this_cpu`] words it.
fn node_cpu(leg_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(leg_dir.join(CPU_FILE)).ok()?;
    let mut lines = text.lines();
    let model = lines.next().map(str::trim).filter(|m| !m.is_empty())?;
    let threads: usize = lines.next()?.trim().parse().ok()?;
    Some(format!("{model} ({threads} threads, linux)"))
}
