"""The small tree ensemble the verifier tests generate firmware from."""

from __future__ import annotations

import numpy as np

from rlcc import formats as fmt
from rlcc.fxp.model import FxConstants, FxModel, Split, Tree
from rlcc.spec import Feature, ObservationSpec

SPEC = ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2)


def small_model(n_trees: int = 10) -> FxModel:
    """``n_trees`` depth-4 trees with thresholds where the example's features live."""
    rng = np.random.default_rng(7)
    typical = [(0.8 * 2**16, 1.25 * 2**16), (-0.5 * 2**16, 0.064 * 2**16)]
    trees = []
    for _ in range(n_trees):
        splits = []
        for _ in range(4):
            inp = int(rng.integers(SPEC.input_width))
            lo, hi = typical[inp % 2]
            splits.append(Split(inp, ">", int(rng.uniform(lo, hi)), 0.0))
        trees.append(Tree(tuple(splits), tuple(int(v) for v in rng.integers(-5000, 5000, 16))))
    return FxModel(SPEC, FxConstants.from_spec(SPEC), tuple(trees), bias=fmt.FACTOR_ONE)
