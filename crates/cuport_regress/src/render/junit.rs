//! JUnit XML: one `<testcase>` per case × check; failures are accuracy or
//! performance regressions and INCOMPLETE cases (legs skipped where skips
//! are not allowed), errors are legs that crashed, hung or wrote
//! unreadable files and cases over their memory limit; skipped legs and
//! cases an interrupt kept from running are `<skipped>` with the reason.
//! A run whose verdict no test case carries (NOTHING COMPARED,
//! INTERRUPTED, ERROR) gets one more test case, `cuport-regress/verdict`.
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::report::{LegState, Outcome, RunReport, Verdict};

pub fn render(report: &RunReport) -> Result<String, quick_junit::SerializeError> {
    let mut junit = Report::new("cuport-regress");
    let mut suite = TestSuite::new("regress");
    suite.add_property(("host", report.host.as_str()));
    suite.add_property(("verdict", report.summary.verdict()));
    if let Some(why) = &report.interrupted {
        suite.add_property(("interrupted", why.reason.as_str()));
    }
    for case in &report.cases {
        let wall: f64 = case.legs.iter().map(|l| l.wall_s).sum();
        for check in &case.checks {
            let mut status = match check.outcome {
                Outcome::Pass | Outcome::Uncertain
                    if !(report.summary.uncertain_fails && check.outcome == Outcome::Uncertain) =>
                {
                    TestCaseStatus::success()
                }
                Outcome::Skipped => TestCaseStatus::skipped(),
                Outcome::Error => TestCaseStatus::non_success(NonSuccessKind::Error),
                _ => TestCaseStatus::non_success(NonSuccessKind::Failure),
            };
            if !matches!(status, TestCaseStatus::Success { .. }) {
                status.set_message(crate::render::first_line(&check.message));
                status.set_description(check.message.as_str());
                status.set_type(format!("{:?}", check.kind).to_lowercase());
            }
            let mut tc = TestCase::new(check.name.as_str(), status);
            tc.set_classname(case.name.as_str());
            tc.set_time(Duration::from_secs_f64(wall.max(0.0)));
            tc.set_system_out(check.message.as_str());
            for leg in &case.legs {
                if let Some(s) = &leg.slurm {
                    let key = format!("slurm.{}.{}", leg.backend, leg.role);
                    let node = s.node.as_deref().unwrap_or("-");
                    let exit = s.exit_code.as_deref().unwrap_or("-");
                    let value = format!("job {} on {node}: {} (exit {exit})", s.job_id, s.state);
                    tc.add_property((key.as_str(), value.as_str()));
                }
            }
            for leg in case.legs.iter().filter(|l| l.state == LegState::Ok) {
                if let Some(d) = &leg.device {
                    tc.add_property((
                        format!("device.{}", leg.backend).as_str(),
                        d.fingerprint().as_str(),
                    ));
                }
            }
            suite.add_test_case(tc);
        }
    }
    if let Some(tc) = verdict_case(report) {
        suite.add_test_case(tc);
    }
    junit.add_test_suite(suite);
    junit.to_string()
}

/// The run's own test case, for verdicts that no check carries.
fn verdict_case(report: &RunReport) -> Option<TestCase> {
    let kind = match report.summary.verdict {
        Verdict::NothingCompared | Verdict::Interrupted => NonSuccessKind::Failure,
        Verdict::Error => NonSuccessKind::Error,
        _ => return None,
    };
    let mut status = TestCaseStatus::non_success(kind);
    status.set_message(report.summary.line());
    let detail = match (&report.error, &report.interrupted) {
        (Some(e), _) => e.clone(),
        (None, Some(why)) => format!(
            "cuport was {}; the cases it did not start are skipped",
            why.reason
        ),
        (None, None) => {
            "no case compared anything: every leg that could have been compared was skipped"
                .to_owned()
        }
    };
    status.set_description(detail);
    status.set_type("harness");
    let mut tc = TestCase::new("verdict", status);
    tc.set_classname("cuport-regress");
    Some(tc)
}
