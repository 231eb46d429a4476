"""Sampling records exact windows; the golden controller runs the fixed-point model closed loop."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rlcc import formats as fmt
from rlcc.distill import sampling
from rlcc.distill.fit import fit_student
from rlcc.distill.sampling import closed_loop, float_inputs, parse_scenarios, perturb, split_holdout
from rlcc.errors import BadInputError
from rlcc.fxp import golden
from rlcc.simulator.controllers.compiled import FloatTreesController, GoldenController
from rlcc.fxp.quantize import device_inputs_to_float, quantize
from rlcc.policy import OnnxPolicy
from rlcc.simulator.controllers import FactorController
from rlcc.simulator.controllers.base import DecisionBatch
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import ManyToOne


@pytest.fixture(scope="module")
def teacher(example_policy):
    return OnnxPolicy(example_policy)


@pytest.fixture(scope="module")
def visited(teacher):
    sc = parse_scenarios("many-to-one:2:10,many-to-one:32:30,long-short:4:8")
    return closed_loop(lambda: FactorController(teacher.factor, teacher.spec), teacher.factor, teacher.spec, sc, 3000, 0)


def test_raw_windows_reproduce_the_engine_inputs_exactly(teacher, visited):
    assert len(visited) > 1000
    np.testing.assert_array_equal(float_inputs(teacher.spec, visited.raw), visited.obs)
    np.testing.assert_array_equal(visited.label, teacher.factor(visited.obs))
    assert set(np.unique(visited.scenario)) == {0, 1, 2}


def test_device_inputs_follow_golden_formats(teacher, visited):
    q = visited.device_inputs(teacher.spec)
    approx = device_inputs_to_float(teacher.spec, q)
    # the device's integer features stand for nearly the same scaled values as the float ones
    assert np.max(np.abs(approx - visited.obs)) < 1e-3 * max(1.0, np.abs(visited.obs).max())


def test_perturbation_stays_consistent(teacher, visited):
    tail = perturb(visited, teacher.factor, teacher.spec, 500, seed=3)
    np.testing.assert_array_equal(float_inputs(teacher.spec, tail.raw), tail.obs)
    np.testing.assert_array_equal(tail.label, teacher.factor(tail.obs))
    a = teacher.spec.action
    assert np.all((tail.raw[..., sampling.PREV] >= a.clamp_min) & (tail.raw[..., sampling.PREV] <= a.clamp_max))
    assert not np.array_equal(tail.obs, visited.obs[:500])


def test_holdout_is_whole_flows(visited):
    train, held = split_holdout(visited, 0.3, 0)
    assert len(train) + len(held) == len(visited) and len(held) > 0
    key = lambda s: set(zip(s.scenario.tolist(), s.flow.tolist()))  # noqa: E731
    assert not key(train) & key(held)


def test_sampling_is_deterministic(teacher, visited):
    sc = parse_scenarios("many-to-one:2:10,many-to-one:32:30,long-short:4:8")
    again = closed_loop(lambda: FactorController(teacher.factor, teacher.spec), teacher.factor, teacher.spec, sc, 3000, 0)
    np.testing.assert_array_equal(again.obs, visited.obs)
    np.testing.assert_array_equal(again.raw, visited.raw)


@pytest.mark.parametrize("text", ["", "many-to-one", "many-to-one:x", "ring:4", "many-to-one:0", "all-to-all:4:-1"])
def test_bad_scenarios(text):
    with pytest.raises(BadInputError):
        parse_scenarios(text)


def _batch(ids, t, rtt, rate, cnp, nack, first):
    n = len(ids)
    return DecisionBatch(np.array(ids), np.full(n, float(t)), np.array(rtt, dtype=np.int64), np.array(rate, dtype=np.float64),
                         np.array(cnp, dtype=np.int64), np.array(nack, dtype=np.int64), np.array(first), None)


def test_golden_controller_builds_events_like_the_device(teacher, visited):
    model, _ = quantize(fit_student(visited.obs, visited.label).ensemble, teacher.spec)
    ctl = GoldenController(model, clock_offset_ns=2**32 - 5_000)
    ctl.reset(3, None, np.random.default_rng(0))
    # decision at t=10 us: the device clock has wrapped, the request-send timestamp has not
    d = ctl.decide(_batch([0, 2], 10_000, [9_000, 30_000], [1.0, 1.0], [0, 3], [0, 1], [True, True]))
    ref = np.zeros((2, fmt.CTX_WORDS), np.uint32)
    now = 10_000 + 2**32 - 5_000
    ref[1] = golden.step(model, ref[1:2], golden.make_events([fmt.EVENT_CNP], [now], coalesced=[3])).ctx[0]
    ref[1] = golden.step(model, ref[1:2], golden.make_events([fmt.EVENT_NACK], [now], coalesced=[1])).ctx[0]
    res = golden.step(model, ref, golden.make_events([fmt.EVENT_RTT] * 2, [now] * 2, u0=[now - 9_000, now - 30_000]))
    np.testing.assert_array_equal(ctl.ctx[[0, 2]], res.ctx)
    np.testing.assert_array_equal(d.rates, res.rate / fmt.RATE_ONE)
    assert res.features[1, teacher.spec.input_index(0, 1)] != res.features[0, teacher.spec.input_index(0, 1)]
    assert not ctl.ctx[1].any()


def test_fixed_point_closed_loop_decisions_match_float_trees(teacher, visited):
    """Closed loop under the golden controller: on every visited state the fixed-point factor
    equals the float trees' factor up to leaf rounding (trajectories themselves may diverge)."""
    from rlcc.distill.evaluate import fixed_factor, float_factor
    from rlcc.distill.sampling import Recorder, device_inputs

    ensemble = fit_student(visited.obs, visited.label).ensemble
    model, stats = quantize(ensemble, teacher.spec)
    rec = Recorder(GoldenController(model), teacher.spec, 100_000, seed=0)
    result = simulate(ManyToOne(flows=2, duration_ms=20), rec)
    assert result.metrics_full["decisions"] > 200 and result.metrics_full["goodput"] > 0.9
    raw, obs = rec.raw[: rec.size], rec.obs[: rec.size]
    fx, _ = fixed_factor(model, device_inputs(teacher.spec, raw))
    fl = float_factor(ensemble, teacher.spec, obs)
    assert np.max(np.abs(fx - fl * fmt.FACTOR_ONE)) <= stats.max_accumulated_error_lsb + 1


def test_anchors_are_consistent_and_reach_deep_congestion(teacher):
    spec = teacher.spec
    a = sampling.anchors(spec, teacher.factor, 2000, seed=5)
    np.testing.assert_array_equal(float_inputs(spec, a.raw), a.obs)
    np.testing.assert_array_equal(a.label, teacher.factor(a.obs))
    assert np.all(a.origin == sampling.ORIGIN_ANCHOR)
    act = spec.action
    prev = a.raw[..., sampling.PREV]
    assert np.all((prev >= act.clamp_min) & (prev <= act.clamp_max)) and np.any(prev == act.clamp_min)
    infl = a.raw[..., sampling.RTT] / spec.reward.base_rtt_ns
    assert infl.max() > 200 and infl.min() >= 1.0  # up to a full 32 MB buffer at 100 Gb/s
    persisting = a.raw[:, 0, sampling.RTT] == a.raw[:, 1, sampling.RTT]
    assert 0.2 < persisting.mean() < 0.5
    again = sampling.anchors(spec, teacher.factor, 2000, seed=5)
    np.testing.assert_array_equal(again.obs, a.obs)


def test_golden_controller_honours_scenario_initial_rate(teacher, visited):
    ensemble = fit_student(visited.obs, visited.label).ensemble
    model, _ = quantize(ensemble, teacher.spec)
    sc = ManyToOne(flows=64, duration_ms=4, initial_rate=1 / 64)
    fixed = simulate(sc, GoldenController(model)).metrics
    trees = simulate(sc, FloatTreesController(ensemble, teacher.spec)).metrics
    print(fixed, trees)
    assert abs(fixed["mean_rtt_inflation"] - trees["mean_rtt_inflation"]) < 0.05 * trees["mean_rtt_inflation"]
    assert abs(fixed["queue_delay_mean_us"] - trees["queue_delay_mean_us"]) < 0.05 * trees["queue_delay_mean_us"] + 1
    # Without the override the device's own initial rate (line rate) is used, as before.
    line = simulate(ManyToOne(flows=64, duration_ms=4), GoldenController(model)).metrics
    print(line)
    assert line["drop_fraction"] > fixed["drop_fraction"] or line["queue_delay_mean_us"] > 1.5 * fixed["queue_delay_mean_us"]


@pytest.mark.slow
@pytest.mark.parametrize("driver", ["teacher", "float_trees", "fixed_point"])
def test_block_mode_samples_and_decides_like_step_by_step(teacher, visited, driver):
    """The compile's controllers run in engine blocks (one call per base RTT of steps); the
    sampler gets each decision's CNP/NACK counts after its block and keeps the same samples, and
    the closed loop makes the same decisions, as the step-by-step loop."""
    from rlcc.distill.sampling import Recorder

    ensemble = fit_student(visited.obs, visited.label).ensemble
    model, _ = quantize(ensemble, teacher.spec)
    make = {"teacher": lambda: FactorController(teacher.factor, teacher.spec),
            "float_trees": lambda: FloatTreesController(ensemble, teacher.spec),
            "fixed_point": lambda: GoldenController(model)}[driver]
    sc = ManyToOne(flows=16, duration_ms=3, seed=3, network=dataclasses.replace(ManyToOne().network, buffer_bytes=60_000))
    runs = []
    for block_steps in (None, 0):
        rec = Recorder(make(), teacher.spec, 400, seed=1)
        runs.append((simulate(sc, rec, block_steps=block_steps), rec))
    (blocked, a), (stepped, b) = runs
    assert a.batchable and a.seen == b.seen > 400
    assert blocked.metrics_full["drop_fraction"] > 0  # NACK counts are exercised
    np.testing.assert_array_equal(a.obs, b.obs)
    np.testing.assert_array_equal(a.raw, b.raw)
    np.testing.assert_array_equal(a.flow, b.flow)
    assert a.raw[..., sampling.NACK].any()
    np.testing.assert_array_equal(blocked.flows["decisions"], stepped.flows["decisions"])
    assert blocked.metrics_full["mean_rtt_inflation"] == pytest.approx(stepped.metrics_full["mean_rtt_inflation"], rel=1e-9)


def test_seeded_context_is_the_context_a_started_flow_gets(teacher, visited):
    """``seeded_context(rate)`` (what the packet-level peer hands the firmware) is the context the
    controller itself writes at a flow's first decision at that start rate; the device's own start
    rate needs no seed."""
    ensemble = fit_student(visited.obs, visited.label).ensemble
    model, _ = quantize(ensemble, teacher.spec)
    ctl = GoldenController(model)
    ctl.reset(3, ManyToOne(flows=3).network, np.random.default_rng(0))
    ids = np.arange(3, dtype=np.int64)
    rates = np.array([1 / 8, 0.3, model.constants.rate_initial / fmt.RATE_ONE])
    ctl._seed_initial_rates(ids, DecisionBatch(ids, np.zeros(3), np.full(3, 8000), rates, None, None,
                                               np.ones(3, bool), None))
    assert np.array_equal(ctl.seeded_context(1 / 8), ctl.ctx[0]) and ctl.ctx[0, fmt.CTX_RATE] == fmt.RATE_ONE // 8
    assert np.array_equal(ctl.seeded_context(0.3), ctl.ctx[1])
    assert ctl.seeded_context(float(rates[2])) is None and not ctl.ctx[2].any()
