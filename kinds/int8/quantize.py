"""Quantize a float network (``rlcc.kinds.int8.graph``) into an ``rlcc.fxp.int8_net.Int8Net``.

Scales come from a calibration set of closed-loop teacher decisions (``Calibration``): per input
a clip range (chosen among quantiles of the visited values by the factor error it gives: the
heavy tail of deep congestion would otherwise cost the resolution the equilibrium needs), then
per layer a weight scale (max |w| / 127, the input scales folded into the first product) and an
output scale (the largest activation the calibration set reaches). LSTM gates use fixed LUT
formats (``rlcc.fxp.int8_net``); the cell state's fractional bits follow the largest visited
``|c|``. Every multiplier is an integer with a shift, every choice deterministic.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.kinds.int8.graph import FloatNet
from rlcc.errors import BadInputError
from rlcc.fxp import int8_net as q8
from rlcc.fxp.model import FxConstants
from rlcc.spec import ObservationSpec

CLIP_QUANTILES = (1.0, 0.99999, 0.9999, 0.999, 0.995, 0.99, 0.98, 0.95, 0.9, 0.8, 0.7, 0.5)
INT16_GAIN = 0.8  # int16 hidden activations only when they cut the calibration RMSE by 20 %
CLIP_TOLERANCE = 1e-3  # the largest factor change an input clip may cause in the float network
HEAD_MULT_BITS = 20  # the head's index has 16 bits: a 21-bit multiplier is ample and leaves room for the offset
MULT_BITS = 29  # multipliers in [2^29, 2^30): 64-bit products stay below 2^62


@dataclasses.dataclass
class Calibration:
    """Teacher decisions: spec-scaled float inputs and the device's integer inputs (N, width), the
    teacher's factors (N,) and, for an LSTM, the teacher's state before each decision (N, H) each."""

    x_float: np.ndarray
    x_dev: np.ndarray
    label: np.ndarray
    h: np.ndarray | None = None
    c: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.label)

    def subset(self, idx: np.ndarray) -> "Calibration":
        pick = lambda a: None if a is None else a[idx]  # noqa: E731
        return Calibration(self.x_float[idx], self.x_dev[idx], self.label[idx], pick(self.h), pick(self.c))


def _mult_shift(real: float, bits: int = MULT_BITS, max_shift: int = 62) -> tuple[int, int]:
    """(m, s) with m / 2^s ~= real and 2^bits <= |m| < 2^(bits+1) (or 0)."""
    if real == 0:
        return 0, 1
    e = math.floor(math.log2(abs(real)))
    s = min(max(bits - e, 1), max_shift)
    return int(round(real * 2.0**s)), s


def _input_maps(spec: ObservationSpec, clips: np.ndarray, w_first: np.ndarray) -> tuple[q8.InputMap, ...]:
    """Rule 1 for every input. Each input's step is chosen so that its column of the first
    product (``w_first``, (in, out)) has the same largest magnitude as every other column (its
    int8 weights then use their full range however small the input's values), and so that its
    clip range fits int16; ``limit`` clamps it at its own clip range."""
    lam = np.max(np.abs(w_first), axis=1)
    common = max(float(np.max(clips * lam)) / q8.IN_MAX, 1e-300)
    out = []
    for i in range(spec.input_width):
        f = spec.features[spec.locate_input(i)[1]]
        bits = vocab.get(f.name).frac_bits
        step = common / lam[i] if lam[i] > 0 else max(float(clips[i]), 1e-9) / q8.IN_MAX
        limit = int(min(q8.IN_MAX, max(1, math.ceil(float(clips[i]) / step))))
        mult, shift = _mult_shift(f.scale / (2.0**bits * step))
        add = int(round((f.offset / step + 0.5) * 2.0**shift))
        out.append(q8.InputMap(mult, add, shift, step, limit))
    return tuple(out)


def _rows(w_eff: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-output int8 weights (out, in) and their scales (out,) for float (in, out) weights."""
    sw = np.maximum(np.max(np.abs(w_eff), axis=0), 1e-12) / q8.Q_MAX
    return np.clip(np.rint(w_eff / sw), -q8.Q_MAX, q8.Q_MAX).astype(np.int64).T, sw


def _acc_bits(wq: np.ndarray, bias: np.ndarray, in_max: int) -> int:
    """Bits of the largest accumulator magnitude of int weights (out, in) on inputs up to ``in_max``."""
    return int(np.max(np.abs(bias) + in_max * np.sum(np.abs(wq), axis=1))).bit_length()


def _mults(real: np.ndarray, bits: int) -> tuple[tuple[int, ...], int]:
    """Per-row multipliers with one shift: the largest in [2^bits, 2^(bits+1))."""
    _, shift = _mult_shift(float(np.max(np.abs(real))), bits)
    return tuple(int(round(v * 2.0**shift)) for v in real), shift


def _bias_corrected(b: np.ndarray, w: np.ndarray, wq: np.ndarray, sw: np.ndarray, scale_in: np.ndarray | float,
                    a: np.ndarray | None) -> np.ndarray:
    """``b`` plus the mean effect of the weights' rounding on the calibration inputs ``a`` (N, in):
    rounding is not zero-mean on inputs that are (saturated LSTM states, ReLU outputs), and a
    bias of a few 1e-3 in the factor moves the closed loop's equilibrium."""
    if a is None or not len(a):
        return b
    s_in = np.broadcast_to(np.asarray(scale_in, dtype=np.float64).reshape(-1, 1), w.shape)
    w_hat = wq.T * sw[None, :] / s_in
    return b + np.mean(a @ (w - w_hat), axis=0)


def _dense(w: np.ndarray, b: np.ndarray, scale_in: np.ndarray | float, scale_out: float, relu: bool, in_max: int,
           a: np.ndarray | None = None) -> q8.Dense:
    """An int8 layer (per-output weight scales) for float (in, out) weights whose inputs (``a`` on
    the calibration set) are in steps ``scale_in`` (per input or one) and up to ``in_max``, and whose
    output steps are ``scale_out``."""
    wq, sw = _rows(w * np.broadcast_to(np.asarray(scale_in, dtype=np.float64).reshape(-1, 1), w.shape))
    bq = np.rint(_bias_corrected(b, w, wq, sw, scale_in, a) / sw).astype(np.int64)
    mults, shift = _mults(sw / scale_out, min(MULT_BITS - 2, 60 - _acc_bits(wq, bq, in_max)))
    return q8.Dense(q8._tuple2(wq), q8._ints(bq), relu, mults, shift, float(scale_out))


def _head(w: np.ndarray, b: float, scale_in: np.ndarray | float, spec: ObservationSpec, act: str,
          a: np.ndarray | None = None) -> q8.Head:
    wq, sws = _rows(w * np.broadcast_to(np.asarray(scale_in, dtype=np.float64).reshape(-1, 1), w.shape))
    b = float(_bias_corrected(np.array([b]), w, wq, sws, scale_in, a)[0])
    sw = float(sws[0])
    if act == "tanh":
        z_lo, z_hi = -q8.HEAD_TANH_Z, q8.HEAD_TANH_Z
        points = spec.output_to_factor(np.tanh(np.linspace(z_lo, z_hi, q8.HEAD_SEGMENTS + 1)))
    else:
        z_lo, z_hi = spec.action.clamp_min, spec.action.clamp_max
        points = spec.output_to_factor(np.linspace(z_lo, z_hi, q8.HEAD_SEGMENTS + 1))
    lut = tuple(int(v) for v in np.rint(points * fmt.FACTOR_ONE))
    k = (q8.HEAD_SEGMENTS << q8.HEAD_FRAC_BITS) / (z_hi - z_lo)  # table steps per unit of z
    mult, shift = _mult_shift(sw * k, bits=HEAD_MULT_BITS)
    bq = int(round(b / sw))
    add = int(round((-z_lo * k + 0.5) * 2.0**shift))
    return q8.Head(q8._ints(wq[0]), bq, mult, add, shift, lut, float(z_lo), float(z_hi), act)


def _lstm(net: FloatNet, scale_in: np.ndarray | float, c_max: float, spec: ObservationSpec, in_max: int,
          x: np.ndarray | None = None, h: np.ndarray | None = None) -> q8.Lstm:
    m = net.lstm
    H = net.hidden
    wxq, sx = _rows(m.wx * np.broadcast_to(np.asarray(scale_in, dtype=np.float64).reshape(-1, 1), m.wx.shape))
    h_step = 1.0 / q8.H_ONE
    whq, sh = _rows(m.wh * h_step)
    sh = sh / h_step
    b = _bias_corrected(_bias_corrected(m.b, m.wx, wxq, sx, scale_in, x), m.wh, whq, sh, 1.0, h)
    zs = float(1 << (q8.GATE_Z_FRAC_BITS + q8.GATE_INTERP_BITS))
    real_x, real_h = sx * zs, sh * h_step * zs
    _, shift = _mult_shift(float(max(np.max(real_x), np.max(real_h))))
    # the gate sum stays below 2^61: shrink the multipliers' precision for wide (first-product) inputs
    top = (2.0 ** _acc_bits(wxq, np.zeros(4 * H), in_max) * np.max(real_x)
           + 2.0 ** _acc_bits(whq, np.zeros(4 * H), q8.H_ONE) * np.max(real_h))
    shift = int(min(shift, 40, math.floor(math.log2(2.0**60 / top))))
    mult_x = tuple(int(round(v * 2.0**shift)) for v in real_x)
    mult_h = tuple(int(round(v * 2.0**shift)) for v in real_h)
    bias = tuple(int(round(v * zs * 2.0**shift)) + (1 << (shift - 1)) for v in b)
    c_frac = int(min(14, max(7, math.floor(math.log2(q8.C_MAX / max(1.25 * c_max, 1e-6))))))
    states = spec.recurrent.state
    h_reset = states[m.h_index].reset
    c_reset = states[1 - m.h_index].reset
    sig, tnh = q8.gate_luts()
    return q8.Lstm(q8._tuple2(wxq), q8._tuple2(whq), bias, mult_x, mult_h, shift, c_frac,
                   tuple([int(np.clip(round(h_reset / h_step), -q8.Q_MAX, q8.Q_MAX))] * H),
                   tuple([int(np.clip(round(c_reset * 2**c_frac), -q8.C_MAX, q8.C_MAX))] * H), sig, tnh)


def build(net: FloatNet, spec: ObservationSpec, constants: FxConstants, clips: np.ndarray, calib: Calibration,
          provenance: dict[str, Any], act_clips: np.ndarray | None = None, act_max: int = q8.ACT8_MAX,
          bias_correction: bool = False) -> q8.Int8Net:
    """The Int8Net for per-input clip ranges ``clips`` (scaled units) and per-layer activation clip
    ranges ``act_clips`` (default: the largest activation ``calib`` reaches); ``bias_correction``:
    biases absorb the weights' mean rounding effect on ``calib`` (``_bias_corrected``)."""
    bc = (lambda v: v) if bias_correction else (lambda v: None)  # noqa: E731
    first = net.layers[0].w if net.layers else net.lstm.wx if net.lstm is not None else net.head.w
    inputs = _input_maps(spec, np.asarray(clips, dtype=np.float64), first)
    steps = np.array([m.scale for m in inputs])
    x = np.clip(calib.x_float, -clips, clips)
    layers, scale_in, a = [], steps, x
    for k, layer in enumerate(net.layers):
        a_in = a
        a = a @ layer.w + layer.b
        if layer.act == "relu":
            a = np.maximum(a, 0.0)
        top = (max(float(np.max(np.abs(a))), 1e-6) if act_clips is None else float(act_clips[k])) / act_max
        layers.append(_dense(layer.w, layer.b, scale_in, top, layer.act == "relu", q8.IN_MAX if k == 0 else act_max, bc(a_in)))
        a = np.clip(a, -top * act_max, top * act_max)
        scale_in = top
    lstm = None
    if net.lstm is not None:
        c_max, h_in = 1.0, None
        if calib.c is not None and len(calib.c):
            _, h2, c2 = net.cell(a, calib.h, calib.c)
            c_max = max(float(np.max(np.abs(calib.c))), float(np.max(np.abs(c2))))
            h_in = calib.h
        lstm = _lstm(net, scale_in, c_max, spec, act_max if net.layers else q8.IN_MAX, bc(a), bc(h_in))
        a = None if h_in is None else h2
        scale_in = 1.0 / q8.H_ONE
    head = _head(net.head.w, float(net.head.b[0]), scale_in, spec, net.head.act, bc(a))
    return q8.Int8Net(spec, constants, inputs, tuple(layers), lstm, head, provenance, act_max)


def teacher_state(model: q8.Int8Net, calib: Calibration) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The teacher's float state before each calibration decision in the int8 formats."""
    if model.lstm is None or calib.h is None:
        return None, None
    h = np.clip(np.rint(calib.h * q8.H_ONE), -q8.Q_MAX, q8.Q_MAX).astype(np.int64)
    c = np.clip(np.rint(calib.c * 2.0**model.lstm.c_frac), -q8.C_MAX, q8.C_MAX).astype(np.int64)
    return h, c


def int8_factors(model: q8.Int8Net, calib: Calibration) -> np.ndarray:
    """Clamped factors (float) of the int8 network on the calibration decisions (teacher-forced state)."""
    h, c = teacher_state(model, calib)
    q, _, _ = model.forward(calib.x_dev, h, c)
    k = model.constants
    return np.clip(q, k.clamp_min_q16, k.clamp_max_q16) / fmt.FACTOR_ONE


def _clip_grid(mags: np.ndarray) -> np.ndarray:
    """Candidate clip ranges of one input: quantiles of its visited magnitudes and the largest
    one over powers of 2 (the tail of deep congestion spans decades), largest first."""
    top = max(float(np.max(mags)), 1e-3)
    values = set(np.maximum(np.quantile(mags, CLIP_QUANTILES), 1e-3).tolist()) | {top / 2.0**k for k in range(1, 16)}
    return np.array(sorted(values, reverse=True))


def quantize_net(net: FloatNet, spec: ObservationSpec, calib: Calibration, probe_timeout_ns: int,
                 provenance: dict[str, Any]) -> tuple[q8.Int8Net, dict[str, Any]]:
    """The Int8Net with the clip ranges that minimize the factor RMSE on ``calib`` (``search``),
    with int8 hidden activations unless int16 ones measurably help (RMSE below ``INT16_GAIN``
    times int8's), bias-corrected or not (whichever searched setting is better), and the
    measurements."""
    if len(calib) == 0:
        raise BadInputError("int8 calibration: no teacher decisions")
    constants = FxConstants.from_spec(spec, probe_timeout_ns)
    acts = (q8.ACT8_MAX, q8.ACT16_MAX) if net.layers else (q8.ACT8_MAX,)
    found = {(a, bc): search(net, spec, constants, calib, provenance, a, bc) for a in acts for bc in (False, True)}
    best_of = {a: min((found[(a, bc)][1], bc) for bc in (False, True)) for a in acts}
    act = q8.ACT8_MAX
    if q8.ACT16_MAX in best_of and best_of[q8.ACT16_MAX][0] < INT16_GAIN * best_of[q8.ACT8_MAX][0]:
        act = q8.ACT16_MAX
    best, bias_correction = best_of[act]
    params = found[(act, bias_correction)][0]
    n_in = spec.input_width
    names = spec.input_names()
    record = {"input_clip": {names[i]: float(f"{params[i]:.6g}") for i in range(n_in)},
              "activation_clip": [float(f"{v:.6g}") for v in params[n_in:]],
              "activation_bits": 8 if act == q8.ACT8_MAX else 16, "bias_correction": bool(bias_correction),
              "calibration_rmse": float(f"{best:.6g}"), "calibration_decisions": len(calib),
              "calibration_rmse_by_setting": {f"int{8 if a == q8.ACT8_MAX else 16}{' bias-corrected' if bc else ''}":
                                              float(f"{v[1]:.6g}") for (a, bc), v in found.items()}}
    prov = {**provenance, **{k: record[k] for k in ("input_clip", "activation_clip", "activation_bits", "bias_correction")}}
    return build(net, spec, constants, params[:n_in], calib, prov, params[n_in:], act, bias_correction), record


def clip_loss(net: FloatNet, spec: ObservationSpec, calib: Calibration, clips: np.ndarray) -> float:
    """Largest factor change the input clip ranges alone cause in the float network on ``calib``
    (from the teacher's own state): a clip may cut only what the network ignores. The factor
    error alone would trade the rare deep-congestion decisions (a startup transient's drops)
    for resolution at the equilibrium."""
    x = np.clip(calib.x_float, -clips, clips)
    y, _, _ = net.step(x, calib.h, calib.c)
    y0, _, _ = net.step(calib.x_float, calib.h, calib.c)
    return float(np.max(np.abs(spec.output_to_factor(y) - spec.output_to_factor(y0))))


def search(net: FloatNet, spec: ObservationSpec, constants: FxConstants, calib: Calibration, provenance: dict[str, Any],
           act_max: int, bias_correction: bool = False) -> tuple[np.ndarray, float]:
    """(clip ranges of the inputs then of each pre-layer's activations, their factor RMSE). First
    the inputs, one feature at a time (shared by its window steps), over ``_clip_grid`` with every
    activation range the largest value it reaches; then each layer's activation range over the
    quantiles of its values; two sweeps each."""
    n_in = spec.input_width
    mags = np.abs(calib.x_float)
    groups = [[i for i in range(n_in) if spec.locate_input(i)[1] == f] for f in range(spec.n_features)]

    def rmse(clips: np.ndarray, acts: np.ndarray | None) -> float:
        try:
            model = build(net, spec, constants, clips, calib, provenance, acts, act_max, bias_correction)
        except BadInputError:  # scales whose integer constants would overflow: not a candidate
            return math.inf
        return float(np.sqrt(np.mean((int8_factors(model, calib) - calib.label) ** 2)))

    clips = np.array([max(float(np.max(mags[:, i])), 1e-3) for i in range(n_in)])
    best = rmse(clips, None)
    for _ in range(2):
        for group in groups:
            for value in _clip_grid(mags[:, group].reshape(-1)):
                trial = clips.copy()
                trial[group] = value
                if clip_loss(net, spec, calib, trial) > CLIP_TOLERANCE:
                    continue
                err = rmse(trial, None)
                if err < best - 1e-12:
                    best, clips = err, trial
    acts = np.array([max(float(np.max(np.abs(a))), 1e-6) for a in net.pre(np.clip(calib.x_float, -clips, clips))])
    for _ in range(2):
        for k in range(len(acts)):
            values = np.abs(net.pre(np.clip(calib.x_float, -clips, clips))[k]).reshape(-1)
            for value in np.quantile(values, CLIP_QUANTILES):
                trial = acts.copy()
                trial[k] = max(float(value), 1e-6)
                err = rmse(clips, trial)
                if err < best - 1e-12:
                    best, acts = err, trial
    return np.concatenate([clips, acts]), best
