//! Recognises kernels simple enough that a vendor operator can replace them
//! outright, so the manual-port diagnostic can name the operator.
use cuport_model::Target;

/// The operator family a kernel body looks like, named for `target` (the
/// `[kernels.operators]` hints of its profile).
pub(crate) fn recognise(body: &str, target: Target) -> Option<&'static str> {
    let hints = target.profile().kernels.operators.as_ref()?;
    let hint = match family(body)? {
        Family::Reduction => &hints.reduction,
        Family::Softmax => &hints.softmax,
        Family::Elementwise(Op::Add) => {
            hints.elementwise_add.as_ref().unwrap_or(&hints.elementwise)
        }
        Family::Elementwise(Op::Mul) => {
            hints.elementwise_mul.as_ref().unwrap_or(&hints.elementwise)
        }
        Family::Elementwise(Op::Other) => &hints.elementwise,
    };
    Some(hint.as_str())
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
