"""cuport's evidence reference (issue 27): computes what a kernel rule's
aclnn operator calls compute, with ONNX Runtime, an implementation installed
from PyPI and written by other people. cuport writes a manifest and the input
tensors; this script writes the reference outputs and names its reference.

Usage: reference.py DIR   (DIR/manifest.json in, DIR/reference.json out)

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


def layer_norm(call):
    shape = arg(call, "normalizedShape")["value"]
    ins = [arg(call, "input")["tensor"], arg(call, "weightOptional")["tensor"], arg(call, "biasOptional")["tensor"]]
    outs = [arg(call, "out")["tensor"]]
    for name in ("meanOutOptional", "rstdOutOptional"):
        bound = arg(call, name)
        outs.append(bound["tensor"] if bound else "")
    while outs and outs[-1] == "":
        outs.pop()
    return [helper.make_node("LayerNormalization", ins, outs, axis=-len(shape),
                             epsilon=float(arg(call, "eps")["value"]))]


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


def main(directory):
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    nodes = []
    for call in manifest["calls"]:
        build = OPERATORS.get(call["operator"])
        if build is None:
            print(f"no ONNX form for {call['operator']} in reference.py", file=sys.stderr)
            sys.exit(4)
        nodes.extend(build(call))
    inputs = {name: spec for name, spec in manifest["tensors"].items() if spec["role"] == "input"}
    outputs = [name for name, spec in manifest["tensors"].items() if spec["role"] != "input"]
    graph = helper.make_graph(
        nodes, "cuport_evidence",
        [helper.make_tensor_value_info(n, DTYPES[s["dtype"]][1], None) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = min(model.ir_version, 10)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    results = session.run(outputs, {n: load(directory, s) for n, s in inputs.items()})
    written = {}
    for name, value in zip(outputs, results):
        path = f"{name}.ref.bin"
        np.ascontiguousarray(value, dtype=np.float32).tofile(os.path.join(directory, path))
        written[name] = path
    report = {"reference": f"onnxruntime {ort.__version__} (CPUExecutionProvider, opset {OPSET})",
              "outputs": written}
    with open(os.path.join(directory, "reference.json"), "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv[1])
