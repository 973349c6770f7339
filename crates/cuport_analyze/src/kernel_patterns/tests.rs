use super::*;

fn pattern_of(src: &str) -> Option<String> {
    let kernels = recognise_kernels(src).unwrap_or_default();
    kernels
        .first()
        .and_then(|k| k.recognised.as_ref().map(|r| r.pattern.clone()))
}

#[test]
fn an_add_is_an_add() {
    let src = "__global__ void k(float* out, const float* a, const float* b, int n) {\n\
        int i = blockIdx.x * blockDim.x + threadIdx.x;\n if (i < n) { out[i] = a[i] + b[i]; }\n}\n";
    assert_eq!(pattern_of(src).as_deref(), Some("add"));
}
