"""The float tree IR: oblivious trees over float32 policy inputs, as CatBoost evaluates them.

Semantics (checked against CatBoost's own predictions in tests/distill):
``bit_k = float32(x[input_k]) > float32(border_k)``, ``leaf = OR_k bit_k << k`` in CatBoost's
JSON split order, ``output = bias + sum_t leaves_t[leaf_t] + sum_r ramp_r(x)`` in float64.
CatBoost's ``scale_and_bias`` is folded in: leaves are multiplied by the scale, the bias is the base.

A ramp is a clipped, two-sided linear term on one input around the teacher's equilibrium
(``rlcc.distill.equilibrium``): trees are staircases, and a staircase across the point where the
factor crosses 1 makes the closed loop dither between two steps instead of settling where the
teacher does.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Mapping

import numpy as np

from rlcc.errors import BadInputError


@dataclasses.dataclass(frozen=True)
class FloatSplit:
    """``x[input] > border`` with both sides float32 (the border is stored as its float32 value)."""

    input: int
    border: float


@dataclasses.dataclass(frozen=True)
class FloatTree:
    splits: tuple[FloatSplit, ...]
    leaves: tuple[float, ...]  # len == 2 ** depth

    @property
    def depth(self) -> int:
        return len(self.splits)


# Operations of one ramp in the paper's count: two clip comparisons, the side test, the multiply,
# the addition.
RAMP_OPERATIONS = 5


@dataclasses.dataclass(frozen=True)
class FloatRamp:
    """``slope_below * (max(x, lo) - center)`` for ``x < center``, else
    ``slope_above * (min(x, hi) - center)``, on float32 input ``input`` (lo <= center <= hi)."""

    input: int
    lo: float
    center: float
    hi: float
    slope_below: float
    slope_above: float

    def value(self, x: np.ndarray) -> np.ndarray:
        v = np.asarray(x, dtype=np.float64)[:, self.input]
        d = np.clip(v, self.lo, self.hi) - self.center
        return np.where(d < 0, self.slope_below * d, self.slope_above * d)


@dataclasses.dataclass(frozen=True)
class FloatEnsemble:
    """A float oblivious-tree ensemble whose output is the (unclamped) rate factor."""

    n_inputs: int
    trees: tuple[FloatTree, ...]
    bias: float
    ramps: tuple[FloatRamp, ...] = ()

    def __post_init__(self) -> None:
        for r in self.ramps:
            if not 0 <= r.input < self.n_inputs or not r.lo <= r.center <= r.hi:
                raise BadInputError(f"invalid ramp {r}")
        for i, t in enumerate(self.trees):
            if len(t.leaves) != 1 << t.depth:
                raise BadInputError(f"tree {i}: {len(t.leaves)} leaves for depth {t.depth}")
            if any(not 0 <= s.input < self.n_inputs for s in t.splits):
                raise BadInputError(f"tree {i}: split input out of range")

    @property
    def n_operations(self) -> int:
        """Comparisons plus leaf additions, counted as in the paper (plus the ramps' operations)."""
        return sum(t.depth for t in self.trees) + len(self.trees) + RAMP_OPERATIONS * len(self.ramps)

    @functools.cached_property
    def _tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Flattened split tables (inputs, float32 borders, bit weights) and padded leaf rows.
        Trees shallower than the deepest get never-true padding splits (border +inf)."""
        depth = max((t.depth for t in self.trees), default=0)
        inputs = np.zeros((len(self.trees), depth), dtype=np.int64)
        borders = np.full((len(self.trees), depth), np.inf, dtype=np.float32)
        for t, tree in enumerate(self.trees):
            for k, s in enumerate(tree.splits):
                inputs[t, k], borders[t, k] = s.input, np.float32(s.border)
        leaves = np.zeros((len(self.trees), 1 << depth), dtype=np.float64)
        for t, tree in enumerate(self.trees):
            leaves[t, : len(tree.leaves)] = tree.leaves
        return inputs.reshape(-1), borders.reshape(-1), (1 << np.arange(depth, dtype=np.int64)), leaves

    def leaf_indices(self, x: np.ndarray) -> np.ndarray:
        """Leaf taken per tree, shape (N, n_trees) int64, for float inputs (N, n_inputs)."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        inputs, borders, weights, _ = self._tables
        bits = (x[:, inputs] > borders).reshape(len(x), len(self.trees), len(weights))
        return bits.astype(np.int64) @ weights

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Ensemble output (N,) float64 for float32 inputs (N, n_inputs): bias plus the leaves
        added tree by tree in order, then the ramps (a sequential float64 sum)."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        idx = self.leaf_indices(x)
        leaves = self._tables[3]
        terms = np.empty((len(idx), len(self.trees) + len(self.ramps) + 1), dtype=np.float64)
        terms[:, 0] = self.bias
        terms[:, 1:len(self.trees) + 1] = leaves[np.arange(len(self.trees)), idx]
        for k, r in enumerate(self.ramps):
            terms[:, len(self.trees) + 1 + k] = r.value(x)
        return np.cumsum(terms, axis=1)[:, -1]

    def trees_only(self) -> "FloatEnsemble":
        """The ensemble without its ramps: what a tree library such as treelite can hold."""
        return dataclasses.replace(self, ramps=()) if self.ramps else self

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def from_catboost_json(data: Mapping[str, Any], n_inputs: int, ramps: tuple[FloatRamp, ...] = ()) -> FloatEnsemble:
    """Import a CatBoost JSON export (``save_model(format="json")``) of a regression model; the
    ensemble gets ``ramps`` (CatBoost has no such term: the JSON holds the trees)."""
    try:
        scale, biases = data.get("scale_and_bias", [1.0, [0.0]])
        bias = float(biases[0]) if isinstance(biases, list) else float(biases)
        flat = {
            int(f["feature_index"]): int(f.get("flat_feature_index", f["feature_index"]))
            for f in data.get("features_info", {}).get("float_features", [])
        }
        trees = []
        for t in data.get("oblivious_trees", []):
            splits = []
            for s in t["splits"]:
                if s.get("split_type", "FloatFeature") != "FloatFeature":
                    raise BadInputError(f"unsupported CatBoost split type {s.get('split_type')!r}")
                idx = int(s["float_feature_index"])
                border = float(np.float32(s["border"]))
                splits.append(FloatSplit(flat.get(idx, idx), border))
            leaves = tuple(float(v) * float(scale) for v in t["leaf_values"])
            trees.append(FloatTree(tuple(splits), leaves))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise BadInputError(f"malformed CatBoost JSON model ({type(exc).__name__}: {exc})") from None
    return FloatEnsemble(n_inputs=n_inputs, trees=tuple(trees), bias=bias, ramps=tuple(ramps))


# A predicate on a candidate ensemble (e.g. "its firmware fits a cycle budget"); the fitter keeps
# the longest prefix of the boosted ensemble for which it holds.
FitsBudget = Callable[[FloatEnsemble], bool]
