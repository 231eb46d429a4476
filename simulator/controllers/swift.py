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

Pacing (the fluid ACK clock): the engine has no ACKs, so a window sender is modelled as pacing
at cwnd / current RTT. Swift is a tick controller: every ``tick_ns`` (default base RTT / 4 = 2 us;
``SwiftParams.tick_us`` overrides) ``on_tick`` re-paces every active flow at
``cwnd / (base RTT + queueing delay at its egress port now)`` (``TickInfo.queue_delay_ns``), which
is what a window-limited sender does when its ACKs slow down as the queue grows. The window
itself (AI / MD above) still changes only once per RTT, at probe returns, from the probe's RTT.
A tick of base RTT / 4 follows the queue within a quarter RTT at a cost of one vectorized pass
over all flows per tick (the engine skips the DCQCN counters: ``tick_counters = False``);
``decide`` paces its new window at the last tick's queueing delay.

The window a tick paces is the one in effect: a decision's window takes effect with the
decision's rate, i.e. after the scenario's decision latency. The engine does not say when that
happens, so ``on_tick`` detects it: a flow's current rate equal to the rate its pending decision
returned means the decision has been applied (exact float equality; the engine stores that rate
unchanged). Before a flow's first decision is applied its start rate is left alone. If a flow
has more than one decision pending (decision latency > RTT) only the latest is tracked.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlcc.simulator.controllers.base import Decision, DecisionBatch, TickInfo
from rlcc.simulator.params import Network

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
    tick_us: float | None = None  # re-pacing period; None: base RTT / 4


class Swift:
    """Vectorized Swift over all flows; per-flow ``cwnd`` indexed by flow id."""

    spec = None
    initial_rate = 1.0
    name = "swift"
    tick_counters = False  # on_tick needs only rates and queueing delays

    def __init__(self, params: SwiftParams | None = None) -> None:
        self.p = params or SwiftParams()
        self.tick_ns = self.p.tick_us * 1e3 if self.p.tick_us else 2000.0

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        self.net = network
        self.pkts_per_ns = network.bytes_per_ns / network.packet_bytes
        self.cwnd = np.full(n_flows, self.initial_rate * network.base_rtt_ns * self.pkts_per_ns)
        self.base_target_ns = network.base_rtt_ns + self.p.target_queue_us * 1e3
        p = self.p
        inv_lo, inv_hi = 1 / np.sqrt(p.fs_min_cwnd), 1 / np.sqrt(p.fs_max_cwnd)
        self.fs_a = p.fs_range_us * 1e3 / (inv_lo - inv_hi)
        self.fs_b = -self.fs_a * inv_hi
        if not p.tick_us:
            self.tick_ns = network.base_rtt_ns / 4
        self.cwnd_eff = np.zeros(n_flows)  # window in effect (its decision's rate was applied)
        self.paced = np.zeros(n_flows, bool)  # a decision of the flow has been applied
        self.pend_rate = np.full(n_flows, np.nan)  # rate returned by the pending decision
        self.pend_cwnd = np.zeros(n_flows)
        self.qdelay = np.zeros(n_flows)  # queueing delay at the last tick (ns)

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
        rtt_now = self.net.base_rtt_ns + self.qdelay[ids]
        rates = np.clip(new / (rtt_now * self.pkts_per_ns), MIN_RATE, 1.0)
        self.pend_rate[ids] = rates
        self.pend_cwnd[ids] = new
        return Decision(rates)

    def on_tick(self, info: TickInfo) -> np.ndarray:
        """Re-pace every flow whose window is in effect at cwnd / (base RTT + queueing delay now)."""
        landed = info.rate == self.pend_rate  # NaN (nothing pending) never compares equal
        if landed.any():
            self.cwnd_eff = np.where(landed, self.pend_cwnd, self.cwnd_eff)
            self.paced |= landed
            self.pend_rate[landed] = np.nan
        self.qdelay = info.queue_delay_ns
        rtt_now = self.net.base_rtt_ns + info.queue_delay_ns
        paced = self.cwnd_eff / (rtt_now * self.pkts_per_ns)
        np.minimum(np.maximum(paced, MIN_RATE, out=paced), 1.0, out=paced)  # np.clip is slower
        return np.where(self.paced & info.active, paced, info.rate)
