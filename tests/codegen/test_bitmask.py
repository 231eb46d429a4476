"""The bit-parallel tree plan (``rlcc.codegen.bitmask``): bucketing each input once against its
sorted cuts and ORing the buckets' split-bit words gives every tree's golden leaf index."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_models import SYNTHETIC_SPEC, random_model, tiny_model

from rlcc.codegen import bitmask
from rlcc.fxp import golden
from rlcc.fxp.model import INT32_MAX, INT32_MIN, FxModel, Split, Tree


def _probe_inputs(model: FxModel, n_random: int, seed: int) -> np.ndarray:
    """Every threshold and its neighbours on its own input (others random), the int32 extremes,
    and random inputs."""
    rng = np.random.default_rng(seed)
    w = model.spec.student_width
    rows = []
    for tree in model.trees:
        for s in tree.splits:
            for d in (-1, 0, 1):
                x = rng.integers(-2**20, 2**20, w)
                x[s.input] = min(max(s.threshold + d, INT32_MIN), INT32_MAX)
                rows.append(x)
    rows += [np.full(w, INT32_MIN), np.full(w, INT32_MAX)]
    rows += list(rng.integers(-2**20, 2**20, (n_random, w)))
    return np.array(rows, dtype=np.int64)


def _check(model: FxModel) -> None:
    x = _probe_inputs(model, 300, 1)
    total, want = golden.eval_trees(model, x)
    for branch_free in (False, True):
        p = bitmask.plan(model, branch_free)
        for row, leaves in zip(x, want):
            assert bitmask.leaf_index(p, [int(v) for v in row]) == [int(v) for v in leaves], (branch_free, row)
    grouped = bitmask.plan(model, group_bits=bitmask.GROUP_INDEX_BITS)
    for row, want_sum in zip(x, total):  # the groups' tables of sums give the golden sum, bit for bit
        assert model.bias + bitmask.group_sum(grouped, [int(v) for v in row]) == int(want_sum), row


@pytest.mark.parametrize("seed", range(4))
def test_leaf_indices_equal_golden_on_random_models(seed):
    _check(random_model(SYNTHETIC_SPEC, n_trees=6, depth=4, seed=seed))


def test_less_than_splits_and_extreme_thresholds():
    """``x < t`` cuts at t - 1; ``x < INT32_MIN`` is never true and ``x > INT32_MAX`` never on int32."""
    base = tiny_model()
    spec = base.spec
    splits = (Split(0, "<", 100, 0.0), Split(0, ">", 99, 0.0), Split(1, "<", INT32_MIN, 0.0), Split(1, ">", INT32_MAX, 0.0))
    trees = (Tree(splits, tuple(range(16))), Tree((Split(0, "<", INT32_MAX, 0.0),), (5, 7)))
    model = FxModel(spec=spec, constants=base.constants, trees=trees, bias=base.bias, provenance={})
    _check(model)


def test_fields_do_not_straddle_words_and_binary_search_pads():
    """Seventeen depth-4 trees need 68 bits: two words, no field across a word boundary; an input
    with more cuts than the compare-sum limit is binary-searched: by nested comparisons over its
    cuts + 1 buckets, or, branch-free, over 2^steps - 1 padded cuts."""
    model = random_model(SYNTHETIC_SPEC, n_trees=17, depth=4, seed=7)
    p, flat = bitmask.plan(model), bitmask.plan(model, branch_free=True)
    assert p.n_words == flat.n_words == 2
    assert all(f.offset + f.width <= bitmask.WORD_BITS for f in p.fields)
    searched = [b for b in p.inputs if len(b.cuts) > bitmask.LINEAR_MAX_CUTS]
    assert searched and all(b.search == "branch" and len(b.masks[0]) == len(b.cuts) + 1 for b in searched)
    assert all(b.search == "sum" for b in p.inputs if len(b.cuts) <= bitmask.LINEAR_MAX_CUTS)
    padded = [b for b in flat.inputs if b.search == "table"]
    assert len(padded) == len(searched)
    assert all(len(b.padded_cuts) == (1 << b.search_steps) - 1 >= len(b.cuts) for b in padded)
    assert all(len(b.masks[0]) == len(b.padded_cuts) + 1 for b in padded)
    _check(model)


def test_leaf_groups_pair_adjacent_fields_within_a_word():
    """Depth-4 trees pair up (8 index bits) in tree order, never across a word boundary; one tree
    per group without group bits. Seventeen trees: word 0 holds 16 fields (8 pairs), word 1 one."""
    model = random_model(SYNTHETIC_SPEC, n_trees=17, depth=4, seed=7)
    p = bitmask.plan(model, group_bits=bitmask.GROUP_INDEX_BITS)
    assert [g.trees for g in p.groups] == [(2 * k, 2 * k + 1) for k in range(8)] + [(16,)]
    assert [(g.word, g.offset, g.width, len(g.entries)) for g in p.groups][-2:] == [(0, 56, 8, 256), (1, 0, 4, 16)]
    for g in p.groups:
        for e, v in enumerate(g.entries):
            assert v == sum(model.trees[t].leaves[g.leaf(e, k)] for k, t in enumerate(g.trees))
    single = bitmask.plan(model)
    assert not single.grouped and [g.trees for g in single.groups] == [(t,) for t in range(17)]



def _with_ramps(model: FxModel) -> FxModel:
    """``model`` with a ramp on each of its first two inputs that trees split on (slopes of both
    signs, one center at 0, one inside the int32 line away from any cut)."""
    import dataclasses

    from rlcc.fxp.model import Ramp

    used = sorted({s.input for t in model.trees for s in t.splits})[:2]
    ramps = (Ramp(used[0], -1258, 0, 1258, 4752, -2770, 10), Ramp(used[1], 64225, 65536, 66847, -550, 716, 10))
    return dataclasses.replace(model, ramps=ramps)


@pytest.mark.parametrize("seed", range(3))
def test_folded_ramps_equal_golden(seed):
    """Ramps folded into their inputs' searches: every bucket lies in one piece of its ramp, and the
    pieces give the golden ramp terms (at each ramp's ends and center and their neighbours, and
    random inputs); the trees' leaf indices are unchanged by the ramps' cuts."""
    model = _with_ramps(random_model(SYNTHETIC_SPEC, n_trees=6, depth=4, seed=seed))
    p = bitmask.plan(model, group_bits=bitmask.GROUP_INDEX_BITS, fold_ramps=True)
    assert p.folded and {b.ramp for b in p.inputs if b.ramp is not None} == {0, 1}
    x = _probe_inputs(model, 300, seed)
    rng = np.random.default_rng(seed)
    for r in model.ramps:
        for v in (r.lo, r.center, r.hi):
            for d in (-2, -1, 0, 1, 2):
                row = rng.integers(-2**20, 2**20, model.spec.student_width)
                row[r.input] = v + d
                x = np.vstack([x, row])
    _, want_leaves = golden.eval_trees(model, x)
    want = np.sum(golden.ramp_terms(golden.NUMPY, model, [x[:, i] for i in range(x.shape[1])]), axis=0)
    for row, leaves, ramps in zip(x, want_leaves, want):
        ints = [int(v) for v in row]
        assert bitmask.leaf_index(p, ints) == [int(v) for v in leaves]
        assert bitmask.ramp_sum(p, model, ints) == int(ramps), row


def test_ramps_fold_only_where_every_one_can():
    """No fold for the branch-free search. A ramp on an input no split uses folds into a search of
    its own cuts alone (no split bits, only the ramp's piece), equal to the golden ramp terms."""
    import dataclasses

    model = _with_ramps(random_model(SYNTHETIC_SPEC, n_trees=6, depth=4, seed=0))
    assert not bitmask.plan(model, branch_free=True, fold_ramps=True).folded
    trees = tuple(t for t in model.trees if all(s.input != model.ramps[0].input for s in t.splits))
    assert trees and len(trees) < len(model.trees)
    lone = dataclasses.replace(model, trees=trees)  # ramp 0's input no longer split on
    p = bitmask.plan(lone, group_bits=bitmask.GROUP_INDEX_BITS, fold_ramps=True)
    assert p.folded
    only = next(b for b in p.inputs if b.input == lone.ramps[0].input)
    assert only.ramp == 0 and not only.words() and all(not c.uses for c in only.cuts) and len(only.cuts) == 3
    r, rng = lone.ramps[0], np.random.default_rng(5)
    x = rng.integers(-2**20, 2**20, (200, lone.spec.student_width))
    x[:15, r.input] = [v + d for v in (r.lo, r.center, r.hi) for d in (-2, -1, 0, 1, 2)]
    want = np.sum(golden.ramp_terms(golden.NUMPY, lone, [x[:, i] for i in range(x.shape[1])]), axis=0)
    for row, ramps in zip(x, want):
        assert bitmask.ramp_sum(p, lone, [int(v) for v in row]) == int(ramps), row
    assert bitmask.plan(model, fold_ramps=True).folded


def test_the_folded_sum_takes_the_inputs_it_reads_in_registers():
    """The default style's folded sum takes the inputs its searches read as arguments, in index
    order, when they are int32 and fit a0-a7; otherwise (no folding, int64 inputs, more inputs
    than argument registers) a pointer to the input array."""
    import dataclasses

    from rlcc.codegen import context as C
    from rlcc.codegen.generate import render_sources

    model = _with_ramps(random_model(SYNTHETIC_SPEC, n_trees=6, depth=4, seed=1))
    passed = C.sum_register_inputs(model)
    plan = bitmask.plan(model, *C.BITMASK_STYLES["bitmask"])
    assert plan.folded and passed == tuple(b.input for b in plan.inputs)
    texts = render_sources(model, tree_style="bitmask")[0]["c"]
    assert "firmware_tree_sum(const firmware_input_t x[" not in texts
    assert texts.count(" /* a0 */") == 2 and texts.count(f" /* a{len(passed) - 1} */") == 2  # definition and call
    assert C.sum_register_inputs(dataclasses.replace(model, ramps=())) is None  # nothing folded: the array
    assert C._register_inputs(model, dataclasses.replace(plan, inputs=plan.inputs * 9)) is None  # past a7
