"""The observation spec: what each input of a policy means, versioned JSON.

The simulator, the quantizer, the golden model and the generated firmware all compute a
policy's inputs from this one description, so they see the same numbers. The spec travels
inside the ONNX file (``metadata_props`` key ``rlcc.spec``) or beside it (``--spec FILE``).

Input layout: the policy input is a window of ``history`` steps, each step a vector of the
declared features (after their affine ``scale * raw + offset``). Steps are laid out step-major
(all features of one step, then the next step) in ``step_order``: ``oldest_first`` puts the
current step last, ``newest_first`` puts it first. At a flow's first decision the window is
filled with copies of that first step (previous action 1.0).
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Mapping, Sequence

import numpy as np

from rlcc import textio
from rlcc import derived as derived_vocab
from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.errors import BadInputError

SPEC_VERSION = 1
METADATA_KEY = "rlcc.spec"

STEP_ORDERS = ("oldest_first", "newest_first")
ACTION_TYPES = ("factor", "tanh")
TANH_MAPS = ("linear", "asymmetric")
MAX_HISTORY = 8
# Recurrent state: values per flow a spec may declare (any backend must then place them somewhere;
# the per-flow context and the device's global flow table are sized far below this).
MAX_STATE_VALUES = 1024
# Base RTT range: keeps the device's 2^32 / base_rtt reciprocal within 32 bits and RTTs sane.
MIN_BASE_RTT_NS = 100
MAX_BASE_RTT_NS = 1_000_000_000


@dataclasses.dataclass(frozen=True)
class Feature:
    """One per-step input: ``scale * raw + offset`` of a vocabulary feature."""

    name: str
    scale: float = 1.0
    offset: float = 0.0


@dataclasses.dataclass(frozen=True)
class Reward:
    """Parameters of the RL-CC observation/reward terms."""

    target: float = 0.064
    beta: float = 1.5
    base_rtt_ns: int = 8000


@dataclasses.dataclass(frozen=True)
class Action:
    """How the policy output becomes a multiplicative rate factor.

    ``factor``: the output is the factor. ``tanh``: the output y in [-1, 1] is mapped by
    ``linear`` (1 + gain*y) or ``asymmetric`` (y >= 0: 1 + gain*y, else 1 / (1 - gain*y)).
    The factor is then clamped to [clamp_min, clamp_max].
    """

    type: str = "tanh"
    map: str = "asymmetric"
    gain: float = 0.2
    clamp_min: float = 0.8
    clamp_max: float = 1.25


@dataclasses.dataclass(frozen=True)
class RateLimits:
    """Rate bounds as fractions of line rate: a new flow starts at ``initial``."""

    initial: float = 1.0
    min: float = 1.0 / 16384


@dataclasses.dataclass(frozen=True)
class StateTensor:
    """One recurrent state tensor: ONNX graph input ``input`` (batch, size) float32 is fed, at the
    flow's next decision, what graph output ``output`` returned at this one; ``reset`` at a new flow."""

    name: str
    input: str
    output: str
    size: int
    reset: float = 0.0


@dataclasses.dataclass(frozen=True)
class Recurrent:
    """A recurrent policy's per-flow state (the explicit h/c convention of ``rlcc_lstm.onnx``)."""

    state: tuple[StateTensor, ...]

    @property
    def size(self) -> int:
        """State values per flow, all tensors."""
        return sum(t.size for t in self.state)

    def to_dict(self) -> dict[str, Any]:
        return {"state": [dataclasses.asdict(t) for t in self.state]}


@dataclasses.dataclass(frozen=True)
class ObservationSpec:
    """A validated, immutable observation spec (see module docstring for the layout)."""

    features: tuple[Feature, ...]
    history: int = 2
    step_order: str = "oldest_first"
    reward: Reward = Reward()
    action: Action = Action()
    rate: RateLimits = RateLimits()
    # Student-only inputs after the window (``rlcc.derived``): the teacher never sees them.
    derived: tuple[str, ...] = ()
    # Recurrent teachers: per-flow state carried between decisions (None: a window policy).
    recurrent: Recurrent | None = None

    def __post_init__(self) -> None:
        _validate(self)

    # ---- layout -------------------------------------------------------------------------
    @property
    def n_features(self) -> int:
        return len(self.features)

    @property
    def input_width(self) -> int:
        return self.history * self.n_features

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.features)

    @property
    def uses_counters(self) -> bool:
        """Whether a feature reads the CNP/NACK counters (else each decision depends only on its
        own window, and the simulator may decide blocks of steps at once)."""
        return any(vocab.get(name).counts for name in self.feature_names)

    def input_index(self, steps_ago: int, feature: int) -> int:
        """Index in the input vector of ``feature`` at ``steps_ago`` (0 = current step)."""
        if not 0 <= steps_ago < self.history or not 0 <= feature < self.n_features:
            raise IndexError("step or feature out of range")
        slot = self.history - 1 - steps_ago if self.step_order == "oldest_first" else steps_ago
        return slot * self.n_features + feature

    def locate_input(self, index: int) -> tuple[int, int]:
        """Inverse of :meth:`input_index`: (steps_ago, feature) of input ``index``."""
        if not 0 <= index < self.input_width:
            raise IndexError(f"input {index} out of range 0..{self.input_width - 1}")
        slot, feature = divmod(index, self.n_features)
        steps_ago = self.history - 1 - slot if self.step_order == "oldest_first" else slot
        return steps_ago, feature

    @property
    def student_width(self) -> int:
        """Inputs of a distilled student: the window, then the derived inputs."""
        return self.input_width + len(self.derived)

    def derived_sources(self, k: int) -> tuple[int, int]:
        """(current, previous) window input indices derived input ``k`` reads."""
        f = self.feature_names.index(derived_vocab.get(self.derived[k]).source)
        return self.input_index(0, f), self.input_index(1, f)

    def student_input_names(self) -> list[str]:
        return self.input_names() + [f"{name}[t]" for name in self.derived]

    def student_obs(self, obs: np.ndarray) -> np.ndarray:
        """Float student inputs (N, student_width) float32 from the teacher's (N, input_width):
        derived inputs from the unscaled window values they read."""
        obs = np.asarray(obs)
        if not self.derived:
            return obs
        cols = [obs]
        for k, name in enumerate(self.derived):
            d = derived_vocab.get(name)
            feat = self.features[self.feature_names.index(d.source)]
            cur, prev = (((obs[:, i].astype(np.float64) - feat.offset) / feat.scale) for i in self.derived_sources(k))
            cols.append(d.float_value(cur, prev)[:, None])
        return np.ascontiguousarray(np.concatenate(cols, axis=1), dtype=np.float32)

    def input_names(self) -> list[str]:
        """Readable name of every input, e.g. ``delta[t-1]``."""
        names = [""] * self.input_width
        for ago in range(self.history):
            for f, feat in enumerate(self.features):
                names[self.input_index(ago, f)] = f"{feat.name}[t]" if ago == 0 else f"{feat.name}[t-{ago}]"
        return names

    # ---- float reference semantics --------------------------------------------------------
    def raw_step_features(
        self,
        prev_action: np.ndarray,
        rtt_ns: np.ndarray,
        rate: np.ndarray,
        cnp_count: np.ndarray | None = None,
        nack_count: np.ndarray | None = None,
    ) -> np.ndarray:
        """Raw (unscaled) vocabulary values, shape (N, n_features), float64 (``rlcc.features``)."""
        step = vocab.FloatStep(self.reward, prev_action, rtt_ns, rate, cnp_count, nack_count)
        return np.stack([np.broadcast_to(vocab.get(f.name).float_value(step), step.rate.shape)
                         for f in self.features], axis=-1)

    def scale_step(self, raw: np.ndarray) -> np.ndarray:
        """Apply each feature's affine map to raw step values (..., n_features)."""
        scale = np.array([f.scale for f in self.features])
        offset = np.array([f.offset for f in self.features])
        return raw * scale + offset

    def assemble(self, steps: np.ndarray) -> np.ndarray:
        """Policy input (N, width) float32 from scaled steps (N, history, F), index 0 = current."""
        steps = np.asarray(steps)
        if steps.ndim != 3 or steps.shape[1:] != (self.history, self.n_features):
            raise ValueError(f"steps must have shape (N, {self.history}, {self.n_features})")
        ordered = steps[:, ::-1, :] if self.step_order == "oldest_first" else steps
        return np.ascontiguousarray(ordered.reshape(len(steps), -1), dtype=np.float32)

    def output_to_unclamped_factor(self, y: np.ndarray) -> np.ndarray:
        """Map raw policy outputs to multiplicative rate factors before the clamp (float64)."""
        y = np.asarray(y, dtype=np.float64)
        a = self.action
        if a.type == "factor":
            return y
        if a.map == "linear":
            return 1.0 + a.gain * y
        return np.where(y >= 0, 1.0 + a.gain * y, 1.0 / (1.0 - a.gain * np.minimum(y, 0.0)))

    def output_to_factor(self, y: np.ndarray) -> np.ndarray:
        """Map raw policy outputs to clamped multiplicative rate factors (float64)."""
        return np.clip(self.output_to_unclamped_factor(y), self.action.clamp_min, self.action.clamp_max)

    # ---- JSON -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "rlcc_spec": SPEC_VERSION,
            "features": [dataclasses.asdict(f) for f in self.features],
            "history": self.history,
            "step_order": self.step_order,
            "reward": dataclasses.asdict(self.reward),
            "action": dataclasses.asdict(self.action),
            "rate": dataclasses.asdict(self.rate),
            **({"derived": list(self.derived)} if self.derived else {}),
            **({"recurrent": self.recurrent.to_dict()} if self.recurrent else {}),
        }

    def to_json(self) -> str:
        """Canonical JSON (sorted keys) so the same spec always serializes to the same bytes."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=2) + "\n"

    @classmethod
    def from_dict(cls, data: Any) -> "ObservationSpec":
        if not isinstance(data, Mapping):
            raise BadInputError("invalid spec: top level must be a JSON object")
        version = data.get("rlcc_spec")
        if version != SPEC_VERSION:
            raise BadInputError(f"invalid spec: 'rlcc_spec' must be {SPEC_VERSION}, got {version!r}")
        known = {"rlcc_spec", "features", "history", "step_order", "reward", "action", "rate", "derived", "recurrent"}
        _no_unknown_keys(data, known, "spec")
        feats = data.get("features")
        if not isinstance(feats, Sequence) or isinstance(feats, (str, bytes)) or not feats:
            raise BadInputError("invalid spec: 'features' must be a non-empty list")
        features = tuple(_build(Feature, f, f"features[{i}]") for i, f in enumerate(feats))
        return cls(
            features=features,
            history=_int(data.get("history", 2), "history"),
            step_order=data.get("step_order", "oldest_first"),
            reward=_build(Reward, data.get("reward", {}), "reward"),
            action=_build(Action, data.get("action", {}), "action"),
            rate=_build(RateLimits, data.get("rate", {}), "rate"),
            derived=_names(data.get("derived", []), "derived"),
            recurrent=_recurrent(data["recurrent"]) if "recurrent" in data else None,
        )

    @classmethod
    def from_json(cls, text: str | bytes, source: str = "spec") -> "ObservationSpec":
        return cls.from_dict(textio.parse_json(text, "spec", source))

    @classmethod
    def from_file(cls, path: str) -> "ObservationSpec":
        return cls.from_json(textio.read_bytes(path, "spec file"), source=path)


def _no_unknown_keys(data: Mapping, known: set[str], where: str) -> None:
    unknown = sorted(set(data) - known)
    if unknown:
        raise BadInputError(f"invalid spec: unknown key(s) in {where}: {', '.join(map(str, unknown))}")


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInputError(f"invalid spec: '{where}' must be an integer, got {value!r}")
    return value


def _build(kind: type, data: Any, where: str) -> Any:
    """Build a spec dataclass from a JSON object, checking key names and value types."""
    if not isinstance(data, Mapping):
        raise BadInputError(f"invalid spec: '{where}' must be an object")
    fields = {f.name: f for f in dataclasses.fields(kind)}
    _no_unknown_keys(data, set(fields), where)
    kwargs = {}
    for name, value in data.items():
        kind_name = fields[name].type  # annotations are strings here: "str", "int" or "float"
        if kind_name == "str":
            ok = isinstance(value, str)
        elif kind_name == "int":
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            value = float(value) if ok else value
        if not ok:
            raise BadInputError(f"invalid spec: '{where}.{name}' has invalid value {value!r}")
        kwargs[name] = value
    if kind is Feature and "name" not in kwargs:
        raise BadInputError(f"invalid spec: '{where}' needs a 'name'")
    return kind(**kwargs)


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)) or not all(isinstance(v, str) for v in value):
        raise BadInputError(f"invalid spec: '{where}' must be a list of names")
    return tuple(value)


def _recurrent(data: Any) -> Recurrent:
    if not isinstance(data, Mapping):
        raise BadInputError("invalid spec: 'recurrent' must be an object")
    _no_unknown_keys(data, {"state"}, "recurrent")
    tensors = data.get("state")
    if not isinstance(tensors, Sequence) or isinstance(tensors, (str, bytes)) or not tensors:
        raise BadInputError("invalid spec: 'recurrent.state' must be a non-empty list")
    state = []
    for i, t in enumerate(tensors):
        where = f"recurrent.state[{i}]"
        if not isinstance(t, Mapping) or not {"name", "input", "output", "size"} <= set(t):
            raise BadInputError(f"invalid spec: '{where}' needs name, input, output and size")
        state.append(_build(StateTensor, t, where))
    return Recurrent(tuple(state))


def _validate_recurrent(rec: Recurrent) -> None:
    for field in ("name", "input", "output"):
        values = [getattr(t, field) for t in rec.state]
        if len(set(values)) != len(values):
            raise BadInputError(f"invalid spec: recurrent state {field} listed twice")
    for t in rec.state:
        if t.input == t.output:
            raise BadInputError(f"invalid spec: recurrent state {t.name!r} reads and writes the same tensor {t.input!r}")
        if t.size < 1:
            raise BadInputError(f"invalid spec: recurrent state {t.name!r} needs size >= 1, got {t.size}")
    if rec.size > MAX_STATE_VALUES:
        raise BadInputError(
            f"invalid spec: recurrent state of {rec.size} values per flow is too large for any placement "
            f"(at most {MAX_STATE_VALUES})"
        )


def _validate(spec: ObservationSpec) -> None:
    for i, f in enumerate(spec.features):
        if f.name not in vocab.REGISTRY:
            raise BadInputError(
                f"invalid spec: unknown feature {f.name!r} in features[{i}] "
                f"(known: {', '.join(vocab.known())})"
            )
        if f.scale == 0 or not math.isfinite(f.scale) or not math.isfinite(f.offset):
            raise BadInputError(f"invalid spec: feature {f.name!r} needs a finite non-zero scale")
    if len(set(spec.feature_names)) != len(spec.features):
        raise BadInputError("invalid spec: a feature is listed twice")
    if not 1 <= spec.history <= MAX_HISTORY:
        raise BadInputError(f"invalid spec: 'history' must be in 1..{MAX_HISTORY}, got {spec.history}")
    if spec.step_order not in STEP_ORDERS:
        raise BadInputError(f"invalid spec: 'step_order' must be one of {', '.join(STEP_ORDERS)}")
    r = spec.reward
    if not (r.target > 0 and r.beta >= 0):
        raise BadInputError("invalid spec: reward needs target > 0 and beta >= 0")
    if not MIN_BASE_RTT_NS <= r.base_rtt_ns <= MAX_BASE_RTT_NS:
        raise BadInputError(
            f"invalid spec: 'reward.base_rtt_ns' must be in {MIN_BASE_RTT_NS}..{MAX_BASE_RTT_NS}, got {r.base_rtt_ns}"
        )
    a = spec.action
    if a.type not in ACTION_TYPES:
        raise BadInputError(f"invalid spec: 'action.type' must be one of {', '.join(ACTION_TYPES)}")
    if a.type == "tanh" and a.map not in TANH_MAPS:
        raise BadInputError(f"invalid spec: 'action.map' must be one of {', '.join(TANH_MAPS)}")
    if a.type == "tanh" and not 0 < a.gain < 1:
        raise BadInputError("invalid spec: 'action.gain' must be in (0, 1)")
    if not 0 < a.clamp_min <= 1 <= a.clamp_max < 16:
        raise BadInputError("invalid spec: action clamp needs 0 < clamp_min <= 1 <= clamp_max < 16")
    for name in spec.derived:
        if name not in derived_vocab.REGISTRY:
            raise BadInputError(f"invalid spec: unknown derived input {name!r} (known: {', '.join(derived_vocab.known())})")
        src = derived_vocab.get(name).source
        if src not in spec.feature_names or spec.history < 2:
            raise BadInputError(f"invalid spec: derived input {name!r} needs feature {src!r} and history >= 2")
    if len(set(spec.derived)) != len(spec.derived):
        raise BadInputError("invalid spec: a derived input is listed twice")
    window_words = (spec.history - 1) * len(spec.features)
    if spec.derived and window_words + len(spec.derived) > fmt.CTX_HISTORY_WORDS:
        raise BadInputError(f"invalid spec: each derived input keeps a context word (its previous step's state); the "
                            f"window's {window_words} history words leave {max(fmt.CTX_HISTORY_WORDS - window_words, 0)} "
                            f"of {fmt.CTX_HISTORY_WORDS}, {len(spec.derived)} needed")
    if spec.recurrent is not None:
        _validate_recurrent(spec.recurrent)
    if not 0 < spec.rate.min <= spec.rate.initial <= 1:
        raise BadInputError("invalid spec: rate needs 0 < min <= initial <= 1")
