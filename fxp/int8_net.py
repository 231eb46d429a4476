"""The int8 network model: a neural policy (MLP, optionally an LSTM cell) as exact integer code.

The alternative to the tree ensemble of ``rlcc.fxp.model``: the network itself runs on the device
with int8 weights and activations, int32 accumulation and lookup tables for the nonlinearities.
Only the decision differs from the tree firmware; the per-event rules (new flow, counters, RTT
features, rate update with carry, probe timeout) are ``rlcc.fxp.golden.event_core``'s, which calls
:meth:`Int8Net.decision_core` for the factor.

Integer semantics of one decision (``>>`` is the floor shift; every product fits int64, every
accumulator int32, both checked by :meth:`Int8Net.validate`):

1. inputs: ``q_i = clamp((clamp(x_i, -2^31+1, 2^31-1) * mult_i + add_i) >> shift_i, -limit_i, limit_i)``
   (24-bit values in int32, ``limit_i <= IN_MAX``: see ``IN_MAX``; the first product accumulates in
   int64, every later one in int32)
   for each int32 device input ``x_i`` (the spec's affine map, the input's clip range and scale
   folded into ``mult``/``add``);
2. dense layers: ``acc_j = bias_j + sum_i W_ji q_i``;
   ``q'_j = clamp((acc_j * mult_j + 2^(shift-1)) >> shift, 0 if relu else -A, A)`` with ``A`` the
   model's activation bound ``act_max`` (int8 or int16 activations);
3. LSTM cell (gate order i, f, g, o; ``h`` int8 in steps of 1/127, ``c`` int16 Q``c_frac``, both in
   the context):
   ``z = clamp((accx * mult_x + acch * mult_h + bias) >> shift, -G 2^I, G 2^I - 1)`` per gate row
   (z in steps of 2^-(Z+I) with Z = GATE_Z_FRAC_BITS, I = GATE_INTERP_BITS, G = GATE_LUT_SIZE / 2;
   ``bias`` includes the rounding term); a gate is the table interpolated at z:
   ``LOOKUP(T, z) = (T[k] (2^I - r) + T[k + 1] r + 2^(I-1)) >> I`` with ``k = (z >> I) + G``,
   ``r = z mod 2^I``; ``i, f, o = LOOKUP(SIGMOID, z)``, ``g = LOOKUP(TANH, z)`` (tables of
   GATE_LUT_SIZE + 1 points, Q12: 1.0 = 4096 exactly);
   ``c' = clamp((f c 2^12 + i g 2^c_frac + 2^23) >> 24, -32767, 32767)`` (int64);
   ``h' = (o LOOKUP(TANH, clamp(((c' << (Z+I)) + 2^(c_frac-1)) >> c_frac, -G 2^I, G 2^I - 1)) * 127 + 2^23) >> 24``
   (|h'| <= 127: h = 1.0 is 127, so a saturated cell loses nothing; the product stays below 2^31);
   a flow whose history-valid flag is clear (a new flow) starts from the spec's reset state;
4. head: ``acc = bias + sum_i w_i q_i``, ``t = clamp((acc * mult + add) >> shift, 0, SEG 2^F - 1)``,
   ``factor = (LUT[t >> F] (2^F - frac) + LUT[(t >> F) + 1] frac) >> F`` with ``frac = t mod 2^F``:
   one table holds the output activation, the spec's action map and clamp (Q16.16), linearly
   interpolated, so the device never divides. The event then clamps it to the host clamp
   parameters like the tree firmware.

State layout: ``h`` packed four int8 per word (byte k of word k // 4, little-endian), then ``c``
two int16 per word, from ``CTX_HISTORY``; the window history of an MLP uses the same words as
the tree firmware.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from typing import Any, Callable, Sequence

import numpy as np

from rlcc import formats as fmt
from rlcc.errors import BadInputError
from rlcc.fxp.model import PARAM_RULE, FxConstants, InputFormats, check_fits_context, model_params, param_violations
from rlcc.spec import ObservationSpec

FORMAT = "rlcc.int8net"
VERSION = 2  # 2: interpolated Q12 gate tables (1: Q7 tables indexed in steps of 1/32)
BACKEND = "int8"

Q_MAX = 127  # int8 activations and weights are symmetric: -127 .. 127
# Device inputs enter as 24-bit integers, not int8: the RTT features span four decades in closed
# loop (delta reaches -3000 x its equilibrium size while the equilibrium needs ~1/100 steps), and one
# accumulator scale serves inputs of very different ranges (each input's step makes its column of
# the first weights use the full int8 range). Measured on rlcc_lstm: int16 inputs left prev_action
# 11 levels. The first product (int8 x int32) accumulates in int64.
IN_MAX = (1 << 24) - 1
# Hidden activations: int8 (ACT8_MAX) or int16 (ACT16_MAX), a property of each model
# (``Int8Net.act_max``; the quantizer measures both, ``rlcc.kinds.int8.quantize``). A ReLU MLP
# is piecewise linear, so its activations inherit the inputs' range: on rlcc_mlp int8 activations
# cost a factor RMSE of ~0.02 at the best clip. int16 x int8 products still accumulate in int32.
ACT8_MAX, ACT16_MAX = 127, 32767
# Gate tables: points at z = -8 .. 8 in steps of 1/32, linearly interpolated at z in steps of 2^-10, Q12
# outputs. In steady state a gate's pre-activation sits still, so its rounding is a fixed offset, not
# noise, and it moves the closed loop's equilibrium: measured on the ADPG rlcc_lstm (float network with
# only the gates quantized, steady many-to-one 2048, queue delay vs the teacher's): z steps of 1/32 with
# Q7 outputs -3.5 %, exact z with Q7 -1.2 %, z steps of 2^-8 with Q15 -0.4 %, 2^-10 with Q12 0.0 %.
GATE_Z_FRAC_BITS = 5
GATE_INTERP_BITS = 5
GATE_LUT_SIZE = 512  # segments; the tables hold GATE_LUT_SIZE + 1 points
GATE_HALF = GATE_LUT_SIZE // 2
GATE_OUT_FRAC_BITS = 12  # gate outputs are Q12 (1.0 = 4096: SIGMOID 0 .. 4096, TANH -4096 .. 4096, int16)
GATE_Z_LIMIT = GATE_HALF << GATE_INTERP_BITS  # z in [-GATE_Z_LIMIT, GATE_Z_LIMIT - 1]
H_ONE = 127  # h is int8 with 1.0 = 127 (measured on rlcc_lstm: a Q7 h (1.0 -> 127/128) and a TANH table
# clamped to 127 bias the factor near equilibrium by ~0.003)
C_MAX = 32767  # c is int16
HEAD_SEGMENTS = 256  # head LUT: 257 points, linear interpolation between them
HEAD_FRAC_BITS = 8  # interpolation fraction bits
HEAD_TANH_Z = 4.5  # tanh head: the table spans z in [-4.5, 4.5]; tanh(4.5) is within 2.5e-4 of 1
X_MIN, X_MAX = -(2**31) + 1, 2**31 - 1  # inputs are clamped to this before scaling
I64_LIMIT = 2**62  # bound of intermediate 64-bit values


def _tuple2(rows: Any) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(v) for v in r) for r in rows)


def _ints(v: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in v)


@dataclasses.dataclass(frozen=True)
class InputMap:
    """One device input -> 24-bit: ``clamp((clamp(x) * mult + add) >> shift, -limit, limit)``; ``scale``:
    the float value of one step of the spec-scaled input (provenance)."""

    mult: int
    add: int
    shift: int
    scale: float = 0.0
    limit: int = IN_MAX  # |q| <= limit: the input's clip range in steps


@dataclasses.dataclass(frozen=True)
class Dense:
    """A bias-carrying int8 layer (``weights``: rows = outputs) with a requantization to int8."""

    weights: tuple[tuple[int, ...], ...]
    bias: tuple[int, ...]
    relu: bool
    mult: tuple[int, ...]  # per output (each row has its own weight scale)
    shift: int
    scale_out: float = 0.0

    @property
    def n_in(self) -> int:
        return len(self.weights[0])

    @property
    def n_out(self) -> int:
        return len(self.weights)


@dataclasses.dataclass(frozen=True)
class Lstm:
    """An LSTM cell; ``bias`` (4H, gate LUT index units << shift, plus the rounding term)."""

    wx: tuple[tuple[int, ...], ...]
    wh: tuple[tuple[int, ...], ...]
    bias: tuple[int, ...]
    mult_x: tuple[int, ...]  # per gate row
    mult_h: tuple[int, ...]
    shift: int
    c_frac: int
    reset_h: tuple[int, ...]
    reset_c: tuple[int, ...]
    sigmoid_lut: tuple[int, ...]
    tanh_lut: tuple[int, ...]

    @property
    def hidden(self) -> int:
        return len(self.wh[0])

    @property
    def n_in(self) -> int:
        return len(self.wx[0])

    @property
    def h_words(self) -> int:
        return -(-self.hidden // 4)

    @property
    def c_words(self) -> int:
        return -(-self.hidden // 2)


@dataclasses.dataclass(frozen=True)
class Head:
    """The output: int8 dot product -> interpolated factor table (Q16.16, ``HEAD_SEGMENTS + 1``
    points spanning ``z_lo .. z_hi`` of the float pre-activation)."""

    weights: tuple[int, ...]
    bias: int
    mult: int
    add: int
    shift: int
    lut: tuple[int, ...]
    z_lo: float = 0.0
    z_hi: float = 0.0
    activation: str = "tanh"


def gate_luts() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """SIGMOID (0 .. 4096) and TANH (-4096 .. 4096) tables in Q12 at z = (k - G) / 2^Z, k = 0 .. 2G."""
    one = 1 << GATE_OUT_FRAC_BITS
    z = [(i - GATE_HALF) / (1 << GATE_Z_FRAC_BITS) for i in range(GATE_LUT_SIZE + 1)]
    sig = tuple(int(math.floor(one / (1.0 + math.exp(-v)) + 0.5)) for v in z)
    tnh = tuple(int(math.floor(one * math.tanh(v) + 0.5)) for v in z)
    return sig, tnh


def state_bytes(hidden: int) -> int:
    """Context bytes of an LSTM state of ``hidden`` units (h int8, c int16, whole words)."""
    return 4 * (-(-hidden // 4) + -(-hidden // 2))


def check_state_fits(hidden: int, window_words: int = 0, price: Callable[[int], str] | None = None) -> None:
    """BadInputError unless the LSTM state fits the context words the firmware leaves free.
    ``price(words)``: the cost of keeping that many words in global memory instead, for the message
    (the cycle profiles live above this module: ``rlcc.kinds.int8.kind``)."""
    free = 4 * (fmt.CTX_HISTORY_WORDS - window_words)
    need = state_bytes(hidden)
    if need > free:
        words = -(-need // 4)
        raise BadInputError(
            f"LSTM state of {hidden} units needs {need} bytes (h {hidden} x int8, c {hidden} x int16, word-packed) but the "
            f"{fmt.CTX_BYTES}-byte per-flow context has {free} free; keeping it in global memory instead would add "
            f"{words} loads and {words} stores per decision" + (f" ({price(words)})" if price else ""))


@dataclasses.dataclass(frozen=True)
class Int8Net(InputFormats):
    """A quantized neural policy plus everything needed to run it on the device."""

    spec: ObservationSpec
    constants: FxConstants
    inputs: tuple[InputMap, ...]
    layers: tuple[Dense, ...]
    lstm: Lstm | None
    head: Head
    provenance: dict[str, Any] = dataclasses.field(default_factory=dict)
    act_max: int = ACT8_MAX  # hidden activations: int8 or int16 (ACT16_MAX)

    # the tree backend's fields, empty: shared code (vectors, template context) reads them
    trees: tuple = ()
    ramps: tuple = ()
    bias: int = 0
    backend: str = BACKEND

    def __post_init__(self) -> None:
        self.validate()

    # ---- layout -----------------------------------------------------------------------------
    @property
    def state_words(self) -> int:
        """Context words of the recurrent state, after the window words."""
        return 0 if self.lstm is None else self.lstm.h_words + self.lstm.c_words

    @property
    def context_words(self) -> int:
        return fmt.CTX_HISTORY + self.history_words + self.state_words

    @property
    def state_word0(self) -> int:
        return fmt.CTX_HISTORY + self.history_words

    def counts(self) -> dict[str, int]:
        """Operations per decision: multiply-accumulates, table lookups, requantizations."""
        macs = len(self.inputs) + sum(d.n_in * d.n_out for d in self.layers) + len(self.head.weights)
        luts, requant = 2, len(self.inputs) + sum(d.n_out for d in self.layers) + 1
        if self.lstm is not None:
            H = self.lstm.hidden
            macs += 4 * H * (self.lstm.n_in + H) + 3 * H
            luts += 5 * H
            requant += 4 * H + 2 * H
        return {"macs": macs, "lut_lookups": luts, "requantizations": requant}

    @property
    def n_operations(self) -> int:
        c = self.counts()
        return c["macs"] + c["lut_lookups"] + c["requantizations"]

    def constant_bytes(self) -> int:
        """Bytes of constant tables: int8 weights, int32 biases and multipliers, the LUTs."""
        n = 12 * len(self.inputs)
        for d in self.layers:
            n += d.n_in * d.n_out + 4 * d.n_out + 8
        if self.lstm is not None:
            m = self.lstm
            n += len(m.wx) * (m.n_in + m.hidden) + 8 * len(m.bias) + 12 + 4 * (GATE_LUT_SIZE + 1) + 3 * m.hidden
        return n + len(self.head.weights) + 16 + 4 * len(self.head.lut)

    # ---- checks -----------------------------------------------------------------------------
    def validate(self) -> None:
        check_fits_context(self.spec)
        if self.spec.derived:
            raise BadInputError("int8 network: derived inputs are a tree-student feature, not supported")
        if self.act_max not in (ACT8_MAX, ACT16_MAX):
            raise BadInputError(f"int8 network: activation bound must be {ACT8_MAX} or {ACT16_MAX}")
        c = self.constants
        bad = param_violations({k: getattr(c, PARAM_RULE[k].field) for k in model_params(self.spec)})
        if bad:
            raise BadInputError("int8 network: invalid constant " + "; ".join(bad))
        if len(self.inputs) != self.spec.input_width:
            raise BadInputError(f"int8 network: {len(self.inputs)} input maps for {self.spec.input_width} inputs")
        for i, m in enumerate(self.inputs):
            if not (abs(m.mult) < 2**30 and abs(m.add) < 2**61 and 0 <= m.shift <= 62 and 1 <= m.limit <= IN_MAX):
                raise BadInputError(f"int8 network: input {i} scaling out of range")
        width, in_max = len(self.inputs), IN_MAX
        for k, d in enumerate(self.layers):
            self._check_matrix(f"layer {k}", d.weights, width)
            if len(d.bias) != d.n_out:
                raise BadInputError(f"int8 network: layer {k} has {len(d.bias)} biases for {d.n_out} outputs")
            self._check_requant(f"layer {k}", d.weights, d.bias, d.mult, d.shift, in_max, I64_LIMIT if k == 0 else 2**31)
            width, in_max = d.n_out, self.act_max
        if self.lstm is not None:
            m = self.lstm
            H = m.hidden
            check_state_fits(H, self.history_words)
            self._check_matrix("lstm Wx", m.wx, width, 4 * H)
            self._check_matrix("lstm Wh", m.wh, H, 4 * H)
            if not 7 <= m.c_frac <= 14 or len(m.bias) != 4 * H:
                raise BadInputError("int8 network: lstm c format or bias size invalid")
            one = 1 << GATE_OUT_FRAC_BITS
            if (len(m.reset_h) != H or len(m.reset_c) != H or len(m.sigmoid_lut) != GATE_LUT_SIZE + 1
                    or len(m.tanh_lut) != GATE_LUT_SIZE + 1 or any(not 0 <= v <= one for v in m.sigmoid_lut)
                    or any(abs(v) > one for v in m.tanh_lut)):
                raise BadInputError("int8 network: lstm reset state or gate table invalid")
            acc_x = Q_MAX * in_max * width
            acc_h = Q_MAX * H_ONE * H
            if (len(m.mult_x) != 4 * H or len(m.mult_h) != 4 * H or not 0 < m.shift <= 62
                    or acc_x * max(map(abs, m.mult_x)) + acc_h * max(map(abs, m.mult_h)) + max(abs(b) for b in m.bias) >= I64_LIMIT):
                raise BadInputError("int8 network: lstm gate scaling can overflow 64 bits")
            width, in_max = H, H_ONE
        h = self.head
        if len(h.weights) != width or any(abs(w) > Q_MAX for w in h.weights):
            raise BadInputError(f"int8 network: head needs {width} int8 weights")
        acc = abs(h.bias) + Q_MAX * in_max * width
        if acc >= 2**31 or acc * abs(h.mult) + abs(h.add) >= I64_LIMIT or not 0 <= h.shift <= 62:
            raise BadInputError("int8 network: head scaling can overflow")
        if len(h.lut) != HEAD_SEGMENTS + 1 or any(not 0 < v < 2**23 for v in h.lut):
            raise BadInputError(f"int8 network: head table needs {HEAD_SEGMENTS + 1} factors in (0, 128)")

    @staticmethod
    def _check_matrix(name: str, w: Sequence[Sequence[int]], n_in: int, n_out: int | None = None) -> None:
        if not w or any(len(r) != n_in for r in w) or (n_out is not None and len(w) != n_out):
            raise BadInputError(f"int8 network: {name} has the wrong shape (inputs {n_in})")
        if any(abs(v) > Q_MAX for r in w for v in r):
            raise BadInputError(f"int8 network: {name} has a weight outside -127 .. 127")

    @staticmethod
    def _check_requant(name: str, w: Sequence[Sequence[int]], bias: Sequence[int], mult: Sequence[int], shift: int,
                       in_max: int, acc_limit: int) -> None:
        acc = max(abs(b) + in_max * sum(abs(v) for v in r) for r, b in zip(w, bias))
        if (len(mult) != len(w) or acc >= acc_limit or not 1 <= shift <= 62
                or acc * max(map(abs, mult)) + (1 << shift) >= I64_LIMIT):
            raise BadInputError(f"int8 network: {name} accumulator or requantization can overflow")

    # ---- the decision (numpy int64) -----------------------------------------------------------
    def quantize_inputs(self, x: np.ndarray) -> np.ndarray:
        """Device inputs (N, width) int64 -> 24-bit values (N, width) int64 (rule 1)."""
        x = np.clip(np.asarray(x, dtype=np.int64), X_MIN, X_MAX)
        out = np.empty_like(x)
        for i, m in enumerate(self.inputs):
            out[:, i] = np.clip((x[:, i] * m.mult + m.add) >> m.shift, -m.limit, m.limit)
        return out

    def forward(self, x: np.ndarray, h: np.ndarray | None = None, c: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Factor (N,) Q16.16 before the host clamp, and the new (h, c) for an LSTM, from device
        inputs (N, width) and the current state (N, H) each."""
        q = self.quantize_inputs(x)
        for d in self.layers:
            acc = q @ np.asarray(d.weights, dtype=np.int64).T + np.asarray(d.bias, dtype=np.int64)
            mult = np.asarray(d.mult, dtype=np.int64)
            q = np.clip((acc * mult + (1 << (d.shift - 1))) >> d.shift, 0 if d.relu else -self.act_max, self.act_max)
        if self.lstm is not None:
            h, c = lstm_step(self.lstm, q, np.asarray(h, dtype=np.int64), np.asarray(c, dtype=np.int64))
            q = h
        return head_factor(self.head, q), h, c

    def unpack_state(self, words: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """(h, c) (N, H) int64 from the state's context words (N,) each."""
        m = self.lstm
        H = m.hidden
        h = np.stack([_signed((np.asarray(words[j // 4], dtype=np.int64) >> (8 * (j % 4))) & 0xFF, 8) for j in range(H)], axis=1)
        c = np.stack([_signed((np.asarray(words[m.h_words + j // 2], dtype=np.int64) >> (16 * (j % 2))) & 0xFFFF, 16)
                      for j in range(H)], axis=1)
        return h, c

    def pack_state(self, h: np.ndarray, c: np.ndarray) -> list[np.ndarray]:
        """The state's context words (uint32 values in int64) from (h, c) (N, H)."""
        m = self.lstm
        words = [np.zeros(len(h), dtype=np.int64) for _ in range(m.h_words + m.c_words)]
        for j in range(m.hidden):
            words[j // 4] |= (h[:, j] & 0xFF) << (8 * (j % 4))
            words[m.h_words + j // 2] |= (c[:, j] & 0xFFFF) << (16 * (j % 2))
        return words

    def decision_core(self, ops: Any, x: Sequence[Any], w: Sequence[Any], valid: Any) -> tuple[Any, list[Any], dict[int, Any]]:
        """``rlcc.fxp.golden.event_core``'s decision hook: (factor, no leaves, new state words)."""
        arrays = np.broadcast_arrays(*[np.asarray(v, dtype=np.int64) for v in x], np.asarray(valid))
        n_shape = arrays[0].shape
        X = np.stack([a.reshape(-1) for a in arrays[:-1]], axis=1)
        if self.lstm is None:
            factor, _, _ = self.forward(X)
            return factor.reshape(n_shape), [], {}
        base = self.state_word0
        n = X.shape[0]
        words = [np.broadcast_to(np.asarray(w[base + k], dtype=np.int64), n_shape).reshape(-1) for k in range(self.state_words)]
        h, c = self.unpack_state(words)
        ok = arrays[-1].reshape(-1).astype(bool)[:, None]
        h = np.where(ok, h, np.asarray(self.lstm.reset_h, dtype=np.int64)[None, :])
        c = np.where(ok, c, np.asarray(self.lstm.reset_c, dtype=np.int64)[None, :])
        factor, h2, c2 = self.forward(X, h, c)
        new = {base + k: v.reshape(n_shape) for k, v in enumerate(self.pack_state(h2, c2))}
        assert n == len(factor)
        return factor.reshape(n_shape), [], new

    # ---- JSON -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "backend": BACKEND,
            "spec": self.spec.to_dict(),
            "constants": dataclasses.asdict(self.constants),
            "inputs": [dataclasses.asdict(m) for m in self.inputs],
            "layers": [{**dataclasses.asdict(d), "weights": [list(r) for r in d.weights], "bias": list(d.bias), "mult": list(d.mult)}
                       for d in self.layers],
            "lstm": None if self.lstm is None else {k: (list(map(list, v)) if k in ("wx", "wh") else
                                                        list(v) if isinstance(v, tuple) else v)
                                                    for k, v in dataclasses.asdict(self.lstm).items()},
            "head": {**dataclasses.asdict(self.head), "weights": list(self.head.weights), "lut": list(self.head.lut)},
            "provenance": self.provenance,
            "act_max": self.act_max,
        }
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, indent=1) + "\n"

    @classmethod
    def from_dict(cls, data: Any) -> "Int8Net":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise BadInputError(f"not an rlcc int8 network (format must be '{FORMAT}')")
        version = data.get("version")
        if version != VERSION and not (version == 1 and data.get("lstm") is None):  # version 1 differs only in the LSTM
            raise BadInputError(f"unsupported int8 network version {version!r} (this rlcc reads {VERSION}, and 1 without an LSTM)")
        try:
            lstm = data.get("lstm")
            return cls(
                spec=ObservationSpec.from_dict(data["spec"]),
                constants=FxConstants(**{k: int(v) for k, v in data["constants"].items()}),
                inputs=tuple(InputMap(int(m["mult"]), int(m["add"]), int(m["shift"]), float(m.get("scale", 0.0)), int(m["limit"]))
                             for m in data["inputs"]),
                layers=tuple(Dense(_tuple2(d["weights"]), _ints(d["bias"]), bool(d["relu"]), _ints(d["mult"]), int(d["shift"]),
                                   float(d.get("scale_out", 0.0))) for d in data["layers"]),
                lstm=None if lstm is None else Lstm(
                    wx=_tuple2(lstm["wx"]), wh=_tuple2(lstm["wh"]), bias=_ints(lstm["bias"]), mult_x=_ints(lstm["mult_x"]),
                    mult_h=_ints(lstm["mult_h"]), shift=int(lstm["shift"]), c_frac=int(lstm["c_frac"]),
                    reset_h=_ints(lstm["reset_h"]), reset_c=_ints(lstm["reset_c"]),
                    sigmoid_lut=_ints(lstm["sigmoid_lut"]), tanh_lut=_ints(lstm["tanh_lut"])),
                head=Head(_ints(data["head"]["weights"]), int(data["head"]["bias"]), int(data["head"]["mult"]),
                          int(data["head"]["add"]), int(data["head"]["shift"]), _ints(data["head"]["lut"]),
                          float(data["head"].get("z_lo", 0.0)), float(data["head"].get("z_hi", 0.0)),
                          str(data["head"].get("activation", "tanh"))),
                provenance=dict(data.get("provenance", {})),
                act_max=int(data["act_max"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise BadInputError(f"int8 network: malformed ({type(exc).__name__}: {exc})") from None

    def sha256(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()


def _signed(v: np.ndarray, bits: int) -> np.ndarray:
    return np.where(v >= 1 << (bits - 1), v - (1 << bits), v)


def lstm_step(m: Lstm, q: np.ndarray, h: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rule 3 of the module docstring on (N, ·) int64 arrays: the new (h, c)."""
    H = m.hidden
    accx = q @ np.asarray(m.wx, dtype=np.int64).T
    acch = h @ np.asarray(m.wh, dtype=np.int64).T
    mx, mh = np.asarray(m.mult_x, dtype=np.int64), np.asarray(m.mult_h, dtype=np.int64)
    z = np.clip((accx * mx + acch * mh + np.asarray(m.bias, dtype=np.int64)) >> m.shift, -GATE_Z_LIMIT, GATE_Z_LIMIT - 1)
    sig, tnh = np.asarray(m.sigmoid_lut, dtype=np.int64), np.asarray(m.tanh_lut, dtype=np.int64)
    gi, gf, gg, go = (gate_lookup(sig, z[:, :H]), gate_lookup(sig, z[:, H:2 * H]), gate_lookup(tnh, z[:, 2 * H:3 * H]),
                      gate_lookup(sig, z[:, 3 * H:]))
    q2 = 2 * GATE_OUT_FRAC_BITS
    c2 = np.clip((((gf * c) << GATE_OUT_FRAC_BITS) + ((gi * gg) << m.c_frac) + (1 << (q2 - 1))) >> q2, -C_MAX, C_MAX)
    tz = np.clip(((c2 << (GATE_Z_FRAC_BITS + GATE_INTERP_BITS)) + (1 << (m.c_frac - 1))) >> m.c_frac,
                 -GATE_Z_LIMIT, GATE_Z_LIMIT - 1)
    h2 = (go * gate_lookup(tnh, tz) * H_ONE + (1 << (q2 - 1))) >> q2
    return h2, c2


def gate_lookup(table: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The gate table interpolated at ``z`` (steps of 2^-(Z+I), already clamped): rule 3's LOOKUP."""
    k = (z >> GATE_INTERP_BITS) + GATE_HALF
    r = z & ((1 << GATE_INTERP_BITS) - 1)
    return (table[k] * ((1 << GATE_INTERP_BITS) - r) + table[k + 1] * r + (1 << (GATE_INTERP_BITS - 1))) >> GATE_INTERP_BITS


def head_factor(h: Head, q: np.ndarray) -> np.ndarray:
    """Rule 4: the interpolated factor table, Q16.16 (N,) int64."""
    acc = q @ np.asarray(h.weights, dtype=np.int64) + h.bias
    t = np.clip((acc * h.mult + h.add) >> h.shift, 0, (HEAD_SEGMENTS << HEAD_FRAC_BITS) - 1)
    idx, frac = t >> HEAD_FRAC_BITS, t & ((1 << HEAD_FRAC_BITS) - 1)
    lut = np.asarray(h.lut, dtype=np.int64)
    return (lut[idx] * ((1 << HEAD_FRAC_BITS) - frac) + lut[idx + 1] * frac) >> HEAD_FRAC_BITS


def load_model_dict(data: Any):
    """An ``FxModel`` or an :class:`Int8Net` from its JSON dict (by ``format``)."""
    from rlcc.fxp.model import FxModel

    if isinstance(data, dict) and data.get("format") == FORMAT:
        return Int8Net.from_dict(data)
    return FxModel.from_dict(data)


