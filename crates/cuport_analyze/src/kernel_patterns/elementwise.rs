//! Elementwise maps: one thread per element stores one value computed from
//! the same element of up to three inputs. The pattern is decided by
//! evaluating the stored value on probe inputs and comparing it with each
//! candidate formula, so `0.5f*x*(1+tanhf(...))` and any rewriting of it
//! are the same gelu, and `x*x` is no add.
use std::collections::{BTreeMap, BTreeSet, HashMap};

use tree_sitter::Node;

use super::eval::{Env, Stop};
use super::source::{CudaFile, Inline};
use super::thread::run_thread;
use super::{adam, Certainty, KernelParam, Recognised, TensorUse};

/// Probe inputs per run; each run draws every input anew.
const PROBES: usize = 6;

/// A candidate: its pattern, how many tensor inputs and scalars it takes,
/// and what it computes from them.
struct Candidate {
    pattern: &'static str,
    inputs: usize,
    scalars: usize,
    formula: fn(&[f64], &[f64]) -> f64,
}

fn gelu_tanh(x: f64) -> f64 {
    let inner = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
    0.5 * x * (1.0 + inner.tanh())
}

fn gelu_erf(x: f64) -> f64 {
    0.5 * x * (1.0 + libm::erf(x * std::f64::consts::FRAC_1_SQRT_2))
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

const CANDIDATES: &[Candidate] = &[
    Candidate {
        pattern: "copy",
        inputs: 1,
        scalars: 0,
        formula: |x, _| x[0],
    },
    Candidate {
        pattern: "exp",
        inputs: 1,
        scalars: 0,
        formula: |x, _| x[0].exp(),
    },
    Candidate {
        pattern: "tanh",
        inputs: 1,
        scalars: 0,
        formula: |x, _| x[0].tanh(),
    },
    Candidate {
        pattern: "sigmoid",
        inputs: 1,
        scalars: 0,
        formula: |x, _| sigmoid(x[0]),
    },
    Candidate {
        pattern: "silu",
        inputs: 1,
        scalars: 0,
        formula: |x, _| x[0] * sigmoid(x[0]),
    },
    Candidate {
        pattern: "relu",
        inputs: 1,
        scalars: 0,
        formula: |x, _| x[0].max(0.0),
    },
    Candidate {
        pattern: "gelu-tanh",
        inputs: 1,
        scalars: 0,
        formula: |x, _| gelu_tanh(x[0]),
    },
    Candidate {
        pattern: "gelu-erf",
        inputs: 1,
        scalars: 0,
        formula: |x, _| gelu_erf(x[0]),
    },
    Candidate {
        pattern: "scale",
        inputs: 1,
        scalars: 1,
        formula: |x, s| s[0] * x[0],
    },
    Candidate {
        pattern: "add",
        inputs: 2,
        scalars: 0,
        formula: |x, _| x[0] + x[1],
    },
    Candidate {
        pattern: "sub",
        inputs: 2,
        scalars: 0,
        formula: |x, _| x[0] - x[1],
    },
    Candidate {
        pattern: "mul",
        inputs: 2,
        scalars: 0,
        formula: |x, _| x[0] * x[1],
    },
    Candidate {
        pattern: "div",
        inputs: 2,
        scalars: 0,
        formula: |x, _| x[0] / x[1],
    },
    Candidate {
        pattern: "axpy",
        inputs: 2,
        scalars: 1,
        formula: |x, s| s[0] * x[0] + x[1],
    },
];

/// What one probe run gave: the inputs' and scalars' values and the stored
/// value.
struct Sample {
    values: HashMap<String, f64>,
    stored: f64,
}

/// The elementwise pattern of a kernel, or why it is none.
pub(super) fn recognise(
    file: &CudaFile<'_>,
    body: Node<'_>,
    params: &[KernelParam],
    inlines: &HashMap<String, Inline<'_>>,
    defines: &HashMap<String, String>,
) -> Result<Recognised, Stop> {
    let pointers: BTreeSet<String> = params
        .iter()
        .filter(|p| p.pointer)
        .map(|p| p.name.clone())
        .collect();
    let mut samples = Vec::new();
    let mut steps = Vec::new();
    let mut shape = None;
    let mut out = String::new();
    let mut read = BTreeSet::new();
    for probe_index in 0..PROBES {
        let probe = probe_values(params, probe_index);
        let mut env = Env::new(file, inlines, defines, &probe, &pointers);
        let run = run_thread(body, &mut env)?;
        shape = run.guard;
        read = env.read;
        if let [(array, stored)] = run.stores.as_slice() {
            out.clone_from(array);
            samples.push(Sample {
                values: probe,
                stored: *stored,
            });
        } else {
            let stored = run.stores.into_iter().collect();
            steps.push(adam::StepSample {
                values: probe,
                stored,
            });
        }
    }
    if !steps.is_empty() {
        // In a real step the moments are non-negative and the betas in
        // (0, 1); so are these probes, so that square roots stay real.
        let steps = positive_steps(file, body, params, inlines, defines, &pointers)?;
        return adam::recognise(&steps, params, shape).ok_or_else(|| {
            Stop::Unsupported("several stores per element, not an AdamW step".into())
        });
    }
    let inputs: Vec<&KernelParam> = params
        .iter()
        .filter(|p| p.pointer && read.contains(&p.name))
        .collect();
    let scalars: Vec<&KernelParam> = params
        .iter()
        .filter(|p| !p.pointer && read.contains(&p.name))
        .collect();
    let found = match_candidates(&samples, &inputs, &scalars)
        .or_else(|| fill(&samples, &inputs, &scalars))
        .ok_or_else(|| Stop::Unsupported("a value no candidate formula gives".into()))?;
    Ok(finish(found, &out, shape, params, &read))
}

/// A matched pattern and its slots before the output is added.
struct Found {
    pattern: &'static str,
    slots: BTreeMap<String, String>,
    reason: String,
}

fn match_candidates(
    samples: &[Sample],
    inputs: &[&KernelParam],
    scalars: &[&KernelParam],
) -> Option<Found> {
    for candidate in CANDIDATES
        .iter()
        .filter(|c| c.inputs == inputs.len() && c.scalars == scalars.len())
    {
        for order in orders(inputs.len()) {
            let tensors: Vec<&KernelParam> = order.iter().map(|&i| inputs[i]).collect();
            if agrees(samples, candidate, &tensors, scalars) {
                return Some(found(candidate.pattern, &tensors, scalars));
            }
        }
    }
    None
}

fn orders(n: usize) -> Vec<Vec<usize>> {
    match n {
        2 => vec![vec![0, 1], vec![1, 0]],
        n => vec![(0..n).collect()],
    }
}

fn agrees(
    samples: &[Sample],
    c: &Candidate,
    tensors: &[&KernelParam],
    scalars: &[&KernelParam],
) -> bool {
    samples.iter().all(|s| {
        let x: Vec<f64> = tensors.iter().map(|p| s.values[&p.name]).collect();
        let k: Vec<f64> = scalars.iter().map(|p| s.values[&p.name]).collect();
        close((c.formula)(&x, &k), s.stored)
    })
}

/// Both sides are evaluated in double precision from the same inputs, so
/// only constants written to float precision (`0.7978845608f`) differ;
/// a formula with another coefficient (a gelu with 0.0447) does not pass.
fn close(expected: f64, got: f64) -> bool {
    (expected - got).abs() <= 1e-9 + 1e-7 * expected.abs()
}

fn found(pattern: &'static str, tensors: &[&KernelParam], scalars: &[&KernelParam]) -> Found {
    let names: &[&str] = match tensors.len() {
        1 => &["x"],
        _ => &["a", "b"],
    };
    let mut slots: BTreeMap<String, String> = names
        .iter()
        .zip(tensors)
        .map(|(slot, p)| ((*slot).to_string(), p.name.clone()))
        .collect();
    if let Some(s) = scalars.first() {
        slots.insert("alpha".into(), s.name.clone());
    }
    let reason = format!(
        "the stored value equals {pattern}({}) on {PROBES} probe inputs",
        tensors
            .iter()
            .chain(scalars)
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Found {
        pattern,
        slots,
        reason,
    }
}

/// No input: every element gets the same literal or scalar parameter.
fn fill(samples: &[Sample], inputs: &[&KernelParam], scalars: &[&KernelParam]) -> Option<Found> {
    if !inputs.is_empty() || scalars.len() > 1 {
        return None;
    }
    let value = match scalars.first() {
        Some(s) => samples
            .iter()
            .all(|x| close(x.values[&s.name], x.stored))
            .then(|| s.name.clone())?,
        None => {
            let first = samples.first()?.stored;
            samples
                .iter()
                .all(|x| close(first, x.stored))
                .then(|| format!("{first}"))?
        }
    };
    Some(Found {
        pattern: "fill",
        reason: format!("every element is set to {value}"),
        slots: [("value".to_string(), value)].into_iter().collect(),
    })
}

/// Adds the output and the tensors; a copy between element types is a cast.
fn finish(
    mut found: Found,
    out: &str,
    shape: Option<String>,
    params: &[KernelParam],
    read: &BTreeSet<String>,
) -> Recognised {
    let element = |name: &str| {
        params
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.c_type.clone())
    };
    let input = found.slots.get("x").cloned();
    if found.pattern == "copy" && input.as_deref().and_then(element) != element(out) {
        found.pattern = "cast";
        found.reason = format!(
            "{}, converted to {}",
            found.reason,
            element(out).unwrap_or_default()
        );
    }
    found.slots.insert("out".into(), out.to_string());
    let tensors = params
        .iter()
        .filter(|p| p.pointer && (read.contains(&p.name) || p.name == out))
        .map(|p| TensorUse {
            param: p.name.clone(),
            reads: read.contains(&p.name),
            writes: p.name == out,
            shape: shape.clone(),
        })
        .collect();
    Recognised {
        pattern: found.pattern.to_string(),
        certainty: Certainty::High,
        reason: found.reason,
        slots: found.slots,
        tensors,
    }
}

fn positive_steps(
    file: &CudaFile<'_>,
    body: Node<'_>,
    params: &[KernelParam],
    inlines: &HashMap<String, Inline<'_>>,
    defines: &HashMap<String, String>,
    pointers: &BTreeSet<String>,
) -> Result<Vec<adam::StepSample>, Stop> {
    let mut steps = Vec::new();
    for probe_index in 0..PROBES {
        let probe: HashMap<String, f64> = probe_values(params, probe_index)
            .into_iter()
            .map(|(k, v)| (k, v.abs() / 4.1))
            .collect();
        let mut env = Env::new(file, inlines, defines, &probe, pointers);
        let run = run_thread(body, &mut env)?;
        let stored = run.stores.into_iter().collect();
        steps.push(adam::StepSample {
            values: probe,
            stored,
        });
    }
    Ok(steps)
}

/// Deterministic probe values away from zero (no division blows up): each
/// parameter is positive in half of the runs and negative in the others,
/// so that relu is told from copy.
fn probe_values(params: &[KernelParam], run: usize) -> HashMap<String, f64> {
    let mut state =
        0x9E37_79B9_7F4A_7C15_u64 ^ (run as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    params
        .iter()
        .enumerate()
        .map(|(position, p)| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            let magnitude = 0.25 + 3.75 * unit;
            let value = if (run + position) & 1 == 0 {
                magnitude
            } else {
                -magnitude
            };
            (p.name.clone(), value)
        })
        .collect()
}
