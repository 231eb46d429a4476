"""Calibration sets for the int8 backend: the teacher's own closed-loop decisions.

A window MLP is sampled like the tree backend's training set (``sampling.closed_loop``). A
recurrent teacher runs closed loop under a controller that also records, per kept decision, the
flow's state before it (the per-flow state sequences the quantizer needs for the cell state's
range and the teacher-forced error), with the raw step the device turns into its integer inputs.
"""

from __future__ import annotations

import functools

import numpy as np

from rlcc.distill import sampling
from rlcc.kinds.int8.quantize import Calibration
from rlcc.parallel import Runner, run_all
from rlcc.distill.sampling import RAW_FIELDS
from rlcc.progress import Stage
from rlcc.simulator.controllers import FactorController
from rlcc.simulator.controllers.base import DecisionBatch
from rlcc.simulator.controllers.recurrent import RecurrentController
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import Network
from rlcc.spec import ObservationSpec


class StateRecorder(RecurrentController):
    """A recurrent teacher closed loop, keeping each decision with probability ``keep`` (seeded):
    its current step (float and raw), the flow's state before it and the factor."""

    def __init__(self, policy, keep: float, seed: int) -> None:
        super().__init__(policy, name="teacher")
        self.keep = keep
        self.rng = np.random.default_rng(seed)
        self.rows: list[tuple[np.ndarray, ...]] = []

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        super().reset(n_flows, network, rng)
        self.prev_factor = np.ones(n_flows)

    def decide(self, batch: DecisionBatch):
        ids = np.asarray(batch.flow_ids, dtype=np.int64)
        first = np.asarray(batch.first, dtype=bool)
        before = self.state[ids].copy()
        before[first] = self._reset_row
        out = super().decide(batch)
        factors = out.factors
        zeros = np.zeros(len(ids))
        raw = np.stack([batch.rtt_ns.astype(np.float64), batch.rate, self.prev_factor[ids],
                        zeros if batch.cnp_count is None else batch.cnp_count.astype(np.float64),
                        zeros if batch.nack_count is None else batch.nack_count.astype(np.float64)], axis=1)
        self.prev_factor[ids] = factors
        pick = self.rng.random(len(ids)) < self.keep
        if pick.any():
            self.rows.append((batch.obs[pick][:, self.cols].astype(np.float64), raw[pick], before[pick], factors[pick]))
        return out


def _record_recurrent(task: tuple) -> tuple[np.ndarray, ...]:
    policy, scenario, keep, cap, seed = task
    rec = StateRecorder(policy, keep, seed)
    simulate(scenario, rec)
    if not rec.rows:
        return tuple(np.zeros((0,) + s) for s in ((policy.spec.n_features,), (len(RAW_FIELDS),), (policy.state_size,), ()))
    cols = [np.concatenate(c) for c in zip(*rec.rows)]
    if len(cols[0]) > cap:  # evenly spaced over the run
        idx = np.linspace(0, len(cols[0]) - 1, cap).astype(np.int64)
        cols = [c[idx] for c in cols]
    return tuple(cols)


def calibrate(policy, spec: ObservationSpec, scenarios: str, n_samples: int, seed: int, duration_scale: float,
              h_index: int = 0, runner: Runner | None = None, stage: Stage | None = None) -> Calibration:
    """Closed-loop teacher decisions for the quantizer (module doc)."""
    entries = sampling.parse_scenarios(scenarios, seed, duration_scale)
    if not getattr(policy, "recurrent", False):
        s = sampling.closed_loop(functools.partial(FactorController, policy.factor, spec, "teacher"), policy.factor, spec,
                                 entries, n_samples, seed, runner=runner, stage=stage)
        return Calibration(s.obs.astype(np.float64), s.device_inputs(spec), s.label)
    per = max(1, n_samples // len(entries))
    tasks = [(policy, e.scenario, 0.25, per, seed + 1000 + i) for i, e in enumerate(entries)]
    parts = run_all(runner, _record_recurrent, tasks, costs=[e.scenario.duration_ms for e in entries], stage=stage)
    x, raw, state, label = (np.concatenate(c) for c in zip(*parts))
    x_dev = sampling.device_inputs(spec, raw[:, None, :])
    H = policy.state_size // 2
    h, c = (state[:, :H], state[:, H:]) if h_index == 0 else (state[:, H:], state[:, :H])
    return Calibration(x, x_dev, label, h.astype(np.float64), c.astype(np.float64))


