"""The switch agent's golden model on z3 bit-vectors: a twin of ``rlcc.fxp.switch_agent``.

``rlcc-verify --prove`` (``rlcc.kinds.switch_agent.prove``) compares the firmware's symbolic outputs
with these terms. Each function mirrors its numpy namesake: :func:`collect` (u32 statistics,
the marked-bytes saturation, the utilization as the high word of one u32 x u32 product clamped
at 1.0), :func:`shift_window`, :func:`scores` (unsigned ``x > threshold`` per level, int32
sums: ``ClassEnsemble`` bounds every partial sum below 2^31, so 32-bit arithmetic is the numpy
int64 value) and :func:`argmax_first` (ties to the lowest class). Inputs and outputs are 32-bit
terms holding the u32 values the numpy model holds in int64.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import z3

from rlcc.class_trees import ClassEnsemble, ClassTree
from rlcc.kinds.switch_agent.vectors import CTX_ACTION, CTX_HIST, hist_words
from rlcc.switch_spec import STAT_MAX, UTIL_MUL_SHIFT, UTIL_ONE, SwitchAgentSpec


def _bv(v: int, width: int = 32) -> z3.BitVecRef:
    return z3.BitVecVal(v, width)


def _min_u64(x: z3.BitVecRef, cap: int) -> z3.BitVecRef:
    return z3.If(z3.UGT(x, _bv(cap, 64)), _bv(cap, 64), x)


def util_q16(count_bytes: z3.BitVecRef, util_mul: z3.BitVecRef) -> z3.BitVecRef:
    """min((bytes * util_mul) >> 32, 1.0 in Q16) of u32 terms, the product in 64 bits."""
    prod = z3.ZeroExt(32, count_bytes) * z3.ZeroExt(32, util_mul)
    return z3.Extract(31, 0, _min_u64(z3.LShR(prod, UTIL_MUL_SHIFT), UTIL_ONE))


def collect(spec: SwitchAgentSpec, qlen_bytes: Any, tx_bytes: Any, marked_pkts: Any, action: Any,
            util_mul: Any) -> list[z3.BitVecRef]:
    """This interval's features (32-bit terms) in the spec's feature order."""
    marked = z3.Extract(31, 0, _min_u64(z3.ZeroExt(32, marked_pkts) * _bv(spec.packet_bytes, 64), STAT_MAX))
    per = {
        "qlen": lambda: qlen_bytes,
        "tx_util": lambda: util_q16(tx_bytes, util_mul),
        "mark_util": lambda: util_q16(marked, util_mul),
        "ecn_action": lambda: action,
    }
    return [per[name]() for name in spec.features]


def shift_window(spec: SwitchAgentSpec, window: list[Any], step: list[Any]) -> list[Any]:
    return list(window[spec.n_features :]) + list(step)


def split_bit(x: z3.BitVecRef, threshold: int) -> z3.BoolRef:
    """``x > threshold`` for a u32 ``x`` and the IR's int threshold (-1: always true)."""
    if threshold < 0:
        return z3.BoolVal(True)
    if threshold >= STAT_MAX:
        return z3.BoolVal(False)
    return z3.UGT(x, _bv(threshold))


def _tree_row(tree: ClassTree, x: list[Any], c: int) -> z3.BitVecRef:
    """Class ``c``'s leaf entry of ``tree``: a multiplexer over the level bits (level k = bit k)."""
    rows: list[Any] = [_bv(r[c]) for r in tree.leaves]
    for k, s in enumerate(tree.splits):  # pair leaves differing in bit k
        bit = split_bit(x[s.input], s.threshold)
        rows = [z3.If(bit, rows[i + 1], rows[i]) for i in range(0, len(rows), 2)]
    return rows[0]


def leaf_index(tree: ClassTree, x: list[Any]) -> z3.BitVecRef | None:
    """The leaf index as a depth-bit term (level k = bit k); None for a depth-0 tree."""
    if not tree.splits:
        return None
    bits = [z3.If(split_bit(x[s.input], s.threshold), z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)) for s in tree.splits]
    return bits[0] if len(bits) == 1 else z3.Concat(*reversed(bits))


# (tree number, tree, window, class) -> that tree's entry for the class (None: the multiplexer).
RowTerm = Callable[[int, ClassTree, list[Any], int], "z3.BitVecRef | None"]


def scores(model: ClassEnsemble, x: list[Any], row: RowTerm | None = None) -> list[z3.BitVecRef]:
    """Per class: bias + the trees' leaf entries, int32."""
    out = []
    for c in range(model.n_classes):
        s: z3.BitVecRef = _bv(model.bias[c])
        for t, tree in enumerate(model.trees):
            entry = row(t, tree, x, c) if row else None
            s = s + (_tree_row(tree, x, c) if entry is None else entry)
        out.append(s)
    return out


def argmax_first(s: list[Any]) -> z3.BitVecRef:
    """The first class of the largest (signed) score."""
    best, top = _bv(0), s[0]
    for c in range(1, len(s)):
        gt = s[c] > top
        best, top = z3.If(gt, _bv(c), best), z3.If(gt, s[c], top)
    return best


@dataclasses.dataclass
class SymbolicDecision:
    """One ``sw_agent_on_interval`` of the golden agent, as terms."""

    window: list[z3.BitVecRef]  # the classifier's input
    scores: list[z3.BitVecRef]
    action: z3.BitVecRef
    ecn: list[z3.BitVecRef]  # kmin_bytes, kmax_bytes, pmax_q16
    ctx: list[z3.BitVecRef]  # the context after the call


def symbolic_decision(spec: SwitchAgentSpec, model: ClassEnsemble, ctx: list[Any], qlen_bytes: Any, tx_bytes: Any,
                      marked_pkts: Any, util_mul: Any, row: RowTerm | None = None) -> SymbolicDecision:
    """The golden decision (``rlcc.kinds.switch_agent.vectors.expected`` for one record) on terms;
    ``row`` replaces the leaf multiplexers (the prover's abstraction of the leaf tables)."""
    hw, F = hist_words(spec), spec.n_features
    window = [_bv(0)] * F + list(ctx[CTX_HIST : CTX_HIST + hw])
    feats = collect(spec, qlen_bytes, tx_bytes, marked_pkts, ctx[CTX_ACTION], util_mul)
    new = shift_window(spec, window, feats)
    s = scores(model, new, row)
    action = argmax_first(s)
    out = list(ctx)
    out[CTX_HIST : CTX_HIST + hw] = new[F:]
    out[CTX_ACTION] = action
    ecn = []
    for field in ("kmin_bytes", "kmax_bytes", "pmax_q16"):
        v: z3.BitVecRef = _bv(getattr(spec.actions[-1], field))
        for a in reversed(range(len(spec.actions) - 1)):
            v = z3.If(action == a, _bv(getattr(spec.actions[a], field)), v)
        ecn.append(v)
    return SymbolicDecision(new, s, action, ecn, out)
