//! Pattern rules never invent target names, and samples of mechanical entries
//! hold per target and library.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::collections::HashSet;
use std::sync::OnceLock;

use cuport_model::Target;
use cuport_rules::{Flavour, RuleSet, Status};
use proptest::prelude::*;

fn set() -> &'static RuleSet {
    static SET: OnceLock<RuleSet> = OnceLock::new();
    SET.get_or_init(|| RuleSet::builtin().expect("built-ins load"))
}

/// Every target name some rule lists: explicit targets and pattern `exists`.
fn listed_targets(target: Target) -> &'static HashSet<String> {
    static SETS: OnceLock<Vec<(Target, HashSet<String>)>> = OnceLock::new();
    let sets = SETS.get_or_init(|| {
        Target::ALL
            .into_iter()
            .map(|t| {
                let names = set()
                    .known_cuda_names(t)
                    .filter_map(|n| set().lookup(t, n)?.target_name.map(|c| c.into_owned()))
                    .collect();
                (t, names)
            })
            .collect()
    });
    &sets
        .iter()
        .find(|(t, _)| *t == target)
        .expect("every target")
        .1
}

proptest! {
    #[test]
    fn patterns_never_produce_unlisted_target_names(
        prefix in prop::sample::select(vec!["cuda", "cu", "CUDA_", "cublas", "CUBLAS_", "nccl", "curand", "cufft", "cusparse", "torch.cuda.", "cub::", ""]),
        rest in "[A-Za-z_][A-Za-z0-9_]{0,12}",
        target in prop::sample::select(Target::ALL.to_vec()),
    ) {
        let name = format!("{prefix}{rest}");
        if let Some(r) = set().lookup(target, &name) {
            if let Some(t) = r.target_name.as_deref() {
                prop_assert!(listed_targets(target).contains(t), "{name} → {t} is not listed");
            }
            prop_assert!(set().known_cuda_names(target).any(|n| n == name));
        }
    }
}

fn assert_maps(target: Target, cuda: &str, expected: &str, status: Status) {
    let r = set()
        .lookup(target, cuda)
        .unwrap_or_else(|| panic!("{cuda} maps on {target}"));
    assert_eq!(
        (r.target_name.as_deref(), r.status()),
        (Some(expected), status),
        "{cuda} on {target}"
    );
}

/// Each `(CUDA name, target name)` is renamed on `target`.
fn assert_renamed(target: Target, pairs: &[(&str, &str)]) {
    for (cuda, expected) in pairs {
        assert_maps(target, cuda, expected, Status::Renamed);
    }
}

#[test]
fn hip_samples() {
    assert_renamed(
        Target::Hip,
        &[
            ("cudaMalloc", "hipMalloc"),
            ("cudaDeviceProp", "hipDeviceProp_t"),
            ("cuMemAlloc_v2", "hipMalloc"),
            ("cublasSgemm_v2", "hipblasSgemm"),
            ("curandCreateGenerator", "hiprandCreateGenerator"),
            ("cufftPlan1d", "hipfftPlan1d"),
            ("cusparseCreate", "hipsparseCreate"),
            ("nvrtcCompileProgram", "hiprtcCompileProgram"),
            ("cuda_runtime.h", "hip/hip_runtime.h"),
        ],
    );
    // hipHostMalloc's C declaration has no default for flags: HIP's default
    // is written in (runtime-manual.toml).
    assert_maps(
        Target::Hip,
        "cudaMallocHost",
        "hipHostMalloc",
        Status::Rewrite,
    );
    assert_maps(Target::Hip, "__syncthreads", "__syncthreads", Status::Exact);
    assert_maps(Target::Hip, "ncclAllReduce", "ncclAllReduce", Status::Exact);
    assert_maps(
        Target::Hip,
        "cudnnConvolutionForward",
        "miopenConvolutionForward",
        Status::Approximate,
    );
    assert_eq!(
        set()
            .lookup(Target::Hip, "cudaDeviceFlushGPUDirectRDMAWrites")
            .map(|r| r.status()),
        Some(Status::Unsupported)
    );
}

#[test]
fn ascend_samples() {
    assert_renamed(
        Target::Ascend,
        &[
            ("cudaStreamSynchronize", "aclrtSynchronizeStream"),
            ("ncclGetUniqueId", "HcclGetRootInfo"),
            ("torch.cuda.synchronize", "torch.npu.synchronize"),
            ("cuda", "npu"),
            ("c10::cuda::CUDAGuard", "c10_npu::NPUGuard"),
        ],
    );
    let init = set().lookup(Target::Ascend, "ncclCommInitRank").unwrap();
    assert_eq!(
        init.template()
            .unwrap()
            .apply(&["&comm", "n", "id", "rank"])
            .unwrap(),
        "HcclCommInitRootInfo(n, &id, rank, &comm)"
    );
    let gemm = set().lookup(Target::Ascend, "cublasSgemm").unwrap();
    assert_eq!(gemm.helpers(), ["cuport_blas_sgemm".to_owned()]);
    assert_eq!(
        set().lookup(Target::Ascend, "__global__").unwrap().status(),
        Status::Manual
    );
}

#[test]
fn musa_samples() {
    assert_renamed(
        Target::Musa,
        &[
            ("cudaMalloc", "musaMalloc"),
            ("cublasSgemm", "mublasSgemm"),
            ("curandCreateGenerator", "murandCreateGenerator"),
            ("cufftPlan1d", "mufftPlan1d"),
            ("cusparseCreate", "musparseCreate"),
            ("ncclAllReduce", "mcclAllReduce"),
            ("cublas_v2.h", "mublas.h"),
        ],
    );
    assert_maps(Target::Musa, "cuda", "musa", Status::Renamed);
}

#[test]
fn mlu_samples() {
    assert_renamed(
        Target::Mlu,
        &[
            ("cudaMalloc", "cnrtMalloc"),
            ("cudaStream_t", "cnrtQueue_t"),
            ("ncclGetUniqueId", "cnclGetCliqueId"),
            ("cudnnCreate", "cnnlCreate"),
            ("cuda", "mlu"),
        ],
    );
    let copy = set().lookup(Target::Mlu, "cudaMemcpyAsync").unwrap();
    assert_eq!(
        copy.template()
            .unwrap()
            .apply(&["d", "s", "n", "cudaMemcpyHostToDevice", "q"])
            .unwrap(),
        "cnrtMemcpyAsync(d, (void *)s, n, q, cnrtMemcpyHostToDev)"
    );
    let t = set().lookup(Target::Mlu, "cudaEventElapsedTime").unwrap();
    assert_eq!(
        t.template().unwrap().apply(&["&ms", "a", "b"]).unwrap(),
        "cnrtNotifierElapsedTime(a, b, &ms)"
    );
}

#[test]
fn hip_resolves_at_least_4000_names() {
    let n = set().known_cuda_names(Target::Hip).count();
    assert!(n >= 4000, "HIP resolves only {n} names");
}

fn assert_roc(cuda: &str, expected: Option<&str>, status: Status) {
    let r = set()
        .lookup_flavour(Target::Hip, Flavour::Roc, cuda)
        .unwrap_or_else(|| panic!("{cuda} maps on hip-roc"));
    assert_eq!(
        (r.target_name.as_deref(), r.status()),
        (expected, status),
        "{cuda} on hip-roc"
    );
}

#[test]
fn roc_flavour_samples() {
    assert_roc("cublasSgemm_v2", Some("rocblas_sgemm"), Status::Renamed);
    assert_roc("cublasHandle_t", Some("rocblas_handle"), Status::Renamed);
    assert_roc(
        "CUBLAS_OP_N",
        Some("rocblas_operation_none"),
        Status::Renamed,
    );
    assert_roc(
        "curandCreateGenerator",
        Some("rocrand_create_generator"),
        Status::Renamed,
    );
    assert_roc(
        "cusparseCreate",
        Some("rocsparse_create_handle"),
        Status::Renamed,
    );
    assert_roc(
        "cusolverDnCreate",
        Some("rocblas_create_handle"),
        Status::Renamed,
    );
    assert_roc("cublas_v2.h", Some("rocblas/rocblas.h"), Status::Renamed);
    // HIPIFY rewrites the arguments of this call for rocSPARSE.
    assert_roc("cusparseSpMV", Some("rocsparse_spmv"), Status::Approximate);
    // ROC_UNSUPPORTED names stay unsupported; they do not fall back to hipBLASLt.
    assert_roc("cublasLtMatmul", None, Status::Unsupported);
    // Libraries without a roc column fall back to the default HIP rules.
    assert_roc("cudaMalloc", Some("hipMalloc"), Status::Renamed);
    assert_roc("cufftPlan1d", Some("hipfftPlan1d"), Status::Renamed);
    // The default flavour is unchanged.
    assert_maps(
        Target::Hip,
        "cublasSgemm_v2",
        "hipblasSgemm",
        Status::Renamed,
    );
}

#[test]
fn roc_rules_exist_only_for_hip() {
    for target in [Target::Ascend, Target::Musa, Target::Mlu] {
        let default: Vec<&str> = set().known_cuda_names(target).collect();
        assert_eq!(
            default,
            set().known_cuda_names_flavour(target, Flavour::Roc)
        );
    }
}

#[test]
fn indexed_device_strings_keep_their_index() {
    let expected = [
        (Target::Hip, "cuda:1", "nccl"),
        (Target::Ascend, "npu:1", "hccl"),
        (Target::Musa, "musa:1", "mccl"),
        (Target::Mlu, "mlu:1", "cncl"),
    ];
    for (target, device, backend) in expected {
        assert_eq!(
            set().device_string(target, "cuda:1").as_deref(),
            Some(device)
        );
        assert_eq!(
            set().device_string(target, "nccl").as_deref(),
            Some(backend)
        );
        assert_eq!(set().device_string(target, "cudaMalloc"), None);
        assert!(set().lookup(target, "cuda:x").is_none());
        assert!(set().lookup(target, "cuda:").is_none());
    }
    assert!(set().is_known("cuda:3"));
    assert!(set()
        .lookup(Target::Ascend, "c10::cuda::CUDAGuard")
        .is_some());
}

#[test]
fn hip_preprocessor_macros_are_approximate_with_notes() {
    for (cuda, hip) in [
        ("__CUDA_ARCH__", "__HIP_DEVICE_COMPILE__"),
        ("CUDART_VERSION", "HIP_VERSION"),
        ("CUDA_VERSION", "HIP_VERSION"),
        ("__NVCC__", "__HIPCC__"),
    ] {
        let r = set().lookup(Target::Hip, cuda).expect("maps");
        assert_eq!(r.target_name.as_deref(), Some(hip));
        assert_eq!(r.status(), Status::Approximate);
        assert!(r.note().is_some_and(|n| !n.is_empty()));
    }
    assert_maps(Target::Hip, "__CUDACC__", "__HIPCC__", Status::Renamed);
}

#[test]
fn musa_tables_follow_the_torch_musa_mapping() {
    for (cuda, musa) in [
        ("cudaMemPrefetchAsync", "musaMemPrefetchAsync"),
        ("cudaGraphInstantiate", "musaGraphInstantiate"),
        ("cuMemAlloc_v2", "muMemAlloc_v2"),
        ("CUdevice", "MUdevice"),
        ("CUBLAS_COMPUTE_32F", "MUBLAS_COMPUTE_32F"),
        ("cusparseSpMV_bufferSize", "musparseSpMV_bufferSize"),
        ("cusolverDnSgetrf", "musolverDnSgetrf"),
        ("cusparse.h", "musparse.h"),
    ] {
        assert_maps(Target::Musa, cuda, musa, Status::Renamed);
    }
    // Not in the mapping: unknown, never renamed blindly.
    assert!(set().lookup(Target::Musa, "cudaNoSuchFunction").is_none());
    let n = set().known_cuda_names(Target::Musa).count();
    assert!(n >= 8000, "MUSA resolves only {n} names");
}

#[test]
fn mlu_torch_and_cncl_follow_torch_mlu() {
    for (cuda, mlu) in [
        ("torch.cuda.memory_allocated", "torch.mlu.memory_allocated"),
        ("torch.cuda.manual_seed_all", "torch.mlu.manual_seed_all"),
        ("torch.cuda.amp.GradScaler", "torch.mlu.amp.GradScaler"),
        ("torch.cuda.nccl", "torch.mlu.cncl"),
        (
            "torch.distributed.ProcessGroupNCCL",
            "torch_mlu._MLUC.ProcessGroupCNCL",
        ),
        ("ncclComm_t", "cnclComm_t"),
        ("ncclGroupStart", "cnclGroupStart"),
    ] {
        assert_maps(Target::Mlu, cuda, mlu, Status::Renamed);
    }
    // torch.cuda names that torch.mlu lacks stay unknown.
    assert!(set()
        .lookup(Target::Mlu, "torch.cuda.get_arch_list")
        .is_none());
    let apply = |cuda: &str, args: &[&str]| {
        let r = set().lookup(Target::Mlu, cuda).expect("maps");
        r.template()
            .expect("template")
            .apply(args)
            .expect("applies")
    };
    assert_eq!(
        apply("ncclCommCount", &["comm", "&n"]),
        "cnclGetCommCount(&n, comm)"
    );
    assert_eq!(
        apply("ncclSend", &["buf", "n", "ncclFloat", "peer", "comm", "s"]),
        "cnclSend(buf, n, cnclFloat, peer, comm, s)"
    );
}
