"""cuport's evidence reference (issue 27): computes what a kernel rule's
aclnn operator calls compute, with ONNX Runtime, an implementation installed
from PyPI and written by other people. cuport writes a manifest and the input
tensors; this script writes the reference outputs and names its reference.

Two runs, as the regression harness has two: the operators in float32 (the
reference leg, `<name>.ref.bin`) and the same graph in float64 (the oracle,
`<name>.oracle.bin`) where ONNX Runtime has double kernels; it has no double
LayerNormalization, so the oracle of a layer norm is ONNX's own
decomposition of it (ReduceMean, Sub, Mul, Sqrt, Reciprocal) in double.

Usage: reference.py DIR...   (each DIR/manifest.json in, DIR/reference.json
out; one process for all cases, since importing onnxruntime takes a while)

Exit status 3 means a package is missing (the message names it); 4 means the
manifest asks for an operator this script has no ONNX form for.
"""
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
                "i64": TensorProto.INT64}[dtype]

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
    fill = helper.make_tensor(f"{ref}__fill", kind, [1], [int(number) if kind == TensorProto.INT32 else number])
    return [g.ints(f"{ref}__shape", spec["shape"]),
            helper.make_node("ConstantOfShape", [f"{ref}__shape"], [ref], value=fill)]


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


def adamw(call, g):
    """aclnnApplyAdamWV2: no reference. ONNX Runtime's CPU build has no
    optimizer operator, and an AdamW written here out of ONNX arithmetic
    would be this repository's own implementation, not an independent one:
    the evidence for AdamW rules is "not run" until a registry package
    that computes AdamW is part of the evidence environment."""
    print(
        "no independent reference for aclnnApplyAdamWV2: ONNX Runtime's CPU build has no AdamW operator",
        file=sys.stderr,
    )
    sys.exit(4)


# aclnn operator -> the ONNX nodes that compute it (semantics from each
# operator's header comment, docs/kernel-rules.md).
OPERATORS = {
    "aclnnAdd": binary("Add", with_alpha=True),
    "aclnnSub": binary("Sub", with_alpha=True),
    "aclnnMul": binary("Mul"),
    "aclnnDiv": binary("Div"),
    "aclnnMuls": scalar_mul,
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
    "aclnnApplyAdamWV2": adamw,
}


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


def run_graph(manifest, directory, double):
    """The rule's calls as one ONNX graph, run in float32 or float64."""
    g = Graph(manifest, double)
    nodes = []
    for call in manifest["calls"]:
        build = OPERATORS.get(call["operator"])
        if build is None:
            print(f"no ONNX form for {call['operator']} in reference.py", file=sys.stderr)
            sys.exit(4)
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
    for n, s in inputs.items():
        value = load(directory, s)
        feeds[n] = value.astype(np.float64) if double and s["dtype"] == "f32" else value
    return outputs, session.run([f"{n}__result" for n in outputs], feeds)


def main(directory):
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    outputs, results = run_graph(manifest, directory, double=False)
    written = {}
    for name, value in zip(outputs, results):
        path = f"{name}.ref.bin"
        np.ascontiguousarray(value, dtype=np.float32).tofile(os.path.join(directory, path))
        written[name] = {"f32": path}
    try:
        _, oracle = run_graph(manifest, directory, double=True)
        for name, value in zip(outputs, oracle):
            path = f"{name}.oracle.bin"
            np.ascontiguousarray(value, dtype=np.float64).tofile(os.path.join(directory, path))
            written[name]["f64"] = path
    except Exception:  # noqa: BLE001 - any ORT refusal of the double graph
        pass  # no oracle: cuport applies the (rtol, atol) policy instead
    report = {"reference": f"onnxruntime {ort.__version__} (CPUExecutionProvider, opset {OPSET})",
              "outputs": written}
    with open(os.path.join(directory, "reference.json"), "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    for case_dir in sys.argv[1:]:
        main(case_dir)
