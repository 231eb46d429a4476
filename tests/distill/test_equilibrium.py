"""Ramps around the teacher's equilibrium: the fixed point, the slopes, and a student whose trees
never split inside a ramp's interval (rlcc.distill.equilibrium, rlcc.distill.fit).

Oracles: the teacher itself (its factor at the found fixed point), known slopes of a synthetic
piecewise-linear target, treelite GTIL for the tree part plus the ramp formula written out here,
and CatBoost's own prediction of the exported JSON for the trees."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlcc import features as vocab
from rlcc.distill import equilibrium
from rlcc.distill.fit import FitConfig, fit_student
from rlcc.distill.sampling import float_inputs
from rlcc.distill.treelite_ref import gtil_predict
from rlcc.fxp.quantize import device_scaled, input_affine, integer_ramp
from rlcc.fxp import golden
from rlcc.policy import OnnxPolicy
from rlcc.tree_ir import FloatRamp, from_catboost_json


@pytest.fixture(scope="module")
def policy(example_policy):
    return OnnxPolicy(example_policy)


def test_a_teacher_crossing_one_several_times_gets_its_first_downward_crossing(policy):
    """Factor above 1 until 2.0x base RTT, below until 2.4x, above again until 3.5x, then below:
    the equilibrium a flow reaches from an empty queue is 2.0x, not the crossing at 3.5x (where a
    plain bisection over the whole range lands)."""
    spec, base = policy.spec, policy.spec.reward.base_rtt_ns
    rtt_index = spec.input_index(0, spec.feature_names.index("delta"))

    def teacher(obs):
        delta = np.asarray(obs[:, rtt_index], np.float64) / 10.0  # scale 10 in the example's spec
        infl = spec.reward.beta + (spec.reward.target - delta) * 8.0  # fair share 1/64: sqrt = 1/8
        return np.where(infl < 2.0, 1.05, np.where(infl < 2.4, 0.95, np.where(infl < 3.5, 1.05, 0.9)))

    eq = equilibrium.find(teacher, spec)
    assert eq.rtt_ns / base == pytest.approx(2.0, rel=1e-6)


def test_fixed_point_is_where_the_teacher_answers_one(policy):
    eq = equilibrium.find(policy.factor, policy.spec)
    assert eq.reason == "" and eq.rtt_ns is not None
    spec = policy.spec
    window = lambda rtt: float_inputs(spec, equilibrium._window(spec, np.array([rtt])))  # noqa: E731
    assert float(policy.factor(window(eq.rtt_ns))[0]) >= 1.0 > float(policy.factor(window(eq.rtt_ns * (1 + 1e-9)))[0])
    # one ramp per input of the two newest steps whose feature declares an interval
    want = sorted(spec.input_index(ago, f) for ago in range(2) for f, feat in enumerate(spec.features)
                  if vocab.get(feat.name).equilibrium_half_width is not None)
    assert [s.input for s in eq.sites] == want
    for s in eq.sites:
        feat = spec.features[s.input % spec.n_features]
        assert s.half_width == pytest.approx(abs(feat.scale) * vocab.get(feat.name).equilibrium_half_width(spec.reward))
        assert s.center == pytest.approx(float(eq.obs[s.input]))


def test_no_fixed_point_no_ramps(policy):
    eq = equilibrium.find(lambda x: np.full(len(x), 1.1), policy.spec)
    assert eq.sites == () and "does not cross 1" in eq.reason
    assert eq.ramps(lambda x: np.ones(len(x)), 0) == ()


def test_fit_ramps_recovers_known_slopes():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (5000, 3)).astype(np.float32)
    sites = (equilibrium.RampSite(0, 0.1, 0.5), equilibrium.RampSite(2, -0.2, 0.3))
    d0 = np.clip(x[:, 0].astype(np.float64), -0.4, 0.6) - 0.1
    d2 = np.clip(x[:, 2].astype(np.float64), -0.5, 0.1) + 0.2
    y = 1.0 + np.where(d0 < 0, 0.3 * d0, -0.7 * d0) + np.where(d2 < 0, 0.05 * d2, 1.5 * d2)
    ramps = equilibrium.fit_ramps(x, y, sites)
    got = [v for r in ramps for v in (r.slope_below, r.slope_above)]
    assert got == pytest.approx([0.3, -0.7, 0.05, 1.5], abs=1e-6)
    assert [v for r in ramps for v in (r.lo, r.center, r.hi)] == pytest.approx([-0.4, 0.1, 0.6, -0.5, -0.2, 0.1], rel=1e-7)


def test_slopes_come_from_the_closed_loop_samples_in_the_box(policy):
    """Samples in the box carry a known piecewise-linear label (weighted: the heavy half has the
    slopes, the light half noise-free other slopes); samples outside the box carry garbage that
    must not matter. Too few inside: the uniform fallback (teacher-labelled) is used instead."""
    spec = policy.spec
    eq = equilibrium.find(policy.factor, spec)
    rng = np.random.default_rng(5)
    n = 4000
    obs = np.repeat(eq.obs[None, :].astype(np.float32), n, axis=0)
    for s in eq.sites:
        obs[:, s.input] = s.center + rng.uniform(-0.99, 0.99, n) * s.half_width
    outside = rng.random(n) < 0.3
    obs[outside, eq.sites[0].input] += 3 * eq.sites[0].half_width
    assert np.array_equal(eq.in_box(obs), ~outside)
    d = {s.input: obs[:, s.input].astype(np.float64) - s.center for s in eq.sites}
    slopes = {s.input: (0.1 * (k + 1), -0.05 * (k + 1)) for k, s in enumerate(eq.sites)}
    label = 1.0 + sum(np.where(d[j] < 0, lo * d[j], hi * d[j]) for j, (lo, hi) in slopes.items())
    label[outside] = 7.0
    ramps = eq.ramps(lambda x: np.full(len(x), 7.0), 0, obs, label, np.where(rng.random(n) < 0.5, 10.0, 1.0))
    got = [v for r in ramps for v in (r.slope_below, r.slope_above)]
    assert got == pytest.approx([v for s in eq.sites for v in slopes[s.input]], abs=1e-5)
    few = eq.in_box(obs) & (np.cumsum(eq.in_box(obs)) <= equilibrium.MIN_LOOP_SAMPLES - 1)
    fallback = eq.ramps(policy.factor, 0, obs[few], label[few])
    assert fallback == eq.ramps(policy.factor, 0)  # the uniform, teacher-labelled fit


@pytest.fixture(scope="module")
def ramped():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4000, 3)).astype(np.float32)
    y = 1.0 + 0.1 * np.tanh(2 * x[:, 0] - x[:, 1]) + 0.02 * x[:, 2]
    ramps = equilibrium.fit_ramps(x, y, (equilibrium.RampSite(0, 0.0, 0.5), equilibrium.RampSite(1, 0.2, 0.25)))
    return x, y, ramps, fit_student(x, y, FitConfig(trees=10, depth=4), leaf_weights=np.ones(len(y)), ramps=ramps)


def test_trees_never_split_inside_a_ramp_interval(ramped):
    _, _, ramps, result = ramped
    e = result.ensemble
    assert e.ramps == ramps and len(e.trees) == 10
    inside = [(t, s) for t in e.trees for s in t.splits for r in ramps if s.input == r.input and r.lo < s.border < r.hi]
    assert inside == []
    assert any(s.input == r.input for t in e.trees for s in t.splits for r in ramps)  # they split outside
    assert e.n_operations == 50 + 5 * len(ramps)


def test_student_is_trees_plus_ramps(ramped, tmp_path):
    """Trees: treelite GTIL and CatBoost's own prediction of the JSON; ramps: the formula."""
    import catboost

    x, _, ramps, result = ramped
    e = result.ensemble
    path = tmp_path / "cb.json"
    path.write_text(result.catboost_json)
    cb = catboost.CatBoostRegressor()
    cb.load_model(str(path), format="json")
    v = x.astype(np.float64)
    ramp_terms = sum(np.where(v[:, r.input] < r.center, r.slope_below * (np.maximum(v[:, r.input], r.lo) - r.center),
                              r.slope_above * (np.minimum(v[:, r.input], r.hi) - r.center)) for r in ramps)
    np.testing.assert_allclose(e.predict(x), gtil_predict(e.trees_only(), x, "float64") + ramp_terms, rtol=0, atol=1e-12)
    np.testing.assert_allclose(e.trees_only().predict(x), cb.predict(x), rtol=0, atol=1e-12)
    assert from_catboost_json(json.loads(result.catboost_json), 3, ramps) == e
    with pytest.raises(ValueError, match="trees only"):
        gtil_predict(e, x)


def test_ramps_make_the_fit_linear_inside_the_box(ramped):
    """Inside the box the student's trees are constant on the ramp inputs (no borders there), so
    moving a ramp input inside its interval changes the output by exactly the ramp's slope."""
    x, _, ramps, result = ramped
    e, r = result.ensemble, ramps[0]
    row = np.tile(np.array([[0.0, 0.2, 0.0]], dtype=np.float32), (2, 1))
    row[0, r.input], row[1, r.input] = r.center + 0.1, r.center + 0.3
    step = float(row[1, r.input]) - float(row[0, r.input])  # the float32 inputs' difference
    assert e.predict(row)[1] - e.predict(row)[0] == pytest.approx(step * r.slope_above, abs=1e-12)


def test_quantized_ramp_tracks_the_float_ramp(policy):
    """Every device integer of the interval (and beyond): the fixed term is within the rounding
    budget of the float ramp at the value the integer stands for: 1 LSB of truncation, half a step
    of k over the longer side, half a device unit of knot rounding at the steeper slope."""
    spec = policy.spec
    eq = equilibrium.find(policy.factor, spec)
    for fr in eq.ramps(policy.factor, 0):
        r = integer_ramp(spec, fr)
        q = np.arange(r.lo - 50, r.hi + 51, dtype=np.int64)
        v = device_scaled(q, *input_affine(spec, fr.input))
        want = FloatRamp(0, fr.lo, fr.center, fr.hi, fr.slope_below, fr.slope_above).value(v[:, None]) * 65536
        got = golden.ramp_value(golden.NUMPY, r, q)
        span, steep = max(r.center - r.lo, r.hi - r.center), max(abs(r.k_below), abs(r.k_above))
        budget = 1 + 0.5 * span / 2**r.shift + 0.5 * steep / 2**r.shift + 1e-6
        assert float(np.max(np.abs(got - want))) <= budget, (fr, r)
        assert (r.center - r.lo).bit_length() - 1 >= r.shift  # a one-off k edit moves an end by >= 1 LSB


@pytest.mark.slow
def test_the_compiled_pair_answers_the_teacher_exactly_at_its_fixed_point(policy, tmp_path):
    """The pin (``equilibrium.pin``): at the teacher's fixed point the fixed-point model gives the
    teacher's factor to the LSB at the device's integer inputs, for the fair share of every gate
    flow count (the window is the same: delta 0, previous factor 1); the float ensemble and the
    CatBoost JSON carry the same bias (the JSON's own prediction agrees)."""
    import catboost

    from rlcc import formats as fmt
    from rlcc.distill.pipeline import CompileOptions, compile_policy
    from rlcc.distill.sampling import RATE, RTT, device_inputs

    options = CompileOptions.quick(samples=1500, scenarios="many-to-one:2:8,many-to-one:16:12")
    result = compile_policy(policy, options, measure=False)
    info = result.model.provenance["pinned_at_fixed_point"]
    assert info["fixed_shift_lsb"] != 0  # the fit alone missed the center
    spec, student, r = policy.spec, result.model.spec, policy.spec.reward
    for n in options.eval_flows + (512, 2048):
        raw = equilibrium._window(spec, np.array([1.0]))
        raw[:, :, RATE] = 1.0 / n
        raw[:, :, RTT] = np.rint((r.beta + r.target * np.sqrt(n)) * r.base_rtt_ns)
        want = float(policy.factor(float_inputs(spec, raw))[0])
        total = int(golden.eval_trees(result.model, device_inputs(student, raw))[0][0])
        assert abs(total - want * fmt.FACTOR_ONE) <= 1.0, n  # the teacher's own factor there is 1 +- float noise
    eq = equilibrium.find(policy.factor, spec)
    star = student.student_obs(float_inputs(spec, equilibrium._window(spec, np.array([eq.rtt_ns]))))
    assert result.ensemble.predict(star)[0] == pytest.approx(info["teacher_factor"], abs=1e-9)
    cb = catboost.CatBoostRegressor()
    path = tmp_path / "catboost.json"
    path.write_text(result.fit.catboost_json)
    cb.load_model(str(path), format="json")
    x = star.astype(np.float32)
    assert float(cb.predict(x)[0]) == pytest.approx(float(result.ensemble.trees_only().predict(x)[0]), abs=1e-6)
