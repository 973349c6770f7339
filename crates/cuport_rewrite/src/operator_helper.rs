//! The C++ function that takes the place of a CUDA kernel whose `[[kernel]]`
//! rule maps it to vendor operators: it has the kernel's parameters after a
//! stream, wraps the pointer parameters the rule names as tensors of the
//! rule's shapes and element types, binds every operator parameter, and
//! runs the calls in order through `CuportOpCall`
//! (`mappings/<target>/helpers/`, written as `cuport_kernel_ops.h`). The
//! text is generated from the rule and the operator tables only; what it
//! compiles against is checked by the tests with the vendor's headers.
use std::fmt::Write as _;

use cuport_rules::kernel_rules::{
    is_string_param, list_items, string_literal, KernelCall, KernelRule, KernelTensor, Operator,
    OperatorTable, ParamRole,
};

/// The name of the function a kernel's launches call instead.
pub(crate) fn helper_name(kernel: &str) -> String {
    format!("cuport_kernel_{kernel}")
}

/// What each launch passes after the kernel's arguments: the rule's launch
/// values, in the order the function declares them.
pub(crate) fn launch_arguments(rule: &KernelRule) -> Vec<String> {
    rule.launch_values
        .values()
        .map(|text| format!("static_cast<int64_t>({})", text.trim()))
        .collect()
}

/// How the function is declared where the kernel was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Linkage {
    /// A definition in a header: `static inline`, one copy per includer.
    Header,
    /// A definition in a source file, which other files may declare.
    Source,
    /// The kernel was only declared here (a prototype in a header).
    Declaration,
}

/// Why a rule cannot become a function (the tables changed under a rule
/// file, or the kernel's parameters do not match it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum HelperError {
    #[error("the rule calls `{0}`, which the operator tables do not have")]
    UnknownOperator(String),
    #[error("no {target} element type for `{dtype}` (tensor `{param}`)")]
    UnknownDtype {
        target: String,
        dtype: String,
        param: String,
    },
    #[error(
        "`{operator}` parameter `{param}` is bound to `{value}`, which is no tensor of the rule"
    )]
    NotATensor {
        operator: String,
        param: String,
        value: String,
    },
    #[error("`{operator}` parameter `{param}` has type `{c_type}`, which cuport cannot bind")]
    UnsupportedType {
        operator: String,
        param: String,
        c_type: String,
    },
}

/// The function's text: a comment saying what it replaces, then its
/// declaration or definition with `params` (the kernel's parameter
/// declarations as written).
pub(crate) fn helper_text(
    rule: &KernelRule,
    table: &OperatorTable,
    params: &[String],
    linkage: Linkage,
) -> Result<String, HelperError> {
    let operators = rule
        .calls
        .iter()
        .map(|c| {
            table
                .operator(&c.operator)
                .ok_or_else(|| HelperError::UnknownOperator(c.operator.clone()))
        })
        .collect::<Result<Vec<&Operator>, _>>()?;
    let names: Vec<&str> = operators.iter().map(|o| o.name.as_str()).collect();
    let mut text = format!(
        "// cuport: kernel `{}` is computed by {} on {}, as its [[kernel]] rule says;\n// its launches call this function, which returns when the operators are done.\n",
        rule.name,
        names.join(" + "),
        table.target
    );
    let mut signature = format!(
        "aclError {}(aclrtStream cuport_stream",
        helper_name(&rule.name)
    );
    for param in params.iter().filter(|p| !p.trim().is_empty()) {
        let _ = write!(signature, ", {}", param.trim());
    }
    // After the kernel's own: each launch passes these (launch_arguments).
    for name in rule.launch_values.keys() {
        let _ = write!(signature, ", int64_t {name}");
    }
    signature.push(')');
    match linkage {
        Linkage::Declaration => {
            let _ = writeln!(text, "{signature};");
            return Ok(text);
        }
        Linkage::Header => text.push_str("static inline "),
        Linkage::Source => {}
    }
    let _ = writeln!(text, "{signature} {{");
    text.push_str("    CuportOpCall cuport_call(cuport_stream);\n");
    for tensor in &rule.tensors {
        let dtype = table
            .dtype(&tensor.dtype)
            .ok_or_else(|| HelperError::UnknownDtype {
                target: table.target.clone(),
                dtype: tensor.dtype.clone(),
                param: tensor.param.clone(),
            })?;
        text.push_str(&tensor_text(tensor, dtype));
    }
    text.push_str(
        "    aclnnStatus cuport_status = cuport_call.ok() ? 0 : ACL_ERROR_INVALID_PARAM;\n",
    );
    for (index, (call, op)) in rule.calls.iter().zip(&operators).enumerate() {
        text.push_str(&call_text(index, call, op, rule, table)?);
    }
    text.push_str("    return cuport_call.finish(cuport_status);\n}\n");
    Ok(text)
}

/// The statements that make tensor `cuport_<name>`: a row-major view of
/// its parameter, or a strided one at an element offset.
fn tensor_text(tensor: &KernelTensor, dtype: &str) -> String {
    let dims = list_items(&tensor.shape);
    let (name, param) = (tensor.name(), &tensor.param);
    let mut text = format!(
        "    const int64_t cuport_dims_{name}[] = {{{}}};\n",
        cast_list(&dims, "int64_t")
    );
    // An optional pointer that is null stays a null tensor: only the calls
    // that run `when` it is present bind it.
    let guard = if tensor.optional {
        format!("{param} == nullptr ? nullptr : ")
    } else {
        String::new()
    };
    if let Some(value) = &tensor.value {
        let _ = writeln!(
            text,
            "    aclTensor *cuport_{name} = cuport_call.value(static_cast<double>({}), {dtype}, cuport_dims_{name}, {});",
            value.trim(),
            dims.len()
        );
        return text;
    }
    if tensor.scratch {
        let _ = writeln!(
            text,
            "    aclTensor *cuport_{name} = cuport_call.scratch({dtype}, cuport_dims_{name}, {});",
            dims.len()
        );
        return text;
    }
    if !tensor.is_view() {
        let _ = writeln!(
            text,
            "    aclTensor *cuport_{name} = {guard}cuport_call.tensor({param}, {dtype}, cuport_dims_{name}, {});",
            dims.len()
        );
        return text;
    }
    let strides = match &tensor.strides {
        Some(strides) => list_items(strides),
        None => row_major(&dims),
    };
    let offset = tensor.offset.as_deref().unwrap_or("0");
    let _ = writeln!(
        text,
        "    const int64_t cuport_strides_{name}[] = {{{}}};\n    aclTensor *cuport_{name} = {guard}cuport_call.view({param}, {dtype}, cuport_dims_{name}, cuport_strides_{name}, {}, static_cast<int64_t>({offset}));",
        cast_list(&strides, "int64_t"),
        dims.len()
    );
    text
}

/// The row-major strides of `dims` as expressions (`C*1`, `1`).
fn row_major(dims: &[String]) -> Vec<String> {
    let mut strides = vec!["1".to_owned(); dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = format!("({}) * ({})", strides[i + 1], dims[i + 1]);
    }
    strides
}

/// One operator's two phases, run when everything before succeeded.
fn call_text(
    index: usize,
    call: &KernelCall,
    op: &Operator,
    rule: &KernelRule,
    table: &OperatorTable,
) -> Result<String, HelperError> {
    let mut values = String::new();
    let mut args = Vec::new();
    for param in &op.params {
        let bound = call.args.get(&param.name);
        let arg = match (bound, param.role) {
            (None, _) => "nullptr".to_owned(),
            (Some(value), role) if role != ParamRole::Attribute => {
                tensor_arg(value, op, &param.name, rule)?
            }
            (Some(value), _) => {
                let name = format!("cuport_a{index}_{}", param.name);
                attribute(&name, value, &param.c_type, call, rule, table)
                    .map(|setup| {
                        values.push_str(&setup);
                        name
                    })
                    .ok_or_else(|| HelperError::UnsupportedType {
                        operator: op.name.clone(),
                        param: param.name.clone(),
                        c_type: param.c_type.clone(),
                    })?
            }
        };
        args.push(arg);
    }
    let param_of = |name: &Option<String>| {
        name.as_deref()
            .and_then(|w| rule.tensors.iter().find(|t| t.name() == w))
            .map(|t| t.param.as_str())
    };
    let mut text = match (param_of(&call.when), param_of(&call.unless)) {
        (Some(param), _) => format!("    if (cuport_status == 0 && {param} != nullptr) {{\n"),
        (None, Some(param)) => format!("    if (cuport_status == 0 && {param} == nullptr) {{\n"),
        (None, None) => String::from("    if (cuport_status == 0) {\n"),
    };
    text.push_str(&values);
    let _ = writeln!(
        text,
        "        uint64_t cuport_bytes = 0;\n        aclOpExecutor *cuport_executor = nullptr;\n        cuport_status = {}GetWorkspaceSize({}, &cuport_bytes, &cuport_executor);\n        if (cuport_status == 0) {{\n            cuport_status = cuport_call.run(cuport_bytes, cuport_executor, {});\n        }}\n    }}",
        op.name,
        args.join(", "),
        op.name
    );
    Ok(text)
}

fn tensor_arg(
    value: &str,
    op: &Operator,
    param: &str,
    rule: &KernelRule,
) -> Result<String, HelperError> {
    if rule.tensors.iter().any(|t| t.name() == value) {
        Ok(format!("cuport_{value}"))
    } else {
        Err(HelperError::NotATensor {
            operator: op.name.clone(),
            param: param.to_owned(),
            value: value.to_owned(),
        })
    }
}

/// The statements that make attribute `name` from `value` for a parameter
/// of `c_type` (none: a type cuport does not bind).
fn attribute(
    name: &str,
    value: &str,
    c_type: &str,
    call: &KernelCall,
    rule: &KernelRule,
    table: &OperatorTable,
) -> Option<String> {
    let bare = c_type.trim().trim_start_matches("const ").trim();
    if is_string_param(c_type) {
        let literal = string_literal(value)?;
        return Some(format!("        char {name}[] = \"{literal}\";\n"));
    }
    let text = match bare {
        "aclScalar*" => {
            let (holder, dtype) = scalar_type(call, rule, table);
            format!(
                "        {holder} {name}_value = static_cast<{holder}>({value});\n        aclScalar *{name} = cuport_call.scalar(&{name}_value, {dtype});\n"
            )
        }
        "aclIntArray*" => {
            let items = list_items(value);
            format!(
                "        const int64_t {name}_values[] = {{{}}};\n        aclIntArray *{name} = cuport_call.ints({name}_values, {});\n",
                cast_list(&items, "int64_t"),
                items.len()
            )
        }
        "aclBoolArray*" => {
            let items = list_items(value);
            format!(
                "        const bool {name}_values[] = {{{}}};\n        aclBoolArray *{name} = cuport_call.bools({name}_values, {});\n",
                cast_list(&items, "bool"),
                items.len()
            )
        }
        "aclDataType" => format!(
            "        aclDataType {name} = {};\n",
            table.dtype(value.trim()).unwrap_or(value.trim())
        ),
        "bool" | "double" | "float" | "int" | "int64_t" | "int32_t" | "int8_t" | "uint64_t" => {
            format!("        {bare} {name} = static_cast<{bare}>({value});\n")
        }
        _ => return None,
    };
    Some(text)
}

/// The C type and aclDataType of a scalar bound with tensors: the element
/// type of the call's first tensor where it is an integer, else float
/// (aclnn converts a float scalar to a half or bfloat16 tensor's type).
fn scalar_type(
    call: &KernelCall,
    rule: &KernelRule,
    table: &OperatorTable,
) -> (&'static str, &'static str) {
    let first = call
        .args
        .values()
        .find_map(|v| rule.tensors.iter().find(|t| t.name() == v))
        .and_then(|t| table.dtype(&t.dtype));
    match first {
        Some("ACL_INT32") => ("int32_t", "ACL_INT32"),
        Some("ACL_INT64") => ("int64_t", "ACL_INT64"),
        _ => ("float", "ACL_FLOAT"),
    }
}

/// The items of a C array initialiser of `c_type`.
fn cast_list(items: &[String], c_type: &str) -> String {
    items
        .iter()
        .map(|i| format!("static_cast<{c_type}>({i})"))
        .collect::<Vec<_>>()
        .join(", ")
}
