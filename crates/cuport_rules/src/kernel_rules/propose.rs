//! A proposed kernel rule: a recognised pattern's recipe with its slots
//! filled from the kernel.
use std::collections::BTreeMap;

use super::kernel::{Confidence, KernelCall, KernelRule, KernelTensor};
use super::operators::OperatorTable;

/// What recognition found in one kernel, in the terms recipes use.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub kernel: String,
    pub params: Vec<String>,
    pub pattern: String,
    pub confidence: Confidence,
    pub reason: String,
    /// Slot (`out`, `x`, `n`) → kernel parameter or expression.
    pub slots: BTreeMap<String, String>,
    pub tensors: Vec<KernelTensor>,
}

/// Why a proposal is no rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProposeError {
    #[error("no {target} operator call computes a `{pattern}` alone")]
    NoRecipe { target: String, pattern: String },
    #[error("the `{pattern}` recipe needs `${slot}`, which recognition could not tell")]
    MissingSlot { pattern: String, slot: String },
}

/// The rule `table`'s recipe for the proposal's pattern makes of it.
pub fn propose(proposal: &Proposal, table: &OperatorTable) -> Result<KernelRule, ProposeError> {
    let recipe = table
        .recipe(&proposal.pattern)
        .ok_or_else(|| ProposeError::NoRecipe {
            target: table.target.clone(),
            pattern: proposal.pattern.clone(),
        })?;
    let mut calls = Vec::new();
    for call in &recipe.calls {
        let mut args = BTreeMap::new();
        for (param, template) in &call.args {
            // `$slot?`: an optional operator parameter, left out when the
            // kernel has nothing for it.
            if let Some(slot) = template.strip_prefix('$').and_then(|t| t.strip_suffix('?')) {
                if let Some(value) = proposal.slots.get(slot) {
                    args.insert(param.clone(), value.clone());
                }
                continue;
            }
            let value =
                fill(template, &proposal.slots).map_err(|slot| ProposeError::MissingSlot {
                    pattern: proposal.pattern.clone(),
                    slot,
                })?;
            args.insert(param.clone(), value);
        }
        calls.push(KernelCall {
            operator: call.operator.clone(),
            args,
            when: None,
            unless: None,
        });
    }
    Ok(KernelRule {
        name: proposal.kernel.clone(),
        file: None,
        target: table.target.clone(),
        params: proposal.params.clone(),
        launch_values: BTreeMap::new(),
        size_multiples: BTreeMap::new(),
        case_values: BTreeMap::new(),
        pattern: Some(proposal.pattern.clone()),
        confidence: Some(proposal.confidence),
        reason: Some(proposal.reason.clone()),
        tensors: proposal.tensors.clone(),
        calls,
        launch: None,
        evidence: None,
    })
}

/// `template` with every `$slot` replaced, or the first slot not filled.
fn fill(template: &str, slots: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let after = &rest[dollar + 1..];
        let len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let slot = &after[..len];
        out.push_str(slots.get(slot).ok_or_else(|| slot.to_string())?);
        rest = &after[len..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_rules::ParamRole;

    fn tensor(param: &str, role: ParamRole) -> KernelTensor {
        KernelTensor {
            name: None,
            param: param.into(),
            role,
            shape: "N".into(),
            strides: None,
            offset: None,
            dtype: "float".into(),
            optional: false,
            scratch: false,
            partial: false,
            lower_triangular: false,
            value: None,
        }
    }

    fn add_proposal() -> Proposal {
        Proposal {
            kernel: "residual".into(),
            params: vec!["out".into(), "a".into(), "b".into(), "N".into()],
            pattern: "add".into(),
            confidence: Confidence::High,
            reason: "out[i] = a[i] + b[i]".into(),
            slots: [("out", "out"), ("a", "a"), ("b", "b")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            tensors: vec![
                tensor("out", ParamRole::Output),
                tensor("a", ParamRole::Input),
                tensor("b", ParamRole::Input),
            ],
        }
    }

    #[test]
    fn an_add_becomes_aclnn_add_with_alpha_one_and_checks_clean() {
        let (table, _) = OperatorTable::builtin("ascend");
        let rule = propose(&add_proposal(), &table);
        let rule = rule.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rule.calls[0].operator, "aclnnAdd");
        assert_eq!(
            rule.calls[0].args.get("alpha").map(String::as_str),
            Some("1")
        );
        let at = crate::Location {
            file: "p".into(),
            line: 1,
            column: 1,
        };
        assert!(crate::kernel_rules::check_rule(&rule, &table, &at).is_empty());
    }

    #[test]
    fn unfilled_slots_and_patterns_without_recipes_are_errors() {
        let (table, _) = OperatorTable::builtin("ascend");
        let mut missing = add_proposal();
        missing.slots.remove("b");
        assert_eq!(
            propose(&missing, &table),
            Err(ProposeError::MissingSlot {
                pattern: "add".into(),
                slot: "b".into()
            })
        );
        let mut unknown = add_proposal();
        unknown.pattern = "row-sum-of-squares".into();
        assert!(matches!(
            propose(&unknown, &table),
            Err(ProposeError::NoRecipe { .. })
        ));
    }
}
