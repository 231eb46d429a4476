"""Integer thresholds are exact: device predicate == float predicate over the whole int32 range."""

from __future__ import annotations

import numpy as np
import pytest

from rlcc import formats as fmt
from rlcc.tree_ir import FloatEnsemble, FloatSplit, FloatTree
from rlcc.fxp import golden
from rlcc.fxp.model import INT32_MAX, INT32_MIN
from rlcc.fxp.quantize import device_inputs_to_float, device_scaled, input_affine, integer_split, quantize, to_q16
from rlcc.spec import Action, Feature, ObservationSpec

SPEC = ObservationSpec(
    features=(
        Feature("prev_action"),
        Feature("delta", scale=10.0),
        Feature("rate", scale=-3.7, offset=0.3),
        Feature("rtt_inflation", scale=0.01, offset=-1.0),
        Feature("cnp_count", scale=-0.5, offset=2.0),
    ),
    history=2,
)


def float_pred(q: np.ndarray, j: int, border: float) -> np.ndarray:
    return device_scaled(q, *input_affine(SPEC, j)) > np.float32(border)


def int_pred(q: np.ndarray, split) -> np.ndarray:
    q = np.asarray(q, dtype=np.int64)
    return q > split.threshold if split.op == ">" else q < split.threshold


def borders(j: int, rng: np.random.Generator) -> list[float]:
    """Borders hitting the interesting cases: typical, at representable points, extreme, tiny."""
    a, b, bits = input_affine(SPEC, j)
    qs = rng.integers(fmt.FEATURE_MIN, fmt.FEATURE_MAX, 6, dtype=np.int64).tolist() + [0, 1, -1, 1 << bits, 12345]
    exact = [float(device_scaled(q, a, b, bits)) for q in qs]  # a border equal to a device value
    return exact + [float(np.float32(b)), 0.0, -1e30, 1e30, float(rng.normal()), float(rng.normal() * 1e4)]


@pytest.mark.parametrize("j", range(SPEC.input_width))
def test_threshold_is_exact_at_edges_and_random_points(j):
    rng = np.random.default_rng(j)
    for border in borders(j, rng):
        s = integer_split(SPEC, j, border)
        assert s.op == (">" if SPEC.features[j % SPEC.n_features].scale > 0 or s.threshold in (INT32_MIN, INT32_MAX) else "<")
        t = s.threshold
        probes = np.array([t - 1, t, t + 1, fmt.FEATURE_MIN, fmt.FEATURE_MAX], dtype=np.int64)
        probes = np.clip(probes, fmt.FEATURE_MIN, fmt.FEATURE_MAX)
        rand = rng.integers(fmt.FEATURE_MIN, fmt.FEATURE_MAX, 20000, dtype=np.int64, endpoint=True)
        near = t + rng.integers(-5000, 5000, 5000)
        q = np.clip(np.concatenate([probes, rand, near]), fmt.FEATURE_MIN, fmt.FEATURE_MAX)
        np.testing.assert_array_equal(int_pred(q, s), float_pred(q, j, border), err_msg=f"border {border!r}")


def test_exhaustive_reduced_range():
    """Every q in a window of 2^20 around zero and around each threshold, for several borders."""
    rng = np.random.default_rng(7)
    window = np.arange(-(1 << 19), 1 << 19, dtype=np.int64)
    for j in range(SPEC.n_features):
        for border in borders(j, rng)[:8]:
            s = integer_split(SPEC, j, border)
            centre = min(max(s.threshold, fmt.FEATURE_MIN + (1 << 19)), fmt.FEATURE_MAX - (1 << 19))
            for q in (window, window + centre):
                np.testing.assert_array_equal(int_pred(q, s), float_pred(q, j, border))


def test_always_true_and_always_false_splits():
    always_true = integer_split(SPEC, 0, -1e30)
    always_false = integer_split(SPEC, 0, 1e30)
    assert (always_true.op, always_true.threshold) == (">", INT32_MIN)
    assert (always_false.op, always_false.threshold) == (">", INT32_MAX)
    neg_true = integer_split(SPEC, 2, -1e30)  # negative scale
    assert (neg_true.op, neg_true.threshold) == (">", INT32_MIN)


def test_q16_rounding():
    assert to_q16(1.0) == 65536 and to_q16(-1.0) == -65536
    assert to_q16(0.5 / 65536) == 1 and to_q16(-0.5 / 65536) == -1
    assert to_q16(0.49 / 65536) == 0


def test_quantized_paths_equal_float_paths_on_device_values():
    rng = np.random.default_rng(3)
    trees = []
    for _ in range(6):
        splits = tuple(FloatSplit(int(rng.integers(SPEC.input_width)), float(np.float32(rng.normal()))) for _ in range(4))
        trees.append(FloatTree(splits, tuple(float(v) for v in rng.normal(0, 0.02, 16))))
    ensemble = FloatEnsemble(SPEC.input_width, tuple(trees), 1.0)
    model, stats = quantize(ensemble, SPEC)
    assert stats.max_leaf_error_lsb <= 0.5 and stats.max_accumulated_error_lsb <= 0.5 * 7
    q = rng.integers(-(1 << 22), 1 << 22, (20000, SPEC.input_width))
    total, leaf_idx = golden.eval_trees(model, q)
    xf = device_inputs_to_float(SPEC, q)
    np.testing.assert_array_equal(leaf_idx, ensemble.leaf_indices(xf))
    err = np.abs(total - ensemble.predict(xf) * 65536)
    assert err.max() <= stats.max_accumulated_error_lsb + 1e-6


def test_overflowing_leaves_are_rejected():
    from rlcc.errors import BadInputError

    spec = ObservationSpec(features=(Feature("prev_action"),), history=1, action=Action(type="factor"))
    big = FloatEnsemble(1, tuple(FloatTree((FloatSplit(0, 1.0),), (20000.0, 20000.0)) for _ in range(2)), 0.0)
    with pytest.raises(BadInputError, match="overflow"):
        quantize(big, spec)
