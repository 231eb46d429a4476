"""The ACC training loop: one simulated episode per curriculum entry, the learner acting and learning online.

Hosts run DCQCN (the paper's setting: ACC tunes the switches' ECN under unchanged NIC CC). One
:class:`~rlcc.train.acc.AccLearner` (network, replays, optimizer) persists over the episodes;
epsilon decays per episode. Deterministic for a config: all randomness comes from ``cfg.seed``
and the scenarios' seeds.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rlcc.simulator.controllers import Dcqcn
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import Scenario
from rlcc.train.acc import AccLearner, LearnerParams
from rlcc.train.acc_config import AccConfig
from rlcc.train.ddqn import Ddqn, DdqnParams, epsilon_at
from rlcc.train.qnet import QNet, qnet_to_onnx
from rlcc.train.replay import MultiReplay


@dataclasses.dataclass
class AccResult:
    net: QNet
    log: list[dict[str, Any]]
    wall_s: float


def scenario_label(d: dict[str, Any]) -> str:
    where = "leaf-spine" if d.get("topology") else "switch"
    if d["kind"] == "incast":
        size = f"{d['min_bytes'] // 1000}-{d['max_bytes'] // 1000}KB"
        return f"incast {d['senders']}x{d['flows_per_sender']} {size} x{d['bursts']} ({where})"
    if d["kind"] == "long-short":
        return f"long flow + {d['short_flows']}x{d['short_bytes'] // 1000}KB ({where})"
    if d["kind"] == "trace":
        return f"{d['cdf']} {round(100 * d['load'])}% ({where})"
    return f"{d['kind']} ({where})"


def make_learner(cfg: AccConfig) -> AccLearner:
    spec = cfg.switch_spec()
    rng = np.random.default_rng(cfg.seed)
    init_rng, train_rng = rng.spawn(2)
    net = QNet.init([spec.input_width, *cfg.hidden, spec.n_actions], init_rng)
    ddqn = Ddqn(net, DdqnParams(gamma=cfg.gamma, lr=cfg.lr, batch=cfg.batch, target_every=cfg.target_every,
                                huber=cfg.huber))
    replay = MultiReplay(spec.input_width, cfg.local_capacity, cfg.global_capacity)
    params = LearnerParams(cfg.updates_per_interval, cfg.min_replay, cfg.exchange_every, cfg.exchange_up,
                           cfg.exchange_down, cfg.explore_hold)
    return AccLearner(spec, ddqn, replay, params, train_rng)


def train_acc(cfg: AccConfig, progress: Callable[[dict[str, Any]], None] | None = None) -> AccResult:
    """Run ``cfg.episodes`` episodes; the log has one row per episode."""
    wall = time.perf_counter()
    learner = make_learner(cfg)
    log: list[dict[str, Any]] = []
    for e, d in enumerate(cfg.scenario_dicts()):
        t0 = time.perf_counter()
        learner.epsilon = epsilon_at(e, cfg.eps_start, cfg.eps_end, cfg.eps_decay)
        learner.reset_episode_stats()
        simulate(Scenario.from_dict(d), Dcqcn(), switch_agent=learner)
        row = {
            "episode": e,
            "scenario": scenario_label(d),
            "reward": learner.reward_sum / learner.reward_n if learner.reward_n else float("nan"),
            "epsilon": learner.epsilon,
            "loss": learner.loss_sum / learner.loss_n if learner.loss_n else float("nan"),
            "updates": learner.ddqn.updates,
            "wall_s": time.perf_counter() - t0,
        }
        log.append(row)
        if progress:
            progress(row)
    return AccResult(learner.ddqn.eval, log, time.perf_counter() - wall)


def _json_number(v: Any) -> Any:
    """Floats rounded for the record; an undefined mean (no reward or loss yet: NaN) is null, so
    the record is standard JSON that rlcc-train --config reads back."""
    if not isinstance(v, float):
        return v
    return round(v, 6) if math.isfinite(v) else None


def write_outputs(cfg: AccConfig, result: AccResult, out: Path, extra: dict[str, Any] | None = None) -> Path:
    """The ONNX at ``out`` and ``<stem>.train.json`` (config, per-episode log, wall time); returns the JSON path."""
    spec = cfg.switch_spec()
    qnet_to_onnx(result.net, spec, out,
                 doc=f"ACC Q-network trained by rlcc-train --algo acc (Double DQN), seed {cfg.seed}, {cfg.episodes} episodes")
    record = {"algo": "acc", "config": cfg.to_dict(), "wall_s": round(result.wall_s, 1),
              "episodes": [{k: _json_number(v) for k, v in row.items()} for row in result.log]}
    if extra:
        record.update(extra)
    path = out.with_name(out.stem + ".train.json")
    path.write_text(json.dumps(record, indent=1, sort_keys=True, allow_nan=False) + "\n")
    return path
