"""A small recurrent RL-CC policy: one LSTM cell per decision with explicit per-flow state.

It is distilled from the trained MLP by behaviour cloning (not trained with ADPG): the MLP's
training rollouts give per-flow decision sequences; the LSTM, fed only the CURRENT step's
features (its state replaces the MLP's window), is fit to the MLP's raw tanh output with
truncated BPTT. It exists as a recurrent teacher for future distillation work; its ONNX has
inputs ``obs, h_in, c_in`` and outputs ``action, h_out, c_out`` (see train/README.md).

Cell (gate order i, f, g, o): ``z = x @ Wx + h @ Wh + b``; ``c' = sig(f) c + sig(i) tanh(g)``;
``h' = sig(o) tanh(c')``; ``action = tanh(h' @ Wo)``.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

from rlcc.spec import METADATA_KEY, ObservationSpec, Recurrent, StateTensor
from rlcc.train.adam import Adam
from rlcc.train.mlp import Mlp


def _sig(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


@dataclasses.dataclass
class Lstm:
    wx: np.ndarray  # (F, 4H)
    wh: np.ndarray  # (H, 4H)
    b: np.ndarray  # (4H,)
    wo: np.ndarray  # (H, 1)

    @classmethod
    def init(cls, n_in: int, hidden: int, rng: np.random.Generator) -> "Lstm":
        b = np.zeros(4 * hidden)
        b[hidden : 2 * hidden] = 1.0  # forget-gate bias 1: remember by default
        return cls(
            rng.normal(0, 1 / np.sqrt(n_in), (n_in, 4 * hidden)),
            rng.normal(0, 1 / np.sqrt(hidden), (hidden, 4 * hidden)),
            b,
            rng.normal(0, 1 / np.sqrt(hidden), (hidden, 1)),
        )

    @property
    def hidden(self) -> int:
        return self.wh.shape[0]

    @property
    def params(self) -> list[np.ndarray]:
        return [self.wx, self.wh, self.b, self.wo]

    def step(self, x: np.ndarray, h: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
        """One decision for a batch: (action (B,), h', c', cache)."""
        H = self.hidden
        z = x @ self.wx + h @ self.wh + self.b
        i, f, g, o = _sig(z[:, :H]), _sig(z[:, H : 2 * H]), np.tanh(z[:, 2 * H : 3 * H]), _sig(z[:, 3 * H :])
        c2 = f * c + i * g
        tc = np.tanh(c2)
        h2 = o * tc
        y = np.tanh(h2 @ self.wo)[:, 0]
        return y, h2, c2, (x, h, c, i, f, g, o, tc, h2, y)

    def sequence_grads(self, xs: np.ndarray, targets: np.ndarray) -> tuple[float, list[np.ndarray]]:
        """MSE over (B, L) and its gradients by BPTT from a zero state; xs is (B, L, F)."""
        B, L, _ = xs.shape
        H = self.hidden
        h, c = np.zeros((B, H)), np.zeros((B, H))
        caches, ys = [], []
        for t in range(L):
            y, h, c, cache = self.step(xs[:, t], h, c)
            caches.append(cache)
            ys.append(y)
        err = np.stack(ys, 1) - targets
        loss = float(np.mean(err**2))
        grads = [np.zeros_like(p) for p in self.params]
        dh_next, dc_next = np.zeros((B, H)), np.zeros((B, H))
        for t in range(L - 1, -1, -1):
            x, h_prev, c_prev, i, f, g, o, tc, h2, y = caches[t]
            dy = (2.0 / err.size) * err[:, t] * (1.0 - y * y)
            grads[3] += h2.T @ dy[:, None]
            dh = dy[:, None] @ self.wo.T + dh_next
            do = dh * tc * o * (1 - o)
            dc = dh * o * (1 - tc * tc) + dc_next
            di, df, dg = dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g)
            dz = np.concatenate([di, df, dg, do], axis=1)
            grads[0] += x.T @ dz
            grads[1] += h_prev.T @ dz
            grads[2] += dz.sum(0)
            dh_next, dc_next = dz @ self.wh.T, dc * f
        return loss, grads


def current_step(spec: ObservationSpec, obs: np.ndarray) -> np.ndarray:
    """The current step's scaled features out of MLP windows (N, width) -> (N, F)."""
    idx = [spec.input_index(0, f) for f in range(spec.n_features)]
    return np.asarray(obs, dtype=np.float64)[:, idx]


def bc_dataset(mlp: Mlp, cfg, seq_len: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-flow decision chunks (from each flow's first decision) of the MLP's own rollouts."""
    from rlcc.train.trainer import collect

    spec = cfg.observation_spec()
    xs, ys = [], []
    for r in collect(mlp, cfg, cfg.iterations + 1):
        for start, end in r.bounds:
            stop = start + seq_len
            if stop <= end:
                xs.append(current_step(spec, r.obs[start:stop]))
                ys.append(mlp(r.obs[start:stop]))
    return np.stack(xs), np.stack(ys)


def distill_lstm(
    mlp: Mlp, cfg, hidden: int = 8, seq_len: int = 64, steps: int = 1500, lr: float = 0.01
) -> tuple[Lstm, float]:
    """Behaviour-clone the MLP into an LSTM; returns it and its final training MSE."""
    spec = cfg.observation_spec()
    xs, ys = bc_dataset(mlp, cfg, seq_len)
    rng = np.random.default_rng(cfg.seed)
    lstm = Lstm.init(spec.n_features, hidden, rng)
    opt = Adam(lstm.params, lr)
    loss = float("nan")
    for _ in range(steps):
        batch = rng.integers(0, len(xs), size=min(32, len(xs)))
        loss, grads = lstm.sequence_grads(xs[batch], ys[batch])
        opt.step(lstm.params, [-g for g in grads])
    loss, _ = lstm.sequence_grads(xs, ys)
    return lstm, loss


def export_lstm(lstm: Lstm, spec: ObservationSpec, path: str | Path) -> None:
    """ONNX: inputs obs (B, F), h_in (B, H), c_in (B, H) -> action (B, 1), h_out, c_out."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    H, F = lstm.hidden, spec.n_features
    f32 = lambda a, n: numpy_helper.from_array(np.asarray(a, dtype=np.float32), n)  # noqa: E731
    inits = [f32(lstm.wx, "Wx"), f32(lstm.wh, "Wh"), f32(lstm.b, "b"), f32(lstm.wo, "Wo")]
    inits.append(numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"))
    for k, name in enumerate(("i", "f", "g", "o")):
        inits.append(numpy_helper.from_array(np.array([k * H], dtype=np.int64), f"{name}_start"))
        inits.append(numpy_helper.from_array(np.array([(k + 1) * H], dtype=np.int64), f"{name}_end"))
    n = helper.make_node
    nodes = [
        n("MatMul", ["obs", "Wx"], ["zx"]),
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
    model.doc_string = "RL-CC LSTM policy (behaviour-cloned from the ADPG MLP); per-flow state h/c, zeros at a flow's first decision"
    # history 1: the recurrent policy sees only the current step; its state carries the past.
    state = tuple(StateTensor(n, f"{n}_in", f"{n}_out", H, 0.0) for n in ("h", "c"))
    step_spec = dataclasses.replace(spec, history=1, recurrent=Recurrent(state))
    entry = model.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, step_spec.to_json()
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def mlp_from_onnx(path: str | Path) -> tuple[Mlp, ObservationSpec]:
    """The bias-free MLP and spec back out of an ONNX written by ``export_mlp``."""
    import onnx
    from onnx import numpy_helper

    from rlcc.policy import spec_from_metadata

    model = onnx.load(str(path))
    weights = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    mlp = Mlp([weights[f"W{i}"] for i in range(len(weights))])
    return mlp, spec_from_metadata(model, Path(path))


def main(argv: list[str]) -> int:
    """``python -m rlcc.train.lstm MLP.onnx CONFIG.train.json OUT.onnx``."""
    from rlcc.train.config import TrainConfig

    if len(argv) != 3:
        print("usage: python -m rlcc.train.lstm MLP.onnx CONFIG.train.json OUT.onnx", file=sys.stderr)
        return 2
    mlp, spec = mlp_from_onnx(argv[0])
    cfg = TrainConfig.from_file(argv[1])
    lstm, loss = distill_lstm(mlp, cfg)
    export_lstm(lstm, spec, argv[2])
    print(f"wrote {argv[2]} (behaviour-cloning MSE {loss:.2e})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
