"""A hand-written switch-agent teacher for tests: a two-layer Q-network in ONNX that prefers
shallow ECN templates for deep queues and heavy marking, deep templates for an idle link."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rlcc.switch_policy import embed_switch_spec
from rlcc.switch_spec import SwitchAgentSpec, paper_templates


def default_spec(**over) -> SwitchAgentSpec:
    return SwitchAgentSpec(actions=paper_templates(), **over)


def rule_qnet(path: Path, spec: SwitchAgentSpec | None = None, out_width: int | None = None) -> Path:
    """Q_a(x) = relu(x W1) W2 + b: hidden units read the newest interval's queue, utilization and
    mark rate; template a's value trades its Kmin (deep = throughput) against the queue."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    spec = spec or default_spec()
    W, F, K = spec.input_width, spec.n_features, spec.n_actions
    new = (spec.history - 1) * F
    w1 = np.zeros((W, 3), np.float32)
    w1[new + spec.features.index("qlen"), 0] = 1.0
    w1[new + spec.features.index("tx_util"), 1] = 1.0
    w1[new + spec.features.index("mark_util"), 2] = 1.0
    depth = np.log2(np.array([a.kmin_bytes for a in spec.actions], np.float64) / 5000.0)
    depth = (depth - depth.mean()) / max(depth.std(), 1e-9)
    w2 = np.stack([-8.0 * depth, 2.0 * depth, -4.0 * depth]).astype(np.float32)  # (3, K)
    b = (-0.05 * depth ** 2).astype(np.float32)
    out_k = K if out_width is None else out_width
    if out_k != K:
        w2 = np.resize(w2, (3, out_k)).astype(np.float32)
        b = np.resize(b, out_k).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h0"]), helper.make_node("Relu", ["h0"], ["h"]),
         helper.make_node("Gemm", ["h", "w2", "b"], ["q"])],
        "rule_qnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", W])],
        [helper.make_tensor_value_info("q", TensorProto.FLOAT, ["batch", out_k])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    embed_switch_spec(model, spec)
    onnx.save(model, str(path))
    return Path(path)
