"""DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015), NIC style.

DCQCN does not use RTT probes: it reacts to CNPs, and its timers run in hardware. It therefore
runs on the engine's tick (every ``tick_us``, vectorized over all flows) and its ``decide`` leaves
rates unchanged.

A flow's state starts from the rate the engine started it at (the scenario's ``initial_rate``
override, e.g. 1/N, or ``initial_rate`` = line rate): RC = RT = that rate at its first tick or
decision, so a 1/N start is not undone by a jump to line rate at the first tick.

* NP (receiver): at most one CNP per flow per ``cnp_interval_us`` (50 us), sent if at least one
  ECN-marked packet arrived in that window. The fluid model gives expected marked packets m;
  a CNP is drawn with probability 1 - exp(-m) (Poisson arrivals of marks), seeded.
* RP (sender), on a CNP: target rate RT = RC; RC *= 1 - alpha/2; alpha = (1-g) alpha + g; reset
  the increase stages. Without CNPs, alpha = (1-g) alpha every ``alpha_timer_us`` (55 us).
* Rate increase events come from a timer (``timer_us``) and a byte counter (``byte_counter``
  bytes); each event advances its stage counter. While both stages < F: fast recovery
  RC = (RT + RC)/2; once either exceeds F: additive increase RT += R_AI; once both exceed F: hyper
  increase RT += i * R_HAI (i = min stage - F); then RC = (RT + RC)/2.
* Mellanox variants (``DcqcnParams`` flags, HPCC-ns3's ``rdma-hw.cc``; off by default): hyper
  increase on the timer stage alone, RT kept at a cut before any timer event, timers from the
  first CNP, and CNP per marked packet with alpha and cuts on their own timers.

Defaults and sources (all are parameters). Paper = Zhu et al., SIGCOMM 2015: its algorithm section
(3) gives N = 50 us (CNP interval), K = 55 us (alpha timer), g = 1/256, F = 5, R_AI = 40 Mb/s; its
parameter table gives timer 55 us, byte counter 10 MB, g = 1/256 and the RED setting Kmin = 5 KB,
Kmax = 200 KB, Pmax = 1 % (40G testbed); it gives no R_HAI value we could confirm. Cross-checked
against two author codebases (N, K, F, g, R_AI match DCQCN-ns3; HPCC-ns3's ``dcqcn_paper`` setting
uses timer 55 us and a 50 us decrease interval):

* DCQCN-ns3 = github.com/bobzhuyb/ns3-rdma @ e8a27d02bfe5ef0aec189c7d1a401547dbd8fbad (the DCQCN
  first author's simulator): ``src/point-to-point/model/qbb-net-device.cc`` attribute defaults
  CNPInterval 50 us, AlphaResumInterval 55 us, FastRecoveryTimes 5 (QCN-inherited: RPTimer
  1500 us, ByteCounter 150 KB, RateAI 5 Mb/s, RateHAI 50 Mb/s, gain 1/16, MinRate 100 Mb/s, alpha
  starts at 0.5); its sample ``windows/ns-3-dev/x64/Release/mix/config.txt`` (40G incast):
  CNP_INTERVAL 50, ALPHA_RESUME_INTERVAL 55, RP_TIMER 60, BYTE_COUNTER 300000000 (byte counter
  off), DCTCP_GAIN 1/256, FAST_RECOVERY_TIMES 5, RATE_AI 40Mb/s, RATE_HAI 200Mb/s.
* HPCC-ns3 = github.com/alibaba-edu/High-Precision-Congestion-Control @
  9f4be2a9ead8a90e8bf732c66bd758c00e58e5be (HPCC's baselines; ``rdma-hw.cc`` "Mellanox's version of
  DCQCN": timer-only increase, no byte counter; the NP's CNP pacing is emulated by a rate-decrease
  check every RATE_DECREASE_INTERVAL). ``simulation/run.py`` at ``--bw 100``: ``--cc dcqcn``:
  alpha interval 1 us, decrease interval 4 us, RP timer 300 us, g = 1/256, FAST_RECOVERY_TIMES 1,
  RATE_AI 20 Mb/s (5 bw/25), RATE_HAI 200 Mb/s (50 bw/25), MIN_RATE 1000 Mb/s; ``--cc dcqcn_paper``:
  alpha 50 us, decrease 50 us, RP timer 55 us, the rest as ``dcqcn``. ECN at 100G (``config.txt``
  and ``run.py`` KMIN_MAP / KMAX_MAP / PMAX_MAP, KB per ``switch-mmu.cc``): 400 KB / 1600 KB / 0.2
  (100 KB / 400 KB / 0.2 is its 25G entry).

Discrepancies (values kept): R_HAI = 400 Mb/s = 10 R_AI follows the Mellanox/HPCC-ns3 ratio (5/50,
20/200) but no source uses 400 Mb/s (DCQCN-ns3 sample and HPCC-ns3 at 100G: 200 Mb/s); F = 5 is
the paper's, HPCC-ns3 runs F = 1; HPCC-ns3 runs timer 300 us / alpha 1 us (Mellanox) or 55 us /
50 us, and no byte counter; alpha starts at 1 (HPCC-ns3, on the first CNP) vs 0.5 (DCQCN-ns3);
``min_rate`` (~6 Mb/s at 100G) is far below both codebases' 100 Mb/s / 1 Gb/s floors.
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

from rlcc.errors import BadInputError
from rlcc.simulator.controllers.base import DecisionBatch, TickInfo
from rlcc.simulator.params import Network


@dataclasses.dataclass
class DcqcnParams:
    g: float = 1.0 / 256  # paper (section 3, parameter table); DCQCN-ns3 sample config; HPCC-ns3 EWMA_GAIN
    alpha_timer_us: float = 55.0  # paper K (section 3); DCQCN-ns3 AlphaResumInterval; HPCC-ns3: 1 (mlx) / 50 (paper)
    timer_us: float = 55.0  # paper parameter table; DCQCN-ns3 sample 60, QCN 1500; HPCC-ns3: 300 (mlx) / 55
    byte_counter: float = 10e6  # paper parameter table (10 MB); DCQCN-ns3 sample: off; HPCC-ns3: none
    fast_recovery_steps: int = 5  # paper F (section 3); DCQCN-ns3 FastRecoveryTimes 5; HPCC-ns3 runs 1
    rate_ai_gbps: float = 0.04  # paper R_AI 40 Mb/s; DCQCN-ns3 sample 40 Mb/s; HPCC-ns3 at 100G: 20 Mb/s
    rate_hai_gbps: float = 0.4  # 10 R_AI (Mellanox/HPCC-ns3 ratio); DCQCN-ns3 sample, HPCC-ns3 100G: 200 Mb/s
    cnp_interval_us: float = 50.0  # paper N (section 3); DCQCN-ns3 CNPInterval; HPCC-ns3 decrease check 4 / 50
    min_rate: float = 1.0 / 16384  # our choice (~6 Mb/s at 100G); both ns-3 codes floor at 100 Mb/s or 1 Gb/s
    tick_us: float = 5.0  # our choice (timers are checked on the engine's tick)
    initial_alpha: float = 1.0  # HPCC-ns3 (alpha = 1 at the first CNP); DCQCN-ns3 starts at 0.5
    # Mellanox variants (HPCC-ns3 rdma-hw.cc, CC_MODE 1); the defaults are the paper's rules.
    hyper_on_timer_alone: bool = False
    """RdmaHw::RateIncEventMlx: an increase event's phase follows the timer stage s before the event
    alone: s < F fast recovery, s = F additive (+R_AI), s > F hyper (+R_HAI, one step per event)."""
    clamp_target: bool = True
    """False: RdmaHw::CheckRateDecreaseMlx with ClampTargetRate off: a cut sets RT = RC only if a timer
    increase event happened since the last cut (timer stage > 0), else RT is kept."""
    timers_from_first_cnp: bool = False
    """RdmaHw::cnp_received_mlx: a flow's alpha and increase timers start at its first CNP (before it,
    alpha stays ``initial_alpha`` and RT = RC: no CNP, no rate change)."""
    decrease_on_timer: bool = False
    """RdmaHw::CheckRateDecreaseMlx / UpdateAlphaMlx: every marked packet's ACK is a CNP (no NP pacing);
    from a flow's first CNP (alpha = ``initial_alpha``), alpha updates every ``alpha_timer_us`` (+g if a
    CNP arrived since the last update, else decays) and a cut happens every ``cnp_interval_us`` if a
    CNP arrived since the last check (cuts leave alpha alone)."""
    feedback_delay_us: float = 0.0
    """Delay from the marks a flow's sending causes to their CNPs at its sender. The fluid queue sees a
    rate change at once, the wire only after the forward path, and a CNP (the peer: an ACK's flag)
    returns over the reverse path: about one base RTT in all. 0: at the next tick (the default)."""


class Dcqcn:
    """Vectorized DCQCN reaction point + notification point, one state row per flow."""

    spec = None
    initial_rate = 1.0
    name = "dcqcn"

    def __init__(self, params: DcqcnParams | None = None) -> None:
        self.p = params or DcqcnParams()
        self.tick_ns = self.p.tick_us * 1e3

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        self.rng = rng
        self.r_ai = self.p.rate_ai_gbps / network.line_rate_gbps
        self.r_hai = self.p.rate_hai_gbps / network.line_rate_gbps
        self.rc = np.full(n_flows, self.initial_rate)
        self.rt = self.rc.copy()
        self.alpha = np.full(n_flows, self.p.initial_alpha)
        self.t_stage = np.zeros(n_flows, np.int64)
        self.b_stage = np.zeros(n_flows, np.int64)
        self.byte_acc = np.zeros(n_flows)
        self.alpha_clock = np.zeros(n_flows)
        self.inc_clock = np.zeros(n_flows)
        self.mark_acc = np.zeros(n_flows)
        self.last_cnp_ns = np.full(n_flows, -np.inf)
        self.started = np.zeros(n_flows, bool)
        self.cnp_seen = np.zeros(n_flows, bool)
        self.dec_clock = np.zeros(n_flows)  # decrease_on_timer: time since the last decrease check
        self.alpha_cnp = np.zeros(n_flows, bool)  # a CNP arrived since the last alpha update
        self.dec_cnp = np.zeros(n_flows, bool)  # a CNP arrived since the last decrease check
        self.last_tick_ns = 0.0
        self.cnps = 0
        if not self.p.feedback_delay_us >= 0:
            raise BadInputError(f"invalid DCQCN feedback_delay_us {self.p.feedback_delay_us!r}: must be >= 0")
        lag = int(round(self.p.feedback_delay_us / self.p.tick_us))
        self.marks_in_flight: collections.deque = collections.deque(maxlen=lag + 1)

    def _adopt(self, ids: np.ndarray, rates: np.ndarray) -> None:
        """Seed RC = RT with the engine's start rate for flows seen for the first time."""
        new = ~self.started[ids]
        if new.any():
            ids = ids[new]
            self.rc[ids] = rates[new]
            self.rt[ids] = rates[new]
            self.started[ids] = True

    def decide(self, batch: DecisionBatch) -> np.ndarray:
        self._adopt(batch.flow_ids, batch.rate)
        return self.rc[batch.flow_ids].copy()

    def _arrived_marks(self, marked: np.ndarray) -> np.ndarray:
        """The marked packets whose feedback reaches the senders now (``feedback_delay_us`` ticks late)."""
        line = self.marks_in_flight
        if line.maxlen == 1:
            return marked
        line.append(marked)
        return line[0] if len(line) == line.maxlen else np.zeros_like(marked)

    def on_tick(self, info: TickInfo) -> np.ndarray:
        now = info.time_ns
        elapsed = now - self.last_tick_ns
        self.last_tick_ns = now
        active = np.flatnonzero(info.active)
        self._adopt(active, info.rate[active])
        self.rc = np.where(info.active, self.rc, info.rate)
        if self.p.decrease_on_timer:
            cut = self._timed_decrease(info, elapsed)
        else:
            cut = self._notification_point(info, now)
            self.cnps += int(cut.sum())
            self.cnp_seen |= cut
            self._cut(cut)
        live = ~cut & info.active
        if self.p.timers_from_first_cnp:
            live &= self.cnp_seen
        self._timers(live, elapsed, info.sent_bytes, alpha=not self.p.decrease_on_timer)
        return self.rc.copy()

    def _timed_decrease(self, info: TickInfo, elapsed: float) -> np.ndarray:
        """``decrease_on_timer``: CNP arrivals (>= 1 marked packet this tick, drawn as in
        ``_notification_point``), the alpha timer, then the decrease check; returns the flows cut."""
        p = self.p
        m = self._arrived_marks(info.marked_packets)
        arrived = info.active & (self.rng.random(len(m)) < -np.expm1(-m))
        self.cnps += int(arrived.sum())
        first = arrived & ~self.cnp_seen
        self.cnp_seen |= arrived
        self.alpha[first] = p.initial_alpha
        self.alpha_clock[first] = self.dec_clock[first] = 0.0
        self.alpha_cnp |= arrived & ~first
        self.dec_cnp |= arrived
        live = info.active & self.cnp_seen & ~first
        self.alpha_clock[live] += elapsed
        update = live & (self.alpha_clock >= p.alpha_timer_us * 1e3)
        self.alpha_clock[update] -= p.alpha_timer_us * 1e3
        self.alpha[update] = (1.0 - p.g) * self.alpha[update] + p.g * self.alpha_cnp[update]
        self.alpha_cnp[update] = False
        self.dec_clock[live] += elapsed
        check = live & (self.dec_clock >= p.cnp_interval_us * 1e3)
        self.dec_clock[check] -= p.cnp_interval_us * 1e3
        cut = check & self.dec_cnp
        self.dec_cnp[check] = False
        self._cut(cut, alpha=False)
        return cut

    def _notification_point(self, info: TickInfo, now: float) -> np.ndarray:
        self.mark_acc += self._arrived_marks(info.marked_packets)
        window_over = (now - self.last_cnp_ns >= self.p.cnp_interval_us * 1e3) & (self.mark_acc > 0)
        draw = self.rng.random(len(self.mark_acc))
        cnp = window_over & (draw < -np.expm1(-self.mark_acc))
        self.mark_acc[window_over] = 0.0
        self.last_cnp_ns[cnp] = now
        return cnp

    def _cut(self, cnp: np.ndarray, alpha: bool = True) -> None:
        """Cut the flows ``cnp`` and reset their increase stages (``alpha``: also update alpha)."""
        g = self.p.g
        clamp = cnp if self.p.clamp_target else cnp & (self.t_stage > 0)
        self.rt[clamp] = self.rc[clamp]
        self.rc[cnp] = np.maximum(self.rc[cnp] * (1.0 - self.alpha[cnp] / 2.0), self.p.min_rate)
        if alpha:
            self.alpha[cnp] = (1.0 - g) * self.alpha[cnp] + g
            self.alpha_clock[cnp] = 0
        for arr in (self.t_stage, self.b_stage, self.byte_acc, self.inc_clock):
            arr[cnp] = 0

    def _timers(self, live: np.ndarray, elapsed: float, sent: np.ndarray, alpha: bool = True) -> None:
        """Advance the ``live`` flows' increase timer and byte counter (``alpha``: and the alpha decay timer)."""
        p = self.p
        if alpha:
            self.alpha_clock[live] += elapsed
            decay = live & (self.alpha_clock >= p.alpha_timer_us * 1e3)
            self.alpha[decay] *= 1.0 - p.g
            self.alpha_clock[decay] -= p.alpha_timer_us * 1e3

        self.inc_clock[live] += elapsed
        timer_fire = live & (self.inc_clock >= p.timer_us * 1e3)
        self.inc_clock[timer_fire] -= p.timer_us * 1e3
        self.byte_acc[live] += sent[live]
        byte_fire = live & (self.byte_acc >= p.byte_counter)
        self.byte_acc[byte_fire] -= p.byte_counter
        self.t_stage += timer_fire
        self.b_stage += byte_fire

        inc = timer_fire | byte_fire
        if not inc.any():
            return
        f = p.fast_recovery_steps
        if p.hyper_on_timer_alone:
            before = self.t_stage - timer_fire
            additive = inc & (before == f)
            self.rt[additive] += self.r_ai
            self.rt[inc & (before > f)] += self.r_hai
        else:
            hi = np.maximum(self.t_stage, self.b_stage)
            lo = np.minimum(self.t_stage, self.b_stage)
            hyper = inc & (lo > f)
            additive = inc & (hi > f) & ~hyper
            self.rt[additive] += self.r_ai
            self.rt[hyper] += (lo[hyper] - f) * self.r_hai
        np.minimum(self.rt, 1.0, out=self.rt)
        self.rc[inc] = (self.rt[inc] + self.rc[inc]) / 2.0
