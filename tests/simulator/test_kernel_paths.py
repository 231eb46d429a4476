"""Topology blocks in C against the Python block loop (``BlockLoop.use_kernel = False``): the kernel's
``prep`` (the decisions, the pending changes before them, the policy inputs) and ``path_post`` (the
pending list, rate-matrix sums, fabric steps, settles, probes, queue samples), and for runs that
count CNP/NACKs (a trace, go-back-N) the kernel's front half with the numpy block end. Every output
and every per-flow and fabric value bit-identical, with drops (with and without the dynamic
threshold) and marks (per-step group integrals), NIC oversubscription, zero and multi-block
decision latency, pending changes before a decision."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from rlcc.simulator import AllToAll, Network, PolicyController, TopologyConfig, TraceConfig, simulate
from rlcc.simulator import engine
from rlcc.simulator._fluidcore import np_sum
from rlcc.simulator.blocks import BlockLoop
from sim_identity import assert_runs_identical as _assert_identical, bits as _bits

POLICY = str(Path(__file__).resolve().parents[2] / "examples" / "rlcc_mlp.onnx")
FT = TopologyConfig(hosts_per_leaf=4, leaves=4, fabric_gbps=25)
LOSSY = Network(buffer_bytes=400_000, ecn_kmin_bytes=20_000, ecn_kmax_bytes=100_000)


def _overloaded(network: Network = LOSSY, topology: TopologyConfig = FT, **kw) -> AllToAll:
    sc = AllToAll(hosts=16, flows_per_pair=2, duration_ms=0.6, seed=3, network=network, topology=topology, **kw)
    return dataclasses.replace(sc, initial_rate=min(1.0, 6 * sc.fair_rate()))  # marks and drops


SCENARIOS = {
    "steady": (dataclasses.replace(s := AllToAll(hosts=16, flows_per_pair=2, duration_ms=1.0, seed=1, topology=FT),
                                   initial_rate=s.fair_rate()), {}),
    "line-rate-start": (AllToAll(hosts=16, duration_ms=1.0, seed=2, topology=FT), {}),
    "drops-and-marks": (_overloaded(), {}),
    "latency0": (_overloaded(decision_latency_us=0.0), {}),
    "no-dynamic-threshold": (_overloaded(topology=dataclasses.replace(FT, buffer_alpha=None)), {}),
    "latency-over-blocks": (_overloaded(decision_latency_us=9.0), {}),
    "trace-counts": (_overloaded(), {"trace": TraceConfig(capacity=50_000)}),
    "go-back-n": (_overloaded(network=dataclasses.replace(LOSSY, loss_recovery="go-back-n")), {}),
}


def _both(monkeypatch, scenario, **kwargs):
    """The Python blocks, then the C paths; the per-flow and fabric state at the end bit-identical.
    Returns the results and how many blocks ran in C after the controller call (``path_post``)."""
    states, ends = [], []
    real_run, real_end = engine._Run.run, BlockLoop._block_paths_c

    def keep(self, *args):
        real_run(self, *args)
        states.append(self)

    def spy(self, *args):
        ends.append(1)
        return real_end(self, *args)

    monkeypatch.setattr(engine._Run, "run", keep)
    monkeypatch.setattr(BlockLoop, "_block_paths_c", spy)
    runs, used = [], []
    for use in (False, True):
        monkeypatch.setattr(BlockLoop, "use_kernel", use)
        runs.append(simulate(scenario, PolicyController(POLICY), **kwargs))
        used.append(len(ends))
    assert used[0] == 0
    py, c = states
    assert py._front is None and c._front is not None
    for f in dataclasses.fields(py.flows):
        assert _bits(getattr(py.flows, f.name)) == _bits(getattr(c.flows, f.name)), f"flows.{f.name}"
    for name in ("queue", "host_base", "host_scale", "host_ref", "host_sum", "host_queue_rate", "group_drop",
                 "group_mark", "time"):
        assert _bits(getattr(py.fabric, name)) == _bits(getattr(c.fabric, name)), f"fabric.{name}"
    assert _bits(py.q_samples) == _bits(c.q_samples) and _bits(py.rtt_stats) == _bits(c.rtt_stats)
    return runs, used[1]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_topology_c_paths_equal_the_python_blocks(monkeypatch, name):
    scenario, kwargs = SCENARIOS[name]
    (py, c), c_ends = _both(monkeypatch, scenario, **kwargs)
    _assert_identical(py, c)
    assert py.metrics_full["decisions"] > 1000
    if "trace" not in kwargs and not scenario.network.go_back_n:  # counted runs keep the Python end (replay with counts)
        assert c_ends > 100


def test_the_lossy_scenarios_drop_and_mark(monkeypatch):
    (_, c), _ = _both(monkeypatch, SCENARIOS["trace-counts"][0], **SCENARIOS["trace-counts"][1])
    assert c.metrics_full["drops_per_flow"] > 0 and c.trace.cnp_count.sum() > 0


def test_np_sum_is_numpys_sum():
    """``path_post``'s queue sums (the fast path's buffer checks, the series) are numpy's pairwise sums."""
    rng = np.random.default_rng(11)
    for n in [0, 1, 7, 8, 9, 127, 128, 129, 130, 255, 257, 1000, 4099]:
        for _ in range(20):
            a = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 12, n)
            assert _bits(np_sum(a)) == _bits(float(a.sum())), n
