"""The switch agent's Q-network (ACC): a small ReLU MLP with biases, one linear Q-value per ECN template.

numpy forward/backward (manual backprop, no torch) and the ONNX export that
``rlcc.switch_policy.QNetPolicy`` loads: Gemm (+ Relu) layers in float32, input (batch,
spec.input_width), output (batch, spec.n_actions), the switch spec in the metadata.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from rlcc.switch_policy import embed_switch_spec
from rlcc.switch_spec import SwitchAgentSpec

ONNX_OPSET = 17
INPUT_NAME = "state"
OUTPUT_NAME = "q"


@dataclasses.dataclass
class QNet:
    """``Q = relu(...relu(x @ W0 + b0)...) @ WL + bL``; ``weights[i]`` has shape (in, out)."""

    weights: list[np.ndarray]
    biases: list[np.ndarray]

    @classmethod
    def init(cls, sizes: list[int], rng: np.random.Generator, out_scale: float = 0.1) -> "QNet":
        """He-initialized hidden layers, zero biases, a small output layer (Q ~ 0 at start)."""
        weights, biases = [], []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            std = np.sqrt(2.0 / n_in) * (out_scale if i == len(sizes) - 2 else 1.0)
            weights.append(rng.normal(0.0, std, size=(n_in, n_out)))
            biases.append(np.zeros(n_out))
        return cls(weights, biases)

    @property
    def params(self) -> list[np.ndarray]:
        """Weights and biases interleaved (W0, b0, W1, b1, ...): the order of ``backward``'s grads."""
        return [p for pair in zip(self.weights, self.biases) for p in pair]

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Q-values (B, n_actions) and the per-layer inputs the backward pass needs."""
        h = np.asarray(x, dtype=np.float64)
        cache = [h]
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            h = h @ w + b
            if i < last:
                h = np.maximum(h, 0.0)
                cache.append(h)
        return h, cache

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.forward(x)[0]

    def backward(self, cache: list[np.ndarray], dq: np.ndarray) -> list[np.ndarray]:
        """Gradients of ``sum(dq * Q)`` for every parameter, in ``params`` order."""
        g = np.asarray(dq, dtype=np.float64)
        grads: list[np.ndarray] = [np.empty(0)] * (2 * len(self.weights))
        for i in range(len(self.weights) - 1, -1, -1):
            h_in = cache[i]
            grads[2 * i] = h_in.T @ g
            grads[2 * i + 1] = g.sum(axis=0)
            if i:
                g = (g @ self.weights[i].T) * (h_in > 0)
        return grads

    def copy(self) -> "QNet":
        return QNet([w.copy() for w in self.weights], [b.copy() for b in self.biases])

    def load(self, other: "QNet") -> None:
        """Overwrite this network's parameters in place with ``other``'s (target-network sync)."""
        for dst, src in zip(self.params, other.params, strict=True):
            dst[...] = src


def qnet_to_onnx(net: QNet, spec: SwitchAgentSpec, path: str | Path, doc: str = "") -> None:
    """Write ``net`` as ONNX (Gemm/Relu, float32, batch-dynamic) with ``spec`` embedded.

    The same weights always give the same bytes (no timestamps or random names)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    if net.weights[0].shape[0] != spec.input_width or net.weights[-1].shape[1] != spec.n_actions:
        raise ValueError(
            f"Q-network shape {net.weights[0].shape[0]} -> {net.weights[-1].shape[1]} does not match the spec's "
            f"{spec.input_width} inputs and {spec.n_actions} actions"
        )
    nodes, inits = [], []
    current = INPUT_NAME
    last = len(net.weights) - 1
    for i, (w, b) in enumerate(zip(net.weights, net.biases)):
        inits.append(numpy_helper.from_array(np.asarray(w, dtype=np.float32), f"W{i}"))
        inits.append(numpy_helper.from_array(np.asarray(b, dtype=np.float32), f"b{i}"))
        out = OUTPUT_NAME if i == last else f"z{i}"
        nodes.append(helper.make_node("Gemm", [current, f"W{i}", f"b{i}"], [out]))
        if i < last:
            nodes.append(helper.make_node("Relu", [out], [f"h{i}"]))
            out = f"h{i}"
        current = out
    graph = helper.make_graph(
        nodes,
        "acc_qnet",
        [helper.make_tensor_value_info(INPUT_NAME, TensorProto.FLOAT, ["batch", spec.input_width])],
        [helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, ["batch", spec.n_actions])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)], producer_name="rlcc-train")
    model.ir_version = 8
    model.doc_string = doc
    embed_switch_spec(model, spec)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
