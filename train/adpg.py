"""ADPG: on-policy rollouts in the simulator and the analytic deterministic policy gradient.

All flows share one deterministic policy; each flow is an agent acting at its own RTT events.
The papers' gradient of the average reward (ADPG, eq. 3) is

    grad J ~ mean_t(delta_t) * grad_theta pi(o_t),   delta = target - max(infl - beta, 0) sqrt(rate)

because d(-delta^2)/da = 2 delta * d(infl sqrt(rate))/da and that last factor is positive (a
higher rate factor never lowers inflation or rate), so it is folded into the learning rate.
Sign: delta > 0 (under-utilized) pushes pi(o_t) up, delta < 0 (congested) pushes it down.

The simulator's trace holds the asynchronous decisions of all flows; they are keyed by flow
(``Trace.sequences``) and each decision t of a flow is weighted by the mean delta its flow
observed over the next ``rollout`` decisions (the finite-T average of the papers, taken over
the decisions the action can influence).

The same rollout and weighting serve both architectures; only the controller that runs the
policy closed loop and ``grad pi`` differ (``controller``, ``Policy.weighted_grads``): the MLP's
output depends on its input window, the LSTM's on the flow's whole decision sequence (BPTT).
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

import numpy as np

from rlcc.simulator.controllers.factor import FactorController
from rlcc.simulator.controllers.recurrent import RecurrentController
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import Scenario
from rlcc.simulator.trace import Trace, TraceConfig
from rlcc.spec import ObservationSpec
from rlcc.train.lstm import Lstm, LstmStepper
from rlcc.train.mlp import Mlp


class Policy(Protocol):
    """A trainable policy: its parameter arrays and ``grad_theta sum_t dy_t * pi(o_t)``."""

    @property
    def params(self) -> list[np.ndarray]: ...

    def weighted_grads(self, obs: np.ndarray, dy: np.ndarray, bounds: list[tuple[int, int]]) -> list[np.ndarray]: ...


@dataclasses.dataclass
class Rollout:
    """One simulated episode: its decisions with their ADPG weights and the run's metrics."""

    scenario: Scenario
    obs: np.ndarray  # (M, width) float32 policy inputs (per flow in time order, see bounds)
    weight: np.ndarray  # (M,) mean future (clipped) delta of the decision's flow
    delta: np.ndarray  # (M,) raw delta at each decision
    flow_abs_delta: np.ndarray  # (flows,) |mean delta| per flow over the converged window
    bounds: list[tuple[int, int]]  # per flow: [start, stop) of its decisions in obs/weight/delta
    metrics: dict[str, float]


def policy_fn(mlp: Mlp, spec: ObservationSpec):
    """The obs -> factor callable the simulator's ``FactorController`` evaluates in batches."""

    def fn(obs: np.ndarray) -> np.ndarray:
        return spec.output_to_factor(mlp(obs))

    return fn


def controller(policy: Policy, spec: ObservationSpec):
    """The simulator controller running ``policy`` closed loop: the MLP on the engine's input
    windows, the LSTM one step per decision with per-flow state (reset at a flow's first)."""
    if isinstance(policy, Lstm):
        return RecurrentController(LstmStepper(policy, spec), name="adpg")
    return FactorController(policy_fn(policy, spec), spec, name="adpg")


def rollout_weights(delta: np.ndarray, horizon: int, clip: float) -> np.ndarray:
    """Per decision t of ONE flow: mean of clip(delta) over decisions t+1 .. t+horizon.

    The last decision has no future in the episode and gets its own delta.
    """
    d = np.clip(np.asarray(delta, dtype=np.float64), -clip, clip)
    n = len(d)
    csum = np.concatenate([[0.0], np.cumsum(d)])
    start = np.minimum(np.arange(n) + 1, n - 1)
    stop = np.minimum(np.arange(n) + 1 + horizon, n)
    stop = np.maximum(stop, start + 1)
    return (csum[stop] - csum[start]) / (stop - start)


def run_rollout(
    policy: Policy, spec: ObservationSpec, scenario: Scenario, horizon: int, clip: float, capacity: int = 400_000
) -> Rollout:
    """Simulate ``scenario`` under the current policy and weight every recorded decision.

    The trace keeps the first ``capacity`` decisions, so every flow's sequence starts at its
    first decision (where a recurrent policy's state is reset)."""
    ctl = controller(policy, spec)
    result = simulate(scenario, ctl, trace=TraceConfig(capacity=capacity))
    trace: Trace = result.trace
    obs_parts, w_parts, d_parts, flow_abs, bounds = [], [], [], [], []
    late_ns = scenario.converged_from * scenario.duration_ns
    for _, idx in trace.sequences():
        delta = trace.columns["delta"][idx]
        start = bounds[-1][1] if bounds else 0
        bounds.append((start, start + len(idx)))
        obs_parts.append(trace.obs[idx])
        w_parts.append(rollout_weights(delta, horizon, clip))
        d_parts.append(delta)
        late = delta[trace.columns["time_ns"][idx] >= late_ns]
        if len(late):
            flow_abs.append(abs(float(np.mean(late))))
    width = ctl.spec.input_width
    return Rollout(
        scenario=scenario,
        obs=np.concatenate(obs_parts) if obs_parts else np.zeros((0, width), np.float32),
        weight=np.concatenate(w_parts) if w_parts else np.zeros(0),
        delta=np.concatenate(d_parts) if d_parts else np.zeros(0),
        flow_abs_delta=np.asarray(flow_abs),
        bounds=bounds,
        metrics=dict(result.metrics),
    )


def adpg_direction(policy: Policy, rollouts: list[Rollout]) -> list[np.ndarray]:
    """The ascent direction ``mean over decisions of weight_t * grad_theta pi(o_t)``."""
    total = sum(len(r.obs) for r in rollouts)
    grads = [np.zeros_like(w) for w in policy.params]
    if total == 0:
        return grads
    for r in rollouts:
        if not len(r.obs):
            continue
        for g, part in zip(grads, policy.weighted_grads(r.obs, r.weight / total, r.bounds)):
            g += part
    return grads
