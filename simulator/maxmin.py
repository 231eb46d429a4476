"""Max-min fair rates by progressive filling: the oracle for multi-bottleneck steady states.

The simulator's converged per-flow goodput on a multi-switch topology is checked against this
allocation, so this module is deliberately independent of the simulator (no engine, network or
scenario code): flows are lists of link ids, links are capacities, nothing else.

Progressive filling (water-filling; Bertsekas & Gallager, *Data Networks*, 2nd ed., section
6.5.2): raise every unfrozen flow's rate at the same pace; when a link saturates, freeze the flows
crossing it; a flow that reaches its demand freezes too; repeat until every flow is frozen. All
unfrozen flows share one rate ("level") at any time, so each round jumps straight to the next
level at which a link saturates or a demand is met:

    level = min( min_l (capacity_l - frozen load_l) / unfrozen flows on l,  min unfrozen demand )

Every round freezes at least one flow, so there are at most ``flows`` rounds (in practice, the
number of distinct bottleneck levels), each O(links + flows) numpy; the per-link counts and
frozen loads are updated only from the pairs of the flows a round freezes (O(pairs) in total).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rlcc.errors import BadInputError

# Links whose saturation level is within this relative distance of the round's level saturate in
# the same round (float rounding would otherwise split exact ties into rounds a hair apart).
_TIE_RTOL = 1e-12

#: ``bottleneck`` value of a flow frozen by its own demand rather than by a link.
DEMAND_LIMITED = -1


@dataclass(frozen=True)
class MaxMin:
    """A max-min fair allocation and why each flow stopped growing.

    ``rates[i]``: flow i's rate (unit of ``capacity``). ``bottleneck[i]``: the link that froze
    flow i (the lowest link id among links saturating in that round), or ``DEMAND_LIMITED`` (-1)
    when its demand froze it. ``rounds``: progressive-filling rounds taken.
    """

    rates: np.ndarray
    bottleneck: np.ndarray
    rounds: int


def _pairs(flow_links: Sequence[Sequence[int]], n_links: int) -> tuple[np.ndarray, np.ndarray]:
    """Unique (flow, link) incidence pairs, sorted by flow; a link listed twice by one flow counts once."""
    lengths = np.fromiter((len(path) for path in flow_links), dtype=np.int64, count=len(flow_links))
    flat = [link for path in flow_links for link in path]
    ids = np.asarray(flat, dtype=np.float64)
    f_idx = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    bad = np.flatnonzero(~np.isfinite(ids) | (ids != np.round(ids)) | (ids < 0) | (ids >= n_links))
    if bad.size:
        i = int(f_idx[bad[0]])
        raise BadInputError(f"flow {i}: link id {flat[bad[0]]!r} is not an integer in 0..{n_links - 1}")
    key = np.unique(f_idx * max(n_links, 1) + ids.astype(np.int64))
    return key // max(n_links, 1), key % max(n_links, 1)


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, e)`` for each (s, e) pair, without a Python loop."""
    lens = ends - starts
    total = int(lens.sum())
    offsets = np.repeat(starts - (np.cumsum(lens) - lens), lens)
    return np.arange(total, dtype=np.int64) + offsets


def _check_inputs(n_flows: int, capacity: np.ndarray, demand: np.ndarray | None) -> None:
    if capacity.ndim != 1:
        raise BadInputError(f"capacity must be a 1-D array of link capacities, got shape {capacity.shape}")
    bad = np.flatnonzero(~np.isfinite(capacity) | (capacity <= 0))
    if bad.size:
        raise BadInputError(f"link {bad[0]}: capacity must be finite and > 0, got {capacity[bad[0]]}")
    if demand is None:
        return
    if demand.shape != (n_flows,):
        raise BadInputError(f"demand must have one entry per flow ({n_flows}), got shape {demand.shape}")
    bad = np.flatnonzero(np.isnan(demand) | (demand < 0))
    if bad.size:
        raise BadInputError(f"flow {bad[0]}: demand must be >= 0 (inf = uncapped), got {demand[bad[0]]}")


def maxmin(
    flow_links: Sequence[Sequence[int]],
    capacity: np.ndarray,
    demand: np.ndarray | None = None,
) -> MaxMin:
    """Max-min fair allocation of ``capacity`` among flows crossing links ``flow_links[i]``.

    ``demand`` (optional, per flow, ``inf`` = uncapped) caps a flow's rate, as a private link of
    that capacity would. A flow with no links gets its demand; with no finite demand it would be
    unbounded, which is refused. Capacities must be finite and > 0.
    """
    capacity = np.asarray(capacity, dtype=np.float64)
    n = len(flow_links)
    dem = None if demand is None else np.asarray(demand, dtype=np.float64)
    _check_inputs(n, capacity, dem)
    if dem is None:
        dem = np.full(n, np.inf)
    f_idx, l_idx = _pairs(flow_links, capacity.size)
    n_paths = np.bincount(f_idx, minlength=n)
    unbounded = np.flatnonzero((n_paths == 0) & ~np.isfinite(dem))
    if unbounded.size:
        raise BadInputError(f"flow {unbounded[0]} crosses no link and has no finite demand: its rate is unbounded")

    n_links = capacity.size
    flow_start = np.searchsorted(f_idx, np.arange(n + 1))
    by_link = np.argsort(l_idx, kind="stable")
    link_flows = f_idx[by_link]
    link_start = np.searchsorted(l_idx[by_link], np.arange(n_links + 1))
    # Per-link running totals, updated only by the flows each round freezes.
    unfrozen_on = np.bincount(l_idx, minlength=n_links).astype(np.float64)
    frozen_load = np.zeros(n_links)

    rates = np.zeros(n)
    bottleneck = np.full(n, DEMAND_LIMITED, dtype=np.int64)
    frozen = np.zeros(n, dtype=bool)
    none = np.iinfo(np.int64).max
    rounds = 0
    while not frozen.all():
        rounds += 1
        used = unfrozen_on > 0
        link_level = np.full(n_links, np.inf)
        link_level[used] = (capacity[used] - frozen_load[used]) / unfrozen_on[used]
        level = min(link_level.min(initial=np.inf), dem[~frozen].min(initial=np.inf))
        tie = level + _TIE_RTOL * max(1.0, abs(level))
        saturated = np.flatnonzero(used & (link_level <= tie))
        sel = _ranges(link_start[saturated], link_start[saturated + 1])
        cand_flow = link_flows[sel]
        cand_link = np.repeat(saturated, np.diff(link_start)[saturated])
        live = ~frozen[cand_flow]
        # A flow crossing several links that saturate this round names the lowest id.
        first = np.full(n, none)
        np.minimum.at(first, cand_flow[live], cand_link[live])
        link_frozen = first != none
        demand_frozen = ~frozen & ~link_frozen & (dem <= tie)
        now = np.flatnonzero(link_frozen | demand_frozen)
        rates[now] = np.minimum(level, dem[now])
        bottleneck[link_frozen] = first[link_frozen]
        frozen[now] = True
        pairs = _ranges(flow_start[now], flow_start[now + 1])
        unfrozen_on -= np.bincount(l_idx[pairs], minlength=n_links)
        frozen_load += np.bincount(l_idx[pairs], weights=rates[f_idx[pairs]], minlength=n_links)
    return MaxMin(rates=rates, bottleneck=bottleneck, rounds=rounds)


def maxmin_rates(
    flow_links: Sequence[Sequence[int]],
    capacity: np.ndarray,
    demand: np.ndarray | None = None,
) -> np.ndarray:
    """Per-flow max-min fair rates (see ``maxmin``); same unit as ``capacity``."""
    return maxmin(flow_links, capacity, demand).rates


def bottlenecks(
    flow_links: Sequence[Sequence[int]],
    capacity: np.ndarray,
    demand: np.ndarray | None = None,
) -> np.ndarray:
    """Per-flow bottleneck link id, ``DEMAND_LIMITED`` (-1) where the flow's demand binds."""
    return maxmin(flow_links, capacity, demand).bottleneck
