"""Run metrics over a time window, from two snapshots of the cumulative counters.

Keys (all floats): ``goodput`` (delivered payload bytes / (ports x line rate x window), drops
excluded; ``network.header_bytes`` make the wire carry more than the payload),
``queue_delay_mean_us`` / ``queue_delay_p99_us`` (time-sampled port queues / line rate),
``mean_rtt_inflation`` (mean RTT over decisions / the nominal ``network.base_rtt_us``; a shorter
fat-tree path can bring it below 1), ``drops_per_flow`` (wire packets),
``drop_fraction`` (dropped / offered bytes), ``jain`` and ``min_max`` (fairness of the per-flow
goodput of long-lived flows active over the whole window), ``decisions``, and for scenarios with
short flows ``long_flow_bw`` (flow 0's goodput / line rate), ``short_fct_slowdown_mean`` /
``_p99`` (FCT / (size / line rate's payload throughput + base RTT)) and ``short_completed`` (fraction finished).
Under go-back-N (``Network.loss_recovery``) goodput and per-flow goodput count in-order bytes only
(the discarded ones excluded), and ``resent_per_flow`` (wire packets resent) and ``resent_fraction``
(resent / offered bytes) are added.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Protocol

import numpy as np

from rlcc.simulator.fabric import PathFabric
from rlcc.simulator.flows import FlowState
from rlcc.simulator.network import Fabric
from rlcc.simulator.params import FlowTable, Network


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """Cumulative counters at one instant."""

    time_ns: float
    sent: np.ndarray
    dropped: np.ndarray
    delivered: float
    fabric_dropped: float
    offered: float
    queue: float
    discarded: np.ndarray | None = None  # per flow, go-back-N (None: no go-back-N)
    resent: np.ndarray | None = None

    @classmethod
    def zero(cls, n: int, go_back: bool = False) -> "Snapshot":
        gbn = np.zeros(n) if go_back else None
        return cls(0.0, np.zeros(n), np.zeros(n), 0.0, 0.0, 0.0, 0.0, gbn, None if gbn is None else gbn.copy())


class RunCounters(Protocol):
    """What the metrics read of a finished run (the engine's run state): the network, the fabric,
    the flow table and per-flow state, the sampled queues and the iteration epochs."""

    net: Network
    n: int
    n_steps: int
    fabric: Fabric | PathFabric
    table: FlowTable
    flows: FlowState
    finite: np.ndarray  # bool (N,): finite-size flows
    q_samples: np.ndarray  # (rows, ports) or (rows, queues + 1): queue samples every q_every steps
    q_every: int
    q_weights: np.ndarray | None  # flows per path (a topology), None on a single switch
    epoch: np.ndarray | None
    epoch_start: np.ndarray
    epoch_end: np.ndarray

    def base_rtt(self, idx: np.ndarray) -> np.ndarray | float: ...


def jain(x: np.ndarray) -> float:
    """Jain's fairness index (1 = perfectly fair)."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) == 0 or not np.any(x):
        return float("nan")
    return float(x.sum() ** 2 / (len(x) * np.square(x).sum()))


def compute_metrics(run: RunCounters, a: Snapshot, b: Snapshot, rtt_stats: np.ndarray, from_step: int) -> dict[str, float]:
    """The module's metrics over the window from snapshot ``a`` to ``b`` (queue samples from step
    ``from_step``; ``rtt_stats``: summed RTT inflation and decision count over the window)."""
    span = b.time_ns - a.time_ns
    net, n = run.net, run.n
    out: dict[str, float] = {"window_start_ms": a.time_ns / 1e6, "window_ms": span / 1e6}
    cap_bytes = run.fabric.n_sinks * net.bytes_per_ns * span
    delivered = b.delivered - a.delivered
    if b.discarded is not None:
        # A loss episode's discarded bytes are booked at its NACK, which can fall in the window
        # after bytes that arrived before it: a window's in-order bytes are at least none.
        delivered = max(delivered - float(b.discarded.sum() - a.discarded.sum()), 0.0)
    out["goodput"] = delivered * net.payload_fraction / cap_bytes if span > 0 else float("nan")
    rows = run.q_samples[from_step // run.q_every : run.n_steps // run.q_every + 1]
    if run.q_weights is None:  # single switch: every port alike
        delay_us = rows.ravel() / net.bytes_per_ns / 1e3
        out["queue_delay_mean_us"] = float(delay_us.mean()) if len(delay_us) else float("nan")
        out["queue_delay_p99_us"] = float(np.percentile(delay_us, 99)) if len(delay_us) else float("nan")
    else:  # a topology: queueing delay along the paths, weighted by their flows
        out["queue_delay_mean_us"], out["queue_delay_p99_us"] = path_delay_stats(run.fabric, rows, run.q_weights, net.bytes_per_ns)
    out["mean_rtt_inflation"] = float(rtt_stats[0] / rtt_stats[1]) if rtt_stats[1] else float("nan")
    out["decisions"] = float(rtt_stats[1])
    dropped = b.fabric_dropped - a.fabric_dropped
    out["drops_per_flow"] = dropped / net.wire_packet_bytes / n
    out["drop_fraction"] = dropped / (b.offered - a.offered) if b.offered > a.offered else 0.0
    if b.resent is not None:
        resent = float(b.resent.sum() - a.resent.sum())
        out["resent_per_flow"] = resent / net.wire_packet_bytes / n
        out["resent_fraction"] = resent / (b.offered - a.offered) if b.offered > a.offered else 0.0
    good = (in_order(b) - in_order(a)) * net.payload_fraction
    long_lived = ~run.finite & (run.table.start_ns <= a.time_ns)
    if long_lived.sum() >= 1:
        g = good[long_lived]
        out["jain"] = jain(g)
        out["min_max"] = float(g.min() / g.max()) if g.max() > 0 else float("nan")
    if run.finite.any():
        if not run.finite[0]:  # long-short: flow 0 is the long flow
            out["long_flow_bw"] = float(good[0] / (net.bytes_per_ns * span)) if span > 0 else float("nan")
        short = run.finite
        fct = run.flows.fct[short]
        slow = fct_slowdown(fct, run.table.size_bytes[short], run.base_rtt(np.flatnonzero(short)), net.payload_bytes_per_ns)
        slow = slow[np.isfinite(slow)]
        out["short_completed"] = float(np.isfinite(fct).mean())
        out["short_fct_slowdown_mean"] = float(slow.mean()) if len(slow) else float("nan")
        out["short_fct_slowdown_p99"] = float(np.percentile(slow, 99)) if len(slow) else float("nan")
    if run.epoch is not None:
        took = run.epoch_end - run.epoch_start
        done = np.isfinite(took)
        out["iterations_completed"] = float(done.sum())
        out["iteration_us"] = float(took[done].mean() / 1e3) if done.any() else float("nan")
    return {k: (float(v) if v is not None else math.nan) for k, v in out.items()}


def in_order(s: Snapshot) -> np.ndarray:
    """Per flow: wire bytes delivered in order up to ``s`` (sent, less dropped and go-back-N discarded)."""
    return s.sent - s.dropped - s.discarded if s.discarded is not None else s.sent - s.dropped


def fct_slowdown(fct_ns: np.ndarray, size_bytes: np.ndarray, base_rtt_ns: np.ndarray | float,
                 bytes_per_ns: float) -> np.ndarray:
    """Per flow: FCT / ideal FCT, the ideal being size at ``bytes_per_ns`` (callers: the line rate's
    payload throughput) + the flow's base RTT (NaN: unfinished)."""
    return fct_ns / (size_bytes / bytes_per_ns + base_rtt_ns)


def path_delay_stats(fabric: PathFabric, rows: np.ndarray, weights: np.ndarray, bytes_per_ns: float) -> tuple[float, float]:
    """Flow-weighted mean and p99 (us) of the queueing delay along the paths over the sampled times.

    ``rows``: (T, queues + 1) per-queue delays (ns, the last column the fabric's padding slot),
    ``weights``: flows per path. The mean is linear in the per-queue delays (queue l weighs the flows
    whose path crosses it); the p99 is over (time, path) of each path's delay summed over its hops
    and rounded to float32 bytes at a host's line rate, in chunks of rows.
    """
    if len(rows) == 0:
        return float("nan"), float("nan")
    pq = fabric.path_queues
    per_queue = np.bincount(pq.ravel(), weights=np.repeat(weights, pq.shape[1]), minlength=rows.shape[1])
    per_queue[fabric.n_queues] = 0.0
    mean = float((rows @ per_queue).sum() / (len(rows) * weights.sum()) / 1e3)
    paths = np.arange(len(pq))
    x = np.empty((len(rows), len(pq)), np.float32)
    chunk = max(1, (1 << 20) // len(pq))
    for a in range(0, len(rows), chunk):
        x[a : a + chunk] = fabric.sum_hops(rows[a : a + chunk], paths) * bytes_per_ns
    x /= np.float32(bytes_per_ns)
    x /= np.float32(1e3)
    return mean, weighted_percentile(x, weights, 99)


def weighted_percentile(x: np.ndarray, w: np.ndarray, q: float) -> float:
    """The smallest x whose cumulative weight reaches q% of the total (inverted-CDF definition).

    ``x`` (n,) with weights ``w`` (n,), or (T, P) with per-column weights ``w`` (P,). For a high q
    only the values at or above an unweighted quantile are sorted (when the weight below it is
    short of the target; else everything is); the result is the full sort's exactly when the
    cumulative sums are exact (integer weights such as flow counts).
    """
    x2 = x.reshape(1, -1) if x.ndim == 1 else x.reshape(-1, x.shape[-1])
    w = np.asarray(w, dtype=np.float64)
    wb = np.broadcast_to(w, x2.shape)
    n = x2.size
    frac = 1.0 - 4.0 * (1.0 - q / 100.0)  # e.g. the unweighted 96th percentile for q = 99
    if n >= 100_000 and frac >= 0.5:
        t = np.partition(x2.ravel(), int(frac * (n - 1)))[int(frac * (n - 1))]
        hi = x2 >= t
        below = float(((~hi).sum(axis=0) @ w) if x.ndim > 1 else w[~hi[0]].sum())
        total = float(len(x2) * w.sum()) if x.ndim > 1 else float(w.sum())
        if below < q / 100.0 * total:
            xs, ws = x2[hi], wb[hi]
            order = np.argsort(xs, kind="stable")
            cum = below + np.cumsum(ws[order])
            i = int(np.searchsorted(cum, q / 100.0 * total, side="left"))
            return float(xs[order][min(i, len(xs) - 1)])
    xf, wf = x2.ravel(), wb.ravel()
    order = np.argsort(xf, kind="stable")
    cum = np.cumsum(wf[order])
    i = int(np.searchsorted(cum, q / 100.0 * cum[-1], side="left"))
    return float(xf[order][min(i, len(xf) - 1)])
