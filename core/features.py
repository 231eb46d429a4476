"""The feature vocabulary: every per-step policy input, declared once.

A feature is computable on the NIC at an RTT event from the event and the per-flow context. Each
:class:`FeatureDef` states, for one feature:

- its name and meaning (the spec's vocabulary and its error messages);
- the float formula over a step's raw quantities (the teacher's observation in the simulator);
- the device format (fractional bits of a signed 32-bit value) and the integer formula, written
  over an ``ops`` object (``rlcc.fxp.golden.IntOps``) so the golden model, its z3 twin and the
  vector generator all evaluate the same code;
- the feasible range of its current-step device value;
- its inverse, for boundary vectors: either the context field it is read from, or the smallest
  RTT at which it reaches a value (RTT-driven features);
- which host parameters its C needs and the C fragment that computes it.

Everything else (spec validation, the simulator's windows, the golden model, the vector
generators, the mutation domains, code generation) consumes this registry; adding a feature is
one :func:`register` call plus its tests.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Mapping, Protocol

import numpy as np
from rlcc import formats as fmt

U32 = 0xFFFFFFFF


class DeviceConstants(Protocol):
    """The model constants the integer formulas read (``rlcc.fxp.model.FxConstants``)."""

    inv_base_rtt: int
    beta_q16: int
    target_q16: int


class RewardParams(Protocol):
    """The reward terms the float formulas read (``rlcc.spec.Reward``)."""

    target: float
    beta: float
    base_rtt_ns: int


def imin(ops: Any, a: Any, b: Any) -> Any:
    return ops.where(a < b, a, b)


def imax(ops: Any, a: Any, b: Any) -> Any:
    return ops.where(a > b, a, b)


def iclip(ops: Any, v: Any, lo: Any, hi: Any) -> Any:
    return imin(ops, imax(ops, v, lo), hi)


class FloatStep:
    """One step's raw float quantities (arrays), with shared intermediates computed once."""

    def __init__(self, reward: RewardParams, prev_action: Any, rtt_ns: Any, rate: Any,
                 cnp_count: Any = None, nack_count: Any = None) -> None:
        self.reward = reward
        self.rate = np.asarray(rate, dtype=np.float64)
        self.prev_action = np.asarray(prev_action, dtype=np.float64)
        self.rtt_ns = np.asarray(rtt_ns, dtype=np.float64)
        self._counts = (cnp_count, nack_count)  # None: a count-free step (zeros)

    def _count(self, i: int) -> np.ndarray:
        v = self._counts[i]
        return np.zeros_like(self.rate) if v is None else np.asarray(v, dtype=np.float64)

    @property
    def cnp_count(self) -> np.ndarray:
        return self._count(0)

    @property
    def nack_count(self) -> np.ndarray:
        return self._count(1)

    @functools.cached_property
    def inflation(self) -> np.ndarray:
        return self.rtt_ns / float(self.reward.base_rtt_ns)


class DeviceStep:
    """One step's device quantities in ``ops`` values, with shared intermediates computed once."""

    def __init__(self, ops: Any, c: DeviceConstants, rtt_ns: Any, rate: Any, prev_factor: Any, cnp: Any,
                 nack: Any) -> None:
        self.ops, self.c = ops, c
        self.rtt_ns, self.rate, self.prev_factor, self.cnp, self.nack = rtt_ns, rate, prev_factor, cnp, nack

    @functools.cached_property
    def inflation(self) -> Any:
        """RTT / base RTT in Q16.16 without a division: (rtt * round(2^32 / base)) >> 16, saturated."""
        raw = ((self.rtt_ns & U32) * self.c.inv_base_rtt) >> fmt.INV_BASE_RTT_SHIFT
        return imin(self.ops, raw, fmt.FEATURE_MAX)


@dataclasses.dataclass(frozen=True)
class ContextField:
    """Where a context-read feature lives: bits ``[shift, shift + width)`` of context word ``word``."""

    word: int
    shift: int = 0
    width: int = 32

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def store(self, word: np.ndarray, value: np.ndarray) -> np.ndarray:
        """``word`` (int64 array) with this field replaced by ``value``'s low ``width`` bits."""
        keep = np.asarray(word, dtype=np.int64) & (U32 & ~(self.mask << self.shift))
        return keep | ((np.asarray(value, dtype=np.int64) & self.mask) << self.shift)


@dataclasses.dataclass(frozen=True)
class FeatureDef:
    name: str
    meaning: str
    frac_bits: int  # device value: signed 32-bit with this many fractional bits
    float_value: Callable[[FloatStep], np.ndarray]
    device_value: Callable[[DeviceStep], Any]
    device_range: Callable[[DeviceConstants], tuple[int, int]]  # feasible current-step device values
    typical: int  # a representative device value (observable vectors start from it)
    context_field: ContextField | None = None  # inverse of a context-read feature
    # inverse of an RTT-driven feature: smallest RTT (ns) whose value reaches ``value`` at ``rate``
    # (monotone: rises with the RTT when rtt_direction = +1, falls when -1); numpy arrays in and out
    rtt_inverse: Callable[[DeviceConstants, np.ndarray, np.ndarray], np.ndarray] | None = None
    rtt_direction: int = 0
    rate_dependent: bool = False  # the RTT inverse also depends on the rate
    events: tuple[int, ...] = ()  # event types the firmware must count for it (CNP, NACK)
    params: tuple[str, ...] = ()  # host parameters its C reads (codegen.context defines them)
    needs_inflation: bool = False  # its C reads the shared RTT inflation
    # Half-width (raw feature units, from the spec's reward parameters) of the interval around the
    # teacher's equilibrium in which the student is linear in this feature (rlcc.distill.equilibrium);
    # None: no ramp on it.
    equilibrium_half_width: Callable[[Any], float] | None = None
    # C expression of the device value, over the runtime (rlcc_runtime.h) and the decision's
    # locals: ``c`` (context words), ``inflation``; ``{input_t}`` is the model's input type and
    # ``{param[NAME]}`` reads host parameter NAME
    c_expr: str = ""

    @property
    def rtt_driven(self) -> bool:
        return self.rtt_inverse is not None

    @property
    def counts(self) -> bool:
        """Whether it reads the CNP/NACK counters (so the simulator cannot decide in blocks)."""
        return bool(self.events)

    def c_code(self, input_t: str, param: Mapping[str, str]) -> str:
        """The C expression with the model's input type and parameter reads filled in."""
        return self.c_expr.format(input_t=input_t, param=param)


REGISTRY: dict[str, FeatureDef] = {}


def register(feature: FeatureDef) -> FeatureDef:
    """Add ``feature`` to the vocabulary (a new name; tests may register toy features)."""
    if feature.name in REGISTRY:
        raise ValueError(f"feature {feature.name!r} is already registered")
    if (feature.context_field is None) == (feature.rtt_inverse is None):
        raise ValueError(f"feature {feature.name!r}: give exactly one inverse (context field or RTT)")
    REGISTRY[feature.name] = feature
    return feature


def get(name: str) -> FeatureDef:
    return REGISTRY[name]


def known() -> tuple[str, ...]:
    return tuple(REGISTRY)


def ceil_div(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    return -(-a // b)


def isqrt(n: np.ndarray) -> np.ndarray:
    """Exact floor square root of int64 arrays (float guess, corrected by one either way)."""
    r = np.floor(np.sqrt(n.astype(np.float64))).astype(np.int64)
    r = np.where(r * r > n, r - 1, r)
    return np.where((r + 1) * (r + 1) <= n, r + 1, r)


def _inflation_rtt(c: DeviceConstants, value: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Smallest RTT whose inflation is >= value (inflation is non-decreasing in the RTT)."""
    del rate
    v = np.maximum(np.asarray(value, dtype=np.int64), 0)
    return ceil_div(v << 16, c.inv_base_rtt)


def _delta_rtt(c: DeviceConstants, value: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """RTT giving exactly ``delta == value`` at ``rate`` if one exists (else a non-hit).

    delta = target - floor(excess * s / 2^20) with s fixed by the rate: the smallest achievable
    excess >= ceil(m 2^20 / s) gives the smallest product >= m 2^20, so it hits m exactly iff any
    RTT does at this rate.
    """
    v, rate = np.broadcast_arrays(np.asarray(value, dtype=np.int64), np.asarray(rate, dtype=np.int64))
    s = isqrt(rate << fmt.RATE_FRAC_BITS)
    m = np.maximum(c.target_q16 - v, 0)
    need = c.beta_q16 + ceil_div(m << fmt.SQRT_RATE_FRAC_BITS, s)
    need = np.minimum(need, fmt.FEATURE_MAX + 1)
    return np.where(m == 0, 0, ceil_div(need << 16, c.inv_base_rtt))


def _delta_device(d: DeviceStep) -> Any:
    ops, c = d.ops, d.c
    excess = imax(ops, d.inflation - c.beta_q16, 0)
    value = c.target_q16 - ops.mul_shr(excess, ops.sqrt_rate(d.rate), fmt.SQRT_RATE_FRAC_BITS)
    return iclip(ops, value, fmt.FEATURE_MIN, fmt.FEATURE_MAX)


def _delta_float(s: FloatStep) -> np.ndarray:
    r = s.reward
    return r.target - np.maximum(s.inflation - r.beta, 0.0) * np.sqrt(np.maximum(s.rate, 0.0))


_FULL = (-(2**31), 2**31 - 1)  # a raw context word read as int32

register(FeatureDef(
    "prev_action", "multiplicative rate factor applied at the flow's previous decision (1.0 at the first)",
    fmt.FACTOR_FRAC_BITS, lambda s: s.prev_action, lambda d: d.prev_factor, lambda c: _FULL, fmt.FACTOR_ONE,
    context_field=ContextField(fmt.CTX_PREV_FACTOR), c_expr="rlcc_as_int32(c[RLCC_CTX_PREV_FACTOR])",
    equilibrium_half_width=lambda reward: 0.02))  # factors within 2% of 1: a settled flow's dither
register(FeatureDef(
    "rtt_inflation", "RTT / base RTT of the probe that triggered this decision",
    16, lambda s: s.inflation, lambda d: d.inflation, lambda c: (0, fmt.FEATURE_MAX), 2 * fmt.FACTOR_ONE,
    rtt_inverse=_inflation_rtt, rtt_direction=1, params=("INV_BASE_RTT",), needs_inflation=True, c_expr="inflation"))
register(FeatureDef(
    "rate", "current rate as a fraction of line rate (before this decision)",
    fmt.RATE_FRAC_BITS, lambda s: s.rate, lambda d: d.rate, lambda c: (1, U32), 300007,  # 0 = a new flow
    context_field=ContextField(fmt.CTX_RATE), c_expr="({input_t})c[RLCC_CTX_RATE]"))  # unsigned, not saturated
register(FeatureDef(
    "delta", "target - max(rtt_inflation - beta, 0) * sqrt(rate)",
    16, _delta_float, _delta_device, lambda c: (fmt.FEATURE_MIN, min(c.target_q16, fmt.FEATURE_MAX)), 0,
    rtt_inverse=_delta_rtt, rtt_direction=-1, rate_dependent=True,
    params=("TARGET_Q16", "BETA_Q16", "INV_BASE_RTT"), needs_inflation=True,
    c_expr="rlcc_delta(inflation, c[RLCC_CTX_RATE], {param[TARGET_Q16]}, {param[BETA_Q16]})",
    equilibrium_half_width=lambda reward: 0.3 * reward.target))  # about +-20% RTT at 2048 flows
register(FeatureDef(
    "cnp_count", "CNPs received since the previous decision",
    0, lambda s: s.cnp_count, lambda d: d.cnp, lambda c: (0, fmt.COUNT_MAX), 0,
    context_field=ContextField(fmt.CTX_COUNTS, fmt.CNP_SHIFT, fmt.COUNT_BITS), events=(fmt.EVENT_CNP,),
    c_expr="({input_t})rlcc_count(c, RLCC_CNP_SHIFT)"))
register(FeatureDef(
    "nack_count", "NACKs received since the previous decision",
    0, lambda s: s.nack_count, lambda d: d.nack, lambda c: (0, fmt.COUNT_MAX), 0,
    context_field=ContextField(fmt.CTX_COUNTS, fmt.NACK_SHIFT, fmt.COUNT_BITS), events=(fmt.EVENT_NACK,),
    c_expr="({input_t})rlcc_count(c, RLCC_NACK_SHIFT)"))
