"""Distill a switch agent's greedy action into an integer tree classifier (``rlcc.class_trees``).

CatBoost (``MultiClass``, single-threaded, seeded) is fitted on the teacher's float32 policy
inputs (``SwitchAgentSpec.normalize`` of integer device windows) and its argmax labels, under the
device budget (trees x depth). The export then becomes exact integer code:

- **Thresholds**: every policy input is ``float32(v * scale)`` of one integer feature v, a
  non-decreasing function of v, so ``input > border`` is exactly ``v > T`` with T the largest v in
  the feature's device range whose input is ``<= border`` (binary search; -1 when none is: the
  split is always true). No rounding is involved: the integer trees take the same leaf as
  CatBoost for every integer window.
- **Leaves**: the per-class leaf values get ``leaf_frac_bits`` fractional bits, as many as keep
  every class score within int32; the rounding can only flip an argmax whose float margin is
  below trees x 2^-(bits+1) (reported as the quantization agreement).
- Classes the teacher never chose are absent from CatBoost's model; they get a score floor
  (:data:`ABSENT_SCORE`) and zero leaves, so they are never picked.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import numpy as np

from rlcc.class_trees import SCORE_LIMIT, ClassEnsemble, ClassTree, IntSplit
from rlcc.errors import BadInputError
from rlcc.fxp import switch_agent as fx
from rlcc.switch_spec import SwitchAgentSpec

ABSENT_SCORE = -(1 << 30)
PRESENT_LIMIT = (1 << 30) - 1  # present classes' |score| stays below this, far above ABSENT_SCORE
MAX_LEAF_FRAC_BITS = 24


@dataclasses.dataclass(frozen=True)
class ClassifierBudget:
    """The device budget: the RL-CC paper's deployed model is <= 10 trees of depth <= 4."""

    max_trees: int = 10
    depth: int = 4
    learning_rate: float = 0.3
    border_count: int = 254
    l2_leaf_reg: float = 3.0
    # CatBoost's class weighting: a teacher that keeps one template most of the time still
    # switches at the moments that matter; unweighted, ten trees learn only the majority.
    class_weights: str | None = "SqrtBalanced"

    def __post_init__(self) -> None:
        if not 0 <= self.max_trees <= 256 or not 1 <= self.depth <= 8:
            raise BadInputError("classifier budget needs 0..256 trees of depth 1..8")


@dataclasses.dataclass(frozen=True)
class FitResult:
    model: ClassEnsemble
    catboost_json: str
    present: tuple[int, ...]  # the classes CatBoost saw
    float_agreement: float  # float CatBoost argmax == teacher label (training data)
    quantization_agreement: float  # integer argmax == float argmax (training data)


def integer_threshold(border: float, scale: float, vmax: int) -> int:
    """Largest v in [0, vmax] with float32(v * scale) <= float32(border), else -1."""
    b = np.float32(border)

    def at_or_below(v: int) -> bool:
        return bool(np.float32(np.float64(v) * scale) <= b)

    if not at_or_below(0):
        return -1
    lo, hi = 0, int(vmax)
    if at_or_below(hi):
        return hi
    while hi - lo > 1:  # invariant: at_or_below(lo), not at_or_below(hi)
        mid = (lo + hi) // 2
        if at_or_below(mid):
            lo = mid
        else:
            hi = mid
    return lo


def fit_classifier(spec: SwitchAgentSpec, windows: np.ndarray, labels: np.ndarray, budget: ClassifierBudget = ClassifierBudget(),
                   seed: int = 0, weights: np.ndarray | None = None) -> FitResult:
    """Fit the integer classifier on integer windows (N, input_width) and teacher actions (N,)."""
    import catboost

    windows = np.asarray(windows, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    if windows.ndim != 2 or windows.shape[1] != spec.input_width or len(windows) != len(labels) or not len(labels):
        raise BadInputError(f"classifier fit: need (N, {spec.input_width}) windows and N labels, N > 0")
    if labels.min() < 0 or labels.max() >= spec.n_actions:
        raise BadInputError("classifier fit: labels outside the action table")
    x = spec.normalize(windows)
    present = tuple(int(c) for c in np.unique(labels))
    if len(present) == 1 or budget.max_trees == 0:
        # A constant policy: the most frequent action (no trees).
        top = int(np.bincount(labels, minlength=spec.n_actions).argmax())
        bias = tuple(0 if c == top else ABSENT_SCORE for c in range(spec.n_actions))
        model = ClassEnsemble(spec.input_width, spec.n_actions, (), bias, 0)
        return FitResult(model, "{}", (top,), float(np.mean(labels == top)), 1.0)
    clf = catboost.CatBoostClassifier(
        loss_function="MultiClass", iterations=budget.max_trees, depth=budget.depth,
        learning_rate=budget.learning_rate, border_count=budget.border_count, l2_leaf_reg=budget.l2_leaf_reg,
        random_seed=seed, thread_count=1, verbose=False, allow_writing_files=False,
        **({"auto_class_weights": budget.class_weights} if budget.class_weights else {}),
    )
    clf.fit(x, labels, sample_weight=weights)
    data = json.loads(_export_json(clf))
    model, float_scores = _to_integer(spec, data, present, x)
    float_arg = np.asarray(present)[np.argmax(float_scores, axis=1)]
    int_arg = fx.decide(model, windows)
    return FitResult(model, json.dumps(data, sort_keys=True), present, float(np.mean(float_arg == labels)),
                     float(np.mean(int_arg == float_arg)))


def float_scores(data: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """CatBoost's raw multiclass scores (N, present classes) from its JSON, evaluated directly."""
    scale, bias = data["scale_and_bias"]
    k = len(bias)
    out = np.tile(np.asarray(bias, np.float64), (len(x), 1))
    x = np.asarray(x, np.float32)
    for t in data["oblivious_trees"]:
        idx = np.zeros(len(x), np.int64)
        for level, s in enumerate(t["splits"]):
            idx |= (x[:, s["float_feature_index"]] > np.float32(s["border"])).astype(np.int64) << level
        out += np.asarray(t["leaf_values"], np.float64).reshape(-1, k)[idx] * scale
    return out


def _to_integer(spec: SwitchAgentSpec, data: dict[str, Any], present: tuple[int, ...], x: np.ndarray) -> tuple[ClassEnsemble, np.ndarray]:
    scale, bias = data["scale_and_bias"]
    k = len(bias)
    if k != len(present):
        raise BadInputError(f"CatBoost model has {k} classes, the labels {len(present)}")
    scales = np.tile(spec.scales(), spec.history)
    vmax = np.tile(spec.feature_max(), spec.history)
    trees_f = []
    for t in data["oblivious_trees"]:
        splits = []
        for s in t["splits"]:
            if s.get("split_type", "FloatFeature") != "FloatFeature":
                raise BadInputError(f"unsupported CatBoost split type {s.get('split_type')!r}")
            i = int(s["float_feature_index"])
            splits.append(IntSplit(i, integer_threshold(float(s["border"]), float(scales[i]), int(vmax[i]))))
        trees_f.append((tuple(splits), np.asarray(t["leaf_values"], np.float64).reshape(-1, k) * scale))
    bias_f = np.asarray(bias, np.float64)
    worst = float(np.max(np.abs(bias_f))) + sum(float(np.max(np.abs(lv))) for _, lv in trees_f)
    bits = MAX_LEAF_FRAC_BITS if worst == 0 else min(MAX_LEAF_FRAC_BITS, int(math.floor(math.log2(PRESENT_LIMIT / worst))))
    if bits < 0:
        raise BadInputError("classifier scores too large for int32")
    q = float(1 << bits)

    def expand(values: np.ndarray, absent: int) -> tuple[int, ...]:
        row = [absent] * spec.n_actions
        for j, c in enumerate(present):
            row[c] = int(np.rint(values[j] * q))
        return tuple(row)

    trees = tuple(ClassTree(splits, tuple(expand(r, 0) for r in lv)) for splits, lv in trees_f)
    model = ClassEnsemble(spec.input_width, spec.n_actions, trees, expand(bias_f, ABSENT_SCORE), bits)
    assert max(abs(v) for v in model.bias) <= SCORE_LIMIT
    return model, float_scores(data, x)


def _export_json(model: Any) -> str:
    """CatBoost's JSON export without the random model GUID (byte-identical for equal fits)."""
    import os
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        model.save_model(path, format="json")
        with open(path) as fh:
            data = json.load(fh)
    finally:
        os.unlink(path)
    data.get("model_info", {}).pop("model_guid", None)
    data.get("model_info", {}).pop("train_finish_time", None)
    return json.dumps(data, sort_keys=True)
