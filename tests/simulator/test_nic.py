"""The NIC decision processor (``simulator/nic.py``): hand-worked queueing and its place in the loop."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.simulator import ManyToOne, simulate
from rlcc.simulator.nic import DecisionProcessor, NicConfig, verify_cycles
from rlcc.simulator.scenarios import Scenario

CLOCK = 1_800_000_000


def _nic(cycles: int, cores: int = 1, threads: int = 1) -> NicConfig:
    return NicConfig(cores=cores, threads=threads, decision_cycles=cycles, clock_hz=CLOCK)


def test_two_flows_on_one_thread_queue_by_exactly_one_decision_time():
    """1800 cycles at 1.8 GHz = 1000 ns. Flow 0's event at 0 runs 0..1000; flow 1's at 100 waits
    900 ns for the thread and completes at 2000: one decision time after flow 0's."""
    p = DecisionProcessor(_nic(1800), np.array([0, 0]))
    done = p.admit(np.array([1, 0]), np.array([100.0, 0.0]))
    assert done.tolist() == [2000.0, 1000.0]
    m = p.metrics(10_000.0)
    assert m["nic_decision_us"] == 1.0
    assert m["nic_wait_max_us"] == 0.9 and m["nic_wait_mean_us"] == 0.45
    assert m["nic_backlog_max"] == 1.0  # flow 1 waited alone
    assert m["nic_utilization"] == 0.2  # 2 x 1000 ns of one thread in 10 us
    assert p.metrics(1500.0)["nic_utilization"] == 1.0  # 0..1000 and 1000..1500 of flow 1's 1000..2000
    assert p.per_flow()["nic_wait_max_ns"].tolist() == [0.0, 900.0]


def test_threads_serve_in_parallel_and_nics_are_independent():
    """Two threads: events at 0, 0, 0 on host 0 complete at 1000, 1000, 2000; host 1's event at 0
    has its own threads; backlog counts the events still waiting at each arrival."""
    p = DecisionProcessor(_nic(1800, threads=2), np.array([0, 0, 0, 1]))
    done = p.admit(np.array([0, 1, 2, 3]), np.zeros(4))
    assert done.tolist() == [1000.0, 1000.0, 2000.0, 1000.0]
    assert p.backlog_max.tolist() == [1, 0]
    later = p.admit(np.array([0]), np.array([1500.0]))  # both threads busy until 1000 / 2000: starts at 1500
    assert later.tolist() == [2500.0]


def test_two_flows_on_one_thread_in_the_closed_loop():
    """In a run: two flows on one host and one thread with a 20 us decision (longer than the 8 us
    RTT). The later first probe's decision completes exactly one decision time after the earlier
    one's, and its next probe leaves then (returns one base RTT later: no queue at 1 % rate)."""
    sc = ManyToOne(flows=2, hosts=1, duration_ms=0.2, initial_rate=0.01, nic=_nic(36_000))
    log: list[tuple[int, float]] = []

    class Keep:
        spec, initial_rate, name = None, 0.01, "keep"

        def reset(self, *a):
            pass

        def decide(self, batch):
            log.extend(zip(batch.flow_ids.tolist(), batch.time_ns.tolist()))
            return batch.rate

    res = simulate(sc, Keep())
    first = sorted(log[:2], key=lambda e: e[1])
    (a, ta), (b, tb) = first
    assert tb - ta < 20_000.0  # the second event arrives while the thread is busy
    done_a, done_b = ta + 20_000.0, ta + 40_000.0
    nxt = {f: t for f, t in log[2:4]}
    base = sc.network.base_rtt_ns
    assert nxt[a] == pytest.approx(done_a + base, abs=1e-6)
    assert nxt[b] == pytest.approx(done_b + base, abs=1e-6)
    assert res.flows["nic_wait_max_ns"][b] == pytest.approx(done_a - tb)
    assert res.metrics_full["nic_backlog_max"] == 1.0


def test_enough_threads_equal_the_serial_decision_latency():
    """With a thread per flow no event waits: the run equals serial decisions at the same time."""
    from rlcc.simulator import make_controller

    mlp = "examples/rlcc_mlp.onnx"
    base = ManyToOne(flows=8, duration_ms=1.0, seed=3)
    nic = simulate(Scenario.from_dict({**base.to_dict(), "nic": {"cores": 2, "threads": 4, "decision_cycles": 9000,
                                                                  "clock_hz": CLOCK}}), make_controller("policy", mlp))
    serial = simulate(ManyToOne(flows=8, duration_ms=1.0, seed=3, serial_decisions=True, decision_latency_us=5.0),
                      make_controller("policy", mlp))
    assert nic.metrics_full["nic_wait_max_us"] == 0.0
    for key in ("goodput", "queue_delay_mean_us", "mean_rtt_inflation", "decisions", "drops_per_flow"):
        assert nic.metrics_full[key] == serial.metrics_full[key], key
    for key in ("sent_bytes", "dropped_bytes", "decisions", "final_rate"):
        assert np.array_equal(nic.flows[key], serial.flows[key]), key


def test_one_thread_for_many_flows_slows_every_loop():
    """32 flows on one thread at 5 us each: a flow's loop is 32 x 5 us, not RTT + 5 us."""
    from rlcc.simulator import make_controller

    sc = ManyToOne(flows=32, hosts=1, duration_ms=2.0, nic=_nic(9000))
    res = simulate(sc, make_controller("policy", "examples/rlcc_mlp.onnx"))
    m = res.metrics_full
    assert m["nic_wait_mean_us"] > 100.0 and m["nic_backlog_max"] >= 30
    assert 0.95 < m["nic_utilization"] <= 1.0  # queued work past the end does not count
    # one thread completes at most duration / decision time; each flow may have one more queued
    assert 2.0e6 / 5e3 - 40 <= m["decisions"] <= 2.0e6 / 5e3 + 32


def test_verify_json_gives_cycles_and_the_profiles_clock(tmp_path):
    v = tmp_path / "verify.json"
    v.write_text(json.dumps({"cycles": {"max": 649}, "clock_hz": CLOCK, "budget": {"hw_threads_sharing": 16}}))
    assert verify_cycles(v) == (649 * 16, CLOCK)
    v.write_text(json.dumps({"cycles": {}}))
    with pytest.raises(BadInputError, match="not an rlcc-verify report"):
        verify_cycles(v)


@pytest.mark.parametrize("nic, message", [
    ({"cores": 0}, "nic.cores must be an integer in 1..1024"),
    ({"threads": 1.5}, "nic.threads"),
    ({"decision_cycles": -1}, "nic.decision_cycles"),
    ({"clock_hz": 0}, "nic.clock_hz must be in"),
    ({"speed": 1}, r"unknown key\(s\) in nic: speed"),
    (7, "nic must be an object with keys among"),
    ({"cores": "2"}, "nic.cores has invalid value '2'"),
])
def test_bad_nic_config_is_one_clear_error(nic, message):
    with pytest.raises(BadInputError, match=message):
        Scenario.from_dict({"kind": "many-to-one", "nic": nic})


def test_default_has_no_processor_and_no_nic_metrics():
    res = simulate(ManyToOne(flows=4, duration_ms=0.2), _Const())
    assert not any(k.startswith("nic_") for k in res.metrics) and "nic_wait_mean_ns" not in res.flows


class _Const:
    spec, initial_rate, name = None, 0.25, "const"

    def reset(self, *a):
        pass

    def decide(self, batch):
        return batch.rate


def _sim(*args: str):
    import subprocess

    return subprocess.run(["rlcc-sim", "many-to-one", "--flows", "8", "--hosts", "1", "--duration-ms", "0.5",
                           "--controller", "policy", "--policy", "examples/rlcc_mlp.onnx", "--json", "--full", "-q", *args],
                          capture_output=True, text=True, timeout=300)


def test_rlcc_sim_times_a_cycle_count_by_the_profile_clock(tmp_path):
    """9000 cycles: 5 us at dpa's 1.8 GHz (the default NIC profile), at ibex's clock."""
    from rlcc.emulator.cycle_model import load_profile

    p = _sim("--nic-cores", "1", "--decision-cycles", "9000")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["metrics"]["nic_decision_us"] == pytest.approx(9000 / CLOCK * 1e6)
    other = load_profile("ibex").clock_hz
    q = _sim("--nic-threads", "2", "--decision-cycles", "9000", "--nic-profile", "ibex")
    assert q.returncode == 0, q.stderr
    assert json.loads(q.stdout)["metrics"]["nic_decision_us"] == pytest.approx(9000 / other * 1e6)
    v = tmp_path / "verify.json"
    v.write_text(json.dumps({"cycles": {"max": 700}, "clock_hz": 1_000_000_000, "budget": {"hw_threads_sharing": 2}}))
    r = _sim("--nic-cores", "2", "--decision-cycles", str(v))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["metrics"]["nic_decision_us"] == pytest.approx(1.4)


@pytest.mark.parametrize("args, message", [
    (("--decision-cycles", "100"), "--decision-cycles/--nic-profile need the decision processor"),
    (("--nic-cores", "1"), "need --decision-cycles N or a verify.json"),
    (("--nic-cores", "1", "--decision-cycles", "nope.json"), "neither a cycle count nor an existing verify.json"),
    (("--nic-cores", "1", "--decision-cycles", "0"), "nic.decision_cycles must be an integer"),
])
def test_rlcc_sim_bad_nic_flags_are_one_line(args, message):
    p = _sim(*args)
    assert p.returncode == 3 and message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_a_run_with_a_processor_takes_the_step_loop():
    """The block loop and the C kernel have no processor: a batchable controller falls back."""
    from rlcc.simulator import make_controller
    from rlcc.simulator.engine import _Run

    ctl = make_controller("policy", "examples/rlcc_mlp.onnx")
    assert _Run(ManyToOne(flows=4, duration_ms=0.1), ctl, None).blocked
    assert not _Run(ManyToOne(flows=4, duration_ms=0.1, nic=_nic(900)), ctl, None).blocked
