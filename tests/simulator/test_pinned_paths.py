"""Scenario.paths: flows pinned to explicit node paths (another simulator's routing, reproduced)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.simulator import AllToAll, Scenario, TopologyConfig, simulate
from rlcc.simulator.controllers.constant import ConstantRate
from rlcc.simulator.engine import _Run

# 4 hosts, 2 per leaf, 2 spines: h0 h1 under leaf0, h2 h3 under leaf1.
TWO_SPINES = TopologyConfig(kind="fat-tree", hosts_per_leaf=2, leaves=2, spines=2, links_per_pair=1)


def _base() -> AllToAll:
    return AllToAll(hosts=4, duration_ms=0.2, topology=TWO_SPINES)


def _via(sc: AllToAll, spine: str) -> tuple[tuple[str, ...], ...]:
    """Every flow's shortest path, crossing leaves through ``spine``."""
    t = sc.placed_table()
    leaf = lambda h: f"leaf{h // 2}"  # noqa: E731
    return tuple((f"h{a}", leaf(a), f"h{b}") if a // 2 == b // 2 else (f"h{a}", leaf(a), spine, leaf(b), f"h{b}")
                 for a, b in zip(t.host.tolist(), t.dst.tolist()))


def _queue_stats(sc: AllToAll) -> dict[tuple[str, str], tuple[float, float]]:
    """(sent bytes, final queue bytes) per switch egress link, named (from, to), after a run at line rate."""
    run = _Run(sc, ConstantRate(1.0), None)
    run.run()
    fab, topo = run.fabric, run.fabric.topo
    names = [(topo.node_name(int(topo.link_src[lk])), topo.node_name(int(topo.link_dst[lk]))) for lk in fab.queue_links]
    return {n: (float(fab.tx[i]), float(fab.queue[i])) for i, n in enumerate(names)}


def test_pinned_paths_are_the_ones_the_fabric_uses():
    pinned = dataclasses.replace(_base(), paths=_via(_base(), "spine1"))
    stats = _queue_stats(pinned)
    for link in (("leaf0", "spine0"), ("leaf1", "spine0"), ("spine0", "leaf0"), ("spine0", "leaf1")):
        assert stats[link] == (0.0, 0.0), link  # nothing crosses spine0
    # 4 cross-leaf flows per leaf at a host's 1/3 each: 4/3 of the uplink to spine1, a queue.
    assert stats[("leaf0", "spine1")][1] > 0 and stats[("leaf1", "spine1")][1] > 0
    other = _queue_stats(dataclasses.replace(_base(), paths=_via(_base(), "spine0")))
    assert other[("leaf0", "spine1")] == (0.0, 0.0) and other[("leaf0", "spine0")][1] > 0


def test_default_routing_is_unchanged_by_the_field():
    a = simulate(_base(), ConstantRate(0.3))
    assert _base().paths is None
    stats = _queue_stats(_base())
    assert stats[("leaf0", "spine0")][0] > 0 and stats[("leaf0", "spine1")][0] > 0  # ECMP spreads over both
    b = simulate(Scenario.from_dict(_base().to_dict()), ConstantRate(0.3))
    np.testing.assert_array_equal(a.flows["sent_bytes"], b.flows["sent_bytes"])


def test_paths_round_trip_through_json():
    sc = dataclasses.replace(_base(), paths=_via(_base(), "spine1"))
    back = Scenario.from_json(sc.to_json())
    assert back == sc and back.paths == sc.paths


def _bad(edit) -> str:
    paths = [list(p) for p in _via(_base(), "spine1")]
    cross = next(i for i, p in enumerate(paths) if len(p) == 5)
    edit(paths, cross)
    with pytest.raises(BadInputError) as e:
        Scenario.from_dict({**_base().to_dict(), "paths": paths})
    assert "\n" not in str(e.value)
    return str(e.value)


@pytest.mark.parametrize("edit, needle", [
    (lambda p, i: p.pop(), "one path per flow"),
    (lambda p, i: p[i].__setitem__(2, "spine9"), "unknown node 'spine9'"),
    (lambda p, i: p[i].__setitem__(0, "h3" if p[i][0] != "h3" else "h2"), "from the flow's host"),
    (lambda p, i: p[i].__setitem__(-1, "h9"), "unknown node"),
    (lambda p, i: p[i].__setitem__(3, p[i][1]), "visits a node twice"),
    (lambda p, i: p[i].__setitem__(slice(1, 4), ["leaf0", "leaf1", "spine1"]), "not joined by a link"),
    (lambda p, i: p[i].__setitem__(slice(0, 5), [p[i][0], p[i][4]]), "must name 3 to"),
    (lambda p, i: p[i].__setitem__(1, 7), "list of node names"),
])
def test_bad_pins_are_one_line_errors(edit, needle):
    assert needle in _bad(edit)


def test_a_pin_through_a_host_or_to_the_wrong_destination_is_refused():
    def through_host(p, i):
        a, b = p[i][0], p[i][-1]
        mate = {"h0": "h1", "h1": "h0", "h2": "h3", "h3": "h2"}[a]
        p[i][:] = [a, f"leaf{int(a[1]) // 2}", mate, f"leaf{int(a[1]) // 2}", "spine1", f"leaf{int(b[1]) // 2}", b]
    assert "visits a node twice" in _bad(through_host) or "passes through a host" in _bad(through_host)

    def wrong_end(p, i):
        p[i][-1] = {"h2": "h3", "h3": "h2", "h0": "h1", "h1": "h0"}[p[i][-1]]
    assert "to its destination" in _bad(wrong_end)


def test_paths_need_a_topology():
    with pytest.raises(BadInputError, match="paths need a topology"):
        Scenario.from_dict({"kind": "all-to-all", "hosts": 4, "paths": [["h0", "s0", "h1"]]})
