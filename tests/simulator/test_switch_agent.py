"""Switch agents in the simulator: interval statistics against analytic values, static templates
against the agent-free run, template switches, queue enumeration on a leaf-spine, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.simulator.controllers.constant import ConstantRate
from rlcc.simulator.controllers.dcqcn import Dcqcn
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import AllToAll, Incast, ManyToOne, Network, TopologyConfig
from rlcc.simulator.switch_agent import StaticEcn, WindowAgent
from rlcc.simulator.switch_metrics import switch_metrics
from rlcc.switch_spec import EcnTemplate, SwitchAgentSpec

KMIN, KMAX, PMAX = 100_000, 400_000, 0.25  # PMAX is exact in Q16: the device applies it unchanged
SPEC = SwitchAgentSpec(actions=(EcnTemplate(KMIN, KMAX, PMAX), EcnTemplate(10**7, 2 * 10**7, PMAX)), interval_us=10)
NET = Network(ecn_kmin_bytes=KMIN, ecn_kmax_bytes=KMAX, ecn_pmax=PMAX)


class Recorder(WindowAgent):
    """Keeps every IntervalStats; switches every queue to ``to`` from ``at_ns`` on."""

    name = "recorder"

    def __init__(self, spec: SwitchAgentSpec, at_ns: float = math.inf, to: int = 0) -> None:
        super().__init__(spec)
        self.at_ns, self.to, self.seen = at_ns, to, []

    def on_interval(self, stats):
        self.seen.append(stats)
        self.observe(stats)
        a = self.to if stats.time_ns >= self.at_ns else self.spec.initial_action
        return np.full(len(stats.qlen_bytes), a, np.int64)


def _marked_area(q: np.ndarray) -> np.ndarray:
    """Integral of the RED probability over queue depth 0..q (bytes), in closed form."""
    ramp = PMAX * np.square(np.clip(q, KMIN, KMAX) - KMIN) / (2.0 * (KMAX - KMIN))
    return ramp + np.maximum(q - KMAX, 0.0)


def _red(q: np.ndarray) -> np.ndarray:
    """RED marking probability at queue depth q (bytes)."""
    return np.where(q >= KMAX, 1.0, np.where(q > KMIN, PMAX * (q - KMIN) / (KMAX - KMIN), 0.0))


@pytest.mark.parametrize("topology", [None, TopologyConfig(kind="star", hosts=3)], ids=["switch", "star"])
def test_interval_statistics_match_the_analytic_ramp(topology):
    # Two flows at 0.75 of line rate into one port: the queue grows at 0.5 C from t = 0.
    C = NET.bytes_per_ns
    agent = Recorder(SPEC)
    sc = ManyToOne(flows=2, duration_ms=1.0, network=NET, topology=topology, initial_rate=0.75)
    simulate(sc, ConstantRate(0.75), switch_agent=agent)
    port = 0 if topology is None else int(np.argmax(agent.seen[-1].qlen_bytes))
    T = SPEC.interval_ns
    t = np.array([s.time_ns for s in agent.seen])
    assert np.array_equal(t, T * np.arange(1, len(t) + 1))
    qlen = np.array([s.qlen_bytes[port] for s in agent.seen])
    assert np.all(np.abs(qlen - np.floor(0.5 * C * t)) <= 1)
    tx = np.array([s.tx_bytes[port] for s in agent.seen])
    assert np.all(np.abs(tx - C * T) <= 1)
    avg = np.array([s.avg_qlen_bytes[port] for s in agent.seen])
    np.testing.assert_allclose(avg, 0.5 * C * (t - T / 2), rtol=1e-12)
    util = np.array([s.util[port] for s in agent.seen])
    np.testing.assert_allclose(util, 1.0, atol=1e-5)
    # Marked bytes: arrivals (1.5 C) x RED probability of q(s) = 0.5 C s, i.e. 3 x the integral of p over q.
    cum = 3.0 * _marked_area(0.5 * C * t)
    want = np.diff(np.floor(np.concatenate([[0.0], cum]) / SPEC.packet_bytes))
    got = np.array([s.marked_pkts[port] for s in agent.seen])
    # The fabric marks with the step-start queue (a left Riemann sum of the rising probability):
    # its cumulative error grows by at most arrivals x dt x the probability's rise in the interval.
    rise = _red(0.5 * C * t) - _red(0.5 * C * (t - T))
    slack = C * 1.5 * NET.dt_ns * rise / SPEC.packet_bytes + 1.0
    assert np.all(np.abs(got - want) <= slack)
    assert got.sum() > 1000 and got[: int(KMIN / (0.5 * C) // T)].sum() == 0
    if topology is not None:  # the idle queues (toward the senders) see nothing
        other = np.array([np.delete(s.tx_bytes, port) for s in agent.seen])
        assert not other.any()


@pytest.mark.parametrize("sc", [
    ManyToOne(flows=8, duration_ms=1.0, network=NET),
    AllToAll(hosts=3, flows_per_pair=2, duration_ms=1.0, network=NET),  # several ports
    ManyToOne(flows=8, duration_ms=1.0, network=NET,
              topology=TopologyConfig(kind="fat-tree", hosts_per_leaf=2, leaves=2, spines=1, links_per_pair=1)),
], ids=["switch", "ports", "leaf-spine"])
def test_static_default_template_is_bit_identical_to_no_agent(sc):
    plain = simulate(sc, Dcqcn())
    with_agent = simulate(sc, Dcqcn(), switch_agent=StaticEcn(SPEC, 0))
    assert plain.switch is None and with_agent.switch is not None
    for k in plain.metrics:
        if k not in ("wall_s", "sim_speed"):
            assert plain.metrics[k] == with_agent.metrics[k] or (math.isnan(plain.metrics[k]) and math.isnan(with_agent.metrics[k])), k
    for k, v in plain.flows.items():
        assert np.array_equal(v, with_agent.flows[k], equal_nan=True), k
    assert with_agent.switch["tx_bytes"].sum() > 0


def test_switching_templates_takes_effect():
    at = 300_000.0  # the queue is at 0.5 C x 300 us = 1.875 MB: marked every packet until then
    agent = Recorder(SPEC, at_ns=at, to=1)
    sc = ManyToOne(flows=2, duration_ms=0.6, network=NET, initial_rate=0.75)
    res = simulate(sc, ConstantRate(0.75), switch_agent=agent)
    marks = np.array([s.marked_pkts[0] for s in agent.seen])
    t = np.array([s.time_ns for s in agent.seen])
    assert marks[(t > 100_000) & (t <= at)].min() > 0
    assert not marks[t > at].any()  # kmin 10 MB lies above the queue (< 3.75 MB) from the next step on
    acts = res.switch["actions"][:, 0]
    assert acts.dtype == np.int16 and list(acts[t <= at]) == [0] * int((t <= at).sum())
    assert set(acts[t > at].tolist()) == {1}


def test_leaf_spine_queue_info():
    L, H, S, P, fabric_gbps = 3, 2, 2, 2, 200.0
    topo = TopologyConfig(kind="fat-tree", hosts_per_leaf=H, leaves=L, spines=S, links_per_pair=P, fabric_gbps=fabric_gbps)
    agent = Recorder(SPEC)
    sc = ManyToOne(flows=4, duration_ms=0.05, network=NET, topology=topo)
    res = simulate(sc, Dcqcn(), switch_agent=agent)
    q = agent.queues
    # Leaf j: H downlinks to hosts (100G) + S x P uplinks; spine k: L x P downlinks (switches: leaves, then spines).
    assert q.n_queues == L * (H + S * P) + S * L * P
    for sw in range(L + S):
        speeds = sorted(q.port_gbps[q.switch == sw].tolist())
        want = [100.0] * H + [fabric_gbps] * (S * P) if sw < L else [fabric_gbps] * (L * P)
        assert speeds == sorted(want), sw
    assert np.array_equal(res.switch["queue_switch"], q.switch)
    assert res.switch["last_hop"].sum() == L * H and set(q.port_gbps[res.switch["last_hop"]].tolist()) == {100.0}
    assert np.array_equal(q.util_mul, [SPEC.util_mul(g) for g in q.port_gbps])


def test_interval_below_the_step_is_bad_input():
    spec = SwitchAgentSpec(actions=SPEC.actions, interval_us=1.0)
    sc = ManyToOne(flows=2, duration_ms=0.05, network=Network(dt_ns=2000.0))
    with pytest.raises(BadInputError, match="below the simulator step"):
        simulate(sc, Dcqcn(), switch_agent=StaticEcn(spec, 0))


def test_bad_agent_output_is_bad_input():
    class Bad(WindowAgent):
        def choose(self, window):
            return np.full(len(window), 7)

    with pytest.raises(BadInputError, match="template indices"):
        simulate(ManyToOne(flows=2, duration_ms=0.05), Dcqcn(), switch_agent=Bad(SPEC))


def test_dcqcn_incast_lower_thresholds_give_a_lower_queue():
    spec = SwitchAgentSpec(actions=(EcnTemplate(5_000, 200_000, 0.01), EcnTemplate(640_000, 5_000_000, 0.01)),
                           interval_us=10)
    sc = Incast(senders=8, flows_per_sender=2, bursts=4, burst_interval_us=1000, duration_ms=5.0)
    out = {}
    for a in (0, 1):
        res = simulate(sc, Dcqcn(), switch_agent=StaticEcn(spec, a))
        out[a] = (res.metrics_full["queue_delay_mean_us"], switch_metrics(res))
    assert out[0][0] < 0.6 * out[1][0]
    assert out[0][1]["queue_kb_mean"] < 0.6 * out[1][1]["queue_kb_mean"]
    assert out[0][1]["flows"] == 64 and out[0][1]["mice_slowdown_mean"] >= 1.0


def test_incast_flow_table():
    sc = Incast(senders=3, flows_per_sender=2, bursts=500, burst_interval_us=100, seed=4)
    t = sc.flow_table()
    assert t.n_flows == 3000 and np.array_equal(np.bincount(t.host), [1000] * 3)
    assert np.array_equal(np.unique(t.start_ns), np.arange(500) * 100_000.0)
    assert t.size_bytes.min() >= 10_000 and t.size_bytes.max() <= 10_000_000
    # log-uniform over three decades: each decade holds a third of the flows
    dec = np.bincount(np.floor(np.log10(t.size_bytes) - 4).astype(int).clip(0, 2), minlength=3) / 3000
    np.testing.assert_allclose(dec, 1 / 3, atol=0.04)
    with pytest.raises(BadInputError, match="max_bytes"):
        Incast(min_bytes=1000, max_bytes=10).validate()


def test_record_keeps_every_mth_interval_within_the_cap(monkeypatch):
    import rlcc.simulator.switch_run as switch_run

    monkeypatch.setattr(switch_run, "MAX_RECORD_CELLS", 30)
    agent = Recorder(SPEC)
    res = simulate(ManyToOne(flows=2, duration_ms=1.0, network=NET, initial_rate=0.75), ConstantRate(0.75),
                   switch_agent=agent)
    sw = res.switch
    assert len(agent.seen) == 100 and sw["interval_every"] == 4  # ceil(100 intervals x 1 queue / 30)
    assert np.array_equal(sw["time_ns"], [agent.seen[i].time_ns for i in range(0, 100, 4)])
    assert np.array_equal(sw["qlen_bytes"][:, 0], [agent.seen[i].qlen_bytes[0] for i in range(0, 100, 4)])
    assert sw["tx_bytes"][0] == sum(int(s.tx_bytes[0]) for s in agent.seen)
