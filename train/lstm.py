"""The recurrent RL-CC policy: bias-free FC pre-layers, one LSTM cell, a bias-free FC head.

The papers' production shape (FC layers, an LSTM, an FC head), trained with ADPG like the MLP
(``rlcc.train.adpg``); the gradient of each decision's output flows back through the flow's
whole decision sequence (BPTT, ``weighted_grads``). The policy sees only the CURRENT step's
features (spec ``history`` 1); its per-flow state ``h``, ``c`` (zeros at a flow's first
decision) carries the past.

Step (gate order i, f, g, o): ``u = relu(...relu(x @ P0)... @ Pk)``; ``z = u @ Wx + h @ Wh + b``;
``c' = sig(f) c + sig(i) tanh(g)``; ``h' = sig(o) tanh(c')``; ``y = tanh(h' @ Wo)``.
The g-gate bias is held at 0 and nothing else has a bias, so zero input and zero state give
``c' = h' = 0`` and ``y = 0`` (factor 1): like the bias-free MLP, the ``delta = 0``,
``prev_action = 1`` operating point is an exact fixed point. The i/f/o biases only scale.

ONNX (``export_lstm``): inputs ``obs (B, F)``, ``h_in``, ``c_in (B, H)`` -> outputs ``action (B, 1)``,
``h_out``, ``c_out``; the spec's ``recurrent`` block names the state (see train/README.md).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from rlcc.spec import METADATA_KEY, ObservationSpec, Recurrent, StateTensor

# h + c values per flow: as int8 they must take at most 16 bytes of the device's per-flow
# context (rlcc.formats.CTX_BYTES, 48), next to the runtime's own fields.
MAX_STATE_VALUES = 16
MAX_HIDDEN = MAX_STATE_VALUES // 2


def _sig(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp(-x) = inf for x << 0 gives the exact limit 0
        return 1.0 / (1.0 + np.exp(-x))


@dataclasses.dataclass
class Lstm:
    pre: list[np.ndarray]  # FC pre-layers (in, out), ReLU, no bias
    wx: np.ndarray  # (U, 4H), U = last pre-layer width (or F)
    wh: np.ndarray  # (H, 4H)
    b: np.ndarray  # (4H,) gate biases; the g block stays 0 (fixed point, module doc)
    wo: np.ndarray  # (H, 1)

    @classmethod
    def init(
        cls, n_in: int, hidden: int, rng: np.random.Generator, pre: tuple[int, ...] = (), out_scale: float = 0.1
    ) -> "Lstm":
        """He-initialized pre-layers, 1/sqrt(fan-in) gates, forget bias 1, a small head (factor ~1 at start)."""
        weights = []
        for n, m in zip((n_in, *pre), pre):
            weights.append(rng.normal(0.0, np.sqrt(2.0 / n), (n, m)))
        u = pre[-1] if pre else n_in
        b = np.zeros(4 * hidden)
        b[hidden : 2 * hidden] = 1.0  # remember by default
        return cls(
            weights,
            rng.normal(0.0, 1.0 / np.sqrt(u), (u, 4 * hidden)),
            rng.normal(0.0, 1.0 / np.sqrt(hidden), (hidden, 4 * hidden)),
            b,
            rng.normal(0.0, out_scale / np.sqrt(hidden), (hidden, 1)),
        )

    @property
    def hidden(self) -> int:
        return self.wh.shape[0]

    @property
    def n_in(self) -> int:
        return self.pre[0].shape[0] if self.pre else self.wx.shape[0]

    @property
    def params(self) -> list[np.ndarray]:
        return [*self.pre, self.wx, self.wh, self.b, self.wo]

    def step(self, x: np.ndarray, h: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
        """One decision for a batch of flows: (y (B,), h', c', cache for ``weighted_grads``)."""
        H = self.hidden
        us = [np.asarray(x, dtype=np.float64)]
        for w in self.pre:
            us.append(np.maximum(us[-1] @ w, 0.0))
        z = us[-1] @ self.wx + h @ self.wh + self.b
        i, f, o = _sig(z[:, :H]), _sig(z[:, H : 2 * H]), _sig(z[:, 3 * H :])
        g = np.tanh(z[:, 2 * H : 3 * H])
        c2 = f * c + i * g
        tc = np.tanh(c2)
        h2 = o * tc
        y = np.tanh(h2 @ self.wo)[:, 0]
        return y, h2, c2, (us, h, c, i, f, g, o, tc, h2, y)

    def unroll(self, xs: np.ndarray) -> tuple[np.ndarray, list[tuple]]:
        """Outputs (B, L) of B flows fed steps xs (B, L, F) from the zero state, and the caches."""
        B, L, _ = xs.shape
        h, c = np.zeros((B, self.hidden)), np.zeros((B, self.hidden))
        ys, caches = np.empty((B, L)), []
        for t in range(L):
            ys[:, t], h, c, cache = self.step(xs[:, t], h, c)
            caches.append(cache)
        return ys, caches

    def backward(self, caches: list[tuple], dy: np.ndarray) -> list[np.ndarray]:
        """BPTT: gradients of ``sum_{b,t} dy[b, t] * y[b, t]`` w.r.t. ``params``; y[b, t]
        depends on steps 0..t of its sequence through the state."""
        H = self.hidden
        B = dy.shape[0]
        grads = [np.zeros_like(p) for p in self.params]
        gp, gx, gh, gb, go = grads[: len(self.pre)], *grads[len(self.pre) :]
        dh_next, dc_next = np.zeros((B, H)), np.zeros((B, H))
        for t in range(len(caches) - 1, -1, -1):
            us, h_prev, c_prev, i, f, g, o, tc, h2, y = caches[t]
            dlin = dy[:, t] * (1.0 - y * y)
            go += h2.T @ dlin[:, None]
            dh = dlin[:, None] @ self.wo.T + dh_next
            dc = dh * o * (1.0 - tc * tc) + dc_next
            dz = np.concatenate(
                [dc * g * i * (1.0 - i), dc * c_prev * f * (1.0 - f), dc * i * (1.0 - g * g), dh * tc * o * (1.0 - o)], axis=1
            )
            gx += us[-1].T @ dz
            gh += h_prev.T @ dz
            gb += dz.sum(0)
            if self.pre:
                du = dz @ self.wx.T
                for k in range(len(self.pre) - 1, -1, -1):
                    du = du * (us[k + 1] > 0)
                    gp[k] += us[k].T @ du
                    if k:
                        du = du @ self.pre[k].T
            dh_next, dc_next = dz @ self.wh.T, dc * f
        gb[2 * H : 3 * H] = 0.0  # the g-gate bias is not a parameter (fixed point)
        return grads

    def weighted_grads(self, obs: np.ndarray, dy: np.ndarray, bounds: list[tuple[int, int]]) -> list[np.ndarray]:
        """Gradients of ``sum_t dy_t * pi(o_1..o_t)`` over flow sequences ``obs[start:stop]`` (time
        order, each from its first decision): the flows are padded to one (B, L) batch; padding
        comes after a flow's last step and has dy 0, so it contributes nothing."""
        if not bounds:
            return [np.zeros_like(p) for p in self.params]
        L = max(b - a for a, b in bounds)
        xs = np.zeros((len(bounds), L, obs.shape[1]))
        dys = np.zeros((len(bounds), L))
        for k, (a, b) in enumerate(bounds):
            xs[k, : b - a] = obs[a:b]
            dys[k, : b - a] = dy[a:b]
        _, caches = self.unroll(xs)
        return self.backward(caches, dys)

    def copy(self) -> "Lstm":
        return Lstm([w.copy() for w in self.pre], self.wx.copy(), self.wh.copy(), self.b.copy(), self.wo.copy())


def step_spec(lstm: Lstm, spec: ObservationSpec) -> ObservationSpec:
    """The exported spec: one step of ``spec``'s features (history 1) and the h/c state block."""
    state = tuple(StateTensor(n, f"{n}_in", f"{n}_out", lstm.hidden, 0.0) for n in ("h", "c"))
    return dataclasses.replace(spec, history=1, recurrent=Recurrent(state))


class LstmStepper:
    """The numpy LSTM as a recurrent stepper for ``RecurrentController`` (state = [h, c], float64)."""

    recurrent = True

    def __init__(self, lstm: Lstm, spec: ObservationSpec) -> None:
        self.lstm = lstm
        self.spec = step_spec(lstm, spec)

    def initial_state(self, n: int) -> np.ndarray:
        return np.zeros((n, 2 * self.lstm.hidden))

    def step_raw(self, x: np.ndarray, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        H = self.lstm.hidden
        y, h, c, _ = self.lstm.step(x, state[:, :H], state[:, H:])
        return y, np.concatenate([h, c], axis=1)


def export_lstm(lstm: Lstm, spec: ObservationSpec, path: str | Path, doc: str = "") -> None:
    """ONNX: obs (B, F), h_in (B, H), c_in (B, H) -> action (B, 1), h_out, c_out; float32
    initializers ``P0..`` (pre-layers), ``Wx``, ``Wh``, ``b``, ``Wo``; deterministic bytes."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    H, F = lstm.hidden, spec.n_features
    f32 = lambda a, n: numpy_helper.from_array(np.asarray(a, dtype=np.float32), n)  # noqa: E731
    inits = [f32(w, f"P{k}") for k, w in enumerate(lstm.pre)]
    inits += [f32(lstm.wx, "Wx"), f32(lstm.wh, "Wh"), f32(lstm.b, "b"), f32(lstm.wo, "Wo")]
    inits.append(numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"))
    for k, name in enumerate(("i", "f", "g", "o")):
        inits.append(numpy_helper.from_array(np.array([k * H], dtype=np.int64), f"{name}_start"))
        inits.append(numpy_helper.from_array(np.array([(k + 1) * H], dtype=np.int64), f"{name}_end"))
    n = helper.make_node
    nodes, u = [], "obs"
    for k in range(len(lstm.pre)):
        nodes += [n("MatMul", [u, f"P{k}"], [f"pre{k}_lin"]), n("Relu", [f"pre{k}_lin"], [f"pre{k}"])]
        u = f"pre{k}"
    nodes += [
        n("MatMul", [u, "Wx"], ["zx"]),
        n("MatMul", ["h_in", "Wh"], ["zh"]),
        n("Add", ["zx", "zh"], ["zxh"]),
        n("Add", ["zxh", "b"], ["z"]),
    ]
    for name in ("i", "f", "g", "o"):
        nodes.append(n("Slice", ["z", f"{name}_start", f"{name}_end", "axis1"], [f"z_{name}"]))
        nodes.append(n("Tanh" if name == "g" else "Sigmoid", [f"z_{name}"], [f"gate_{name}"]))
    nodes += [
        n("Mul", ["gate_f", "c_in"], ["fc"]),
        n("Mul", ["gate_i", "gate_g"], ["ig"]),
        n("Add", ["fc", "ig"], ["c_out"]),
        n("Tanh", ["c_out"], ["tc"]),
        n("Mul", ["gate_o", "tc"], ["h_out"]),
        n("MatMul", ["h_out", "Wo"], ["y_lin"]),
        n("Tanh", ["y_lin"], ["action"]),
    ]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "rlcc_lstm_policy",
        [vi("obs", TensorProto.FLOAT, ["batch", F]), vi("h_in", TensorProto.FLOAT, ["batch", H]), vi("c_in", TensorProto.FLOAT, ["batch", H])],
        [vi("action", TensorProto.FLOAT, ["batch", 1]), vi("h_out", TensorProto.FLOAT, ["batch", H]), vi("c_out", TensorProto.FLOAT, ["batch", H])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="rlcc-train")
    model.ir_version = 8
    model.doc_string = doc or "RL-CC LSTM policy (ADPG); per-flow state h/c, zeros at a flow's first decision"
    entry = model.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, step_spec(lstm, spec).to_json()
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def lstm_from_onnx(path: str | Path) -> tuple[Lstm, ObservationSpec]:
    """The numpy LSTM and the step spec back out of an ONNX written by ``export_lstm``."""
    from onnx import numpy_helper

    from rlcc.policy import read_onnx, spec_from_metadata

    model = read_onnx(path)
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    pre = [w[f"P{k}"] for k in range(sum(1 for name in w if name.startswith("P")))]
    return Lstm(pre, w["Wx"], w["Wh"], w["b"], w["Wo"]), spec_from_metadata(model, Path(path))
