//! GitHub-flavoured Markdown, sized for `$GITHUB_STEP_SUMMARY` (1 MiB cap).
use std::fmt::Write;

use super::{first_line, seconds};
use crate::report::{Outcome, RunReport};

/// GitHub rejects step summaries over 1 MiB; stay well below it.
const LIMIT: usize = 900 * 1024;

pub fn render(report: &RunReport) -> String {
    let mut md = String::new();
    let verdict = report.summary.verdict();
    let _ = writeln!(md, "# cuport regress: {verdict}\n");
    let _ = writeln!(
        md,
        "{} cases, {} checks: {}.\n",
        report.summary.cases,
        report.summary.checks,
        report.summary.counts_text()
    );
    let coverage = report.summary.coverage_text();
    if !coverage.is_empty() {
        let _ = writeln!(md, "**Not fully compared:** {coverage}.\n");
    }
    if let Some(why) = &report.interrupted {
        let _ = writeln!(
            md,
            "**Interrupted:** cuport was {}; cases it did not start are listed as skipped.\n",
            why.reason
        );
    }
    if let Some(error) = &report.error {
        let _ = writeln!(
            md,
            "**Harness error:**\n\n```\n{}\n```\n",
            error.replace("```", "'''")
        );
        return md;
    }
    checks_table(report, &mut md);
    cross_table(report, &mut md);
    placement_table(report, &mut md);
    slurm_table(report, &mut md);
    failure_details(report, &mut md);
    if md.len() > LIMIT {
        let mut cut = LIMIT;
        while !md.is_char_boundary(cut) {
            cut -= 1;
        }
        md.truncate(cut);
        md.push_str("\n\n… truncated; see the JSON or HTML report for everything.\n");
    }
    md
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

fn checks_table(report: &RunReport, md: &mut String) {
    md.push_str("| case | check | outcome | detail |\n|---|---|---|---|\n");
    for case in &report.cases {
        for check in &case.checks {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                cell(&case.name),
                cell(&check.name),
                check.outcome.label(),
                cell(first_line(&check.message))
            );
        }
    }
}

fn cross_table(report: &RunReport, md: &mut String) {
    if report.cross_backend.is_empty() {
        return;
    }
    md.push_str("\n## Cross-backend time ratios (candidate / reference; above 1 = slower)\n\n");
    md.push_str(
        "| case | region | candidate / reference | ratio | 95% CI |\n|---|---|---|---|---|\n",
    );
    for c in &report.cross_backend {
        let _ = writeln!(
            md,
            "| {} | {} | {} / {} | {:.3} | [{:.3}, {:.3}] |",
            cell(&c.case),
            cell(&c.region),
            c.candidate,
            c.reference,
            c.ratio,
            c.ci_low,
            c.ci_high
        );
    }
    for (pair, g) in &report.cross_geomean {
        let _ = writeln!(md, "\nGeometric mean {pair}: **{g:.3}**");
    }
}

fn placement_table(report: &RunReport, md: &mut String) {
    if report.placement.is_empty() {
        return;
    }
    md.push_str("\n## Placement: fastest backend per op and shape class\n\n");
    md.push_str("| op | shape class | fastest | median | faster than runner-up by | accuracy |\n|---|---|---|---|---|---|\n");
    for p in &report.placement {
        let by = match (&p.runner_up, p.speedup) {
            (Some(r), Some(s)) => format!("{s:.2}× ({r})"),
            _ => "only backend".to_owned(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {by} | {} |",
            p.op,
            p.shape_class,
            p.fastest,
            seconds(p.median_s),
            p.accuracy.label()
        );
    }
}

fn slurm_table(report: &RunReport, md: &mut String) {
    let legs: Vec<_> = report
        .cases
        .iter()
        .flat_map(|c| c.legs.iter().map(move |l| (c, l)))
        .filter_map(|(c, l)| l.slurm.as_ref().map(|s| (c, l, s)))
        .collect();
    if legs.is_empty() {
        return;
    }
    md.push_str("\n## Slurm jobs\n\n");
    md.push_str("| case | leg | job | placement | partition | node | state | exit code | reason |\n|---|---|---|---|---|---|---|---|---|\n");
    let or_dash = |v: &Option<String>| v.as_deref().map(cell).unwrap_or_else(|| "-".into());
    for (case, leg, s) in legs {
        let _ = writeln!(
            md,
            "| {} | {} {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&case.name),
            cell(&leg.backend),
            leg.role,
            s.job_id,
            cell(&s.placement),
            or_dash(&s.partition),
            or_dash(&s.node),
            s.state,
            or_dash(&s.exit_code),
            or_dash(&s.reason)
        );
    }
}

fn failure_details(report: &RunReport, md: &mut String) {
    let bad: Vec<_> = report
        .cases
        .iter()
        .flat_map(|c| c.checks.iter().map(move |k| (c, k)))
        .filter(|(_, k)| {
            matches!(
                k.outcome,
                Outcome::Fail | Outcome::Error | Outcome::Uncertain | Outcome::Incomplete
            )
        })
        .collect();
    if bad.is_empty() {
        return;
    }
    md.push_str("\n## Details\n");
    for (case, check) in bad {
        let _ = writeln!(
            md,
            "\n<details><summary>{} / {}: {}</summary>\n\n```\n{}\n```\n</details>",
            case.name,
            check.name,
            check.outcome.label(),
            check.message.replace("```", "'''")
        );
    }
}
