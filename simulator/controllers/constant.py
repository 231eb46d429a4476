"""A fixed-rate controller: the open-loop baseline used to check the fabric's arithmetic."""

from __future__ import annotations

import numpy as np

from rlcc.simulator.controllers.base import DecisionBatch
from rlcc.simulator.params import Network


class ConstantRate:
    """Every flow sends at ``rate`` (a scalar or one value per flow) forever."""

    spec = None
    name = "constant"

    def __init__(self, rate: float | np.ndarray) -> None:
        self.rates = np.asarray(rate, dtype=np.float64)
        self.initial_rate: float | np.ndarray = float(self.rates) if self.rates.ndim == 0 else 1.0

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        self.per_flow = np.broadcast_to(self.rates, (n_flows,)).copy()
        self.initial_rate = self.per_flow

    def decide(self, batch: DecisionBatch) -> np.ndarray:
        return self.per_flow[batch.flow_ids]
