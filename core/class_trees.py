"""The integer classifier IR: oblivious trees over integer device features, one score per class.

A switch agent (``rlcc.switch_spec``) picks an action index; its distilled student is a CatBoost
multiclass ensemble whose borders became exact integer thresholds on the device features and
whose leaf vectors became integers with ``leaf_frac_bits`` fractional bits. Semantics (the golden
model ``rlcc.fxp.switch_agent`` and the generated C implement exactly this):

``bit_k = x[input_k] > threshold_k`` (unsigned), ``leaf = OR_k bit_k << k``,
``score[c] = bias[c] + sum_t leaves_t[leaf_t][c]`` in int32, action = the first c of the largest
score. ``threshold = -1`` is an always-true split (a border below the feature's range).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np

from rlcc.errors import BadInputError

# Leaf scores are int32 sums: |bias| + trees x max|leaf| must stay below 2^31.
SCORE_LIMIT = (1 << 31) - 1


@dataclasses.dataclass(frozen=True)
class IntSplit:
    input: int
    threshold: int  # x[input] > threshold; -1: always true


@dataclasses.dataclass(frozen=True)
class ClassTree:
    splits: tuple[IntSplit, ...]
    leaves: tuple[tuple[int, ...], ...]  # 2^depth rows of n_classes scores

    @property
    def depth(self) -> int:
        return len(self.splits)


@dataclasses.dataclass(frozen=True)
class ClassEnsemble:
    n_inputs: int
    n_classes: int
    trees: tuple[ClassTree, ...]
    bias: tuple[int, ...]
    leaf_frac_bits: int

    def __post_init__(self) -> None:
        if len(self.bias) != self.n_classes or self.n_classes < 2:
            raise BadInputError(f"classifier: {len(self.bias)} biases for {self.n_classes} classes")
        worst = max((abs(b) for b in self.bias), default=0)
        for i, t in enumerate(self.trees):
            if len(t.leaves) != 1 << t.depth or any(len(r) != self.n_classes for r in t.leaves):
                raise BadInputError(f"classifier tree {i}: leaf table does not match depth {t.depth} x {self.n_classes} classes")
            if any(not 0 <= s.input < self.n_inputs or s.threshold < -1 for s in t.splits):
                raise BadInputError(f"classifier tree {i}: split input or threshold out of range")
            worst += max(abs(v) for r in t.leaves for v in r)
        if worst > SCORE_LIMIT:
            raise BadInputError(f"classifier: scores may reach {worst}, beyond int32")

    @property
    def max_depth(self) -> int:
        return max((t.depth for t in self.trees), default=0)

    @property
    def n_operations(self) -> int:
        """Comparisons, plus one vector add per tree, plus the argmax's comparisons."""
        return sum(t.depth for t in self.trees) + len(self.trees) * self.n_classes + self.n_classes - 1

    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(inputs (T, D), thresholds (T, D) int64, leaves (T, 2^D, C) int64), shallower trees
        padded with never-true splits (threshold 2^63 - 1) and their leaves repeated."""
        depth, T = self.max_depth, len(self.trees)
        inputs = np.zeros((T, depth), np.int64)
        thr = np.full((T, depth), np.iinfo(np.int64).max, np.int64)
        leaves = np.zeros((T, 1 << depth, self.n_classes), np.int64)
        for t, tree in enumerate(self.trees):
            for k, s in enumerate(tree.splits):
                inputs[t, k], thr[t, k] = s.input, s.threshold
            rows = np.asarray(tree.leaves, np.int64)
            leaves[t] = np.tile(rows, ((1 << depth) // len(rows), 1))
        return inputs, thr, leaves

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_inputs": self.n_inputs, "n_classes": self.n_classes, "leaf_frac_bits": self.leaf_frac_bits,
            "bias": list(self.bias),
            "trees": [{"splits": [[s.input, s.threshold] for s in t.splits], "leaves": [list(r) for r in t.leaves]}
                      for t in self.trees],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ClassEnsemble":
        try:
            trees = tuple(
                ClassTree(tuple(IntSplit(int(i), int(th)) for i, th in t["splits"]),
                          tuple(tuple(int(v) for v in row) for row in t["leaves"]))
                for t in data["trees"]
            )
            return cls(int(data["n_inputs"]), int(data["n_classes"]), trees,
                       tuple(int(b) for b in data["bias"]), int(data["leaf_frac_bits"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise BadInputError(f"malformed classifier ({type(exc).__name__}: {exc})") from None
