"""Derived student inputs: device-computable functions of two window entries of one feature.

The teacher sees the spec's window; a tree student may see more. The teacher's reaction to deep
congestion is a ratio boundary over (delta[t], delta[t-1]) (cut harder while congestion grows),
which axis-aligned splits staircase poorly; ``slog(delta[t]) - slog(delta[t-1])`` with
``slog(d) = sign(d) * log2(1 + |d|)`` makes it one threshold. Measured
(``bench/bench_distill_methods.py``): that input takes the float trees from tens of percent to a
few percent of the teacher in the startup transient.

Each :class:`DerivedDef` states its name and meaning, the feature it reads, its device format,
the float formula over unscaled feature values, and the integer formula written over an ``ops``
object (``rlcc.fxp.golden.IntOps``), so the golden model, its z3 twin and the vectors share one
definition. The log is Mitchell's piecewise-linear log2 (exponent from the leading one, mantissa
linear), which needs only shifts and compares: exact, constant time, no tables, no division.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

MLOG_FRAC_BITS = 16  # fractional bits of mlog2 and of the log-ratio
SLOG_BITS = 21  # |slog(d)| < 16 * 2^16 for any int32 d: a 21-bit signed value (the proof's abstraction)


@dataclasses.dataclass(frozen=True)
class DerivedDef:
    name: str
    meaning: str
    source: str  # the per-step feature it reads at t and t-1
    source_frac_bits: int  # that feature's device format
    frac_bits: int  # device value: signed 32-bit with this many fractional bits
    float_value: Callable[[np.ndarray, np.ndarray], np.ndarray]  # (current, previous) unscaled floats
    # Device integers: the per-step state (ops, value) -> state that the context keeps for the next
    # step, and the input from the current and the previous step's states (ops, cur, prev); the
    # firmware computes the state once per step (``c_function``) and stores it, so the previous
    # step's is a context word, not a second computation.
    state_value: Callable[[Any, Any], Any]
    combine: Callable[[Any, Any, Any], Any]
    c_function: str  # the rlcc_runtime.h function computing the state from a device value (out of line)
    # Direction of monotonicity in (current, previous): +1 non-decreasing, -1 non-increasing, over
    # all int32 values. The exhaustive reachability reasoning (rlcc.verify.observable) relies on it.
    monotone: tuple[int, int] = (1, -1)

    def device_value(self, ops: Any, cur: Any, prev: Any) -> Any:
        """The input from the two device values (the states of both computed here)."""
        return self.combine(ops, self.state_value(ops, cur), self.state_value(ops, prev))


REGISTRY: dict[str, DerivedDef] = {}


def register(d: DerivedDef) -> DerivedDef:
    if d.name in REGISTRY:
        raise ValueError(f"derived input {d.name!r} registered twice")
    REGISTRY[d.name] = d
    return d


def get(name: str) -> DerivedDef:
    return REGISTRY[name]


def known() -> list[str]:
    return sorted(REGISTRY)


# ---- Mitchell log2, float and integer ------------------------------------------------------


def mlog2_float(x: np.ndarray) -> np.ndarray:
    """Mitchell's log2(1 + x) for x >= 0: exponent of the leading one plus the linear mantissa."""
    u = 1.0 + np.asarray(x, dtype=np.float64)
    e = np.floor(np.log2(u))
    return e + (u / np.exp2(e) - 1.0)


def slog_float(d: np.ndarray) -> np.ndarray:
    d = np.asarray(d, dtype=np.float64)
    return np.sign(d) * mlog2_float(np.abs(d))


def mlog2_int(ops: Any, m: Any) -> Any:
    """Mitchell log2(1 + m / 2^16) in Q.16 for an integer 0 <= m <= 2^31: the leading one of
    u = m + 2^16 by a branch-free binary search (msb(u) in 16..31), then exponent msb - 16 and
    the 16 bits below the leading one as the mantissa."""
    u = m + (1 << MLOG_FRAC_BITS)
    msb: Any = 0
    v = u
    for step in (16, 8, 4, 2, 1):
        shift = ops.where(v >= (1 << step), step, 0)
        v = v >> shift
        msb = msb + shift
    mant = (u - (1 << msb)) >> (msb - MLOG_FRAC_BITS)
    return ((msb - MLOG_FRAC_BITS) << MLOG_FRAC_BITS) + mant


def slog_int(ops: Any, d: Any) -> Any:
    """sign(d) * mlog2(1 + |d|) of a Q16.16 device value (int32, so |d| <= 2^31)."""
    neg = d < 0
    lg = mlog2_int(ops, ops.where(neg, 0 - d, d))
    return ops.where(neg, 0 - lg, lg)


register(DerivedDef(
    "delta_log_ratio", "slog(delta[t]) - slog(delta[t-1]), slog(d) = sign(d) * mlog2(1 + |d|)",
    source="delta", source_frac_bits=16, frac_bits=MLOG_FRAC_BITS,
    float_value=lambda cur, prev: slog_float(cur) - slog_float(prev),
    state_value=lambda ops, d: ops.slog(d),
    combine=lambda ops, cur, prev: cur - prev,
    c_function="rlcc_signed_log",
))
