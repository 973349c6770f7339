"""cuport's evidence reference (issue 27): computes what a kernel rule's
aclnn operator calls compute, with ONNX Runtime or JAX, implementations
installed from PyPI and written by other people. cuport writes a manifest and the input
tensors; this script writes the reference outputs and names its reference.

Two runs, as the regression harness has two: the operators in float32 (the
reference leg, `<name>.ref.bin`) and the same graph in float64 (the oracle,
`<name>.oracle.bin`) where ONNX Runtime has double kernels; it has no double
LayerNormalization, so the oracle of a layer norm is ONNX's own
decomposition of it (ReduceMean, Sub, Mul, Sqrt, Reciprocal) in double.

ONNX has no gradient operators, so a rule with a call that has no ONNX
form (aclnnGeluBackwardV2, aclnnSoftmaxBackward, aclnnEmbeddingDenseBackward,
aclnnLayerNormBackward, aclnnApplyAdamWV2) runs all its calls in JAX
instead, float32 for the reference and float64 (x64 enabled) for the
oracle. Gradients there are JAX's autodiff (jax.vjp) of JAX's own
functions, never a derivative formula written here; the AdamW step is
optax's. A rule whose calls all have ONNX forms stays on ONNX Runtime, so
its evidence does not change;
CUPORT_REFERENCE=jax sends every rule to JAX (a cross-check of the forms).

Usage: reference.py DIR...   (each DIR/manifest.json in, DIR/reference.json
out; one process for all cases, since importing onnxruntime takes a while)

Exit status 3 means a package is missing (the message names it); 4 means the
manifest asks for an operator this script has neither an ONNX nor a JAX
form for.
"""
import contextlib
import io
import json
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    import onnxruntime as ort
except ImportError as err:
    print(f"missing Python package: {err.name}; install it with "
          "`pip install onnxruntime onnx numpy`", file=sys.stderr)
    sys.exit(3)

OPSET = 20  # Gelu with `approximate` needs opset 20.
DTYPES = {"f32": (np.float32, TensorProto.FLOAT), "i32": (np.int32, TensorProto.INT32),
          "f64": (np.float64, TensorProto.DOUBLE), "i64": (np.int64, TensorProto.INT64)}


def arg(call, name, default=None):
    """A call's argument: a tensor name or a value."""
    return call["args"].get(name, default)


def tensor(call, name):
    bound = arg(call, name)
    return bound["tensor"] if bound and "tensor" in bound else None


def value(call, name, default=None):
    bound = arg(call, name)
    return bound["value"] if bound and "value" in bound else default


class Graph:
    """What a builder needs besides the call: the tensors' shapes and
    element types, and whether this is the double (oracle) run."""

    def __init__(self, manifest, double):
        self.tensors = manifest["tensors"]
        self.double = double
        self.real = TensorProto.DOUBLE if double else TensorProto.FLOAT

    def shape(self, name):
        return self.tensors[name]["shape"]

    def onnx_type(self, dtype):
        """ONNX's element type for a manifest dtype; float32 is the run's
        real type (float64 in the oracle run)."""
        if dtype == "f32":
            return self.real
        return {"f64": TensorProto.DOUBLE, "i32": TensorProto.INT32,
                "i64": TensorProto.INT64, "bool": TensorProto.BOOL}[dtype]

    def ints(self, name, values):
        const = helper.make_tensor(name, TensorProto.INT64, [len(values)], [int(v) for v in values])
        return helper.make_node("Constant", [], [name], value=const)

    def scalar(self, name, number, dtype=None):
        kind = self.real if dtype is None else dtype
        const = helper.make_tensor(name, kind, [], [int(number) if kind == TensorProto.INT32 else float(number)])
        return helper.make_node("Constant", [], [name], value=const)


def unary(onnx_op, inp, out, **attrs):
    def build(call, g):
        return [helper.make_node(onnx_op, [tensor(call, inp)], [tensor(call, out)], **attrs)]
    return build


def binary(onnx_op, with_alpha=False):
    def build(call, g):
        a, b, out = tensor(call, "self"), tensor(call, "other"), tensor(call, "out")
        alpha = float(value(call, "alpha", 1.0)) if with_alpha else 1.0
        if alpha == 1.0:
            return [helper.make_node(onnx_op, [a, b], [out])]
        scaled = f"{b}__alpha"
        return [g.scalar(f"{b}__a", alpha),
                helper.make_node("Mul", [b, f"{b}__a"], [scaled]),
                helper.make_node(onnx_op, [a, scaled], [out])]
    return build


def inplace_add(call, g):
    """aclnn_add.h, aclnnInplaceAdd: selfRef += alpha * other, other
    broadcast to selfRef's shape."""
    ref, other = tensor(call, "selfRef"), tensor(call, "other")
    alpha = float(value(call, "alpha", 1.0))
    nodes, addend = [], other
    if alpha != 1.0:
        addend = f"{other}__alpha"
        nodes += [g.scalar(f"{other}__a", alpha),
                  helper.make_node("Mul", [other, f"{other}__a"], [addend])]
    return nodes + [helper.make_node("Add", [ref, addend], [ref])]


def scalar_mul(call, g):
    x, out = tensor(call, "self"), tensor(call, "out")
    return [g.scalar(f"{x}__s", float(value(call, "other"))),
            helper.make_node("Mul", [x, f"{x}__s"], [out])]


def gelu(call, g, approximate=None):
    form = approximate if approximate is not None else ("tanh" if int(value(call, "approximate")) == 1 else "none")
    x = tensor(call, "x") or tensor(call, "self")
    y = tensor(call, "y") or tensor(call, "out")
    return [helper.make_node("Gelu", [x], [y], approximate=form)]


def silu(call, g):
    x, out = tensor(call, "self"), tensor(call, "out")
    return [helper.make_node("Sigmoid", [x], [f"{x}__sig"]),
            helper.make_node("Mul", [x, f"{x}__sig"], [out])]


def softmax(call, g):
    x, out = tensor(call, "self"), tensor(call, "out")
    return [helper.make_node("Softmax", [x], [out], axis=int(value(call, "dim")))]


def layer_norm(call, g):
    shape = value(call, "normalizedShape")
    ins = [tensor(call, "input"), tensor(call, "weightOptional"), tensor(call, "biasOptional")]
    outs = [tensor(call, "out"), tensor(call, "meanOutOptional") or "", tensor(call, "rstdOutOptional") or ""]
    eps = float(value(call, "eps"))
    if g.double:
        return layer_norm_decomposed(ins, outs, len(shape), eps)
    while outs and outs[-1] == "":
        outs.pop()
    return [helper.make_node("LayerNormalization", ins, outs, axis=-len(shape), epsilon=eps)]


def layer_norm_decomposed(ins, outs, dims, eps):
    """y = (x - mean) * rstd * w + b over the last `dims` axes, in double."""
    x, w, b = ins
    axes = helper.make_tensor("ln_axes", TensorProto.INT64, [dims], list(range(-dims, 0)))
    n = lambda op, i, o, **a: helper.make_node(op, i, [o], **a)
    mean, rstd = outs[1] or "ln_mean", outs[2] or "ln_rstd"
    return [
        helper.make_node("Constant", [], ["ln_axes"], value=axes),
        helper.make_node("Constant", [], ["ln_eps"], value_float=eps),
        n("Cast", ["ln_eps"], "ln_eps64", to=TensorProto.DOUBLE),
        n("ReduceMean", [x, "ln_axes"], "ln_mean_k"),
        n("Sub", [x, "ln_mean_k"], "ln_d"),
        n("Mul", ["ln_d", "ln_d"], "ln_d2"),
        n("ReduceMean", ["ln_d2", "ln_axes"], "ln_var"),
        n("Add", ["ln_var", "ln_eps64"], "ln_var_eps"),
        n("Sqrt", ["ln_var_eps"], "ln_std"),
        n("Reciprocal", ["ln_std"], "ln_rstd_k"),
        n("Mul", ["ln_d", "ln_rstd_k"], "ln_norm"),
        n("Mul", ["ln_norm", w], "ln_scaled"),
        n("Add", ["ln_scaled", b], outs[0]),
        n("Identity", ["ln_mean_k"], mean),
        n("Identity", ["ln_rstd_k"], rstd),
    ]


def fill_scalar(call, g):
    """aclnn_fill_scalar.h: fills selfRef with the scalar `value`."""
    ref = tensor(call, "selfRef")
    spec = g.tensors[ref]
    kind = g.onnx_type(spec["dtype"])
    number = float(value(call, "value"))
    whole = kind in (TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL)
    fill = helper.make_tensor(f"{ref}__fill", kind, [1], [int(number) if whole else number])
    return [g.ints(f"{ref}__shape", spec["shape"]),
            helper.make_node("ConstantOfShape", [f"{ref}__shape"], [ref], value=fill)]


def inplace_triu(call, g):
    """aclnn_triu.h, aclnnInplaceTriu: selfRef keeps its upper triangle
    from `diagonal` on and is zero (false) below it: ONNX Trilu, upper."""
    ref = tensor(call, "selfRef")
    k = helper.make_tensor(f"{ref}__k", TensorProto.INT64, [], [int(value(call, "diagonal"))])
    return [helper.make_node("Constant", [], [f"{ref}__k"], value=k),
            helper.make_node("Trilu", [ref, f"{ref}__k"], [ref], upper=1)]


def scaled_masked_softmax(call, g):
    """aclnn_scaled_masked_softmax.h: softmax over the last axis of
    scale * x with -10000 where mask is true, as cann/ops-nn's own system
    test of the operator computes it (masked_fill(mask, -10000))."""
    x, mask, y = tensor(call, "x"), tensor(call, "mask"), tensor(call, "y")
    return [g.scalar(f"{y}__scale", float(value(call, "scale"))),
            g.scalar(f"{y}__fill", -10000.0),
            helper.make_node("Mul", [x, f"{y}__scale"], [f"{y}__scaled"]),
            helper.make_node("Where", [mask, f"{y}__fill", f"{y}__scaled"], [f"{y}__masked"]),
            helper.make_node("Softmax", [f"{y}__masked"], [y], axis=-1)]


def scaled_masked_softmax_backward(call, g):
    """aclnn_scaled_masked_softmax_backward.h: scale * (dy * y - sum(dy *
    y over the last axis) * y), 0 where mask is true, as cann/ops-nn's own
    system test of the operator computes it."""
    dy, y, mask, out = (tensor(call, n) for n in ("gradOutput", "y", "mask", "out"))
    n = lambda op, i, o, **a: helper.make_node(op, i, [f"{out}__{o}"], **a)
    return [g.ints(f"{out}__axes", [-1]),
            g.scalar(f"{out}__scale", float(value(call, "scale"))),
            g.scalar(f"{out}__zero", 0.0),
            n("Mul", [dy, y], "dyy"),
            n("ReduceSum", [f"{out}__dyy", f"{out}__axes"], "sum", keepdims=1),
            n("Mul", [f"{out}__sum", y], "sumy"),
            n("Sub", [f"{out}__dyy", f"{out}__sumy"], "diff"),
            n("Mul", [f"{out}__diff", f"{out}__scale"], "scaled"),
            helper.make_node("Where", [mask, f"{out}__zero", f"{out}__scaled"], [out])]


def one_hot(call, g):
    """aclnn_one_hot.h (and its doc): out[..., j] = onValue[0] where
    self == j, else offValue[0], for j < numClasses, inserted at axis."""
    out = tensor(call, "out")
    on, off = tensor(call, "onValue"), tensor(call, "offValue")
    # ONNX Runtime's CPU OneHot takes int64 indices and float values; the
    # result is cast to the run's type (float64 in the oracle run).
    n = lambda op, i, o, **a: helper.make_node(op, i, [f"{out}__{o}"], **a)
    return [g.ints(f"{out}__depth", [int(value(call, "numClasses"))]),
            n("Cast", [tensor(call, "self")], "indices", to=TensorProto.INT64),
            n("Concat", [off, on], "values", axis=0),
            n("Cast", [f"{out}__values"], "values32", to=TensorProto.FLOAT),
            n("OneHot", [f"{out}__indices", f"{out}__depth", f"{out}__values32"], "hot",
              axis=int(value(call, "axis"))),
            helper.make_node("Cast", [f"{out}__hot"], [out], to=g.real)]


def softmax_cross_entropy(call, g):
    """aclnn_softmax_cross_entropy_with_logits.h: loss = -sum(labels *
    log(softmax(features))) over the last axis, backprop = softmax(features)
    - labels."""
    x, labels = tensor(call, "features"), tensor(call, "labels")
    loss, grad = tensor(call, "loss"), tensor(call, "backprop")
    n = lambda op, i, o, **a: helper.make_node(op, i, [f"{loss}__{o}"], **a)
    nodes = [g.ints(f"{loss}__axes", [-1]),
             n("LogSoftmax", [x], "logp", axis=-1),
             n("Mul", [labels, f"{loss}__logp"], "weighted"),
             n("ReduceSum", [f"{loss}__weighted", f"{loss}__axes"], "sum", keepdims=0),
             helper.make_node("Neg", [f"{loss}__sum"], [loss])]
    if grad:
        nodes += [n("Softmax", [x], "p", axis=-1),
                  helper.make_node("Sub", [f"{loss}__p", labels], [grad])]
    return nodes


def inplace_copy(call, g):
    """aclnn_copy.h: copies src's elements into selfRef (broadcast to its
    shape, as torch's copy_)."""
    ref, src = tensor(call, "selfRef"), tensor(call, "src")
    return [g.ints(f"{ref}__shape", g.shape(ref)),
            helper.make_node("Expand", [src, f"{ref}__shape"], [ref])]


def cast(call, g):
    """aclnn_cast.h: self converted to the element type `dtype`."""
    x, out = tensor(call, "self"), tensor(call, "out")
    return [helper.make_node("Cast", [x], [out], to=g.onnx_type(arg(call, "dtype")["dtype"]))]


def reduce(onnx_op, dims_arg, keep_arg):
    """aclnnReduceSum / aclnnMean / aclnnAmax: the sum, mean or maximum
    over the axes `dims_arg`, keeping them when `keep_arg` is true."""
    def build(call, g):
        x, out = tensor(call, "self"), tensor(call, "out")
        axes = value(call, dims_arg)
        axes = axes if isinstance(axes, list) else [axes]
        return [g.ints(f"{out}__axes", axes),
                helper.make_node(onnx_op, [x, f"{out}__axes"], [out], keepdims=int(bool(value(call, keep_arg))))]
    return build


def max_dim(call, g):
    """aclnn_max_dim.h: the maximum over `dim` (out) and its index
    (indices; the first one on ties, as ONNX's ArgMax)."""
    x, out, indices = tensor(call, "self"), tensor(call, "out"), tensor(call, "indices")
    dim, keep = int(value(call, "dim")), int(bool(value(call, "keepdim")))
    nodes = [g.ints(f"{out}__axes", [dim]),
             helper.make_node("ReduceMax", [x, f"{out}__axes"], [out], keepdims=keep)]
    if indices:
        kind = g.onnx_type(g.tensors[indices]["dtype"])
        nodes += [helper.make_node("ArgMax", [x], [f"{indices}__i64"], axis=dim, keepdims=keep),
                  helper.make_node("Cast", [f"{indices}__i64"], [indices], to=kind)]
    return nodes


def permute(call, g):
    """aclnn_permute.h: self's axes reordered as `dims` (out's axis i is
    self's axis dims[i])."""
    x, out = tensor(call, "self"), tensor(call, "out")
    rank = len(g.shape(x))
    dims = [int(d) % rank for d in value(call, "dims")]
    return [helper.make_node("Transpose", [x], [out], perm=dims)]


def embedding(call, g):
    """aclnn_embedding.h: rows of `weight` selected by `indices` (dim 0)."""
    return [helper.make_node("Gather", [tensor(call, "weight"), tensor(call, "indices")],
                             [tensor(call, "out")], axis=0)]


def matmul(call, g):
    """aclnnMatmul / aclnnMm: the matrix product self @ mat2."""
    return [helper.make_node("MatMul", [tensor(call, "self"), tensor(call, "mat2")], [tensor(call, "out")])]


# aclnn operator -> the ONNX nodes that compute it (semantics from each
# operator's header comment, docs/kernel-rules.md).
OPERATORS = {
    "aclnnAdd": binary("Add", with_alpha=True),
    "aclnnSub": binary("Sub", with_alpha=True),
    "aclnnMul": binary("Mul"),
    "aclnnDiv": binary("Div"),
    "aclnnMuls": scalar_mul,
    "aclnnInplaceAdd": inplace_add,
    "aclnnInplaceTriu": inplace_triu,
    "aclnnScaledMaskedSoftmax": scaled_masked_softmax,
    "aclnnOneHot": one_hot,
    "aclnnSoftmaxCrossEntropyWithLogits": softmax_cross_entropy,
    "aclnnScaledMaskedSoftmaxBackward": scaled_masked_softmax_backward,
    "aclnnRelu": unary("Relu", "self", "out"),
    "aclnnSigmoid": unary("Sigmoid", "self", "out"),
    "aclnnTanh": unary("Tanh", "self", "out"),
    "aclnnExp": unary("Exp", "self", "out"),
    "aclnnSilu": silu,
    "aclnnGelu": lambda call, g: gelu(call, g, "none"),
    "aclnnGeluV2": gelu,
    "aclnnSoftmax": softmax,
    "aclnnLayerNorm": layer_norm,
    "aclnnInplaceFillScalar": fill_scalar,
    "aclnnInplaceCopy": inplace_copy,
    "aclnnCast": cast,
    "aclnnReduceSum": reduce("ReduceSum", "dims", "keepDims"),
    "aclnnMean": reduce("ReduceMean", "dim", "keepDim"),
    "aclnnAmax": reduce("ReduceMax", "dim", "keepDim"),
    "aclnnMaxDim": max_dim,
    "aclnnPermute": permute,
    "aclnnEmbedding": embedding,
    "aclnnMatmul": matmul,
    "aclnnMm": matmul,
}


JAX_PIN = "jax==0.10.2 jaxlib==0.10.2"


def jax_modules():
    """jax and jax.numpy, imported only for a rule that needs them (the
    import takes seconds), with float64 enabled for the oracle run."""
    # The CPU is the only platform here; without this, jax probes for
    # accelerators and warns on stderr, whose last line cuport reports.
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as err:
        print(f"missing Python package: {err.name}; install it with "
              f"`pip install {JAX_PIN}`", file=sys.stderr)
        sys.exit(3)
    jax.config.update("jax_enable_x64", True)
    return jax, jnp


class Env:
    """What a JAX form reads: the arrays computed so far and the shapes,
    by tensor name, the run's real type and the jax modules."""

    def __init__(self, values, shapes, real, jax, jnp):
        self.values, self.shapes, self.real, self.jax, self.jnp = values, shapes, real, jax, jnp

    def get(self, call, name):
        bound = tensor(call, name)
        return None if bound is None else self.values[bound]


def jax_binary(fn, with_alpha=False):
    def form(call, e):
        alpha = float(value(call, "alpha", 1.0)) if with_alpha else 1.0
        other = e.get(call, "other")
        return {tensor(call, "out"): fn(e.get(call, "self"), other * alpha if alpha != 1.0 else other)}
    return form


def jax_unary(pick):
    def form(call, e):
        return {tensor(call, "out"): pick(e)(e.get(call, "self"))}
    return form


def gelu_approximate(call, default):
    """aclnnGeluV2's int (1: tanh) or aclnnGeluBackwardV2's string."""
    raw = value(call, "approximate", default)
    if isinstance(raw, str):
        if raw not in ("none", "tanh"):
            print(f"aclnn gelu approximate must be 'none' or 'tanh', got {raw!r}", file=sys.stderr)
            sys.exit(4)
        return raw == "tanh"
    return int(raw) == 1


def jax_gelu(call, e, approximate=None):
    tanh = gelu_approximate(call, 0) if approximate is None else approximate
    x = e.get(call, "x") if tensor(call, "x") else e.get(call, "self")
    return {tensor(call, "y") or tensor(call, "out"): e.jax.nn.gelu(x, approximate=tanh)}


def jax_layer_norm_fn(e, dims, eps):
    """A layer norm composed of jax.numpy's mean and var and jax.lax.rsqrt
    over the last `dims` axes; also returns mean and rstd."""
    jnp = e.jnp
    axes = tuple(range(-dims, 0))

    def norm(x, w, b):
        mean = jnp.mean(x, axis=axes, keepdims=True)
        rstd = e.jax.lax.rsqrt(jnp.var(x, axis=axes, keepdims=True) + eps)
        y = (x - mean) * rstd
        y = y if w is None else y * w
        return (y if b is None else y + b), mean, rstd
    return norm


def jax_layer_norm(call, e):
    norm = jax_layer_norm_fn(e, len(value(call, "normalizedShape")), float(value(call, "eps")))
    y, mean, rstd = norm(e.get(call, "input"), e.get(call, "weightOptional"), e.get(call, "biasOptional"))
    outs = {tensor(call, "out"): y}
    for name, result in (("meanOutOptional", mean), ("rstdOutOptional", rstd)):
        if tensor(call, name):
            outs[tensor(call, name)] = result
    return outs


def jax_reduce(kind, dims_arg, keep_arg):
    def form(call, e):
        axes = value(call, dims_arg)
        axes = tuple(int(a) for a in (axes if isinstance(axes, list) else [axes]))
        fn = {"sum": e.jnp.sum, "mean": e.jnp.mean, "max": e.jnp.max}[kind]
        return {tensor(call, "out"): fn(e.get(call, "self"), axis=axes, keepdims=bool(value(call, keep_arg)))}
    return form


def jax_max_dim(call, e):
    x, dim, keep = e.get(call, "self"), int(value(call, "dim")), bool(value(call, "keepdim"))
    outs = {tensor(call, "out"): e.jnp.max(x, axis=dim, keepdims=keep)}
    if tensor(call, "indices"):
        # jnp.argmax gives the first index on ties, as ONNX's ArgMax.
        outs[tensor(call, "indices")] = e.jnp.argmax(x, axis=dim, keepdims=keep)
    return outs


def jax_permute(call, e):
    x = e.get(call, "self")
    return {tensor(call, "out"): e.jnp.transpose(x, [int(d) % x.ndim for d in value(call, "dims")])}


def jax_fill(call, e):
    ref = tensor(call, "selfRef")
    return {ref: e.jnp.full(e.shapes[ref], float(value(call, "value")))}


def jax_copy(call, e):
    ref = tensor(call, "selfRef")
    return {ref: e.jnp.broadcast_to(e.get(call, "src"), e.shapes[ref])}


def jax_cast(call, e):
    kind = arg(call, "dtype")["dtype"]
    dtype = e.real if kind == "f32" else DTYPES[kind][0]
    return {tensor(call, "out"): e.get(call, "self").astype(dtype)}


def jax_gelu_backward(call, e):
    """aclnn_gelu_backward_v2.h: gradInput = gradOutput * gelu'(self), by
    jax.vjp of jax.nn.gelu with the same approximation."""
    tanh = gelu_approximate(call, "none")
    _, pullback = e.jax.vjp(lambda x: e.jax.nn.gelu(x, approximate=tanh), e.get(call, "self"))
    (grad,) = pullback(e.get(call, "gradOutput"))
    return {tensor(call, "gradInput"): grad}


def jax_softmax_backward(call, e):
    """aclnn_softmax_backward.h: the gradient of softmax along `dim` given
    its output. softmax(log(output)) is output again (each row sums to 1,
    the operator's precondition, which the generated inputs meet), so the
    gradient is jax.vjp of jax.nn.softmax at log(output)."""
    dim = int(value(call, "dim"))
    at = e.jnp.log(e.get(call, "output"))
    _, pullback = e.jax.vjp(lambda x: e.jax.nn.softmax(x, axis=dim), at)
    (grad,) = pullback(e.get(call, "gradOutput"))
    return {tensor(call, "out"): grad}


def jax_embedding_backward(call, e):
    """aclnn_embedding_dense_backward.h: the gradient of an embedding
    lookup for its table of `numWeights` rows, by jax.vjp of
    `weight[indices]`. Rows looked up at `paddingIdx` pass no gradient and
    scaleGradByFreq divides each lookup's gradient by its row's count (the
    operator's options, applied to the incoming gradient, as torch's
    embedding_backward defines them)."""
    jnp = e.jnp
    grad, indices = e.get(call, "grad"), e.get(call, "indices")
    rows = int(value(call, "numWeights"))
    flat = indices.reshape(-1)
    dout = grad.reshape(flat.shape[0], -1)
    dout = jnp.where((flat == int(value(call, "paddingIdx")))[:, None], 0, dout)
    if bool(value(call, "scaleGradByFreq", 0)):
        dout = dout / jnp.bincount(flat, length=rows)[flat][:, None]
    table = jnp.zeros((rows, dout.shape[1]), dtype=e.real)
    _, pullback = e.jax.vjp(lambda w: w[flat], table)
    (dtable,) = pullback(dout)
    return {tensor(call, "out"): dtable}


def jax_layer_norm_backward(call, e):
    """aclnn_layer_norm_backward.h: the gradients of a layer norm over the
    last len(normalizedShape) axes, by jax.vjp of a layer norm composed of
    jax.numpy's mean and var. The operator reads the forward's mean and
    rstd instead of recomputing them; the evidence draws them as `input`'s
    own (cases.rs, RowStatistic), so the layer norm at `input` has that
    mean, and the eps that reproduces the given rstd (rstd^-2 - var, per
    row, a constant) makes its rstd the given one."""
    jnp = e.jnp
    dims = len(value(call, "normalizedShape"))
    axes = tuple(range(-dims, 0))
    x, rstd = e.get(call, "input"), e.get(call, "rstd")
    eps = rstd.astype(e.real) ** -2 - jnp.var(x, axis=axes, keepdims=True)
    w, b = e.get(call, "weightOptional"), e.get(call, "biasOptional")
    w = jnp.ones(x.shape[-dims:], dtype=e.real) if w is None else w
    b = jnp.zeros(x.shape[-dims:], dtype=e.real) if b is None else b

    def norm(x, w, b):
        centred = x - jnp.mean(x, axis=axes, keepdims=True)
        return centred * e.jax.lax.rsqrt(jnp.var(x, axis=axes, keepdims=True) + eps) * w + b
    _, pullback = e.jax.vjp(norm, x, w, b)
    grads = pullback(e.get(call, "gradOut"))
    mask = value(call, "outputMask", [1, 1, 1])
    names = ("gradInputOut", "gradWeightOut", "gradBiasOut")
    return {tensor(call, n): g for n, g, on in zip(names, grads, mask) if on and tensor(call, n)}


OPTAX_PIN = "optax==0.2.8"


def jax_apply_adamw(call, e):
    """aclnn_apply_adam_w_v2.h: one AdamW step, by optax.adamw (DeepMind's
    optimizer library on JAX). The operator's kernel (op_kernel/
    apply_adam_w_v2_fp.h and arch35/apply_adam_w_v2_dag.h at v8.5.0, v9.0.0
    and v9.1.0) corrects the bias at `step + 1`: `step` counts the steps
    done before this one, as optax's `count` does; its doc's formula says
    `t`. maximize negates the gradient first (the kernel's first step)."""
    try:
        import optax
    except ImportError as err:
        print(f"missing Python package: {err.name}; install it with "
              f"`pip install {OPTAX_PIN}`", file=sys.stderr)
        sys.exit(3)
    if bool(value(call, "amsgrad", False)):
        print("aclnnApplyAdamWV2 with amsgrad = true has no JAX form in reference.py", file=sys.stderr)
        sys.exit(4)
    var, grad = e.get(call, "varRef"), e.get(call, "grad")
    if bool(value(call, "maximize", False)):
        grad = -grad
    # A float count, so that a step that is no whole number is what the
    # kernel raises the betas to, plus one.
    step = e.get(call, "step").reshape(()).astype(e.real)
    # The operator's lr, betas, weightDecay and eps are C floats: the
    # oracle too takes them rounded to float32 (1 - 0.999f is not 0.001).
    number = lambda name: float(np.float32(value(call, name)))
    adamw = optax.adamw(learning_rate=number("lr"), b1=number("beta1"), b2=number("beta2"),
                        eps=number("eps"), weight_decay=number("weightDecay"))
    adam, *rest = adamw.init(var)
    state = (adam._replace(count=step, mu=e.get(call, "mRef"), nu=e.get(call, "vRef")), *rest)
    updates, (after, *_) = adamw.update(grad, state, var)
    return {tensor(call, "varRef"): optax.apply_updates(var, updates),
            tensor(call, "mRef"): after.mu, tensor(call, "vRef"): after.nu}


# aclnn operator -> a function of (call, Env) returning the arrays the call
# writes by tensor name.
JAX_OPERATORS = {
    "aclnnAdd": jax_binary(lambda a, b: a + b, with_alpha=True),
    "aclnnSub": jax_binary(lambda a, b: a - b, with_alpha=True),
    "aclnnMul": jax_binary(lambda a, b: a * b),
    "aclnnDiv": jax_binary(lambda a, b: a / b),
    "aclnnMuls": lambda call, e: {tensor(call, "out"): e.get(call, "self") * float(value(call, "other"))},
    "aclnnRelu": jax_unary(lambda e: e.jax.nn.relu),
    "aclnnSigmoid": jax_unary(lambda e: e.jax.nn.sigmoid),
    "aclnnTanh": jax_unary(lambda e: e.jnp.tanh),
    "aclnnExp": jax_unary(lambda e: e.jnp.exp),
    "aclnnSilu": jax_unary(lambda e: e.jax.nn.silu),
    "aclnnGelu": lambda call, e: jax_gelu(call, e, False),
    "aclnnGeluV2": jax_gelu,
    "aclnnSoftmax": lambda call, e: {tensor(call, "out"): e.jax.nn.softmax(e.get(call, "self"), axis=int(value(call, "dim")))},
    "aclnnLayerNorm": jax_layer_norm,
    "aclnnInplaceFillScalar": jax_fill,
    "aclnnInplaceCopy": jax_copy,
    "aclnnCast": jax_cast,
    "aclnnReduceSum": jax_reduce("sum", "dims", "keepDims"),
    "aclnnMean": jax_reduce("mean", "dim", "keepDim"),
    "aclnnAmax": jax_reduce("max", "dim", "keepDim"),
    "aclnnMaxDim": jax_max_dim,
    "aclnnPermute": jax_permute,
    "aclnnEmbedding": lambda call, e: {tensor(call, "out"): e.get(call, "weight")[e.get(call, "indices")]},
    "aclnnMatmul": lambda call, e: {tensor(call, "out"): e.jnp.matmul(e.get(call, "self"), e.get(call, "mat2"))},
    "aclnnMm": lambda call, e: {tensor(call, "out"): e.jnp.matmul(e.get(call, "self"), e.get(call, "mat2"))},
    "aclnnGeluBackwardV2": jax_gelu_backward,
    "aclnnSoftmaxBackward": jax_softmax_backward,
    "aclnnEmbeddingDenseBackward": jax_embedding_backward,
    "aclnnApplyAdamWV2": jax_apply_adamw,
    "aclnnLayerNormBackward": jax_layer_norm_backward,
    # selfRef += alpha * other, other broadcast to selfRef's shape.
    "aclnnInplaceAdd": lambda call, e: {tensor(call, "selfRef"): e.get(call, "selfRef") + float(
        value(call, "alpha", 1.0)) * e.get(call, "other")},
    "aclnnInplaceTriu": lambda call, e: {tensor(call, "selfRef"): e.jnp.triu(
        e.get(call, "selfRef"), k=int(value(call, "diagonal")))},
}


def run_jax(manifest, directory, double):
    """The rule's calls one after another in JAX, in float32 or float64;
    an in-place call simply replaces the array its tensor names."""
    jax, jnp = jax_modules()
    tensors = graph_tensors(manifest)
    real = np.float64 if double else np.float32
    values = {}
    for name, spec in tensors.items():
        if spec["role"] != "output":
            data = feed(directory, manifest, spec)
            values[name] = jnp.asarray(data.astype(real) if spec["dtype"] == "f32" else data)
    shapes = {n: s["shape"] for n, s in tensors.items()}
    e = Env(values, shapes, real, jax, jnp)
    written = set()
    for call in manifest["calls"]:
        op = call["operator"]
        form = JAX_OPERATORS.get(op)
        if form is None:
            print(f"no ONNX or JAX form for {op} in reference.py", file=sys.stderr)
            sys.exit(4)
        for name, result in form(call, e).items():
            kind = tensors[name]["dtype"]
            dtype = real if kind == "f32" else DTYPES[kind][0]
            # Reduced axes kept or not, the manifest's shape is the
            # tensor's: the same elements in the same order.
            values[name] = jnp.reshape(result, shapes[name]).astype(dtype)
            written.add(name)
    outputs = [n for n, s in tensors.items()
               if s["role"] != "input" and (n in written or s["role"] == "inout")]
    return outputs, [np.asarray(values[n]) for n in outputs]


def load(directory, spec):
    dtype = DTYPES[spec["dtype"]][0]
    data = np.fromfile(os.path.join(directory, spec["file"]), dtype=dtype)
    return data.reshape(spec["shape"])


def single_assignment(nodes, tensors):
    """Calls that write a tensor more than once (an in-place update, an
    output a later call reads and rewrites) as ONNX's single assignment:
    each write of a kernel tensor gets a new name and later reads use it.
    Returns the nodes and each written tensor's final name."""
    current = {name: name for name, spec in tensors.items() if spec["role"] != "output"}
    for i, node in enumerate(nodes):
        node.input[:] = [current.get(x, x) for x in node.input]
        for j, out in enumerate(node.output):
            if out not in tensors:
                continue
            name = f"{out}__v{i}" if out in current else out
            node.output[j] = name
            current[out] = name
    return nodes, current


def view_of(buffer, view):
    """A strided view (`[[kernel]]` tensor with strides/offset) of a
    parameter's flat buffer, in elements."""
    size = buffer.itemsize
    return np.lib.stride_tricks.as_strided(
        buffer[view["offset"]:], shape=view["shape"],
        strides=[s * size for s in view["strides"]])


def graph_tensors(manifest):
    """The graph's tensors: the kernel's plain tensor parameters and the
    views calls bind; a parameter seen through views is no graph tensor."""
    views = manifest.get("views", {})
    viewed = {v["of"] for v in views.values()}
    tensors = {n: s for n, s in manifest["tensors"].items() if n not in viewed}
    for name, v in views.items():
        of = manifest["tensors"][v["of"]]
        tensors[name] = {"role": v["role"], "shape": v["shape"], "dtype": of["dtype"], "view": v}
    return tensors


def feed(directory, manifest, spec):
    if "view" not in spec:
        return load(directory, spec)
    of = manifest["tensors"][spec["view"]["of"]]
    return np.ascontiguousarray(view_of(load(directory, of).reshape(-1), spec["view"]))


def scatter(directory, manifest, outputs, results, dtype):
    """Each output view's result written into its parameter's buffer, which
    starts as the kernel's did (NaN for an output, the inputs for inout);
    returns the buffers and the plain outputs by parameter name."""
    tensors = graph_tensors(manifest)
    by_param = {}
    for name, value in zip(outputs, results):
        spec = tensors[name]
        if "view" not in spec:
            by_param[name] = value
            continue
        param = spec["view"]["of"]
        if param not in by_param:
            of = manifest["tensors"][param]
            start = load(directory, of).reshape(-1).astype(dtype) if of["role"] == "inout" \
                else np.full(int(np.prod(of["shape"])), np.nan, dtype=dtype)
            by_param[param] = start
        view_of(by_param[param], spec["view"])[...] = value
    return by_param


def run_graph(manifest, directory, double):
    """The rule's calls as one ONNX graph, run in float32 or float64."""
    manifest = dict(manifest, tensors=graph_tensors(manifest), all_tensors=manifest["tensors"])
    g = Graph(manifest, double)
    nodes = []
    for call in manifest["calls"]:
        build = OPERATORS.get(call["operator"])
        if build is None:
            print(f"no ONNX form for {call['operator']} in reference.py", file=sys.stderr)
            sys.exit(4)  # main() sends such a rule to run_jax; never reached from it
        nodes.extend(build(call, g))
    tensors = manifest["tensors"]
    nodes, final = single_assignment(nodes, tensors)
    inputs = {name: spec for name, spec in tensors.items() if spec["role"] != "output"}
    outputs = [name for name, spec in tensors.items() if spec["role"] != "input" and name in final]
    for name in outputs:
        nodes.append(helper.make_node("Identity", [final[name]], [f"{name}__result"]))
    kind = lambda s: g.onnx_type(s["dtype"])
    graph = helper.make_graph(
        nodes, "cuport_evidence",
        [helper.make_tensor_value_info(n, kind(s), None) for n, s in inputs.items()],
        [helper.make_tensor_value_info(f"{n}__result", kind(tensors[n]), None) for n in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = min(model.ir_version, 10)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {}
    original = dict(manifest, tensors=manifest["all_tensors"])
    for n, s in inputs.items():
        value = feed(directory, original, s)
        feeds[n] = value.astype(np.float64) if double and s["dtype"] == "f32" else value
    return outputs, session.run([f"{n}__result" for n in outputs], feeds)


def main(directory):
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    # CUPORT_REFERENCE=jax runs every rule in JAX: a cross-check of the JAX
    # forms of the operators ONNX also has (kernel_evidence_cli.rs).
    forced_jax = os.environ.get("CUPORT_REFERENCE") == "jax"
    onnx_only = not forced_jax and all(call["operator"] in OPERATORS for call in manifest["calls"])
    run = run_graph if onnx_only else run_jax
    outputs, results = run(manifest, directory, double=False)
    written = {}
    for name, value in scatter(directory, manifest, outputs, results, np.float32).items():
        path = f"{name}.ref.bin"
        np.ascontiguousarray(value, dtype=np.float32).tofile(os.path.join(directory, path))
        written[name] = {"f32": path}
    try:
        _, oracle = run(manifest, directory, double=True)
        for name, value in scatter(directory, manifest, outputs, oracle, np.float64).items():
            path = f"{name}.oracle.bin"
            np.ascontiguousarray(value, dtype=np.float64).tofile(os.path.join(directory, path))
            written[name]["f64"] = path
    except Exception:  # noqa: BLE001 - any ORT refusal of the double graph
        pass  # no oracle: cuport applies the (rtol, atol) policy instead
    if onnx_only:
        name = f"onnxruntime {ort.__version__} (CPUExecutionProvider, opset {OPSET})"
    else:
        name = f"jax {jax_modules()[0].__version__} (CPU)"
        if any(call["operator"] == "aclnnApplyAdamWV2" for call in manifest["calls"]):
            import optax
            name += f" with optax {optax.__version__}"
    report = {"reference": name, "outputs": written}
    with open(os.path.join(directory, "reference.json"), "w") as f:
        json.dump(report, f)


def main_or_error(directory):
    """Runs one case; where it cannot, writes reference.error with the
    last line its failure printed (or the exception) and returns, so the
    other cases of the batch, often other kernels', still run."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stderr(printed):
            main(directory)
        sys.stderr.write(printed.getvalue())
    except (Exception, SystemExit) as err:  # noqa: BLE001 - reported per case
        lines = printed.getvalue().strip().splitlines()
        if isinstance(err, SystemExit) and lines:
            why = lines[-1]
        else:
            why = f"{type(err).__name__}: {err}"
        with open(os.path.join(directory, "reference.error"), "w") as f:
            f.write(why + "\n")


if __name__ == "__main__":
    for case_dir in sys.argv[1:]:
        main_or_error(case_dir)
