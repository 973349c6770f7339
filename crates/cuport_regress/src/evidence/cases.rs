//! The generated cases: sizes of 1, sizes that are no multiple of any block
//! size, large sizes, and special values (zeros of both signs, negatives,
//! large magnitudes, tiny values), as issue 27 asks.
use std::collections::BTreeMap;

use super::{expr, EvidenceError, KernelSpec, ParamKind};

/// How a case's input values are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// Deterministic pseudo-random values in [-2, 2).
    Random,
    /// A cycle of special values mixed with random ones.
    Special,
}

impl Values {
    pub fn describe(self) -> &'static str {
        match self {
            Values::Random => "random in [-2, 2)",
            Values::Special => "0, -0, ±1, ±1e4, ±50, 1e-20 mixed with random",
        }
    }
}

/// One case: a value for every size parameter and how inputs are drawn.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    /// Every scalar parameter's value (sizes and others).
    pub scalars: BTreeMap<String, f64>,
    pub sizes: Vec<String>,
    pub values: Values,
}

impl Case {
    pub fn sizes_as_ints(&self) -> BTreeMap<String, i64> {
        self.sizes
            .iter()
            .filter_map(|n| self.scalars.get(n).map(|v| (n.clone(), *v as i64)))
            .collect()
    }
}

/// Size sets by position of the size parameter in first use: the first
/// (usually rows or elements) and the others (usually columns). 1000 and
/// 77 are no multiple of 32; 300007 and 3077 make many blocks and long rows.
const SIZES: [(&str, [f64; 2], Values); 4] = [
    ("one", [1.0, 1.0], Values::Random),
    ("odd", [1000.0, 77.0], Values::Random),
    ("large", [300_007.0, 3077.0], Values::Random),
    ("special", [1000.0, 77.0], Values::Special),
];

/// Rows stay few when there are columns, so a 2-D case stays small.
const ROWS_WITH_COLUMNS: [f64; 4] = [1.0, 37.0, 64.0, 37.0];

/// A value parameter no shape uses (a scale, an epsilon) gets this value.
const OTHER_SCALAR: f64 = 0.5;

/// The cases for one kernel.
pub fn cases_for(spec: &KernelSpec) -> Result<Vec<Case>, EvidenceError> {
    let sizes = size_names(spec)?;
    let mut cases = Vec::new();
    for (i, (name, set, values)) in SIZES.iter().enumerate() {
        let mut scalars = BTreeMap::new();
        for (k, size) in sizes.iter().enumerate() {
            let value = match (k, sizes.len()) {
                (0, 1) => set[0],
                (0, _) => ROWS_WITH_COLUMNS[i],
                _ => set[1],
            };
            scalars.insert(size.clone(), value);
        }
        for p in &spec.params {
            if matches!(p.kind, ParamKind::Scalar) && !scalars.contains_key(&p.name) {
                scalars.insert(p.name.clone(), OTHER_SCALAR);
            }
        }
        cases.push(Case {
            name: (*name).to_string(),
            scalars,
            sizes: sizes.clone(),
            values: *values,
        });
    }
    Ok(cases)
}

/// The scalar parameters the tensor shapes use, in order of first use.
fn size_names(spec: &KernelSpec) -> Result<Vec<String>, EvidenceError> {
    let scalars: Vec<&str> = spec
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Scalar))
        .map(|p| p.name.as_str())
        .collect();
    let mut names: Vec<String> = Vec::new();
    for p in &spec.params {
        let ParamKind::Tensor { shape, .. } = &p.kind else {
            continue;
        };
        for word in words(shape) {
            if scalars.contains(&word.as_str()) && !names.contains(&word) {
                names.push(word);
            }
        }
    }
    if names.len() > 2 {
        return Err(EvidenceError::Unsupported(format!(
            "the shapes use {} size parameters ({}); the case generator handles one or two",
            names.len(),
            names.join(", ")
        )));
    }
    // Checks early that every shape evaluates with these names.
    let probe: BTreeMap<String, f64> = names.iter().map(|n| (n.clone(), 2.0)).collect();
    for p in &spec.params {
        if let ParamKind::Tensor { shape, .. } = &p.kind {
            expr::eval_list(shape, &probe)?;
        }
    }
    Ok(names)
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        })
        .map(str::to_string)
        .collect()
}

/// The input values of one tensor: deterministic per case and tensor.
pub(super) fn input_values(case: &Case, tensor: &str, count: usize) -> Vec<f32> {
    let mut state = seed(&format!("{}/{tensor}", case.name));
    let mut next = move || {
        // xorshift64*: deterministic and good enough to spread inputs.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let bits = state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40;
        (bits as f64 / (1u64 << 24) as f64) * 4.0 - 2.0
    };
    const SPECIAL: [f32; 10] = [0.0, -0.0, 1.0, -1.0, 1e4, -1e4, 50.0, -50.0, 1e-20, -3.5];
    (0..count)
        .map(|i| match case.values {
            Values::Special if i % 3 == 0 => SPECIAL[(i / 3) % SPECIAL.len()],
            _ => next() as f32,
        })
        .collect()
}

fn seed(text: &str) -> u64 {
    text.bytes().fold(0x9e37_79b9_7f4a_7c15, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    }) | 1
}
