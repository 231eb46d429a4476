"""Swift (Kumar et al., SIGCOMM 2020, Algorithm 1), rate-paced, one decision per RTT probe.

Swift is window based; here the window ``cwnd`` (packets) is kept per flow and the flow is paced
at ``cwnd / rtt`` with ``rtt`` the probe's RTT (the paper paces at ``rtt / cwnd`` per packet when
cwnd < 1). One decision stands for the ACKs of one RTT, i.e. the per-RTT aggregate of Algorithm 1:

* delay < target: additive increase. Per ACK the paper adds ``ai / cwnd`` (cwnd >= 1) or ``ai``
  (cwnd < 1); an RTT carries cwnd ACKs, so per RTT ``cwnd += ai`` (cwnd >= 1) and
  ``cwnd += ai * cwnd`` (cwnd < 1, i.e. the window doubles per RTT at ai = 1);
* otherwise multiplicative decrease ``cwnd *= max(1 - beta * (delay - target) / delay, 1 - max_mdf)``
  (at most once per RTT, which one decision per probe guarantees);
* on a NACK (loss): ``cwnd *= 1 - max_mdf``; cwnd clipped to [min_cwnd, BDP at the probe's RTT].
* a flow's first decision sets cwnd = start rate x probe RTT (the scenario's ``initial_rate``
  override, e.g. 1/N, is honoured; before, every window started at one BDP).

Target delay = base RTT + ``target_queue_us`` (base target + 1 hop x per-hop scaling, single
switch) + flow-based scaling ``clip(alpha / sqrt(cwnd) + beta_fs, 0, fs_range_us)`` with
alpha = fs_range / (1/sqrt(fs_min_cwnd) - 1/sqrt(fs_max_cwnd)), beta_fs = -alpha / sqrt(fs_max_cwnd)
(paper section 3.5): the scaling is ``fs_range_us`` at cwnd <= ``fs_min_cwnd`` and 0 at cwnd >=
``fs_max_cwnd``. With the defaults the target queueing delay is 4 us + 0..20 us (24 us for cwnd
<= 0.1, ~8.6 us at 64 flows). Defaults: ai = 1 packet, beta = 0.8, max_mdf = 0.5, fs_min_cwnd =
0.1, fs_max_cwnd = 100 as in public reimplementations (HPCC/ns-3 Swift port); min_cwnd = 0.001
(paper section 3.4: cwnd may fall to 0.001 packets); fs_range 5 x target queue; target queue 4 us
at 100G / 8 us base RTT (our choice: a few packets of queue at one hop).

Known model limit: the fluid engine has no ACK clock; a window flow's rate is fixed at
cwnd / (RTT of the probe that just returned) for the next RTT, so when the queue grows within an
RTT the flows keep sending at the old, faster rate. At cwnd >= 1 (up to ~100 flows) this is
small; at hundreds to thousands of flows (cwnd < 1, per-RTT doubling below target) the queue
overshoots to ~10x the target (see simulator/README.md).
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
        delay = batch.rtt_ns.astype(np.float64)
        if batch.first.any():
            # A flow's window starts as what its start rate puts in flight over this RTT: the
            # scenario may override the start rate (e.g. 1/N); a window from ``initial_rate``
            # alone would put N x BDP in flight at the first decision and fill the buffer.
            f = batch.first
            self.cwnd[ids[f]] = batch.rate[f] * delay[f] * self.pkts_per_ns
        cwnd = self.cwnd[ids]
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
