"""The switch-agent spec (ACC): a per-egress-queue ECN tuner's inputs, action table and reward.

ACC (Yan et al., "ACC: Automatic ECN Tuning for High-Speed Datacenter Networks", SIGCOMM 2021)
runs one agent per switch. Every monitoring interval ``interval_us`` it reads each egress queue's
statistics, keeps the last ``history`` (k = 3) intervals, and picks one ECN template
(Kmin, Kmax, Pmax) from a discrete table. This module is the contract every stage shares:

- **Device statistics** (what the switch's telemetry hands the agent per queue and interval, all
  unsigned 32-bit): ``qlen_bytes`` (egress queue depth at the interval's end), ``tx_bytes``
  (bytes transmitted during the interval), ``marked_pkts`` (ECN-marked packets transmitted).
- **Features** (integers, computed by the collector: ``rlcc.fxp.switch_agent``):
  ``qlen`` = qlen_bytes; ``tx_util`` and ``mark_util`` = Q16 fractions of the port's bytes per
  interval, by one widening multiply with the port's ``util_mul`` = round(2^48 / bytes per
  interval) (no division on the device); ``ecn_action`` = the template index in force.
- **Policy inputs** (float32, what the Q-network sees): each feature times its fixed scale
  (:meth:`SwitchAgentSpec.normalize`), laid out step-major, oldest interval first. Because every
  input is a monotone function of one integer feature, a tree split on it is exactly an integer
  threshold on the device value.
- **Actions**: the Q-network outputs one Q-value per template; the agent applies the argmax.
  Pmax is a Q16 fraction on the device (``pmax_q16``); the simulator uses the same value.

The spec travels in the ONNX file's ``metadata_props`` under :data:`METADATA_KEY`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Mapping, Sequence

import numpy as np

from rlcc import textio
from rlcc.errors import BadInputError

SWITCH_SPEC_VERSION = 1
METADATA_KEY = "rlcc.switch_agent"

# Device formats.
STAT_MAX = 0xFFFFFFFF  # every statistic register is an unsigned 32-bit counter (saturating)
UTIL_FRAC_BITS = 16  # tx_util / mark_util: Q16 fraction of the port's bytes per interval
UTIL_ONE = 1 << UTIL_FRAC_BITS
UTIL_MUL_SHIFT = 32  # util = (bytes * util_mul) >> 32: the high word of one 32x32 multiply
PMAX_FRAC_BITS = 16
PMAX_ONE = 1 << PMAX_FRAC_BITS
# util_mul = round(2^48 / bytes per interval) must fit 32 bits: at least 2^16 bytes per interval.
MIN_BYTES_PER_INTERVAL = 1 << (UTIL_FRAC_BITS + UTIL_MUL_SHIFT - 32)

STATS = ("qlen_bytes", "tx_bytes", "marked_pkts")
# Feature name -> (meaning, largest device value); the order is the collector's.
FEATURES: dict[str, str] = {
    "qlen": "egress queue depth at the interval's end (bytes)",
    "tx_util": "bytes transmitted in the interval / port bytes per interval (Q16)",
    "mark_util": "ECN-marked bytes transmitted / port bytes per interval (Q16; packets x packet_bytes)",
    "ecn_action": "index of the ECN template in force during the interval",
}
MAX_HISTORY = 8
MAX_ACTIONS = 64  # the action index is one byte in the per-queue context; 64 keeps trees' leaves small
MIN_INTERVAL_US = 1.0
MAX_INTERVAL_US = 1e6
MAX_THRESHOLD_BYTES = STAT_MAX


@dataclasses.dataclass(frozen=True)
class EcnTemplate:
    """One ECN/RED configuration: mark with probability rising linearly from 0 at ``kmin_bytes``
    to ``pmax`` at ``kmax_bytes``, every packet above ``kmax_bytes``."""

    kmin_bytes: int
    kmax_bytes: int
    pmax: float

    @property
    def pmax_q16(self) -> int:
        return int(round(self.pmax * PMAX_ONE))

    @property
    def pmax_device(self) -> float:
        """The marking probability the device (and the simulator) applies: pmax_q16 / 2^16."""
        return self.pmax_q16 / PMAX_ONE

    def label(self) -> str:
        return f"{self.kmin_bytes // 1000}K/{self.kmax_bytes // 1000}K/{100 * self.pmax:g}%"


@dataclasses.dataclass(frozen=True)
class SwitchReward:
    """ACC's reward r = w_util * txRate/BW + w_queue * D(L) (the paper's Eq. 2 and Figure 4).

    D(L) = 1 - n / levels with n the first level whose E(n) = queue_step_bytes * 2^n >= L (the
    average queue over the interval); L above every level scores 0."""

    w_util: float = 0.7
    w_queue: float = 0.3
    queue_step_bytes: int = 20_000
    queue_levels: int = 10

    def queue_score(self, avg_qlen_bytes: np.ndarray) -> np.ndarray:
        levels = self.queue_step_bytes * 2.0 ** np.arange(self.queue_levels)
        n = np.searchsorted(levels, np.asarray(avg_qlen_bytes, dtype=np.float64), side="left")
        return 1.0 - n / self.queue_levels

    def __call__(self, util: np.ndarray, avg_qlen_bytes: np.ndarray) -> np.ndarray:
        return self.w_util * np.asarray(util, dtype=np.float64) + self.w_queue * self.queue_score(avg_qlen_bytes)


@dataclasses.dataclass(frozen=True)
class SwitchAgentSpec:
    """A validated switch-agent spec (see the module docstring)."""

    actions: tuple[EcnTemplate, ...]
    features: tuple[str, ...] = tuple(FEATURES)
    history: int = 3
    interval_us: float = 100.0
    qlen_norm_bytes: int = 1_000_000
    packet_bytes: int = 1024
    initial_action: int = 0
    reward: SwitchReward = SwitchReward()

    def __post_init__(self) -> None:
        _validate(self)

    # ---- layout ---------------------------------------------------------------------------
    @property
    def n_actions(self) -> int:
        return len(self.actions)

    @property
    def n_features(self) -> int:
        return len(self.features)

    @property
    def input_width(self) -> int:
        return self.history * self.n_features

    @property
    def interval_ns(self) -> int:
        return int(round(self.interval_us * 1000.0))

    def input_index(self, intervals_ago: int, feature: int) -> int:
        """Index in the input vector of ``feature`` ``intervals_ago`` intervals back (0 = last)."""
        if not 0 <= intervals_ago < self.history or not 0 <= feature < self.n_features:
            raise IndexError("interval or feature out of range")
        return (self.history - 1 - intervals_ago) * self.n_features + feature

    def input_names(self) -> list[str]:
        return [f"{name}[t-{self.history - 1 - s}]" if s < self.history - 1 else f"{name}[t]"
                for s in range(self.history) for name in self.features]

    def scales(self) -> np.ndarray:
        """(n_features,) float64: policy input = device feature x scale."""
        per = {"qlen": 1.0 / self.qlen_norm_bytes, "tx_util": 1.0 / UTIL_ONE, "mark_util": 1.0 / UTIL_ONE,
               "ecn_action": 1.0 / max(self.n_actions - 1, 1)}
        return np.array([per[name] for name in self.features])

    def feature_max(self) -> np.ndarray:
        """(n_features,) int64: the largest device value of each feature."""
        per = {"qlen": STAT_MAX, "tx_util": UTIL_ONE, "mark_util": UTIL_ONE, "ecn_action": self.n_actions - 1}
        return np.array([per[name] for name in self.features], dtype=np.int64)

    def normalize(self, window: np.ndarray) -> np.ndarray:
        """Policy inputs (N, input_width) float32 from integer device windows of the same shape."""
        w = np.asarray(window, dtype=np.float64)
        return (w * np.tile(self.scales(), self.history)).astype(np.float32)

    # ---- device constants --------------------------------------------------------------------
    def bytes_per_interval(self, port_gbps: float) -> float:
        return port_gbps / 8.0 * self.interval_ns

    def util_mul(self, port_gbps: float) -> int:
        """The port's Q16 utilization multiplier round(2^48 / bytes per interval) (fits 32 bits)."""
        bpi = self.bytes_per_interval(port_gbps)
        if bpi < MIN_BYTES_PER_INTERVAL:
            raise BadInputError(
                f"invalid switch-agent spec: a {port_gbps:g} Gb/s port moves only {bpi:.0f} bytes per "
                f"{self.interval_us:g} us interval; the device format needs >= {MIN_BYTES_PER_INTERVAL}"
            )
        return min(int(round(2.0 ** (UTIL_FRAC_BITS + UTIL_MUL_SHIFT) / bpi)), STAT_MAX)

    def check_sim_step(self, dt_ns: float) -> int:
        """Monitoring intervals in whole simulator steps; Δt below one step is bad input."""
        if self.interval_ns < dt_ns:
            raise BadInputError(
                f"invalid switch-agent spec: interval {self.interval_us:g} us is below the simulator step "
                f"{dt_ns / 1000:g} us"
            )
        return max(1, int(round(self.interval_ns / dt_ns)))

    # ---- JSON --------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "rlcc_switch_agent": SWITCH_SPEC_VERSION,
            "features": list(self.features),
            "history": self.history,
            "interval_us": self.interval_us,
            "qlen_norm_bytes": self.qlen_norm_bytes,
            "packet_bytes": self.packet_bytes,
            "initial_action": self.initial_action,
            "actions": [dataclasses.asdict(a) for a in self.actions],
            "reward": dataclasses.asdict(self.reward),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Any) -> "SwitchAgentSpec":
        if not isinstance(data, Mapping):
            raise BadInputError("invalid switch-agent spec: top level must be a JSON object")
        version = data.get("rlcc_switch_agent")
        if version != SWITCH_SPEC_VERSION:
            raise BadInputError(f"invalid switch-agent spec: 'rlcc_switch_agent' must be {SWITCH_SPEC_VERSION}, got {version!r}")
        known = {"rlcc_switch_agent", "features", "history", "interval_us", "qlen_norm_bytes", "packet_bytes",
                 "initial_action", "actions", "reward"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise BadInputError(f"invalid switch-agent spec: unknown key(s): {', '.join(map(str, unknown))}")
        acts = data.get("actions")
        if not isinstance(acts, Sequence) or isinstance(acts, (str, bytes)):
            raise BadInputError("invalid switch-agent spec: 'actions' must be a list of ECN templates")
        actions = tuple(_build(EcnTemplate, a, f"actions[{i}]", required=True) for i, a in enumerate(acts))
        feats = data.get("features", list(FEATURES))
        if not isinstance(feats, Sequence) or isinstance(feats, (str, bytes)) or not all(isinstance(f, str) for f in feats):
            raise BadInputError("invalid switch-agent spec: 'features' must be a list of names")
        return cls(
            actions=actions,
            features=tuple(feats),
            history=_typed(data.get("history", 3), int, "history"),
            interval_us=float(_typed(data.get("interval_us", 100.0), float, "interval_us")),
            qlen_norm_bytes=_typed(data.get("qlen_norm_bytes", 1_000_000), int, "qlen_norm_bytes"),
            packet_bytes=_typed(data.get("packet_bytes", 1024), int, "packet_bytes"),
            initial_action=_typed(data.get("initial_action", 0), int, "initial_action"),
            reward=_build(SwitchReward, data.get("reward", {}), "reward"),
        )

    @classmethod
    def from_json(cls, text: str | bytes, source: str = "spec") -> "SwitchAgentSpec":
        return cls.from_dict(textio.parse_json(text, "switch-agent spec", source))


def _typed(value: Any, kind: type, where: str) -> Any:
    ok = not isinstance(value, bool) and (isinstance(value, int) if kind is int else isinstance(value, (int, float)))
    if not ok or (kind is float and not math.isfinite(value)):
        raise BadInputError(f"invalid switch-agent spec: '{where}' must be {'an integer' if kind is int else 'a number'}, got {value!r}")
    return value


def _build(kind: type, data: Any, where: str, required: bool = False) -> Any:
    if not isinstance(data, Mapping):
        raise BadInputError(f"invalid switch-agent spec: '{where}' must be an object")
    fields = {f.name: f for f in dataclasses.fields(kind)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise BadInputError(f"invalid switch-agent spec: unknown key(s) in {where}: {', '.join(map(str, unknown))}")
    missing = sorted(set(fields) - set(data)) if required else []
    if missing:
        raise BadInputError(f"invalid switch-agent spec: '{where}' needs {', '.join(missing)}")
    kwargs = {name: _typed(value, int if fields[name].type == "int" else float, f"{where}.{name}")
              for name, value in data.items()}
    return kind(**kwargs)


def _validate(spec: SwitchAgentSpec) -> None:
    def bad(msg: str) -> BadInputError:
        return BadInputError(f"invalid switch-agent spec: {msg}")

    for name in spec.features:
        if name not in FEATURES:
            raise bad(f"unknown feature {name!r} (known: {', '.join(FEATURES)})")
    if not spec.features or len(set(spec.features)) != len(spec.features):
        raise bad("'features' must list each feature at most once, and at least one")
    if not 1 <= spec.history <= MAX_HISTORY:
        raise bad(f"'history' must be in 1..{MAX_HISTORY}, got {spec.history}")
    if not MIN_INTERVAL_US <= spec.interval_us <= MAX_INTERVAL_US:
        raise bad(f"'interval_us' must be in {MIN_INTERVAL_US:g}..{MAX_INTERVAL_US:g}, got {spec.interval_us:g}")
    if not 1 <= spec.qlen_norm_bytes <= STAT_MAX:
        raise bad("'qlen_norm_bytes' must be in 1..2^32-1")
    if not 64 <= spec.packet_bytes <= 1 << 16:
        raise bad("'packet_bytes' must be in 64..65536")
    if not 2 <= spec.n_actions <= MAX_ACTIONS:
        raise bad(f"the action table needs 2..{MAX_ACTIONS} ECN templates, got {spec.n_actions}")
    seen: dict[tuple[int, int, int], int] = {}
    for i, a in enumerate(spec.actions):
        if not 0 <= a.kmin_bytes <= a.kmax_bytes <= MAX_THRESHOLD_BYTES:
            raise bad(f"actions[{i}] needs 0 <= kmin_bytes <= kmax_bytes <= 2^32-1, got kmin {a.kmin_bytes}, kmax {a.kmax_bytes}")
        if not 0 < a.pmax <= 1 or a.pmax_q16 < 1:
            raise bad(f"actions[{i}] needs pmax in (0, 1] (at least 2^-16), got {a.pmax!r}")
        key = (a.kmin_bytes, a.kmax_bytes, a.pmax_q16)
        if key in seen:
            raise bad(f"actions[{i}] duplicates actions[{seen[key]}] ({a.label()})")
        seen[key] = i
    if not 0 <= spec.initial_action < spec.n_actions:
        raise bad(f"'initial_action' must be in 0..{spec.n_actions - 1}, got {spec.initial_action}")
    r = spec.reward
    if not (r.w_util >= 0 and r.w_queue >= 0 and r.w_util + r.w_queue > 0):
        raise bad("reward weights must be >= 0 and not both 0")
    if not (1 <= r.queue_step_bytes <= STAT_MAX and 1 <= r.queue_levels <= 32):
        raise bad("reward needs queue_step_bytes >= 1 and queue_levels in 1..32")


def paper_templates() -> tuple[EcnTemplate, ...]:
    """A compact template table on the paper's grids: Kmin = 20 KB x 2^n, Kmax in {1, 2, 5, 10} MB
    (coarse above 1 MB), Pmax in {1 %, 5 %, ..., 100 %}, thinned to the combinations the paper's
    Figure 15 exercises plus two shallow-queue settings and the DCQCN/HPCC static ones."""
    kb = 1000
    return (
        EcnTemplate(5 * kb, 200 * kb, 0.01),     # DCQCN paper (SECN1)
        EcnTemplate(100 * kb, 400 * kb, 0.2),    # HPCC ns-3 25G entry (the simulator default)
        EcnTemplate(20 * kb, 80 * kb, 0.2),
        EcnTemplate(40 * kb, 160 * kb, 0.1),
        EcnTemplate(80 * kb, 320 * kb, 0.05),
        EcnTemplate(160 * kb, 1000 * kb, 0.05),
        EcnTemplate(320 * kb, 2000 * kb, 0.01),
        EcnTemplate(640 * kb, 5000 * kb, 0.01),
    )
