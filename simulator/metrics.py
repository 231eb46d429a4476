"""Run metrics over a time window, from two snapshots of the cumulative counters.

Keys (all floats): ``goodput`` (delivered bytes / (ports x line rate x window), drops excluded),
``queue_delay_mean_us`` / ``queue_delay_p99_us`` (time-sampled port queues / line rate),
``mean_rtt_inflation`` (mean RTT / base RTT over decisions), ``drops_per_flow`` (packets),
``drop_fraction`` (dropped / offered bytes), ``jain`` and ``min_max`` (fairness of the per-flow
goodput of long-lived flows active over the whole window), ``decisions``, and for scenarios with
short flows ``long_flow_bw`` (flow 0's goodput / line rate), ``short_fct_slowdown_mean`` /
``_p99`` (FCT / (size / line rate + base RTT)) and ``short_completed`` (fraction finished).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rlcc.simulator.engine import _Run


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

    @classmethod
    def zero(cls, n: int) -> "Snapshot":
        return cls(0.0, np.zeros(n), np.zeros(n), 0.0, 0.0, 0.0, 0.0)


def jain(x: np.ndarray) -> float:
    """Jain's fairness index (1 = perfectly fair)."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) == 0 or not np.any(x):
        return float("nan")
    return float(x.sum() ** 2 / (len(x) * np.square(x).sum()))


def compute_metrics(run: "_Run", a: Snapshot, b: Snapshot, rtt_stats: np.ndarray, from_step: int) -> dict[str, float]:
    span = b.time_ns - a.time_ns
    net, n = run.net, run.n
    out: dict[str, float] = {"window_start_ms": a.time_ns / 1e6, "window_ms": span / 1e6}
    cap_bytes = run.fabric.n_sinks * net.bytes_per_ns * span
    out["goodput"] = (b.delivered - a.delivered) / cap_bytes if span > 0 else float("nan")
    rows = run.q_samples[from_step // run.q_every : run.n_steps // run.q_every + 1]
    delay_us = rows.ravel() / net.bytes_per_ns / 1e3
    if run.q_weights is None:  # single switch: every port alike
        out["queue_delay_mean_us"] = float(delay_us.mean()) if len(delay_us) else float("nan")
        out["queue_delay_p99_us"] = float(np.percentile(delay_us, 99)) if len(delay_us) else float("nan")
    else:  # a topology: queueing delay along the paths, weighted by their flows
        w = np.tile(run.q_weights, len(rows))
        out["queue_delay_mean_us"] = float(np.average(delay_us, weights=w)) if len(delay_us) else float("nan")
        out["queue_delay_p99_us"] = weighted_percentile(delay_us, w, 99) if len(delay_us) else float("nan")
    out["mean_rtt_inflation"] = float(rtt_stats[0] / rtt_stats[1]) if rtt_stats[1] else float("nan")
    out["decisions"] = float(rtt_stats[1])
    dropped = b.fabric_dropped - a.fabric_dropped
    out["drops_per_flow"] = dropped / net.packet_bytes / n
    out["drop_fraction"] = dropped / (b.offered - a.offered) if b.offered > a.offered else 0.0
    good = (b.sent - b.dropped) - (a.sent - a.dropped)
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
        ideal = run.table.size_bytes[short] / net.bytes_per_ns + run.base_rtt(np.flatnonzero(short))
        slow = (fct / ideal)[np.isfinite(fct)]
        out["short_completed"] = float(np.isfinite(fct).mean())
        out["short_fct_slowdown_mean"] = float(slow.mean()) if len(slow) else float("nan")
        out["short_fct_slowdown_p99"] = float(np.percentile(slow, 99)) if len(slow) else float("nan")
    if run.epoch is not None:
        took = run.epoch_end - run.epoch_start
        done = np.isfinite(took)
        out["iterations_completed"] = float(done.sum())
        out["iteration_us"] = float(took[done].mean() / 1e3) if done.any() else float("nan")
    return {k: (float(v) if v is not None else math.nan) for k, v in out.items()}


def weighted_percentile(x: np.ndarray, w: np.ndarray, q: float) -> float:
    """The smallest x whose cumulative weight reaches q% of the total (inverted-CDF definition)."""
    order = np.argsort(x, kind="stable")
    cum = np.cumsum(w[order])
    i = int(np.searchsorted(cum, q / 100.0 * cum[-1], side="left"))
    return float(x[order][min(i, len(x) - 1)])
