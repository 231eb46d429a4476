"""The golden model on z3 bit-vectors: ``rlcc.fxp.golden.event_core`` evaluated with :class:`Z3Ops`.

No second copy of the semantics: the same function that computes the golden vectors builds the
formula. Values are 64-bit two's-complement bit-vectors, which is exact because every golden
intermediate fits int64 (the numpy evaluator relies on the same bound).
"""

from __future__ import annotations

from typing import Any, Sequence

import z3

from rlcc.fxp.golden import EventOutcome, event_core
from rlcc.fxp.model import FxModel

WIDTH = 64


def _bv(v: Any) -> z3.BitVecRef:
    return v if isinstance(v, z3.BitVecRef) else z3.BitVecVal(int(v), WIDTH)


class Z3Ops:
    """``IntOps`` over 64-bit z3 bit-vectors; ``sqrt_rate`` is the uninterpreted ``sqrt_fn``.

    The square root is left uninterpreted on purpose: the proof abstracts the firmware's
    out-of-line ``sqrt_rate`` with the same function, and checks that function separately.
    """

    def __init__(self, sqrt_fn: z3.FuncDeclRef) -> None:
        self.sqrt_fn = sqrt_fn

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Any:
        if isinstance(cond, bool):
            return a if cond else b
        return z3.If(cond, _bv(a), _bv(b))

    @staticmethod
    def both(a: Any, b: Any) -> Any:
        return z3.And(a, b)

    @staticmethod
    def negate(cond: Any) -> Any:
        return z3.Not(cond)

    @staticmethod
    def to_int(cond: Any) -> Any:
        return z3.If(cond, z3.BitVecVal(1, WIDTH), z3.BitVecVal(0, WIDTH))

    @staticmethod
    def lookup(table: Sequence[int], index: Any) -> Any:
        """A balanced multiplexer on the index bits (the index is an OR of comparison bits)."""
        n = len(table)
        depth = max(1, (n - 1).bit_length())
        level = [z3.BitVecVal(int(v), WIDTH) for v in table]
        for bit in range(depth):
            sel = z3.Extract(bit, bit, _bv(index)) == 1
            level = [z3.If(sel, level[i + 1], level[i]) if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
        return level[0]

    def sqrt_rate(self, rate: Any) -> Any:
        return z3.ZeroExt(WIDTH - 32, self.sqrt_fn(z3.Extract(31, 0, _bv(rate))))


def symbolic_event(model: FxModel, ctx: Sequence[z3.BitVecRef], ev: Sequence[z3.BitVecRef],
                   sqrt_fn: z3.FuncDeclRef) -> EventOutcome:
    """Golden outcome for symbolic 32-bit context and event words (outputs as 32-bit terms)."""
    ops = Z3Ops(sqrt_fn)
    wide = lambda w: z3.ZeroExt(WIDTH - 32, w)  # noqa: E731 - words are unsigned 32-bit
    out = event_core(ops, model, [wide(w) for w in ctx], [wide(w) for w in ev])
    narrow = lambda v: z3.Extract(31, 0, _bv(v))  # noqa: E731
    return EventOutcome(
        ctx=[narrow(v) for v in out.ctx],
        rate=narrow(out.rate),
        rtt_req=narrow(out.rtt_req),
        is_rtt=out.is_rtt,
        inputs=out.inputs,
        leaf_index=out.leaf_index,
    )
