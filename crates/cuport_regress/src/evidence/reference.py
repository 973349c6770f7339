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
DTYPES = {"f32": (np.float32, TensorProto.FLOAT), "i32": (np.int32, TensorProto.INT32)}


def arg(call, name, default=None):
    """A call's argument: a tensor name or a value."""
    return call["args"].get(name, default)


def unary(onnx_op, inp, out, **attrs):
    def build(call):
        return [helper.make_node(onnx_op, [arg(call, inp)["tensor"]], [arg(call, out)["tensor"]], **attrs)]
    return build


def binary(onnx_op, with_alpha=False):
    def build(call):
        a, b, out = arg(call, "self")["tensor"], arg(call, "other")["tensor"], arg(call, "out")["tensor"]
        alpha = arg(call, "alpha", {"value": 1.0})["value"] if with_alpha else 1.0
        if alpha == 1.0:
            return [helper.make_node(onnx_op, [a, b], [out])]
        scaled = f"{b}__alpha"
        return [helper.make_node("Constant", [], [f"{b}__a"], value_float=float(alpha)),
                helper.make_node("Mul", [b, f"{b}__a"], [scaled]),
                helper.make_node(onnx_op, [a, scaled], [out])]
    return build


def scalar_mul(call):
    x, out = arg(call, "self")["tensor"], arg(call, "out")["tensor"]
    value = float(arg(call, "other")["value"])
    return [helper.make_node("Constant", [], [f"{x}__s"], value_float=value),
            helper.make_node("Mul", [x, f"{x}__s"], [out])]


def gelu(call, approximate=None):
    form = approximate if approximate is not None else ("tanh" if int(arg(call, "approximate")["value"]) == 1 else "none")
    x = arg(call, "x", arg(call, "self"))["tensor"]
    y = arg(call, "y", arg(call, "out"))["tensor"]
    return [helper.make_node("Gelu", [x], [y], approximate=form)]


def silu(call):
    x, out = arg(call, "self")["tensor"], arg(call, "out")["tensor"]
    return [helper.make_node("Sigmoid", [x], [f"{x}__sig"]),
            helper.make_node("Mul", [x, f"{x}__sig"], [out])]


def softmax(call):
    x, out = arg(call, "self")["tensor"], arg(call, "out")["tensor"]
    return [helper.make_node("Softmax", [x], [out], axis=int(arg(call, "dim")["value"]))]


def layer_norm(call, double=False):
    shape = arg(call, "normalizedShape")["value"]
    ins = [arg(call, "input")["tensor"], arg(call, "weightOptional")["tensor"], arg(call, "biasOptional")["tensor"]]
    outs = [arg(call, "out")["tensor"]]
    for name in ("meanOutOptional", "rstdOutOptional"):
        bound = arg(call, name)
        outs.append(bound["tensor"] if bound else "")
    eps = float(arg(call, "eps")["value"])
    if double:
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
    "aclnnGelu": lambda call: gelu(call, "none"),
    "aclnnGeluV2": gelu,
    "aclnnSoftmax": softmax,
    "aclnnLayerNorm": layer_norm,
}


def load(directory, spec):
    dtype = DTYPES[spec["dtype"]][0]
    data = np.fromfile(os.path.join(directory, spec["file"]), dtype=dtype)
    return data.reshape(spec["shape"])


def run_graph(manifest, directory, double):
    """The rule's calls as one ONNX graph, run in float32 or float64."""
    nodes = []
    for call in manifest["calls"]:
        build = OPERATORS.get(call["operator"])
        if build is None:
            print(f"no ONNX form for {call['operator']} in reference.py", file=sys.stderr)
            sys.exit(4)
        nodes.extend(build(call, double=True) if double and build is layer_norm else build(call))
    inputs = {name: spec for name, spec in manifest["tensors"].items() if spec["role"] == "input"}
    outputs = [name for name, spec in manifest["tensors"].items() if spec["role"] != "input"]
    real = TensorProto.DOUBLE if double else TensorProto.FLOAT
    kind = lambda s: real if s["dtype"] == "f32" else DTYPES[s["dtype"]][1]
    graph = helper.make_graph(
        nodes, "cuport_evidence",
        [helper.make_tensor_value_info(n, kind(s), None) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, real, None) for n in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = min(model.ir_version, 10)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {}
    for n, s in inputs.items():
        value = load(directory, s)
        feeds[n] = value.astype(np.float64) if double and s["dtype"] == "f32" else value
    return outputs, session.run(outputs, feeds)


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
