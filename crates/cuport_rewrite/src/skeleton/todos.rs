//! The TODO list at the top of a skeleton: what every port must do, and
//! what this kernel's body uses that has no direct Ascend C counterpart.
use super::buffer::Buffer;
use super::params::{ascend_type, ParamKind};
use super::KernelShape;

pub(super) fn todos(k: &KernelShape, buffers: &[Buffer]) -> Vec<String> {
    let mut todos = vec![
        "choose BLOCK_LENGTH and TILE_LENGTH, and handle a last partial tile".to_owned(),
        "write Compute() as whole-tile vector instructions (AscendC::Add, Mul, Exp, ...)".into(),
        "check the input/output queues: const pointers became inputs (VECIN), the others \
         outputs (VECOUT); a buffer that is read and written needs both"
            .into(),
        "check DataCopy alignment (a 32-byte granularity is UNCONFIRMED)".into(),
        "host side: aclrtMalloc the buffers, launch as shown above, aclrtSynchronizeStream".into(),
    ];
    let body = k.body;
    let has = |needle: &str| body.contains(needle);
    let notes: [(bool, &str); 7] = [
        (has("threadIdx") || has("blockDim"), "per-thread code (threadIdx, blockDim) has no counterpart: one instance runs per core over whole tiles"),
        (has("blockIdx") || has("gridDim"), "blockIdx.x becomes AscendC::GetBlockIdx(); reading the core count on the device is UNCONFIRMED (GetBlockNum)"),
        (has("__shared__"), "__shared__ memory becomes Unified Buffer space: pipe.InitBuffer with a TQue or an AscendC::TBuf<AscendC::TPosition::VECCALC>"),
        (has("__syncthreads"), "__syncthreads() has no counterpart: the EnQue/DeQue pipeline orders the stages"),
        (has("atomic"), "atomics: no confirmed Ascend C counterpart (atomic modes of DataCopy are UNCONFIRMED); combine per-core partial results instead"),
        (has("__shfl") || has("__ballot") || has("__reduce_") || has("warpSize"), "warp intrinsics: classic AI Cores have no warps; use vector reduce instructions (names UNCONFIRMED)"),
        (has("cg::") || has("cooperative_groups"), "cooperative groups: no Ascend C counterpart found"),
    ];
    todos.extend(notes.iter().filter(|n| n.0).map(|n| n.1.to_owned()));
    for p in &k.params {
        if let ParamKind::Pointer { indirect: true, .. } = p.kind {
            todos.push(format!(
                "`{}` is a pointer to pointers: GlobalTensor cannot follow it; flatten the data",
                p.name
            ));
        }
    }
    if !k.template.is_empty() {
        todos.push(format!(
            "`{}` is a template: an extern \"C\" entry cannot be one; write one entry per \
             instantiation the host launches (the template arguments below are placeholders)",
            k.name
        ));
    }
    let types: Vec<&str> = k
        .params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Pointer { element, .. } => element.as_str(),
            ParamKind::Scalar { ty } => ty.as_str(),
        })
        .collect();
    if types.iter().any(|t| ascend_type(t) != *t) {
        todos.push(
            "CUDA's __half became half and __nv_bfloat16 became bfloat16_t (the bfloat16 \
             spelling is UNCONFIRMED); check the element types"
                .into(),
        );
    }
    // Hints start with the recognised pattern (`row-sum`, `softmax`, ...).
    let reduces = k.operator.as_deref().is_some_and(|o| {
        ["`row-", "`softmax", "`layer-norm`", "`rms-norm`"]
            .iter()
            .any(|p| o.starts_with(p))
    });
    if reduces || has("atomic") {
        todos.push(
            "outputs are sliced like the inputs here; a reduction writes one value (or one per \
             core): size its GlobalTensor and queue for that"
                .into(),
        );
    }
    if buffers.is_empty() {
        todos.push("the kernel has no pointer parameters: decide what it reads and writes".into());
    }
    todos
}
