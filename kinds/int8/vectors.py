"""Test vectors aimed at an int8 network's edges (``rlcc.fxp.int8_net``): each input at its
saturation limit (q = limit - 1, limit, limit + 1 and the negative side) and, for an LSTM,
contexts whose state words hold extreme h and c values (gate and tanh tables at both ends, the
int16 cell state at saturation), with the history flag set and clear. Expected outputs are the
golden model's (``rlcc.fxp.vectors.expected``)."""

from __future__ import annotations

import numpy as np

from rlcc import formats as fmt
from rlcc.fxp import int8_net as q8
from rlcc.fxp.vectors import Vectors, concat, expected
from rlcc.verify.generators import _attrs, _realistic_ctx, _realistic_rtt, _rtt_events, _u32, input_at_values


def input_at(m: q8.InputMap, q: int) -> int:
    """The smallest int32 device value whose int16 input reaches ``q`` (before the limit clamp)."""
    if m.mult == 0:
        return 0
    x = -((m.add - (q << m.shift)) // m.mult) if m.mult > 0 else (q << m.shift) - m.add
    return int(np.clip(x, q8.X_MIN, q8.X_MAX))


def saturation_vectors(model: q8.Int8Net, seed: int = 0) -> Vectors:
    """Every input at (device values near) its saturation points, the other inputs realistic."""
    rng = np.random.default_rng(seed)
    parts = []
    for i, m in enumerate(model.inputs):
        targets = np.array([input_at(m, s * (m.limit + d)) for s in (1, -1) for d in (-1, 0, 1)] + [0, 1, -1], dtype=np.int64)
        ctx, ev = input_at_values(model, rng, i, targets)
        parts.append(expected(model, ctx, ev, _attrs(rng, len(targets))))
    if model.lstm is not None:
        parts.append(state_vectors(model, rng))
    return concat(*parts).tagged("int8-edge")


def state_vectors(model: q8.Int8Net, rng: np.random.Generator, n: int = 64) -> Vectors:
    """RTT events on contexts holding extreme recurrent states (h bytes -128 .. 127, c at +-C_MAX)."""
    H = model.lstm.hidden
    h = rng.choice(np.array([-128, -127, -1, 0, 1, 127]), (n, H))
    c = rng.choice(np.array([-32768, -q8.C_MAX, -1, 0, 1, q8.C_MAX, 32767]), (n, H))
    h[: n // 4] = rng.integers(-128, 128, (n // 4, H))
    ctx = _realistic_ctx(model, rng, n).astype(np.int64)
    for k, word in enumerate(model.pack_state(h, c)):
        ctx[:, model.state_word0 + k] = word
    ctx[::3, fmt.CTX_FLAGS] &= ~fmt.CTX_FLAG_HISTORY_VALID  # a third start from the reset state
    return expected(model, _u32(ctx), _rtt_events(rng, _realistic_rtt(model, rng, n)), _attrs(rng, n))
