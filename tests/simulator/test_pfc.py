"""Lossless mode (Network.pfc): PFC pauses at XOFF, resumes at XON, HOL blocking, hop-by-hop
propagation. Every expected time and byte count is worked out by hand in the test.

Units: 100 Gb/s = 12.5 bytes/ns = 12,500 bytes per 1 us step; single switch base RTT 8 us, so a
host link's one-way delay is 2 us and a pause (or resume) takes effect 4 us after the crossing.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.simulator import ManyToOne, Network, PfcParams, Scenario, TopologyConfig, make_controller, simulate
from rlcc.simulator.controllers.constant import ConstantRate
from rlcc.simulator.engine import _Run
from rlcc.simulator.network import Fabric
from rlcc.simulator.params import FlowTable

STATIC = PfcParams(xoff_bytes=99_000, xon_bytes=51_000)
STEP = 12_500.0  # bytes a 100G link carries per 1 us step


def _incast(pfc: PfcParams | None, us: float, buffer_bytes: int = 32_000_000) -> ManyToOne:
    """Two hosts at line rate into one port: the queue grows 12,500 B/us, each host's share 6,250."""
    return ManyToOne(flows=2, hosts=2, duration_ms=us / 1000, initial_rate=1.0,
                     network=Network(pfc=pfc, buffer_bytes=buffer_bytes))


def test_single_switch_pauses_at_xoff_and_resumes_at_xon():
    r = simulate(_incast(STATIC, 50), ConstantRate(1.0))
    # Each host holds 6,250 B per us: 93,750 at 15 us, 100,000 >= XOFF at 16 us -> paused from 20 us
    # (holding 125,000: 25,000 of headroom). The queue drains 12,500 B/us, 6,250 per host: 56,250 at
    # 31 us, 50,000 <= XON at 32 us -> resumed at 36 us; 25,000 + 6,250 x 12 = 100,000 at 48 us again.
    log = r.pfc["log"]
    assert log.tolist() == [[16_000, 0, 1], [16_000, 1, 1], [32_000, 0, 0], [32_000, 1, 0], [48_000, 0, 1], [48_000, 1, 1]]
    assert r.pfc["pauses"].tolist() == [2, 2] and r.pfc["names"].tolist() == ["host0", "host1"]
    assert r.pfc["paused_ns"].tolist() == [16_000, 16_000]  # 20 -> 36 us; the second pause starts at 52 > 50
    assert r.pfc["max_bytes"] == pytest.approx([125_000, 125_000])
    # Sent: 20 us + 14 us (36..50) at 12,500 B/us each.
    assert r.flows["sent_bytes"] == pytest.approx([34 * STEP] * 2)
    assert r.metrics_full["pfc_pauses"] == 4.0
    assert r.metrics_full["pfc_paused_frac"] == pytest.approx(16 / 50)


def test_no_drops_while_headroom_suffices_and_drops_when_it_does_not():
    lossy = simulate(_incast(None, 50, buffer_bytes=300_000), ConstantRate(1.0))
    # Lossy: the queue reaches 300,000 at 24 us, then 12,500 B/us overflow for 26 us.
    assert lossy.flows["dropped_bytes"].sum() == pytest.approx(26 * STEP)
    assert lossy.pfc is None and "pfc_pauses" not in lossy.metrics
    lossless = simulate(_incast(STATIC, 50, buffer_bytes=300_000), ConstantRate(1.0))
    assert lossless.flows["dropped_bytes"].sum() == 0.0  # the peak is 250,000 < 300,000
    # Headroom too small: 200,000 bytes (100,000 per host) fill at 16 us; 4 x 12,500 overflow until
    # the pause at 20 us. Draining 6,250 per host per us: 50,000 <= XON at 28 us, resumed at 32 us
    # with 25,000 each; 100,000 >= XOFF at 44 us, paused at 48 us: 4 x 12,500 more overflow.
    short = simulate(_incast(STATIC, 50, buffer_bytes=200_000), ConstantRate(1.0))
    assert short.pfc["log"][:, 0].tolist() == [16_000, 16_000, 28_000, 28_000, 44_000, 44_000]
    assert short.flows["dropped_bytes"].sum() == pytest.approx(8 * STEP)


def test_dynamic_threshold_as_the_peer():
    """XOFF = alpha x (buffer - headroom and reserve x ports - shared bytes), XON = XOFF - resume offset."""
    pfc = PfcParams(alpha=0.125, headroom_bytes=0, reserve_bytes=0, resume_offset_bytes=3090)
    r = simulate(_incast(pfc, 40, buffer_bytes=990_000), ConstantRate(1.0))
    # Each host holds x, used 2x: pause when x >= (990,000 - 2x) / 8, i.e. x >= 99,000: 100,000 at 16 us.
    # Resume when x <= (990,000 - 2x) / 8 - 3,090, i.e. x <= 96,528: from 125,000 at 20 us, 93,750 at 25 us.
    # Resumed at 29 us with 68,750: 100,000 >= 99,000 at 34 us.
    assert r.pfc["log"][:, 0].tolist() == [16_000, 16_000, 25_000, 25_000, 34_000, 34_000]
    assert r.pfc["paused_ns"].tolist() == [11_000, 11_000]  # 20 -> 29 us, then 38 -> 40 (the end)
    # Headroom reserved for 2 ports: pool 900,000, x >= 90,000: 93,750 at 15 us.
    with_headroom = dataclasses.replace(pfc, headroom_bytes=45_000)
    assert simulate(_incast(with_headroom, 20, buffer_bytes=990_000), ConstantRate(1.0)).pfc["log"][0, 0] == 15_000


def test_the_peers_defaults():
    """PfcParams(): headroom 3 x link BDP = 3 x 12.5 B/ns x 2,000 ns = 75,000 per host port, reserve
    4,096 per port, resume offset 3,072, alpha 1/8. Buffer 1,148,192: pool 990,000 for the shared
    bytes s = x - 4,096 of each host. Pause when s >= (990,000 - 2s) / 8: s >= 99,000, x >= 103,096:
    106,250 at 17 us (paused from 21 us with 131,250). Resume when s + 3,072 <= (990,000 - 2s) / 8:
    s <= 96,542.4, x <= 100,638.4: 100,000 at 26 us (resumed at 30 us with 75,000); 106,250 at 35 us."""
    r = simulate(_incast(PfcParams(), 40, buffer_bytes=1_148_192), ConstantRate(1.0))
    assert r.pfc["log"][:, 0].tolist() == [17_000, 17_000, 26_000, 26_000, 35_000, 35_000]
    assert r.pfc["max_bytes"] == pytest.approx([131_250, 131_250])


def test_head_of_line_blocking():
    """Host 0 sends to port 0 (congested, with host 1) and port 1 (idle): its pause stops both."""
    table = FlowTable(host=np.array([0, 0, 1], np.int32), port=np.array([0, 1, 0], np.int32),
                      start_ns=np.zeros(3), size_bytes=np.full(3, np.inf), n_hosts=2, n_ports=2)

    def port1_bytes(pfc: PfcParams | None) -> tuple[float, Fabric]:
        fab = Fabric(Network(pfc=pfc), table)
        fab.add_rates(fab.flow_group, np.array([0.75, 0.25, 0.75]))
        for _ in range(50):
            fab.step(1000.0)
        return float(fab.tx[1]), fab

    # Port 0 gets 1.5 x line rate: each host's share grows 3,125 B/us: 100,000 >= XOFF at 32 us,
    # paused from 36 us (both hosts). Port 1 carries host 0's 0.25 x 12,500 B/us until 36 us only.
    lossy, _ = port1_bytes(None)
    lossless, fab = port1_bytes(STATIC)
    assert lossy == pytest.approx(50 * 0.25 * STEP)
    assert lossless == pytest.approx(36 * 0.25 * STEP)
    assert fab.pfc.log[0] == (32_000.0, 0, True) and fab.queue[1] == 0.0


LINE = {"hosts": ["h0", "h1"], "switches": ["s0", "s1"],
        "links": [{"a": "h0", "b": "s0", "rate_gbps": 50, "delay_ns": 1000},
                  {"a": "s0", "b": "s1", "rate_gbps": 100, "delay_ns": 1000},
                  {"a": "s1", "b": "h1", "rate_gbps": 100, "delay_ns": 1000}]}


def test_pause_at_xoff_propagates_one_hop_and_releases_at_xon(tmp_path):
    """h1 -> s1 -> s0 -> h0 at 100G; s0 -> h0 is 50G. Links' delay 1 us: frames act 2 us later.

    s0's queue to h0 (all of it came in from s1) grows 12,500 - 6,250 B/us, one step behind s1
    (store-and-forward): 6,250 x (k - 1) at k us; 100,000 >= XOFF at 17 us: s0 pauses s1's egress at
    19 us (s0 holds 112,500; the step s1 served before arrives: 118,750 at 20 us). s1's queue,
    unserved, grows 12,500 B/us from 19 us: 100,000 at 27 us: s1 pauses h1 at 29 us (125,000).
    s0 drains 6,250 B/us: 50,000 <= XON at 31 us: s1's egress resumes at 33 us. s1 drains 12,500
    B/us: 50,000 at 39 us: h1 resumes at 41 us.
    """
    path = tmp_path / "line.json"
    path.write_text(json.dumps(LINE))
    sc = ManyToOne(flows=1, hosts=1, duration_ms=0.044, initial_rate=1.0,
                   network=Network(pfc=STATIC), topology=TopologyConfig(kind="file", path=str(path)))
    run = _Run(sc, ConstantRate(1.0), None)
    run.run()
    fab = run.fabric
    names = fab.ingress_names()
    link, host = names.index("s1->s0"), names.index("h1->s1")
    assert fab.pfc.log == [(17_000.0, link, True), (27_000.0, host, True), (31_000.0, link, False), (39_000.0, host, False)]
    pfc = fab.pfc.record(44_000.0)
    assert pfc["paused_ns"][link] == 14_000 and pfc["paused_ns"][host] == 12_000  # 19..33, 29..41 us
    assert pfc["max_bytes"][link] == pytest.approx(118_750) and pfc["max_bytes"][host] == pytest.approx(125_000)
    assert fab.dropped == 0.0
    # h1 sent 29 + 3 us of line rate (paused 29..41 us).
    run.settle(np.arange(1))
    assert run.acc_sent[0] == pytest.approx(32 * STEP)
    # Delivered: 6,250 B/us from the second step on (one step of store-and-forward at s1), without
    # a gap (s0's queue never empties).
    assert fab.delivered == pytest.approx(43 * 6_250)


def test_pfc_falls_back_to_the_step_loop():
    ctl = make_controller("policy", "examples/synthetic_mlp.onnx")
    assert _Run(_incast(None, 20), ctl, None).blocked
    assert not _Run(_incast(STATIC, 20), ctl, None).blocked


@pytest.mark.parametrize("pfc, message", [
    ({"xoff_bytes": 1000}, "needs both xoff_bytes and xon_bytes"),
    ({"xoff_bytes": 1000, "xon_bytes": 1000}, "network.pfc.xon_bytes must be in"),
    ({"alpha": 0}, "network.pfc.alpha must be in"),
    ({"xof": 1}, "unknown key(s) in network.pfc: xof"),
    ({"headroom_bytes": "x"}, "network.pfc.headroom_bytes has invalid value"),
    (7, "network.pfc must be null or an object"),
])
def test_bad_pfc_json(pfc, message):
    with pytest.raises(BadInputError, match="^invalid scenario: " ) as err:
        Scenario.from_dict({"kind": "many-to-one", "network": {"pfc": pfc}})
    assert message in str(err.value)


def test_pfc_json_round_trip():
    sc = _incast(STATIC, 20)
    assert Scenario.from_json(sc.to_json()) == sc
    lossy = Scenario.from_dict({"kind": "many-to-one"})
    assert lossy.network.pfc is None and "pfc" not in lossy.to_dict()["network"]
    assert Scenario.from_json(lossy.to_json()) == lossy


def test_rlcc_sim_pfc_option():
    from click.testing import CliRunner

    from rlcc.cli.simulate import simulate_command

    args = ["many-to-one", "--flows", "2", "--hosts", "2", "--controller", "swift", "--duration-ms", "0.05",
            "--initial-rate", "1", "--full", "--json"]
    r = CliRunner().invoke(simulate_command, args + ["--pfc", "20000,10000"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["scenario"]["network"]["pfc"]["xoff_bytes"] == 20_000 and out["metrics"]["pfc_pauses"] >= 2
    off = json.loads(CliRunner().invoke(simulate_command, args + ["--pfc", "off"]).output)
    assert "pfc" not in off["scenario"]["network"] and "pfc_pauses" not in off["metrics"]
    bad = CliRunner().invoke(simulate_command, args + ["--pfc", "lots"])
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and "--pfc must be off, dynamic or XOFF,XON" in bad.output
    inverted = CliRunner().invoke(simulate_command, args + ["--pfc", "1000,2000"])
    assert inverted.exit_code == 3 and inverted.output.count("\n") == 1 and "network.pfc.xon_bytes" in inverted.output


def test_suite_job_in_lossless_mode():
    from rlcc.simulator.suite import ControllerSpec, Job, Point, run_job, run_suite

    pt = Point("many-to-one", "single-switch", "8 flows", 8, ManyToOne(flows=8, duration_ms=0.2, initial_rate=1.0), False)
    lossy = run_job(Job(pt, ControllerSpec.parse("dcqcn")))
    lossless = run_job(Job(pt, ControllerSpec.parse("dcqcn"), loss_mode="lossless"))
    assert "loss_mode" not in lossy and "pfc_pauses" not in lossy["metrics"]
    assert lossless["loss_mode"] == "lossless" and lossless["metrics"]["pfc_paused_frac"] >= 0.0
    with pytest.raises(BadInputError, match="loss modes must be distinct"):
        run_suite([ControllerSpec.parse("dcqcn")], "reduced", loss_modes=("lossy", "pfc"))


def test_pfc_that_never_pauses_changes_nothing_on_one_switch():
    """Thresholds above anything the run reaches: the lossless path gives the lossy results."""
    sc = ManyToOne(flows=16, duration_ms=0.3, initial_rate=1.0)
    lossy = simulate(sc, make_controller("dcqcn"))
    high = dataclasses.replace(sc, network=Network(pfc=PfcParams(xoff_bytes=1 << 40, xon_bytes=1 << 39)))
    lossless = simulate(high, make_controller("dcqcn"))
    assert lossless.metrics_full["pfc_pauses"] == 0
    for key in ("goodput", "queue_delay_mean_us", "drops_per_flow", "jain"):
        assert lossless.metrics_full[key] == pytest.approx(lossy.metrics_full[key], rel=1e-9, abs=1e-12), key
    np.testing.assert_allclose(lossless.flows["sent_bytes"], lossy.flows["sent_bytes"], rtol=1e-9)


def test_lossless_fat_tree_conserves_bytes_while_pausing():
    """Incast at line rate on a small fat-tree with a tight static XOFF: pauses propagate through the
    leaves and spines, and every byte a host sent is delivered, queued, between hops, or dropped."""
    tree = TopologyConfig(kind="fat-tree", hosts_per_leaf=4, leaves=2, spines=2, links_per_pair=1)
    sc = ManyToOne(flows=7, duration_ms=0.1, initial_rate=1.0, topology=tree,
                   network=Network(pfc=PfcParams(xoff_bytes=30_000, xon_bytes=15_000)))
    run = _Run(sc, ConstantRate(1.0), None)
    run.run()
    fab = run.fabric
    run.settle(np.arange(run.n))
    nQ = fab.n_queues
    transit = float((fab.cell_out[:, :-1] * (fab.group_queues[:, 1:] < nQ)).sum())
    total = fab.delivered + float(fab.queue[:nQ].sum()) + transit + fab.dropped
    assert float(run.acc_sent.sum()) == pytest.approx(total, rel=1e-9)
    rec = fab.pfc.record(run.n_steps * run.dt)
    names = fab.ingress_names()
    paused = {names[i] for i in np.flatnonzero(rec["pauses"])}
    assert any(n.startswith("h") for n in paused) and any(n.startswith(("leaf", "spine")) for n in paused), paused
    assert fab.dropped == 0.0  # headroom suffices at these thresholds
    assert float(fab.cell_bytes.sum()) == pytest.approx(float(fab.queue[:nQ].sum()), rel=1e-9)
