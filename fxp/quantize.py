"""Quantize the float tree IR into an exact fixed-point model (``FxModel``).

The device never computes the spec's affine map: a split ``scaled_input > border`` on input j
(feature f, F = its registry frac_bits, spec scale a, offset b) is rewritten on the device
integer q of that feature. The float semantics of q is defined as

    device_scaled(q) = float32(float64(a) * (float64(q) / 2^F) + float64(b))

(float64 arithmetic, one rounding per operation, then one rounding to float32), and the split
predicate as ``device_scaled(q) > float32(border)``. :func:`device_scaled` is that expression;
the float reference evaluates the float trees on exactly these values. Each rounding is
monotone, so the predicate is monotone in q (non-decreasing for a > 0, non-increasing for
a < 0) and a binary search over [FEATURE_MIN, FEATURE_MAX] finds the exact integer threshold:

- a > 0: ``q > T`` with T the largest q whose predicate is false;
- a < 0: ``q < T`` with T the smallest q whose predicate is false;
- always true: ``q > INT32_MIN``; always false: ``q > INT32_MAX`` (features saturate to
  [FEATURE_MIN, FEATURE_MAX] = [INT32_MIN + 1, INT32_MAX], so both are exact).

Leaves and the bias are rounded to nearest Q16.16; the ensemble sum is exact integer math,
clamped to the spec's factor clamp narrowed to the teacher's achievable factors when given.

A ramp (``FloatRamp``, slopes on the scaled input) becomes a ``Ramp`` on the device integer q: its
center and ends are the nearest device integers of the float ones, and its slope constants are
the float slopes per device unit in Q16.16, times ``2^shift``. The shift is the largest that keeps
``|d| * |k| < 2^31`` and is at most log2 of the longer side: then a one-off edit of k moves the
term by a whole LSB at that end, so tests can see it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from rlcc import derived as derived_vocab
from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.tree_ir import FloatEnsemble, FloatRamp
from rlcc.errors import BadInputError
from rlcc.fxp.model import INT32_MAX, INT32_MIN, FxConstants, FxModel, Ramp, Split, Tree
from rlcc.spec import ObservationSpec

LEAF_ONE = 1 << fmt.LEAF_FRAC_BITS


def input_affine(spec: ObservationSpec, j: int) -> tuple[float, float, int]:
    """(scale, offset, frac bits) of student input ``j`` (a derived input is its device value
    over 2^frac bits: the float student computes it from unscaled window values)."""
    if j >= spec.input_width:
        return 1.0, 0.0, derived_vocab.get(spec.derived[j - spec.input_width]).frac_bits
    feat = spec.features[j % spec.n_features]
    return feat.scale, feat.offset, vocab.get(feat.name).frac_bits


def device_scaled(q: np.ndarray | int, scale: float, offset: float, frac_bits: int) -> np.ndarray:
    """The float32 value a device integer feature stands for (see module docstring)."""
    q64 = np.asarray(q, dtype=np.float64)
    return (np.float64(scale) * (q64 / np.float64(2.0**frac_bits)) + np.float64(offset)).astype(np.float32)


def device_inputs_to_float(spec: ObservationSpec, q: np.ndarray) -> np.ndarray:
    """Float32 student inputs (N, student_width) that integer device inputs stand for."""
    q = np.asarray(q, dtype=np.int64)
    out = np.empty(q.shape, dtype=np.float32)
    for j in range(spec.student_width):
        out[:, j] = device_scaled(q[:, j], *input_affine(spec, j))
    return out


def _predicate(q: int, scale: float, offset: float, frac_bits: int, border: np.float32) -> bool:
    return bool(device_scaled(q, scale, offset, frac_bits) > border)


def integer_split(spec: ObservationSpec, j: int, border: float) -> Split:
    """The exact integer split equivalent to ``device_scaled(q) > float32(border)`` on input j."""
    scale, offset, bits = input_affine(spec, j)
    b32 = np.float32(border)
    if not np.isfinite(b32):
        raise BadInputError(f"split on input {j} has a non-finite border {border!r}")
    pred = lambda q: _predicate(q, scale, offset, bits, b32)  # noqa: E731
    lo_true, hi_true = pred(fmt.FEATURE_MIN), pred(fmt.FEATURE_MAX)
    if lo_true and hi_true:
        return Split(j, ">", INT32_MIN, float(b32))
    if not lo_true and not hi_true:
        return Split(j, ">", INT32_MAX, float(b32))
    if scale > 0:  # false ... false true ... true: find the last false
        lo, hi = fmt.FEATURE_MIN, fmt.FEATURE_MAX  # pred(lo) false, pred(hi) true
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if pred(mid) else (mid, hi)
        return Split(j, ">", lo, float(b32))
    lo, hi = fmt.FEATURE_MIN, fmt.FEATURE_MAX  # pred(lo) true, pred(hi) false: find the first false
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if pred(mid) else (lo, mid)
    return Split(j, "<", hi, float(b32))


def integer_ramp(spec: ObservationSpec, r: FloatRamp) -> Ramp:
    """The device ramp of float ramp ``r`` (see module docstring)."""
    scale, offset, bits = input_affine(spec, r.input)
    if scale == 0:
        raise BadInputError(f"ramp on input {r.input} whose scale is 0")
    to_q = lambda v: int(np.clip(np.rint((v - offset) / scale * 2.0**bits), fmt.FEATURE_MIN + 1, fmt.FEATURE_MAX))  # noqa: E731
    center, ends = to_q(r.center), sorted((to_q(r.lo), to_q(r.hi)))
    lo, hi = min(ends[0], center), max(ends[1], center)
    # slope per device unit in Q16.16; a negative scale swaps which side of the center is below
    per_unit = np.array([r.slope_below, r.slope_above] if scale > 0 else [r.slope_above, r.slope_below])
    per_unit = per_unit * scale / 2.0**bits * LEAF_ONE
    span = max(center - lo, hi - center, 1)
    shift = min(30, span.bit_length() - 1)
    while shift > 0 and max(int(abs(round(per_unit[0] * 2**shift))) * (center - lo),
                            int(abs(round(per_unit[1] * 2**shift))) * (hi - center)) >= 2**31:
        shift -= 1
    k_below, k_above = (int(round(v * 2**shift)) for v in per_unit)
    ramp = Ramp(r.input, lo, center, hi, k_below, k_above, shift, float(r.center), float(r.slope_below), float(r.slope_above))
    bad = ramp.problems(spec.student_width)
    if bad:
        raise BadInputError(f"ramp on input {r.input} cannot be represented: " + "; ".join(bad))
    return ramp


def to_q16(value: float) -> int:
    """Round-to-nearest Q16.16 (ties away from zero, platform independent)."""
    scaled = float(value) * LEAF_ONE
    return int(np.sign(scaled) * np.floor(abs(scaled) + 0.5))


@dataclasses.dataclass(frozen=True)
class QuantizeStats:
    max_leaf_error_lsb: float  # worst rounding error of one leaf (or the bias)
    max_accumulated_error_lsb: float  # bias error + sum over trees of the worst leaf error
    always_true_splits: int
    always_false_splits: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def quantize(
    ensemble: FloatEnsemble,
    spec: ObservationSpec,
    provenance: dict[str, Any] | None = None,
    probe_timeout_ns: int = fmt.PROBE_TIMEOUT_NS_DEFAULT,
    factor_range: tuple[float, float] | None = None,
) -> tuple[FxModel, QuantizeStats]:
    """The fixed-point model of ``ensemble`` for ``spec`` plus rounding statistics.

    ``probe_timeout_ns`` (the TX-event RTT-probe timeout) is a device setting carried in the
    model's constants; it does not affect the trees. ``factor_range`` (the teacher's achievable
    factors) narrows the factor clamp to its intersection with the spec's (``FxConstants``).
    """
    if ensemble.n_inputs != spec.student_width:
        raise BadInputError(f"ensemble has {ensemble.n_inputs} inputs, spec declares {spec.student_width}")
    bias = to_q16(ensemble.bias)
    bias_err = abs(bias - ensemble.bias * LEAF_ONE)
    worst, acc, n_true, n_false = bias_err, bias_err, 0, 0
    trees = []
    for tree in ensemble.trees:
        splits = tuple(integer_split(spec, s.input, s.border) for s in tree.splits)
        n_true += sum(s.threshold == INT32_MIN for s in splits)
        n_false += sum(s.threshold == INT32_MAX for s in splits)
        leaves = tuple(to_q16(v) for v in tree.leaves)
        err = max(abs(q - v * LEAF_ONE) for q, v in zip(leaves, tree.leaves))
        worst, acc = max(worst, err), acc + err
        trees.append(Tree(splits, leaves))
    model = FxModel(
        spec=spec,
        constants=FxConstants.from_spec(spec, probe_timeout_ns, factor_range),
        trees=tuple(trees),
        bias=bias,
        provenance=dict(provenance or {}),
        ramps=tuple(integer_ramp(spec, r) for r in ensemble.ramps),
    )
    return model, QuantizeStats(float(worst), float(acc), n_true, n_false)
