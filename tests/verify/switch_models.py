"""Random but valid switch-agent classifiers for the firmware tests (deterministic per seed)."""

from __future__ import annotations

import numpy as np

from rlcc.class_trees import ClassEnsemble, ClassTree, IntSplit
from rlcc.switch_spec import SwitchAgentSpec, paper_templates


def paper_spec(**kw) -> SwitchAgentSpec:
    return SwitchAgentSpec(actions=paper_templates(), **kw)


def random_ensemble(spec: SwitchAgentSpec, seed: int = 0, n_trees: int = 10, max_depth: int = 4,
                    leaf_range: int = 1 << 12, min_depth: int = 1) -> ClassEnsemble:
    """Oblivious trees of depth min_depth..max_depth (CatBoost's: all max_depth); thresholds drawn inside each input's range, -1
    (always true) and the range's top included; leaves and biases random int32."""
    rng = np.random.default_rng(seed)
    fmax = np.tile(spec.feature_max(), spec.history)
    trees = []
    for _ in range(n_trees):
        depth = int(rng.integers(min_depth, max_depth + 1))
        splits = []
        for _ in range(depth):
            i = int(rng.integers(spec.input_width))
            r = rng.random()
            if r < 0.08:
                thr = -1
            elif r < 0.12:
                thr = int(fmax[i])
            elif fmax[i] > 1 << 20 and r < 0.6:  # queue depths: log-uniform, like real borders
                thr = int(np.exp(rng.uniform(0, np.log(float(fmax[i])))))
            else:
                thr = int(rng.integers(0, fmax[i] + 1))
            splits.append(IntSplit(i, thr))
        leaves = tuple(tuple(int(v) for v in rng.integers(-leaf_range, leaf_range, spec.n_actions))
                       for _ in range(1 << depth))
        trees.append(ClassTree(tuple(splits), leaves))
    bias = tuple(int(v) for v in rng.integers(-leaf_range, leaf_range, spec.n_actions))
    return ClassEnsemble(spec.input_width, spec.n_actions, tuple(trees), bias, 8)
