"""``Network.header_bytes``: the wire carries P + H bytes per P-byte payload, so a saturated link
delivers capacity x P / (P + H) payload, on the single switch (C kernel and Python blocks) and on
the multi-hop fabric; queues, rates and ECN stay in wire bytes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.simulator import AllToAll, ConstantRate, ManyToOne, Network, TopologyConfig, simulate
from rlcc.simulator import blocks

P, H = 1000, 52
FRACTION = P / (P + H)


def _net(h: int = H) -> Network:
    return Network(packet_bytes=P, header_bytes=h)


def test_payload_fraction_is_exactly_one_without_headers():
    assert Network().payload_fraction == 1.0 and Network().wire_packet_bytes == Network().packet_bytes
    assert _net().payload_fraction == FRACTION and _net().wire_packet_bytes == P + H
    assert _net().payload_bytes_per_ns == pytest.approx(Network().bytes_per_ns * FRACTION, rel=1e-15)


@pytest.mark.parametrize("use_kernel", [True, False])
def test_saturated_single_switch_delivers_the_payload_share(monkeypatch, use_kernel):
    monkeypatch.setattr(blocks.BlockLoop, "use_kernel", use_kernel)
    sc = ManyToOne(flows=4, duration_ms=1.0, network=_net(), initial_rate=0.25, converged_from=0.0)
    r = simulate(sc, ConstantRate(0.25))
    assert r.metrics["goodput"] == pytest.approx(FRACTION, rel=1e-12)
    assert r.flows["window_rate"] == pytest.approx(np.full(4, 0.25 * FRACTION), rel=1e-12)
    assert r.metrics["queue_delay_p99_us"] == 0.0  # the wire runs exactly at line rate: no queue
    base = simulate(dataclasses.replace(sc, network=_net(0)), ConstantRate(0.25))
    assert base.metrics["goodput"] == pytest.approx(1.0, rel=1e-12)
    np.testing.assert_array_equal(r.flows["sent_bytes"], base.flows["sent_bytes"])  # wire bytes unchanged


@pytest.mark.parametrize("topology", [TopologyConfig(kind="star", hosts=5),
                                      TopologyConfig(kind="fat-tree", hosts_per_leaf=1, leaves=2, spines=1)])
def test_saturated_fabric_link_delivers_the_payload_share(topology):
    if topology.kind == "star":
        sc = ManyToOne(flows=4, hosts=4, duration_ms=1.0, network=_net(), topology=topology, initial_rate=0.25,
                       converged_from=0.0)
        rate = 0.25
    else:  # two hosts on two leaves, one flow each way at line rate: every link on the paths saturated
        rate = 1.0
        sc = AllToAll(hosts=2, duration_ms=1.0, network=_net(), topology=topology, converged_from=0.0)
    r = simulate(sc, ConstantRate(rate))
    assert r.metrics["goodput"] == pytest.approx(FRACTION, rel=1e-9)
    assert r.flows["window_rate"] == pytest.approx(np.full(sc.n_flows, rate * FRACTION), rel=1e-9)


class _OneFinite(ManyToOne):
    """One flow of 1 MB payload."""

    def flow_table(self):
        t = super().flow_table()
        return dataclasses.replace(t, size_bytes=np.full(t.n_flows, 1e6))


@pytest.mark.parametrize("h", [0, H])
def test_a_finite_flow_needs_its_payload_plus_headers_on_the_wire(h):
    net = _net(h)
    sc = _OneFinite(flows=1, duration_ms=0.5, network=net, converged_from=0.0)
    r = simulate(sc, ConstantRate(1.0))
    wire_ns = 1e6 / net.payload_bytes_per_ns  # 80 us without headers, 84.16 us with 52 B per 1000 B
    transfer = r.flows["fct_ns"][0] - net.base_rtt_ns / 2
    assert wire_ns <= transfer < wire_ns + net.dt_ns
    assert r.metrics["short_fct_slowdown_mean"] < 1.0 + net.dt_ns / (wire_ns + net.base_rtt_ns)


def test_header_bytes_out_of_range_is_bad_input():
    with pytest.raises(BadInputError, match="network.header_bytes"):
        ManyToOne(flows=2, duration_ms=1.0, network=Network(header_bytes=-1)).validate()
