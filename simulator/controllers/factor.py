"""Spec-driven controllers: an ONNX policy or any Python callable mapping obs -> factors."""

from __future__ import annotations

import os
from typing import Callable

import numpy as np

from rlcc.policy import OnnxPolicy
from rlcc.simulator._fluidcore import policy_rates
from rlcc.simulator.controllers.base import Decision, DecisionBatch
from rlcc.simulator.params import Network
from rlcc.spec import ObservationSpec

FactorFn = Callable[[np.ndarray], np.ndarray]


class FactorController:
    """Multiplicative-rate controller: ``new = clip(rate * factor, spec.rate.min, 1)``.

    ``fn`` gets the (B, spec.input_width) float32 policy inputs of every flow due in a step in
    one call and returns B factors (already mapped, e.g. through ``spec.output_to_factor``).
    ``fn`` must be row-wise (each output depends only on its own input row): the engine may
    batch the decisions of several steps into one call (``batchable``).
    """

    def __init__(self, fn: FactorFn, spec: ObservationSpec, name: str = "callable") -> None:
        self.fn = fn
        self.spec = spec
        self.name = name
        self.initial_rate = spec.rate.initial
        # Decisions depend only on each row of obs (no CNP/NACK inputs, no per-call state), so
        # the engine may batch the decisions of several steps into one call (engine.blocks).
        self.batchable = not spec.uses_counters
        a = spec.action
        self._bounds = (float(a.gain), float(a.clamp_min), float(a.clamp_max), float(spec.rate.min))  # policy_rates

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        """Stateless: the engine keeps the observation windows."""

    def decide(self, batch: DecisionBatch) -> Decision:
        factors = np.asarray(self.fn(batch.obs), dtype=np.float64).reshape(len(batch.flow_ids))
        return self._decision(factors, batch, 0)

    def _decision(self, y: np.ndarray, batch: DecisionBatch, mode: int) -> Decision:
        """``rates = clip(rate * factor, spec.rate.min, 1)`` of factors mapped from ``y`` by
        ``mode`` (0: the factors themselves; else ``ACTION_MODES``), in one C call with numpy's
        element operations (``_fluidcore.policy_rates``; tests/simulator/test_kernel.py)."""
        n = len(y)
        factors, rates = np.empty(n), np.empty(n)
        policy_rates(np.ascontiguousarray(y), np.ascontiguousarray(batch.rate, dtype=np.float64), mode, *self._bounds,
                     factors, rates)
        return Decision(rates, factors)


class PolicyController(FactorController):
    """An ONNX policy (validated by ``rlcc.policy.OnnxPolicy``) evaluated once per step, batched."""

    def __init__(self, policy: OnnxPolicy | str | os.PathLike, spec: ObservationSpec | None = None) -> None:
        if not isinstance(policy, OnnxPolicy):
            policy = OnnxPolicy(policy, spec)
        self.policy = policy
        super().__init__(policy.factor, policy.spec, name=f"policy:{policy.path.name}")
        a = self.spec.action
        self._mode = ACTION_MODES["factor"] if a.type == "factor" else ACTION_MODES.get(a.map, ACTION_MODES["asymmetric"])

    def decide(self, batch: DecisionBatch) -> Decision:
        """``policy.factor`` (= ``spec.output_to_factor`` of the raw outputs) and the rates, the
        mapping in C with the same operations."""
        return self._decision(self.policy.predict_raw(batch.obs), batch, self._mode)

    def decide_rows(self, obs: np.ndarray, rate: np.ndarray, factors: np.ndarray, rates: np.ndarray) -> None:
        """``decide`` of the rows ``obs`` (float32, C-contiguous) at rates ``rate`` (float64,
        contiguous) into ``factors`` and ``rates`` (float64, contiguous, same length): the same
        calls on the same values without a ``DecisionBatch``."""
        policy_rates(self.policy.predict_raw(obs), rate, self._mode, *self._bounds, factors, rates)


def rows_decider(ctl: object) -> Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None] | None:
    """``ctl.decide`` on bare rows for the block loop's C path (``decide_rows``: no batch, no copies
    of the columns the policy does not read, outputs into the loop's arrays), or None unless ``ctl``
    is a ``PolicyController`` whose ``decide`` is not overridden (a subclass may read the batch)."""
    if isinstance(ctl, PolicyController) and type(ctl).decide is PolicyController.decide:
        return ctl.decide_rows
    return None


# ``policy_rates`` modes of ``ObservationSpec.output_to_factor``: action type factor, else the tanh map
# (any map but linear is asymmetric there).
ACTION_MODES = {"factor": 1, "linear": 2, "asymmetric": 3}


def callable_controller(fn: FactorFn, spec: ObservationSpec) -> FactorController:
    """Wrap a Python function ``obs (B, width) float32 -> factors (B,)`` as a controller."""
    return FactorController(fn, spec)
