//! The gate's verdict on a run: counts of checks by outcome, which cases
//! could not compare their legs, and the status cuport exits with.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{CaseReport, CheckKind, Outcome};

/// Name of the check a case gets when some of its legs were skipped.
pub const COMPARED: &str = "compared";
use crate::interrupt::Interruption;

/// The gate's word for a whole run, in order of precedence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Something was compared, nothing failed, no skip that is not allowed.
    #[default]
    Pass,
    /// A check failed or errored (or was uncertain under `--uncertain fail`).
    Regression,
    /// Nothing failed, but a case's legs were skipped and skips are not
    /// allowed for it.
    Incomplete,
    /// No case compared anything, whatever `--allow-skip` says.
    NothingCompared,
    /// A signal stopped the run; the report holds what ran until then.
    Interrupted,
    /// The harness could not run (unreadable case file, Slurm refused every
    /// job); the report holds the message and no cases.
    Error,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Regression => "REGRESSION",
            Verdict::Incomplete => "INCOMPLETE",
            Verdict::NothingCompared => "NOTHING COMPARED",
            Verdict::Interrupted => "INTERRUPTED",
            Verdict::Error => "ERROR",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub cases: usize,
    pub checks: usize,
    pub counts: BTreeMap<String, usize>,
    pub uncertain_fails: bool,
    #[serde(default)]
    pub verdict: Verdict,
    /// Cases with at least one skipped leg …
    #[serde(default)]
    pub with_skipped_legs: usize,
    /// … and how many of them allow skips (`--allow-skip`, `allow_skip`).
    #[serde(default)]
    pub skips_allowed: usize,
    /// Cases where nothing was compared (no accuracy or performance check
    /// computed anything).
    #[serde(default)]
    pub compared_nothing: usize,
    /// The status `cuport` exits with: 0 pass; 1 regression, incomplete or
    /// nothing compared; 2 harness error; 128 + signal when interrupted.
    pub exit_code: u8,
}

impl Summary {
    /// The one-word outcome every renderer leads with.
    pub fn verdict(&self) -> &'static str {
        self.verdict.label()
    }

    /// `3 pass, 1 skip`: the checks by outcome.
    pub fn counts_text(&self) -> String {
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        counts.join(", ")
    }

    /// `2 cases with skipped legs (1 allowed), 1 case compared nothing`;
    /// empty when every case ran all its legs and compared something.
    pub fn coverage_text(&self) -> String {
        let cases = |n: usize| {
            if n == 1 {
                "1 case".to_owned()
            } else {
                format!("{n} cases")
            }
        };
        let mut parts = Vec::new();
        if self.with_skipped_legs > 0 {
            let allowed = match self.skips_allowed {
                0 => String::new(),
                n if n == self.with_skipped_legs => " (allowed)".to_owned(),
                n => format!(" ({n} allowed)"),
            };
            parts.push(format!(
                "{} with skipped legs{allowed}",
                cases(self.with_skipped_legs)
            ));
        }
        if self.compared_nothing > 0 {
            parts.push(format!("{} compared nothing", cases(self.compared_nothing)));
        }
        parts.join(", ")
    }

    /// `PASS: 3 cases, 9 checks (9 pass)`, plus the coverage when some
    /// case is incomplete: the summary line of the text output.
    pub fn line(&self) -> String {
        let coverage = self.coverage_text();
        let coverage = if coverage.is_empty() {
            coverage
        } else {
            format!("; {coverage}")
        };
        let counts = self.counts_text();
        let counts = if counts.is_empty() {
            counts
        } else {
            format!(" ({counts})")
        };
        format!(
            "{}: {} cases, {} checks{counts}{coverage}",
            self.verdict(),
            self.cases,
            self.checks,
        )
    }
}

pub(super) fn summarise(
    cases: &[CaseReport],
    uncertain_fails: bool,
    interrupted: Option<&Interruption>,
    error: Option<&str>,
) -> Summary {
    let mut counts = BTreeMap::new();
    let mut checks = 0;
    let (mut failing, mut incomplete) = (false, false);
    for check in cases.iter().flat_map(|c| &c.checks) {
        checks += 1;
        *counts
            .entry(check.outcome.label().to_lowercase())
            .or_insert(0) += 1;
        failing |= matches!(check.outcome, Outcome::Fail | Outcome::Error)
            || (uncertain_fails && check.outcome == Outcome::Uncertain);
        incomplete |= check.outcome == Outcome::Incomplete;
    }
    let with_skipped_legs = cases.iter().filter(|c| c.skipped_legs()).count();
    // Counted from the `compared` check itself, so that a report written
    // before the gate existed (no such check) does not claim its skips
    // were allowed.
    let skips_allowed = cases
        .iter()
        .filter(|c| {
            c.checks.iter().any(|k| {
                k.kind == CheckKind::Harness && k.name == COMPARED && k.outcome == Outcome::Skipped
            })
        })
        .count();
    let compared_nothing = cases.iter().filter(|c| !c.compared()).count();
    let verdict = match () {
        () if interrupted.is_some() => Verdict::Interrupted,
        () if error.is_some() => Verdict::Error,
        () if failing => Verdict::Regression,
        () if compared_nothing == cases.len() => Verdict::NothingCompared,
        () if incomplete => Verdict::Incomplete,
        () => Verdict::Pass,
    };
    let exit_code = match verdict {
        Verdict::Pass => 0,
        Verdict::Regression | Verdict::Incomplete | Verdict::NothingCompared => 1,
        Verdict::Error => 2,
        Verdict::Interrupted => interrupted.map_or(1, Interruption::exit_status),
    };
    Summary {
        cases: cases.len(),
        checks,
        counts,
        uncertain_fails,
        verdict,
        with_skipped_legs,
        skips_allowed,
        compared_nothing,
        exit_code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{CaseKind, Check, LegReport, LegState};

    fn check(kind: CheckKind, outcome: Outcome, measured: bool) -> Check {
        Check {
            name: if kind == CheckKind::Harness {
                COMPARED.to_owned()
            } else {
                format!("{kind:?}")
            },
            kind,
            outcome,
            message: String::new(),
            accuracy: None,
            perf: measured.then(|| {
                let same = [1.0, 1.0, 1.0];
                crate::stats::compare_samples(&same, &same, &Default::default())
            }),
        }
    }

    fn case(legs: &[LegState], checks: Vec<Check>) -> CaseReport {
        CaseReport {
            name: "c".into(),
            kind: CaseKind::Op,
            file: "f.toml".into(),
            op: None,
            dtype: None,
            shape_class: None,
            legs: legs
                .iter()
                .map(|state| LegReport {
                    backend: "cpu".into(),
                    role: "reference".into(),
                    command: String::new(),
                    device: None,
                    exit: None,
                    state: state.clone(),
                    wall_s: 0.0,
                    log_excerpt: String::new(),
                    regions: BTreeMap::new(),
                    slurm: None,
                })
                .collect(),
            checks,
            outcome: Outcome::Pass,
        }
    }

    fn skipped() -> LegState {
        LegState::Skipped {
            reason: "no driver".into(),
        }
    }

    fn compared_pass() -> CaseReport {
        case(
            &[LegState::Ok],
            vec![check(CheckKind::PerfCross, Outcome::Pass, true)],
        )
    }

    fn incomplete(allowed: bool) -> CaseReport {
        let outcome = if allowed {
            Outcome::Skipped
        } else {
            Outcome::Incomplete
        };
        case(
            &[LegState::Ok, skipped()],
            vec![
                check(CheckKind::PerfCross, Outcome::Pass, true),
                check(CheckKind::Harness, outcome, false),
            ],
        )
    }

    fn nothing(allowed: bool) -> CaseReport {
        let mut c = incomplete(allowed);
        c.checks.remove(0);
        c
    }

    #[test]
    fn verdicts_follow_their_precedence() {
        let verdict = |cases: &[CaseReport]| summarise(cases, false, None, None).verdict;
        assert_eq!(verdict(&[compared_pass()]), Verdict::Pass);
        assert_eq!(verdict(&[compared_pass(), incomplete(true)]), Verdict::Pass);
        assert_eq!(
            verdict(&[compared_pass(), incomplete(false)]),
            Verdict::Incomplete
        );
        assert_eq!(verdict(&[nothing(true)]), Verdict::NothingCompared);
        assert_eq!(verdict(&[nothing(false)]), Verdict::NothingCompared);
        assert_eq!(verdict(&[]), Verdict::NothingCompared);
        let mut failed = incomplete(false);
        failed
            .checks
            .push(check(CheckKind::Accuracy, Outcome::Fail, true));
        assert_eq!(
            verdict(&[failed.clone(), nothing(false)]),
            Verdict::Regression
        );
        let stop = Interruption::from_signal(libc::SIGINT);
        let s = summarise(&[failed], false, Some(&stop), None);
        assert_eq!((s.verdict, s.exit_code), (Verdict::Interrupted, 130));
        let s = summarise(&[], false, None, Some("no case file"));
        assert_eq!((s.verdict, s.exit_code), (Verdict::Error, 2));
    }

    #[test]
    fn uncertain_checks_fail_only_when_asked() {
        let mut c = compared_pass();
        c.checks[0].outcome = Outcome::Uncertain;
        let cases = [c];
        assert_eq!(summarise(&cases, false, None, None).exit_code, 0);
        let s = summarise(&cases, true, None, None);
        assert_eq!((s.verdict, s.exit_code), (Verdict::Regression, 1));
    }

    #[test]
    fn the_line_says_how_many_cases_compared_nothing() {
        let s = summarise(
            &[compared_pass(), incomplete(true), nothing(false)],
            false,
            None,
            None,
        );
        assert_eq!(s.with_skipped_legs, 2);
        assert_eq!(s.skips_allowed, 1);
        assert_eq!(s.compared_nothing, 1);
        assert_eq!(
            s.line(),
            "INCOMPLETE: 3 cases, 4 checks (1 incomplete, 2 pass, 1 skipped); 2 cases with skipped legs (1 allowed), 1 case compared nothing"
        );
        let clean = summarise(&[compared_pass()], false, None, None);
        assert_eq!(clean.line(), "PASS: 1 cases, 1 checks (1 pass)");
        assert_eq!(clean.coverage_text(), "");
    }

    #[test]
    fn a_report_from_before_the_gate_does_not_claim_allowed_skips() {
        let mut old = incomplete(true);
        old.checks.pop();
        let s = summarise(&[old], false, None, None);
        assert_eq!((s.with_skipped_legs, s.skips_allowed), (1, 0));
        assert_eq!(s.coverage_text(), "1 case with skipped legs");
    }
}
