"""The C block loop of one-port runs (``rlcc.simulator.kernel``) against its Python twin
(``BlockLoop.use_kernel = False``, blocks.py ``_block``): every output bit-identical, on the
paths the kernel has (steady and line-rate starts, NIC oversubscription rebases, drops, zero and
multi-block decision latency, short blocks, subsampled queues, staggered starts, traces and
CNP/NACK counts, the distillation recorder, controllers without a spec or returning plain
rates), and the fused policy decision against the numpy operations it replaces."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from rlcc.simulator import (
    LongShort, ManyToOne, Network, PolicyController, TraceConfig, callable_controller, make_controller, simulate,
)
from rlcc.simulator import engine
from rlcc.simulator._fluidcore import Kernel, policy_rates
from rlcc.simulator.blocks import BlockLoop
from rlcc.simulator.controllers.base import DecisionBatch
from rlcc.simulator.controllers.factor import ACTION_MODES, rows_decider
from rlcc.simulator.scenarios import FlowTable
from rlcc.simulator.suite import load_firmware
from rlcc import features as vocab
from rlcc.simulator import kernel
from rlcc.spec import Action, Feature, ObservationSpec, RateLimits, Reward
from sim_identity import assert_runs_identical as _assert_bit_identical, bits as _bits

ROOT = Path(__file__).resolve().parents[2]
ZOO = str(ROOT / "examples" / "zoo" / "adpg_k2_bias8x8.onnx")
SYNTHETIC = str(ROOT / "examples" / "synthetic_mlp.onnx")


def _both(monkeypatch, scenario, make_ctl, **kwargs):
    """The run with the Python blocks, then with the kernel (asserted to be used); also every
    per-flow array and fabric value at the end bit-identical (not only what the outputs show)."""
    used, states = [], []
    real, real_run = BlockLoop._block_kernel, engine._Run.run

    def spy(self, s, e):
        used.append(e - s)
        return real(self, s, e)

    def keep(self, *args):
        real_run(self, *args)
        states.append(self)

    monkeypatch.setattr(BlockLoop, "_block_kernel", spy)
    monkeypatch.setattr(engine._Run, "run", keep)
    runs = []
    for use in (False, True):
        monkeypatch.setattr(BlockLoop, "use_kernel", use)
        runs.append(simulate(scenario, make_ctl(), **kwargs))
        assert bool(used) == use
    py, c = states
    for f in dataclasses.fields(py.flows):
        assert _bits(getattr(py.flows, f.name)) == _bits(getattr(c.flows, f.name)), f"flows.{f.name}"
    for name in ("g0", "group_scale", "ref", "group_rate", "port_load", "_q", "_d", "_m", "time", "offered", "dropped",
                 "delivered"):
        assert _bits(getattr(py.fabric, name)) == _bits(getattr(c.fabric, name)), f"fabric.{name}"
    assert _bits(py.q_samples) == _bits(c.q_samples) and _bits(py.rtt_stats) == _bits(c.rtt_stats)
    return runs


TRACE = TraceConfig(capacity=20_000, stride=2, mode="reservoir", seed=3)


class _Staggered(LongShort):
    """Infinite flows starting mid-run (not on block boundaries)."""

    def flow_table(self) -> FlowTable:
        t = super().flow_table()
        starts = t.start_ns.copy()
        starts[1:] += np.arange(len(starts) - 1) * 3333.3
        return FlowTable(t.host, t.port, starts, np.full(len(starts), np.inf), t.n_hosts, 1)


SCENARIOS = {
    "steady": (ManyToOne(flows=64, duration_ms=2.0, seed=1, initial_rate=1 / 64), None),
    "startup-oversubscribed-nics": (ManyToOne(flows=96, hosts=6, duration_ms=2.0, seed=2), None),
    "drops": (ManyToOne(flows=16, duration_ms=1.5, seed=5, network=Network(buffer_bytes=150_000)), TRACE),
    "latency0": (ManyToOne(flows=32, duration_ms=1.5, seed=6, initial_rate=1 / 32, decision_latency_us=0.0), TRACE),
    "latency-over-blocks": (ManyToOne(flows=32, duration_ms=1.5, seed=7, initial_rate=1 / 32, decision_latency_us=21.0),
                            TRACE),
    "staggered-starts": (_Staggered(short_flows=12, bursts=2, burst_interval_us=100, duration_ms=1.5, burst_start_frac=0.2,
                                    network=Network(buffer_bytes=400_000)), TRACE),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_kernel_runs_bit_identical_to_the_python_blocks(monkeypatch, name):
    scenario, trace = SCENARIOS[name]
    a, b = _both(monkeypatch, scenario, lambda: make_controller("policy", ZOO), trace=trace)
    assert a.metrics_full["decisions"] > 0
    _assert_bit_identical(a, b)


@pytest.mark.parametrize("block_steps", [1, 3])
def test_kernel_with_short_blocks_and_subsampled_queues(monkeypatch, block_steps):
    monkeypatch.setattr(engine, "MAX_QUEUE_SAMPLES", 97)
    sc = ManyToOne(flows=24, duration_ms=1.0, seed=8, initial_rate=1 / 24)
    a, b = _both(monkeypatch, sc, lambda: make_controller("policy", SYNTHETIC), trace=TRACE, block_steps=block_steps)
    _assert_bit_identical(a, b)


def test_kernel_progress_matches(monkeypatch):
    sc = ManyToOne(flows=8, duration_ms=3.3, seed=1, initial_rate=1 / 8)
    calls = {}
    for use in (False, True):
        monkeypatch.setattr(BlockLoop, "use_kernel", use)
        seen: list[int] = []
        simulate(sc, make_controller("policy", SYNTHETIC), progress=seen.append)
        calls[use] = seen
    assert calls[True] == calls[False] and sum(calls[True]) == 3300


@pytest.mark.parametrize("order", ["oldest_first", "newest_first"])
@pytest.mark.parametrize("history", [1, 3])
@pytest.mark.parametrize("returns", ["rates", "float32-factors"])
def test_kernel_windows_and_controller_outputs(monkeypatch, order, history, returns):
    """Window shifts of both step orders (and W == F), a controller that returns plain rates
    (factor = new / rate in C) or factors of another dtype (cast as ``record_decision`` does)."""
    spec = ObservationSpec(
        features=(Feature("rtt_inflation", scale=0.5, offset=-1.0), Feature("rate"), Feature("prev_action")),
        history=history, step_order=order, rate=RateLimits(initial=1.0 / 24),
        action=Action(type="factor", clamp_min=0.8, clamp_max=1.25),
    )

    class Ctl:
        batchable = True
        initial_rate = 1.0 / 24
        name = "test"

        def __init__(self):
            self.spec = spec

        def reset(self, *args):
            pass

        def decide(self, batch: DecisionBatch):
            f = np.exp(-0.05 * batch.obs.astype(np.float64).sum(axis=1) + 0.01)
            if returns == "rates":
                return batch.rate * f
            from rlcc.simulator import Decision

            return Decision(batch.rate * f, f.astype(np.float32))

    sc = ManyToOne(flows=24, duration_ms=1.0, seed=9)
    a, b = _both(monkeypatch, sc, Ctl, trace=TraceConfig(capacity=100_000))
    _assert_bit_identical(a, b)


@pytest.mark.parametrize("reward", [Reward(), Reward(target=0.3, beta=4.0, base_rtt_ns=6000)])
def test_native_features_equal_the_vocabulary_formulas(monkeypatch, reward):
    """The step features the kernel computes in C against blocks.py's numpy features (the
    vocabulary's ``float_value``), every one the kernel has, scaled and offset."""
    assert set(kernel.FEATURE_CODES) <= set(vocab.known())
    spec = ObservationSpec(
        features=tuple(Feature(name, scale=[1.0, 0.5, 10.0, 3.0][i], offset=[-1.0, 0.0, 0.25, -0.5][i])
                       for i, name in enumerate(kernel.FEATURE_CODES)),
        history=2, reward=reward, rate=RateLimits(initial=1.0 / 24), action=Action(type="factor", clamp_min=0.7, clamp_max=1.3),
    )
    fn = lambda x: np.exp(0.04 * np.tanh(x.astype(np.float64)).sum(axis=1) - 0.01)  # noqa: E731  row-wise
    sc = ManyToOne(flows=24, duration_ms=1.5, seed=3)
    runs = []
    for codes, use in ((kernel.FEATURE_CODES, True), ({}, True), ({}, False)):  # C, numpy features; Python blocks
        monkeypatch.setattr(kernel, "FEATURE_CODES", codes)
        monkeypatch.setattr(BlockLoop, "use_kernel", use)
        run = engine._Run(sc, callable_controller(fn, spec), TraceConfig(capacity=100_000))
        run.run()
        assert (getattr(run, "_kernel", None) is not None) == use
        runs.append(run)
    assert runs[0]._kernel.native_features and not runs[1]._kernel.native_features
    assert runs[0].recorder.size > 100
    for run in runs[1:]:  # the windows keep the float64 features (the policy sees them as float32)
        for f in dataclasses.fields(run.flows):
            assert _bits(getattr(run.flows, f.name)) == _bits(getattr(runs[0].flows, f.name)), f.name
        assert _bits(run.recorder.result().obs) == _bits(runs[0].recorder.result().obs)


def test_kernel_with_the_firmware_controller(monkeypatch):
    """A controller without a spec (no windows): the compiled firmware's golden model."""
    sc = ManyToOne(flows=16, duration_ms=1.0, seed=3, initial_rate=1 / 16)
    a, b = _both(monkeypatch, sc, lambda: load_firmware(str(ROOT / "examples" / "firmware")), trace=TRACE)
    _assert_bit_identical(a, b)


def test_kernel_feeds_the_recorder_the_same_counts(monkeypatch):
    """Distillation sampling: the recorder's reservoir (windows with block CNP/NACK counts)."""
    from rlcc.distill.sampling import Recorder
    from rlcc.policy import OnnxPolicy

    p = OnnxPolicy(ZOO)
    sc = ManyToOne(flows=16, duration_ms=1.5, seed=5, network=Network(buffer_bytes=150_000))
    recs = []
    for use in (False, True):
        monkeypatch.setattr(BlockLoop, "use_kernel", use)
        rec = Recorder(PolicyController(p), p.spec, 3000, seed=4, teacher=p)
        simulate(sc, rec)
        recs.append(rec)
    a, b = recs
    assert a.size == b.size > 0 and a.raw[: a.size, :, 3:].any()  # CNP/NACK counts were recorded
    for key in ("obs", "raw", "flow", "label"):
        assert _bits(getattr(a, key)) == _bits(getattr(b, key)), key


# ---- the fused policy decision -----------------------------------------------------------------
EDGES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-300, -1e-300, 1e300, -1e300, np.inf, -np.inf, np.nan,
                  4.0, -4.0, 0.999999, -0.999999, 1.25, 0.8])


@pytest.mark.parametrize("action", [
    Action(), Action(map="linear"), Action(type="factor"), Action(gain=0.35, clamp_min=0.5, clamp_max=2.0),
    Action(map="linear", gain=0.9, clamp_min=0.9, clamp_max=1.1),
])
def test_policy_rates_equal_the_numpy_operations(action):
    spec = ObservationSpec(features=(Feature("delta"),), action=action)
    rng = np.random.default_rng(0)
    y = np.concatenate([EDGES, rng.normal(0.0, 1.0, 500), rng.uniform(-5, 5, 200)])
    rate = np.concatenate([np.full(len(EDGES), 0.3), rng.uniform(0.0, 1.2, 700)])
    rate[:3] = [0.0, 1e-12, 5.0]
    mode = ACTION_MODES["factor"] if action.type == "factor" else ACTION_MODES[action.map]
    for m, want_f in ((mode, spec.output_to_factor(y)), (0, y)):
        factors, rates = np.empty(len(y)), np.empty(len(y))
        policy_rates(y, rate, m, action.gain, action.clamp_min, action.clamp_max, spec.rate.min, factors, rates)
        want_r = np.clip(rate * want_f, spec.rate.min, 1.0)
        assert _bits(factors) == _bits(want_f)
        assert _bits(rates) == _bits(want_r)


def test_policy_controller_decides_like_its_policy():
    p = PolicyController(ZOO)
    rng = np.random.default_rng(1)
    n = 300
    obs = rng.normal(0.0, 0.5, (n, p.spec.input_width)).astype(np.float32)
    rate = rng.uniform(1e-5, 1.0, n)
    batch = DecisionBatch(np.arange(n), np.zeros(n), np.full(n, 8000), rate, None, None, np.zeros(n, bool), obs)
    out = p.decide(batch)
    factors = p.policy.factor(obs)
    assert _bits(out.factors) == _bits(factors)
    assert _bits(out.rates) == _bits(np.clip(rate * factors, p.spec.rate.min, 1.0))


def test_decide_rows_equal_decide_and_only_for_the_plain_policy():
    """The block loop's batch-free call (``decide_rows``) gives ``decide``'s values; a subclass that
    overrides ``decide`` (it may read the batch) keeps the batch path."""
    p = PolicyController(ZOO)
    rng = np.random.default_rng(2)
    n = 257
    obs = rng.normal(0.0, 0.7, (n, p.spec.input_width)).astype(np.float32)
    rate = rng.uniform(1e-5, 1.0, n)
    out = p.decide(DecisionBatch(np.arange(n), np.zeros(n), np.full(n, 8000), rate, None, None, np.zeros(n, bool), obs))
    factors, rates = np.full(n, np.nan), np.full(n, np.nan)
    rows = rows_decider(p)
    assert rows is not None
    rows(obs, rate, factors, rates)
    assert _bits(factors) == _bits(out.factors) and _bits(rates) == _bits(out.rates)

    class Own(PolicyController):
        def decide(self, batch):
            return super().decide(batch)

    assert rows_decider(Own(ZOO)) is None
    assert rows_decider(object()) is None


def test_kernel_rejects_wrong_arrays():
    with pytest.raises(ValueError, match="Kernel needs"):
        Kernel((), (1, 1, 1, 0, 0, 1, 0, 1), (1.0,) * 9 + (0, 1, 1, 1, 0, False))
    with pytest.raises(ValueError, match="mode"):
        z = np.zeros(2)
        policy_rates(z, z, 7, 0.2, 0.8, 1.25, 1e-4, np.empty(2), np.empty(2))
    with pytest.raises(ValueError, match="float64"):
        policy_rates(np.zeros(2, np.float32), np.zeros(2), 3, 0.2, 0.8, 1.25, 1e-4, np.empty(2), np.empty(2))


def test_kernel_refuses_a_fabric_whose_arrays_were_replaced():
    """Block mode updates the fabric's per-group arrays in place; a rebound array would be stale."""
    run = engine._Run(ManyToOne(flows=4, duration_ms=0.1), make_controller("policy", SYNTHETIC), None)
    bk = kernel.BlockKernel(run)
    bk.check_fabric(run.fabric)
    run.fabric.g0 = run.fabric.g0.copy()
    with pytest.raises(RuntimeError, match="replaced"):
        bk.check_fabric(run.fabric)
