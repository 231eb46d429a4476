"""Load and validate a switch agent's ONNX Q-network against its switch-agent spec."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from rlcc.errors import BadInputError
from rlcc.policy import PicklableSession, _check_opset, _dims, _load_onnx, _make_session, read_onnx
from rlcc.switch_spec import METADATA_KEY, SwitchAgentSpec

PROBE_SAMPLES = 1024


def switch_spec_from_metadata(model, path: Path) -> SwitchAgentSpec | None:
    for prop in model.metadata_props:
        if prop.key == METADATA_KEY:
            return SwitchAgentSpec.from_json(prop.value, source=f"{path.name} metadata")
    return None


def is_switch_agent(path: str | os.PathLike) -> bool:
    """Whether the ONNX file carries a switch-agent spec (cheap: reads the metadata only)."""
    try:
        model = read_onnx(path, load_external_data=False)
    except Exception:  # not ONNX at all: the NIC loader reports it properly
        return False
    return any(p.key == METADATA_KEY for p in model.metadata_props)


def embed_switch_spec(model, spec: SwitchAgentSpec) -> None:
    """Set (or replace) the spec in an in-memory ONNX model's metadata."""
    for prop in list(model.metadata_props):
        if prop.key == METADATA_KEY:
            model.metadata_props.remove(prop)
    entry = model.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, spec.to_json()


class QNetPolicy(PicklableSession):
    """A validated Q-network: input (batch, history x features) float32, output (batch, actions).
    Picklable (``PicklableSession``): the session is rebuilt from ``model_bytes`` on the other side."""

    def __init__(self, path: str | os.PathLike, spec: SwitchAgentSpec | None = None) -> None:
        self.path = Path(path)
        model = _load_onnx(self.path)
        _check_opset(model, self.path)
        embedded = switch_spec_from_metadata(model, self.path)
        spec = spec or embedded
        if spec is None:
            raise BadInputError(f"{self.path}: no switch-agent spec (metadata key '{METADATA_KEY}')")
        self.spec = spec
        self.model_bytes = model.SerializeToString()
        self.input_name, self.output_name = _check_qnet_signature(model, spec, self.path)
        self._session = _make_session(self.model_bytes, self.path)
        q = self.q_values(np.random.default_rng(0).uniform(0.0, 1.0, (PROBE_SAMPLES, spec.input_width)))
        if not np.all(np.isfinite(q)):
            raise BadInputError(f"{self.path}: Q-network outputs NaN or inf on probe inputs")

    def q_values(self, x: np.ndarray) -> np.ndarray:
        """Q-values (N, n_actions) float32 for policy inputs (N, input_width)."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        if len(x) == 0:
            return np.zeros((0, self.spec.n_actions), np.float32)
        (y,) = self._session.run([self.output_name], {self.input_name: x})
        y = np.asarray(y, dtype=np.float32)
        if y.shape != (len(x), self.spec.n_actions):
            raise BadInputError(f"{self.path}: Q-network output shape {y.shape}, expected ({len(x)}, {self.spec.n_actions})")
        return y

    def act(self, x: np.ndarray) -> np.ndarray:
        """The greedy action (first largest Q-value) per row."""
        return np.argmax(self.q_values(x), axis=1).astype(np.int64)


def _check_qnet_signature(model, spec: SwitchAgentSpec, path: Path) -> tuple[str, str]:
    import onnx

    initializers = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    if len(inputs) != 1 or len(model.graph.output) != 1:
        raise BadInputError(f"{path}: a Q-network needs exactly one input and one output")
    inp, out = inputs[0], model.graph.output[0]
    for v in (inp, out):
        if v.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
            raise BadInputError(f"{path}: '{v.name}' must be float32")
    dims = _dims(inp)
    if len(dims) != 2 or dims[1] != spec.input_width:
        raise BadInputError(
            f"{path}: input shape {dims} does not match history {spec.history} x {spec.n_features} "
            f"features = {spec.input_width}"
        )
    out_dims = _dims(out)
    if len(out_dims) != 2 or out_dims[1] != spec.n_actions:
        width = out_dims[1] if len(out_dims) == 2 else out_dims
        raise BadInputError(
            f"{path}: Q-network output width {width} does not match the action table's {spec.n_actions} templates"
        )
    return inp.name, out.name
