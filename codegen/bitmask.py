"""Bit-parallel evaluation of oblivious trees (the ``bitmask`` tree style, QuickScorer family).

Every split of the ensemble is ``x[i] > t`` or ``x[i] < t`` on one input. Per input, the
distinct cut points ``c`` (a split ``x > t`` cuts at ``t``, ``x < t`` at ``t - 1``: ``x < t`` is
``!(x > t - 1)``) split the int32 line into buckets; within a bucket every split on that input has
one value. So the firmware locates each input once among its sorted cuts (``bucket = #{c : x >
c}``, by compare-sum, by a binary search of nested comparisons with the cuts as constants, or, in
the branch-free variant, by a binary search over a table of cuts), reads that bucket's precomputed word of
split bits (bit ``offset_t + k`` = split ``k`` of tree ``t``), ORs the inputs' words together and
reads each tree's leaf index as a bit field of the result: one lookup per tree. The comparisons
stay exact (``x > c`` on the exact cuts), so the result is the oblivious form's, bit for bit.

Adjacent fields may also be read as one: a *leaf group* of trees whose fields lie side by side in
a word (at most ``GROUP_INDEX_BITS`` bits together) has one table indexed by their joint field,
each entry the sum of the group's leaves at that index (exact: the model's bound keeps every
partial sum of leaves inside int32). Two depth-4 trees then cost one lookup of a 256-entry table
instead of two of 16.

A ramp (``rlcc.fxp.model.Ramp``: constant below ``lo`` and above ``hi``, linear on each side of
``center``) may be *folded* into its input's search: ``lo - 1``, ``center - 1`` and ``hi`` become
cuts too (cuts no split uses), so every bucket lies in one of the ramp's four pieces and each
search outcome adds its piece: a constant, or the linear term of its side with no clamp and no
side test left. The comparisons the ramp needs are then the search's. An input no split uses gets
a search of the ramp's cuts alone (no split bits: it only adds the piece).

Cost: per input ``ceil(log2(cuts + 1))`` compares instead of one per split, one table load per input
and word, and two ALU operations per tree to extract its field. The nested comparisons make the cost
depend on the path by a few cycles per input (its depth and its taken branches); the branch-free
variant costs the same for every input, at a load per comparison.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlcc.fxp import golden
from rlcc.fxp.model import INT32_MAX, INT32_MIN, FxModel, Ramp

WORD_BITS = 64  # split bits per word (uint64_t; two registers on RV32)
LINEAR_MAX_CUTS = 2  # up to this many cuts an input is bucketed by compare-sum on immediates, else by binary search (measured best on both targets)
GROUP_INDEX_BITS = 8  # a leaf group's joint field: 2^8 int32 entries (1 KiB), two depth-4 trees per lookup
SEARCHES = ("sum", "branch", "table")  # compare-sum; nested comparisons on constants; branch-free over a table


@dataclasses.dataclass(frozen=True)
class Cut:
    value: int  # bucket boundary: the bucket index counts the cuts with x > value
    uses: tuple[tuple[int, int], ...]  # (tree, level) of every split at this cut


@dataclasses.dataclass(frozen=True)
class RampPiece:
    """A folded ramp's term on one bucket: ``kind`` "lo" or "hi" (x below LO or above HI: the
    constant ``value``), "below" or "above" (the linear term of that side of the center)."""

    kind: str
    value: int = 0


@dataclasses.dataclass(frozen=True)
class InputBuckets:
    """One input's cuts, its search, and per bucket the split bits it sets in each word."""

    input: int
    cuts: tuple[Cut, ...]  # ascending
    search: str  # one of SEARCHES
    search_steps: int  # comparisons on a search path at most (0: compare-sum, one per cut)
    masks: tuple[tuple[int, ...], ...]  # masks[word][bucket]: split bits (padded buckets repeat the last)
    ramp: int | None = None  # the model's ramp folded into this search
    pieces: tuple[RampPiece, ...] = ()  # per bucket, that ramp's term

    @property
    def padded_cuts(self) -> tuple[int, ...]:
        """Cuts of the branch-free binary search: 2^steps - 1 ascending values, padded with INT32_MAX
        (no int32 exceeds it; a wider input above it lands in a padded bucket, whose bits equal the
        last)."""
        n = (1 << self.search_steps) - 1
        return tuple(c.value for c in self.cuts) + (INT32_MAX,) * (n - len(self.cuts))

    def words(self) -> list[int]:
        """The words this input sets bits in."""
        return [w for w, m in enumerate(self.masks) if any(m)]


@dataclasses.dataclass(frozen=True)
class Field:
    word: int
    offset: int  # bit of split 0 of the tree in its word
    width: int  # the tree's depth


@dataclasses.dataclass(frozen=True)
class LeafGroup:
    """Trees whose adjacent fields are read as one index into a table of their leaves' sums."""

    trees: tuple[int, ...]  # ascending, their fields side by side in one word
    word: int
    offset: int  # bit of the first tree's field in the word
    widths: tuple[int, ...]  # each tree's field width (depth), in order
    entries: tuple[int, ...]  # per joint index: the sum of each tree's leaf at its part of the index

    @property
    def width(self) -> int:
        return sum(self.widths)

    def leaf(self, entry: int, k: int) -> int:
        """The leaf index of the group's ``k``-th tree at joint index ``entry``."""
        return (entry >> sum(self.widths[:k])) & ((1 << self.widths[k]) - 1)


@dataclasses.dataclass(frozen=True)
class BitmaskPlan:
    inputs: tuple[InputBuckets, ...]  # inputs with at least one cut, by input index
    fields: tuple[Field, ...]  # per tree
    n_words: int
    leaf_stride: int  # leaves per row of the leaf table (2^max_depth)
    groups: tuple[LeafGroup, ...] = ()  # every tree in one group, in tree order
    folded: bool = False  # every ramp folded into its input's search

    @property
    def grouped(self) -> bool:
        """Whether some lookup reads more than one tree's leaves."""
        return any(len(g.trees) > 1 for g in self.groups)

    @property
    def n_cuts(self) -> int:
        return sum(len(b.cuts) for b in self.inputs)


def _cut_of(op: str, threshold: int) -> int | None:
    """The ``x > c`` cut of a split (None: the split is constant on int32, ``x < INT32_MIN``)."""
    if op == ">":
        return threshold
    return None if threshold == INT32_MIN else threshold - 1


def _bit_in_bucket(op: str, threshold: int, cut_rank: int | None, bucket: int) -> bool:
    """Value of a split for every x of ``bucket`` (x above exactly ``bucket`` cuts)."""
    if cut_rank is None:  # x < INT32_MIN: never
        return False
    above = bucket > cut_rank
    return above if op == ">" else not above


def _fields(model: FxModel) -> tuple[tuple[Field, ...], int]:
    """Each tree's leaf-index field, packed into words without straddling one."""
    fields, word, offset = [], 0, 0
    for tree in model.trees:
        if offset + tree.depth > WORD_BITS:
            word, offset = word + 1, 0
        fields.append(Field(word, offset, tree.depth))
        offset += tree.depth
    return tuple(fields), (fields[-1].word + 1 if fields else 0)


def _group(model: FxModel, fields: tuple[Field, ...], trees: list[int]) -> LeafGroup:
    widths = tuple(fields[t].width for t in trees)
    n = 1 << sum(widths)
    rel = [sum(widths[:k]) for k in range(len(trees))]
    leaves = [tuple(model.trees[t].leaves) + (0,) * ((1 << w) - len(model.trees[t].leaves)) for t, w in zip(trees, widths)]
    entries = tuple(sum(lv[(e >> r) & ((1 << w) - 1)] for lv, r, w in zip(leaves, rel, widths)) for e in range(n))
    return LeafGroup(tuple(trees), fields[trees[0]].word, fields[trees[0]].offset, widths, entries)


def _groups(model: FxModel, fields: tuple[Field, ...], group_bits: int) -> tuple[LeafGroup, ...]:
    """Consecutive trees with adjacent fields, at most ``group_bits`` index bits per group (0: one
    tree per group). Every entry is an int32: the model's own bound (``FxModel.validate``: |bias|
    plus each tree's largest |leaf| below 2^31) bounds any partial sum of leaves."""
    runs: list[list[int]] = []
    for t, f in enumerate(fields):
        last = runs[-1] if runs else None
        if (last is not None and fields[last[-1]].word == f.word
                and sum(fields[u].width for u in last) + f.width <= group_bits):
            last.append(t)
        else:
            runs.append([t])
    return tuple(_group(model, fields, run) for run in runs)


def _ramp_cuts(r: Ramp) -> list[int]:
    """The cuts that put each of the ramp's pieces in buckets of its own (none at the int32 ends)."""
    return [c for c in (r.lo - 1, r.center - 1, r.hi) if INT32_MIN <= c < INT32_MAX]


def _piece(r: Ramp, x: int) -> RampPiece:
    """The ramp's piece at ``x`` (a bucket's largest value)."""
    if x < r.lo or x > r.hi:
        return RampPiece("lo" if x < r.lo else "hi", int(golden.ramp_value(golden.NUMPY, r, np.int64(x))))
    return RampPiece("below" if x < r.center else "above")


def _foldable(model: FxModel, per_input: dict[int, dict[int, list[tuple[int, int]]]], fields: tuple[Field, ...]) -> bool:
    """Whether every ramp can fold: one ramp per input, each input split on by trees whose fields
    share one word (the search's outcome returns that word and adds the piece) or by none (the
    search only adds the piece)."""
    inputs = [r.input for r in model.ramps]
    if not inputs or len(set(inputs)) != len(inputs):
        return False
    for i in inputs:
        words = {fields[t].word for uses in per_input.get(i, {}).values() for t, _ in uses}
        if len(words) > 1:
            return False
    return True


def plan(model: FxModel, branch_free: bool = False, group_bits: int = 0, fold_ramps: bool = False) -> BitmaskPlan:
    """The bucketing of every input and the bit layout of the leaf indices; ``branch_free`` searches
    inputs with many cuts over a padded table instead of by nested comparisons; ``group_bits`` > 0
    reads adjacent trees' fields together (leaf groups of at most that many index bits);
    ``fold_ramps`` folds the ramps into the searches (nested comparisons only, when every ramp can)."""
    fields, n_words = _fields(model)
    per_input: dict[int, dict[int, list[tuple[int, int]]]] = {}
    for t, tree in enumerate(model.trees):
        for k, s in enumerate(tree.splits):
            cut = _cut_of(s.op, s.threshold)
            uses = per_input.setdefault(s.input, {})
            if cut is not None:
                uses.setdefault(cut, []).append((t, k))
    folded = fold_ramps and not branch_free and _foldable(model, per_input, fields)
    ramp_of = {r.input: k for k, r in enumerate(model.ramps)} if folded else {}
    for i, k in ramp_of.items():
        for c in _ramp_cuts(model.ramps[k]):
            per_input.setdefault(i, {}).setdefault(c, [])
    inputs = []
    for i in sorted(i for i, uses in per_input.items() if uses):
        cuts = tuple(Cut(v, tuple(u)) for v, u in sorted(per_input[i].items()))
        search = "branch" if i in ramp_of else "sum" if len(cuts) <= LINEAR_MAX_CUTS else "table" if branch_free else "branch"
        steps = 0 if search == "sum" else len(cuts).bit_length()
        n_buckets = (1 << steps) if search == "table" else len(cuts) + 1
        rank = {c.value: r for r, c in enumerate(cuts)}
        masks = [[0] * n_buckets for _ in range(n_words)]
        for t, tree in enumerate(model.trees):
            f = fields[t]
            for k, s in enumerate(tree.splits):
                if s.input != i:
                    continue
                cut = _cut_of(s.op, s.threshold)
                r = None if cut is None else rank[cut]
                for b in range(n_buckets):
                    if _bit_in_bucket(s.op, s.threshold, r, min(b, len(cuts))):
                        masks[f.word][b] |= 1 << (f.offset + k)
        pieces: tuple[RampPiece, ...] = ()
        if i in ramp_of:
            r = model.ramps[ramp_of[i]]
            pieces = tuple(_piece(r, cuts[b].value if b < len(cuts) else cuts[-1].value + 1) for b in range(n_buckets))
        inputs.append(InputBuckets(i, cuts, search, steps, tuple(tuple(m) for m in masks), ramp_of.get(i), pieces))
    stride = 1 << max((t.depth for t in model.trees), default=0)
    return BitmaskPlan(tuple(inputs), fields, n_words, stride, _groups(model, fields, group_bits), folded)


def leaf_index(p: BitmaskPlan, x: list[int]) -> list[int]:
    """Each tree's leaf index for int inputs ``x`` by the plan (the C's computation, in Python)."""
    words = [0] * p.n_words
    for b in p.inputs:
        bucket = sum(1 for c in b.cuts if x[b.input] > c.value)
        if b.search == "table":
            bucket = sum(1 for c in b.padded_cuts if x[b.input] > c)
        for w in range(p.n_words):
            words[w] |= b.masks[w][min(bucket, len(b.masks[w]) - 1)]
    return [(words[f.word] >> f.offset) & ((1 << f.width) - 1) for f in p.fields]


def group_sum(p: BitmaskPlan, x: list[int]) -> int:
    """The sum of every tree's leaf for int inputs ``x`` read through the leaf groups (the C's
    lookups, in Python; without the bias)."""
    idx = leaf_index(p, x)
    total = 0
    for g in p.groups:
        joint = sum(idx[t] << sum(g.widths[:k]) for k, t in enumerate(g.trees))
        total += g.entries[joint]
    return total


def ramp_sum(p: BitmaskPlan, model: FxModel, x: list[int]) -> int:
    """The folded ramps' terms for int inputs ``x`` by the plan: each bucket's piece (the C's
    computation, in Python; a linear piece is its side's term, unclamped)."""
    total = 0
    for b in p.inputs:
        if b.ramp is None:
            continue
        r, v = model.ramps[b.ramp], x[b.input]
        piece = b.pieces[sum(1 for c in b.cuts if v > c.value)]
        if piece.kind in ("lo", "hi"):
            total += piece.value
        else:
            k = r.k_below if piece.kind == "below" else r.k_above
            m = (abs(v - r.center) * abs(k)) >> r.shift
            total += -m if (piece.kind == "below") == (k > 0) else m
    return total
