"""A hand-worked tree model whose ensemble sums land exactly on the factor clamp's bounds, shared
by the observable-vector tests (tests/fxp) and the mutation-analysis tests (tests/verify)."""

from __future__ import annotations

from rlcc import formats as fmt
from rlcc.fxp.model import FxConstants, FxModel, Split, Tree
from rlcc.spec import Feature, ObservationSpec

SPEC = ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2)


def bound_model(spec: ObservationSpec = SPEC) -> FxModel:
    """Two trees whose sums hit the clamp bounds exactly: with X = hi - bias and Y = lo - hi,
    tree 0 (delta[t] > 0) adds X, tree 1 (prev_action[t-1] > 70000) adds Y, so the sums are bias
    (t0 leaf 0, t1 leaf 0), hi (t0 leaf 1, t1 leaf 0), bias + Y < lo (t0 leaf 0, t1 leaf 1) and lo
    (both leaves 1)."""
    c = FxConstants.from_spec(spec)
    lo, hi, bias = c.clamp_min_q16, c.clamp_max_q16, fmt.FACTOR_ONE
    trees = (Tree((Split(3, ">", 0, 0.0),), (0, hi - bias)), Tree((Split(0, ">", 70000, 0.0),), (0, lo - hi)))
    return FxModel(spec, c, trees, bias=bias)
