"""ACC training configuration and its episode curriculum: one JSON object fully determines a run.

The ``.train.json`` written next to a trained model holds this config under ``"config"``, and
``rlcc-train --algo acc --config`` reads either form, so a model can always be retrained.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from rlcc.errors import BadInputError
from rlcc.switch_spec import SwitchAgentSpec, paper_templates
from rlcc.train.config import read_json_config

# Incast sizes (bytes) and sender counts of the paper's incast tests (section 5).
INCAST_SIZES = (10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000)
INCAST_SENDERS = (2, 4, 8, 16, 32, 64)
TRACE_CDFS = ("websearch", "hadoop")
# A small leaf-spine (2 leaves x 4 hosts, 2 spines): the multi-agent episodes (6 switches).
LEAF_SPINE: dict[str, Any] = {"kind": "fat-tree", "hosts_per_leaf": 4, "leaves": 2, "spines": 2, "links_per_pair": 1}


def default_spec() -> dict[str, Any]:
    """The switch-agent spec of ``paper_templates()`` with the contract's defaults (k = 3, 100 us),
    queues starting on the deepest template: a burst in the first interval, before the agent has
    seen anything, then meets the least marking (DCQCN senders marked down at t = 0 take
    milliseconds to recover, whatever the agent does next)."""
    actions = paper_templates()
    deepest = max(range(len(actions)), key=lambda i: (actions[i].kmin_bytes, actions[i].kmax_bytes))
    return SwitchAgentSpec(actions=actions, initial_action=deepest).to_dict()


@dataclasses.dataclass(frozen=True)
class AccConfig:
    """Hyper-parameters of a DDQN run (see ``rlcc.train.acc`` and ``rlcc.train.ddqn``).

    ``episode_ms``: simulated time per episode; ``scenarios``: explicit scenario dicts cycled over
    the episodes (empty: the built-in curriculum, :func:`curriculum`); each episode's scenario
    seed is ``seed + episode``. Epsilon decays per episode: ``eps_end + (eps_start - eps_end) *
    eps_decay^episode``.
    """

    seed: int = 0
    episodes: int = 1200
    episode_ms: float = 6.0
    hidden: tuple[int, ...] = (64, 64)
    lr: float = 1e-3
    gamma: float = 0.98
    batch: int = 64
    target_every: int = 200
    huber: float = 1.0
    eps_start: float = 1.0
    eps_end: float = 0.02
    eps_decay: float = 0.995
    explore_hold: float = 10.0
    updates_per_interval: int = 2
    min_replay: int = 256
    local_capacity: int = 20_000
    global_capacity: int = 100_000
    exchange_every: int = 20
    exchange_up: int = 64
    exchange_down: int = 64
    scenarios: tuple[dict[str, Any], ...] = ()
    spec: dict[str, Any] = dataclasses.field(default_factory=default_spec)

    def __post_init__(self) -> None:
        def bad(msg: str) -> BadInputError:
            return BadInputError(f"invalid acc train config: {msg}")

        ints = ("seed", "episodes", "batch", "target_every", "updates_per_interval", "min_replay", "local_capacity",
                "global_capacity", "exchange_every", "exchange_up", "exchange_down")
        for name in ints:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise bad(f"'{name}' must be an integer, got {v!r}")
        for name in ("episode_ms", "lr", "gamma", "huber", "eps_start", "eps_end", "eps_decay", "explore_hold"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                raise bad(f"'{name}' must be a number, got {v!r}")
        if self.seed < 0 or self.episodes < 0:
            raise bad("need seed >= 0 and episodes >= 0")
        if min(self.batch, self.target_every, self.updates_per_interval, self.local_capacity, self.global_capacity,
               self.exchange_every) < 1 or min(self.min_replay, self.exchange_up, self.exchange_down) < 0:
            raise bad("batch, target_every, updates_per_interval, capacities and exchange_every must be >= 1")
        if self.episode_ms <= 0 or self.lr <= 0 or self.huber <= 0 or self.explore_hold < 1:
            raise bad("need episode_ms > 0, lr > 0, huber > 0 and explore_hold >= 1")
        if not 0 <= self.gamma < 1 or not 0 <= self.eps_end <= self.eps_start <= 1 or not 0 < self.eps_decay <= 1:
            raise bad("need 0 <= gamma < 1, 0 <= eps_end <= eps_start <= 1 and 0 < eps_decay <= 1")
        if not self.hidden or any(isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in self.hidden):
            raise bad("'hidden' must list positive layer widths")
        if not isinstance(self.spec, Mapping):
            raise bad("'spec' must be a switch-agent spec object")
        self.switch_spec()
        for i, s in enumerate(self.scenarios):
            if not isinstance(s, Mapping):
                raise bad(f"scenarios[{i}] must be a scenario object")
        if self.scenarios:
            self.scenario_dicts()
            from rlcc.simulator.scenarios import Scenario

            for d in self.scenario_dicts()[: len(self.scenarios)]:
                Scenario.from_dict(d)

    def switch_spec(self) -> SwitchAgentSpec:
        return SwitchAgentSpec.from_dict(self.spec)

    def scenario_dicts(self) -> list[dict[str, Any]]:
        """One scenario dict per episode (``seed + episode`` as each one's seed)."""
        if not self.scenarios:
            return curriculum(self.seed, self.episodes, self.episode_ms)
        out = []
        for e in range(self.episodes):
            d = dict(self.scenarios[e % len(self.scenarios)])
            d["seed"] = int(d.get("seed", 0)) + self.seed + e
            out.append(d)
        return out

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["hidden"] = list(self.hidden)
        data["scenarios"] = [dict(s) for s in self.scenarios]
        return data

    @classmethod
    def from_dict(cls, data: Any) -> "AccConfig":
        """A config object, or a ``.train.json`` record holding one under ``"config"``."""
        if isinstance(data, Mapping) and data.get("algo") == "acc" and "config" in data:
            data = data["config"]
        if not isinstance(data, Mapping):
            raise BadInputError("invalid acc train config: top level must be a JSON object")
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - fields)
        if unknown:
            raise BadInputError(f"invalid acc train config: unknown key(s) {', '.join(unknown)}")
        kwargs = dict(data)
        for key in ("hidden", "scenarios"):
            if key in kwargs:
                if not isinstance(kwargs[key], (list, tuple)):
                    raise BadInputError(f"invalid acc train config: '{key}' must be a list")
                kwargs[key] = tuple(kwargs[key])
        return cls(**kwargs)

    @classmethod
    def from_file(cls, path: str | Path) -> "AccConfig":
        return cls.from_dict(read_json_config(path, "acc train config"))


def incast_scenario(senders: int, flows_per_sender: int, min_bytes: int, max_bytes: int, bursts: int,
                    burst_interval_us: float, duration_ms: float, seed: int,
                    topology: dict[str, Any] | None = None) -> dict[str, Any]:
    """``bursts`` times, ``senders`` x ``flows_per_sender`` flows (log-uniform sizes) to one receiver."""
    d: dict[str, Any] = {"kind": "incast", "senders": senders, "flows_per_sender": flows_per_sender,
                         "min_bytes": min_bytes, "max_bytes": max_bytes, "bursts": bursts,
                         "burst_interval_us": burst_interval_us, "duration_ms": duration_ms, "seed": seed}
    if topology is not None:
        d["topology"] = dict(topology)
    return d


def burst_on_long_scenario(flows: int, size_bytes: int, duration_ms: float, seed: int) -> dict[str, Any]:
    """One long-lived flow, hit at 5 % of the run by ``flows`` flows of ``size_bytes`` (``long-short``):
    whether its DCQCN sender gets marked down during the burst is the template's doing."""
    return {"kind": "long-short", "short_flows": flows, "short_bytes": size_bytes, "bursts": 1,
            "burst_start_frac": 0.05, "duration_ms": duration_ms, "seed": seed}


def trace_scenario(cdf: str, load: float, duration_ms: float, seed: int, topology: dict[str, Any] | None = None) -> dict[str, Any]:
    """Poisson arrivals of ``cdf`` flow sizes between 8 hosts at ``load``."""
    d: dict[str, Any] = {"kind": "trace", "hosts": 8, "cdf": cdf, "load": round(load, 3), "duration_ms": duration_ms,
                         "arrival_frac": 0.8, "seed": seed}
    if topology is not None:
        d["topology"] = dict(topology)
    return d


def curriculum(seed: int, episodes: int, duration_ms: float) -> list[dict[str, Any]]:
    """The default episode mix, harder as training goes: incasts (p senders, up to 64, x q flows of
    10 KB..10 MB, repeated bursts), bursts on a long flow, and websearch / hadoop Poisson traffic
    at 30..90 % load; on one switch and (from the second third on) on a small leaf-spine."""
    rng = np.random.default_rng([seed, 0xACC])
    out = []
    for e in range(episodes):
        u = e / max(episodes - 1, 1)
        topo = LEAF_SPINE if u >= 1 / 3 and rng.random() < 0.3 else None
        kind = rng.random()
        if kind < 0.35:
            p_max = max(2, int(round(2 + 62 * min(1.0, 1.5 * u))))
            senders = int(rng.choice([p for p in INCAST_SENDERS if p <= p_max]))
            lo, hi = sorted(int(x) for x in rng.choice(INCAST_SIZES, 2))
            bursts = int(rng.integers(1, 4))
            out.append(incast_scenario(senders, int(rng.integers(1, 5)), lo, hi, bursts,
                                       round(1000 * duration_ms / (bursts + 1)), duration_ms, seed + e, topo))
        elif kind < 0.65:
            out.append(burst_on_long_scenario(int(rng.choice(INCAST_SENDERS)), int(rng.choice(INCAST_SIZES[:5])),
                                              duration_ms, seed + e))
        else:
            load = float(rng.uniform(0.3, 0.3 + 0.6 * min(1.0, 0.5 + u)))
            out.append(trace_scenario(str(rng.choice(TRACE_CDFS)), load, duration_ms, seed + e, topo))
    return out
