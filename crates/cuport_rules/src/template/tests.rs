#![allow(clippy::unwrap_used)]
use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;

fn memcpy_kind(fallback: Option<&str>) -> Arc<EnumMap> {
    let values: BTreeMap<String, String> = [
        ("cudaMemcpyHostToDevice", "ACL_MEMCPY_HOST_TO_DEVICE"),
        ("cudaMemcpyDeviceToHost", "ACL_MEMCPY_DEVICE_TO_HOST"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_owned(), b.to_owned()))
    .collect();
    Arc::new(EnumMap {
        name: "memcpy-kind".into(),
        cuda_enum: "cudaMemcpyKind".into(),
        values,
        fallback: fallback.map(str::to_owned),
    })
}

fn linked(source: &str, fallback: Option<&str>) -> Template {
    let map = memcpy_kind(fallback);
    Template::parse(source)
        .unwrap()
        .link(|n| (n == "memcpy-kind").then(|| map.clone()))
        .unwrap()
}

#[test]
fn memcpy_gets_dest_max_from_count_and_mapped_kind() {
    let t = linked("aclrtMemcpy($1, $3, $2, $3, ${4:memcpy-kind})", None);
    let out = t
        .apply(&["d", " h", "n * sizeof(float)", "cudaMemcpyHostToDevice"])
        .unwrap();
    assert_eq!(
        out,
        "aclrtMemcpy(d, n * sizeof(float), h, n * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE)"
    );
    assert_eq!(t.callee(), Some("aclrtMemcpy"));
    assert_eq!(t.arity(), Some(5));
    assert_eq!(t.max_arg(), 4);
}

#[test]
fn enum_value_that_is_not_a_literal_uses_the_fallback_or_fails() {
    let with = linked("f(${1:memcpy-kind})", Some("cuport_acl_memcpy_kind"));
    assert_eq!(
        with.apply(&["kind"]).unwrap(),
        "f(cuport_acl_memcpy_kind(kind))"
    );
    let without = linked("f(${1:memcpy-kind})", None);
    assert!(matches!(
        without.apply(&["kind"]),
        Err(TemplateError::NotAnEnumLiteral { .. })
    ));
}

#[test]
fn casts_reorders_and_literals_are_plain_text() {
    let t = Template::parse("HcclCommInitRootInfo($2, &$3, $4, $1)").unwrap();
    assert_eq!(
        t.apply(&["&comm", "n", "id", "r"]).unwrap(),
        "HcclCommInitRootInfo(n, &id, r, &comm)"
    );
    let t = Template::parse("aclrtMalloc((void**)$1, $2, ACL_MEM_MALLOC_HUGE_FIRST)").unwrap();
    assert_eq!(
        t.apply(&["&p", "n"]).unwrap(),
        "aclrtMalloc((void**)&p, n, ACL_MEM_MALLOC_HUGE_FIRST)"
    );
}

#[test]
fn rest_arguments_own_their_comma() {
    let t = Template::parse("torch.npu.synchronize($1, ${2..})").unwrap();
    assert_eq!(t.apply(&["a"]).unwrap(), "torch.npu.synchronize(a)");
    assert_eq!(
        t.apply(&["a", "b", "c"]).unwrap(),
        "torch.npu.synchronize(a, b, c)"
    );
    assert_eq!(t.arity(), None);
}

#[test]
fn a_defaulted_argument_is_filled_in_only_when_left_out() {
    let t = Template::parse("hipMalloc3DArray($1, $2, $3, ${4=0})").unwrap();
    assert_eq!(
        t.apply(&["a", "d", "e"]).unwrap(),
        "hipMalloc3DArray(a, d, e, 0)"
    );
    assert_eq!(
        t.apply(&["a", "d", "e", " hipArraySurfaceLoadStore"])
            .unwrap(),
        "hipMalloc3DArray(a, d, e, hipArraySurfaceLoadStore)"
    );
    assert_eq!(t.max_arg(), 3);
    assert_eq!(t.arity(), Some(4));
    assert_eq!(t.rest_from(), Some(3));
    assert_eq!(
        t.macro_body(&["a1", "a2", "a3"]),
        "hipMalloc3DArray((a1), (a2), (a3), CUPORT_DEFAULT_ARG(0, __VA_ARGS__))"
    );
    assert!(t.apply(&["a", "d"]).is_err());
}

#[test]
fn a_defaulted_argument_must_come_last() {
    assert!(Template::parse("f(${1=0}, $2)").is_err());
    assert!(Template::parse("f($1, ${2=0}, ${3..})").is_err());
    assert!(Template::parse("f($1, ${2=})").is_err());
    assert!(Template::parse("f($1, ${2=nullptr})").is_ok());
}

#[test]
fn missing_argument_is_an_error_not_a_panic() {
    let t = Template::parse("g($3)").unwrap();
    assert_eq!(
        t.apply(&["a"]),
        Err(TemplateError::MissingArgument { index: 3, given: 1 })
    );
}

#[test]
fn syntax_errors_are_reported() {
    assert!(Template::parse("f(${1:memcpy-kind)").is_err());
    assert!(Template::parse("f($0)").is_err());
    assert!(Template::parse("f($x)").is_err());
    assert_eq!(
        Template::parse("cost $$5").unwrap().apply(&[]).unwrap(),
        "cost $5"
    );
}

#[test]
fn unknown_enum_map_fails_to_link() {
    let t = Template::parse("f(${1:nope})").unwrap();
    assert_eq!(
        t.link(|_| None),
        Err(TemplateError::UnknownEnumMap("nope".into()))
    );
}

#[test]
fn arity_ignores_commas_in_nested_calls_and_strings() {
    let t = Template::parse("h(g($1, $2), \"a,b\", $3)").unwrap();
    assert_eq!(t.arity(), Some(3));
    assert_eq!(Template::parse("h()").unwrap().arity(), Some(0));
    assert_eq!(Template::parse("$1 + 1").unwrap().callee(), None);
}

#[test]
fn only_a_bare_name_is_a_plain_name() {
    let plain = |s: &str| {
        Template::parse(s)
            .ok()
            .and_then(|t| t.plain_name().map(str::to_owned))
    };
    assert_eq!(plain("hip_bfloat16").as_deref(), Some("hip_bfloat16"));
    assert_eq!(
        plain("hip/hip_bfloat16.h").as_deref(),
        Some("hip/hip_bfloat16.h")
    );
    assert_eq!(plain("hipcub::Max").as_deref(), Some("hipcub::Max"));
    assert_eq!(plain("__shfl_xor($2)"), None);
    assert_eq!(plain("f()"), None);
    assert_eq!(plain("(float)x"), None);
    assert_eq!(plain("unsigned int"), None);
    assert_eq!(plain(""), None);
}
