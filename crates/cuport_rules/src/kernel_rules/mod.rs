//! Kernel rules: a CUDA kernel mapped to calls of the target's vendor
//! operators (`[[kernel]]`, docs/kernel-rules.md), the built-in operator
//! tables they are checked against (`mappings/<target>/operators/`), and
//! proposals built from the recipes of those tables.
mod expr;
mod kernel;
mod operators;
mod propose;

pub use expr::{list_items, names_in, ExprError};
pub use kernel::{
    check_rule, is_string_param, kernel_rules_toml, load_kernel_rules, same_file, string_literal,
    Confidence, EvidenceVerdict, KernelCall, KernelLaunch, KernelRule, KernelTensor, RuleEvidence,
};
pub use operators::{
    declared_parameters, Dtype, HeaderSource, Operator, OperatorParam, OperatorTable, ParamRole,
    Recipe, RecipeCall,
};
pub use propose::{propose, Proposal, ProposeError};
