//! Portable names: what a CUDA host-API name is called in dual-stack source.
//! The scheme is fixed and reversible so a reviewer can read the CUDA name
//! back from the portable one: `cudaMalloc` → `cuportMalloc`, `CUDA_R_32F` →
//! `CUPORT_R_32F`, other libraries keep their name behind a prefix
//! (`cublasSgemm` → `cuport_cublasSgemm`, `CUBLAS_OP_N` → `CUPORT_CUBLAS_OP_N`).
use cuport_model::Library;

/// The libraries whose host APIs are reached through the shim. Kernel code,
/// cooperative groups, CUB/Thrust and framework C++ keep their CUDA names:
/// HIP and MUSA compile them as they are, and on Ascend/MLU they go with the
/// kernel port.
pub(crate) fn is_shimmed(library: Library) -> bool {
    shim_header(library).is_some()
}

/// The generated header (under `cuport/`) that declares a library's
/// portable names (`shim-header` in mappings/libraries.toml).
pub fn shim_header(library: Library) -> Option<&'static str> {
    library.profile().shim_header.as_deref()
}

/// The portable spelling of `cuda_name`; None when it is not a plain C
/// identifier (C++ qualified names and operators are not shimmed).
pub fn portable_name(cuda_name: &str) -> Option<String> {
    if !is_identifier(cuda_name) {
        return None;
    }
    if let Some(rest) = cuda_name.strip_prefix("cuda") {
        if rest.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Some(format!("cuport{rest}"));
        }
    }
    if let Some(rest) = cuda_name.strip_prefix("CUDA_") {
        return Some(format!("CUPORT_{rest}"));
    }
    let upper = cuda_name
        .bytes()
        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    Some(if upper {
        format!("CUPORT_{cuda_name}")
    } else {
        format!("cuport_{cuda_name}")
    })
}

fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_names_swap_the_prefix() {
        assert_eq!(portable_name("cudaMalloc").as_deref(), Some("cuportMalloc"));
        assert_eq!(
            portable_name("cudaStream_t").as_deref(),
            Some("cuportStream_t")
        );
        assert_eq!(portable_name("CUDA_R_32F").as_deref(), Some("CUPORT_R_32F"));
    }

    #[test]
    fn other_libraries_keep_their_name_behind_a_prefix() {
        assert_eq!(
            portable_name("cublasSgemm").as_deref(),
            Some("cuport_cublasSgemm")
        );
        assert_eq!(
            portable_name("CUBLAS_OP_N").as_deref(),
            Some("CUPORT_CUBLAS_OP_N")
        );
        assert_eq!(
            portable_name("CUresult").as_deref(),
            Some("cuport_CUresult")
        );
        assert_eq!(
            portable_name("cudaextra").as_deref(),
            Some("cuport_cudaextra")
        );
    }

    #[test]
    fn qualified_names_have_no_portable_spelling() {
        assert_eq!(portable_name("at::cuda::getCurrentCUDAStream"), None);
        assert_eq!(portable_name(""), None);
        assert_eq!(portable_name("1abc"), None);
    }
}
