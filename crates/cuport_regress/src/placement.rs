//! "Where each op runs best": per op and shape class, the fastest backend,
//! by how much, and whether its results were accurate.
use std::collections::BTreeMap;

use crate::report::{CaseKind, CaseReport, CheckKind, LegState, Outcome, PlacementRow};
use crate::stats::geometric_mean;

/// Shape class from the op's work: dtype and order of magnitude.
pub fn shape_class(dtype: &str, work: f64) -> String {
    let exp = if work >= 1.0 {
        work.log10().floor() as i32
    } else {
        0
    };
    format!("{dtype} ~1e{exp}")
}

#[derive(Default)]
struct Group {
    medians: BTreeMap<String, Vec<f64>>,
    accuracy: BTreeMap<String, Outcome>,
}

pub(crate) fn placement(cases: &[CaseReport]) -> Vec<PlacementRow> {
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    for case in cases.iter().filter(|c| c.kind == CaseKind::Op) {
        let key = (
            case.op.clone().unwrap_or_default(),
            case.shape_class.clone().unwrap_or_default(),
        );
        let group = groups.entry(key).or_default();
        for leg in case.legs.iter().filter(|l| l.state == LegState::Ok) {
            if let Some(region) = leg.regions.values().next() {
                group
                    .medians
                    .entry(leg.backend.clone())
                    .or_default()
                    .push(region.median);
            }
            let check = case.checks.iter().find(|c| {
                c.kind == CheckKind::Accuracy && c.name.ends_with(&format!(":{}", leg.backend))
            });
            let outcome = check.map(|c| c.outcome).unwrap_or(Outcome::Skipped);
            let slot = group
                .accuracy
                .entry(leg.backend.clone())
                .or_insert(Outcome::Pass);
            *slot = (*slot).max(outcome);
        }
    }
    groups
        .into_iter()
        .filter_map(|((op, shape_class), g)| row(op, shape_class, &g))
        .collect()
}

fn row(op: String, shape_class: String, g: &Group) -> Option<PlacementRow> {
    let backends: BTreeMap<String, f64> = g
        .medians
        .iter()
        .filter_map(|(b, m)| geometric_mean(m).map(|v| (b.clone(), v)))
        .collect();
    let mut ranked: Vec<(&String, &f64)> = backends.iter().collect();
    ranked.sort_by(|a, b| a.1.total_cmp(b.1));
    let (fastest, best) = ranked.first().map(|(b, m)| ((*b).clone(), **m))?;
    let runner = ranked.get(1).map(|(b, m)| ((*b).clone(), **m));
    Some(PlacementRow {
        op,
        shape_class,
        accuracy: g
            .accuracy
            .get(&fastest)
            .copied()
            .unwrap_or(Outcome::Skipped),
        fastest,
        median_s: best,
        speedup: runner.as_ref().map(|(_, m)| m / best),
        runner_up: runner.map(|(b, _)| b),
        backends,
    })
}
