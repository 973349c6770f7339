//! What each selected target says about a site, as diagnostics. Targets
//! that say the same thing share one diagnostic (`ascend, mlu: ...`).
use cuport_analyze::Site;
use cuport_model::Code;
use cuport_model::Target;
use cuport_rules::{Resolved, Status};

use crate::diagnostic::{codes, Level};
use crate::plan::Planner;
use cuport_model::Effort;

/// One target's word on a site, before grouping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) code: Code,
    pub(crate) level: Level,
    /// The message after the target list.
    pub(crate) body: String,
    pub(crate) suggestion: Option<String>,
    pub(crate) reference: Option<String>,
    pub(crate) effort: Option<Effort>,
}

impl Finding {
    pub(crate) fn new(code: Code, level: Level, body: String) -> Self {
        Finding {
            code,
            level,
            body,
            suggestion: None,
            reference: None,
            effort: None,
        }
    }

    pub(crate) fn effort(mut self, effort: Effort) -> Self {
        self.effort = Some(effort);
        self
    }

    pub(crate) fn suggest(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = Some(suggestion.into());
        self
    }

    /// The table row's code (when the finding is the row's own verdict).
    pub(crate) fn table_code(mut self, resolved: &Resolved<'_>) -> Self {
        if let Some(code) = resolved.code() {
            self.code = code;
        }
        self
    }

    /// The table row's note, reference and effort.
    pub(crate) fn with_table_note(mut self, resolved: &Resolved<'_>) -> Self {
        self.suggestion = resolved.note().map(str::to_owned).or(self.suggestion);
        self.reference = resolved.reference().map(str::to_owned);
        if let Some(effort) = resolved.effort() {
            self.effort = Some(effort);
        }
        self
    }
}

/// The targets of the dual run.
pub(crate) fn targets(planner: &Planner<'_>) -> Vec<Target> {
    planner.options.targets().to_vec()
}

pub(crate) fn lookup<'a>(
    planner: &Planner<'a>,
    target: Target,
    name: &str,
) -> Option<Resolved<'a>> {
    planner
        .rules
        .lookup_flavour(target, planner.options.flavour_for(target), name)
}

/// The tables' word on `name` for a site kept as written (or rewritten to a
/// form the target may lack): nothing when the target keeps the name;
/// `consequence` says what happens there otherwise.
pub(crate) fn table_finding(
    name: &str,
    resolved: Option<&Resolved<'_>>,
    consequence: &str,
) -> Option<Finding> {
    let Some(resolved) = resolved else {
        return Some(unknown(name, consequence));
    };
    let to = resolved.target_name.as_deref().unwrap_or(name);
    let finding = match resolved.status() {
        Status::Exact => return None,
        Status::Approximate if to == name => Finding::new(
            codes::DUAL_KEPT,
            Level::Approximate,
            format!("`{name}` is kept and does not behave exactly the same there"),
        )
        .table_code(resolved),
        Status::Renamed | Status::Rewrite | Status::Approximate => {
            let spelled = resolved
                .template()
                .map_or_else(|| to.to_owned(), |t| t.source().to_owned());
            Finding::new(
                codes::DUAL_KEPT,
                Level::Manual,
                format!(
                    "`{name}` is `{spelled}` there, which has no portable spelling; {consequence}"
                ),
            )
            .effort(Effort::Low)
            .suggest("choose per backend: `if cuport_device.device_type == ...`")
        }
        Status::Manual => Finding::new(
            codes::DUAL_KEPT,
            Level::Manual,
            format!("`{name}` has no automatic equivalent there; {consequence}"),
        )
        .table_code(resolved),
        Status::Unsupported => Finding::new(
            codes::DUAL_KEPT,
            Level::Unsupported,
            format!("`{name}` has no counterpart there; {consequence}"),
        )
        .table_code(resolved),
    };
    Some(finding.with_table_note(resolved))
}

/// A name the target's tables do not know.
pub(crate) fn unknown(name: &str, consequence: &str) -> Finding {
    let body = format!("`{name}` is not in the rule tables; {consequence}");
    Finding::new(codes::UNKNOWN_NAME, Level::Manual, body)
        .suggest("port it by hand, or add a rule with `--rules FILE` (see mappings/README.md)")
}

/// Emits the findings, one diagnostic per group of targets that agree.
pub(crate) fn report(planner: &mut Planner<'_>, site: &Site, findings: Vec<(Target, Finding)>) {
    let mut groups: Vec<(Vec<Target>, Finding)> = Vec::new();
    for (target, finding) in findings {
        match groups.iter_mut().find(|(_, f)| *f == finding) {
            Some((targets, _)) => targets.push(target),
            None => groups.push((vec![target], finding)),
        }
    }
    for (targets, finding) in groups {
        let names: Vec<&str> = targets.iter().map(|t| t.id()).collect();
        let message = format!("{}: {}", names.join(", "), finding.body);
        let diagnostic = planner.diagnose(site, finding.code, finding.level, message);
        diagnostic.suggestion = finding.suggestion;
        diagnostic.reference = finding.reference;
        diagnostic.effort = finding.effort;
    }
}
