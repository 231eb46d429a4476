"""An independent oracle for the golden switch-agent classifier (rlcc.fxp.switch_agent.scores /
decide): the same ensemble rebuilt as a treelite multiclass model with leaf vectors and run with
GTIL in float64 (exact for u32 inputs and int32 score sums), on the firmware's verification inputs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "verify"))
from switch_models import paper_spec, random_ensemble  # noqa: E402

from rlcc.class_trees import ClassEnsemble  # noqa: E402
from rlcc.kinds.switch_agent import vectors as sv  # noqa: E402
from rlcc.fxp.switch_agent import decide, scores  # noqa: E402

treelite = pytest.importorskip("treelite")


def to_treelite(model: ClassEnsemble):
    """Each oblivious tree as a full binary tree; ``x <= t`` goes left, so the right child is bit 1."""
    from treelite.model_builder import Metadata, ModelBuilder, PostProcessorFunc, TreeAnnotation

    C, T = model.n_classes, len(model.trees)
    builder = ModelBuilder(
        threshold_type="float64", leaf_output_type="float64",
        metadata=Metadata(num_feature=model.n_inputs, task_type="kMultiClf", average_tree_output=False, num_target=1,
                          num_class=[C], leaf_vector_shape=(1, C)),
        tree_annotation=TreeAnnotation(num_tree=T, target_id=[0] * T, class_id=[-1] * T),
        postprocessor=PostProcessorFunc(name="identity_multiclass"),
        base_scores=[float(b) for b in model.bias],
    )
    for tree in model.trees:
        builder.start_tree()
        _emit(builder, tree, 0, 0, 0)
        builder.end_tree()
    return builder.commit()


def _emit(builder, tree, level: int, node: int, leaf: int) -> int:
    builder.start_node(node)
    if level == tree.depth:
        builder.leaf([float(v) for v in tree.leaves[leaf]])
        builder.end_node()
        return node + 1
    s = tree.splits[level]
    left = node + 1
    right = left + (1 << (tree.depth - level)) - 1
    builder.numerical_test(s.input, float(s.threshold), default_left=True, opname="<=",
                           left_child_key=left, right_child_key=right)
    builder.end_node()
    _emit(builder, tree, level + 1, left, leaf)
    return _emit(builder, tree, level + 1, right, leaf | (1 << level))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_golden_scores_match_gtil(seed):
    spec = paper_spec()
    model = random_ensemble(spec, seed=seed)
    v = sv.verification_set(spec, model, seed=seed, n_random=2000)
    x = v.window[v.action != sv.NO_ACTION]
    got = treelite.gtil.predict(to_treelite(model), x.astype(np.float64), nthread=1)
    got = np.asarray(got, np.float64).reshape(len(x), model.n_classes)
    assert np.array_equal(got, scores(model, x).astype(np.float64))
    assert np.array_equal(np.argmax(got, axis=1), decide(model, x))
