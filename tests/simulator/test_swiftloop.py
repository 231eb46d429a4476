"""Swift's C step loop on one switch port (``rlcc.simulator.swiftloop``) against the engine's Python
step loop (``_Run.use_swift_loop = False``): every output and every per-flow, fabric and Swift value
at the end bit-identical, on the paths the C loop has (steady and line-rate starts, NIC
oversubscription, drops with NACKs, go-back-N, zero and multi-RTT decision latency, flows starting
mid-run, other ticks and steps, subsampled queues, progress reports), and the runs it leaves to Python."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rlcc.simulator import AllToAll, FlowTable, ManyToOne, Network, Swift, SwiftParams, simulate
from rlcc.simulator import engine, swiftloop
from sim_identity import assert_runs_identical as _assert_identical, bits as _bits

GBN = "go-back-n"


class _Staggered(ManyToOne):
    """Flows starting mid-run, off step boundaries (the C loop takes over once the last started)."""

    def flow_table(self) -> FlowTable:
        t = super().flow_table()
        starts = np.arange(t.n_flows) * 1733.3
        return dataclasses.replace(t, start_ns=starts)


SCENARIOS = {
    "steady": ManyToOne(flows=256, duration_ms=2.0, seed=1, initial_rate=1 / 256),
    "startup-oversubscribed-nics": ManyToOne(flows=96, hosts=6, duration_ms=2.0, seed=2),
    "drops": ManyToOne(flows=128, duration_ms=1.5, seed=5, network=Network(buffer_bytes=300_000)),
    "go-back-n": ManyToOne(flows=128, duration_ms=1.5, seed=5, network=Network(buffer_bytes=300_000, loss_recovery=GBN)),
    "latency0": ManyToOne(flows=64, duration_ms=1.5, seed=6, initial_rate=1 / 64, decision_latency_us=0.0),
    "latency-over-rtts": ManyToOne(flows=64, duration_ms=1.5, seed=7, initial_rate=1 / 64, decision_latency_us=21.0),
    "staggered-starts": _Staggered(flows=24, duration_ms=1.0, seed=8, network=Network(buffer_bytes=400_000)),
    "step-2us-window-0": ManyToOne(flows=64, duration_ms=2.0, seed=9, converged_from=0.0, network=Network(dt_ns=2000)),
}


def _both(monkeypatch, scenario, make_ctl=Swift, progress=False):
    """The run with the Python loop, then with the C loop (asserted to be used); also every per-flow
    array, fabric value and Swift array at the end bit-identical. Returns the results and the
    progress reports of each."""
    used, states, reports = [], [], []
    real_loop, real_run = engine._Run._run_swift_loop, engine._Run.run

    def spy(self, k0, prog):
        used.append(k0)
        return real_loop(self, k0, prog)

    def keep(self, *args):
        real_run(self, *args)
        states.append(self)

    monkeypatch.setattr(engine._Run, "_run_swift_loop", spy)
    monkeypatch.setattr(engine._Run, "run", keep)
    runs = []
    for use in (False, True):
        monkeypatch.setattr(engine._Run, "use_swift_loop", use)
        got = []
        runs.append(simulate(scenario, make_ctl(), progress=got.append if progress else None))
        reports.append(got)
        assert bool(used) == use
    py, c = states
    for f in dataclasses.fields(py.flows):
        assert _bits(getattr(py.flows, f.name)) == _bits(getattr(c.flows, f.name)), f"flows.{f.name}"
    for name in ("g0", "group_scale", "ref", "group_rate", "port_load", "_q", "_d", "_m", "time", "offered", "dropped",
                 "delivered", "_load1"):
        assert _bits(getattr(py.fabric, name)) == _bits(getattr(c.fabric, name)), f"fabric.{name}"
    for name in ("cwnd", "cwnd_eff", "paced", "pend_rate", "pend_cwnd", "qdelay"):
        assert _bits(getattr(py.ctl, name)) == _bits(getattr(c.ctl, name)), f"swift.{name}"
    assert _bits(py.q_samples) == _bits(c.q_samples) and _bits(py.rtt_stats) == _bits(c.rtt_stats)
    assert py.next_tick == c.next_tick
    return runs, reports


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_c_loop_equals_the_python_step_loop(monkeypatch, name):
    (py, c), _ = _both(monkeypatch, SCENARIOS[name])
    _assert_identical(py, c)
    assert py.metrics_full["decisions"] > 1000


def test_the_scenarios_exercise_drops_nacks_go_back_and_oversubscription(monkeypatch):
    """The equality above is not vacuous: the lossy runs drop and NACK, go-back-N resends, and the
    oversubscribed NICs scale their flows."""
    (_, drops), _ = _both(monkeypatch, SCENARIOS["drops"])
    assert drops.metrics_full["drops_per_flow"] > 0
    (_, gbn), _ = _both(monkeypatch, SCENARIOS["go-back-n"])
    assert gbn.flows["resent_bytes"].sum() > 0 and gbn.flows["discarded_bytes"].sum() > 0


@pytest.mark.parametrize("tick_us", [1.0, 8.0])
def test_other_ticks(monkeypatch, tick_us):
    sc = ManyToOne(flows=128, duration_ms=1.0, seed=3, initial_rate=1 / 128)
    (py, c), _ = _both(monkeypatch, sc, lambda: Swift(SwiftParams(tick_us=tick_us)))
    _assert_identical(py, c)


def test_subsampled_queue_and_progress_reports(monkeypatch):
    """Queue samples every few steps (``q_every`` > 1) and progress reports in chunks: the same as
    the Python loop's, summing to the run's steps."""
    monkeypatch.setattr(engine, "MAX_QUEUE_SAMPLES", 700)
    sc = ManyToOne(flows=32, duration_ms=2.5, seed=4, initial_rate=1 / 32)
    (py, c), (rep_py, rep_c) = _both(monkeypatch, sc, progress=True)
    _assert_identical(py, c)
    assert rep_py == rep_c and sum(rep_c) == 2500


class _MySwift(Swift):
    pass


@pytest.mark.parametrize("scenario, make_ctl", [
    (AllToAll(hosts=4, duration_ms=0.2), Swift),  # several ports
    (ManyToOne(flows=8, duration_ms=0.2), _MySwift),  # a subclass may change decide / on_tick
    (ManyToOne(flows=8, duration_ms=0.2, serial_decisions=True), Swift),
])
def test_runs_the_c_loop_does_not_have_stay_in_python(monkeypatch, scenario, make_ctl):
    used = []
    monkeypatch.setattr(engine._Run, "_run_swift_loop", lambda self, k0, prog: used.append(k0))
    simulate(scenario, make_ctl())
    assert not used


def test_the_loop_refuses_arrays_replaced_under_it():
    run = engine._Run(ManyToOne(flows=8, duration_ms=0.1), Swift(), None)
    loop = swiftloop.SwiftLoop(run, engine.MIN_RATE)
    run.ctl.cwnd_eff = run.ctl.cwnd_eff.copy()
    with pytest.raises(RuntimeError, match="replaced"):
        loop.run_steps(0, 1)
