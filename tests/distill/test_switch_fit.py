"""The switch-agent classifier: exact integer thresholds and the integer golden model against
treelite GTIL and CatBoost on the same (normalized float32) inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlcc.kinds.switch_agent.fit import ABSENT_SCORE, ClassifierBudget, fit_classifier, integer_threshold
from rlcc.distill.treelite_ref import multiclass_to_treelite
from rlcc.fxp import switch_agent as fx
from rlcc.switch_spec import SwitchAgentSpec, paper_templates

SPEC = SwitchAgentSpec(actions=paper_templates())


def random_windows(n: int, rng: np.random.Generator) -> np.ndarray:
    cols = []
    for vmax in np.tile(SPEC.feature_max(), SPEC.history):
        hi = min(int(vmax), 4_000_000)  # queue depths of a few MB: where the thresholds live
        cols.append(rng.integers(0, hi + 1, n))
    return np.stack(cols, axis=1).astype(np.int64)


def rule(w: np.ndarray) -> np.ndarray:
    """A teacher that reads the newest interval: deep queue -> shallow template, busy link -> deep."""
    q, u, m = w[:, 8], w[:, 9], w[:, 10]
    return np.where(q > 300_000, 2, np.where(m > 4000, 3, np.where(u > 60_000, 6, np.where(q > 50_000, 4, 1))))


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    w = random_windows(20_000, rng)
    return w, fit_classifier(SPEC, w, rule(w), seed=0)


def test_integer_threshold_is_exact_against_brute_force():
    rng = np.random.default_rng(1)
    for scale, vmax in ((1 / 1_000_000, 5_000_000), (1 / 65536, 65536), (1 / 7, 7)):
        v = np.arange(vmax + 1)
        x = (v * scale).astype(np.float32)
        for border in np.concatenate([rng.uniform(-0.1, vmax * scale * 1.1, 40), x[rng.integers(0, len(x), 20)]]):
            t = integer_threshold(float(border), scale, vmax)
            expected = np.flatnonzero(x <= np.float32(border))
            assert t == (expected.max() if len(expected) else -1)


def test_fit_is_deterministic_and_within_budget(fitted):
    w, r = fitted
    again = fit_classifier(SPEC, w, rule(w), seed=0)
    assert again.model == r.model and again.catboost_json == r.catboost_json
    assert len(r.model.trees) <= 10 and r.model.max_depth <= 4
    assert r.float_agreement > 0.95


def test_golden_matches_treelite_gtil_and_catboost(fitted, tmp_path):
    w, r = fitted
    rng = np.random.default_rng(2)
    # Windows straddling every split threshold (t, t + 1) of the input it reads.
    probe = random_windows(4000, rng)
    splits = [s for t in r.model.trees for s in t.splits if s.threshold >= 0]
    for k, s in enumerate(splits):
        probe[2 * k % len(probe), s.input] = s.threshold
        probe[(2 * k + 1) % len(probe), s.input] = s.threshold + 1
    data = json.loads(r.catboost_json)
    x = SPEC.normalize(probe)
    import treelite

    ref = np.asarray(treelite.gtil.predict(multiclass_to_treelite(data, SPEC.input_width), x, nthread=1),
                     np.float64).reshape(len(x), -1)
    ours = fx.scores(r.model, probe)[:, list(r.present)] / float(1 << r.model.leaf_frac_bits)
    bound = (len(r.model.trees) + 1) * 0.5 / (1 << r.model.leaf_frac_bits) + 1e-5 * (1 + np.abs(ref).max())
    assert np.abs(ours - ref).max() <= bound
    top2 = np.sort(ref, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 2 * bound
    present = np.asarray(r.present)
    assert np.array_equal(fx.decide(r.model, probe)[clear], present[np.argmax(ref, axis=1)][clear])
    assert clear.mean() > 0.99
    # CatBoost itself agrees with GTIL (the reference is the model CatBoost fitted).
    import catboost

    (tmp_path / "m.json").write_text(r.catboost_json)
    clf = catboost.CatBoostClassifier()
    clf.load_model(str(tmp_path / "m.json"), format="json")
    assert np.allclose(clf.predict(x, prediction_type="RawFormulaVal"), ref, atol=1e-4)


def test_absent_classes_are_never_chosen(fitted):
    w, r = fitted
    absent = sorted(set(range(SPEC.n_actions)) - set(r.present))
    assert absent and all(r.model.bias[c] == ABSENT_SCORE for c in absent)
    assert not np.isin(fx.decide(r.model, random_windows(5000, np.random.default_rng(3))), absent).any()


def test_constant_teacher_gives_no_trees():
    w = random_windows(100, np.random.default_rng(4))
    r = fit_classifier(SPEC, w, np.full(100, 5), budget=ClassifierBudget())
    assert r.model.trees == () and fx.decide(r.model, w).tolist() == [5] * 100
