"""The fixed-point model: the integer artifact that the golden model, the C generator and the
verifier all consume (``model.rlcc.json`` / embedded in the firmware manifest).

Normative semantics live in ``rlcc.fxp.golden``; this module only holds and checks the data.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, ClassVar

from rlcc import textio
from rlcc import derived as derived_vocab
from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.errors import BadInputError
from rlcc.spec import ObservationSpec
from rlcc.tree_ir import RAMP_OPERATIONS

FORMAT = "rlcc.fxmodel"
VERSION = 3  # 2: FxConstants.probe_timeout_ns and the probe-timestamp context word; 3: ramps
READS = (2, 3)  # a version-2 model is a version-3 one without ramps
OPS = (">", "<")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
_RAMP_FLOATS = ("center_scaled", "slope_below", "slope_above")


def check_fits_context(spec: ObservationSpec) -> None:
    """BadInputError unless the spec's history window fits the firmware's per-flow context."""
    words = (spec.history - 1) * spec.n_features + len(spec.derived)  # + one state word per derived input
    if words > fmt.CTX_HISTORY_WORDS:
        raise BadInputError(
            f"spec needs {words} history words in the per-flow context (past steps and derived inputs' "
            f"states), only {fmt.CTX_HISTORY_WORDS} fit in {fmt.CTX_BYTES} bytes"
        )


@dataclasses.dataclass(frozen=True)
class Split:
    """One level of an oblivious tree: ``bit = x[input] OP threshold`` on int32 features.

    ``input`` indexes the policy input vector (see ``ObservationSpec.input_index``).
    ``border`` is the float border of the source split on the *scaled* input, kept for
    provenance and for the float reference; firmware uses only ``op`` and ``threshold``.
    """

    input: int
    op: str
    threshold: int
    border: float


@dataclasses.dataclass(frozen=True)
class Tree:
    """An oblivious tree: leaf index = sum(bit_k << k) over its splits in order."""

    splits: tuple[Split, ...]
    leaves: tuple[int, ...]  # Q16.16 (LEAF_FRAC_BITS), len == 2 ** depth

    @property
    def depth(self) -> int:
        return len(self.splits)


@dataclasses.dataclass(frozen=True)
class Ramp:
    """A linear term of the ensemble sum on int32 input ``input`` (``rlcc.fxp.golden.ramp_value``):
    ``d = clamp(x, lo, hi) - center``; the term is ``d * k / 2^shift`` truncated toward zero, with
    ``k = k_below`` for ``d < 0`` else ``k_above``. ``|d| * |k| < 2^31`` for every ``d``, so the
    product fits 32 bits on any core. Float provenance (``center_scaled``, the slopes) is kept for
    comments; firmware uses only the integers."""

    input: int
    lo: int
    center: int
    hi: int
    k_below: int
    k_above: int
    shift: int
    center_scaled: float = 0.0
    slope_below: float = 0.0
    slope_above: float = 0.0

    @property
    def max_magnitude(self) -> int:
        """Largest |term| (Q16.16) over all inputs."""
        return max(((self.center - self.lo) * abs(self.k_below)) >> self.shift,
                   ((self.hi - self.center) * abs(self.k_above)) >> self.shift)

    @property
    def term_bits(self) -> int:
        """Bits of the signed term: every term is a sign-extended value of this many bits."""
        return self.max_magnitude.bit_length() + 1

    def problems(self, width: int) -> list[str]:
        bad = []
        if not 0 <= self.input < width:
            bad.append("input out of range")
        if not INT32_MIN < self.lo <= self.center <= self.hi <= INT32_MAX:
            bad.append("needs INT32_MIN < lo <= center <= hi <= INT32_MAX")
        elif max(self.center - self.lo, self.hi - self.center) > INT32_MAX:
            bad.append("center - lo and hi - center must fit int32")
        if not 0 <= self.shift <= 30:
            bad.append("shift outside 0 .. 30")
        if any(not -INT32_MAX <= k <= INT32_MAX for k in (self.k_below, self.k_above)):
            bad.append("slope constant outside int32")
        if ((self.center - self.lo) * abs(self.k_below) >= 2**31 or (self.hi - self.center) * abs(self.k_above) >= 2**31):
            bad.append("|d| * |k| can reach 2^31")
        return bad


@dataclasses.dataclass(frozen=True)
class ParamRule:
    """Validity of one host-settable parameter: ``lo <= value <= hi`` (uint32), each bound a
    number or another parameter's name. The one table behind FxModel.validate, the firmware's
    ``params_valid`` C check and the parameter comments of the generated C."""

    key: str  # C enum suffix (FIRMWARE_P_<key>)
    field: str  # FxConstants attribute holding its compiled-in default
    lo: int | str
    hi: int | str


U32_MAX = 0xFFFFFFFF
PARAM_RULES: tuple[ParamRule, ...] = (
    ParamRule("TARGET_Q16", "target_q16", 1, INT32_MAX),
    ParamRule("BETA_Q16", "beta_q16", 0, INT32_MAX),
    ParamRule("INV_BASE_RTT", "inv_base_rtt", 1, U32_MAX),
    ParamRule("CLAMP_MIN_Q16", "clamp_min_q16", 1, "CLAMP_MAX_Q16"),
    ParamRule("CLAMP_MAX_Q16", "clamp_max_q16", "CLAMP_MIN_Q16", INT32_MAX),
    ParamRule("RATE_INITIAL", "rate_initial", "RATE_MIN", fmt.RATE_MAX),
    ParamRule("RATE_MIN", "rate_min", 1, "RATE_INITIAL"),
    ParamRule("PROBE_TIMEOUT_NS", "probe_timeout_ns", 1, fmt.PROBE_TIMEOUT_NS_MAX),
)
PARAM_RULE = {r.key: r for r in PARAM_RULES}


ALWAYS_PARAMS = ("CLAMP_MIN_Q16", "CLAMP_MAX_Q16", "RATE_INITIAL", "RATE_MIN", "PROBE_TIMEOUT_NS")


def model_params(spec: ObservationSpec) -> list[str]:
    """The parameter keys a model's firmware has, in ``PARAM_RULES`` order: its features'
    (``rlcc.features``) and the runtime's own."""
    used = {p for n in spec.feature_names for p in vocab.get(n).params} | set(ALWAYS_PARAMS)
    return [r.key for r in PARAM_RULES if r.key in used]


def param_violations(values: dict[str, int]) -> list[str]:
    """The rules of ``PARAM_RULES`` that ``values`` (key -> value, any subset) break."""
    def bound(b: int | str) -> int | None:
        return values.get(b) if isinstance(b, str) else b

    bad = []
    for key, v in values.items():
        r = PARAM_RULE[key]
        lo, hi = bound(r.lo), bound(r.hi)
        if not 0 <= v <= U32_MAX or lo is not None and v < lo or hi is not None and v > hi:
            bad.append(f"{key} = {v} outside {r.lo} .. {r.hi}")
    return bad


@dataclasses.dataclass(frozen=True)
class FxConstants:
    """Integer constants of the per-event computation, each derived from the spec."""

    target_q16: int
    beta_q16: int
    inv_base_rtt: int  # round(2^(16 + INV_BASE_RTT_SHIFT) / base_rtt_ns)
    clamp_min_q16: int
    clamp_max_q16: int
    rate_initial: int  # RATE_FRAC_BITS
    rate_min: int  # RATE_FRAC_BITS
    probe_timeout_ns: int  # TX events re-request an RTT probe this long after the last request

    @classmethod
    def from_spec(
        cls,
        spec: ObservationSpec,
        probe_timeout_ns: int = fmt.PROBE_TIMEOUT_NS_DEFAULT,
        factor_range: tuple[float, float] | None = None,
    ) -> "FxConstants":
        """Constants of ``spec``; the probe timeout is a device setting, not part of the spec.

        ``factor_range``: the factors the policy can produce; the clamp becomes the spec clamp
        intersected with it (``rlcc.distill.factor_range``), each bound rounded to nearest."""
        q16 = 1 << 16
        lo, hi = spec.action.clamp_min, spec.action.clamp_max
        clamp_min, clamp_max = round(lo * fmt.FACTOR_ONE), round(hi * fmt.FACTOR_ONE)
        if factor_range is not None:
            f_lo, f_hi = (min(max(float(v), lo), hi) for v in factor_range)
            if not f_lo <= f_hi:
                raise BadInputError(f"invalid factor range {factor_range!r}")
            clamp_min = max(clamp_min, round(f_lo * fmt.FACTOR_ONE))
            clamp_max = min(clamp_max, round(f_hi * fmt.FACTOR_ONE))
        return cls(
            target_q16=round(spec.reward.target * q16),
            beta_q16=round(spec.reward.beta * q16),
            inv_base_rtt=round((1 << (16 + fmt.INV_BASE_RTT_SHIFT)) / spec.reward.base_rtt_ns),
            clamp_min_q16=clamp_min,
            clamp_max_q16=clamp_max,
            rate_initial=max(1, min(fmt.RATE_MAX, round(spec.rate.initial * fmt.RATE_ONE))),
            rate_min=max(1, min(fmt.RATE_MAX, round(spec.rate.min * fmt.RATE_ONE))),
            probe_timeout_ns=int(probe_timeout_ns),
        )


class InputFormats:
    """Device formats of a model's inputs, from its ``spec`` (every backend's model)."""

    spec: ObservationSpec

    @property
    def feature_frac_bits(self) -> tuple[int, ...]:
        return tuple(vocab.get(f.name).frac_bits for f in self.spec.features)

    @property
    def input_frac_bits(self) -> tuple[int, ...]:
        """Fractional bits of every student input (its feature's or derived input's device format)."""
        bits = self.feature_frac_bits
        window = tuple(bits[i % self.spec.n_features] for i in range(self.spec.input_width))
        return window + tuple(derived_vocab.get(d).frac_bits for d in self.spec.derived)

    @property
    def history_words(self) -> int:
        """Context words of the input window's past steps."""
        return (self.spec.history - 1) * self.spec.n_features

    def derived_word(self, k: int) -> int:
        """The context word keeping derived input ``k``'s state of the previous step (after the
        window's words; ``rlcc.derived``)."""
        return fmt.CTX_HISTORY + self.history_words + k

    @property
    def context_words(self) -> int:
        """Context words a flow uses: the fixed ones, the window's past steps, the derived inputs' states."""
        return fmt.CTX_HISTORY + self.history_words + len(self.spec.derived)


@dataclasses.dataclass(frozen=True)
class FxModel(InputFormats):
    """A quantized tree-ensemble policy plus everything needed to run it on the device."""

    spec: ObservationSpec
    constants: FxConstants
    trees: tuple[Tree, ...]
    bias: int  # Q16.16
    provenance: dict[str, Any] = dataclasses.field(default_factory=dict)
    ramps: tuple[Ramp, ...] = ()
    backend: ClassVar[str] = "trees"  # the device model's name in a manifest (``Int8Net``: "int8")

    def __post_init__(self) -> None:
        self.validate()

    @property
    def n_operations(self) -> int:
        """Comparisons plus leaf additions (plus the ramps'): the paper's operation count (<= 150 deployed)."""
        return sum(t.depth for t in self.trees) + len(self.trees) + RAMP_OPERATIONS * len(self.ramps)

    def validate(self) -> None:
        check_fits_context(self.spec)
        c = self.constants
        bad = param_violations({k: getattr(c, PARAM_RULE[k].field) for k in model_params(self.spec)})
        if bad:
            raise BadInputError("fixed-point model: invalid constant " + "; ".join(bad))
        bound = abs(self.bias)
        for i, t in enumerate(self.trees):
            if len(t.leaves) != 1 << t.depth:
                raise BadInputError(f"fixed-point model: tree {i} has {len(t.leaves)} leaves for depth {t.depth}")
            for s in t.splits:
                if not 0 <= s.input < self.spec.student_width or s.op not in OPS:
                    raise BadInputError(f"fixed-point model: tree {i} has an invalid split {s}")
                if not INT32_MIN <= s.threshold <= INT32_MAX:
                    raise BadInputError(f"fixed-point model: tree {i} threshold out of int32 range")
            bound += max(abs(v) for v in t.leaves)
        for i, r in enumerate(self.ramps):
            bad = r.problems(self.spec.student_width)
            if bad:
                raise BadInputError(f"fixed-point model: ramp {i}: " + "; ".join(bad))
            bound += r.max_magnitude
        if bound >= 2**31:
            raise BadInputError("fixed-point model: ensemble sum could overflow int32")

    # ---- JSON -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        ramps = {"ramps": [dataclasses.asdict(r) for r in self.ramps]} if self.ramps else {}
        return {
            **ramps,
            "format": FORMAT,
            # without ramps the model is written as version 2, which every rlcc since then reads alike
            "version": VERSION if self.ramps else 2,
            "spec": self.spec.to_dict(),
            "constants": dataclasses.asdict(self.constants),
            "leaf_frac_bits": fmt.LEAF_FRAC_BITS,
            "bias": self.bias,
            "trees": [
                {
                    "splits": [dataclasses.asdict(s) for s in t.splits],
                    "leaves": list(t.leaves),
                }
                for t in self.trees
            ],
            "provenance": self.provenance,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, indent=1) + "\n"

    @classmethod
    def from_dict(cls, data: Any) -> "FxModel":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise BadInputError(f"not an rlcc fixed-point model (format must be '{FORMAT}')")
        if data.get("version") == 1:
            raise BadInputError(
                "fixed-point model version 1 predates RTT-probe loss recovery (probe timeout, context "
                f"word {fmt.CTX_PROBE_TS} = last probe request time; version {VERSION}): recompile the policy with this rlcc"
            )
        if data.get("version") not in READS or data.get("version") == 2 and data.get("ramps"):
            raise BadInputError(f"unsupported fixed-point model version {data.get('version')!r} (this rlcc reads {VERSION})")
        if data.get("leaf_frac_bits") != fmt.LEAF_FRAC_BITS:
            raise BadInputError("fixed-point model: leaf_frac_bits differs from this rlcc's format")
        try:
            trees = tuple(
                Tree(
                    splits=tuple(
                        Split(int(s["input"]), str(s["op"]), int(s["threshold"]), float(s["border"]))
                        for s in t["splits"]
                    ),
                    leaves=tuple(int(v) for v in t["leaves"]),
                )
                for t in data["trees"]
            )
            return cls(
                spec=ObservationSpec.from_dict(data["spec"]),
                constants=FxConstants(**{k: int(v) for k, v in data["constants"].items()}),
                trees=trees,
                bias=int(data["bias"]),
                provenance=dict(data.get("provenance", {})),
                ramps=tuple(Ramp(**{k: (float(v) if k in _RAMP_FLOATS else int(v)) for k, v in r.items()})
                            for r in data.get("ramps", [])),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise BadInputError(f"fixed-point model: malformed ({type(exc).__name__}: {exc})") from None

    @classmethod
    def from_file(cls, path: str) -> "FxModel":
        return cls.from_dict(textio.load_json(path, "fixed-point model"))
