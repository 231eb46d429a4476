"""The comparison's metrics, computed the same way from either simulator's series.

Inputs are plain arrays so both sides go through one function: a queue series (time, µs of queue
at line rate), per-flow delivered bytes over the steady window, and per-flow rate series.
"""

from __future__ import annotations

import numpy as np

from rlcc.simulator import jain

GOODPUT_TOL = 0.02  # absolute
QUEUE_REL_TOL, QUEUE_ABS_TOL_US = 0.15, 2.0  # mean queue: within 15 % or 2 µs
CONVERGE_REL_TOL = 0.25
RATE_BAND = 0.5  # a flow has converged while its smoothed rate stays within ±50 % of its steady mean
SMOOTH_US = 50.0


def steady_goodput(delivered_bytes: np.ndarray, span_ns: float, receivers: int, line_bytes_per_ns: float) -> float:
    """Delivered bytes of all flows over the window / (receivers x line rate x window)."""
    return float(np.sum(delivered_bytes) / (receivers * line_bytes_per_ns * span_ns))


def fairness(delivered_bytes: np.ndarray) -> float:
    """Jain's index of the flows' delivered bytes over the window."""
    return jain(np.asarray(delivered_bytes, dtype=np.float64))


def queue_stats(t_us: np.ndarray, queue_us: np.ndarray, from_us: float) -> tuple[float, float]:
    """Mean and p99 of the queue samples at or after ``from_us`` (equally spaced samples)."""
    q = np.asarray(queue_us)[np.asarray(t_us) >= from_us]
    if len(q) == 0:
        return float("nan"), float("nan")
    return float(q.mean()), float(np.percentile(q, 99))


def smooth(t_us: np.ndarray, x: np.ndarray, width_us: float) -> np.ndarray:
    """Trailing moving average over ``width_us`` of equally spaced samples (rows of ``x``)."""
    x = np.asarray(x, dtype=np.float64)
    if len(t_us) < 2:
        return x
    k = max(1, int(round(width_us / (t_us[1] - t_us[0]))))
    c = np.cumsum(np.concatenate([np.zeros((1,) + x.shape[1:]), x]), axis=0)
    i = np.arange(1, len(x) + 1)
    lo = np.maximum(i - k, 0)
    return (c[i] - c[lo]) / (i - lo).reshape((-1,) + (1,) * (x.ndim - 1))


def convergence_time(t_us: np.ndarray, rates: np.ndarray, steady_from_us: float, band: float = RATE_BAND,
                     width_us: float = SMOOTH_US) -> float:
    """Time after start from which every flow's smoothed rate stays within ±``band`` of its mean
    over the steady window (``t >= steady_from_us``): 0 when it never leaves the band (whatever
    the first sample's time), NaN when some flow leaves the band in the steady window too."""
    t = np.asarray(t_us, dtype=np.float64)
    r = smooth(t, rates, width_us)
    steady = t >= steady_from_us
    target = r[steady].mean(axis=0)
    inside = np.all(np.abs(r - target) <= band * target, axis=1)
    if not inside[steady].all():
        return float("nan")
    outside = np.flatnonzero(~inside)
    return 0.0 if len(outside) == 0 else float(t[outside[-1] + 1])


def verdict(rlcc: dict, peer: dict) -> dict[str, bool | None]:
    """The issue's goals per metric: goodput within 0.02, mean queue within 15 % or 2 µs,
    convergence within 25 % (None: a side has no value, e.g. never converged)."""
    def conv() -> bool | None:
        a, b = rlcc["converge_us"], peer["converge_us"]
        if np.isnan(a) or np.isnan(b):
            return None
        return abs(a - b) <= CONVERGE_REL_TOL * max(b, SMOOTH_US / 10)

    dq = abs(rlcc["queue_mean_us"] - peer["queue_mean_us"])
    return {"goodput": abs(rlcc["goodput"] - peer["goodput"]) <= GOODPUT_TOL,
            "queue_mean": dq <= max(QUEUE_REL_TOL * peer["queue_mean_us"], QUEUE_ABS_TOL_US),
            "converge": conv()}
