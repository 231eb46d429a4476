"""Swift (Kumar et al., SIGCOMM 2020), rate-paced, one decision per RTT probe.

Swift is window based; here the window ``cwnd`` (packets) is kept per flow and the flow is paced
at ``cwnd / rtt`` (the paper paces when cwnd < 1; in a fluid model pacing and windowing give the
same rate). Per decision, which stands for the ACKs of one RTT:

* delay < target: additive increase, ``cwnd += ai`` (``ai * cwnd`` when cwnd < 1, the per-ACK
  ``ai / cwnd`` summed over the cwnd ACKs of one RTT, as in the paper's Algorithm 1);
* otherwise multiplicative decrease ``cwnd *= max(1 - beta * (delay - target) / delay, 1 - max_mdf)``
  (at most once per RTT, which one decision per probe guarantees);
* on a NACK (loss): ``cwnd *= 1 - max_mdf``.

Target delay = base RTT + ``target_queue_us`` + flow-based scaling
``clip(a / sqrt(cwnd) + b, 0, fs_range_us)`` with a, b chosen so the scaling is ``fs_range_us`` at
``fs_min_cwnd`` and 0 at ``fs_max_cwnd`` (paper section 3.5). Defaults: ai = 1 packet, beta = 0.8,
max_mdf = 0.5, fs_min_cwnd = 0.1, fs_max_cwnd = 100, as in the paper and public reimplementations
(e.g. the HPCC/ns-3 Swift port); fs_range 5 x target queue; target queue 4 us at 100G/8 us base RTT.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlcc.simulator.controllers.base import Decision, DecisionBatch
from rlcc.simulator.scenarios import Network

MIN_RATE = 1.0 / 16384


@dataclasses.dataclass
class SwiftParams:
    ai: float = 1.0
    beta: float = 0.8
    max_mdf: float = 0.5
    target_queue_us: float = 4.0
    fs_range_us: float = 20.0
    fs_min_cwnd: float = 0.1
    fs_max_cwnd: float = 100.0
    min_cwnd: float = 0.001


class Swift:
    """Vectorized Swift over all flows; per-flow ``cwnd`` indexed by flow id."""

    spec = None
    initial_rate = 1.0
    name = "swift"

    def __init__(self, params: SwiftParams | None = None) -> None:
        self.p = params or SwiftParams()

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        self.net = network
        self.pkts_per_ns = network.bytes_per_ns / network.packet_bytes
        self.cwnd = np.full(n_flows, self.initial_rate * network.base_rtt_ns * self.pkts_per_ns)
        self.base_target_ns = network.base_rtt_ns + self.p.target_queue_us * 1e3
        p = self.p
        inv_lo, inv_hi = 1 / np.sqrt(p.fs_min_cwnd), 1 / np.sqrt(p.fs_max_cwnd)
        self.fs_a = p.fs_range_us * 1e3 / (inv_lo - inv_hi)
        self.fs_b = -self.fs_a * inv_hi

    def target_ns(self, cwnd: np.ndarray) -> np.ndarray:
        fs = np.clip(self.fs_a / np.sqrt(cwnd) + self.fs_b, 0.0, self.p.fs_range_us * 1e3)
        return self.base_target_ns + fs

    def decide(self, batch: DecisionBatch) -> Decision:
        p, ids = self.p, batch.flow_ids
        cwnd = self.cwnd[ids]
        delay = batch.rtt_ns.astype(np.float64)
        target = self.target_ns(cwnd)
        increase = np.where(cwnd >= 1.0, cwnd + p.ai, cwnd * (1.0 + p.ai))
        decrease = cwnd * np.maximum(1.0 - p.beta * (delay - target) / delay, 1.0 - p.max_mdf)
        new = np.where(delay < target, increase, decrease)
        new = np.where(batch.nack_count > 0, cwnd * (1.0 - p.max_mdf), new)
        max_cwnd = delay * self.pkts_per_ns
        new = np.clip(new, p.min_cwnd, max_cwnd)
        self.cwnd[ids] = new
        rates = np.clip(new / (delay * self.pkts_per_ns), MIN_RATE, 1.0)
        return Decision(rates)
