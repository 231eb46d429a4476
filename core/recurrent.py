"""Recurrent (LSTM-style) ONNX policies: one step's features in, per-flow state carried between decisions.

The spec's ``recurrent`` block names the state tensors (``rlcc.spec.Recurrent``): graph inputs
fed back from graph outputs, each (batch, size) float32, reset at a flow's first decision. The
one remaining input is the step's observation (history 1: the state carries the past) and the
one remaining output is the action. Loading checks all of it against the graph (exit 3).

Two views of the same network:

* ``step_raw`` / ``initial_state``: the exact recurrent policy, for controllers that keep
  per-flow state (``rlcc.simulator.controllers.recurrent``).
* ``factor(windows)``: the policy as a function of a K-step window (any K, the spec's feature
  layout): the state is reset, the window's oldest step is fed ``burn_in`` times (a flow that has
  seen that step for a while, like the device filling its window with the first step) and then
  every step of the window; the last action is returned. This labels states that have no
  trajectory of their own (perturbed windows, anchors, probes); closed-loop samples are
  labelled by the exact recurrent run.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from pathlib import Path

import numpy as np

from rlcc.errors import BadInputError
from rlcc.policy import (
    DEFAULT_BATCH,
    PicklableSession,
    _dims,
    _load_onnx,
    _make_session,
    check_outputs,
    output_activation,
    probe_inputs,
    spec_from_metadata,
)
from rlcc.spec import ObservationSpec

WINDOW_BURN_IN = 8  # steps of the oldest window step fed before the window (see module doc)
PROBE_STEPS = 8  # at most the spec's MAX_HISTORY


class RecurrentPolicy(PicklableSession):
    """A validated recurrent ONNX policy (spec with ``recurrent``) evaluated in batches of flows."""

    recurrent = True

    def __init__(self, path: str | os.PathLike, spec: ObservationSpec | None = None, *, seed: int = 0) -> None:
        model, spec = self._open(path, spec)
        if spec.recurrent is None:
            raise BadInputError(f"{self.path}: the spec declares no 'recurrent' state")
        if spec.history != 1:
            raise BadInputError(f"{self.path}: a recurrent policy sees one step (spec history 1; its state carries the past), "
                                f"spec has history {spec.history}")
        self.spec = spec
        self.step_spec = spec  # the ONNX's own spec (``spec`` of a ``windowed`` view differs)
        self.input_name, self.output_name = _check_recurrent_signature(model, spec, self.path)
        self.state_tensors = spec.recurrent.state
        self.state_inputs = [t.input for t in self.state_tensors]
        self.state_outputs = [t.output for t in self.state_tensors]
        self.output_activation = output_activation(model)
        self._session = _make_session(self.model_bytes, self.path)
        self._probe(seed)

    @property
    def state_size(self) -> int:
        return sum(t.size for t in self.state_tensors)

    def windowed(self, k: int) -> "RecurrentPolicy":
        """The same policy whose ``spec`` is a ``k``-step window spec (no ``recurrent`` block): the
        spec of a window student, of the engine's windows and of ``factor``'s input."""
        view = copy.copy(self)
        view.spec = dataclasses.replace(self.step_spec, history=k, recurrent=None)
        return view

    def initial_state(self, n: int) -> np.ndarray:
        """The reset state of ``n`` new flows, (n, state_size) float32, tensors in spec order."""
        return np.tile(np.concatenate([np.full(t.size, t.reset, dtype=np.float32) for t in self.state_tensors]), (n, 1))

    def step_raw(self, x: np.ndarray, state: np.ndarray, batch: int = DEFAULT_BATCH) -> tuple[np.ndarray, np.ndarray]:
        """One decision of a batch of flows: raw outputs (B,) float64 and the new state (B, S) float32."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        state = np.ascontiguousarray(state, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.spec.n_features or state.shape != (len(x), self.state_size):
            raise ValueError(f"step inputs must be (B, {self.spec.n_features}) and state (B, {self.state_size})")
        y = np.empty(len(x), dtype=np.float64)
        new = np.empty_like(state)
        bounds = np.cumsum([0] + [t.size for t in self.state_tensors])
        for start in range(0, len(x), batch):
            sl = slice(start, start + batch)
            feeds = {self.input_name: x[sl]}
            feeds.update({name: np.ascontiguousarray(state[sl, a:b]) for name, a, b in zip(self.state_inputs, bounds, bounds[1:])})
            try:
                outs = self._session.run([self.output_name, *self.state_outputs], feeds)
            except Exception as exc:  # onnxruntime raises its own exception hierarchy
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise BadInputError(f"{self.path}: onnxruntime cannot evaluate the model: {first}") from None
            n = len(x[sl])
            y[sl] = check_outputs(self.path, self.output_name, outs[0], n)
            for out, name, a, b in zip(outs[1:], self.state_outputs, bounds, bounds[1:]):
                out = np.asarray(out, dtype=np.float32)
                if out.shape != (n, b - a):
                    raise BadInputError(f"{self.path}: state output '{name}' has shape {out.shape}, expected ({n}, {b - a})")
                new[sl, a:b] = out
        return y, new

    def unroll_raw(self, steps: np.ndarray, burn_in: int = 0) -> np.ndarray:
        """Raw outputs (N, T) of flows fed steps (N, T, F) from the reset state, after ``burn_in``
        copies of their first step."""
        steps = np.asarray(steps, dtype=np.float32)
        state = self.initial_state(len(steps))
        for _ in range(burn_in):
            _, state = self.step_raw(steps[:, 0], state)
        ys = np.empty(steps.shape[:2], dtype=np.float64)
        for t in range(steps.shape[1]):
            ys[:, t], state = self.step_raw(steps[:, t], state)
        return ys

    def window_steps(self, obs: np.ndarray) -> np.ndarray:
        """Windows (N, K * F) in the spec's step order -> steps (N, K, F), oldest first."""
        obs = np.asarray(obs, dtype=np.float32)
        F = self.spec.n_features
        if obs.ndim != 2 or obs.shape[1] % F or not obs.shape[1]:
            raise ValueError(f"windows must have shape (N, K * {F})")
        steps = obs.reshape(len(obs), obs.shape[1] // F, F)
        return steps if self.spec.step_order == "oldest_first" else steps[:, ::-1]

    def predict_raw(self, obs: np.ndarray, burn_in: int = WINDOW_BURN_IN) -> np.ndarray:
        """The window view (module doc): raw output after each window, (N,) float64."""
        return self.unroll_raw(self.window_steps(obs), burn_in)[:, -1]

    def factor(self, obs: np.ndarray) -> np.ndarray:
        """Clamped rate factors of the window view for windows (N, K * F)."""
        return self.spec.output_to_factor(self.predict_raw(obs))

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.factor(obs)

    def _probe(self, seed: int) -> None:
        """Finite outputs within the action's range on probe sequences, and a state that changes."""
        window = dataclasses.replace(self.spec, history=PROBE_STEPS, recurrent=None)
        steps = self.window_steps(probe_inputs(window, n=512, seed=seed))
        y = self.unroll_raw(steps)
        if not np.all(np.isfinite(y)):
            raise BadInputError(f"{self.path}: policy outputs NaN or inf on probe sequences")
        if self.spec.action.type == "tanh" and np.any(np.abs(y) > 1.0 + 1e-6):
            raise BadInputError(f"{self.path}: tanh-mapped policy output outside [-1, 1] on probe sequences "
                                f"(range {y.min():.4g}..{y.max():.4g})")
        if self.spec.action.type == "factor" and np.any(y <= 0):
            raise BadInputError(f"{self.path}: factor output <= 0 on probe sequences (min {y.min():.4g})")


def _check_recurrent_signature(model, spec: ObservationSpec, path: Path) -> tuple[str, str]:
    """(observation input, action output) names; every state tensor checked against the graph."""
    import onnx

    initializers = {i.name for i in model.graph.initializer}
    inputs = {i.name: i for i in model.graph.input if i.name not in initializers}
    outputs = {o.name: o for o in model.graph.output}
    rec = spec.recurrent
    for t in rec.state:
        for kind, table, name in (("input", inputs, t.input), ("output", outputs, t.output)):
            if name not in table:
                raise BadInputError(f"{path}: recurrent state {t.name!r}: the graph has no {kind} {name!r} "
                                    f"({kind}s: {', '.join(table) or 'none'})")
            info = table[name]
            if info.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
                raise BadInputError(f"{path}: recurrent state {kind} {name!r} must be float32")
            dims = _dims(info)
            if len(dims) != 2 or dims[1] != t.size:
                raise BadInputError(f"{path}: recurrent state {kind} {name!r} has shape "
                                    f"({', '.join('?' if d is None else str(d) for d in dims)}), the spec declares (batch, {t.size})")
    obs = [n for n in inputs if n not in {t.input for t in rec.state}]
    acts = [n for n in outputs if n not in {t.output for t in rec.state}]
    if len(obs) != 1:
        raise BadInputError(f"{path}: a recurrent policy needs exactly one non-state input, found {len(obs)}"
                            + (f" ({', '.join(obs)}): declare the others in the spec's 'recurrent' state" if obs else ""))
    if len(acts) != 1:
        raise BadInputError(f"{path}: a recurrent policy needs exactly one non-state output (the action), found {len(acts)}"
                            + (f" ({', '.join(acts)}): state outputs must match the spec's 'recurrent' state" if acts else ""))
    inp, out = inputs[obs[0]], outputs[acts[0]]
    if inp.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
        raise BadInputError(f"{path}: input '{inp.name}' must be float32")
    dims = _dims(inp)
    if len(dims) != 2 or dims[1] != spec.n_features:
        raise BadInputError(f"{path}: input '{inp.name}' must be (batch, {spec.n_features}) (one step of the spec's features)")
    out_dims = _dims(out)
    if len(out_dims) not in (1, 2) or (len(out_dims) == 2 and out_dims[1] != 1):
        raise BadInputError(f"{path}: output '{out.name}' must have shape (batch,) or (batch, 1)")
    if out.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
        raise BadInputError(f"{path}: output '{out.name}' must be float32")
    return inp.name, out.name


def load_policy(path: str | os.PathLike, spec: ObservationSpec | None = None, *, seed: int = 0):
    """An ``OnnxPolicy`` or, when the spec (given or embedded) declares recurrent state, a ``RecurrentPolicy``."""
    from rlcc.policy import OnnxPolicy

    if spec is None:
        spec = spec_from_metadata(_load_onnx(Path(path)), Path(path))
    if spec.recurrent is not None:
        return RecurrentPolicy(path, spec, seed=seed)
    return OnnxPolicy(path, spec, seed=seed)
