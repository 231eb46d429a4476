"""Recurrent policies in the simulator: per-flow state, vectorized across the flows of a step.

A recurrent policy (``rlcc.recurrent.RecurrentPolicy``, or any object with the same ``spec`` /
``initial_state`` / ``step_raw``, e.g. the trainer's numpy LSTM) sees one step of features per
decision; its state is reset at each flow's first decision and carried between the flow's
decisions. The controller may be handed a wider window spec (history K, same features) so that a
recorder wrapping it keeps K-step windows for window students; it reads only the current step.
Batchable like a window policy: the engine's block loop lets a flow decide at most once per
block, in order, so per-flow state evolves exactly as step by step.
"""

from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

from rlcc.simulator.controllers.base import Decision, DecisionBatch
from rlcc.simulator.controllers.factor import FactorController
from rlcc.simulator.params import Network
from rlcc.spec import ObservationSpec


class Stepper(Protocol):
    spec: ObservationSpec

    def initial_state(self, n: int) -> np.ndarray: ...

    def step_raw(self, x: np.ndarray, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


class RecurrentController:
    """``new = clip(rate * factor, rate.min, 1)`` with the factor of a recurrent policy's step."""

    def __init__(self, policy: Stepper, spec: ObservationSpec | None = None, name: str = "recurrent") -> None:
        self.policy = policy
        self.spec = spec or policy.spec
        if self.spec.feature_names != policy.spec.feature_names:
            raise ValueError("the window spec must have the recurrent policy's features")
        self.cols = np.array([self.spec.input_index(0, f) for f in range(self.spec.n_features)])
        self.name = name
        self.initial_rate = policy.spec.rate.initial
        self.batchable = not self.spec.uses_counters
        self.state = policy.initial_state(0)

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        self.state = self.policy.initial_state(n_flows)
        self._reset_row = self.policy.initial_state(1)[0]

    def factors(self, batch: DecisionBatch) -> np.ndarray:
        """The policy's factors for the batch, advancing each row's flow state."""
        ids = np.asarray(batch.flow_ids, dtype=np.int64)
        first = np.asarray(batch.first, dtype=bool)
        if first.any():
            self.state[ids[first]] = self._reset_row
        y, self.state[ids] = self.policy.step_raw(batch.obs[:, self.cols], self.state[ids])
        return self.policy.spec.output_to_factor(y)

    def decide(self, batch: DecisionBatch) -> Decision:
        factors = self.factors(batch)
        rates = np.clip(batch.rate * factors, self.policy.spec.rate.min, 1.0)
        return Decision(rates, factors)


def teacher_controller(teacher: Callable[[np.ndarray], np.ndarray], spec: ObservationSpec, name: str = "teacher"):
    """The controller that runs a teacher closed loop: per-flow state for a recurrent teacher
    (``recurrent = True`` on it or on the object it is a bound method of, e.g.
    ``RecurrentPolicy.factor``), else the window function as a ``FactorController``."""
    owner = recurrent_owner(teacher)
    if owner is not None:
        return RecurrentController(owner, spec, name)
    return FactorController(teacher, spec, name)


def recurrent_owner(teacher: Callable) -> Stepper | None:
    """The recurrent policy behind a teacher callable, or None for a window function."""
    owner = getattr(teacher, "__self__", teacher)
    return owner if getattr(owner, "recurrent", False) else None
