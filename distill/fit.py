"""Distill teacher factors into a small CatBoost oblivious-tree ensemble under a size budget.

CatBoost is trained single-threaded with a fixed seed so the same data always gives the same
model bytes. The model is imported through its JSON export into the float tree IR, which the
quantizer consumes. The paper deploys 10 trees of depth 4 within 150 operations.

Optionally the leaves are refitted jointly once the tree structure is fixed (``leaf_weights``):
one weighted least-squares solve over every leaf of every tree (ridge towards CatBoost's own
leaves), instead of boosting's greedy, learning-rate-shrunk per-tree steps. The pipeline weights
each decision by the time it governs (its RTT): a decision in a deep queue steers the flow for
hundreds of microseconds, one at the base RTT for eight, yet both count once in the sampled set.
The refitted leaves are written back into the exported CatBoost JSON, which stays the model.

With ramps (``rlcc.distill.equilibrium``: linear terms around the teacher's equilibrium) the
student is ``trees + ramps``: the trees fit the residual with no split border strictly inside any
ramp's interval, so inside the box around the equilibrium the student is linear like the teacher
instead of a staircase, whose steps make the closed loop dither. The exported CatBoost JSON holds
the trees; the ramps travel in ``FloatEnsemble.ramps``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import numpy as np

from rlcc.tree_ir import RAMP_OPERATIONS, FitsBudget, FloatEnsemble, FloatRamp, from_catboost_json
from rlcc.errors import BadInputError
from rlcc.progress import Stage

DEFAULT_TREES = 10
DEFAULT_DEPTH = 4
DEFAULT_BUDGET_OPS = 150
MAX_DEPTH = 8


@dataclasses.dataclass(frozen=True)
class FitConfig:
    trees: int = DEFAULT_TREES
    depth: int = DEFAULT_DEPTH
    budget_ops: int = DEFAULT_BUDGET_OPS
    learning_rate: float = 0.5
    l2_leaf_reg: float = 1.0
    border_count: int = 254
    seed: int = 0
    thread_count: int = 1

    def max_trees(self, reserved_ops: int = 0) -> int:
        """Largest tree count allowed by both ``trees`` and the operations budget (less
        ``reserved_ops`` taken by other terms, e.g. ramps)."""
        if self.trees < 1:
            raise BadInputError(f"--trees must be >= 1, got {self.trees}")
        if not 1 <= self.depth <= MAX_DEPTH:
            raise BadInputError(f"--depth must be in 1..{MAX_DEPTH}, got {self.depth}")
        per_tree = self.depth + 1  # depth comparisons + one leaf addition
        fit = min(self.trees, (self.budget_ops - reserved_ops) // per_tree)
        if fit < 1:
            raise BadInputError(
                f"operations budget {self.budget_ops} is smaller than one depth-{self.depth} tree "
                f"({per_tree} operations)" + (f" plus {reserved_ops} for the ramps" if reserved_ops else "")
            )
        return fit


@dataclasses.dataclass(frozen=True)
class FitResult:
    ensemble: FloatEnsemble
    catboost_json: str  # canonical JSON export ("" for a constant teacher)
    constant_teacher: bool
    trees_requested: int
    trees_budget: int


def fit_student(
    x: np.ndarray,
    y: np.ndarray,
    config: FitConfig = FitConfig(),
    fits: FitsBudget | None = None,
    weights: np.ndarray | None = None,
    leaf_weights: np.ndarray | None = None,
    stage: Stage | None = None,
    ramps: tuple[FloatRamp, ...] = (),
) -> FitResult:
    """Fit a regression ensemble of ``y`` (teacher factors) on float32 inputs ``x``.

    A constant teacher gives an ensemble with zero trees whose bias is that constant (CatBoost
    refuses constant targets, and a zero-tree model is exact for it). ``weights`` weight the
    boosting; ``leaf_weights`` (non-negative, per sample) trigger the joint leaf refit.
    ``stage`` advances by one step per boosted tree and one for the refit. ``ramps`` (fitted by
    ``rlcc.distill.equilibrium``) are part of the student: the trees fit the rest (module doc).
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or len(x) != len(y) or len(y) == 0:
        raise BadInputError("distillation needs a non-empty (N, width) input array and N targets")
    if not np.all(np.isfinite(y)):
        raise BadInputError("teacher produced NaN or inf factors on sampled states")
    if not np.all(np.isfinite(x)):
        raise BadInputError("sampled policy inputs contain NaN or inf")
    constant = float(np.ptp(y)) == 0.0
    ramps = () if constant else tuple(ramps)
    n_max = config.max_trees(RAMP_OPERATIONS * len(ramps))
    stage = stage or Stage()
    stage.add(n_max + (leaf_weights is not None))
    if constant:
        return FitResult(FloatEnsemble(x.shape[1], (), float(y[0])), "", True, config.trees, n_max)

    import catboost

    target = y - _ramp_sum(ramps, x)
    params = dict(
        iterations=n_max,
        depth=config.depth,
        learning_rate=config.learning_rate,
        l2_leaf_reg=config.l2_leaf_reg,
        loss_function="RMSE",
        grow_policy="SymmetricTree",
        random_seed=config.seed,
        thread_count=config.thread_count,
        bootstrap_type="No",
        random_strength=0.0,
        verbose=False,
        allow_writing_files=False,
    )
    # a quantized pool (ramps) carries its own borders
    model = catboost.CatBoostRegressor(**params) if ramps else catboost.CatBoostRegressor(border_count=config.border_count, **params)
    if ramps:
        model.fit(_pool_without_box_borders(x, target, weights, ramps, config.border_count),
                  callbacks=[_Ticks(stage)])
    else:
        model.fit(x, target, sample_weight=weights, callbacks=[_Ticks(stage)])
    n = model.tree_count_
    ensemble = _import(model, x.shape[1], ramps)
    while fits is not None and not fits(ensemble):
        n -= 1
        if n == 0:
            raise BadInputError("no ensemble (not even one tree) fits the cycle budget")
        model.shrink(n)
        ensemble = _import(model, x.shape[1], ramps)
    exported = _export_json(model)
    if leaf_weights is not None:
        exported = refit_leaves_json(exported, ensemble, x, target, np.asarray(leaf_weights, dtype=np.float64))
        ensemble = from_catboost_json(json.loads(exported), x.shape[1], ramps)
        stage.advance(1)
    return FitResult(ensemble, exported, False, config.trees, n_max)


def _ramp_sum(ramps: tuple[FloatRamp, ...], x: np.ndarray) -> np.ndarray:
    out = np.zeros(len(x), dtype=np.float64)
    for r in ramps:
        out += r.value(x)
    return out


def _pool_without_box_borders(x: np.ndarray, y: np.ndarray, weights: np.ndarray | None,
                              ramps: tuple[FloatRamp, ...], border_count: int) -> Any:
    """A CatBoost pool quantized with CatBoost's own borders, minus those strictly inside a ramp's
    interval on its input (the interval's ends are borders instead): no tree splits the box."""
    import os
    import tempfile

    import catboost

    fd, path = tempfile.mkstemp(suffix=".tsv")
    os.close(fd)
    try:
        probe = catboost.Pool(x, y, weight=weights)
        probe.quantize(border_count=border_count)
        probe.save_quantization_borders(path)
        borders: dict[int, set[float]] = {}
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                f, b = line.split("\t")[:2]
                borders.setdefault(int(f), set()).add(float(np.float32(b)))
        for r in ramps:
            keep = {b for b in borders.get(r.input, set()) if not r.lo < b < r.hi}
            borders[r.input] = keep | {float(np.float32(r.lo)), float(np.float32(r.hi))}
        with open(path, "w", encoding="utf-8") as fh:
            for f in sorted(borders):
                for b in sorted(borders[f]):
                    fh.write(f"{f}\t{b!r}\n")
        pool = catboost.Pool(x, y, weight=weights)
        pool.quantize(input_borders=path)
        return pool
    finally:
        os.unlink(path)


class _Ticks:
    """CatBoost training callback: one progress step per boosted tree."""

    def __init__(self, stage: Stage) -> None:
        self.stage = stage

    def after_iteration(self, info: Any) -> bool:
        self.stage.advance(1)
        return True  # continue training


LEAF_RIDGE = 1e-3


def refit_leaves(ensemble: FloatEnsemble, x: np.ndarray, y: np.ndarray, w: np.ndarray,
                 ridge: float = LEAF_RIDGE) -> np.ndarray:
    """Jointly refitted leaf values (n_trees, 2**depth) of a fixed-structure ensemble.

    Minimizes ``sum_i w_i (bias + sum_t leaf_t[idx_it] - y_i)^2 + lam * |leaves - current|^2``
    with ``lam = ridge * sum(w) / n_leaves``: the ridge keeps leaves no sample reaches (and
    weakly-determined ones) at CatBoost's values. Normal equations assembled with integer
    bincounts in a fixed order, so the result is deterministic.
    """
    if len(w) != len(y) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise BadInputError("leaf weights must be finite, non-negative, one per sample")
    n_trees = len(ensemble.trees)
    width = 1 << max(t.depth for t in ensemble.trees)
    if any(t.depth != ensemble.trees[0].depth for t in ensemble.trees):
        raise BadInputError("the leaf refit needs trees of equal depth")
    cols = ensemble.leaf_indices(x) + (np.arange(n_trees, dtype=np.int64) * width)[None, :]
    m = n_trees * width
    pair = (cols[:, :, None] * m + cols[:, None, :]).reshape(len(x), -1)
    gram = np.bincount(pair.ravel(), weights=np.repeat(w, n_trees * n_trees), minlength=m * m).reshape(m, m)
    target = np.bincount(cols.ravel(), weights=np.repeat(w * (y - ensemble.bias), n_trees), minlength=m)
    current = np.array([v for t in ensemble.trees for v in t.leaves], dtype=np.float64)
    lam = ridge * float(np.sum(w)) / m
    if lam <= 0:
        raise BadInputError("leaf weights sum to zero")
    return _spd_solve(gram + lam * np.eye(m), target + lam * current).reshape(n_trees, width)


def _spd_solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a^-1 b`` for symmetric positive definite ``a`` by a right-looking Cholesky
    factorization and two triangular substitutions.

    Written with element-wise numpy operations only (no BLAS/LAPACK reductions): every entry
    sees the same IEEE operations in the same order on any machine, CPU kernel or thread count,
    so the refitted leaves and everything downstream are byte-identical across platforms.
    """
    work = np.array(a, dtype=np.float64)
    m = len(work)
    lower = np.zeros_like(work)
    for j in range(m):
        pivot = work[j, j]
        if not pivot > 0.0:
            raise BadInputError("leaf refit: normal equations are not positive definite")
        col = work[j:, j] / np.sqrt(pivot)
        lower[j:, j] = col
        work[j + 1:, j + 1:] -= np.multiply.outer(col[1:], col[1:])
    x = np.array(b, dtype=np.float64)
    for j in range(m):  # forward: lower @ y = b
        x[j] /= lower[j, j]
        x[j + 1:] -= lower[j + 1:, j] * x[j]
    for j in range(m - 1, -1, -1):  # backward: lower.T @ x = y
        x[j] /= lower[j, j]
        x[:j] -= lower[j, :j] * x[j]
    return x


def refit_leaves_json(exported: str, ensemble: FloatEnsemble, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> str:
    """The canonical CatBoost JSON with jointly refitted leaves (``refit_leaves``); the model
    GUID is re-derived from the new content."""
    if not ensemble.trees:
        return exported
    leaves = refit_leaves(ensemble, x, y, w)
    data = json.loads(exported)
    scale = float(data.get("scale_and_bias", [1.0, [0.0]])[0])
    for tree, row in zip(data["oblivious_trees"], leaves):
        tree["leaf_values"] = [float(v) / scale for v in row]
    return _canonical(data)


def shift_bias(fit: FitResult, delta: float) -> FitResult:
    """``fit`` with ``delta`` added to its bias, in the float ensemble and in the CatBoost JSON
    alike (the independent treelite reference is built from the ensemble, catboost.json from the
    JSON: both must stay the same model)."""
    ensemble = dataclasses.replace(fit.ensemble, bias=fit.ensemble.bias + delta)
    if not fit.catboost_json:
        return dataclasses.replace(fit, ensemble=ensemble)
    data = json.loads(fit.catboost_json)
    scale, biases = data.get("scale_and_bias", [1.0, [0.0]])
    biases = [float(b) for b in biases] if isinstance(biases, list) else [float(biases)]
    biases[0] = ensemble.bias
    data["scale_and_bias"] = [scale, biases]
    return dataclasses.replace(fit, ensemble=ensemble, catboost_json=_canonical(data))


def _export_json(model: Any) -> str:
    """CatBoost's JSON export, canonicalized: the random model GUID replaced by a content hash and
    the training wall-clock time removed, so the same data gives the same bytes; without the
    progress callback among the training parameters."""
    import os
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        model.save_model(path, format="json")
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    finally:
        os.unlink(path)
    # the progress callback (``_Ticks``) is not part of the model
    data.get("model_info", {}).get("params", {}).get("flat_params", {}).pop("callbacks", None)
    return _canonical(data)


def _canonical(data: dict[str, Any]) -> str:
    info = data.setdefault("model_info", {})
    info.pop("model_guid", None)
    info.pop("train_finish_time", None)
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:32]
    info["model_guid"] = digest
    return json.dumps(data, sort_keys=True, indent=1) + "\n"


def _import(model: Any, n_inputs: int, ramps: tuple[FloatRamp, ...] = ()) -> FloatEnsemble:
    return from_catboost_json(json.loads(_export_json(model)), n_inputs, ramps)
