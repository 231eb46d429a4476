"""An independent float reference: the same ensemble rebuilt in treelite and run with GTIL.

treelite has no CatBoost loader, so each oblivious tree becomes a full binary tree of depth d
whose node at level k tests the level-k split. treelite sends ``x <= t`` left, so with
``opname="<="`` the right child is CatBoost's bit 1; the leaf reached equals the IR's index.
"""

from __future__ import annotations

import numpy as np

from rlcc.tree_ir import FloatEnsemble, FloatTree


def to_treelite(ensemble: FloatEnsemble, dtype: str = "float32"):
    """Build a treelite model (threshold and leaf types both ``dtype``) of a tree-only ensemble
    (ramps are not trees: ``FloatEnsemble.trees_only``; callers add the ramps themselves)."""
    if ensemble.ramps:
        raise ValueError("treelite holds trees only: pass ensemble.trees_only()")
    from treelite.model_builder import Metadata, ModelBuilder, PostProcessorFunc, TreeAnnotation

    trees = ensemble.trees or (FloatTree((), (0.0,)),)  # treelite needs at least one tree
    builder = ModelBuilder(
        threshold_type=dtype,
        leaf_output_type=dtype,
        metadata=Metadata(
            num_feature=ensemble.n_inputs,
            task_type="kRegressor",
            average_tree_output=False,
            num_target=1,
            num_class=[1],
            leaf_vector_shape=(1, 1),
        ),
        tree_annotation=TreeAnnotation(num_tree=len(trees), target_id=[0] * len(trees), class_id=[0] * len(trees)),
        postprocessor=PostProcessorFunc(name="identity"),
        base_scores=[ensemble.bias],
    )
    for tree in trees:
        builder.start_tree()
        _emit(builder, tree, level=0, node=0, leaf=0)
        builder.end_tree()
    return builder.commit()


def _emit(builder, tree: FloatTree, level: int, node: int, leaf: int) -> int:
    """Emit node ``node`` (level ``level``, bits so far ``leaf``); return the next free key."""
    builder.start_node(node)
    if level == tree.depth:
        builder.leaf(float(tree.leaves[leaf]))
        builder.end_node()
        return node + 1
    s = tree.splits[level]
    left, right = node + 1, None
    # Keys: left subtree first (depth-first), then the right subtree.
    size = (1 << (tree.depth - level)) - 1  # nodes in each child subtree
    right = left + size
    builder.numerical_test(
        s.input, float(np.float32(s.border)), default_left=True, opname="<=",
        left_child_key=left, right_child_key=right,
    )
    builder.end_node()
    _emit(builder, tree, level + 1, left, leaf)
    return _emit(builder, tree, level + 1, right, leaf | (1 << level))


def gtil_predict(ensemble: FloatEnsemble, x: np.ndarray, dtype: str = "float32") -> np.ndarray:
    """Ensemble output (N,) float64 computed by treelite's GTIL."""
    import treelite

    model = to_treelite(ensemble, dtype)
    x = np.ascontiguousarray(x, dtype=np.float32 if dtype == "float32" else np.float64)
    out = treelite.gtil.predict(model, x, nthread=1)
    return np.asarray(out, dtype=np.float64).reshape(len(x))


def multiclass_to_treelite(data: dict, n_features: int):
    """A treelite model of a CatBoost MultiClass JSON export, straight from the JSON (float32
    borders and leaf vectors): the independent reference for the integer switch-agent classifier."""
    from treelite.model_builder import Metadata, ModelBuilder, PostProcessorFunc, TreeAnnotation

    scale, bias = data["scale_and_bias"]
    k = len(bias)
    trees = data["oblivious_trees"] or [{"splits": [], "leaf_values": [0.0] * k}]
    builder = ModelBuilder(
        threshold_type="float32", leaf_output_type="float32",
        metadata=Metadata(num_feature=n_features, task_type="kMultiClf", average_tree_output=False, num_target=1,
                          num_class=[k], leaf_vector_shape=(1, k)),
        tree_annotation=TreeAnnotation(num_tree=len(trees), target_id=[0] * len(trees), class_id=[-1] * len(trees)),
        postprocessor=PostProcessorFunc(name="identity_multiclass"),
        base_scores=[float(b) for b in bias],
    )
    for t in trees:
        leaves = np.asarray(t["leaf_values"], np.float64).reshape(-1, k) * scale
        builder.start_tree()
        _emit_vector(builder, t["splits"], leaves, level=0, node=0, leaf=0)
        builder.end_tree()
    return builder.commit()


def _emit_vector(builder, splits: list, leaves: np.ndarray, level: int, node: int, leaf: int) -> None:
    """Oblivious tree -> full binary tree, as ``_emit``: the level-k test sets bit k of the leaf."""
    builder.start_node(node)
    if level == len(splits):
        builder.leaf([float(v) for v in leaves[leaf]])
        builder.end_node()
        return
    s = splits[level]
    left = node + 1
    right = left + (1 << (len(splits) - level)) - 1
    builder.numerical_test(int(s["float_feature_index"]), float(np.float32(s["border"])), default_left=True, opname="<=",
                           left_child_key=left, right_child_key=right)
    builder.end_node()
    _emit_vector(builder, splits, leaves, level + 1, left, leaf)
    _emit_vector(builder, splits, leaves, level + 1, right, leaf | (1 << level))
