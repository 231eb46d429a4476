"""Export a small MLP policy (numpy weights) to ONNX with the observation spec embedded."""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from rlcc.spec import METADATA_KEY, ObservationSpec

DEFAULT_OPSET = 17
_ACTIVATIONS = {"relu": "Relu", "tanh": "Tanh", "identity": None}


def mlp_to_onnx(
    weights: Sequence[np.ndarray],
    activations: Sequence[str],
    spec: ObservationSpec,
    path: str | os.PathLike,
    biases: Sequence[np.ndarray | None] | None = None,
    producer: str = "rlcc",
    doc: str = "",
) -> None:
    """Write ``y = act_L(... act_1(x @ W_1 + b_1) ...)`` as an ONNX model with batch-dynamic input.

    ``weights[i]`` has shape (in, out); the last layer must have one output.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    if len(weights) != len(activations):
        raise ValueError("one activation per layer")
    if weights[0].shape[0] != spec.input_width or weights[-1].shape[1] != 1:
        raise ValueError("layer shapes do not match the spec's input width and a single output")
    biases = list(biases) if biases is not None else [None] * len(weights)
    nodes, inits = [], []
    current = "obs"
    for i, (w, act) in enumerate(zip(weights, activations)):
        wname = f"W{i}"
        inits.append(numpy_helper.from_array(np.asarray(w, dtype=np.float32), wname))
        out = f"h{i}_lin"
        nodes.append(helper.make_node("MatMul", [current, wname], [out]))
        if biases[i] is not None:
            bname = f"b{i}"
            inits.append(numpy_helper.from_array(np.asarray(biases[i], dtype=np.float32), bname))
            nodes.append(helper.make_node("Add", [out, bname], [f"h{i}_bias"]))
            out = f"h{i}_bias"
        op = _ACTIVATIONS[act]
        if op is not None:
            nodes.append(helper.make_node(op, [out], [f"h{i}"]))
            out = f"h{i}"
        current = out
    nodes.append(helper.make_node("Identity", [current], ["action"]))
    graph = helper.make_graph(
        nodes,
        "rlcc_policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", spec.input_width])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, ["batch", 1])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", DEFAULT_OPSET)], producer_name=producer)
    model.ir_version = 8
    model.doc_string = doc
    entry = model.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, spec.to_json()
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
