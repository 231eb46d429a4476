"""State merging in the prover's symbolic executor (``rlcc.verify.symexec.Executor.merge``)."""

from __future__ import annotations

import z3

from rlcc.verify.prove_solver import free_vars
from rlcc.verify.symexec import Executor, State


def _executor() -> Executor:
    return Executor(bytes(64), 0x1000, 64, [])


def test_merge_selects_on_the_tests_that_tell_states_apart():
    """Two paths that share a test later on the path than their first difference (the compiler
    duplicated the shared tail into both arms of an earlier branch): the merged value is an
    if-then-else on the differing test alone, the shared test stays the merged path condition, and
    under it the merge picks each path's value."""
    x, y = z3.BitVec("x", 64), z3.BitVec("y", 64)
    cx, cy = x < 0, y < 0
    regs_a, regs_b = [0] * 32, [0] * 32
    regs_a[10], regs_b[10] = 3 * x, 5 * x  # a value of x only, chosen by x's test
    regs_a[11] = regs_b[11] = 7 * y  # the same on both paths
    merged = _executor().merge([State(0x1010, regs_a, {}, (cx, cy)), State(0x1010, regs_b, {}, (z3.Not(cx), cy))])
    assert len(merged.cond) == 1 and merged.cond[0].eq(cy)
    assert {str(v) for v in free_vars(merged.regs[10])} == {"x"}
    assert merged.regs[11].eq(7 * y)
    s = z3.Solver()
    s.add(cy, merged.regs[10] != z3.If(cx, 3 * x, 5 * x))
    assert s.check() == z3.unsat


def test_merge_keeps_a_condition_that_does_not_cover_every_case():
    """Paths that together cover only part of the shared test's cases keep their disjunction."""
    x, y = z3.BitVec("x", 64), z3.BitVec("y", 64)
    a, b = [0] * 32, [0] * 32
    a[10], b[10] = x, y
    merged = _executor().merge([State(0x1010, a, {}, (x < 0, y < 0)), State(0x1010, b, {}, (x > 5, y < 0))])
    assert merged.cond[0].eq(y < 0) and len(merged.cond) == 2
    s = z3.Solver()
    s.add(merged.cond[1], z3.Not(z3.Or(x < 0, x > 5)))
    assert s.check() == z3.unsat
