"""Published flow-size distributions, open-loop Poisson workloads, and FCT slowdown by flow size.

The datacenter evaluation convention of HPCC (Li et al., SIGCOMM 2019, evaluation) and its
predecessors: flows of sizes drawn from a measured CDF arrive as a Poisson process whose rate
loads each host's NIC to a given fraction, and the result is the FCT slowdown (FCT / ideal FCT)
per flow-size bucket. The generator follows the HPCC repository's ``traffic_gen/traffic_gen.py``
and ``traffic_gen/custom_rand.py`` (alibaba-edu/High-Precision-Congestion-Control, commit 9f4be2a);
the shipped CDFs are that repository's files (``rlcc/simulator/workloads/*.cdf``, sources in their
headers): ``websearch`` (Alizadeh et al., DCTCP, SIGCOMM 2010) and ``hadoop`` (Roy et al., "Inside
the Social Network's (Datacenter) Network", SIGCOMM 2015).
"""

from __future__ import annotations

import importlib.resources
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from rlcc import textio
from rlcc.errors import BadInputError
from rlcc.simulator.params import MAX_BYTES

#: Names ``FlowSizeCdf.load`` resolves to the shipped files.
SHIPPED = ("websearch", "hadoop")
#: Points of a CDF (the shipped files have 12 and 20): bounds its parse and search tables.
MAX_CDF_POINTS = 10_000

#: Upper bucket edges (bytes) of ``fct_slowdown_buckets``: (0, 1 KB], (1 KB, 10 KB], ...,
#: (1 MB, 10 MB], (10 MB, inf). Decades, so one set of buckets fits both shipped CDFs and two
#: runs or two controllers are bucketed identically. Fractions of flows per bucket (from the
#: CDFs): websearch 1.5 / 13.5 / 39.2 / 15.8 / 27.0 / 3.0 %, hadoop 60.0 / 10.3 / 18.2 / 9.0 /
#: 2.5 / 0 %. HPCC's ``analysis/fct_analysis.py`` (the paper's Figure 11) instead buckets each
#: workload's flows by 5 % steps of flow count; ``cdf.quantile(np.arange(0.05, 1, 0.05))`` gives
#: such edges.
DEFAULT_EDGES = (1e3, 1e4, 1e5, 1e6, 1e7)


def _mean(sizes: np.ndarray, cdf: np.ndarray) -> float:
    """Mean of the piecewise-linear CDF through (sizes, cdf in [0, 1])."""
    mids = (sizes[1:] + sizes[:-1]) / 2
    return float(cdf[0] * sizes[0] + np.sum(mids * np.diff(cdf)))


def _check_points(sizes: np.ndarray, cdf: np.ndarray, full: float, source: str, where: Sequence[str]) -> None:
    """Raise on the first point that breaks the CDF rules; ``full`` is 100 (percent) or 1."""
    if sizes.size < 2:
        raise BadInputError(f"{source}: a CDF needs at least 2 points, got {sizes.size}")
    if sizes.size > MAX_CDF_POINTS:
        raise BadInputError(f"{source}: more than {MAX_CDF_POINTS} points")
    for i in range(sizes.size):
        x, y = sizes[i], cdf[i]
        if not (math.isfinite(x) and math.isfinite(y)):
            raise BadInputError(f"{where[i]}: size and cdf must be finite numbers, got {x:g} {y:g}")
        if x < 0:
            raise BadInputError(f"{where[i]}: negative flow size {x:g}")
        if x > MAX_BYTES:
            raise BadInputError(f"{where[i]}: flow size {x:g} is above the limit 2^40 bytes")
        if x == 0 and y != 0:
            raise BadInputError(f"{where[i]}: size 0 may only anchor the CDF at 0, got cdf {y:g}")
        if not 0 <= y <= full:
            raise BadInputError(f"{where[i]}: cdf {y:g} is outside [0, {full:g}]")
        if i and x < sizes[i - 1]:
            raise BadInputError(f"{where[i]}: size {x:g} is below the previous size {sizes[i - 1]:g} (sizes must be sorted)")
        if i and y < cdf[i - 1]:
            raise BadInputError(f"{where[i]}: cdf {y:g} is below the previous cdf {cdf[i - 1]:g} (the CDF must be non-decreasing)")
    if cdf[-1] != full:
        raise BadInputError(f"{where[-1]}: the CDF must end at {full:g}, got {cdf[-1]:g}")
    mean = _mean(sizes, cdf / full)
    if mean < 1:
        raise BadInputError(f"{source}: mean flow size {mean:.3g} bytes is below 1 byte (flows are whole bytes)")


@dataclass(frozen=True)
class FlowSizeCdf:
    """A flow-size distribution: the piecewise-linear CDF through points (``sizes[i]``, ``cdf[i]``).

    ``sizes`` in bytes, non-decreasing, >= 0 (0 only at cdf 0, the lower anchor both shipped
    files start with); ``cdf`` in [0, 1], non-decreasing, ending at 1. Between two points the
    CDF is linear (sizes uniform on the segment). A repeated size is a jump: a point mass at that
    size; a mass ``cdf[0]`` > 0 sits at ``sizes[0]``. A repeated cdf value is a size range no
    flow has. (HPCC's ``custom_rand.py`` demands strictly increasing sizes and cdf starting at 0;
    those CDFs mean the same here.)
    """

    sizes: np.ndarray
    cdf: np.ndarray
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        sizes = np.asarray(self.sizes, dtype=np.float64).ravel()
        cdf = np.asarray(self.cdf, dtype=np.float64).ravel()
        if sizes.shape != cdf.shape:
            raise BadInputError(f"flow-size CDF: {sizes.size} sizes but {cdf.size} cdf values")
        label = self.source or "flow-size CDF"
        _check_points(sizes, cdf, 1.0, label, [f"{label} point {i}" for i in range(sizes.size)])
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "cdf", cdf)

    @classmethod
    def load(cls, name_or_path: str | Path) -> FlowSizeCdf:
        """A shipped CDF by name (``websearch``, ``hadoop``) or a file of ``size_bytes cdf_percent`` lines.

        Blank lines and ``#`` comments (whole-line or trailing) are ignored. Bad input raises
        ``BadInputError`` naming the file and line.
        """
        if isinstance(name_or_path, str) and name_or_path in SHIPPED:
            res = importlib.resources.files("rlcc.simulator.workloads") / f"{name_or_path}.cdf"
            return cls.parse(res.read_text(encoding="utf-8"), f"{name_or_path}.cdf")
        path = Path(name_or_path)
        try:
            text = textio.read_text(path, "flow-size CDF")
        except textio.InputFileError as e:
            raise BadInputError(f"cannot read flow-size CDF {path} ({e.reason}); shipped names: {', '.join(SHIPPED)}") from None
        return cls.parse(text, str(path))

    @classmethod
    def parse(cls, text: str, source: str = "<text>") -> FlowSizeCdf:
        """Parse ``size_bytes cdf_percent`` lines (the HPCC traffic_gen format)."""
        sizes, cdf, where = [], [], []
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 2:
                raise BadInputError(f"{source} line {number}: expected 'size_bytes cdf_percent', got {line!r}")
            try:
                x, y = float(fields[0]), float(fields[1])
            except ValueError:
                raise BadInputError(f"{source} line {number}: not a number in {line!r}") from None
            if len(sizes) == MAX_CDF_POINTS:
                raise BadInputError(f"{source} line {number}: more than {MAX_CDF_POINTS} points")
            sizes.append(x)
            cdf.append(y)
            where.append(f"{source} line {number}")
        _check_points(np.array(sizes), np.array(cdf), 100.0, source, where)
        return cls(np.array(sizes), np.array(cdf) / 100.0, source)

    def mean(self) -> float:
        """Mean size (bytes), exact for this piecewise-linear CDF (HPCC ``CustomRand.getAvg``)."""
        return _mean(self.sizes, self.cdf)

    def quantile(self, u: np.ndarray | float) -> np.ndarray:
        """Inverse CDF at ``u`` in [0, 1]: linear inside the segment whose cdf range holds ``u``.

        HPCC's ``getValueFromPercentile``: the first point i >= 1 with u <= cdf[i], then
        x[i-1] + (x[i] - x[i-1]) (u - cdf[i-1]) / (cdf[i] - cdf[i-1]); u <= cdf[0] gives sizes[0].
        """
        u = np.asarray(u, dtype=np.float64)
        if np.any(~((u >= 0) & (u <= 1))):
            raise BadInputError("quantile: probabilities must be in [0, 1]")
        i = np.clip(np.searchsorted(self.cdf, u, side="left"), 1, self.cdf.size - 1)
        x0, x1, c0, c1 = self.sizes[i - 1], self.sizes[i], self.cdf[i - 1], self.cdf[i]
        # c1 > c0 wherever u > cdf[0] (i is the first index with cdf >= u > cdf[i-1]).
        frac = np.divide(u - c0, c1 - c0, out=np.zeros_like(u), where=c1 > c0)
        return np.where(u <= self.cdf[0], self.sizes[0], x0 + (x1 - x0) * frac)

    def sample(self, rng: np.random.Generator | int, n: int) -> np.ndarray:
        """``n`` sizes (float bytes) by inverse transform of uniform [0, 1) draws, as HPCC's ``CustomRand.rand``."""
        rng = np.random.default_rng(rng)
        return self.quantile(rng.random(int(n)))


class PoissonFlows(NamedTuple):
    """A generated workload: flow i goes ``src[i]`` -> ``dst[i]``, starts at ``start_ns[i]`` (sorted)."""

    src: np.ndarray
    dst: np.ndarray
    start_ns: np.ndarray
    size_bytes: np.ndarray


def arrival_rate_per_ns(hosts: int, load: float, line_rate_gbps: float, cdf: FlowSizeCdf) -> float:
    """Aggregate flow arrivals per ns that offer ``load`` x each host's line rate (Gb/s = bit/ns).

    HPCC ``traffic_gen.py``: per host, mean inter-arrival = mean size / (bandwidth x load / 8);
    ``hosts`` independent such processes make one of ``hosts`` times the rate.
    """
    return load * hosts * line_rate_gbps / 8.0 / cdf.mean()


def poisson_flows(
    hosts: int,
    load: float,
    line_rate_gbps: float,
    duration_ns: float,
    cdf: FlowSizeCdf,
    seed: int,
    max_flows: int,
) -> PoissonFlows:
    """Open-loop Poisson flow arrivals in [0, ``duration_ns``) loading each NIC to ``load``.

    As HPCC's ``traffic_gen.py`` (per-host Poisson processes, merged here into one process of the
    summed rate with a uniform source: the same distribution): exponential inter-arrivals at rate
    ``arrival_rate_per_ns``, source uniform over hosts, destination uniform over the other hosts,
    size from ``cdf`` truncated to whole bytes and at least 1 (HPCC: ``int(size)``, ``<= 0 -> 1``).
    Unlike HPCC, start times are not rounded to whole ns and the run starts at 0. Refuses a
    request expected to exceed ``max_flows`` flows (the realized count may exceed it by chance).
    """
    if isinstance(hosts, bool) or not isinstance(hosts, (int, np.integer)) or hosts < 2:
        raise BadInputError(f"poisson_flows: hosts must be an integer >= 2, got {hosts!r}")
    if not 0 < load <= 1:
        raise BadInputError(f"poisson_flows: load must be in (0, 1] (fraction of each host's line rate), got {load!r}")
    if not (math.isfinite(line_rate_gbps) and line_rate_gbps > 0):
        raise BadInputError(f"poisson_flows: line_rate_gbps must be > 0, got {line_rate_gbps!r}")
    if not (math.isfinite(duration_ns) and duration_ns > 0):
        raise BadInputError(f"poisson_flows: duration_ns must be > 0, got {duration_ns!r}")
    if not isinstance(cdf, FlowSizeCdf):
        raise BadInputError(f"poisson_flows: cdf must be a FlowSizeCdf, got {type(cdf).__name__}")
    lam = arrival_rate_per_ns(hosts, load, line_rate_gbps, cdf)
    expected = lam * duration_ns
    if expected > max_flows:
        raise BadInputError(
            f"poisson_flows: {format(expected, '.0f' if expected < 1e12 else '.3g')} flows expected ({hosts} hosts, load {load:g}, {duration_ns:g} ns, "
            f"mean size {cdf.mean():.0f} B) exceeds max_flows={max_flows}"
        )
    rng = np.random.default_rng(seed)
    chunk = int(expected + 6 * math.sqrt(expected)) + 16
    parts, t = [], 0.0
    while True:
        arrivals = t + np.cumsum(rng.exponential(1.0 / lam, chunk))
        parts.append(arrivals)
        t = float(arrivals[-1])
        if t >= duration_ns:
            break
    start = np.concatenate(parts)
    start = start[start < duration_ns]
    n = start.size
    src = rng.integers(0, hosts, n)
    dst = (src + rng.integers(1, hosts, n)) % hosts
    size = np.maximum(np.floor(cdf.sample(rng, n)), 1).astype(np.int64)
    return PoissonFlows(src=src.astype(np.int64), dst=dst.astype(np.int64), start_ns=start, size_bytes=size)


def _size_label(b: float) -> str:
    if math.isinf(b):
        return "inf"
    for unit, scale in (("MB", 1e6), ("KB", 1e3)):
        if b >= scale:
            return f"{b / scale:g}{unit}"
    return f"{b:g}B"


def fct_slowdown_buckets(
    size_bytes: np.ndarray,
    fct_ns: np.ndarray,
    ideal_ns: np.ndarray,
    edges: Sequence[float] = DEFAULT_EDGES,
) -> list[dict]:
    """FCT slowdown (``fct_ns / ideal_ns``) per flow-size bucket (lo, hi].

    ``edges``: increasing upper bucket edges in bytes; buckets (0, e0], (e0, e1], ..., (e_last,
    inf), so every flow lands in one. A NaN ``fct_ns`` is an unfinished flow: counted in its
    bucket's ``unfinished``, not in the stats. Per bucket: ``label``, ``lo``, ``hi``, ``count``
    (finished flows), ``unfinished``, ``median`` and ``p99`` of the slowdown by
    ``numpy.percentile``'s default 'linear' method (Hyndman & Fan type 7: the sorted values
    interpolated at rank q (n - 1)); NaN for an empty bucket. Slowdowns are not clipped at 1 (HPCC's
    ``fct_analysis.py`` does: a fluid FCT below ideal would be a model error worth seeing).
    """
    size = np.asarray(size_bytes, dtype=np.float64)
    fct = np.asarray(fct_ns, dtype=np.float64)
    ideal = np.asarray(ideal_ns, dtype=np.float64)
    if size.ndim != 1 or fct.shape != size.shape or ideal.shape != size.shape:
        raise BadInputError(f"fct_slowdown_buckets: size, fct and ideal must be 1-D of one length, got {size.shape}, {fct.shape}, {ideal.shape}")
    e = np.asarray(edges, dtype=np.float64)
    if e.ndim != 1 or e.size == 0 or np.any(~np.isfinite(e)) or np.any(e <= 0) or np.any(np.diff(e) <= 0):
        raise BadInputError(f"fct_slowdown_buckets: edges must be increasing finite sizes > 0, got {list(edges)}")
    if np.any(~np.isfinite(size) | (size <= 0)):
        raise BadInputError("fct_slowdown_buckets: flow sizes must be finite and > 0")
    if np.any(~np.isfinite(ideal) | (ideal <= 0)):
        raise BadInputError("fct_slowdown_buckets: ideal FCTs must be finite and > 0")
    if np.any(np.isinf(fct) | (fct < 0)):
        raise BadInputError("fct_slowdown_buckets: FCTs must be >= 0 (NaN = unfinished)")
    bucket = np.searchsorted(e, size, side="left")  # size <= e[k] -> bucket k
    slowdown = fct / ideal
    done = ~np.isnan(fct)
    lows = np.concatenate([[0.0], e])
    highs = np.concatenate([e, [np.inf]])
    out = []
    for k, (lo, hi) in enumerate(zip(lows, highs)):
        here = bucket == k
        s = slowdown[here & done]
        label = f"<={_size_label(hi)}" if k == 0 else f">{_size_label(lo)}" if math.isinf(hi) else f"{_size_label(lo)}-{_size_label(hi)}"
        out.append({
            "label": label,
            "lo": float(lo),
            "hi": float(hi),
            "count": int(s.size),
            "unfinished": int(np.count_nonzero(here & ~done)),
            "median": float(np.percentile(s, 50)) if s.size else math.nan,
            "p99": float(np.percentile(s, 99)) if s.size else math.nan,
        })
    return out
