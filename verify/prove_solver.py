"""The provers' z3 plumbing: one query under a deadline, a list of obligations discharged in
order, and the walks over terms the refinement needs (free variables, function applications)."""

from __future__ import annotations

import time
from typing import Any

import z3


def solve(formulas: list[Any], deadline: float, after_deadline: bool = True) -> tuple[str, Any]:
    """"unsat", "sat" (with the model) or "unknown" for the conjunction of ``formulas``, in the time
    left before ``deadline`` (at least a second; ``after_deadline=False``: "unknown" at once once
    the deadline has passed, when the budget is a whole proof's)."""
    left = deadline - time.monotonic()
    if left <= 0 and not after_deadline:
        return "unknown", None
    s = z3.SolverFor("QF_UFBV")
    s.set("timeout", int(max(1.0, left) * 1000))
    s.add(*formulas)
    r = s.check()
    if r == z3.unsat:
        return "unsat", None
    if r == z3.sat:
        return "sat", s.model()
    return "unknown", None


def first_open(obligations: list[tuple[str, Any]], deadline: float) -> tuple[str, str] | None:
    """The first obligation (description, "timeout" or "failed") whose violation is not proven
    impossible; None when all are discharged."""
    for desc, formula in obligations:
        verdict, _ = solve([formula], deadline)
        if verdict != "unsat":
            return desc, "timeout" if verdict == "unknown" else "failed"
    return None


def concrete(v: Any) -> int | None:
    """``v``'s value when it simplifies to a constant, else None."""
    if isinstance(v, int):
        return v
    v = z3.simplify(v)
    return v.as_long() if z3.is_bv_value(v) else None


def free_vars(e: z3.ExprRef) -> set[z3.ExprRef]:
    """The uninterpreted constants (the inputs) ``e`` depends on."""
    seen: set[int] = set()
    out: set[z3.ExprRef] = set()
    stack = [e]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.add(t)
        stack.extend(t.children())
    return out


def applications(terms: list[Any], decl_ids: set[int]) -> list[z3.ExprRef]:
    """The distinct applications of the given functions in ``terms``."""
    seen: set[int] = set()
    out: dict[int, z3.ExprRef] = {}
    stack = [t for t in terms if isinstance(t, z3.ExprRef)]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t) and t.decl().get_id() in decl_ids:
            out[t.get_id()] = t
        stack.extend(t.children())
    return list(out.values())
