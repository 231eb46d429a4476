"""CatBoost, the rlcc float tree IR and treelite GTIL agree on float32 inputs, borders included."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlcc.distill.fit import FitConfig, fit_student
from rlcc.tree_ir import FloatEnsemble, FloatSplit, FloatTree, from_catboost_json
from rlcc.distill.treelite_ref import gtil_predict
from rlcc.errors import BadInputError


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4000, 5)).astype(np.float32)
    x[:, 4] = 0.25  # a zero-variance column: CatBoost never splits on it
    y = 1.0 + 0.1 * np.tanh(2 * x[:, 0] - x[:, 1]) + 0.05 * (x[:, 2] > 0.3) * x[:, 3]
    return x, y, fit_student(x, y, FitConfig(trees=10, depth=4))


def catboost_model(text: str, tmp_path):
    import catboost

    path = tmp_path / "cb.json"
    path.write_text(text)
    model = catboost.CatBoostRegressor()
    model.load_model(str(path), format="json")
    return model


def border_inputs(ensemble: FloatEnsemble, base: np.ndarray) -> np.ndarray:
    """Rows that put one split input just below, exactly at, and just above its border."""
    rows = []
    for t in ensemble.trees:
        for s in t.splits:
            b = np.float32(s.border)
            for v in (np.nextafter(b, np.float32(-np.inf)), b, np.nextafter(b, np.float32(np.inf))):
                row = base[len(rows) % len(base)].copy()
                row[s.input] = v
                rows.append(row)
    return np.array(rows, dtype=np.float32)


def test_ir_matches_catboost_and_treelite(fitted, tmp_path):
    x, _, result = fitted
    e = result.ensemble
    assert len(e.trees) == 10 and all(t.depth == 4 for t in e.trees)
    assert e.n_operations == 50
    assert all(s.input != 4 for t in e.trees for s in t.splits)
    xb = np.concatenate([x[:500], border_inputs(e, x)])
    cb = catboost_model(result.catboost_json, tmp_path).predict(xb)
    ir = e.predict(xb)
    np.testing.assert_allclose(ir, cb, rtol=0, atol=1e-12)
    np.testing.assert_allclose(gtil_predict(e, xb, "float64"), ir, rtol=0, atol=1e-12)
    np.testing.assert_allclose(gtil_predict(e, xb, "float32"), ir, rtol=0, atol=1e-5)


def test_border_semantics_is_strictly_greater():
    e = FloatEnsemble(1, (FloatTree((FloatSplit(0, 0.5),), (1.0, 2.0)),), 0.0)
    x = np.array([[np.nextafter(np.float32(0.5), np.float32(0))], [0.5], [np.nextafter(np.float32(0.5), np.float32(1))]])
    assert e.predict(x).tolist() == [1.0, 1.0, 2.0]
    assert gtil_predict(e, x).tolist() == [1.0, 1.0, 2.0]


def test_leaf_order_uses_json_split_order():
    # Two different splits: bit 0 from the first JSON split, bit 1 from the second.
    data = {
        "oblivious_trees": [
            {"splits": [{"float_feature_index": 0, "border": 0.0}, {"float_feature_index": 1, "border": 0.0}],
             "leaf_values": [0.0, 1.0, 2.0, 3.0]}
        ],
        "scale_and_bias": [2.0, [0.5]],
    }
    e = from_catboost_json(data, 2)
    x = np.array([[-1, -1], [1, -1], [-1, 1], [1, 1]], dtype=np.float32)
    assert e.predict(x).tolist() == [0.5, 2.5, 4.5, 6.5]
    assert gtil_predict(e, x).tolist() == [0.5, 2.5, 4.5, 6.5]


def test_same_seed_same_bytes(fitted):
    x, y, result = fitted
    again = fit_student(x, y, FitConfig(trees=10, depth=4))
    assert again.catboost_json == result.catboost_json
    assert again.ensemble == result.ensemble
    assert json.loads(result.catboost_json)["model_info"]["model_guid"]


def test_budget_caps_tree_count(fitted):
    x, y, _ = fitted
    r = fit_student(x, y, FitConfig(trees=10, depth=4, budget_ops=23))
    assert len(r.ensemble.trees) == 4 and r.ensemble.n_operations <= 23


@pytest.mark.parametrize("config", [FitConfig(trees=0), FitConfig(depth=4, budget_ops=4), FitConfig(depth=0)])
def test_impossible_budgets_are_clear_errors(fitted, config):
    x, y, _ = fitted
    with pytest.raises(BadInputError):
        fit_student(x[:100], y[:100], config)


def test_cycle_budget_callback_keeps_longest_prefix(fitted):
    x, y, full = fitted
    r = fit_student(x, y, FitConfig(trees=10, depth=4), fits=lambda e: len(e.trees) <= 6)
    assert len(r.ensemble.trees) == 6
    assert r.ensemble.trees == full.ensemble.trees[:6]
    with pytest.raises(BadInputError, match="cycle budget"):
        fit_student(x, y, FitConfig(trees=3, depth=4), fits=lambda e: False)


def test_constant_teacher_gives_tree_less_model():
    x = np.random.default_rng(0).normal(size=(100, 3)).astype(np.float32)
    r = fit_student(x, np.full(100, 1.05))
    assert r.constant_teacher and r.ensemble.trees == () and r.ensemble.bias == 1.05
    assert r.ensemble.predict(x).tolist() == [1.05] * 100
    assert gtil_predict(r.ensemble, x).tolist() == pytest.approx([1.05] * 100)


def test_nan_teacher_is_bad_input():
    x = np.zeros((10, 2), np.float32)
    y = np.ones(10)
    y[3] = np.nan
    with pytest.raises(BadInputError, match="NaN"):
        fit_student(x, y)


def test_vectorized_predict_equals_tree_by_tree_sum(fitted):
    """predict/leaf_indices are table-driven; they equal the per-split, per-tree definition."""
    ens = fitted[2].ensemble
    rng = np.random.default_rng(1)
    x = (rng.normal(0, 1, (5000, ens.n_inputs)) * 3).astype(np.float32)
    idx = np.zeros((len(x), len(ens.trees)), dtype=np.int64)
    total = np.full(len(x), ens.bias)
    for t, tree in enumerate(ens.trees):
        for k, s in enumerate(tree.splits):
            idx[:, t] |= (x[:, s.input] > np.float32(s.border)).astype(np.int64) << k
        total += np.asarray(tree.leaves)[idx[:, t]]
    np.testing.assert_array_equal(ens.leaf_indices(x), idx)
    np.testing.assert_array_equal(ens.predict(x), total)


def test_leaf_refit_keeps_json_and_ir_in_step(fitted, tmp_path):
    """The joint weighted leaf refit: same splits, lower weighted loss, and the written-back
    CatBoost JSON still predicts exactly what the IR does (deterministically)."""
    x, y, plain = fitted
    w = 1.0 + 9.0 * (x[:, 0] > 1.0)
    result = fit_student(x, y, FitConfig(trees=10, depth=4), leaf_weights=w)
    e = result.ensemble
    assert [t.splits for t in e.trees] == [t.splits for t in plain.ensemble.trees]
    loss = lambda ens: float(np.sum(w * (ens.predict(x) - y) ** 2))
    assert loss(e) < loss(plain.ensemble)
    xb = np.concatenate([x[:500], border_inputs(e, x)])
    np.testing.assert_allclose(catboost_model(result.catboost_json, tmp_path).predict(xb), e.predict(xb), rtol=0, atol=1e-12)
    assert from_catboost_json(json.loads(result.catboost_json), 5) == e
    assert fit_student(x, y, FitConfig(trees=10, depth=4), leaf_weights=w).catboost_json == result.catboost_json
    with pytest.raises(BadInputError):
        fit_student(x, y, FitConfig(trees=10, depth=4), leaf_weights=-w)
