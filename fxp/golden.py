"""The golden model: normative integer semantics of one firmware event, vectorized in numpy.

Generated C must match :func:`step` bit for bit (``rlcc-verify`` checks it). One call handles
N independent (context, event, attr) triples; chaining calls on ``ctx_out`` replays a flow.

Per event (context words from ``rlcc.formats``; ``ts`` = the event's 32-bit timestamp in ns):

1. A context with ``rate == 0`` is a new flow, whatever the event type: rate = ``rate_initial``,
   previous factor 1.0, counters 0, history invalid, ``probe_ts = ts``. A new flow always asks
   for an RTT probe (``rtt_req = 1``); the TX rule (5.) does not apply to it.
2. CNP / NACK events add ``max(1, coalesced)`` to their 16-bit counter (saturating); the rate
   is unchanged.
3. RTT events decide:
   - ``rtt_ns = (timestamp - request_send_ts) mod 2^32`` (wraparound-safe),
   - ``rtt_inflation = min((rtt_ns * INV_BASE_RTT) >> INV_BASE_RTT_SHIFT, FEATURE_MAX)`` (Q16),
   - ``delta = target - ((max(inflation - beta, 0) * isqrt(rate << 20)) >> 20)`` (Q16,
     saturated to [FEATURE_MIN, FEATURE_MAX]); ``rate`` and ``prev_action`` come from the
     context; counts from the counters;
   - the input window is the current step plus the context's history (newest first); a flow
     without valid history uses copies of the current step;
   - ``sum = bias + sum_t leaves_t[index_t]`` where ``index_t = OR_k (x[in_k] OP_k thr_k) << k``;
   - ``factor = clamp(sum, clamp_min, clamp_max)`` (Q16.16);
   - ``rate' = clamp((rate * factor) >> 16, rate_min, RATE_MAX)`` (truncating);
   - the context stores rate', factor, zero counters, the window shifted by one step and
     ``probe_ts = ts``; the result is ``{rate', rtt_req = 1}`` (request the next probe).
4. Other events (ACK, NULL, FW, unknown types) leave the context unchanged and return
   ``{rate, rtt_req = 0}``.
5. Probe loss recovery. The device keeps one RTT probe outstanding; if the probe or its
   response is lost no RTT event comes back. A TX event on an existing flow therefore checks
   ``elapsed = (ts - probe_ts) mod 2^32``: if ``elapsed >= probe_timeout_ns`` it returns
   ``{rate, rtt_req = 1}`` and stores ``probe_ts = ts``; otherwise ``{rate, rtt_req = 0}`` and
   the context is unchanged. The rate never changes on TX. No backoff: a flow whose probes
   keep getting lost re-requests one per timeout. Elapsed time is modulo 2^32 ns (4.29 s): a
   flow silent for longer may wait up to one more timeout before its next re-request.
   ``probe_timeout_ns`` is ``FxConstants.probe_timeout_ns`` (1 .. 2^32 - 1; default
   ``rlcc.formats.PROBE_TIMEOUT_NS_DEFAULT``), a host-settable firmware parameter.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlcc import formats as fmt
from rlcc.fxp.model import FxModel

_U32 = np.int64(0xFFFFFFFF)


@dataclasses.dataclass
class GoldenResult:
    ctx: np.ndarray  # (N, CTX_WORDS) uint32
    rate: np.ndarray  # (N,) uint32
    rtt_req: np.ndarray  # (N,) uint32
    features: np.ndarray  # (N, width) int64 policy inputs on RTT events (0 elsewhere)
    leaf_index: np.ndarray  # (N, n_trees) leaf taken per tree on RTT events (0 elsewhere)


def isqrt(n: np.ndarray) -> np.ndarray:
    """Exact floor square root of non-negative int64 values below 2^52."""
    n = np.asarray(n, dtype=np.int64)
    r = np.floor(np.sqrt(n.astype(np.float64))).astype(np.int64)
    r = np.where(r * r > n, r - 1, r)
    return np.where((r + 1) * (r + 1) <= n, r + 1, r)


def step_features(
    model: FxModel,
    rtt_ns: np.ndarray,
    rate: np.ndarray,
    prev_factor: np.ndarray,
    cnp: np.ndarray,
    nack: np.ndarray,
) -> np.ndarray:
    """Integer features of one step, shape (N, n_features) int64, in spec order."""
    c = model.constants
    rtt_ns = np.asarray(rtt_ns, dtype=np.int64) & _U32
    rate = np.asarray(rate, dtype=np.int64)
    inflation = np.minimum((rtt_ns * c.inv_base_rtt) >> fmt.INV_BASE_RTT_SHIFT, fmt.FEATURE_MAX)
    excess = np.maximum(inflation - c.beta_q16, 0)
    sqrt_rate = isqrt(rate << fmt.RATE_FRAC_BITS)
    delta = c.target_q16 - ((excess * sqrt_rate) >> fmt.SQRT_RATE_FRAC_BITS)
    values = {
        "prev_action": np.asarray(prev_factor, dtype=np.int64),
        "rtt_inflation": inflation,
        "rate": rate,
        "delta": np.clip(delta, fmt.FEATURE_MIN, fmt.FEATURE_MAX),
        "cnp_count": np.asarray(cnp, dtype=np.int64),
        "nack_count": np.asarray(nack, dtype=np.int64),
    }
    return np.stack([np.broadcast_to(values[f.name], rate.shape) for f in model.spec.features], axis=-1)


def window_inputs(model: FxModel, current: np.ndarray, history: np.ndarray) -> np.ndarray:
    """Policy input vectors (N, width) from the current step (N, F) and history (N, k-1, F)."""
    spec = model.spec
    steps = np.concatenate([current[:, None, :], history], axis=1)  # index 0 = current
    x = np.empty((len(current), spec.input_width), dtype=np.int64)
    for ago in range(spec.history):
        for f in range(spec.n_features):
            x[:, spec.input_index(ago, f)] = steps[:, ago, f]
    return x


def eval_trees(model: FxModel, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ensemble sum (Q16.16, int64) and leaf index per tree for integer inputs (N, width)."""
    x = np.asarray(x, dtype=np.int64)
    total = np.full(len(x), model.bias, dtype=np.int64)
    leaf_index = np.zeros((len(x), len(model.trees)), dtype=np.int64)
    for t, tree in enumerate(model.trees):
        idx = np.zeros(len(x), dtype=np.int64)
        for k, s in enumerate(tree.splits):
            col = x[:, s.input]
            bit = col > s.threshold if s.op == ">" else col < s.threshold
            idx |= bit.astype(np.int64) << k
        leaf_index[:, t] = idx
        total += np.asarray(tree.leaves, dtype=np.int64)[idx]
    return total, leaf_index


def step(model: FxModel, ctx: np.ndarray, events: np.ndarray, attr: np.ndarray | None = None) -> GoldenResult:
    """Apply one event to each of N contexts; see the module docstring for the semantics."""
    del attr  # the slot/overload attribute does not change this algorithm's decision
    spec, c = model.spec, model.constants
    ctx = np.array(ctx, dtype=np.uint32).reshape(-1, fmt.CTX_WORDS).astype(np.int64)
    ev = np.asarray(events, dtype=np.uint32).reshape(-1, fmt.EVENT_WORDS).astype(np.int64)
    n = len(ctx)
    if len(ev) != n:
        raise ValueError("one event per context")

    ts = ev[:, fmt.EV_TIMESTAMP]
    new_flow = ctx[:, fmt.CTX_RATE] == 0
    ctx[new_flow] = 0
    ctx[new_flow, fmt.CTX_RATE] = c.rate_initial
    ctx[new_flow, fmt.CTX_PREV_FACTOR] = fmt.FACTOR_ONE
    ctx[new_flow, fmt.CTX_PROBE_TS] = ts[new_flow]

    etype = ev[:, fmt.EV_ATTR] & 0xFF
    cnp = ctx[:, fmt.CTX_COUNTS] & 0xFFFF
    nack = ctx[:, fmt.CTX_COUNTS] >> 16
    bump = np.maximum(ev[:, fmt.EV_COALESCED] & 0xFFFF, 1)
    cnp = np.where(etype == fmt.EVENT_CNP, np.minimum(cnp + bump, fmt.COUNT_MAX), cnp)
    nack = np.where(etype == fmt.EVENT_NACK, np.minimum(nack + bump, fmt.COUNT_MAX), nack)
    ctx[:, fmt.CTX_COUNTS] = cnp | (nack << 16)

    rate_out = ctx[:, fmt.CTX_RATE].copy()
    rtt_req = new_flow.astype(np.int64)
    width = spec.input_width
    features = np.zeros((n, width), dtype=np.int64)
    leaf_index = np.zeros((n, len(model.trees)), dtype=np.int64)

    tx = np.flatnonzero((etype == fmt.EVENT_TX) & ~new_flow)
    due = tx[((ts[tx] - ctx[tx, fmt.CTX_PROBE_TS]) & _U32) >= c.probe_timeout_ns]
    ctx[due, fmt.CTX_PROBE_TS] = ts[due]
    rtt_req[due] = 1

    rtt = np.flatnonzero(etype == fmt.EVENT_RTT)
    if len(rtt):
        r = ctx[rtt]
        rtt_ns = (ev[rtt, fmt.EV_TIMESTAMP] - ev[rtt, fmt.EV_RTT_REQ_SEND_TS]) & _U32
        prev_factor = r[:, fmt.CTX_PREV_FACTOR].astype(np.uint32).astype(np.int32).astype(np.int64)
        current = step_features(model, rtt_ns, r[:, fmt.CTX_RATE], prev_factor, cnp[rtt], nack[rtt])
        nf, k = spec.n_features, spec.history
        stored = r[:, fmt.CTX_HISTORY : fmt.CTX_HISTORY + (k - 1) * nf].astype(np.uint32).astype(np.int32)
        stored = stored.astype(np.int64).reshape(len(rtt), k - 1, nf)
        valid = (r[:, fmt.CTX_FLAGS] & fmt.CTX_FLAG_HISTORY_VALID) != 0
        history = np.where(valid[:, None, None], stored, current[:, None, :])
        x = window_inputs(model, current, history)
        total, leaves = eval_trees(model, x)
        factor = np.clip(total, c.clamp_min_q16, c.clamp_max_q16)
        new_rate = np.clip((r[:, fmt.CTX_RATE] * factor) >> fmt.FACTOR_FRAC_BITS, c.rate_min, fmt.RATE_MAX)

        r[:, fmt.CTX_RATE] = new_rate
        r[:, fmt.CTX_PREV_FACTOR] = factor
        r[:, fmt.CTX_COUNTS] = 0
        r[:, fmt.CTX_FLAGS] |= fmt.CTX_FLAG_HISTORY_VALID
        r[:, fmt.CTX_PROBE_TS] = ts[rtt]
        if k > 1:
            shifted = np.concatenate([current[:, None, :], history[:, : k - 2, :]], axis=1)
            r[:, fmt.CTX_HISTORY : fmt.CTX_HISTORY + (k - 1) * nf] = shifted.reshape(len(rtt), -1) & _U32
        ctx[rtt] = r
        rate_out[rtt] = new_rate
        rtt_req[rtt] = 1
        features[rtt] = x
        leaf_index[rtt] = leaves

    return GoldenResult(
        ctx=ctx.astype(np.uint32),
        rate=rate_out.astype(np.uint32),
        rtt_req=rtt_req.astype(np.uint32),
        features=features,
        leaf_index=leaf_index,
    )


def make_events(etype: np.ndarray, timestamp: np.ndarray, u0: np.ndarray | None = None, coalesced: np.ndarray | None = None) -> np.ndarray:
    """Event records (N, EVENT_WORDS) uint32: type, timestamp, RTT request-send ts / coalesced count."""
    etype = np.asarray(etype, dtype=np.int64)
    ev = np.zeros((len(etype), fmt.EVENT_WORDS), dtype=np.int64)
    ev[:, fmt.EV_ATTR] = etype & 0xFF
    ev[:, fmt.EV_TIMESTAMP] = np.asarray(timestamp, dtype=np.int64) & _U32
    if u0 is not None:
        ev[:, fmt.EV_RTT_REQ_SEND_TS] = np.asarray(u0, dtype=np.int64) & _U32
    if coalesced is not None:
        ev[:, fmt.EV_COALESCED] = np.asarray(coalesced, dtype=np.int64) & 0xFFFF
    return ev.astype(np.uint32)
