//! What the gate adds to a case besides its legs' own checks: the memory
//! check that runs before anything is allocated, the `compared` check for
//! legs that did not run here, and the report of a case that an interrupt
//! or a harness bug kept from running.
use std::any::Any;

use crate::case::{AppCase, LoadedFile, OpCase};
use crate::dtype::DType;
use crate::interrupt::Interruption;
use crate::memory::{human_bytes, MachineMemory, MemoryLimit, DEFAULT_SHARE};
use crate::ops::{Footprint, OpSpec};
use crate::report::{CaseReport, Check, CheckKind, LegReport, LegState, Outcome, COMPARED};

use super::RunOptions;

/// One case's gate settings, resolved in this order: the command line,
/// the case, the file's `[defaults]`, the built-in default.
#[derive(Debug, Clone, PartialEq)]
pub struct GateSettings {
    /// Skipped legs are warnings instead of making the case INCOMPLETE.
    pub allow_skip: bool,
    /// Host memory the case may use, in bytes.
    pub memory: u64,
    /// `regress/ops.toml:12`, or `(command line)`, for messages.
    pub location: String,
    /// Where `allow_skip` came from, for messages.
    pub allow_source: String,
    /// Where the memory limit came from, for messages.
    pub memory_source: String,
}

/// A case's own settings, before the command line and `[defaults]`.
struct CaseSettings<'a> {
    file: &'a LoadedFile,
    name: &'a str,
    allow_skip: Option<bool>,
    max_case_memory: Option<MemoryLimit>,
}

impl GateSettings {
    pub(super) fn for_op(opts: &RunOptions<'_>, file: &LoadedFile, case: &OpCase) -> GateSettings {
        GateSettings::resolve(
            opts,
            &CaseSettings {
                file,
                name: &case.name,
                allow_skip: case.allow_skip,
                max_case_memory: case.max_case_memory,
            },
        )
    }

    pub(super) fn for_app(opts: &RunOptions<'_>, file: &LoadedFile, app: &AppCase) -> GateSettings {
        GateSettings::resolve(
            opts,
            &CaseSettings {
                file,
                name: &app.name,
                allow_skip: app.allow_skip,
                max_case_memory: app.max_case_memory,
            },
        )
    }

    fn resolve(opts: &RunOptions<'_>, case: &CaseSettings<'_>) -> GateSettings {
        let machine = &opts.machine;
        let defaults = &case.file.file.defaults;
        let location = case.file.location(case.name);
        let in_defaults = format!("in [defaults] of {}", case.file.path.display());
        let allow_source = match (opts.allow_skip, case.allow_skip, defaults.allow_skip) {
            (true, _, _) => Some("--allow-skip".to_owned()),
            (false, Some(true), _) => Some(format!("allow_skip = true in this case, {location}")),
            (false, None, Some(true)) => Some(format!("allow_skip = true {in_defaults}")),
            _ => None,
        };
        let (limit, source) = match (
            opts.max_case_memory,
            case.max_case_memory,
            defaults.max_case_memory,
        ) {
            (Some(l), _, _) => (l, format!("--max-case-memory {l}")),
            (None, Some(l), _) => (l, format!("max_case_memory = \"{l}\" in this case")),
            (None, None, Some(l)) => (l, format!("max_case_memory = \"{l}\" {in_defaults}")),
            (None, None, None) => (MemoryLimit::Share(DEFAULT_SHARE), "the default".to_owned()),
        };
        GateSettings {
            allow_skip: allow_source.is_some(),
            memory: limit.bytes(machine.bytes),
            location,
            allow_source: allow_source.unwrap_or_default(),
            memory_source: describe_limit(limit, source, machine),
        }
    }

    /// Settings of `cuport regress exec`: the command line's, or defaults.
    pub fn command_line(allow_skip: bool, machine: &MachineMemory) -> GateSettings {
        let limit = MemoryLimit::Share(DEFAULT_SHARE);
        GateSettings {
            allow_skip,
            memory: limit.bytes(machine.bytes),
            location: "(command line)".to_owned(),
            allow_source: if allow_skip {
                "--allow-skip".to_owned()
            } else {
                String::new()
            },
            memory_source: describe_limit(limit, "the default".to_owned(), machine),
        }
    }

    /// A failing `memory` check when an op case needs more host memory
    /// than its limit: computed from the shapes, before any allocation.
    pub(super) fn memory_check(
        &self,
        name: &str,
        op: &OpSpec,
        dtype: DType,
        legs: usize,
    ) -> Option<Check> {
        let need = Footprint::of(op, dtype, legs);
        if need.peak_bytes <= u128::from(self.memory) {
            return None;
        }
        Some(harness_check(
            "memory",
            Outcome::Error,
            format!(
                "{}: case `{name}` needs about {} of host memory at its peak ({}), over its limit of {} ({}). Nothing was allocated and no leg ran. Make the shapes smaller, or raise the limit with --max-case-memory or `max_case_memory` (in [defaults] or in this case)",
                self.location,
                human_bytes(need.peak_bytes),
                need.describe(dtype),
                human_bytes(u128::from(self.memory)),
                self.memory_source
            ),
        ))
    }

    /// The `compared` check when legs were skipped: INCOMPLETE, or a
    /// warning (`skipped`) where skips are allowed.
    pub(super) fn compared_check(&self, legs: &[LegReport]) -> Option<Check> {
        let skipped: Vec<String> = legs
            .iter()
            .filter_map(|l| match &l.state {
                LegState::Skipped { reason } => Some(format!("leg `{}`: {reason}", label(l))),
                _ => None,
            })
            .collect();
        if skipped.is_empty() {
            return None;
        }
        let head = format!("{} of {} legs did not run here", skipped.len(), legs.len());
        let (outcome, message) = if self.allow_skip {
            (
                Outcome::Skipped,
                format!(
                    "{head}; skips are allowed ({}), so this is only a warning: {}",
                    self.allow_source,
                    skipped.join("; ")
                ),
            )
        } else {
            (
                Outcome::Incomplete,
                format!(
                    "{head}, so this case's comparison is missing ({}): {}. Make the backend work on this machine, or, where machines are expected to lack it, pass --allow-skip or set `allow_skip = true` in [defaults] or in this case",
                    self.location,
                    skipped.join("; ")
                ),
            )
        };
        Some(harness_check(COMPARED, outcome, message))
    }
}

fn describe_limit(limit: MemoryLimit, source: String, machine: &MachineMemory) -> String {
    match limit {
        MemoryLimit::Share(_) => format!(
            "{source}: {limit} of this machine's {}, from {}",
            human_bytes(u128::from(machine.bytes)),
            machine.source
        ),
        MemoryLimit::Bytes(_) => source,
    }
}

/// A leg's name in messages: the backend label, or the role of an app leg.
fn label(leg: &LegReport) -> &str {
    if leg.backend == "exec" {
        &leg.role
    } else {
        &leg.backend
    }
}

fn harness_check(name: &str, outcome: Outcome, message: String) -> Check {
    Check {
        name: name.to_owned(),
        kind: CheckKind::Harness,
        outcome,
        message,
        accuracy: None,
        perf: None,
    }
}

/// `base` (a case with no legs yet) after an interrupt kept it from
/// starting.
pub(super) fn not_run(mut base: CaseReport, why: &Interruption) -> CaseReport {
    base.checks.push(harness_check(
        "interrupted",
        Outcome::Skipped,
        format!(
            "not run: cuport was {} before this case started",
            why.reason
        ),
    ));
    base.settle();
    base
}

/// `base` after the harness itself panicked while running it: the case
/// errs, the run goes on.
pub(super) fn panicked(mut base: CaseReport, payload: &(dyn Any + Send)) -> CaseReport {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned());
    base.checks.push(harness_check(
        "harness",
        Outcome::Error,
        format!("internal error while running this case: {what}. The other cases ran; please report this together with the case file"),
    ));
    base.settle();
    base
}

#[cfg(test)]
pub(super) mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::time::Duration;

    use super::*;
    use crate::exec::CommandSpec;
    use crate::run::legs::blank_report;

    fn no_launch(_: &Path, _: &str, _: &str, _: usize) -> CommandSpec {
        CommandSpec::Shell("exit 3".into())
    }

    /// Options of a run on a machine with 8 GiB that never launches legs.
    pub(in crate::run) fn options(
        allow_skip: bool,
        memory: Option<MemoryLimit>,
    ) -> RunOptions<'static> {
        RunOptions {
            launcher: &no_launch,
            baseline: None,
            uncertain_fails: false,
            op_timeout: Duration::from_secs(5),
            filter: None,
            allow_skip,
            max_case_memory: memory,
            machine: MachineMemory {
                bytes: 8 << 30,
                source: "test",
            },
            stop: &crate::interrupt::never,
        }
    }

    pub(in crate::run) fn loaded(text: &str) -> LoadedFile {
        LoadedFile {
            path: "cases.toml".into(),
            file: toml::from_str(text).unwrap_or_default(),
            lines: BTreeMap::from([("a".to_owned(), 3)]),
        }
    }

    const FILE: &str = "[defaults]\nallow_skip = true\nmax_case_memory = \"1GiB\"\n[[case]]\nname = \"a\"\nallow_skip = false\nmax_case_memory = \"50%\"\n[case.op]\nkind = \"add\"\nlen = 4\n[[case]]\nname = \"b\"\n[case.op]\nkind = \"add\"\nlen = 4\n";

    #[test]
    fn settings_come_from_the_command_line_then_the_case_then_defaults() {
        let file = loaded(FILE);
        let (a, b) = (&file.file.cases[0], &file.file.cases[1]);
        let plain = options(false, None);
        let gate = GateSettings::for_op(&plain, &file, a);
        assert_eq!((gate.allow_skip, gate.memory), (false, 4 << 30));
        assert_eq!(gate.location, "cases.toml:3");
        let gate = GateSettings::for_op(&plain, &file, b);
        assert_eq!((gate.allow_skip, gate.memory), (true, 1 << 30));
        assert_eq!(
            gate.allow_source,
            "allow_skip = true in [defaults] of cases.toml"
        );
        let flags = options(true, Some(MemoryLimit::Bytes(3 << 30)));
        let gate = GateSettings::for_op(&flags, &file, a);
        assert_eq!((gate.allow_skip, gate.memory), (true, 3 << 30));
        assert_eq!(gate.memory_source, "--max-case-memory 3GiB");
        let bare = loaded("[[case]]\nname = \"a\"\n[case.op]\nkind = \"add\"\nlen = 4\n");
        let gate = GateSettings::for_op(&plain, &bare, &bare.file.cases[0]);
        assert_eq!((gate.allow_skip, gate.memory), (false, 4 << 30));
        assert_eq!(
            gate.memory_source,
            "the default: 50% of this machine's 8.0 GiB, from test"
        );
    }

    #[test]
    fn skipped_legs_make_the_case_incomplete_unless_allowed() {
        let file = loaded(FILE);
        let mut gate = GateSettings::for_op(&options(false, None), &file, &file.file.cases[0]);
        let mut legs = vec![blank_report("cpu", "reference", String::new())];
        assert_eq!(gate.compared_check(&legs), None);
        let mut cuda = blank_report("cuda", "candidate", String::new());
        cuda.state = LegState::Skipped {
            reason: "backend `cuda` is not available: no driver".into(),
        };
        legs.push(cuda);
        let strict = gate.compared_check(&legs);
        let strict = strict.as_ref().map(|c| (c.outcome, c.message.as_str()));
        assert_eq!(strict.map(|s| s.0), Some(Outcome::Incomplete));
        let text = strict.map_or("", |s| s.1);
        assert!(text.starts_with("1 of 2 legs did not run here, so this case's comparison is missing (cases.toml:3): leg `cuda`: backend `cuda` is not available: no driver."), "{text}");
        assert!(
            text.contains("pass --allow-skip or set `allow_skip = true`"),
            "{text}"
        );
        gate.allow_skip = true;
        gate.allow_source = "--allow-skip".into();
        let warned = gate.compared_check(&legs);
        assert_eq!(warned.as_ref().map(|c| c.outcome), Some(Outcome::Skipped));
        assert!(warned.is_some_and(|c| c.message.contains("skips are allowed (--allow-skip)")));
    }

    #[test]
    fn the_memory_check_runs_on_shapes_alone() {
        let file = loaded(FILE);
        let gate = GateSettings::for_op(
            &options(false, Some(MemoryLimit::Bytes(1024))),
            &file,
            &file.file.cases[0],
        );
        assert!(gate
            .memory_check("a", &OpSpec::Add { len: 4 }, DType::F32, 2)
            .is_none());
        let huge = OpSpec::Add { len: 1 << 40 };
        let check = gate.memory_check("a", &huge, DType::F32, 2);
        assert_eq!(check.as_ref().map(|c| c.outcome), Some(Outcome::Error));
        let text = check.map(|c| c.message).unwrap_or_default();
        assert!(
            text.starts_with("cases.toml:3: case `a` needs about "),
            "{text}"
        );
        assert!(
            text.contains("over its limit of 1.0 KiB (--max-case-memory 1KiB)"),
            "{text}"
        );
    }
}
