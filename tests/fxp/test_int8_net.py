"""The int8 network's golden semantics against an independent pure-Python reference, its
deviation from the float ONNX policy, JSON round trip and bad inputs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from rlcc import formats as fmt
from rlcc.kinds.int8.graph import read_network
from rlcc.kinds.int8.quantize import int8_factors
from rlcc.errors import BadInputError
from rlcc.fxp import golden
from rlcc.fxp import int8_net as q8
from rlcc.verify.generators import random_vectors, sequence_vectors

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from int8_models import NAMES, example, onnx_with_op  # noqa: E402


def _floor_shift(v: int, s: int) -> int:
    return v // (1 << s)  # Python's // floors, like an arithmetic right shift


def _clamp(v: int, lo: int, hi: int) -> int:
    return lo if v < lo else hi if v > hi else v


def reference(d: dict, x: list[int], words: list[int], valid: bool) -> tuple[int, list[int]]:
    """The module docstring of rlcc.fxp.int8_net, written from the JSON dict with Python ints:
    (factor before the host clamp, new state words)."""
    q = [_clamp(_floor_shift(_clamp(v, -(2**31) + 1, 2**31 - 1) * m["mult"] + m["add"], m["shift"]), -m["limit"], m["limit"])
         for v, m in zip(x, d["inputs"])]
    for layer in d["layers"]:
        lo = 0 if layer["relu"] else -d["act_max"]
        q = [_clamp(_floor_shift((b + sum(w * v for w, v in zip(row, q))) * mult + (1 << (layer["shift"] - 1)), layer["shift"]),
                    lo, d["act_max"]) for row, b, mult in zip(layer["weights"], layer["bias"], layer["mult"])]
    new_words: list[int] = []
    m = d["lstm"]
    if m is not None:
        H = len(m["wh"][0])
        G, Z, I, Q = len(m["sigmoid_lut"]) // 2, q8.GATE_Z_FRAC_BITS, q8.GATE_INTERP_BITS, q8.GATE_OUT_FRAC_BITS
        lim = G * 2**I

        def lookup(table: list[int], zv: int) -> int:
            k, r = _floor_shift(zv, I) + G, zv % 2**I
            return _floor_shift(table[k] * (2**I - r) + table[k + 1] * r + 2 ** (I - 1), I)
        hw, cw = (H + 3) // 4, (H + 1) // 2

        def field(word: int, k: int, bits: int) -> int:
            v = (word >> (bits * k)) & ((1 << bits) - 1)
            return v - (1 << bits) if v >= 1 << (bits - 1) else v

        h = [field(words[j // 4], j % 4, 8) for j in range(H)] if valid else list(m["reset_h"])
        c = [field(words[hw + j // 2], j % 2, 16) for j in range(H)] if valid else list(m["reset_c"])
        z = []
        for r in range(4 * H):
            ax = sum(w * v for w, v in zip(m["wx"][r], q))
            ah = sum(w * v for w, v in zip(m["wh"][r], h))
            z.append(_clamp(_floor_shift(ax * m["mult_x"][r] + ah * m["mult_h"][r] + m["bias"][r], m["shift"]), -lim, lim - 1))
        sig, tnh = m["sigmoid_lut"], m["tanh_lut"]
        h2, c2 = [], []
        for j in range(H):
            i_, f_, g_, o_ = lookup(sig, z[j]), lookup(sig, z[H + j]), lookup(tnh, z[2 * H + j]), lookup(sig, z[3 * H + j])
            cn = _clamp(_floor_shift(f_ * c[j] * 2**Q + i_ * g_ * 2 ** m["c_frac"] + 2 ** (2 * Q - 1), 2 * Q), -32767, 32767)
            t = _clamp(_floor_shift(cn * 2 ** (Z + I) + 2 ** (m["c_frac"] - 1), m["c_frac"]), -lim, lim - 1)
            h2.append(_floor_shift(o_ * lookup(tnh, t) * 127 + 2 ** (2 * Q - 1), 2 * Q))
            c2.append(cn)
        new_words = [0] * (hw + cw)
        for j in range(H):
            new_words[j // 4] |= (h2[j] & 0xFF) << (8 * (j % 4))
            new_words[hw + j // 2] |= (c2[j] & 0xFFFF) << (16 * (j % 2))
        q = h2
    hd = d["head"]
    acc = hd["bias"] + sum(w * v for w, v in zip(hd["weights"], q))
    t = _clamp(_floor_shift(acc * hd["mult"] + hd["add"], hd["shift"]), 0, (q8.HEAD_SEGMENTS << q8.HEAD_FRAC_BITS) - 1)
    i, fr = t >> q8.HEAD_FRAC_BITS, t & ((1 << q8.HEAD_FRAC_BITS) - 1)
    lut = hd["lut"]
    return (lut[i] * ((1 << q8.HEAD_FRAC_BITS) - fr) + lut[i + 1] * fr) >> q8.HEAD_FRAC_BITS, new_words


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "rlcc_lstm" else n for n in NAMES])
def test_golden_matches_independent_reference(name):
    _, _, model, _ = example(name)
    d = model.to_dict()
    v = random_vectors(model, 400, seed=3)
    v2 = sequence_vectors(model, 4, 30, seed=4)
    ctx = np.concatenate([v.ctx_in, v2.ctx_in])
    ev = np.concatenate([v.event, v2.event])
    g = golden.step(model, ctx, ev)
    rtt = (ev[:, fmt.EV_ATTR] & 0xFF) == fmt.EVENT_RTT
    k = model.constants
    checked = 0
    for n in np.flatnonzero(rtt):
        new_flow = ctx[n, fmt.CTX_RATE] == 0
        valid = not new_flow and bool(ctx[n, fmt.CTX_FLAGS] & fmt.CTX_FLAG_HISTORY_VALID)
        words = [int(w) for w in ctx[n, model.state_word0:model.state_word0 + model.state_words]]
        factor, new_words = reference(d, [int(x) for x in g.features[n]], words, valid)
        assert int(g.ctx[n, fmt.CTX_PREV_FACTOR]) == _clamp(factor, k.clamp_min_q16, k.clamp_max_q16), n
        assert [int(w) for w in g.ctx[n, model.state_word0:model.state_word0 + model.state_words]] == new_words, n
        checked += 1
    assert checked > 200


@pytest.mark.parametrize("name, bound", [("rlcc_mlp", 0.003), ("rlcc_lstm", 0.01)])
def test_quantized_close_to_float_onnx(name, bound):
    """int8 factors vs onnxruntime's on fresh inputs (another seed than the calibration's)."""
    from int8_models import calibration

    policy, net, model, _ = example(name)
    fresh = calibration(policy, net, n=2000, seed=11)
    err = int8_factors(model, fresh) - fresh.label
    assert np.sqrt(np.mean(err**2)) < bound
    assert np.max(np.abs(err)) < 10 * bound


@pytest.mark.parametrize("name", NAMES)
def test_json_round_trip(name):
    _, _, model, _ = example(name)
    again = q8.Int8Net.from_dict(model.to_dict())
    assert again == model and again.to_json() == model.to_json()
    assert q8.load_model_dict(model.to_dict()) == model


def test_int8_activations_cost_fidelity_on_the_mlp():
    """The measurement behind int16 hidden activations (rlcc.fxp.int8_net.ACT16_MAX)."""
    _, _, model, _ = example("rlcc_mlp")
    assert model.act_max == q8.ACT16_MAX


def test_unsupported_op_is_one_line_bad_input(tmp_path):
    path = onnx_with_op(tmp_path, "LeakyRelu")
    policy, _, _, _ = example("rlcc_mlp")
    with pytest.raises(BadInputError, match="operator LeakyRelu is not supported by --backend int8") as e:
        read_network(path, policy.spec, None)
    assert "\n" not in str(e.value)


def test_state_too_large_names_bytes_and_price():
    with pytest.raises(BadInputError) as e:
        q8.check_state_fits(16)
    msg = str(e.value)
    assert "needs 48 bytes" in msg and f"has {4 * fmt.CTX_HISTORY_WORDS} free" in msg and "12 loads" in msg and "\n" not in msg
    q8.check_state_fits(8)  # the example's: 24 bytes


def test_validate_rejects_overflowing_layer():
    import dataclasses

    _, _, model, _ = example("rlcc_mlp")
    d = model.layers[1]  # a later layer accumulates in int32 (the first in int64)
    wide = dataclasses.replace(d, bias=(2**31,) + d.bias[1:])
    with pytest.raises(BadInputError, match="overflow"):
        dataclasses.replace(model, layers=(model.layers[0], wide))


def test_gate_tables_interpolate_within_a_step_and_a_half():
    """Every gate value the device can compute (each z step) against math's sigmoid and tanh: the
    interpolated Q12 tables stay within 1.5 output steps (the Q7 tables they replaced: 1/256 of
    1.0 plus the index step's 1/64 of slope, a fixed offset at a steady state's z)."""
    import math

    sig, tnh = (np.asarray(t, dtype=np.int64) for t in q8.gate_luts())
    z = np.arange(-q8.GATE_Z_LIMIT, q8.GATE_Z_LIMIT, dtype=np.int64)
    one = 1 << q8.GATE_OUT_FRAC_BITS
    zf = z / 2.0 ** (q8.GATE_Z_FRAC_BITS + q8.GATE_INTERP_BITS)
    exact_sig = np.array([1.0 / (1.0 + math.exp(-v)) for v in zf])
    exact_tanh = np.array([math.tanh(v) for v in zf])
    assert np.max(np.abs(q8.gate_lookup(sig, z) / one - exact_sig)) * one < 1.5
    assert np.max(np.abs(q8.gate_lookup(tnh, z) / one - exact_tanh)) * one < 1.5
    assert sig[q8.GATE_HALF] * 2 == one and tnh[q8.GATE_HALF] == 0 and tnh[-1] == one == -tnh[0]


def test_version_1_reads_only_without_lstm():
    """Version 1 differs only in the LSTM's gate rules: an MLP of version 1 still reads; an LSTM of
    version 1 is refused in one line rather than run with the wrong tables."""
    for name in NAMES:
        _, _, model, _ = example(name)
        d = {**model.to_dict(), "version": 1}
        if model.lstm is None:
            assert q8.Int8Net.from_dict(d) == model
        else:
            with pytest.raises(BadInputError, match="unsupported int8 network version 1") as e:
                q8.Int8Net.from_dict(d)
            assert "\n" not in str(e.value)
