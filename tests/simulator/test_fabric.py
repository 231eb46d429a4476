"""The multi-switch fabric: topologies, ECMP, multi-hop RTT, the max-min oracle, HPCC, OSU, FCT."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.simulator import (
    AllToAll, LongShort, ManyToOne, OsuAllToAll, PoissonTrace, TopologyConfig, TraceConfig, make_controller, simulate,
)
from rlcc.simulator.controllers.constant import ConstantRate
from rlcc.simulator.controllers.hpcc import Hpcc
from rlcc.simulator.fabric import PathFabric
from rlcc.simulator.maxmin import maxmin_rates
from rlcc.simulator.scenarios import FlowTable, Network
from rlcc.simulator.topology import Routing, fat_tree, from_dict

FAT = TopologyConfig()  # the paper's 64 hosts


@dataclasses.dataclass(frozen=True)
class Pairs(AllToAll):
    """Long-lived flows between given topology hosts (src[i] -> dst[i])."""

    src: tuple = ()
    dst: tuple = ()

    @property
    def n_flows(self) -> int:
        return len(self.src)

    def placed_table(self) -> FlowTable:
        n, src, dst = len(self.src), np.array(self.src, np.int32), np.array(self.dst, np.int32)
        return FlowTable(src, dst, np.zeros(n), np.full(n, np.inf), self.hosts, self.hosts, dst=dst)


def test_fat_tree_defaults_are_the_papers_cluster():
    t = fat_tree()
    assert (t.n_hosts, len(t.switches), t.n_links) == (64, 6, 2 * (64 + 4 * 2 * 4))
    assert t.oversubscription() == 2.0


def test_ecmp_spreads_flows_over_equal_cost_links_and_is_seeded():
    t = fat_tree()
    r = Routing(t)
    n = 8000
    src = np.zeros(n, np.int64)  # host 0 (leaf 0) to hosts of other leaves
    dst = 16 + np.arange(n) % 48
    paths = r.paths(src, dst, np.arange(n), seed=3)
    uplinks = paths[:, 1]
    assert set(t.link_src[uplinks].tolist()) == {64}  # leaf 0
    counts = np.bincount(uplinks)[uplinks.min():]
    counts = counts[counts > 0]
    assert len(counts) == 8  # 2 spines x 4 parallel links
    assert counts.min() > 0.85 * n / 8 and counts.max() < 1.15 * n / 8
    assert np.array_equal(paths, r.paths(src, dst, np.arange(n), seed=3))
    assert not np.array_equal(paths, r.paths(src, dst, np.arange(n), seed=4))
    # every path ends at its destination, crossing a spine exactly once
    last = paths[np.arange(n), (paths >= 0).sum(axis=1) - 1]
    assert np.array_equal(t.link_dst[last], dst)


def _chain(rate_mid: float = 100.0, delay: float = 500.0) -> dict:
    """h0, h1 on s0; h2 on s1; one s0-s1 cable: a two-hop bottleneck toward h2."""
    links = [{"a": "h0", "b": "s0", "rate_gbps": 100, "delay_ns": delay},
             {"a": "h1", "b": "s0", "rate_gbps": 100, "delay_ns": delay},
             {"a": "h2", "b": "s1", "rate_gbps": 100, "delay_ns": delay},
             {"a": "s0", "b": "s1", "rate_gbps": rate_mid, "delay_ns": delay}]
    return {"hosts": ["h0", "h1", "h2"], "switches": ["s0", "s1"], "links": links}


def test_multi_hop_rtt_is_path_propagation_plus_every_hops_queue(tmp_path):
    """Two constant 0.75 flows into a 2-hop path: both hops' queues grow at 0.5 line rate (the
    model's arrivals are the sending rates at every hop), so RTT = 3 us + 2 x 0.5 x send time."""
    f = tmp_path / "chain.json"
    f.write_text(json.dumps(_chain()))
    topo = TopologyConfig(kind="file", path=str(f), buffer_alpha=None)
    sc = Pairs(hosts=3, src=(0, 1), dst=(2, 2), duration_ms=0.2, initial_rate=0.75, topology=topo)
    res = simulate(sc, ConstantRate(0.75), trace=TraceConfig(capacity=10_000))
    tr = res.trace
    sent = tr.time_ns - tr.rtt_ns  # probe send time
    base = 2 * 3 * 500.0
    later = np.arange(len(sent)) >= 2  # a flow's first probe samples the queue at its start (t = 0)
    assert later.sum() >= 8
    step_start = np.floor(sent / 1000) * 1000  # probes sample the queue at the start of their step
    expect = base + 2 * 0.5 * step_start
    np.testing.assert_allclose(tr.rtt_ns[later], np.rint(expect[later]), atol=1)


def test_path_base_rtt_counts_every_link_both_ways():
    net = Network()
    sc = AllToAll(hosts=64, topology=FAT, duration_ms=0.01)
    t = FAT.build(net)
    fab = PathFabric(net, sc.placed_table(), t, 0, None)
    same_leaf = (sc.placed_table().host // 16) == (sc.placed_table().dst // 16)
    assert set(fab.flow_base_rtt[same_leaf].tolist()) == {4000.0}
    assert set(fab.flow_base_rtt[~same_leaf].tolist()) == {8000.0}


def test_star_topology_reproduces_the_single_switch():
    """The single switch as a one-switch topology on the path fabric: same metrics."""
    for ctl in ("swift", "dcqcn"):
        a = ManyToOne(flows=24, duration_ms=2)
        b = dataclasses.replace(a, topology=TopologyConfig(kind="star", hosts=25, buffer_alpha=None))
        ra, rb = simulate(a, make_controller(ctl)), simulate(b, make_controller(ctl))
        for k, v in ra.metrics.items():
            if k not in ("wall_s", "sim_speed"):
                assert rb.metrics[k] == pytest.approx(v, rel=1e-6, abs=1e-9), (ctl, k)
        np.testing.assert_allclose(rb.flows["sent_bytes"], ra.flows["sent_bytes"], rtol=1e-9)


def _parking_lot() -> dict:
    """s0 - s1 - s2 in a line (100G then 40G); a long flow a0 -> c0 shares s0-s1 with a1 -> b0
    (limited by b0's 50G link) and s1-s2 with b1 -> c1: three different bottlenecks."""
    hosts = ["a0", "a1", "b0", "b1", "c0", "c1"]
    links = [{"a": h, "b": f"s{'abc'.index(h[0])}", "rate_gbps": 50 if h == "b0" else 100, "delay_ns": 500} for h in hosts]
    links += [{"a": "s0", "b": "s1", "rate_gbps": 100, "delay_ns": 500},
              {"a": "s1", "b": "s2", "rate_gbps": 40, "delay_ns": 500}]
    return {"hosts": hosts, "switches": ["s0", "s1", "s2"], "links": links}


def _oracle_case(sc, topo_cfg) -> tuple[np.ndarray, np.ndarray]:
    """Simulated steady goodput of HPCC per flow vs the max-min allocation at HPCC's utilization.

    HPCC's per-RTT update W = W eta / U + W_AI settles, for the flows whose most utilized hop is
    link l, at rate r_l = R_AI / (1 - eta / U_l), i.e. U_l = eta r_l / (r_l - R_AI): each
    bottleneck runs a little above eta. The oracle is the max-min allocation of U_l x capacity,
    iterated to that fixed point (the allocation gives r_l, r_l gives U_l)."""
    net = sc.network
    hp = Hpcc()
    res = simulate(sc, hp)
    table = sc.placed_table()
    t = topo_cfg.build(net)
    paths = Routing(t).paths(table.host.astype(np.int64), table.dst.astype(np.int64), np.arange(table.n_flows),
                             sc.ecmp_seed)
    links = [p[p >= 0].tolist() for p in paths]
    cap = t.link_gbps / net.line_rate_gbps
    r_ai = hp.p.rate_ai_gbps / net.line_rate_gbps
    util = np.full(len(cap), hp.p.eta)
    flat = np.concatenate([np.array(f) for f in links])
    owner = np.repeat(np.arange(len(links)), [len(f) for f in links])
    for _ in range(50):
        rates = maxmin_rates(links, cap * util)
        load = np.bincount(flat, weights=rates[owner], minlength=len(cap))
        top = np.zeros(len(cap))
        np.maximum.at(top, flat, rates[owner])
        full = load >= cap * util * (1 - 1e-9)  # saturated links: the flows' bottlenecks
        util = np.where(full, hp.p.eta * top / np.maximum(top - r_ai, 1e-12), hp.p.eta)
    return res.flows["window_rate"], rates


@pytest.mark.slow
@pytest.mark.parametrize("case", ["parking-lot", "small-fat-tree", "three-leaves"])
def test_steady_goodput_matches_the_max_min_oracle(case, tmp_path):
    if case == "parking-lot":
        f = tmp_path / "lot.json"
        f.write_text(json.dumps(_parking_lot()))
        cfg = TopologyConfig(kind="file", path=str(f))
        # a0 -> c0, a1 -> b0, b1 -> c1
        sc = Pairs(hosts=6, src=(0, 1, 3), dst=(4, 2, 5), duration_ms=20, topology=cfg, initial_rate=0.1)
    elif case == "small-fat-tree":  # 2 leaves x 4 hosts, 1 spine link: 4:1 oversubscribed
        cfg = TopologyConfig(hosts_per_leaf=4, leaves=2, spines=1, links_per_pair=1)
        sc = AllToAll(hosts=8, duration_ms=20, topology=cfg, initial_rate=0.05)
    else:  # 3 leaves x 4 hosts, 1 spine, 40G fabric links: 10:1, uplinks and downlinks both bottlenecks
        cfg = TopologyConfig(hosts_per_leaf=4, leaves=3, spines=1, links_per_pair=1, fabric_gbps=40)
        sc = AllToAll(hosts=12, duration_ms=20, topology=cfg, initial_rate=0.02)
    got, want = _oracle_case(sc, cfg)
    np.testing.assert_allclose(got, want, rtol=0.02)


@pytest.mark.slow
@pytest.mark.parametrize("topology", [None, FAT], ids=["single-switch", "fat-tree"])
def test_hpcc_steady_state_at_64_flows_sits_near_eta_with_no_queue(topology):
    sc = ManyToOne(flows=64, duration_ms=6, topology=topology)
    sc = dataclasses.replace(sc, initial_rate=sc.fair_rate())
    hp = Hpcc()
    m = simulate(sc, hp).metrics
    # HPCC's fixed point U* = eta + N x W_AI / BDP (64 flows x 40 Mb/s at 100G: +0.0256)
    expect = hp.p.eta + 64 * hp.p.rate_ai_gbps / sc.network.line_rate_gbps
    assert m["goodput"] == pytest.approx(expect, abs=0.01)
    assert m["queue_delay_mean_us"] < 0.1 and m["drops_per_flow"] == 0


def test_osu_iteration_time_on_a_hand_checkable_case():
    """2 ranks at line rate, 125 KB messages: 10 us of sending + half the 8 us base RTT, every
    iteration (the next one starts when the last message has arrived)."""
    for topo in (None, TopologyConfig(kind="star", hosts=2, buffer_alpha=None)):
        sc = OsuAllToAll(hosts=2, message_bytes=125_000, iterations=3, duration_ms=0.1, topology=topo)
        m = simulate(sc, ConstantRate(1.0)).metrics_full
        assert m["iterations_completed"] == 3
        assert m["iteration_us"] == pytest.approx(14.0)


def test_fct_uses_the_path_base_rtt():
    """An uncongested 125 KB flow within a leaf: FCT = 10 us + half its 4 us base RTT."""
    sc = LongShort(short_flows=1, short_bytes=125_000, duration_ms=0.1, burst_start_frac=0.5,
                   topology=TopologyConfig(hosts_per_leaf=4, leaves=1, spines=1))
    res = simulate(sc, ConstantRate(np.array([0.5, 0.5])))
    assert res.flows["fct_ns"][1] == pytest.approx(20_000 + 2_000)


def test_poisson_trace_on_the_fabric_runs_and_is_deterministic():
    sc = PoissonTrace(hosts=16, load=0.3, duration_ms=1.0, topology=TopologyConfig(hosts_per_leaf=4, leaves=4))
    a, b = simulate(sc, make_controller("swift")), simulate(sc, make_controller("swift"))
    assert sc.n_flows > 20
    np.testing.assert_array_equal(a.flows["fct_ns"], b.flows["fct_ns"])
    assert a.metrics_full["short_completed"] > 0.5


@pytest.mark.parametrize("data,needle", [
    ({"hosts": ["a", "b"], "switches": ["s"], "links": [{"a": "a", "b": "s", "rate_gbps": 100, "delay_ns": 1}]},
     "host b has no link"),
    ({"hosts": ["a", "b"], "switches": ["s", "t"], "links": [{"a": "a", "b": "s", "rate_gbps": 100, "delay_ns": 1},
                                                           {"a": "b", "b": "t", "rate_gbps": 100, "delay_ns": 1}]},
     "disconnected"),
    ({"hosts": ["a", "b"], "switches": ["s"], "links": [{"a": "a", "b": "s", "rate_gbps": 0, "delay_ns": 1},
                                                      {"a": "b", "b": "s", "rate_gbps": 100, "delay_ns": 1}]},
     "rate_gbps 0"),
    ({"hosts": ["a", "b"], "switches": ["s"], "links": [], "color": 1}, "unknown key(s) color"),
    ({"hosts": ["a", "b"], "switches": ["s"], "links": [{"a": "a", "b": "s", "rate_gbps": 1, "delay_ns": 1, "x": 2}]},
     "unknown key(s) x"),
])
def test_bad_topologies_are_one_line_errors(data, needle):
    with pytest.raises(BadInputError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        from_dict(data)


def test_routing_loops_and_dead_ends_are_refused():
    ring = {"hosts": ["a", "b"], "switches": ["s", "t", "u"],
            "links": [{"a": "a", "b": "s", "rate_gbps": 100, "delay_ns": 1},
                      {"a": "b", "b": "u", "rate_gbps": 100, "delay_ns": 1},
                      {"a": "s", "b": "t", "rate_gbps": 100, "delay_ns": 1},
                      {"a": "t", "b": "u", "rate_gbps": 100, "delay_ns": 1},
                      {"a": "s", "b": "u", "rate_gbps": 100, "delay_ns": 1}]}
    from_dict(ring)  # shortest paths: fine
    with pytest.raises(BadInputError, match="routing loop toward host b"):
        from_dict({**ring, "routes": {"s": {"b": ["t"]}, "t": {"b": ["s"]}}})
    with pytest.raises(BadInputError, match="goes to another host"):
        from_dict({**ring, "routes": {"t": {"b": ["a"]}}})
    with pytest.raises(BadInputError, match="not its neighbour"):
        from_dict({**ring, "routes": {"t": {"b": ["b"]}}})


@pytest.mark.parametrize("latency", [0.0, 1.0, 3.0])
def test_block_batched_decisions_on_a_topology_equal_the_step_loop(latency):
    """Block mode (one policy call per block) gives the step loop's results bit for bit on a
    fat-tree: metrics, per-flow bytes and the recorded CNP/NACK counts."""
    from rlcc.simulator import PolicyController

    net = Network(buffer_bytes=400_000, ecn_kmin_bytes=20_000, ecn_kmax_bytes=100_000)
    sc = AllToAll(hosts=16, flows_per_pair=2, duration_ms=0.6, decision_latency_us=latency, network=net,
                  topology=TopologyConfig(hosts_per_leaf=4, leaves=4, fabric_gbps=25))
    sc = dataclasses.replace(sc, initial_rate=min(1.0, 6 * sc.fair_rate()))  # overloaded: marks and drops
    policy = Path(__file__).resolve().parents[2] / "examples" / "rlcc_mlp.onnx"
    runs = [simulate(sc, PolicyController(str(policy)), block_steps=b, trace=TraceConfig(capacity=200_000)) for b in (0, 1, None)]
    a = runs[0]
    assert a.metrics_full["drops_per_flow"] > 0 and a.trace.cnp_count.sum() > 0
    for b in runs[1:]:
        for k, v in a.metrics.items():
            if k not in ("wall_s", "sim_speed"):
                assert b.metrics[k] == v or (np.isnan(v) and np.isnan(b.metrics[k])), k
        np.testing.assert_array_equal(b.flows["sent_bytes"], a.flows["sent_bytes"])
        np.testing.assert_array_equal(b.flows["dropped_bytes"], a.flows["dropped_bytes"])
        key = np.lexsort((b.trace.time_ns, b.trace.flow_id)), np.lexsort((a.trace.time_ns, a.trace.flow_id))
        np.testing.assert_array_equal(b.trace.cnp_count[key[0]], a.trace.cnp_count[key[1]])
        np.testing.assert_array_equal(b.trace.nack_count[key[0]], a.trace.nack_count[key[1]])
