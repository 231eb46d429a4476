"""The inputs verification runs PCC firmware on, each with its golden outputs (``rlcc.fxp.vectors``):
boundary and edge vectors, random extremes, chained per-flow sequences, the model kind's own
(default the trees' observable set, ``rlcc.verify.observable``), and the small pinned set the
manifest carries for a replay without rlcc."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.codegen.context import model_sha256
from rlcc.fxp import golden
from rlcc.fxp.model import INT32_MAX, INT32_MIN, FxModel
from rlcc.fxp.vectors import U32_MAX, Vectors, concat, expected
from rlcc.verify import vector_cache
from rlcc.verify.observable import observable_vectors

_EVENT_TYPES = np.array([fmt.EVENT_NULL, fmt.EVENT_FW, fmt.EVENT_CNP, fmt.EVENT_TX, fmt.EVENT_ACK, fmt.EVENT_NACK, fmt.EVENT_RTT])
# ---- building blocks ---------------------------------------------------------------------


def _u32(a: Any) -> np.ndarray:
    """The low 32 bits: the int64 -> uint32 cast truncates (no mask pass over the array)."""
    return np.asarray(a, dtype=np.int64).astype(np.uint32)


def _attrs(rng: np.random.Generator, n: int) -> np.ndarray:
    return _u32(rng.integers(0, 32, n))


def _realistic_rtt(model: FxModel, rng: np.random.Generator, n: int) -> np.ndarray:
    base = model.spec.reward.base_rtt_ns
    return np.minimum(np.round(base * np.exp(rng.uniform(np.log(0.7), np.log(20.0), n))), U32_MAX).astype(np.int64)


def _realistic_ctx(model: FxModel, rng: np.random.Generator, n: int) -> np.ndarray:
    """Contexts a running flow could have: valid rate/factor, small counts, plausible history."""
    c = model.constants
    ctx = np.zeros((n, fmt.CTX_WORDS), dtype=np.int64)
    lo, hi = np.log(c.rate_min), np.log(fmt.RATE_MAX)
    ctx[:, fmt.CTX_RATE] = np.clip(np.round(np.exp(rng.uniform(lo, hi, n))), c.rate_min, fmt.RATE_MAX)
    ctx[:, fmt.CTX_PREV_FACTOR] = rng.integers(c.clamp_min_q16, c.clamp_max_q16 + 1, n)
    ctx[:, fmt.CTX_COUNTS] = (rng.integers(0, 4, n) << fmt.CNP_SHIFT) | (rng.integers(0, 3, n) << fmt.NACK_SHIFT)
    ctx[:, fmt.CTX_FLAGS] = fmt.CTX_FLAG_HISTORY_VALID
    ctx[:, fmt.CTX_PROBE_TS] = rng.integers(0, 1 << 32, n)
    nf, k = model.spec.n_features, model.spec.history
    for s in range(k - 1):
        feats = golden.step_features(
            model.spec,
            model.constants,
            _realistic_rtt(model, rng, n),
            ctx[:, fmt.CTX_RATE],
            rng.integers(c.clamp_min_q16, c.clamp_max_q16 + 1, n),
            rng.integers(0, 4, n),
            rng.integers(0, 3, n),
        )
        ctx[:, fmt.CTX_HISTORY + s * nf : fmt.CTX_HISTORY + (s + 1) * nf] = feats
    return _u32(golden.store_derived_states(model, ctx))


def _rtt_events(rng: np.random.Generator, rtt_ns: np.ndarray) -> np.ndarray:
    """RTT event records with the given RTTs and random (possibly wrapping) timestamps."""
    rtt_ns = np.asarray(rtt_ns, dtype=np.int64)
    req = rng.integers(0, 1 << 32, len(rtt_ns))
    return golden.make_events(np.full(len(rtt_ns), fmt.EVENT_RTT), req + rtt_ns, req)


def _search_rtt(model: FxModel, f: int, target: np.ndarray, ctx: np.ndarray) -> np.ndarray:
    """RTT (ns) whose current-step feature ``f`` is nearest to ``target`` for each context.

    RTT-driven features are monotone in the RTT (registry ``rtt_direction``): binary search for the first
    RTT crossing the target, then keep whichever neighbour lands closer.
    """
    target = np.asarray(target, dtype=np.int64)
    counts = ctx[:, fmt.CTX_COUNTS].astype(np.int64)
    prev = ctx[:, fmt.CTX_PREV_FACTOR].astype(np.int32).astype(np.int64)

    def feat(rtt: np.ndarray) -> np.ndarray:
        return golden.step_features(model.spec, model.constants, rtt, ctx[:, fmt.CTX_RATE], prev, (counts >> fmt.CNP_SHIFT) & fmt.COUNT_MAX, (counts >> fmt.NACK_SHIFT) & fmt.COUNT_MAX)[:, f]

    sign = vocab.get(model.spec.features[f].name).rtt_direction  # +1: rises with the RTT
    lo = np.zeros(len(target), dtype=np.int64)
    hi = np.full(len(target), U32_MAX, dtype=np.int64)
    for _ in range(33):
        mid = (lo + hi) >> 1
        ok = sign * feat(mid) >= sign * target
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid + 1)
    below = np.maximum(hi - 1, 0)
    closer = np.abs(feat(below) - target) < np.abs(feat(hi) - target)
    return np.where(closer, below, hi)


def _set_current(model: FxModel, rng: np.random.Generator, f: int, target: np.ndarray, ctx: np.ndarray) -> np.ndarray:
    """Set the inputs of current-step feature ``f`` to (near) ``target``; returns RTT events."""
    feat = vocab.get(model.spec.features[f].name)
    n = len(target)
    ctx64 = ctx.astype(np.int64)
    if feat.context_field is not None:  # the feature is a context field: write the value there
        fld = feat.context_field
        ctx64[:, fld.word] = fld.store(ctx64[:, fld.word], np.clip(target, *feat.device_range(model.constants)))
    ctx[:] = _u32(ctx64)
    if feat.rtt_driven:
        rtt = np.zeros(n, dtype=np.int64)
        best = np.full(n, np.iinfo(np.int64).max)
        # a rate-dependent feature (delta): try several rates, keep the closest hit
        rates = [ctx64[:, fmt.CTX_RATE]] + ([] if not feat.rate_dependent else [
            rng.integers(model.constants.rate_min, fmt.RATE_MAX + 1, n) for _ in range(15)
        ])
        chosen = ctx64[:, fmt.CTX_RATE].copy()
        for r in rates:
            trial = ctx.copy()
            trial[:, fmt.CTX_RATE] = r
            cand = _search_rtt(model, f, target, trial)
            err = np.abs(_feature_at(model, f, cand, trial) - target)
            better = err < best
            best, rtt, chosen = np.where(better, err, best), np.where(better, cand, rtt), np.where(better, r, chosen)
        ctx[:, fmt.CTX_RATE] = chosen
    else:
        rtt = _realistic_rtt(model, rng, n)
    return _rtt_events(rng, rtt)


def _feature_at(model: FxModel, f: int, rtt: np.ndarray, ctx: np.ndarray) -> np.ndarray:
    counts = ctx[:, fmt.CTX_COUNTS].astype(np.int64)
    prev = ctx[:, fmt.CTX_PREV_FACTOR].astype(np.int32).astype(np.int64)
    return golden.step_features(model.spec, model.constants, rtt, ctx[:, fmt.CTX_RATE], prev, (counts >> fmt.CNP_SHIFT) & fmt.COUNT_MAX, (counts >> fmt.NACK_SHIFT) & fmt.COUNT_MAX)[:, f]


# ---- generators --------------------------------------------------------------------------


def input_at_values(model: Any, rng: np.random.Generator, inp: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Realistic contexts and RTT events whose student input ``inp`` takes ``values``: a history
    input is set in the context directly, a current-step one by inverting its feature formula."""
    ago, f = model.spec.locate_input(inp)
    ctx = _realistic_ctx(model, rng, len(values))
    if ago == 0:
        return ctx, _set_current(model, rng, f, values, ctx)
    ctx[:, fmt.CTX_HISTORY + (ago - 1) * model.spec.n_features + f] = _u32(values)
    return golden.store_derived_states(model, ctx), _rtt_events(rng, _realistic_rtt(model, rng, len(values)))


def split_targets(model: FxModel) -> list[tuple[int, int]]:
    """(input index, value) pairs at T-1, T, T+1 of every split threshold T (int32-clipped)."""
    out: set[tuple[int, int]] = set()
    for tree in model.trees:
        for s in tree.splits:
            for d in (-1, 0, 1):
                out.add((s.input, int(np.clip(s.threshold + d, INT32_MIN, INT32_MAX))))
    return sorted(out)


RAMP_BOUNDARY_CONTEXTS = 8  # boundary vectors per ramp boundary value, each in its own random context


def ramp_targets(model: FxModel) -> list[tuple[int, int]]:
    """(input index, value) pairs on both sides of every ramp piece boundary: LO - 1 and LO,
    CENTER - 1 and CENTER, HI and HI + 1 (int32-clipped). A folded ramp's cut off by one changes
    its term at one of these values only."""
    out: set[tuple[int, int]] = set()
    for r in model.ramps:
        for v in (r.lo - 1, r.lo, r.center - 1, r.center, r.hi, r.hi + 1):
            out.add((r.input, int(np.clip(v, INT32_MIN, INT32_MAX))))
    return sorted(out)


def boundary_vectors(model: FxModel, seed: int = 0) -> Vectors:
    """Threshold boundaries of every split and ramp plus the documented edge cases (see module doc)."""
    rng = np.random.default_rng(seed)
    spec = model.spec
    parts: list[Vectors] = []
    # a ramp boundary value in several random contexts: a folded cut off by one changes the term
    # at that one value, seen only where the factor is not clamped
    pairs = sorted(set(split_targets(model))) + [p for p in ramp_targets(model) for _ in range(RAMP_BOUNDARY_CONTEXTS)]
    for inp in sorted({i for i, _ in pairs if i < spec.input_width}):  # derived: rlcc.verify.observable
        target = np.array([v for i, v in pairs if i == inp], dtype=np.int64)
        ctx, ev = input_at_values(model, rng, inp, target)
        parts.append(expected(model, ctx, ev, _attrs(rng, len(target))).tagged("boundary"))
    parts.append(_edge_vectors(model, rng))
    if spec.derived:  # its own stream: the vectors above stay as they were
        parts.append(_derived_state_vectors(model, np.random.default_rng(seed + 1)))
    return concat(*parts)


def _edge_vectors(model: FxModel, rng: np.random.Generator) -> Vectors:
    c = model.constants
    parts = []
    base_rtt = model.spec.reward.base_rtt_ns
    # RTT 0, wraparound, the largest RTT, and RTTs around beta * base RTT
    rtts = np.array([0, 1, base_rtt, U32_MAX, U32_MAX - 1, 1 << 31, (base_rtt * 3) // 2, base_rtt * 100], dtype=np.int64)
    ctx = _realistic_ctx(model, rng, len(rtts))
    parts.append(expected(model, ctx, _rtt_events(rng, rtts), _attrs(rng, len(rtts))))
    wrap_req = (1 << 32) - rng.integers(1, 50_000, 8)
    wrap_rtt = _realistic_rtt(model, rng, 8)
    ctx = _realistic_ctx(model, rng, 8)
    ev = golden.make_events(np.full(8, fmt.EVENT_RTT), wrap_req + wrap_rtt, wrap_req)
    parts.append(expected(model, ctx, ev, _attrs(rng, 8)))
    # rate extremes (valid and out of range), with small and large RTTs
    rates = np.array([1, c.rate_min - 1, c.rate_min, c.rate_min + 1, fmt.RATE_MAX - 1, fmt.RATE_MAX,
                      fmt.RATE_MAX + 1, INT32_MAX, 1 << 31, U32_MAX], dtype=np.int64)
    rates = np.maximum(rates, 1)
    for rtt in (0, base_rtt, base_rtt * 10):
        ctx = _realistic_ctx(model, rng, len(rates))
        ctx[:, fmt.CTX_RATE] = _u32(rates)
        parts.append(expected(model, ctx, _rtt_events(rng, np.full(len(rates), rtt)), _attrs(rng, len(rates))))
    # factors at and beyond the clamp (previous action), invalid history
    ctx = _realistic_ctx(model, rng, 6)
    ctx[:, fmt.CTX_PREV_FACTOR] = _u32([c.clamp_min_q16, c.clamp_max_q16, 0, INT32_MAX, INT32_MIN, -1])
    ctx[::2, fmt.CTX_FLAGS] = 0
    parts.append(expected(model, ctx, _rtt_events(rng, _realistic_rtt(model, rng, 6)), _attrs(rng, 6)))
    # brand-new (zeroed) contexts under every event type, including unknown ones
    types = np.concatenate([_EVENT_TYPES, [7, 0xFF]])
    ev = golden.make_events(types, rng.integers(0, 1 << 32, len(types)), rng.integers(0, 1 << 32, len(types)),
                            rng.integers(0, 3, len(types)))
    parts.append(expected(model, np.zeros((len(types), fmt.CTX_WORDS)), ev, _attrs(rng, len(types))))
    # CNP / NACK: coalesced 0, 1, large, saturating; counters near the 16-bit limit
    coal = np.array([0, 1, 2, 0xFFFF, 0x8000, 0, 1, 0xFFFF], dtype=np.int64)
    held = np.array([0, 0, 0xFFFE, 0, 0x8000, 0xFFFF, 0xFFFF, 0xFFFF], dtype=np.int64)
    for etype in (fmt.EVENT_CNP, fmt.EVENT_NACK):
        ctx = _realistic_ctx(model, rng, len(coal))
        ctx[:, fmt.CTX_COUNTS] = _u32((held << fmt.CNP_SHIFT) | (held << fmt.NACK_SHIFT))
        ev = golden.make_events(np.full(len(coal), etype), rng.integers(0, 1 << 32, len(coal)), None, coal)
        ev[:, fmt.EV_COALESCED] |= np.uint32(0xABCD0000)  # upper half of the word is not the count
        parts.append(expected(model, ctx, ev, _attrs(rng, len(coal))))
    # non-RTT events on running flows; event attribute bytes besides the type set
    types = np.repeat(np.array([fmt.EVENT_NULL, fmt.EVENT_FW, fmt.EVENT_TX, fmt.EVENT_ACK, 7, 0xFF]), 2)
    ctx = _realistic_ctx(model, rng, len(types))
    ev = golden.make_events(types, rng.integers(0, 1 << 32, len(types)), rng.integers(0, 1 << 32, len(types)))
    ev[:, fmt.EV_ATTR] |= _u32(rng.integers(0, 1 << 24, len(types)) << 8)
    parts.append(expected(model, ctx, ev, _attrs(rng, len(types))))
    return concat(concat(*parts).tagged("edge"), _probe_vectors(model, rng))


def _derived_state_vectors(model: FxModel, rng: np.random.Generator) -> Vectors:
    """RTT decisions on valid histories whose derived inputs' stored states are words no decision
    writes (0, the int32 extremes, all ones, ...): each input is then this step's state minus that
    word mod 2^32, as the golden model defines it (the random vectors keep the states consistent
    with their history, as every flow does)."""
    words = np.array([0, 1, 1 << 20, INT32_MAX, 1 << 31, (1 << 31) + 1, U32_MAX - (1 << 20), U32_MAX], dtype=np.int64)
    parts = []
    for k in range(len(model.spec.derived)):
        ctx = _realistic_ctx(model, rng, len(words)).astype(np.int64)
        ctx[:, model.derived_word(k)] = words
        parts.append(expected(model, _u32(ctx), _rtt_events(rng, _realistic_rtt(model, rng, len(words))),
                              _attrs(rng, len(words))))
    return concat(*parts).tagged("edge")


def _probe_elapsed(model: FxModel) -> np.ndarray:
    """TX-event ages of the last probe request around the timeout T, and extremes."""
    t = model.constants.probe_timeout_ns
    values = [0, 1, t - 1, t, t + 1, t // 2, 2 * t, (1 << 31) - 1, 1 << 31, U32_MAX - 1, U32_MAX]
    return np.unique(np.clip(np.array(values, dtype=np.int64), 0, U32_MAX))


def _probe_vectors(model: FxModel, rng: np.random.Generator) -> Vectors:
    """TX events at elapsed T-1 / T / T+1 (and extremes) since the last probe request,
    with and without a 32-bit clock wrap in between; non-TX events after a long silence
    (no re-request); new flows started by TX at clock extremes."""
    parts = []
    elapsed = _probe_elapsed(model)
    m = len(elapsed)
    # last request just before the wrap (so most timestamps wrap), mid-range, and at 0
    for probe_ts in (U32_MAX - 2, U32_MAX - model.constants.probe_timeout_ns // 2, 1 << 31, 0, None):
        ctx = _realistic_ctx(model, rng, m)
        if probe_ts is not None:
            ctx[:, fmt.CTX_PROBE_TS] = probe_ts
        ts = ctx[:, fmt.CTX_PROBE_TS].astype(np.int64) + elapsed
        ev = golden.make_events(np.full(m, fmt.EVENT_TX), ts, rng.integers(0, 1 << 32, m))
        flags = rng.choice([0, fmt.TX_FLAG_ACK_EXPECTED, fmt.TX_FLAG_RTT_REQ_SENT, 0x7], m)
        ev[:, fmt.EV_ATTR] |= _u32(flags << 24)
        parts.append(expected(model, ctx, ev, _attrs(rng, m)))
    # the other event types never re-request, however old the last request
    types = np.array([fmt.EVENT_NULL, fmt.EVENT_FW, fmt.EVENT_ACK, fmt.EVENT_CNP, fmt.EVENT_NACK, 7, 0xFF])
    ctx = _realistic_ctx(model, rng, len(types))
    ts = ctx[:, fmt.CTX_PROBE_TS].astype(np.int64) + model.constants.probe_timeout_ns + rng.integers(0, 1000, len(types))
    parts.append(expected(model, ctx, golden.make_events(types, ts, None, rng.integers(0, 3, len(types))),
                          _attrs(rng, len(types))))
    # new flows started by a TX event (stale words in the zero-rate context are ignored)
    ts = np.array([0, 1, model.constants.probe_timeout_ns, 1 << 31, U32_MAX], dtype=np.int64)
    ctx = np.zeros((len(ts), fmt.CTX_WORDS), dtype=np.int64)
    ctx[1::2, fmt.CTX_PROBE_TS] = rng.integers(0, 1 << 32, len(ts))[1::2]
    ctx[1::2, fmt.CTX_FLAGS] = fmt.CTX_FLAG_HISTORY_VALID
    parts.append(expected(model, _u32(ctx), golden.make_events(np.full(len(ts), fmt.EVENT_TX), ts), _attrs(rng, len(ts))))
    return _tag_probe(model, concat(*parts))


def _tag_probe(model: FxModel, v: Vectors) -> Vectors:
    """Tag TX events on running flows at elapsed = timeout - 1 / timeout / timeout + 1; the rest "edge"."""
    t = model.constants.probe_timeout_ns
    tx = ((v.event[:, fmt.EV_ATTR] & 0xFF) == fmt.EVENT_TX) & (v.ctx_in[:, fmt.CTX_RATE] != 0)
    elapsed = (v.event[:, fmt.EV_TIMESTAMP].astype(np.int64) - v.ctx_in[:, fmt.CTX_PROBE_TS]) & U32_MAX
    tags = np.full(len(v), "edge", dtype=object)
    for d, tag in ((-1, "T-1"), (0, "T"), (1, "T+1")):
        tags[tx & (elapsed == t + d)] = f"probe_timeout:{tag}"
    return dataclasses.replace(v, targets=tags)


def random_vectors(model: FxModel, n: int, seed: int = 0) -> Vectors:
    """``n`` random vectors mixing realistic and extreme context words and events."""
    rng = np.random.default_rng(seed)
    c = model.constants
    ctx = _realistic_ctx(model, rng, n).astype(np.int64)

    def mix(column: np.ndarray, choices: list[int], p_choice: float, p_random: float) -> np.ndarray:
        u = rng.random(n)
        picked = np.asarray(choices, dtype=np.int64)[rng.integers(0, len(choices), n)]
        column = np.where(u < p_choice, picked, column)
        return np.where(u > 1 - p_random, rng.integers(0, 1 << 32, n), column)

    ctx[:, fmt.CTX_RATE] = mix(ctx[:, fmt.CTX_RATE], [0, 1, c.rate_min, fmt.RATE_MAX, fmt.RATE_MAX + 1, U32_MAX], 0.15, 0.1)
    ctx[:, fmt.CTX_PREV_FACTOR] = mix(ctx[:, fmt.CTX_PREV_FACTOR], [0, fmt.FACTOR_ONE, c.clamp_min_q16, c.clamp_max_q16,
                                                                    INT32_MAX, 1 << 31, U32_MAX], 0.1, 0.1)
    ctx[:, fmt.CTX_COUNTS] = mix(ctx[:, fmt.CTX_COUNTS], [0, 0xFFFF, 0xFFFF0000, U32_MAX, 0xFFFEFFFE], 0.1, 0.1)
    ctx[:, fmt.CTX_FLAGS] = mix(ctx[:, fmt.CTX_FLAGS], [0, 1, 2, 3, 0x80000001, U32_MAX], 0.2, 0.05)
    ctx[:, fmt.CTX_PROBE_TS] = mix(ctx[:, fmt.CTX_PROBE_TS], [0, 1 << 31, U32_MAX], 0.1, 0.0)
    thresholds = [t & U32_MAX for _, t in split_targets(model)] or [0]
    for w in range(fmt.CTX_HISTORY, fmt.CTX_WORDS):
        ctx[:, w] = mix(ctx[:, w], thresholds + [0, 1 << 31, INT32_MAX, U32_MAX], 0.3, 0.1)
    golden.store_derived_states(model, ctx)  # derived states as a flow stores them: of the history word (edge vectors vary them)

    types = np.where(rng.random(n) < 0.6, fmt.EVENT_RTT, rng.integers(0, 8, n))
    types = np.where(rng.random(n) < 0.01, 0xFF, types)
    rtt = _realistic_rtt(model, rng, n)
    rtt = mix(rtt, [0, 1, U32_MAX, 1 << 31], 0.05, 0.15)
    ts = rng.integers(0, 1 << 32, n)
    ev = golden.make_events(types, ts, ts - rtt, mix(rng.integers(0, 4, n), [0, 0xFFFF, 0x8000], 0.2, 0.1))
    ev[:, fmt.EV_ATTR] |= _u32(np.where(rng.random(n) < 0.2, rng.integers(0, 1 << 24, n), 0) << 8)
    # TX events: most at a last-request age near the probe timeout (else nearly all would be due)
    t = model.constants.probe_timeout_ns
    age = mix(rng.integers(0, 2 * t + 1, n), [0, t - 1, t, t + 1, U32_MAX], 0.2, 0.1)
    near = (types == fmt.EVENT_TX) & (rng.random(n) < 0.8)
    ev[:, fmt.EV_TIMESTAMP] = np.where(near, _u32(ctx[:, fmt.CTX_PROBE_TS] + age), ev[:, fmt.EV_TIMESTAMP])
    noise = rng.random((n, fmt.EVENT_WORDS)) < 0.1
    keep = np.zeros(fmt.EVENT_WORDS, dtype=bool)
    keep[[fmt.EV_ATTR, fmt.EV_TIMESTAMP, fmt.EV_RTT_REQ_SEND_TS, fmt.EV_COALESCED]] = True
    ev = np.where(noise & ~keep, _u32(rng.integers(0, 1 << 32, (n, fmt.EVENT_WORDS))), ev)
    return expected(model, _u32(ctx), ev, _attrs(rng, n)).tagged("random")


def sequence_vectors(model: FxModel, n_flows: int, n_events: int, seed: int = 0) -> Vectors:
    """``n_flows`` flows from a zeroed context, each a chain of ``n_events`` realistic events.

    Each record's ctx_in is the golden ctx_out of the same flow's previous record; records are
    ordered event-major (all flows' first events, then all second events, ...). Events are
    mostly tens of microseconds apart; about one in twelve follows a silence of 0.5 to 1.5
    probe timeouts (a lost probe: the next TX event must re-request it). Every other flow
    starts shortly before the 32-bit clock wraps.
    """
    rng = np.random.default_rng(seed)
    base = model.spec.reward.base_rtt_ns
    timeout = model.constants.probe_timeout_ns
    ctx = np.zeros((n_flows, fmt.CTX_WORDS), dtype=np.uint32)
    now = rng.integers(0, 1 << 32, n_flows)
    now[::2] = (1 << 32) - rng.integers(1, min(4 * timeout + 2, 1 << 32), len(now[::2]))
    queue = rng.uniform(0.0, 2.0, n_flows)  # queueing delay in base RTTs, a random walk
    kinds = np.array([fmt.EVENT_RTT, fmt.EVENT_TX, fmt.EVENT_CNP, fmt.EVENT_NACK, fmt.EVENT_ACK])
    probs = np.array([0.55, 0.25, 0.1, 0.05, 0.05])
    parts = []
    for _ in range(n_events):
        queue = np.clip(queue + rng.normal(0.0, 0.3, n_flows), 0.0, 30.0)
        rtt = np.round(base * (1.0 + queue) * rng.uniform(0.95, 1.05, n_flows)).astype(np.int64)
        types = kinds[rng.choice(len(kinds), n_flows, p=probs)]
        gap = rng.integers(100, 5 * base, n_flows)
        lost = rng.random(n_flows) < 1 / 12
        gap = np.where(lost, np.round(timeout * rng.uniform(0.5, 1.5, n_flows)).astype(np.int64), gap)
        now = (now + gap) & U32_MAX
        ev = golden.make_events(types, now, now - rtt, rng.integers(0, 4, n_flows))
        v = expected(model, ctx, ev, _attrs(rng, n_flows))
        parts.append(v)
        ctx = v.ctx_out
    stacked = concat(*parts) if parts else expected(model, np.zeros((0, fmt.CTX_WORDS)), np.zeros((0, fmt.EVENT_WORDS)))
    return stacked.tagged("sequence")


ModelVectors = Callable[[Any, int], Vectors]  # (model, seed) -> the vectors a model kind adds
PINNED_FLOWS, PINNED_EVENTS = 4, 16  # the manifest's pinned set: 64 chained events


def verification_set(model: FxModel, seed: int = 0, n_random: int = 100_000,
                     model_vectors: ModelVectors | None = None) -> tuple[Vectors, list[str]]:
    """What the verifier runs: the model's own vectors (default the trees' observable set), boundary
    and edge vectors, ``n_random`` random vectors and 8 flows x 64 chained events; with each
    vector's target tag (an observable target id or the generator's name)."""
    own = model_derived_vectors(model, seed) if model_vectors is None else concat(model_vectors(model, seed),
                                                                                   boundary_vectors(model, seed))
    vec = concat(own, random_vectors(model, n_random, seed + 1), sequence_vectors(model, 8, 64, seed + 2))
    return vec, [str(t) for t in vec.targets]


def model_derived_vectors(model: FxModel, seed: int = 0) -> Vectors:
    """The trees' observable set and the boundary and edge vectors: what depends on the model and
    the seed alone, and takes the search's seconds; kept in ``rlcc.verify.vector_cache``."""
    cache_key = vector_cache.key(model_sha256(model), seed, "tree_vectors+boundary_vectors")
    cached = vector_cache.load(cache_key)
    if cached is not None:
        return cached
    vec = concat(tree_vectors(model, seed), boundary_vectors(model, seed))
    vector_cache.store(cache_key, vec)
    return vec


def pinned_vectors(model: FxModel, seed: int = 0) -> Vectors:
    """The few vectors the manifest carries (chained realistic events from a zeroed context), so a
    replay of the C elsewhere (an RTL simulation, the device) can check it without rlcc."""
    return sequence_vectors(model, PINNED_FLOWS, PINNED_EVENTS, seed + 3)


def tree_vectors(model: Any, seed: int) -> Vectors:
    """The trees' own vectors: one per observable target (``rlcc.verify.observable``)."""
    return observable_vectors(model, seed).vectors
