"""Read a policy's float network out of its ONNX graph for the int8 backend.

Two shapes are understood: an MLP (``MatMul``/``Gemm`` layers, each optionally followed by a bias
``Add`` and a ``Relu``, the last one by ``Tanh`` or nothing) and a recurrent policy whose
observation passes through such layers into an LSTM cell (``z = x Wx + h Wh + b``, gates sliced in
the order i, f, g, o; ``c' = sig(f) c + sig(i) tanh(g)``, ``h' = sig(o) tanh(c')``) followed by
a head layer on ``h'`` (``rlcc.train.lstm``'s export). What is read is checked against
onnxruntime on random inputs, so a graph that merely looks alike is rejected (exit 3).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from rlcc.errors import BadInputError
from rlcc.policy import read_onnx
from rlcc.spec import ObservationSpec

SUPPORTED_OPS = ("MatMul", "Gemm", "Add", "Relu", "Tanh", "Sigmoid", "Slice", "Mul", "Identity")
CHECK_ATOL = 1e-4  # float re-implementation vs onnxruntime (float32 graph)


@dataclasses.dataclass(frozen=True)
class FloatLayer:
    w: np.ndarray  # (in, out) float64
    b: np.ndarray  # (out,)
    act: str  # "relu", "tanh" or "none"


@dataclasses.dataclass(frozen=True)
class FloatLstm:
    wx: np.ndarray  # (in, 4H)
    wh: np.ndarray  # (H, 4H)
    b: np.ndarray  # (4H,)
    h_index: int  # which spec state tensor is h (the other is c)


@dataclasses.dataclass(frozen=True)
class FloatNet:
    """Pre-layers (all but the head for an MLP), an optional LSTM cell, a 1-output head."""

    layers: tuple[FloatLayer, ...]
    lstm: FloatLstm | None
    head: FloatLayer

    @property
    def hidden(self) -> int:
        return 0 if self.lstm is None else self.lstm.wh.shape[0]

    def pre(self, x: np.ndarray) -> list[np.ndarray]:
        """Activations after each pre-layer (float64), for inputs (N, width)."""
        outs = []
        a = np.asarray(x, dtype=np.float64)
        for layer in self.layers:
            a = _act(a @ layer.w + layer.b, layer.act)
            outs.append(a)
        return outs

    def cell(self, x: np.ndarray, h: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(z, h', c') of the LSTM cell."""
        m = self.lstm
        H = self.hidden
        z = x @ m.wx + h @ m.wh + m.b
        sig = lambda v: 0.5 * (1.0 + np.tanh(0.5 * v))  # noqa: E731  (no overflow for large |v|)
        c2 = sig(z[:, H:2 * H]) * c + sig(z[:, :H]) * np.tanh(z[:, 2 * H:3 * H])
        return z, sig(z[:, 3 * H:]) * np.tanh(c2), c2

    def head_z(self, a: np.ndarray) -> np.ndarray:
        return (a @ self.head.w + self.head.b)[:, 0]

    def step(self, x: np.ndarray, h: np.ndarray | None = None, c: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Raw output (N,) and the new state of one decision."""
        a = self.pre(x)[-1] if self.layers else np.asarray(x, dtype=np.float64)
        if self.lstm is not None:
            _, h, c = self.cell(a, h, c)
            a = h
        return _act(self.head_z(a), self.head.act), h, c


def _act(v: np.ndarray, act: str) -> np.ndarray:
    return np.maximum(v, 0.0) if act == "relu" else np.tanh(v) if act == "tanh" else v


class _Graph:
    def __init__(self, model, path: Path) -> None:
        from onnx import numpy_helper

        self.path = path
        self.init = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in model.graph.initializer}
        self.consumers: dict[str, list[Any]] = {}
        for node in model.graph.node:
            if node.domain not in ("", "ai.onnx") or node.op_type not in SUPPORTED_OPS:
                raise BadInputError(f"{path}: operator {node.op_type} is not supported by --backend int8 "
                                    f"(supported: {', '.join(SUPPORTED_OPS)})")
            for t in node.input:
                self.consumers.setdefault(t, []).append(node)

    def only(self, tensor: str) -> Any | None:
        nodes = self.consumers.get(tensor, [])
        return nodes[0] if len(nodes) == 1 else None

    def skip_identity(self, tensor: str) -> str:
        node = self.only(tensor)
        while node is not None and node.op_type == "Identity":
            tensor = node.output[0]
            node = self.only(tensor)
        return tensor

    def weight(self, node) -> np.ndarray | None:
        """The (in, out) weight of a MatMul/Gemm whose second operand is an initializer."""
        if len(node.input) < 2 or node.input[1] not in self.init:
            return None
        w = self.init[node.input[1]]
        if node.op_type == "Gemm":
            attrs = {a.name: a for a in node.attribute}
            if "transA" in attrs and attrs["transA"].i:
                raise BadInputError(f"{self.path}: Gemm with transA is not supported by --backend int8")
            if any(k in attrs and abs(attrs[k].f - 1.0) > 0 for k in ("alpha", "beta")):
                raise BadInputError(f"{self.path}: Gemm with alpha or beta other than 1 is not supported by --backend int8")
            if "transB" in attrs and attrs["transB"].i:
                w = w.T
        return w if w.ndim == 2 else None

    def layer_at(self, tensor: str) -> tuple[FloatLayer, str] | None:
        """The dense layer consuming ``tensor`` (with its bias and activation) and its output tensor;
        None when ``tensor`` is not consumed by exactly one weight product followed by a bias or
        an activation or nothing (the LSTM's input product is followed by the recurrent sum)."""
        node = self.only(tensor)
        if node is None or node.op_type not in ("MatMul", "Gemm"):
            return None
        w = self.weight(node)
        if w is None:
            return None
        b = np.zeros(w.shape[1])
        if node.op_type == "Gemm" and len(node.input) > 2 and node.input[2]:
            b = b + np.broadcast_to(self.init[node.input[2]], b.shape)
        out = node.output[0]
        nxt = self.only(out)
        if nxt is not None and nxt.op_type == "Add":
            other = [t for t in nxt.input if t != out]
            if not other or other[0] not in self.init:
                return None  # a sum with another product: the LSTM's gates
            b = b + np.broadcast_to(self.init[other[0]].reshape(-1), b.shape)
            out = nxt.output[0]
            nxt = self.only(out)
        act = "none"
        if nxt is not None and nxt.op_type in ("Relu", "Tanh"):
            act = nxt.op_type.lower()
            out = nxt.output[0]
        return FloatLayer(w, b, act), self.skip_identity(out)


def read_network(model_path: str | Path, spec: ObservationSpec, policy: Any) -> FloatNet:
    """The float network of ``model_path`` (window MLP or recurrent; ``policy``: the loaded
    ``OnnxPolicy``/``RecurrentPolicy``, the oracle the reading is checked against)."""
    path = Path(model_path)
    model = read_onnx(path)
    g = _Graph(model, path)
    state_inputs = [t.input for t in spec.recurrent.state] if spec.recurrent else []
    obs = [i.name for i in model.graph.input if i.name not in g.init and i.name not in state_inputs][0]
    layers, t = [], obs
    while (found := g.layer_at(t)) is not None:
        layer, t = found
        layers.append(layer)
        if layer.act == "tanh":
            break
    lstm = None
    if spec.recurrent is not None:
        lstm, h_out = _read_lstm(g, t, spec, path)
        found = g.layer_at(h_out)
        if found is None:
            raise BadInputError(f"{path}: --backend int8 needs a MatMul head on the LSTM's h output")
        layers.append(found[0])
    if not layers or layers[-1].w.shape[1] != 1:
        raise BadInputError(f"{path}: --backend int8 needs the network to end in a one-output MatMul/Gemm layer")
    head = layers.pop()
    if any(layer.act == "tanh" for layer in layers):
        raise BadInputError(f"{path}: --backend int8 supports Tanh only as the output activation (hidden layers: Relu)")
    want = "tanh" if spec.action.type == "tanh" else "none"
    if head.act != want:
        raise BadInputError(f"{path}: --backend int8 needs the output activation {want} for action type {spec.action.type!r}, "
                            f"the graph has {head.act}")
    net = FloatNet(tuple(layers), lstm, head)
    _check_against_onnx(net, spec, policy, path)
    return net


def _read_lstm(g: _Graph, x_tensor: str, spec: ObservationSpec, path: Path) -> tuple[FloatLstm, str]:
    states = spec.recurrent.state
    if len(states) != 2 or states[0].size != states[1].size:
        raise BadInputError(f"{path}: --backend int8 needs an LSTM state of two tensors (h, c) of equal size")
    x_node = g.only(x_tensor)
    if x_node is None or x_node.op_type != "MatMul" or g.weight(x_node) is None:
        raise BadInputError(f"{path}: --backend int8 cannot find the LSTM's input product")
    wx = g.weight(x_node)
    h_index = next((k for k, s in enumerate(states)
                    if any(n.op_type == "MatMul" and g.weight(n) is not None for n in g.consumers.get(s.input, []))), None)
    if h_index is None:
        raise BadInputError(f"{path}: --backend int8 cannot find the LSTM's recurrent product h @ Wh")
    wh = next(g.weight(n) for n in g.consumers[states[h_index].input] if n.op_type == "MatMul")
    H = states[h_index].size
    if wx.shape[1] != 4 * H or wh.shape != (H, 4 * H):
        raise BadInputError(f"{path}: LSTM weights do not have 4 x {H} gate columns")
    bias = [v for v in g.init.values() if v.shape in ((4 * H,), (1, 4 * H))]
    b = bias[0].reshape(-1) if len(bias) == 1 else np.zeros(4 * H)
    return FloatLstm(wx, wh, b, h_index), g.skip_identity(states[h_index].output)


def _check_against_onnx(net: FloatNet, spec: ObservationSpec, policy: Any, path: Path) -> None:
    """The float re-implementation must reproduce onnxruntime on random inputs."""
    rng = np.random.default_rng(0)
    n = 256
    x = rng.normal(0.0, 1.0, (n, spec.n_features if net.lstm is not None else spec.input_width))
    if net.lstm is None:
        ref = policy.predict_raw(x.astype(np.float32))
        got, _, _ = net.step(x.astype(np.float32).astype(np.float64))
    else:
        H = net.hidden
        state = rng.normal(0.0, 0.5, (n, 2 * H)).astype(np.float32)
        ref, ref_state = policy.step_raw(x.astype(np.float32), state)
        hs, cs = (state[:, :H], state[:, H:]) if net.lstm.h_index == 0 else (state[:, H:], state[:, :H])
        got, h2, c2 = net.step(x.astype(np.float32).astype(np.float64), hs.astype(np.float64), cs.astype(np.float64))
        got_state = np.concatenate([h2, c2] if net.lstm.h_index == 0 else [c2, h2], axis=1)
        if not np.allclose(got_state, ref_state, atol=CHECK_ATOL):
            raise BadInputError(f"{path}: the LSTM graph does not compute the cell --backend int8 supports "
                                "(gate order i, f, g, o; c' = f c + i g; h' = o tanh(c'))")
    if not np.allclose(got, ref, atol=CHECK_ATOL):
        raise BadInputError(f"{path}: --backend int8 read the graph as {describe(net)} but it computes something else "
                            f"(max difference {np.max(np.abs(got - ref)):.3g})")


def describe(net: FloatNet) -> str:
    parts = [f"{layer.w.shape[0]}->{layer.w.shape[1]} {layer.act}" for layer in net.layers]
    if net.lstm is not None:
        parts.append(f"LSTM {net.lstm.wx.shape[0]}->{net.hidden}")
    parts.append(f"{net.head.w.shape[0]}->1 {net.head.act}")
    return ", ".join(parts)
