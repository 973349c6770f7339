//! What a kernel's body computes, for the manual-port diagnostic and the
//! skeleton: cuport_analyze recognises the pattern from the body (never the
//! name), and the target's operator tables (`mappings/<target>/operators/`)
//! say which vendor operators compute it. Only medium or high certainty
//! recognitions become hints: a structural guess is no advice.
use cuport_analyze::{recognise_kernels, Certainty, Recognised};
use cuport_model::{PerTarget, Target};
use cuport_rules::kernel_rules::OperatorTable;

/// A hint naming what the kernel computes and the operators that may
/// replace it on `target`, from its parameter declarations and body.
pub(crate) fn recognise(params: &[String], body: &str, target: Target) -> Option<String> {
    let table = operator_table(target)?;
    let source = format!("__global__ void kernel({}) {body}", params.join(", "));
    let kernels = recognise_kernels(&source).ok()?;
    let found = kernels.into_iter().next()?.recognised?;
    (found.certainty >= Certainty::Medium).then(|| hint(&found, table))
}

fn hint(found: &Recognised, table: &OperatorTable) -> String {
    let operators = table.recipe(&found.pattern).map(|recipe| {
        let names: Vec<&str> = recipe.calls.iter().map(|c| c.operator.as_str()).collect();
        names.join(" + ")
    });
    match operators {
        Some(ops) => format!(
            "`{}` ({}): {ops} may replace it (`cuport kernels` proposes the rule)",
            found.pattern, found.reason
        ),
        None => format!(
            "`{}` ({}), which no single {} operator computes",
            found.pattern, found.reason, table.target
        ),
    }
}

/// The built-in operator tables of `target`, loaded on first use (a run
/// loads its own targets' only); none for a target without tables.
pub(crate) fn operator_table(target: Target) -> Option<&'static OperatorTable> {
    static TABLES: PerTarget<Option<OperatorTable>> = PerTarget::new();
    TABLES
        .get_or_init(target, || {
            let (table, _) = OperatorTable::builtin(target.id());
            (!table.operators.is_empty()).then_some(table)
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(list: &[&str]) -> Vec<String> {
        list.iter().map(|p| (*p).to_string()).collect()
    }

    #[test]
    fn an_add_names_aclnn_add_and_a_sum_of_squares_is_no_add() {
        let add = params(&["float* c", "const float* a", "const float* b", "int n"]);
        let body =
            "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }";
        let hint = recognise(&add, body, Target::Ascend).unwrap_or_default();
        assert!(
            hint.starts_with("`add`") && hint.contains("aclnnAdd"),
            "{hint}"
        );
        assert_eq!(recognise(&add, body, Target::Hip), None);
        let squares = params(&["float* out", "const float* x", "int n"]);
        let body = "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(out, x[i] * x[i]); }";
        assert_eq!(recognise(&squares, body, Target::Ascend), None);
    }
}
