"""The golden model on z3 bit-vectors: ``rlcc.fxp.golden.event_core`` evaluated with :class:`Z3Ops`.

No second copy of the semantics: the same function that computes the golden vectors builds the
formula. Values are 64-bit two's-complement bit-vectors, which is exact because every golden
intermediate fits int64 (the numpy evaluator relies on the same bound).

The square root is always an uninterpreted function, and so may be the derived inputs' signed log
(``slog_fn``: to the 21 bits it can occupy) and the ensemble's two partial sums (``sum_fns``:
functions of the input words), matching the firmware's out-of-line functions that the proof
abstracts the same way and checks on its own; the wide products may be one opaque product of two
32-bit operands (``opaque_mul``), the one the proof reads the firmware's inline multiplies as; the
ramps (``ramp_fns``: each to its term's bits) only where any term will do (the reachable rates).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import z3

from rlcc.derived import SLOG_BITS, slog_int
from rlcc.fxp.golden import EventOutcome, event_core, ramp_value
from rlcc.fxp.model import FxModel, Ramp

WIDTH = 64


def _bv(v: Any) -> z3.BitVecRef:
    return v if isinstance(v, z3.BitVecRef) else z3.BitVecVal(int(v), WIDTH)


class Z3Ops:
    """``IntOps`` over 64-bit z3 bit-vectors; ``sqrt_rate`` is the uninterpreted ``sqrt_fn``.

    The square root is left uninterpreted on purpose: the proof abstracts the firmware's
    out-of-line ``sqrt_rate`` with the same function, and checks that function separately.
    """

    def __init__(self, sqrt_fn: z3.FuncDeclRef, obligations: list[tuple[str, Any]] | None = None,
                 slog_fn: z3.FuncDeclRef | None = None, ramp_fns: Sequence[z3.FuncDeclRef] | None = None,
                 sum_fns: SumFunctions | None = None, opaque_mul: Callable[[z3.BitVecRef, z3.BitVecRef], z3.BitVecRef] | None = None) -> None:
        self.sqrt_fn = sqrt_fn
        self.opaque_mul = opaque_mul
        self.sum_fns = sum_fns
        self.slog_fn = slog_fn
        self.ramp_fns = ramp_fns
        self.obligations = obligations if obligations is not None else []

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

    def slog(self, d: Any) -> Any:
        if self.slog_fn is None:
            return slog_int(self, _bv(d))
        # the abstraction takes an int32 operand: that it is one is an obligation of the proof
        self.obligations.append(("golden slog operand within int32",
                                 _bv(d) != z3.SignExt(WIDTH - 32, z3.Extract(31, 0, _bv(d)))))
        return z3.SignExt(WIDTH - SLOG_BITS, self.slog_fn(z3.Extract(31, 0, _bv(d))))

    def ramp(self, i: int, r: Ramp, x: Any) -> Any:
        if self.ramp_fns is None:
            return ramp_value(self, r, _bv(x))
        # the abstraction takes an int32 operand and returns the term's own bits
        self.obligations.append((f"golden ramp {i} operand within int32",
                                 _bv(x) != z3.SignExt(WIDTH - 32, z3.Extract(31, 0, _bv(x)))))
        return z3.SignExt(WIDTH - r.term_bits, self.ramp_fns[i](z3.Extract(31, 0, _bv(x))))

    @staticmethod
    def add_terms(terms: Sequence[Any], bound: int) -> Any:
        """The sum in 32 bits, sign-extended, when ``bound`` < 2^31 (then no partial sum wraps and
        this equals the 64-bit sum): the firmware's own int32 additions, which the solver then
        matches term by term instead of relating a 32-bit to a 64-bit adder chain."""
        if bound >= 2**31:
            total = _bv(terms[0])
            for t in terms[1:]:
                total = total + _bv(t)
            return total
        low = [z3.Extract(31, 0, _bv(t)) for t in terms]
        total = low[0]
        for t in low[1:]:
            total = total + t
        return z3.SignExt(WIDTH - 32, total)

    def ensemble_sum(self, x: Sequence[Any], tree_terms: Sequence[Any], ramp_terms: Sequence[Any], bound: int) -> Any:
        """With ``sum_fns``: the trees' and the ramps' sums as their uninterpreted functions of the
        input words, added in 32 bits (what the firmware's two out-of-line sums compute, each proven
        alone; 32-bit addition is associative, so this is the golden 32-bit sum of all terms)."""
        if self.sum_fns is None:
            return self.add_terms([*tree_terms, *ramp_terms], bound)
        if bound >= 2**31:
            raise ValueError("abstracted ensemble sums need a sum bound below 2^31")
        words = self.sum_fns.words(x, self.obligations)
        return z3.SignExt(WIDTH - 32, self.sum_fns.trees(*words) + self.sum_fns.ramps(*words))

    def mul_shr(self, a: Any, b: Any, shift: int) -> Any:
        if self.opaque_mul is not None:  # the firmware multiplies inline: the same opaque product
            self.obligations.append((f"golden operands of the >>{shift} product below 2^32",
                                     z3.Or(z3.UGE(_bv(a), 1 << 32), z3.UGE(_bv(b), 1 << 32))))
            return z3.LShR(self.opaque_mul(z3.Extract(31, 0, _bv(a)), z3.Extract(31, 0, _bv(b))), shift)
        return (_bv(a) * _bv(b)) >> shift


@dataclasses.dataclass(frozen=True)
class SumFunctions:
    """The firmware's out-of-line ``<name>_tree_sum`` and ``<name>_ramp_sum`` as uninterpreted
    functions of the policy input words (``input_bits`` wide each, the C ``input_t``) to int32."""

    trees: z3.FuncDeclRef
    ramps: z3.FuncDeclRef
    input_bits: int
    inputs: tuple[int, ...] | None = None  # the inputs the sums read, in argument order (None: all)

    @classmethod
    def make(cls, n_inputs: int, input_bits: int, inputs: tuple[int, ...] | None = None) -> SumFunctions:
        sorts = [z3.BitVecSort(input_bits)] * (n_inputs if inputs is None else len(inputs)) + [z3.BitVecSort(32)]
        return cls(z3.Function("tree_sum", *sorts), z3.Function("ramp_sum", *sorts), input_bits, inputs)

    def words(self, x: Sequence[Any], obligations: list[tuple[str, Any]]) -> list[z3.BitVecRef]:
        """The values of the inputs the sums read as the firmware's words; that each fits is an
        obligation."""
        out = []
        for i in range(len(x)) if self.inputs is None else self.inputs:
            v = _bv(x[i])
            word = z3.Extract(self.input_bits - 1, 0, v)
            if self.input_bits < WIDTH:
                obligations.append((f"golden input {i} within the firmware's {self.input_bits}-bit input_t",
                                    v != z3.SignExt(WIDTH - self.input_bits, word)))
            out.append(word)
        return out


def ramp_functions(model: FxModel) -> list[z3.FuncDeclRef]:
    """One uninterpreted term per ramp: an int32 input to the ``term_bits`` its term can occupy."""
    return [z3.Function(f"ramp_{i}", z3.BitVecSort(32), z3.BitVecSort(r.term_bits)) for i, r in enumerate(model.ramps)]


def slog_function() -> z3.FuncDeclRef:
    """The uninterpreted ``slog``: an int32 operand to the 21-bit signed value it can take."""
    return z3.Function("slog", z3.BitVecSort(32), z3.BitVecSort(SLOG_BITS))


def symbolic_event(model: FxModel, ctx: Sequence[z3.BitVecRef], ev: Sequence[z3.BitVecRef],
                   sqrt_fn: z3.FuncDeclRef, obligations: list[tuple[str, Any]] | None = None,
                   slog_fn: z3.FuncDeclRef | None = None, ramp_fns: Sequence[z3.FuncDeclRef] | None = None, sum_fns: SumFunctions | None = None,
                   opaque_mul: Callable[[z3.BitVecRef, z3.BitVecRef], z3.BitVecRef] | None = None) -> EventOutcome:
    """Golden outcome for symbolic 32-bit context and event words (outputs as 32-bit terms).

    With ``slog_fn``, ``ramp_fns``, ``sum_fns`` or ``opaque_mul``, the abstraction's side conditions
    are appended to ``obligations``."""
    ops = Z3Ops(sqrt_fn, obligations, slog_fn, ramp_fns, sum_fns, opaque_mul)
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
