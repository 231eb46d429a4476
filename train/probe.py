"""The papers' explainability probe (RL-CC Table VI): factor by previous vs current condition.

Conditions are RL-CC deltas: under-utilized ``+target`` (RTT below beta), on target ``0``,
congested ``-target``. Row = previous condition, column = current one. The window's
``prev_action`` entries are the policy's own steady response to the previous condition (the
fixed point of feeding its action back while that condition persists), so the diagonal is the
response to a persisting condition and off-diagonal cells are the first step of a change.

A recurrent policy has no window to fill: it is driven by a SEQUENCE from the reset state, the
previous condition held for ``STEADY_STEPS`` decisions (its own factor fed back as
``prev_action``), then one step of the current condition (``explain_table_recurrent``).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from rlcc.spec import ObservationSpec

CONDITIONS = ("under-utilized", "on target", "congested")
STEADY_STEPS = 50  # decisions a previous condition persists (window fixed point / recurrent hold)
FactorFn = Callable[[np.ndarray], np.ndarray]


def condition_deltas(spec: ObservationSpec) -> dict[str, float]:
    t = spec.reward.target
    return {"under-utilized": t, "on target": 0.0, "congested": -t}


def _obs(spec: ObservationSpec, a_prev: float, d_prev: float, a_now: float, d_now: float) -> np.ndarray:
    names = spec.feature_names
    raw = np.zeros((1, spec.history, spec.n_features))
    for ago, (a, d) in enumerate([(a_now, d_now)] + [(a_prev, d_prev)] * (spec.history - 1)):
        for f, name in enumerate(names):
            raw[0, ago, f] = {"prev_action": a, "delta": d}.get(name, 0.0)
    return spec.assemble(spec.scale_step(raw))


def steady_factor(fn: FactorFn, spec: ObservationSpec, delta: float, iters: int = STEADY_STEPS) -> float:
    """Factor the policy settles to when ``delta`` persists and its action is fed back."""
    a = 1.0
    for _ in range(iters):
        a = float(fn(_obs(spec, a, delta, a, delta))[0])
    return a


def explain_table(fn: FactorFn, spec: ObservationSpec) -> dict[str, dict[str, float]]:
    """``table[previous][current]`` = rate factor, for obs -> factor callable ``fn``."""
    deltas = condition_deltas(spec)
    table: dict[str, dict[str, float]] = {}
    for prev in CONDITIONS:
        a = steady_factor(fn, spec, deltas[prev])
        table[prev] = {cur: float(fn(_obs(spec, a, deltas[prev], a, deltas[cur]))[0]) for cur in CONDITIONS}
    return table


def explain_table_recurrent(stepper: Any, hold: int = STEADY_STEPS) -> dict[str, dict[str, float]]:
    """``table[previous][current]`` for a recurrent stepper (``spec``, ``initial_state``,
    ``step_raw``): from the reset state, ``previous`` held for ``hold`` decisions with the
    policy's own factor fed back, then one decision under ``current``."""
    spec = stepper.spec
    deltas = condition_deltas(spec)
    table: dict[str, dict[str, float]] = {}
    for prev in CONDITIONS:
        state, a = stepper.initial_state(1), 1.0
        for _ in range(hold):
            y, state = stepper.step_raw(_obs(spec, a, deltas[prev], a, deltas[prev]), state)
            a = float(spec.output_to_factor(y)[0])
        table[prev] = {}
        for cur in CONDITIONS:
            y, _ = stepper.step_raw(_obs(spec, a, deltas[prev], a, deltas[cur]), state)
            table[prev][cur] = float(spec.output_to_factor(y)[0])
    return table


def explain_policy(policy: Any) -> dict[str, dict[str, float]]:
    """The table of a loaded policy: recurrent ones (``recurrent = True``) by sequences, window
    policies by their ``factor`` function."""
    if getattr(policy, "recurrent", False):
        return explain_table_recurrent(policy)
    return explain_table(policy.factor, policy.spec)


def table_markdown(table: dict[str, dict[str, float]]) -> str:
    lines = ["| previous \\ current | " + " | ".join(CONDITIONS) + " |", "|---" * (len(CONDITIONS) + 1) + "|"]
    for prev in CONDITIONS:
        lines.append(f"| {prev} | " + " | ".join(f"{table[prev][c]:.3f}" for c in CONDITIONS) + " |")
    return "\n".join(lines) + "\n"
