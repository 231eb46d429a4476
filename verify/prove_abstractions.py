"""The abstraction the handler proof stands on: the firmware's out-of-line functions as
uninterpreted z3 functions.

A call to the square root, a wide product, the signed log or an ensemble partial sum is
replaced in the symbolic run by one application of its function (a *summary*), and the golden
model uses the same functions, so the handler proof holds whatever they are; each function's own
part (``rlcc.verify.prove_parts``) proves the firmware computes the exact value. What the solver
may assume of an application besides (a product's range, true values where a spurious model
guessed others, every value exactly) comes from here too.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import z3

from rlcc import formats as fmt
from rlcc.codegen.context import (SLOG_FUNCTION, SQRT_FUNCTION, input_bits, ramp_sum_function,
                                  sum_register_inputs, tree_sum_function)
from rlcc.derived import SLOG_BITS
from rlcc.fxp import golden
from rlcc.fxp.model import FxModel
from rlcc.verify.prove_image import ElfImage, arg32
from rlcc.verify.prove_solver import applications, concrete
from rlcc.verify.symbolic_golden import SumFunctions, slog_function
from rlcc.verify.symexec import Load, Region, Summary, SymexecUnsupported

_MAX_ROOT = math.isqrt(fmt.RATE_MAX << fmt.RATE_FRAC_BITS)  # the square root's largest value (2^20)
# operand bounds (A, B) of the products' range lemmas: a uint32 times a value below 2^31 (an int32
# excess or factor), and a value below 2^31 times a square root (the penalty)
_OPERAND_BOUNDS = ((2**32 - 1, 2**31 - 1), (2**31 - 1, _MAX_ROOT))

def _sqrt_summary(fn: z3.FuncDeclRef, xlen: int) -> Summary:
    def summary(regs: list[Any], path: Any, load: Load) -> tuple[dict[int, Any], list[tuple[str, Any]]]:
        arg, checks = arg32(regs[10], xlen, path, f"{SQRT_FUNCTION} argument")
        r = fn(arg)
        return {10: z3.SignExt(32, r) if xlen == 64 else r}, checks  # RV64 ABI: 32-bit results sign-extended

    return summary


def _slog_summary(fn: z3.FuncDeclRef, xlen: int) -> Summary:
    """slog(d) with ``fn`` the uninterpreted slog (its 21 bits), as the golden model takes it."""
    def summary(regs: list[Any], path: Any, load: Load) -> tuple[dict[int, Any], list[tuple[str, Any]]]:
        d, checks = arg32(regs[10], xlen, path, f"{SLOG_FUNCTION} argument")
        r = z3.SignExt(32 - SLOG_BITS, fn(d))
        return {10: z3.SignExt(32, r) if xlen == 64 else r}, checks  # int32 result, sign-extended on RV64

    return summary


def prefixed_symbol(img: ElfImage, suffix: str, what: str) -> str:
    found = [n for n in img.symbols if n.endswith("_" + suffix)]
    if len(found) != 1:
        raise SymexecUnsupported(f"{what}: expected one out-of-line '*_{suffix}' function, found {found or 'none'}")
    return found[0]


def _sum_summary(name: str, fns: list[z3.FuncDeclRef], n_inputs: int, word_bytes: int, xlen: int, stack: Region,
                 in_registers: bool = False) -> Summary:
    """Ensemble partial sums called with a pointer to the caller's input array (``in_registers``:
    with ``n_inputs`` int32 inputs themselves in a0, a1, ...): ``fns`` of the array's words, read
    from the caller's memory at the call (of the argument registers), returned in a0 (a1, ...)."""
    def summary(regs: list[Any], path: Any, load: Load) -> tuple[dict[int, Any], list[tuple[str, Any]]]:
        if in_registers:
            args, checks = [], []
            for i in range(n_inputs):
                a, c = arg32(regs[10 + i], xlen, path, f"{name} argument a{i}")
                args.append(a)
                checks += c
            return {10 + k: z3.SignExt(32, fn(*args)) if xlen == 64 else fn(*args) for k, fn in enumerate(fns)}, checks
        base, sp = concrete(regs[10]), concrete(regs[2])
        end = None if base is None else base + n_inputs * word_bytes
        if base is None or sp is None or not (sp <= base and end <= stack.hi):
            return {10 + k: 0 for k in range(len(fns))}, [(f"{name} argument: the input array in the caller's stack frame", path)]
        words = [load(base + word_bytes * i, word_bytes) for i in range(n_inputs)]
        args = [w if isinstance(w, z3.BitVecRef) else z3.BitVecVal(w, 8 * word_bytes) for w in words]
        # int32 results, sign-extended on RV64
        return {10 + k: z3.SignExt(32, fn(*args)) if xlen == 64 else fn(*args) for k, fn in enumerate(fns)}, []

    return summary


@dataclasses.dataclass
class Abstraction:
    """The uninterpreted functions standing for the firmware's out-of-line functions."""

    sqrt: z3.FuncDeclRef
    slog: z3.FuncDeclRef | None  # only when the firmware has derived inputs
    sums: Sums | None = None  # only when the firmware sums trees and ramps out of line
    # the 64-bit product of two 32-bit values, for the products the firmware computes inline (one
    # RV64 mul; an RV32 mul and mulhu, its two words); ``product_ranges`` states it commutative at
    # every application (the compiler may swap the operands)
    mul: z3.FuncDeclRef = dataclasses.field(
        default_factory=lambda: z3.Function("mul32", z3.BitVecSort(32), z3.BitVecSort(32), z3.BitVecSort(64)))

    @classmethod
    def for_image(cls, img: ElfImage, model: FxModel) -> Abstraction:
        return cls(z3.Function(SQRT_FUNCTION, z3.BitVecSort(32), z3.BitVecSort(32)),
                   slog_function() if SLOG_FUNCTION in img.symbols else None,
                   Sums.for_image(img, model))

    def opaque_mul(self, a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
        """The opaque product of two 32-bit terms."""
        return self.mul(a, b)

    def summaries(self, img: ElfImage, xlen: int) -> dict[int, Summary]:
        out = {img.symbols[SQRT_FUNCTION][0]: _sqrt_summary(self.sqrt, xlen)}
        if self.slog is not None:
            out[img.symbols[SLOG_FUNCTION][0]] = _slog_summary(self.slog, xlen)
        if self.sums is not None:
            stack = img.stack
            for name, fns in self.sums.functions():
                n = self.sums.n_inputs if self.sums.fns.inputs is None else len(self.sums.fns.inputs)
                out[img.symbols[name][0]] = _sum_summary(name, fns, n, self.sums.fns.input_bits // 8, xlen, stack,
                                                         self.sums.fns.inputs is not None)
        return out

    def clobbers(self, img: ElfImage, xlen: int) -> dict[int, frozenset[int]]:
        """Per abstracted function, the registers a call may change (``ElfImage.clobbered_registers``;
        each function's proof part shows it keeps the others)."""
        return {img.address(n): img.clobbered_registers(n, xlen) for n in self.symbols()}

    def symbols(self) -> list[str]:
        """The abstracted functions' symbols (those ``summaries`` replaces)."""
        return ([SQRT_FUNCTION] + ([SLOG_FUNCTION] if self.slog is not None else [])
                + ([name for name, _ in self.sums.functions()] if self.sums is not None else []))

    def product_ranges(self, terms: list[Any]) -> list[Any]:
        """Facts of the abstracted values in ``terms``, true of the exact functions: every square
        root at most 2^20 (the root of at most 2^40; its own part proves it exact), every product
        ``a * b`` commutative (the compiler may swap the operands) and at most ``A * B`` when its
        operands are at most A and B, for each bound pair of ``_OPERAND_BOUNDS`` either way round.
        Without them the solver may pick a product near 2^63, which plus the rate carry the golden
        model's int64 reads as negative and the firmware's uint64 does not (a spurious difference),
        or a penalty (an excess below 2^31 times a root) with a high word the RV32 firmware drops."""
        out = [z3.ULE(app, _MAX_ROOT) for app in applications(terms, {self.sqrt.get_id()})]
        for app in applications(terms, {self.mul.get_id()}):
            a, b = app.arg(0), app.arg(1)
            for lim_a, lim_b in _OPERAND_BOUNDS:
                fits = z3.Or(z3.And(z3.ULE(a, lim_a), z3.ULE(b, lim_b)), z3.And(z3.ULE(a, lim_b), z3.ULE(b, lim_a)))
                out.append(z3.Implies(fits, z3.ULE(app, lim_a * lim_b)))
            out.append(app == self.mul(b, a))
        return out

    def exact_lemmas(self, terms: list[Any], roots: bool = True) -> list[Any]:
        """The exact value of every product (and, with ``roots``, square-root) application in
        ``terms`` as a formula of its arguments (true of the product, and of the square root its
        own part proves the firmware computes)."""
        out = []
        for app in applications(terms, {self.mul.get_id()} | ({self.sqrt.get_id()} if roots else set())):
            if app.decl().get_id() == self.mul.get_id():
                out.append(app == z3.ZeroExt(32, app.arg(0)) * z3.ZeroExt(32, app.arg(1)))
                continue
            rate = app.arg(0)
            clamped = z3.If(z3.ULT(rate, fmt.RATE_MAX), rate, z3.BitVecVal(fmt.RATE_MAX, 32))
            n = z3.ZeroExt(32, clamped) << fmt.RATE_FRAC_BITS  # at most 2^40: its root at most 2^20
            r = z3.ZeroExt(32, app)
            out.append(z3.And(z3.ULE(app, _MAX_ROOT), z3.ULE(r * r, n), z3.ULT(n, (r + 1) * (r + 1))))
        return out

    def lemmas(self, m: Any, terms: list[Any] = ()) -> list[Any]:
        """The true value at every argument the model used where it assumed another (refines a
        spurious model): each function's table, and each application in ``terms`` (an argument
        outside the table takes the table's default)."""
        out: dict[str, Any] = {}
        true_slog = lambda a: int(golden.NUMPY.slog(np.int64(a[0] - (a[0] >> 31 << 32)))) & ((1 << SLOG_BITS) - 1)  # noqa: E731
        functions = [(self.sqrt, lambda a: int(golden.NUMPY.sqrt_rate(np.array([a[0]]))[0])),
                     (self.mul, lambda a: a[0] * a[1])] + (
            [(self.slog, true_slog)] if self.slog is not None else []) + (
            self.sums.true_values() if self.sums is not None else [])

        def check(fn: z3.FuncDeclRef, true: Callable[[list[int]], int], args: list[int], value: int) -> None:
            if value != true(args):
                lemma = fn(*[z3.BitVecVal(a, fn.domain(j).size()) for j, a in enumerate(args)]) == true(args)
                out.setdefault(str(lemma), lemma)

        truth = {fn.get_id(): (fn, true) for fn, true in functions}
        for fn, true in functions:
            interp = m[fn]
            if not isinstance(interp, z3.FuncInterp) or not interp.f:  # not in the model
                continue
            try:
                n_entries = interp.num_entries()
            except z3.Z3Exception:  # interpreted without a table (as a lambda): nothing to refine here
                continue
            for i in range(n_entries):
                e = interp.entry(i)
                check(fn, true, [e.arg_value(j).as_long() for j in range(fn.arity())], e.value().as_long())
        for app in applications(terms, set(truth)):
            fn, true = truth[app.decl().get_id()]
            val = lambda e: m.eval(e, model_completion=True).as_long()  # noqa: E731
            check(fn, true, [val(app.arg(j)) for j in range(fn.arity())], val(app))
        return list(out.values())


@dataclasses.dataclass
class Sums:
    """The ensemble's out-of-line sums (a model with ramps): the trees' (bias and leaves) and the
    ramps' (every ramp inline), their symbols and functions; or, with the ramps folded into the
    trees' searches (no ramp symbol), one function returning both (a0: trees, a1: ramps)."""

    tree_symbol: str
    ramp_symbol: str | None
    fns: SumFunctions
    model: FxModel

    def functions(self) -> list[tuple[str, list[z3.FuncDeclRef]]]:
        """Each out-of-line sum's symbol and the functions of the input words it returns (a0, a1)."""
        if self.ramp_symbol is None:
            return [(self.tree_symbol, [self.fns.trees, self.fns.ramps])]
        return [(self.tree_symbol, [self.fns.trees]), (self.ramp_symbol, [self.fns.ramps])]

    @property
    def n_inputs(self) -> int:
        return self.model.spec.student_width

    @classmethod
    def for_image(cls, img: ElfImage, model: FxModel) -> Sums | None:
        tree, ramp = tree_sum_function(""), ramp_sum_function("")
        if not model.ramps or golden.sum_bound(model) >= 2**31:
            return None  # the handler proof then executes the sum inline
        if not any(n.endswith("_" + tree) for n in img.symbols):
            return None
        folded = not any(n.endswith("_" + ramp) for n in img.symbols)
        # the folded sum takes the inputs its searches read as arguments (the generator's rule)
        passed = sum_register_inputs(model) if folded else None
        return cls(prefixed_symbol(img, tree, "trees' sum"), None if folded else prefixed_symbol(img, ramp, "ramps' sum"),
                   SumFunctions.make(model.spec.student_width, input_bits(model), passed), model)

    def inputs(self, words: list[int]) -> list[np.ndarray]:
        """The sum functions' argument words (unsigned) as the golden model's signed input values
        (an input the sums do not read: 0)."""
        bits = self.fns.input_bits
        if self.fns.inputs is not None:
            full = [0] * self.n_inputs
            for i, w in zip(self.fns.inputs, words):
                full[i] = w
            words = full
        return [np.array([w - (w >> (bits - 1) << bits)], dtype=np.int64) for w in words]

    def true_values(self) -> list[tuple[z3.FuncDeclRef, Callable[[list[int]], int]]]:
        """Each sum function with its true value (int32, as unsigned) at given array words."""
        def low(terms: list[Any]) -> int:
            return int(sum(np.asarray(t, dtype=np.int64).reshape(-1)[0] for t in terms)) & 0xFFFFFFFF

        trees = lambda a: golden.tree_terms(golden.NUMPY, self.model, self.inputs(a))[0]  # noqa: E731
        ramps = lambda a: golden.ramp_terms(golden.NUMPY, self.model, self.inputs(a))  # noqa: E731
        return [(self.fns.trees, lambda a: low(trees(a))), (self.fns.ramps, lambda a: low(ramps(a)))]


