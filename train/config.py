"""Training run configuration: one JSON file fully determines a run (with its seed).

The file written next to a shipped model (e.g. ``examples/rlcc_mlp.train.json``) is exactly
what ``rlcc-train --config`` reads, so a model can always be retrained from its config.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Mapping

from rlcc import textio
from rlcc.errors import BadInputError
from rlcc.spec import ObservationSpec
from rlcc.train.lstm import MAX_HIDDEN, MAX_STATE_VALUES
from rlcc.train.mlp import HIDDEN_ACTIVATIONS, OUTPUTS

ARCHS = ("mlp", "lstm")

DEFAULT_SPEC: dict[str, Any] = {
    "rlcc_spec": 1,
    "features": [
        {"name": "prev_action", "scale": 1.0, "offset": -1.0},
        {"name": "delta", "scale": 10.0, "offset": 0.0},
    ],
    "history": 2,
    "step_order": "oldest_first",
    "reward": {"target": 0.064, "beta": 1.5, "base_rtt_ns": 8000},
    "action": {"type": "tanh", "map": "asymmetric", "gain": 0.2, "clamp_min": 0.8, "clamp_max": 1.25},
    "rate": {"initial": 1.0, "min": 1.0 / 16384},
}

# Small incasts on a 2 MB buffer: the line-rate start congests the port but the RTT stays
# short (<= 168 us), so each 6 ms episode holds many decisions per flow.
DEFAULT_SCENARIOS: list[dict[str, Any]] = [
    {"kind": "many-to-one", "flows": n, "duration_ms": 6.0, "network": {"buffer_bytes": 2_000_000}} for n in (2, 4, 8)
]


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of an ADPG run.

    ``rollout``: decisions per flow averaged into one ADPG weight (the papers' finite T);
    ``delta_clip``: |delta| bound in the gradient weight (2 x target): delta is at most
    +target but reaches -100 in a startup incast, and unclipped that transient drowns the
    under-utilized signal (the positive-delta ReLUs die and the policy stops probing up);
    ``scenarios``: simulator scenario dicts, all run every iteration with seed
    ``seed + iteration`` (fresh probe phases).

    ``arch``: ``"mlp"`` (``hidden`` layer widths, input = the spec's window) or ``"lstm"``
    (``lstm_pre`` FC pre-layer widths, an LSTM cell of ``lstm_hidden`` units, spec ``history``
    1: the per-flow state carries the past; h + c at most ``MAX_STATE_VALUES``). The MLP's
    ``activation`` (hidden layers), ``bias`` and ``output`` (``tanh``, or ``identity`` for a
    direct factor or the spec's linear map) default to the papers' network; they are written to
    the config file only when they differ from it, so older configs stay byte-identical.
    """

    seed: int = 0
    iterations: int = 100
    lr: float = 0.02
    arch: str = "mlp"
    hidden: tuple[int, ...] = (12, 12)
    lstm_hidden: int = 8
    lstm_pre: tuple[int, ...] = ()
    init_out_scale: float = 0.1
    rollout: int = 16
    delta_clip: float = 0.128
    scenarios: tuple[dict[str, Any], ...] = tuple(DEFAULT_SCENARIOS)
    spec: dict[str, Any] = dataclasses.field(default_factory=lambda: dict(DEFAULT_SPEC))
    trace_capacity: int = 400_000
    activation: str = "relu"
    bias: bool = False
    output: str = "tanh"

    def __post_init__(self) -> None:
        if self.iterations < 0 or self.rollout < 1 or self.lr <= 0 or self.delta_clip <= 0:
            raise BadInputError("invalid train config: need iterations >= 0, rollout >= 1, lr > 0, delta_clip > 0")
        if not self.hidden or any(h < 1 for h in self.hidden):
            raise BadInputError("invalid train config: 'hidden' must list positive layer widths")
        if self.arch not in ARCHS:
            raise BadInputError(f"invalid train config: 'arch' must be one of {', '.join(ARCHS)}, got {self.arch!r}")
        if not isinstance(self.lstm_hidden, int) or not 1 <= self.lstm_hidden <= MAX_HIDDEN:
            raise BadInputError(
                f"invalid train config: 'lstm_hidden' must be 1..{MAX_HIDDEN} (h + c of a flow at most "
                f"{MAX_STATE_VALUES} values, the device's per-flow state budget), got {self.lstm_hidden}"
            )
        if self.activation not in HIDDEN_ACTIVATIONS or self.output not in OUTPUTS or not isinstance(self.bias, bool):
            raise BadInputError(f"invalid train config: 'activation' must be one of {', '.join(HIDDEN_ACTIVATIONS)}, "
                                f"'output' one of {', '.join(OUTPUTS)}, 'bias' true or false")
        if any(h < 1 for h in self.lstm_pre):
            raise BadInputError("invalid train config: 'lstm_pre' must list positive layer widths")
        if not self.scenarios:
            raise BadInputError("invalid train config: 'scenarios' must not be empty")
        spec = self.observation_spec()
        if self.arch == "lstm" and spec.history != 1:
            raise BadInputError(
                f"invalid train config: arch 'lstm' sees one step per decision (its state carries the past): "
                f"set spec history to 1, not {spec.history}"
            )
        self.scenario_objects()

    def observation_spec(self) -> ObservationSpec:
        return ObservationSpec.from_dict(self.spec)

    def with_arch(self, arch: str) -> "TrainConfig":
        """This config for another architecture (the CLI's ``--arch``): ``lstm`` also sets the
        spec's history to 1 (one step per decision)."""
        spec = dict(self.spec)
        if arch == "lstm":
            spec["history"] = 1
        return dataclasses.replace(self, arch=arch, spec=spec)

    def scenario_objects(self, seed_offset: int = 0) -> list:
        from rlcc.simulator.scenarios import Scenario

        out = []
        for s in self.scenarios:
            data = dict(s)
            data["seed"] = int(data.get("seed", 0)) + self.seed + seed_offset
            out.append(Scenario.from_dict(data))
        return out

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["hidden"] = list(self.hidden)
        data["lstm_pre"] = list(self.lstm_pre)
        data["scenarios"] = [dict(s) for s in self.scenarios]
        for name in _WRITTEN_IF_SET:
            if data[name] == getattr(TrainConfig, name):
                del data[name]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, indent=2) + "\n"

    @classmethod
    def from_dict(cls, data: Any) -> "TrainConfig":
        if not isinstance(data, Mapping):
            raise BadInputError("invalid train config: top level must be a JSON object")
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - fields)
        if unknown:
            raise BadInputError(f"invalid train config: unknown key(s) {', '.join(unknown)}")
        kwargs = dict(data)
        for key in ("hidden", "lstm_pre"):
            if key in kwargs:
                try:
                    kwargs[key] = tuple(kwargs[key])
                except TypeError:
                    raise BadInputError(f"invalid train config: '{key}' must be a list of layer widths") from None
        if "scenarios" in kwargs:
            kwargs["scenarios"] = tuple(kwargs["scenarios"])
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise BadInputError(f"invalid train config: {exc}") from None

    @classmethod
    def from_file(cls, path: str | Path) -> "TrainConfig":
        return cls.from_dict(read_json_config(path, "train config"))


# MLP options added after the first shipped configs: written only when not the papers' network.
_WRITTEN_IF_SET = ("activation", "bias", "output")


def read_json_config(path: str | Path, what: str) -> Any:
    """The parsed JSON of a config file; BadInputError (exit 3) naming ``what`` if unreadable or not JSON."""
    return textio.load_json(path, what)
