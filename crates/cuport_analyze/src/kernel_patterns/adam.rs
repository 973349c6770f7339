//! Adam/AdamW steps: one thread per parameter stores the new first moment,
//! second moment and parameter. Decided like elementwise maps, by
//! evaluating the three stored values on probe inputs: the moments must be
//! exponential averages of the gradient and its square, the parameter a
//! step of the bias-corrected ratio with decoupled weight decay.
use std::collections::{BTreeMap, HashMap};

use super::{Certainty, KernelParam, Recognised, TensorUse};

/// The scalars an AdamW step reads, in the order the formula takes them.
const STEP_SCALARS: [&str; 5] = [
    "lr",
    "beta1_correction",
    "beta2_correction",
    "eps",
    "weight_decay",
];

/// One probe run: every input's value and each stored array's new value.
pub(super) struct StepSample {
    pub(super) values: HashMap<String, f64>,
    pub(super) stored: HashMap<String, f64>,
}

pub(super) fn recognise(
    samples: &[StepSample],
    params: &[KernelParam],
    shape: Option<String>,
) -> Option<Recognised> {
    let stored: Vec<&String> = samples.first()?.stored.keys().collect();
    if stored.len() != 3 {
        return None;
    }
    let scalars: Vec<&str> = params
        .iter()
        .filter(|p| !p.pointer)
        .map(|p| p.name.as_str())
        .collect();
    let read_only: Vec<&str> = params
        .iter()
        .filter(|p| p.pointer && !stored.contains(&&p.name))
        .map(|p| p.name.as_str())
        .collect();
    for grad in &read_only {
        for (m, beta1) in moments(samples, &stored, &scalars, grad, 1.0) {
            for (v, beta2) in moments(samples, &stored, &scalars, grad, 2.0) {
                let Some(param) = stored.iter().find(|s| s.as_str() != m && s.as_str() != v) else {
                    continue;
                };
                let rest: Vec<&str> = scalars
                    .iter()
                    .copied()
                    .filter(|s| *s != beta1 && *s != beta2)
                    .collect();
                if let Some(order) = step_scalars(samples, param, &m, &v, &rest) {
                    let mut slots: BTreeMap<String, String> = [
                        ("param", param.as_str()),
                        ("m", m.as_str()),
                        ("v", v.as_str()),
                        ("grad", grad),
                        ("beta1", beta1),
                        ("beta2", beta2),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                    for (slot, name) in STEP_SCALARS.iter().zip(&order) {
                        slots.insert((*slot).to_string(), (*name).to_string());
                    }
                    return Some(found(slots, param, &m, &v, grad, shape));
                }
            }
        }
    }
    None
}

/// Stored arrays `a` with a scalar `beta` such that every new `a` is
/// `beta * a + (1 - beta) * grad^power`.
fn moments<'a>(
    samples: &[StepSample],
    stored: &[&'a String],
    scalars: &[&'a str],
    grad: &str,
    power: f64,
) -> Vec<(String, &'a str)> {
    let mut found = Vec::new();
    for array in stored {
        for beta in scalars {
            let agrees = samples.iter().all(|s| {
                let b = s.values[*beta];
                let expected =
                    b * s.values[array.as_str()] + (1.0 - b) * s.values[grad].powf(power);
                close(expected, s.stored[array.as_str()])
            });
            if agrees {
                found.push(((*array).clone(), *beta));
            }
        }
    }
    found
}

/// The order of the remaining scalars in which the parameter's new value is
/// `p - lr * ((m'/c1) / (sqrt(v'/c2) + eps) + wd * p)`.
fn step_scalars<'a>(
    samples: &[StepSample],
    param: &str,
    m: &str,
    v: &str,
    rest: &[&'a str],
) -> Option<Vec<&'a str>> {
    arrangements(rest, STEP_SCALARS.len())
        .into_iter()
        .find(|order| {
            samples.iter().all(|s| {
                let k = |i: usize| s.values[order[i]];
                let p = s.values[param];
                let m_hat = s.stored[m] / k(1);
                let v_hat = s.stored[v] / k(2);
                let expected = p - k(0) * (m_hat / (v_hat.sqrt() + k(3)) + k(4) * p);
                close(expected, s.stored[param])
            })
        })
}

/// Every ordered choice of `k` of `items` (the size guard's scalar is
/// among them, so the step's five are a choice, not all).
fn arrangements<'a>(items: &[&'a str], k: usize) -> Vec<Vec<&'a str>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    let mut all = Vec::new();
    for (i, first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(i);
        for mut tail in arrangements(&rest, k - 1) {
            tail.insert(0, first);
            all.push(tail);
        }
    }
    all
}

fn close(expected: f64, got: f64) -> bool {
    expected.is_finite() && (expected - got).abs() <= 1e-9 + 1e-7 * expected.abs()
}

fn found(
    slots: BTreeMap<String, String>,
    param: &str,
    m: &str,
    v: &str,
    grad: &str,
    shape: Option<String>,
) -> Recognised {
    let tensor = |name: &str, writes: bool| TensorUse {
        param: name.to_string(),
        reads: true,
        writes,
        shape: shape.clone(),
    };
    Recognised {
        pattern: "adamw".into(),
        certainty: Certainty::High,
        reason: format!(
            "{m} and {v} are exponential averages of {grad} and its square, and {param} takes an AdamW step from them, on every probe input"
        ),
        tensors: vec![tensor(param, true), tensor(m, true), tensor(v, true), tensor(grad, false)],
        slots,
    }
}
