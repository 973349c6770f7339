//! Recognises kernels simple enough that a vendor operator can replace them
//! outright, so the manual-port diagnostic can name the operator.
use cuport_model::Target;

/// The operator family a kernel body looks like, named for `target`.
pub(crate) fn recognise(body: &str, target: Target) -> Option<&'static str> {
    let family = family(body)?;
    Some(match (target, family) {
        (Target::Ascend, Family::Reduction) => {
            "a reduction: aclnnReduceSum / aclnnAmax may replace it"
        }
        (Target::Ascend, Family::Softmax) => "a softmax: aclnnSoftmax may replace it",
        (Target::Ascend, Family::Elementwise(op)) => op.ascend(),
        (Target::Mlu, Family::Reduction) => "a reduction: cnnlReduce may replace it",
        (Target::Mlu, Family::Softmax) => "a softmax: cnnlSoftmaxForward may replace it",
        (Target::Mlu, Family::Elementwise(_)) => {
            "an elementwise operation: a CNNL elementwise operator may replace it"
        }
        _ => return None,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Reduction,
    Softmax,
    Elementwise(Op),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Mul,
    Other,
}

impl Op {
    fn ascend(self) -> &'static str {
        match self {
            Op::Add => "an elementwise add: aclnnAdd may replace it",
            Op::Mul => "an elementwise multiply: aclnnMul may replace it",
            Op::Other => "an elementwise operation: an aclnn elementwise operator may replace it",
        }
    }
}

fn family(body: &str) -> Option<Family> {
    let reduces = body.contains("atomicAdd")
        || body.contains("__shfl_down")
        || body.contains("__shfl_xor")
        || (body.contains("__shared__") && body.contains("__syncthreads"));
    if body.contains("exp") && (body.contains("max") || body.contains("fmax")) && reduces {
        return Some(Family::Softmax);
    }
    if reduces {
        return Some(Family::Reduction);
    }
    let statements = body.matches(';').count();
    let indexed = body.contains("threadIdx") && body.contains('[');
    // A grid-stride loop (`i += blockDim.x * gridDim.x`) is still one
    // element per step; any other loop is real work per element.
    let grid_stride = body.contains("gridDim") && body.matches("for").count() == 1;
    let loops = (body.contains("for") && !grid_stride) || body.contains("while");
    if !indexed || statements > 6 || loops {
        return None;
    }
    let op = if body.contains("] + ") || body.contains("]+") {
        Op::Add
    } else if body.contains("] * ") || body.contains("]*") {
        Op::Mul
    } else {
        Op::Other
    };
    Some(Family::Elementwise(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_elementwise_and_reductions() {
        let add =
            "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }";
        assert_eq!(
            recognise(add, Target::Ascend),
            Some("an elementwise add: aclnnAdd may replace it")
        );
        let reduce = "{ __shared__ float s[256]; s[threadIdx.x] = x[i]; __syncthreads(); atomicAdd(out, s[0]); }";
        assert!(recognise(reduce, Target::Ascend).is_some_and(|m| m.contains("aclnnReduceSum")));
        let complex =
            "{ for (int k = 0; k < n; ++k) { acc += a[k] * b[k]; } c[threadIdx.x] = acc; }";
        assert_eq!(recognise(complex, Target::Ascend), None);
        assert_eq!(recognise(add, Target::Hip), None);
    }
}
