"""HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019), from per-hop INT.

Algorithm 1 of the paper, vectorized over flows (per-flow state indexed by flow id), with one
update per RTT probe. Each probe carries the in-band telemetry of every hop of its flow's path
(``DecisionBatch.telemetry``, stamped at the probe's send time); the controller keeps the previous
probe's telemetry per hop and at every decision runs

* MeasureInflight: per hop ``txRate = delta tx_bytes / delta ts`` and
  ``u' = min(qlen, prev qlen) / (B T) + txRate / B`` (B the hop's capacity in bytes/ns, T the base
  RTT); u = the largest u' over the path's hops, tau = min(delta ts of that hop, T) (all hops of a
  probe share one stamp); ``U = (1 - tau/T) U + tau/T u``;
* ComputeWind with updateWc = True: if ``U >= eta`` or ``incStage >= maxStage``:
  ``W = Wc / (U/eta) + W_AI``, incStage = 0; else ``W = Wc + W_AI``, incStage += 1; then Wc = W;
* NewAck: rate ``R = W / T``, as a fraction of the host line rate (``network.bytes_per_ns`` = 1.0).
* The in-flight window (``window = True``; the repo's ``HAS_WIN 1`` / ``VAR_WIN 1``, the paper's
  "HPCC is a window-based congestion control with pacing"): a flow has at most W = R x T bytes in
  flight, so over a path of base RTT b whose queues add a delay q it sends at most W / (b + q).
  The fluid form of that bound is the flow rate ``min(R, max(R T, one packet) / (b + q))`` (a QP
  may send while less than W is in flight, so a window below one packet still lets one out: at
  512 flows on the 1 Gb/s rate floor that sets the queue), re-evaluated from the
  current path delay on a timer (``window_tick_us``; default every engine step, ``Network.dt_ns``)
  and at each decision from the probe's RTT. Without it a paced flow keeps sending at R while its
  own queue delays the feedback (a 64-flow line-rate incast then holds ~1 ms of queue).

One probe per RTT is the per-RTT update (the paper's ``ack.seq > lastUpdateSeq`` branch, which
updates Wc once per RTT). The paper also reacts to every ACK in between (``updateWc = False``:
W from the last Wc and the newest U; the ns-3 code's ``FAST_REACT 1``); the fluid model has one
probe per RTT, so those per-ACK reactions are folded into the per-RTT update.

A flow's first decision (``batch.first``, or no previous telemetry) only stores the telemetry and
sets Wc = start rate x line rate x T: the paper's W_init is one BDP (line rate x T, flows start at
line rate), but the scenario may start flows at e.g. 1/N and that start is honoured (as in Swift).
A path change (other hop count) or a non-increasing stamp also just re-stores the telemetry.

Defaults and their sources. HPCC repo = github.com/alibaba-edu/High-Precision-Congestion-Control
at commit 9f4be2a9ead8a90e8bf732c66bd758c00e58e5be (the authors' ns-3 simulator):

* ``eta = 0.95``: the paper (section 3, parameter discussion: eta trades utilization against
  transient queueing, 95 % by default); repo ``simulation/mix/config.txt`` ``U_TARGET 0.95``,
  ``simulation/run.py`` ``--utgt`` default 95, ``simulation/src/point-to-point/model/rdma-hw.cc``
  attribute ``TargetUtil`` 0.95.
* ``max_stage = 5``: the paper (maxStage = 5; "maxStage controls a simple tradeoff between
  steady-state stability and the speed to reclaim free bandwidth"); ``rdma-hw.cc`` attribute
  ``MiThresh`` 5 and ``simulation/scratch/third.cc`` ``mi_thresh = 5``. Discrepancy: the configs the
  authors ran set ``MI_THRESH 0`` (``config.txt``; ``run.py --mi`` default 0), and the authors say
  the paper's simulations used maxStage = 0, 5 being a typo for the simulation setting (issue #24
  of that repo, quoting the HPCC project page; the first author there: "In theory maxStage=0 is
  best", the testbed used maxStage for a hardware reason). ``max_stage = 0`` reproduces the
  paper's simulations: multiplicative update at every RTT.
* ``rate_ai_gbps = 0.04`` (W_AI = 40 Mb/s x T, 40 B at 8 us): ``run.py`` sets HPCC's additive
  increase to ``10 * bw / 25`` Mb/s = 40 Mb/s for 100G NICs (``--cc hp``); ``rdma-hw.cc`` adds it as
  a rate (``m_rai``: ``new_rate = curRate / max_c + m_rai``), so W_AI = R_AI x T. The paper sets
  W_AI = W_init (1 - eta) / N for N the number of concurrent flows per link that should keep a
  near-zero queue; 40 Mb/s at 100G is N = 0.05 x 100 Gb/s / 40 Mb/s = 125. Above that, the
  aggregate AI exceeds the 5 % headroom: the fixed point has U = eta + N x R_AI / line rate > 1
  and a standing queue. (The repo's README example runs ``--hpai 50``, ``config.txt`` has
  ``RATE_AI 50Mb/s``.)
* T = ``network.base_rtt_ns`` for every flow (the repo's ``GLOBAL_T 1``: one network-wide T, the
  largest base RTT); U starts at 1 (``rdma-queue-pair.cc``: ``hp.u = 1``); one aggregate rate for
  all hops (``MULTI_RATE 0`` in ``config.txt`` / ``run.py``, the paper's Algorithm 1).
* ``min_rate = 1/16384`` of line rate (our choice, as Swift): the repo floors rates at 100 Mb/s
  (``rdma-hw.cc`` ``MinRate``, ``config.txt``) or 1 Gb/s (``run.py``), above the fair share of a
  1000-flow incast at 100G.

Other deviations: the min() qlen filter compares two probes one RTT apart (the paper compares
consecutive ACKs); W is clipped to [min_rate, 1] x BDP (the repo clips the rate to [MinRate, line
rate]); the window bound is fluid (a rate W / RTT, not a per-packet ACK clock); INT fields are exact (the repo quantizes them,
``src/network/utils/int-header.h``: 128 B tx units, 80 B qlen units).
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

from rlcc.errors import BadInputError
from rlcc.simulator.controllers.base import DecisionBatch, HopTelemetry, TickInfo
from rlcc.simulator.params import Network

MIN_RATE = 1.0 / 16384


@dataclasses.dataclass
class HpccParams:
    eta: float = 0.95  # target utilization (paper; repo U_TARGET)
    max_stage: int = 5  # additive stages before a multiplicative update (paper; repo runs 0)
    rate_ai_gbps: float = 0.04  # W_AI as a rate, W_AI = R_AI x T (repo run.py, 100G)
    min_rate: float = MIN_RATE  # rate floor, fraction of line rate (our choice)
    fast_react: bool = True  # per-ACK W = Wc eta / U + W_AI between per-RTT Wc updates (paper; repo FAST_REACT 1)
    ack_ewma: bool = True  # U's EWMA as the per-ACK updates of one probe interval compound (exp(-dt/T))
    window: bool = True  # inflight <= W = R x T (paper; repo HAS_WIN 1, VAR_WIN 1)
    window_tick_us: float | None = None  # how often the window bound is re-evaluated (None: every engine step)


class Hpcc:
    """Vectorized HPCC over all flows; per-flow Wc, incStage, U and last INT indexed by flow id."""

    spec = None
    initial_rate = 1.0
    name = "hpcc"
    wants_telemetry = True
    tick_counters = False  # the window tick reads path delays, not counters

    def __init__(self, params: HpccParams | None = None) -> None:
        self.p = params or HpccParams()

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        if self.p.window_tick_us is not None and not self.p.window_tick_us > 0:
            raise BadInputError(f"invalid HPCC window_tick_us {self.p.window_tick_us!r}: must be > 0")
        tick = network.dt_ns if self.p.window_tick_us is None else self.p.window_tick_us * 1e3
        self.fast = self.p.fast_react
        self.tick_ns = tick if self.p.window or self.fast else None
        # INT reaches the sender with the ACK, about half a base RTT after the bottleneck stamped it.
        self.hist: collections.deque = collections.deque(maxlen=2 + int(round(network.base_rtt_ns / 2 / tick)))
        self.t_ns = network.base_rtt_ns
        self.bdp = network.bytes_per_ns * self.t_ns  # W_init: line rate x T
        self.line = network.bytes_per_ns
        # A QP may send while less than W is in flight, so one whole packet always may be.
        self.packet = float(network.wire_packet_bytes)
        self.w_ai = self.p.rate_ai_gbps / 8.0 * self.t_ns  # bytes
        self.w_c = np.full(n_flows, self.initial_rate * self.bdp)
        self.inc_stage = np.zeros(n_flows, np.int64)
        self.u = np.ones(n_flows)
        self.prev_hops = np.zeros(n_flows, np.int64)  # 0: no telemetry stored yet
        self.prev_ts = np.zeros(n_flows)
        self.prev_q = np.zeros((n_flows, 0))
        self.prev_tx = np.zeros((n_flows, 0))
        self.pace = np.full(n_flows, np.nan)  # R = W / T per flow (nan: not yet known, the start rate)

    def _ensure_width(self, width: int) -> None:
        have = self.prev_q.shape[1]
        if width > have:
            pad = ((0, 0), (0, width - have))
            self.prev_q = np.pad(self.prev_q, pad)
            self.prev_tx = np.pad(self.prev_tx, pad)

    def decide(self, batch: DecisionBatch) -> np.ndarray:
        tel = batch.telemetry
        if tel is None:
            raise BadInputError("controller 'hpcc' needs per-hop telemetry (DecisionBatch.telemetry); "
                                "the engine did not provide it")
        ids = batch.flow_ids
        width = tel.qlen_bytes.shape[1]
        self._ensure_width(width)
        start = batch.first | (self.prev_hops[ids] == 0)
        pace = self.pace[ids]
        unknown = np.isnan(pace)
        pace[unknown] = batch.rate[unknown]  # no tick yet: the rate is still the start rate
        if start.any():
            self.w_c[ids[start]] = pace[start] * self.bdp
        update = ~start & (tel.hops > 0) & (self.prev_hops[ids] == tel.hops) & (tel.ts_ns > self.prev_ts[ids])
        if update.any():
            up = ids[update]
            if not self.fast:  # U from the probes; with per-ACK reaction the ticks keep U
                t = _rows(tel, update)
                dt = t.ts_ns - self.prev_ts[up]
                width = t.qlen_bytes.shape[1]
                self._measure(up, t.qlen_bytes, self.prev_q[up, :width], t.tx_bytes - self.prev_tx[up, :width],
                              dt, t.hops, t.capacity)
            self.w_c[up] = self._wind(up, update_wc=True)
        self._store(ids, tel)
        pace = np.where(start, pace, np.clip(self.w_c[ids] / self.bdp, self.p.min_rate, 1.0))
        self.pace[ids] = pace
        if not self.p.window:
            return pace
        return self._bounded(pace, batch.rtt_ns)

    def on_tick(self, info: TickInfo) -> np.ndarray:
        """Per-ACK reaction (``fast_react``) from the INT the ACKs arriving now carry, then the window
        bound at the current path delays: rate min(R, R T / (base RTT + queueing))."""
        unknown = np.isnan(self.pace) & info.active  # a flow's rate is its start rate until it is known
        self.pace[unknown] = info.rate[unknown]
        if self.fast:
            self._react(info)
        pace = np.where(np.isnan(self.pace), info.rate, self.pace)  # flows not started: left alone
        if not self.p.window:
            return pace
        base = self.t_ns if info.base_rtt_ns is None else info.base_rtt_ns
        return self._bounded(pace, base + info.queue_delay_ns)

    def _bounded(self, pace: np.ndarray, rtt_ns: np.ndarray | float) -> np.ndarray:
        """The window bound: rate min(R, max(W, one packet) / RTT) with W = R T."""
        window = np.maximum(pace * self.bdp, self.packet)
        return np.minimum(pace, window / (self.line * rtt_ns))

    def _react(self, info: TickInfo) -> None:
        """MeasureInflight on the INT of ``ack_delay`` ago, then ComputeWind(updateWc=False)."""
        tel = info.telemetry
        if tel is None:
            raise BadInputError("HPCC fast_react needs per-hop telemetry at ticks (TickInfo.telemetry); "
                                "the engine did not provide it")
        hist = self.hist
        hist.append((tel.qlen_bytes, tel.tx_bytes))
        if len(hist) < hist.maxlen:
            return
        (q0, tx0), (q1, tx1) = hist[0], hist[1]  # one tick apart, ack_delay old
        every = np.arange(len(self.u))
        self._measure(every, q1, q0, tx1 - tx0, np.full(len(every), self.tick_ns), tel.hops, tel.capacity)
        ready = np.flatnonzero((self.prev_hops > 0) & info.active)  # Wc set by a first decision
        if len(ready):
            w = self._wind(ready, update_wc=False)
            self.pace[ready] = np.clip(w / self.bdp, self.p.min_rate, 1.0)

    def _measure(self, ids: np.ndarray, qlen: np.ndarray, prev_qlen: np.ndarray, d_tx: np.ndarray,
                 dt: np.ndarray, hops: np.ndarray, cap: np.ndarray) -> None:
        """MeasureInflight: U of flows ``ids`` from two INT samples ``dt`` apart, (B, H) per hop."""
        t = self.t_ns
        width = qlen.shape[1]
        u_hop = np.minimum(qlen, prev_qlen) / (cap * t) + d_tx / dt[:, None] / cap
        valid = np.arange(width) < hops[:, None]
        u_max = np.where(valid, u_hop, -np.inf).max(axis=1)
        keep = np.exp(-dt / t) if self.p.ack_ewma else 1.0 - np.minimum(dt, t) / t
        self.u[ids] = keep * self.u[ids] + (1.0 - keep) * u_max

    def _wind(self, ids: np.ndarray, update_wc: bool) -> np.ndarray:
        """ComputeWind: the window of flows ``ids`` from their U (Wc and incStage kept unless ``update_wc``)."""
        p = self.p
        u, w_c, stage = self.u[ids], self.w_c[ids], self.inc_stage[ids]
        multiplicative = (u >= p.eta) | (stage >= p.max_stage)
        with np.errstate(divide="ignore"):
            w_mi = w_c * (p.eta / u) + self.w_ai  # u = 0 (idle path): inf, clipped to one BDP
        w = np.clip(np.where(multiplicative, w_mi, w_c + self.w_ai), p.min_rate * self.bdp, self.bdp)
        if update_wc:
            self.inc_stage[ids] = np.where(multiplicative, 0, stage + 1)
        return w

    def _store(self, ids: np.ndarray, tel: HopTelemetry) -> None:
        width = tel.qlen_bytes.shape[1]
        self.prev_q[ids, :width] = tel.qlen_bytes
        self.prev_tx[ids, :width] = tel.tx_bytes
        self.prev_ts[ids] = tel.ts_ns
        self.prev_hops[ids] = tel.hops


def _rows(tel: HopTelemetry, mask: np.ndarray) -> HopTelemetry:
    return HopTelemetry(hops=tel.hops[mask], qlen_bytes=tel.qlen_bytes[mask], tx_bytes=tel.tx_bytes[mask],
                        ts_ns=tel.ts_ns[mask], capacity=tel.capacity[mask])
