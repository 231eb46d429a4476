"""Go-back-N loss recovery (``Network.loss_recovery``): a hand-worked single loss episode, the
block loops and the C kernel against the step loop, finite flows, the fallback and bad input."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.simulator import AllToAll, LongShort, ManyToOne, Network, TraceConfig, make_controller, simulate
from rlcc.simulator import engine
from rlcc.simulator.blocks import BlockLoop
from rlcc.simulator.controllers.constant import ConstantRate
from rlcc.simulator.scenarios import Scenario, TopologyConfig

ROOT = Path(__file__).resolve().parents[2]
ZOO = str(ROOT / "examples" / "zoo" / "adpg_k2_bias8x8.onnx")
GBN = "go-back-n"


@pytest.fixture
def zero_phase(monkeypatch):
    """Every flow sends its first probe at t = 0 (the hand-worked numbers need the probe times)."""
    real = engine._Run.__init__

    def init(self, *args, **kwargs):
        real(self, *args, **kwargs)
        self.flows.phase[:] = 0.0

    monkeypatch.setattr(engine._Run, "__init__", init)


def _two_flow_incast(recovery: str) -> ManyToOne:
    # 100 Gb/s = 12.5 B/ns, dt 1 us, base RTT 8 us; 6250 B buffer, 625 B packets; 50 us.
    net = Network(buffer_bytes=6250, packet_bytes=625, loss_recovery=recovery)
    return ManyToOne(flows=2, duration_ms=0.05, initial_rate=1.0, decision_latency_us=0.0, network=net)


def test_a_single_loss_episode_costs_exactly_the_resent_bytes(zero_phase):
    """Two hosts at line rate into one port. Step 0: 25000 B in, 12500 out, the queue would reach
    12500 > 6250, 6250 B dropped (a quarter of the inflow); steps 1-7: 12500 B dropped each (half).
    Drop integral 250 + 7 x 500 = 3750 ns, so each flow lost 12.5 x 3750 = 46875 B = 75 packets.
    Both probes left at t = 0 with an empty queue and return at 8 us (RTT 8000 ns): one NACK
    event of 75 packets; each flow goes back over what it sent in that RTT, 1.0 x 12.5 x 8000 =
    100000 B, and is set to 0.5 of line rate: the queue stays at 6250 B, no further drop.
    Each flow sent 100000 + 0.5 x 12.5 x 42000 = 362500 B; in order it delivered 362500 - 100000."""
    on = simulate(_two_flow_incast(GBN), ConstantRate(0.5))
    off = simulate(_two_flow_incast("none"), ConstantRate(0.5))
    for run in (on, off):
        np.testing.assert_array_equal(run.flows["sent_bytes"], [362500.0, 362500.0])
        np.testing.assert_array_equal(run.flows["dropped_bytes"], [46875.0, 46875.0])
    resent, discarded = on.flows["resent_bytes"], on.flows["discarded_bytes"]
    np.testing.assert_array_equal(resent, [100000.0, 100000.0])
    np.testing.assert_array_equal(discarded, [100000.0 - 46875.0] * 2)
    in_order = on.flows["sent_bytes"] - on.flows["dropped_bytes"] - discarded
    np.testing.assert_array_equal(in_order, on.flows["sent_bytes"] - resent)  # the cost: exactly the resent bytes
    # the port sent 12500 B every step (625000 B); 2 x 53125 of them were discarded
    assert off.metrics_full["goodput"] == 1.0
    assert on.metrics_full["goodput"] == (625000.0 - 2 * 53125.0) / 625000.0
    assert on.metrics_full["resent_per_flow"] == 100000.0 / 625
    assert on.metrics_full["drops_per_flow"] == off.metrics_full["drops_per_flow"] == 75.0
    assert "resent_bytes" not in off.flows and "resent_per_flow" not in off.metrics_full
    # the window (25-50 us) has no loss: the same per-flow rate either way
    np.testing.assert_array_equal(on.flows["window_rate"], off.flows["window_rate"])


def _same_gbn(a, b) -> None:
    for key in ("sent_bytes", "dropped_bytes", "resent_bytes", "discarded_bytes", "window_rate"):
        np.testing.assert_array_equal(a.flows[key], b.flows[key], err_msg=key)
    for key in ("goodput", "resent_per_flow", "resent_fraction", "drops_per_flow", "decisions"):
        assert a.metrics_full[key] == b.metrics_full[key], key


DROPS = ManyToOne(flows=16, duration_ms=1.5, seed=5, network=Network(buffer_bytes=150_000, loss_recovery=GBN))


def test_one_port_block_loop_takes_the_python_blocks_and_matches_the_step_loop(monkeypatch):
    """The C kernel has no go-back-N: one-port runs with it take the Python blocks, whose NACK counts
    equal the step loop's and whose byte counts (settled at other moments) equal them up to rounding;
    also with several flows per host (NIC scales below 1 at the line-rate start)."""
    used = []
    real = BlockLoop._block_kernel

    def spy(self, s, e):
        used.append(e - s)
        return real(self, s, e)

    monkeypatch.setattr(BlockLoop, "_block_kernel", spy)
    ctl = make_controller("policy", ZOO)
    cfg = TraceConfig(capacity=100_000)
    for sc in (DROPS, ManyToOne(flows=48, hosts=6, duration_ms=1.0, initial_rate=1.0, network=DROPS.network)):
        assert engine._Run(sc, ctl, None).blocked
        blocks, steps = simulate(sc, ctl, trace=cfg), simulate(sc, ctl, trace=cfg, block_steps=0)
        assert not used
        assert blocks.flows["resent_bytes"].sum() > 0
        np.testing.assert_array_equal(blocks.trace.nack_count, steps.trace.nack_count)
        for key in ("resent_bytes", "discarded_bytes"):
            np.testing.assert_allclose(blocks.flows[key], steps.flows[key], rtol=1e-9, atol=1e-6, err_msg=key)
        assert blocks.metrics_full["goodput"] == pytest.approx(steps.metrics_full["goodput"], rel=1e-9)
    simulate(dataclasses.replace(DROPS, network=Network(buffer_bytes=150_000)), ctl)
    assert used  # without go-back-N the kernel runs


def test_go_back_n_costs_goodput_and_never_more_than_was_sent():
    ctl = make_controller("policy", ZOO)
    on, off = simulate(DROPS, ctl), simulate(dataclasses.replace(DROPS, network=Network(buffer_bytes=150_000)), ctl)
    assert on.metrics_full["goodput"] < off.metrics_full["goodput"]
    in_order = on.flows["sent_bytes"] - on.flows["dropped_bytes"] - on.flows["discarded_bytes"]
    assert (in_order >= -1e-6).all() and (on.flows["resent_bytes"] <= on.flows["sent_bytes"]).all()


def _blocks_equal_steps_with_losses(sc: Scenario) -> None:
    """The block loop runs ``sc`` and books go-back-N as the step loop does, and there was some."""
    ctl = make_controller("policy", ZOO)
    assert engine._Run(sc, ctl, None).blocked
    a, b = simulate(sc, ctl, block_steps=0), simulate(sc, ctl)
    assert a.flows["resent_bytes"].sum() > 0
    _same_gbn(a, b)


def test_topology_block_loop_equals_the_step_loop_under_go_back_n():
    net = Network(buffer_bytes=200_000, loss_recovery=GBN)
    sc = ManyToOne(flows=12, duration_ms=0.6, initial_rate=1.0, network=net,
                   topology=TopologyConfig(hosts_per_leaf=4, leaves=4, fabric_gbps=100))
    _blocks_equal_steps_with_losses(sc)


def test_topology_hosts_with_several_flows_equal_the_step_loop():
    """All-to-all on a fat-tree, NICs oversubscribed at the line-rate start (scales < 1): the block
    loop accounts go-back-N as the step loop does, bit for bit."""
    net = Network(buffer_bytes=400_000, ecn_kmin_bytes=20_000, ecn_kmax_bytes=100_000, host_rate_gbps=150,
                  loss_recovery=GBN)
    sc = AllToAll(hosts=16, flows_per_pair=2, duration_ms=0.4, initial_rate=1.0, network=net,
                  topology=TopologyConfig(hosts_per_leaf=4, leaves=4, fabric_gbps=25))
    _blocks_equal_steps_with_losses(sc)


def test_finite_flows_finish_on_in_order_bytes():
    """Short flows finish later under go-back-N: their discarded bytes must be sent again."""
    base = LongShort(short_flows=24, bursts=1, duration_ms=1.0, burst_start_frac=0.2,
                     network=Network(buffer_bytes=100_000, loss_recovery=GBN))
    ctl = make_controller("swift")
    on = simulate(base, ctl)
    off = simulate(dataclasses.replace(base, network=Network(buffer_bytes=100_000)), ctl)
    done = np.isfinite(on.flows["fct_ns"]) & np.isfinite(off.flows["fct_ns"])
    assert on.flows["resent_bytes"][done].sum() > 0
    assert (on.flows["fct_ns"][done] >= off.flows["fct_ns"][done]).all()
    assert on.flows["fct_ns"][done].sum() > off.flows["fct_ns"][done].sum()
    in_order = on.flows["sent_bytes"] - on.flows["dropped_bytes"] - on.flows["discarded_bytes"]
    assert (in_order[done] >= on.flows["size_bytes"][done]).all()


def test_bad_loss_recovery_is_one_line():
    with pytest.raises(BadInputError, match=r"network.loss_recovery must be one of none, go-back-n, got 'gbn'"):
        ManyToOne(flows=2, network=Network(loss_recovery="gbn")).validate()
    with pytest.raises(BadInputError, match="network.loss_recovery must be a string"):
        Scenario.from_dict({"kind": "many-to-one", "network": {"loss_recovery": 3}})
    sc = Scenario.from_dict({"kind": "many-to-one", "flows": 4, "network": {"loss_recovery": "go-back-n"}})
    assert sc.network.go_back_n


def test_cli_loss_recovery_flag_and_json_scenario(tmp_path):
    """``rlcc-sim --loss-recovery`` and a scenario file's ``network.loss_recovery`` give the same run."""
    import json
    import subprocess

    args = ["--flows", "8", "--controller", "dcqcn", "--buffer-bytes", "150000", "--initial-rate", "1",
            "--duration-ms", "0.3", "--full", "--json", "-q"]
    flag = subprocess.run(["rlcc-sim", "many-to-one", *args, "--loss-recovery", GBN], capture_output=True, text=True)
    assert flag.returncode == 0, flag.stderr
    metrics = json.loads(flag.stdout)
    metrics = metrics.get("metrics", metrics)
    assert metrics["resent_per_flow"] >= metrics["drops_per_flow"] > 0
    bad = subprocess.run(["rlcc-sim", "many-to-one", *args, "--loss-recovery", "gbn"], capture_output=True, text=True)
    assert bad.returncode == 2 and "go-back-n" in bad.stderr
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"kind": "many-to-one", "flows": 8, "duration_ms": 0.3, "initial_rate": 1,
                                "network": {"buffer_bytes": 150000, "loss_recovery": "go-bak-n"}}))
    run = subprocess.run(["rlcc-sim", "run", str(path), "--controller", "dcqcn", "-q"], capture_output=True, text=True)
    assert run.returncode == 3 and run.stderr.count("\n") == 1 and "network.loss_recovery must be one of" in run.stderr


def test_go_back_n_runs_on_the_nics_clock_when_decisions_lag(zero_phase):
    """Serial decisions of 1 ms: the flows' first decisions land after the 50 us run, so they send
    at line rate throughout, but NACKs are the NIC's: one check per RTT. Checks at 8000 ns, then
    every base RTT + the full buffer's 500 ns of queueing (16500, 25000, 33500, 42000; 50500 is past
    the run); the loop settles a check falling in a step at the step's start (8000, 16000, 25000,
    33000, 42000 ns). Drops never stop, so each check goes back over everything sent since the
    previous one: 100000 + 100000 + 112500 + 100000 + 112500 = 525000 B per flow (12.5 B/ns).
    Booked at decisions instead (the rule of runs that decide every RTT), only the first decision's
    RTT (100000 B) would be resent."""
    sc = dataclasses.replace(_two_flow_incast(GBN), decision_latency_us=1000.0, serial_decisions=True)
    run = simulate(sc, ConstantRate(0.5))
    np.testing.assert_array_equal(run.flows["decisions"], [1, 1])  # decided at 8 us, never applied
    np.testing.assert_array_equal(run.flows["sent_bytes"], [625000.0, 625000.0])
    np.testing.assert_array_equal(run.flows["resent_bytes"], [525000.0, 525000.0])
    dropped_by_42us = 12.5 * (250 + 41 * 500)  # drop integral up to the last check
    np.testing.assert_array_equal(run.flows["discarded_bytes"], [525000.0 - dropped_by_42us] * 2)
    # in order: what was sent after the last check less its drops (not NACKed before the run ended)
    in_order = run.flows["sent_bytes"] - run.flows["dropped_bytes"] - run.flows["discarded_bytes"]
    np.testing.assert_array_equal(in_order, [12.5 * 8000 - 12.5 * 8 * 500] * 2)
