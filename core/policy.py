"""Load and validate an ONNX policy against its observation spec; evaluate it in batches."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from rlcc import textio
from rlcc.errors import BadInputError
from rlcc.spec import METADATA_KEY, ObservationSpec

MIN_OPSET = 9
MAX_OPSET = 21  # the newest default-domain opset rlcc has been tested with under onnxruntime
DEFAULT_BATCH = 65536
PROBE_SAMPLES = 4096
# A rate factor is the multiplicative rate change of one decision: outside this range a
# policy's output is not a factor (wrong output, un-normalized network), whatever the clamp.
PLAUSIBLE_FACTOR = (1e-3, 1e3)
_SESSIONS: dict[str, object] = {}  # sha256 of the model bytes -> session, for unpickled policies
# Output activations with a fixed range, and the ops that pass their input through unchanged.
BOUNDED_OUTPUTS = {"Tanh": (-1.0, 1.0), "Sigmoid": (0.0, 1.0)}
_PASS_THROUGH = {"Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten"}


class PicklableSession:
    """Picklable for worker processes (``rlcc.parallel``): the ONNX Runtime session
    (``_session``) is rebuilt from ``model_bytes`` on the other side, once per process."""

    model_bytes: bytes
    path: Path

    def _open(self, path: str | os.PathLike, spec: ObservationSpec | None):
        """Load and check the ONNX file (sets ``path`` and ``model_bytes``): (model, spec given or embedded)."""
        self.path = Path(path)
        model = _load_onnx(self.path)
        self.model_bytes = model.SerializeToString()
        _check_opset(model, self.path)
        return model, spec if spec is not None else spec_from_metadata(model, self.path)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["_session"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        key = hashlib.sha256(self.model_bytes).hexdigest()
        if key not in _SESSIONS:
            _SESSIONS[key] = _make_session(self.model_bytes, self.path)
        self._session = _SESSIONS[key]


class OnnxPolicy(PicklableSession):
    """A validated single-input, single-output ONNX policy plus its observation spec."""

    def __init__(self, path: str | os.PathLike, spec: ObservationSpec | None = None, *, seed: int = 0) -> None:
        model, spec = self._open(path, spec)
        if spec.recurrent is not None:
            raise BadInputError(f"{self.path}: the spec declares recurrent state; load it with rlcc.recurrent.load_policy")
        self.spec = spec
        self.input_name, self.output_name = _check_signature(model, spec, self.path)
        self._declared_output = _shape_text(_dims(model.graph.output[0]))
        self.output_activation = output_activation(model)
        self._session = _make_session(self.model_bytes, self.path)
        _probe(self, seed)

    def predict_raw(self, x: np.ndarray, batch: int = DEFAULT_BATCH) -> np.ndarray:
        """Raw policy output for inputs (N, width), evaluated in batches; shape (N,) float64."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.spec.input_width:
            raise ValueError(f"inputs must have shape (N, {self.spec.input_width})")
        if 0 < len(x) <= batch:  # one chunk (the simulator's per-block calls): no copy into ``out``
            return check_outputs(self.path, self.output_name, self._run(x), len(x), self._declared_output)
        out = np.empty(len(x), dtype=np.float64)
        for start in range(0, len(x), batch):
            chunk = x[start : start + batch]
            out[start : start + len(chunk)] = check_outputs(self.path, self.output_name, self._run(chunk), len(chunk),
                                                            self._declared_output)
        return out

    def _run(self, chunk: np.ndarray):
        try:
            return self._session.run([self.output_name], {self.input_name: chunk})[0]
        except Exception as exc:  # onnxruntime raises its own exception hierarchy
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise BadInputError(f"{self.path}: onnxruntime cannot evaluate the model: {first}") from None

    def factor(self, x: np.ndarray, batch: int = DEFAULT_BATCH) -> np.ndarray:
        """Clamped multiplicative rate factors for inputs (N, width)."""
        return self.spec.output_to_factor(self.predict_raw(x, batch))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.factor(x)


def check_outputs(path: Path, name: str, y, n: int, declared: str = "(batch, 1)") -> np.ndarray:
    """A batch's outputs as (n,) float64, or a clear error when the graph returned another shape."""
    y = np.asarray(y, dtype=np.float64)
    if y.shape not in ((n,), (n, 1)):
        raise BadInputError(f"{path}: output '{name}' has actual shape {_shape_text(list(y.shape))} "
                            f"on a batch of {n}, declared {declared}")
    return y.reshape(n)


def embed_spec(model_path: str | os.PathLike, spec: ObservationSpec, out_path: str | os.PathLike | None = None) -> None:
    """Write ``spec`` into the ONNX model's ``metadata_props`` (replacing any existing one)."""
    import onnx

    model = read_onnx(model_path)
    kept = [p for p in model.metadata_props if p.key != METADATA_KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    entry = model.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, spec.to_json()
    onnx.save(model, str(out_path or model_path))


def output_activation(model) -> tuple[str, float, float] | None:
    """(op, lowest, highest) of the activation that produces the graph's output (Tanh or
    Sigmoid, possibly followed by shape-only ops), or None when the graph ends otherwise:
    the range every output lies in, whatever the input."""
    producer = {out: node for node in model.graph.node for out in node.output}
    node = producer.get(model.graph.output[0].name)
    while node is not None and node.op_type in _PASS_THROUGH and node.domain in ("", "ai.onnx"):
        node = producer.get(node.input[0])
    if node is None or node.domain not in ("", "ai.onnx") or node.op_type not in BOUNDED_OUTPUTS:
        return None
    return (node.op_type, *BOUNDED_OUTPUTS[node.op_type])


def spec_from_metadata(model, path: Path) -> ObservationSpec:
    """The spec stored in an ONNX model's metadata, or a clear error if absent."""
    for prop in model.metadata_props:
        if prop.key == METADATA_KEY:
            return ObservationSpec.from_json(prop.value, source=f"{path.name} metadata")
    raise BadInputError(
        f"{path}: no observation spec (metadata key '{METADATA_KEY}'); pass one with --spec FILE"
    )


def read_onnx(path: str | os.PathLike, load_external_data: bool = True):
    """The ONNX ModelProto of ``path``, read with the bounded reader (``textio.MAX_ONNX_BYTES``);
    external tensors beside it are loaded as ``onnx.load`` would. Parse errors propagate."""
    import onnx
    from onnx.external_data_helper import load_external_data_for_model, uses_external_data

    model = onnx.load_model_from_string(textio.read_bytes(path, "ONNX model", textio.MAX_ONNX_BYTES))
    if load_external_data and any(uses_external_data(t) for t in model.graph.initializer):
        load_external_data_for_model(model, os.path.dirname(os.path.abspath(path)))
    return model


def _load_onnx(path: Path):
    import onnx
    from google.protobuf.message import DecodeError

    if path.is_dir():
        raise BadInputError(f"{path}: is a directory, not an ONNX model")
    if not path.exists():
        raise BadInputError(f"{path}: no such file")
    try:
        model = read_onnx(path)
    except (DecodeError, ValueError, RuntimeError, OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: not an ONNX model ({type(exc).__name__})") from None
    if not model.graph.node and not model.graph.input:
        raise BadInputError(f"{path}: not an ONNX model (empty graph)")
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid"
        raise BadInputError(f"{path}: invalid ONNX model: {first}") from None
    return model


def _check_opset(model, path: Path) -> None:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            if not MIN_OPSET <= imp.version <= MAX_OPSET:
                raise BadInputError(
                    f"{path}: unsupported ONNX opset {imp.version} (supported {MIN_OPSET}..{MAX_OPSET})"
                )
            return
    raise BadInputError(f"{path}: model imports no default-domain opset")


def _dims(value_info) -> list[int | str | None]:
    dims: list[int | str | None] = []
    for d in value_info.type.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return dims


def _shape_text(dims: list[int | str | None]) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def _check_signature(model, spec: ObservationSpec, path: Path) -> tuple[str, str]:
    import onnx

    initializers = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    outputs = list(model.graph.output)
    if len(inputs) != 1:
        hint = ("; a recurrent policy declares its state inputs/outputs in the spec's 'recurrent'"
                if len(inputs) > 1 and len(outputs) > 1 else "")
        raise BadInputError(f"{path}: policy must have exactly one input, found {len(inputs)}{hint}")
    if len(outputs) != 1:
        raise BadInputError(f"{path}: policy must have exactly one output, found {len(outputs)}")
    (inp,), (out,) = inputs, outputs
    if inp.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
        raise BadInputError(f"{path}: input '{inp.name}' must be float32")
    dims = _dims(inp)
    if len(dims) != 2:
        raise BadInputError(f"{path}: input '{inp.name}' must be 2-D (batch, features), has rank {len(dims)}")
    width = dims[1]
    if not isinstance(width, int):
        raise BadInputError(f"{path}: input '{inp.name}' has a dynamic feature dimension; only batch may be dynamic")
    if width != spec.input_width:
        raise BadInputError(
            f"{path}: input width {width} != history {spec.history} x {spec.n_features} features "
            f"= {spec.input_width} declared by the spec"
        )
    out_dims = _dims(out)
    if len(out_dims) not in (1, 2) or (len(out_dims) == 2 and out_dims[1] != 1):
        raise BadInputError(f"{path}: output '{out.name}' must have shape (batch,) or (batch, 1)")
    if out.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
        raise BadInputError(f"{path}: output '{out.name}' must be float32")
    return inp.name, out.name


def _make_session(model_bytes: bytes, path: Path):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1  # determinism and no oversubscription on 2-core CI machines
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    try:
        return ort.InferenceSession(model_bytes, sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception hierarchy
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BadInputError(f"{path}: onnxruntime cannot load the model: {first}") from None


def probe_inputs(spec: ObservationSpec, n: int = PROBE_SAMPLES, seed: int = 0) -> np.ndarray:
    """Plausible policy inputs spanning the operating range (used to sanity-check outputs)."""
    rng = np.random.default_rng(seed)
    size = (n, spec.history)
    prev_action = rng.uniform(spec.action.clamp_min, spec.action.clamp_max, size)
    rtt_ns = spec.reward.base_rtt_ns * rng.uniform(1.0, 30.0, size)
    rate = np.exp(rng.uniform(np.log(1e-4), 0.0, size))
    counts = rng.integers(0, 8, size)
    raw = spec.raw_step_features(prev_action, rtt_ns, rate, counts, counts)
    return spec.assemble(spec.scale_step(raw))


def _probe(policy: OnnxPolicy, seed: int) -> None:
    y = policy.predict_raw(probe_inputs(policy.spec, seed=seed))
    if not np.all(np.isfinite(y)):
        raise BadInputError(f"{policy.path}: policy outputs NaN or inf on probe inputs")
    if policy.spec.action.type == "tanh":
        if np.any(np.abs(y) > 1.0 + 1e-6):
            raise BadInputError(
                f"{policy.path}: tanh-mapped policy output outside [-1, 1] on probe inputs "
                f"(range {y.min():.4g}..{y.max():.4g})"
            )
    elif np.all(y <= 0):
        # A clipped linear output may leave (0, inf) on the extreme probe windows (deep
        # congestion, the longest RTTs; the clamp takes over there); it must be a factor somewhere.
        raise BadInputError(f"{policy.path}: factor output <= 0 on every probe input (max {y.max():.4g})")
    else:
        lo, hi = PLAUSIBLE_FACTOR
        if np.all((y < lo) | (y > hi)):
            raise BadInputError(
                f"{policy.path}: factor output outside the plausible range [{lo:g}, {hi:g}] on every probe input "
                f"(range {y.min():.4g}..{y.max():.4g})"
            )
    # Beyond the clamp on every input, the clamped teacher is a constant at the clamp: the
    # "compiled" firmware would move every rate by that factor at every RTT, whatever happens.
    factor, action = policy.spec.output_to_unclamped_factor(y), policy.spec.action
    for beyond, side, bound in ((factor > action.clamp_max, "above clamp_max", action.clamp_max),
                                (factor < action.clamp_min, "below clamp_min", action.clamp_min)):
        if np.all(beyond):
            raise BadInputError(
                f"{policy.path}: rate factor {side} {bound:g} on every probe input "
                f"(range {factor.min():.4g}..{factor.max():.4g}): check the output and the spec's action"
            )
