"""Max-min oracle: hand-computed allocations and the bottleneck characterization on random cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.simulator.maxmin import DEMAND_LIMITED, bottlenecks, maxmin, maxmin_rates

INF = math.inf


def maxmin_violations(flow_links, capacity, demand, rates, tol=1e-9) -> list[str]:
    """Why ``rates`` is not THE max-min fair allocation (empty list: it is), in plain Python.

    An allocation is max-min fair iff it is feasible and every flow either meets its demand or
    crosses a saturated link on which no other flow has a higher rate (Bertsekas & Gallager,
    Data Networks, 2nd ed., section 6.5.2, the bottleneck characterization).
    """
    n_links = len(capacity)
    load = [0.0] * n_links
    on_link = [[] for _ in range(n_links)]
    for i, path in enumerate(flow_links):
        for link in set(path):
            load[link] += rates[i]
            on_link[link].append(i)
    bad = []
    for link in range(n_links):
        if load[link] > capacity[link] + tol:
            bad.append(f"link {link} overloaded: {load[link]} > {capacity[link]}")
    for i, path in enumerate(flow_links):
        if rates[i] < -tol:
            bad.append(f"flow {i} has a negative rate {rates[i]}")
        d = INF if demand is None else demand[i]
        if rates[i] > d + tol:
            bad.append(f"flow {i} exceeds its demand: {rates[i]} > {d}")
        if abs(rates[i] - d) <= tol:
            continue
        ok = any(
            load[link] >= capacity[link] - tol and all(rates[j] <= rates[i] + tol for j in on_link[link])
            for link in set(path)
        )
        if not ok:
            bad.append(f"flow {i} (rate {rates[i]}) has no bottleneck link on its path {list(path)}")
    return bad


def test_single_link_n_flows_get_c_over_n():
    np.testing.assert_allclose(maxmin_rates([[0]] * 4, np.array([1.0])), [0.25] * 4, rtol=1e-12)
    np.testing.assert_allclose(maxmin_rates([[0]] * 3, np.array([10.0])), [10 / 3] * 3, rtol=1e-12)


def test_parking_lot_equal_capacities_everyone_gets_half():
    # Long flow 0 over links 0..2, one short flow per link: every link carries 2 flows.
    links = [[0, 1, 2], [0], [1], [2]]
    res = maxmin(links, np.ones(3))
    np.testing.assert_allclose(res.rates, [0.5] * 4, rtol=1e-12)
    assert res.rounds == 1  # the three links tie: one round, not three a rounding error apart


def test_parking_lot_one_tight_link_frees_the_others():
    # Link 0 (cap 1) holds the long flow to 1/2; links 1, 2 (cap 2) give their short flow 2 - 1/2.
    res = maxmin([[0, 1, 2], [0], [1], [2]], np.array([1.0, 2.0, 2.0]))
    np.testing.assert_allclose(res.rates, [0.5, 0.5, 1.5, 1.5], rtol=1e-12)
    assert res.bottleneck.tolist() == [0, 0, 1, 2]


def test_parking_lot_crowded_first_link():
    # Link 0: long + 2 short -> 1/3 each; links 1, 2: their short flow gets 1 - 1/3.
    rates = maxmin_rates([[0, 1, 2], [0], [0], [1], [2]], np.ones(3))
    np.testing.assert_allclose(rates, [1 / 3, 1 / 3, 1 / 3, 2 / 3, 2 / 3], rtol=1e-12)


def test_two_bottlenecks():
    # Link A=0 carries flows 1, 2; link B=1 carries flows 2, 3, 4 (flow k is index k-1).
    flows = [[0], [0, 1], [1], [1]]
    res = maxmin(flows, np.array([1.0, 1.0]))
    np.testing.assert_allclose(res.rates, [2 / 3, 1 / 3, 1 / 3, 1 / 3], rtol=1e-12)
    assert res.bottleneck.tolist() == [0, 1, 1, 1]
    # Wider A: B still saturates first (1/3), A's own flow takes 2 - 1/3.
    np.testing.assert_allclose(maxmin_rates(flows, np.array([2.0, 1.0])), [5 / 3, 1 / 3, 1 / 3, 1 / 3], rtol=1e-12)
    # Narrow A (0.5): A saturates first at 1/4; B's other two flows split 1 - 1/4.
    res = maxmin(flows, np.array([0.5, 1.0]))
    np.testing.assert_allclose(res.rates, [0.25, 0.25, 0.375, 0.375], rtol=1e-12)
    assert res.bottleneck.tolist() == [0, 0, 1, 1]


def test_demand_caps():
    one = np.array([1.0])
    np.testing.assert_allclose(maxmin_rates([[0]] * 3, one, np.array([0.1, INF, INF])), [0.1, 0.45, 0.45], rtol=1e-12)
    np.testing.assert_allclose(maxmin_rates([[0]] * 3, one, np.array([0.1, 0.2, INF])), [0.1, 0.2, 0.7], rtol=1e-12)
    # A demand above the fair share does not bind.
    np.testing.assert_allclose(maxmin_rates([[0]] * 2, one, np.array([0.9, INF])), [0.5, 0.5], rtol=1e-12)
    # A flow capped at exactly its fair share: both limits hold at once.
    np.testing.assert_allclose(maxmin_rates([[0]] * 2, one, np.array([0.5, 0.5])), [0.5, 0.5], rtol=1e-12)
    assert bottlenecks([[0]] * 3, one, np.array([0.1, INF, INF])).tolist() == [DEMAND_LIMITED, 0, 0]


def test_flow_without_links_gets_its_demand():
    res = maxmin([[0], [], [0]], np.array([1.0]), np.array([INF, 0.3, INF]))
    np.testing.assert_allclose(res.rates, [0.5, 0.3, 0.5], rtol=1e-12)
    assert res.bottleneck[1] == DEMAND_LIMITED


def test_duplicate_link_ids_count_once():
    np.testing.assert_allclose(maxmin_rates([[0, 0], [0]], np.array([1.0])), [0.5, 0.5], rtol=1e-12)


def test_no_flows():
    assert maxmin_rates([], np.array([1.0])).shape == (0,)


@pytest.mark.parametrize(
    "flows, capacity, demand, words",
    [
        ([[0]], [0.0], None, "link 0: capacity"),
        ([[0], [1]], [1.0, -2.0], None, "link 1: capacity"),
        ([[0]], [np.nan], None, "link 0: capacity"),
        ([[0], []], [1.0], None, "flow 1 crosses no link"),
        ([[0], []], [1.0], [INF, INF], "flow 1 crosses no link"),
        ([[0, 3]], [1.0, 1.0], None, "flow 0: link id 3"),
        ([[-1]], [1.0], None, "flow 0: link id -1"),
        ([[0.5]], [1.0], None, "flow 0: link id 0.5"),
        ([[0]], [1.0], [-0.1], "flow 0: demand"),
        ([[0]], [1.0], [0.1, 0.2], "one entry per flow"),
    ],
)
def test_bad_input(flows, capacity, demand, words):
    with pytest.raises(BadInputError, match=words):
        maxmin_rates(flows, np.array(capacity), None if demand is None else np.array(demand))


def test_checker_rejects_allocations_that_are_not_maxmin():
    # The property test below is only as good as this checker: it must fail wrong answers.
    flows, cap = [[0], [0, 1], [1], [1]], [1.0, 1.0]
    assert maxmin_violations(flows, cap, None, [2 / 3, 1 / 3, 1 / 3, 1 / 3]) == []
    assert maxmin_violations(flows, cap, None, [0.5, 0.5, 0.25, 0.25])  # feasible, flow 3 starved
    assert maxmin_violations(flows, cap, None, [0.3, 0.3, 0.3, 0.3])  # feasible, nothing saturated
    assert maxmin_violations(flows, cap, None, [0.7, 1 / 3, 1 / 3, 1 / 3])  # link 0 overloaded
    assert maxmin_violations([[0]] * 2, [1.0], [0.2, INF], [0.3, 0.7])  # demand exceeded


@pytest.mark.parametrize("seed", range(60))
def test_random_instances_satisfy_the_bottleneck_characterization(seed):
    rng = np.random.default_rng(seed)
    n_links = int(rng.integers(1, 13))
    n_flows = int(rng.integers(1, 40))
    # Few distinct capacities and demands make exact ties (simultaneous saturation) common.
    capacity = rng.choice([0.5, 1.0, 1.0, 2.0, 3.0], n_links) * (1 if seed % 2 else rng.uniform(0.5, 1.5, n_links))
    flows = []
    for _ in range(n_flows):
        flows.append(rng.integers(0, n_links, int(rng.integers(1, 6))).tolist())  # may repeat ids
    demand = None
    if seed % 3 == 0:
        demand = np.where(rng.random(n_flows) < 0.3, rng.choice([0.05, 0.1, 0.25], n_flows), INF)
        if n_flows > 1:
            flows[0] = []
            demand[0] = 0.2
    res = maxmin(flows, capacity, demand)
    assert maxmin_violations(flows, capacity.tolist(), None if demand is None else demand.tolist(), res.rates.tolist()) == []
    # The reported bottleneck is a witness: saturated, and no flow on it is faster.
    for i, link in enumerate(res.bottleneck.tolist()):
        if link == DEMAND_LIMITED:
            assert demand is not None and res.rates[i] == pytest.approx(demand[i], rel=1e-12)
            continue
        assert link in flows[i]
        on = [j for j, p in enumerate(flows) if link in p]
        assert sum(res.rates[j] for j in on) == pytest.approx(capacity[link], rel=1e-9)
        assert max(res.rates[j] for j in on) <= res.rates[i] * (1 + 1e-9)


@pytest.mark.slow
def test_large_instance_is_fast_and_feasible():
    rng = np.random.default_rng(7)
    n_links, n_flows = 2000, 50_000
    flows = [rng.integers(0, n_links, 4).tolist() for _ in range(n_flows)]
    capacity = rng.uniform(0.5, 2.0, n_links)
    res = maxmin(flows, capacity)
    load, fastest = np.zeros(n_links), np.zeros(n_links)
    for i, p in enumerate(flows):
        load[list(set(p))] += res.rates[i]
        fastest[p] = np.maximum(fastest[p], res.rates[i])
    assert np.all(load <= capacity * (1 + 1e-9))
    assert res.rates.min() > 0
    tight = load >= capacity * (1 - 1e-9)
    for i, p in enumerate(flows):
        assert np.any(tight[p] & (fastest[p] <= res.rates[i] * (1 + 1e-9))), f"flow {i} has no bottleneck"
