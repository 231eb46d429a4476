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
rate]); no window bound on inflight bytes (the fluid engine paces at R; the repo also limits
inflight to W, ``HAS_WIN 1`` / ``VAR_WIN 1``); INT fields are exact (the repo quantizes them,
``src/network/utils/int-header.h``: 128 B tx units, 80 B qlen units).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlcc.errors import BadInputError
from rlcc.simulator.controllers.base import DecisionBatch, HopTelemetry
from rlcc.simulator.params import Network

MIN_RATE = 1.0 / 16384


@dataclasses.dataclass
class HpccParams:
    eta: float = 0.95  # target utilization (paper; repo U_TARGET)
    max_stage: int = 5  # additive stages before a multiplicative update (paper; repo runs 0)
    rate_ai_gbps: float = 0.04  # W_AI as a rate, W_AI = R_AI x T (repo run.py, 100G)
    min_rate: float = MIN_RATE  # rate floor, fraction of line rate (our choice)


class Hpcc:
    """Vectorized HPCC over all flows; per-flow Wc, incStage, U and last INT indexed by flow id."""

    spec = None
    initial_rate = 1.0
    name = "hpcc"
    wants_telemetry = True

    def __init__(self, params: HpccParams | None = None) -> None:
        self.p = params or HpccParams()

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        self.t_ns = network.base_rtt_ns
        self.bdp = network.bytes_per_ns * self.t_ns  # W_init: line rate x T
        self.w_ai = self.p.rate_ai_gbps / 8.0 * self.t_ns  # bytes
        self.w_c = np.full(n_flows, self.initial_rate * self.bdp)
        self.inc_stage = np.zeros(n_flows, np.int64)
        self.u = np.ones(n_flows)
        self.prev_hops = np.zeros(n_flows, np.int64)  # 0: no telemetry stored yet
        self.prev_ts = np.zeros(n_flows)
        self.prev_q = np.zeros((n_flows, 0))
        self.prev_tx = np.zeros((n_flows, 0))

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
        if start.any():
            self.w_c[ids[start]] = batch.rate[start] * self.bdp
        update = ~start & (tel.hops > 0) & (self.prev_hops[ids] == tel.hops) & (tel.ts_ns > self.prev_ts[ids])
        if update.any():
            self._update(ids[update], _rows(tel, update))
        self._store(ids, tel)
        rates = np.clip(self.w_c[ids] / self.bdp, self.p.min_rate, 1.0)
        return np.where(start, batch.rate, rates)

    def _update(self, ids: np.ndarray, tel: HopTelemetry) -> None:
        """MeasureInflight + ComputeWind(updateWc=True) for flows with a previous probe."""
        p, t = self.p, self.t_ns
        width = tel.qlen_bytes.shape[1]
        dt = tel.ts_ns - self.prev_ts[ids]
        tx_rate = (tel.tx_bytes - self.prev_tx[ids, :width]) / dt[:, None]
        qlen = np.minimum(tel.qlen_bytes, self.prev_q[ids, :width])
        u_hop = qlen / (tel.capacity * t) + tx_rate / tel.capacity
        valid = np.arange(width) < tel.hops[:, None]
        u_max = np.where(valid, u_hop, -np.inf).max(axis=1)
        tau = np.minimum(dt, t)  # one stamp per probe: every hop's delta ts is dt
        u = (1.0 - tau / t) * self.u[ids] + tau / t * u_max
        self.u[ids] = u

        w_c, stage = self.w_c[ids], self.inc_stage[ids]
        multiplicative = (u >= p.eta) | (stage >= p.max_stage)
        with np.errstate(divide="ignore"):
            w_mi = w_c * (p.eta / u) + self.w_ai  # u = 0 (idle path): inf, clipped to one BDP
        w = np.where(multiplicative, w_mi, w_c + self.w_ai)
        self.w_c[ids] = np.clip(w, p.min_rate * self.bdp, self.bdp)
        self.inc_stage[ids] = np.where(multiplicative, 0, stage + 1)

    def _store(self, ids: np.ndarray, tel: HopTelemetry) -> None:
        width = tel.qlen_bytes.shape[1]
        self.prev_q[ids, :width] = tel.qlen_bytes
        self.prev_tx[ids, :width] = tel.tx_bytes
        self.prev_ts[ids] = tel.ts_ns
        self.prev_hops[ids] = tel.hops


def _rows(tel: HopTelemetry, mask: np.ndarray) -> HopTelemetry:
    return HopTelemetry(hops=tel.hops[mask], qlen_bytes=tel.qlen_bytes[mask], tx_bytes=tel.tx_bytes[mask],
                        ts_ns=tel.ts_ns[mask], capacity=tel.capacity[mask])
