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
    /// Optional pointer parameters passed as null in this case.
    pub absent: Vec<String>,
}

impl Case {
    /// Whether the case passes `param` as a null pointer.
    pub fn is_absent(&self, param: &str) -> bool {
        self.absent.iter().any(|a| a == param)
    }

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

/// Three or more sizes (a permutation's B, N, NH, d): per case, the value
/// of the k-th size (the last repeats). `odd` and `special` are no
/// multiple of any block size and all different, so a permutation that
/// swaps two extents cannot pass by symmetry; `large` spans many blocks.
const MANY_SIZES: [[f64; 5]; 4] = [
    [1.0, 1.0, 1.0, 1.0, 1.0],
    [3.0, 37.0, 5.0, 11.0, 7.0],
    [4.0, 65.0, 6.0, 64.0, 3.0],
    [3.0, 37.0, 5.0, 11.0, 7.0],
];

/// A value parameter no shape uses (a scale, an epsilon) gets this value.
const OTHER_SCALAR: f64 = 0.5;

/// A value parameter named as a block size (`block_size`, `blockSize`)
/// that no shape uses: kernels that take the block size as an argument
/// use it as blockDim.x, so it gets the block the launch assumes.
const BLOCK_SCALAR: f64 = 256.0;

/// The cases for one kernel.
pub fn cases_for(spec: &KernelSpec) -> Result<Vec<Case>, EvidenceError> {
    let sizes = size_names(spec)?;
    let mut cases = Vec::new();
    for (i, (name, set, values)) in SIZES.iter().enumerate() {
        let mut scalars = BTreeMap::new();
        for (k, size) in sizes.iter().enumerate() {
            let value = match (k, sizes.len()) {
                (0, 1) => set[0],
                (0, 2) => ROWS_WITH_COLUMNS[i],
                (_, 2) => set[1],
                _ => MANY_SIZES[i][k.min(MANY_SIZES[i].len() - 1)],
            };
            scalars.insert(size.clone(), in_tiles(value, spec.size_multiples.get(size)));
        }
        for p in &spec.params {
            if matches!(p.kind, ParamKind::Scalar) && !scalars.contains_key(&p.name) {
                let value = if is_block_size(&p.name) {
                    BLOCK_SCALAR
                } else {
                    OTHER_SCALAR
                };
                scalars.insert(p.name.clone(), value);
            }
        }
        cases.push(Case {
            name: (*name).to_string(),
            scalars,
            sizes: sizes.clone(),
            values: *values,
            absent: Vec::new(),
        });
    }
    if let Some(absent) = absent_case(spec, &cases) {
        cases.push(absent);
    }
    for case in &mut cases {
        apply_case_values(spec, &mut case.scalars)?;
    }
    Ok(cases)
}

/// A size the kernel handles only in whole tiles of `multiple`: `value`
/// taken as a number of tiles, so the cases still differ in how many
/// blocks they launch (rounding 37 up to one tile of 128 would make every
/// case one block).
fn in_tiles(value: f64, multiple: Option<&u64>) -> f64 {
    match multiple {
        Some(&m) if m > 1 => value.ceil().max(1.0) * m as f64,
        _ => value,
    }
}

/// The rule's case values over the generated ones. One may use another
/// (`beta1_correction = "1 - pow(beta1, t)"` with `beta1 = "0.9"`), so
/// every value is evaluated once per name, in an order where what it
/// uses comes first; a cycle is an error.
fn apply_case_values(
    spec: &KernelSpec,
    scalars: &mut BTreeMap<String, f64>,
) -> Result<(), EvidenceError> {
    let mut pending: Vec<(&String, &String)> = spec.case_values.iter().collect();
    while !pending.is_empty() {
        // A value may use its own name: the generated value (`T = "min(T,
        // 96)"` caps a size).
        let ready = pending.iter().position(|(name, text)| {
            words(text).iter().all(|w| {
                w == *name
                    || !spec.case_values.contains_key(w)
                    || !pending.iter().any(|(n, _)| *n == w)
            })
        });
        let Some(index) = ready else {
            return Err(EvidenceError::Unsupported(format!(
                "the case values {} use each other in a cycle",
                pending
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let (name, text) = pending.remove(index);
        let value = expr::eval(text, scalars)?;
        scalars.insert(name.clone(), value);
    }
    Ok(())
}

/// With optional pointer parameters, one more case passes them all as
/// null, with the sizes of the `odd` case, so the calls a rule runs only
/// `when` they are present are checked to be the ones the kernel skips.
fn absent_case(spec: &KernelSpec, cases: &[Case]) -> Option<Case> {
    let absent: Vec<String> = spec
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Tensor { optional: true, .. }))
        .map(|p| p.name.clone())
        .collect();
    let odd = cases.iter().find(|c| c.name == "odd")?;
    (!absent.is_empty()).then(|| Case {
        name: format!("without-{}", absent.join("-")),
        absent,
        ..odd.clone()
    })
}

/// The scalar parameters the tensor shapes use, in order of first use.
fn size_names(spec: &KernelSpec) -> Result<Vec<String>, EvidenceError> {
    let scalars: Vec<&str> = spec
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Scalar))
        .map(|p| p.name.as_str())
        .chain(spec.launch_values.iter().map(String::as_str))
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
    // A launch value only the launch uses (a row count the grid needs)
    // is still a size of the case.
    for name in &spec.launch_values {
        if !names.contains(name) && !spec.case_values.contains_key(name) {
            names.push(name.clone());
        }
    }
    if names.len() > MANY_SIZES[0].len() {
        return Err(EvidenceError::Unsupported(format!(
            "the shapes use {} size parameters ({}); the case generator handles up to {}",
            names.len(),
            names.join(", "),
            MANY_SIZES[0].len()
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

fn is_block_size(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "block_size" || lower == "blocksize"
}

/// How an input must be drawn for the operator that reads it to be
/// defined: row indices inside the table, an optimizer's step count of at
/// least 1, a second moment that is not negative. Random values would make
/// both sides read outside a table or take roots of negative numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Domain {
    /// Integers in [0, rows).
    Index(usize),
    /// Integers in [1, 10].
    Count,
    /// Absolute values of the usual draw.
    NonNegative,
    /// The usual draw with zeros above the diagonal of (rows, columns)
    /// matrices.
    LowerTriangular(usize, usize),
    /// Positive values summing to 1 along one axis (`len` elements
    /// `stride` apart, row-major): a softmax output, which
    /// aclnnSoftmaxBackward's `output` is by definition.
    Simplex { len: usize, stride: usize },
    /// The mean (or, `rstd`, 1/sqrt(variance + 1e-5)) of each run of `row`
    /// elements of input tensor `of`: the statistics a layer norm's forward
    /// saved, which aclnnLayerNormBackward reads instead of recomputing.
    RowStatistic { of: String, row: usize, rstd: bool },
}

/// Epsilon of the layer norm whose statistics the evidence draws (llm.c's
/// and torch.nn.LayerNorm's default).
const STATISTICS_EPS: f64 = 1e-5;

/// The inputs whose values an operator constrains, by tensor name.
pub(super) fn input_domains(
    spec: &KernelSpec,
    case: &Case,
) -> Result<BTreeMap<String, Domain>, EvidenceError> {
    let mut domains = BTreeMap::new();
    for p in &spec.params {
        if let ParamKind::Tensor {
            shape,
            lower_triangular: true,
            ..
        } = &p.kind
        {
            let dims = expr::eval_list(shape, &case.scalars)?;
            if let [.., rows, cols] = dims.as_slice() {
                domains.insert(
                    p.name.clone(),
                    Domain::LowerTriangular(rows.max(1.0) as usize, cols.max(1.0) as usize),
                );
            }
        }
    }
    for call in &spec.calls {
        let bound = |name: &str| call.args.get(name).cloned();
        match call.operator.as_str() {
            "aclnnEmbedding" => {
                let (Some(indices), Some(table)) = (bound("indices"), bound("weight")) else {
                    continue;
                };
                let shape = spec.params.iter().find_map(|p| match &p.kind {
                    ParamKind::Tensor { shape, .. } if p.name == table => Some(shape),
                    _ => None,
                });
                if let Some(shape) = shape {
                    let rows = expr::eval_list(shape, &case.scalars)?
                        .first()
                        .copied()
                        .unwrap_or(0.0);
                    domains.insert(indices, Domain::Index(rows.max(1.0) as usize));
                }
            }
            "aclnnOneHot" => {
                let (Some(indices), Some(classes)) = (bound("self"), bound("numClasses")) else {
                    continue;
                };
                let classes = expr::eval(&classes, &case.scalars)?;
                domains.insert(indices, Domain::Index(classes.max(1.0) as usize));
            }
            "aclnnEmbeddingDenseBackward" => {
                let (Some(indices), Some(rows)) = (bound("indices"), bound("numWeights")) else {
                    continue;
                };
                let rows = expr::eval(&rows, &case.scalars)?;
                domains.insert(indices, Domain::Index(rows.max(1.0) as usize));
            }
            "aclnnSoftmaxBackward" => {
                let (Some(output), Some(dim)) = (bound("output"), bound("dim")) else {
                    continue;
                };
                let shape = spec.params.iter().find_map(|p| match &p.kind {
                    ParamKind::Tensor { shape, .. } if p.name == output => Some(shape),
                    _ => None,
                });
                let (Some(shape), Ok(dim)) = (shape, expr::eval(&dim, &case.scalars)) else {
                    continue;
                };
                let extents: Vec<usize> = expr::eval_list(shape, &case.scalars)?
                    .into_iter()
                    .map(|e| e.max(1.0) as usize)
                    .collect();
                let rank = extents.len() as i64;
                let axis = dim as i64;
                let axis = if axis < 0 { axis + rank } else { axis };
                if let Ok(axis) = usize::try_from(axis) {
                    if axis < extents.len() {
                        let stride = extents[axis + 1..].iter().product();
                        domains.insert(
                            output,
                            Domain::Simplex {
                                len: extents[axis],
                                stride,
                            },
                        );
                    }
                }
            }
            "aclnnLayerNormBackward" => {
                let (Some(input), Some(normalized)) = (bound("input"), bound("normalizedShape"))
                else {
                    continue;
                };
                if !spec.params.iter().any(|p| p.name == input) {
                    continue;
                }
                let row = expr::eval_list(&normalized, &case.scalars)?
                    .iter()
                    .map(|e| e.max(1.0) as usize)
                    .product();
                for (stat, rstd) in [("mean", false), ("rstd", true)] {
                    if let Some(name) = bound(stat) {
                        let of = input.clone();
                        domains.insert(name, Domain::RowStatistic { of, row, rstd });
                    }
                }
            }
            "aclnnApplyAdamWV2" => {
                if let Some(step) = bound("step") {
                    domains.insert(step, Domain::Count);
                }
                if let Some(v) = bound("vRef") {
                    domains.insert(v, Domain::NonNegative);
                }
            }
            _ => {}
        }
    }
    Ok(domains)
}

/// The values of an input with a constrained domain: deterministic.
pub(super) fn domain_values(case: &Case, tensor: &str, count: usize, domain: &Domain) -> Vec<f32> {
    let drawn = || input_values(case, tensor, count);
    let index = |v: f32, bound: usize| {
        (((f64::from(v) + 2.0) / 4.0 * bound as f64) as usize).min(bound.max(1) - 1) as f32
    };
    match *domain {
        Domain::Index(bound) => drawn().into_iter().map(|v| index(v, bound)).collect(),
        Domain::Count => drawn().into_iter().map(|v| index(v, 10) + 1.0).collect(),
        Domain::NonNegative => drawn().into_iter().map(f32::abs).collect(),
        Domain::LowerTriangular(rows, cols) => drawn()
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let (row, col) = ((i / cols) % rows, i % cols);
                if col > row {
                    0.0
                } else {
                    v
                }
            })
            .collect(),
        Domain::Simplex { len, stride } => simplex(&drawn(), len, stride),
        // The statistics of the input's own values, drawn as the input is.
        Domain::RowStatistic {
            ref of, row, rstd, ..
        } => row_statistics(&input_values(case, of, count * row), row, rstd),
    }
}

/// Each row's mean, or 1/sqrt(biased variance + eps), in f64.
fn row_statistics(values: &[f32], row: usize, rstd: bool) -> Vec<f32> {
    values
        .chunks(row.max(1))
        .map(|run| {
            let len = run.len() as f64;
            let mean = run.iter().map(|v| f64::from(*v)).sum::<f64>() / len;
            if !rstd {
                return mean as f32;
            }
            let var = run
                .iter()
                .map(|v| (f64::from(*v) - mean).powi(2))
                .sum::<f64>()
                / len;
            (1.0 / (var + STATISTICS_EPS).sqrt()) as f32
        })
        .collect()
}

/// `drawn` made positive (exp of the draw, clamped so that the special
/// values 1e4 and -1e4 stay finite) and normalised to sum 1 along the axis.
fn simplex(drawn: &[f32], len: usize, stride: usize) -> Vec<f32> {
    let weights: Vec<f64> = drawn
        .iter()
        .map(|v| f64::from(*v).clamp(-30.0, 30.0).exp())
        .collect();
    let block = (len * stride).max(1);
    let group = |i: usize| (i / block, i % stride.max(1));
    let mut sums: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for (i, w) in weights.iter().enumerate() {
        *sums.entry(group(i)).or_default() += w;
    }
    weights
        .iter()
        .enumerate()
        .map(|(i, w)| (w / sums.get(&group(i)).copied().unwrap_or(1.0)) as f32)
        .collect()
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::evidence::{CallSpec, LaunchSpec, ParamSpec, TensorRole};

    fn tensor(name: &str, role: TensorRole, shape: &str, dtype: DType) -> ParamSpec {
        ParamSpec {
            name: name.into(),
            c_type: "float*".into(),
            kind: ParamKind::Tensor {
                role,
                shape: shape.into(),
                dtype,
                optional: false,
                partial: false,
                lower_triangular: false,
            },
        }
    }

    fn scalar(name: &str) -> ParamSpec {
        ParamSpec {
            name: name.into(),
            c_type: "int".into(),
            kind: ParamKind::Scalar,
        }
    }

    fn spec(params: Vec<ParamSpec>, calls: Vec<CallSpec>) -> KernelSpec {
        KernelSpec {
            file: "k.cu".into(),
            kernel: "k".into(),
            params,
            calls,
            views: Vec::new(),
            launch_values: Vec::new(),
            scratch: Vec::new(),
            values: Vec::new(),
            case_values: BTreeMap::new(),
            size_multiples: BTreeMap::new(),
            launch: LaunchSpec {
                grid: "1".into(),
                block: "1".into(),
                shared: "0".into(),
                origin: "test".into(),
            },
        }
    }

    #[test]
    fn four_sizes_get_distinct_extents_and_a_block_size_gets_a_block() {
        let spec = spec(
            vec![
                tensor("inp", TensorRole::Input, "B, NH, N, d", DType::F32),
                tensor("out", TensorRole::Output, "B, N, NH, d", DType::F32),
                scalar("B"),
                scalar("N"),
                scalar("NH"),
                scalar("d"),
                scalar("block_size"),
            ],
            Vec::new(),
        );
        let cases = cases_for(&spec).unwrap();
        let odd = &cases[1].scalars;
        let extents: Vec<f64> = ["B", "NH", "N", "d"].iter().map(|n| odd[*n]).collect();
        assert_eq!(extents, [3.0, 37.0, 5.0, 11.0]);
        assert!(cases[0].sizes.iter().all(|n| cases[0].scalars[n] == 1.0));
        assert_eq!(odd["block_size"], 256.0);
    }

    #[test]
    fn embedding_indices_stay_inside_the_table_and_steps_are_counts() {
        let args = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let spec = spec(
            vec![
                tensor("ids", TensorRole::Input, "n", DType::I32),
                tensor("table", TensorRole::Input, "rows, cols", DType::F32),
                tensor("out", TensorRole::Output, "n, cols", DType::F32),
                tensor("step", TensorRole::Input, "1", DType::F32),
                tensor("v", TensorRole::Inout, "n", DType::F32),
                scalar("n"),
                scalar("rows"),
                scalar("cols"),
            ],
            vec![
                CallSpec {
                    operator: "aclnnEmbedding".into(),
                    args: args(&[("weight", "table"), ("indices", "ids"), ("out", "out")]),
                    when: None,
                    unless: None,
                },
                CallSpec {
                    operator: "aclnnApplyAdamWV2".into(),
                    args: args(&[("step", "step"), ("vRef", "v")]),
                    when: None,
                    unless: None,
                },
            ],
        );
        for case in cases_for(&spec).unwrap() {
            let domains = input_domains(&spec, &case).unwrap();
            let rows = case.scalars["rows"];
            assert_eq!(domains["ids"], Domain::Index(rows as usize));
            let ids = domain_values(&case, "ids", 500, &domains["ids"]);
            assert!(ids
                .iter()
                .all(|&i| i >= 0.0 && f64::from(i) < rows && i.fract() == 0.0));
            let steps = domain_values(&case, "step", 50, &domains["step"]);
            assert!(steps.iter().all(|&s| (1.0..=10.0).contains(&s)));
            let v = domain_values(&case, "v", 500, &domains["v"]);
            assert!(v.iter().all(|&x| x >= 0.0));
        }
    }

    #[test]
    fn a_softmax_output_sums_to_one_along_the_declared_dim() {
        let call = |dim: &str| CallSpec {
            operator: "aclnnSoftmaxBackward".into(),
            args: [
                ("gradOutput", "dy"),
                ("output", "y"),
                ("dim", dim),
                ("out", "dx"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            when: None,
            unless: None,
        };
        for (dim, rows_sum) in [("-1", true), ("0", false)] {
            let spec = spec(
                vec![
                    tensor("y", TensorRole::Input, "rows, cols", DType::F32),
                    tensor("dy", TensorRole::Input, "rows, cols", DType::F32),
                    tensor("dx", TensorRole::Output, "rows, cols", DType::F32),
                    scalar("rows"),
                    scalar("cols"),
                ],
                vec![call(dim)],
            );
            // The special values (1e4, -1e4) are in the last case.
            for case in cases_for(&spec).unwrap() {
                let (rows, cols) = (case.scalars["rows"] as usize, case.scalars["cols"] as usize);
                let domain = &input_domains(&spec, &case).unwrap()["y"];
                let y = domain_values(&case, "y", rows * cols, domain);
                assert!(y.iter().all(|v| v.is_finite() && *v > 0.0), "{dim}");
                let (outer, inner) = if rows_sum { (rows, cols) } else { (cols, rows) };
                for o in 0..outer {
                    let at = |i: usize| if rows_sum { o * cols + i } else { i * cols + o };
                    let total: f64 = (0..inner).map(|i| f64::from(y[at(i)])).sum();
                    assert!(
                        (total - 1.0).abs() < 1e-5,
                        "dim {dim}, {}: {total}",
                        case.name
                    );
                }
            }
        }
    }
}
