"""Switch agents: per-egress-queue ECN tuning every monitoring interval (ACC).

The engine (``simulate(..., switch_agent=agent)``) closes one monitoring interval every
``agent.spec.interval_ns`` and hands the agent :class:`IntervalStats` for every egress queue it
controls (every port of the single switch; every switch egress link of a topology); the agent
returns one template index per queue, which the fabric applies at once (Kmin, Kmax, Pmax_q16 /
2^16). Statistics are the device's integer counters (``rlcc.switch_spec``): queue depth at the
interval's end, bytes transmitted and ECN-marked packets in the interval, each the difference of
floored cumulative counters, so they are exactly what a switch register would read.

Agents here keep the per-queue integer window (``rlcc.fxp.switch_agent``) and choose from it:
:class:`StaticEcn` (a fixed template: the static-ECN baselines), :class:`QNetAgent` (the ONNX
teacher, greedy); the compiled trees run as ``rlcc.kinds.switch_agent.agents.ClassifierAgent``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlcc.fxp import switch_agent as fx
from rlcc.switch_policy import QNetPolicy
from rlcc.switch_spec import SwitchAgentSpec


@dataclasses.dataclass(frozen=True)
class QueueInfo:
    """The controlled queues of one run: owning switch (the agent) and port speed per queue."""

    switch: np.ndarray  # (Q,) int64
    port_gbps: np.ndarray  # (Q,) float64
    util_mul: np.ndarray  # (Q,) int64: the device's Q16 utilization multiplier per queue

    @property
    def n_queues(self) -> int:
        return len(self.switch)

    @classmethod
    def build(cls, spec: SwitchAgentSpec, switch: np.ndarray, port_gbps: np.ndarray) -> "QueueInfo":
        speeds = np.asarray(port_gbps, dtype=np.float64)
        muls = {g: spec.util_mul(g) for g in np.unique(speeds).tolist()}
        return cls(np.asarray(switch, np.int64), speeds, np.array([muls[g] for g in speeds.tolist()], np.int64))


@dataclasses.dataclass
class IntervalStats:
    """One monitoring interval of every controlled queue: integer device counters, the action
    that was in force, and the float quantities of ACC's reward."""

    time_ns: float  # end of the interval
    qlen_bytes: np.ndarray  # (Q,) int64, depth at the interval's end
    tx_bytes: np.ndarray  # (Q,) int64, transmitted in the interval
    marked_pkts: np.ndarray  # (Q,) int64, ECN-marked packets in the interval
    action: np.ndarray  # (Q,) int64, template index in force during the interval
    avg_qlen_bytes: np.ndarray  # (Q,) float64, time-average queue over the interval (reward)
    util: np.ndarray  # (Q,) float64, transmitted bytes / (port rate x interval) (reward)


class WindowAgent:
    """Base agent: keeps each queue's integer window of the last ``history`` intervals."""

    name = "window-agent"

    def __init__(self, spec: SwitchAgentSpec) -> None:
        self.spec = spec
        self.queues: QueueInfo | None = None
        self.window = np.zeros((0, spec.input_width), np.int64)

    def reset(self, queues: QueueInfo, rng: np.random.Generator) -> None:
        self.queues, self.rng = queues, rng
        self.window = fx.initial_window(self.spec, queues.n_queues)

    def observe(self, stats: IntervalStats) -> np.ndarray:
        """Shift the windows by one interval; the new (Q, input_width) integer windows."""
        feats = fx.collect(self.spec, stats.qlen_bytes, stats.tx_bytes, stats.marked_pkts, stats.action,
                           self.queues.util_mul)
        self.window = fx.shift_window(self.spec, self.window, feats)
        return self.window

    def choose(self, window: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def on_interval(self, stats: IntervalStats) -> np.ndarray:
        return self.choose(self.observe(stats))


class StaticEcn(WindowAgent):
    """A fixed template everywhere (the static-ECN baseline)."""

    def __init__(self, spec: SwitchAgentSpec, action: int) -> None:
        super().__init__(spec)
        self.action = int(action)
        self.name = f"static {spec.actions[self.action].label()}"

    def choose(self, window: np.ndarray) -> np.ndarray:
        return np.full(len(window), self.action, np.int64)


class QNetAgent(WindowAgent):
    """The ONNX teacher: greedy over its Q-values of the normalized window."""

    name = "teacher"

    def __init__(self, policy: QNetPolicy) -> None:
        super().__init__(policy.spec)
        self.policy = policy

    def choose(self, window: np.ndarray) -> np.ndarray:
        return self.policy.act(self.spec.normalize(window))
