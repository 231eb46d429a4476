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
   - ``delta = target - ((max(inflation - beta, 0) * isqrt(min(rate, RATE_MAX) << 20)) >> 20)`` (Q16,
     saturated to [FEATURE_MIN, FEATURE_MAX]); ``rate`` and ``prev_action`` come from the
     context; counts from the counters;
   - the input window is the current step plus the context's history (newest first); a flow
     without valid history uses copies of the current step;
   - a derived input (``rlcc.derived``) combines this step's state of its source (e.g. slog(delta))
     with the previous step's, which the context keeps in a word after the window (this step's own
     while the history is invalid), in 32 bits: ``as_int32((combine(s, prev)) mod 2^32)``;
   - ``sum = bias + sum_t leaves_t[index_t] + sum_r ramp_r`` where ``index_t = OR_k (x[in_k] OP_k
     thr_k) << k`` and ``ramp_r = trunc(d * k / 2^shift)``, ``d = clamp(x[in_r], lo, hi) - center``,
     ``k = k_below if d < 0 else k_above`` (truncation toward zero; ``|d k| < 2^31``);
     (another backend replaces this sum by its own decision: ``rlcc.fxp.int8_net``, whose recurrent
     state lives in the context words after the window and is reset while the history is invalid);
   - ``factor = clamp(sum, clamp_min, clamp_max)`` (Q16.16);
   - ``p = rate * factor + carry`` with ``carry = flags >> 16`` (error feedback: the fraction
     the previous update dropped), ``rate' = clamp(p >> 16, rate_min, RATE_MAX)``;
   - the context stores rate', factor, zero counters, flags = ``(p mod 2^16) << 16 | history
     valid``, the window shifted by one step, each derived input's state ``s`` and ``probe_ts = ts``; the result is ``{rate', rtt_req = 1}`` (request the next probe).
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

One source of truth, two evaluators: :func:`event_core` states these rules once over an
integer interface (:class:`IntOps`): operators ``+ - * & | >> <<`` and comparisons, plus the few
primitives in ``IntOps`` (the square root and the two wide products are primitives because the
firmware computes each in one out-of-line function, which the proof checks on its own).
:class:`NumpyOps` runs it vectorized on int64 arrays (this module's
:func:`step`); ``rlcc.verify.symbolic_golden`` runs the same function on z3 bit-vectors to prove
firmware equivalent for all inputs. Every value is an exact integer that fits int64.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, Sequence

import numpy as np

from rlcc import derived as derived_vocab
from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.fxp.model import FxConstants, FxModel, Ramp
from rlcc.parallel import available_cpus
from rlcc.spec import ObservationSpec

_U32 = 0xFFFFFFFF


class IntOps(Protocol):
    """What :func:`event_core` needs beyond Python operators, for one kind of integer value.

    Values behave as exact int64 integers; ``cond`` values are what comparisons return.
    """

    def where(self, cond: Any, a: Any, b: Any) -> Any: ...

    def both(self, a: Any, b: Any) -> Any: ...

    def negate(self, cond: Any) -> Any: ...

    def to_int(self, cond: Any) -> Any: ...

    def lookup(self, table: Sequence[int], index: Any) -> Any: ...

    def sqrt_rate(self, rate: Any) -> Any:
        """floor(sqrt(min(rate, RATE_MAX) << RATE_FRAC_BITS)) for a context rate 0 <= rate < 2^32
        (a rate above RATE_MAX exists only in a corrupted context: no event leaves one)."""
        ...

    def slog(self, d: Any) -> Any:
        """sign(d) * mlog2(1 + |d|) in Q.16 for an int32 ``d`` (``rlcc.derived.slog_int``; the
        firmware's ``rlcc_slog``, inline in its out-of-line ``rlcc_log_ratio``)."""
        ...

    def mul_shr(self, a: Any, b: Any, shift: int) -> Any:
        """floor(a * b / 2^shift) for 0 <= a, b < 2^32 whose product fits int64 (the firmware's
        two wide products, ``delta``'s penalty and the rate update's exact product, each one
        out-of-line call)."""
        ...

    def ramp(self, i: int, r: Ramp, x: Any) -> Any:
        """Ramp ``i``'s term for an int32 ``x`` (:func:`ramp_value`; the firmware's out-of-line
        ``<name>_ramp_<i>``)."""
        ...

    def add_terms(self, terms: Sequence[Any], bound: int) -> Any:
        """``sum(terms)`` where ``bound`` bounds the sum of the terms' magnitudes."""
        ...

    def ensemble_sum(self, x: Sequence[Any], tree_terms: Sequence[Any], ramp_terms: Sequence[Any], bound: int) -> Any:
        """``sum(tree_terms) + sum(ramp_terms)`` (bias and leaves, then the ramps' terms, all of the
        policy inputs ``x``) where ``bound`` bounds the sum of all the terms' magnitudes (the proof
        may abstract the two partial sums, as the firmware computes them out of line)."""
        ...


class NumpyOps:
    """:class:`IntOps` over numpy int64 arrays (the executable golden model)."""

    where = staticmethod(np.where)

    @staticmethod
    def both(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a & b

    @staticmethod
    def negate(cond: np.ndarray) -> np.ndarray:
        return ~cond

    @staticmethod
    def to_int(cond: np.ndarray) -> np.ndarray:
        return np.asarray(cond).astype(np.int64)

    @staticmethod
    def lookup(table: Sequence[int], index: np.ndarray) -> np.ndarray:
        return np.asarray(table, dtype=np.int64)[index]

    @staticmethod
    def sqrt_rate(rate: np.ndarray) -> np.ndarray:
        return isqrt(np.minimum(np.asarray(rate, dtype=np.int64), fmt.RATE_MAX) << fmt.RATE_FRAC_BITS)

    def slog(self, d: np.ndarray) -> np.ndarray:
        return derived_vocab.slog_int(self, np.asarray(d, dtype=np.int64))

    @staticmethod
    def mul_shr(a: np.ndarray, b: np.ndarray, shift: int) -> np.ndarray:
        return (a * b) >> shift

    def ramp(self, i: int, r: Ramp, x: np.ndarray) -> np.ndarray:
        return ramp_value(self, r, x)

    @staticmethod
    def add_terms(terms: Sequence[Any], bound: int) -> Any:
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    def ensemble_sum(self, x: Sequence[Any], tree_terms: Sequence[Any], ramp_terms: Sequence[Any], bound: int) -> Any:
        return self.add_terms([*tree_terms, *ramp_terms], bound)


NUMPY = NumpyOps()


@dataclasses.dataclass
class GoldenResult:
    ctx: np.ndarray  # (N, CTX_WORDS) uint32
    rate: np.ndarray  # (N,) uint32
    rtt_req: np.ndarray  # (N,) uint32
    features: np.ndarray  # (N, width) int64 policy inputs on RTT events (0 elsewhere)
    leaf_index: np.ndarray  # (N, n_trees) leaf taken per tree on RTT events (0 elsewhere)


@dataclasses.dataclass
class EventOutcome:
    """:func:`event_core`'s result for one event (or a vector of events), in ``ops`` values."""

    ctx: list[Any]  # CTX_WORDS words, each 0 .. 2^32 - 1
    rate: Any
    rtt_req: Any
    is_rtt: Any  # cond: the event was a decision
    inputs: list[Any]  # policy inputs of the decision (meaningful where is_rtt)
    leaf_index: list[Any]  # leaf per tree (meaningful where is_rtt)


def isqrt(n: np.ndarray) -> np.ndarray:
    """Exact floor square root of non-negative int64 values below 2^52."""
    n = np.asarray(n, dtype=np.int64)
    r = np.floor(np.sqrt(n.astype(np.float64))).astype(np.int64)
    r = np.where(r * r > n, r - 1, r)
    return np.where((r + 1) * (r + 1) <= n, r + 1, r)


def _as_int32(ops: IntOps, word: Any) -> Any:
    """Two's-complement reading of a 32-bit word held as 0 .. 2^32 - 1."""
    return ops.where(word > 0x7FFFFFFF, word - (1 << 32), word)


def features_core(ops: IntOps, spec: ObservationSpec, c: FxConstants, rtt_ns: Any, rate: Any, prev_factor: Any,
                  cnp: Any, nack: Any) -> list[Any]:
    """Integer features of one step in spec order, by the registry's formulas (``rlcc.features``);
    they depend on the spec and its constants only, not on the trees."""
    step = vocab.DeviceStep(ops, c, rtt_ns, rate, prev_factor, cnp, nack)
    return [vocab.get(f.name).device_value(step) for f in spec.features]


def ensemble_core(ops: IntOps, model: FxModel, x: Sequence[Any]) -> tuple[Any, list[Any]]:
    """Ensemble sum (Q16.16) and the leaf index per tree for policy inputs ``x``: bias, then the
    trees' leaves in order, then the ramps' terms."""
    terms, leaves = tree_terms(ops, model, x)
    bound = 0 if ops is NUMPY else sum_bound(model)  # int64 sums are exact: only the z3 ops read it
    return ops.ensemble_sum(x, terms, ramp_terms(ops, model, x), bound), leaves


def tree_terms(ops: IntOps, model: FxModel, x: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """The bias and each tree's leaf for policy inputs ``x``, and the leaf index per tree."""
    if ops is NUMPY and model.trees and all(t.splits for t in model.trees) and _columns(x):
        return _tree_terms_numpy(model, x)
    terms: list[Any] = [model.bias]
    leaves = []
    for tree in model.trees:
        idx: Any = 0
        for k, s in enumerate(tree.splits):
            bit = x[s.input] > s.threshold if s.op == ">" else x[s.input] < s.threshold
            idx = idx | (ops.to_int(bit) << k)
        leaves.append(idx)
        terms.append(ops.lookup(tree.leaves, idx))
    return terms, leaves


def _columns(x: Sequence[Any]) -> bool:
    """``x`` is one int64 column of equal length per input (the batched golden model's case)."""
    return bool(x) and all(isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype == np.int64 and len(v) == len(x[0])
                           for v in x)


_SPLIT_LOOP_MIN_ROWS = 256  # from here on the (trees x splits x rows) matmul outweighs per-split calls


def _tree_terms_numpy(model: FxModel, x: Sequence[np.ndarray]) -> tuple[list[Any], list[Any]]:
    """:func:`tree_terms` on int64 columns: the same comparisons, bits and lookups, batched two
    ways by size (small batches pay numpy's per-call cost, large ones the arithmetic)."""
    if len(x[0]) >= _SPLIT_LOOP_MIN_ROWS:
        return _tree_terms_by_split(model, x)
    return _tree_terms_one_pass(model, x)


def _tree_terms_by_split(model: FxModel, x: Sequence[np.ndarray]) -> tuple[list[Any], list[Any]]:
    """Large batches: one comparison per split on its input column, the bits packed into a byte
    per row (an int64 index only for trees deeper than 8): 10x faster than the one-pass matmul at 1M rows."""
    terms: list[Any] = [model.bias]
    leaves: list[Any] = []
    for tree in model.trees:
        acc = np.zeros(len(x[0]), dtype=np.uint8 if len(tree.splits) <= 8 else np.int64)
        for k, s in enumerate(tree.splits):
            bit = x[s.input] > s.threshold if s.op == ">" else x[s.input] < s.threshold
            acc |= bit.astype(acc.dtype) << acc.dtype.type(k)
        idx = acc.astype(np.int64)
        leaves.append(idx)
        terms.append(np.asarray(tree.leaves, dtype=np.int64)[idx])
    return terms, leaves


def _tree_terms_one_pass(model: FxModel, x: Sequence[np.ndarray]) -> tuple[list[Any], list[Any]]:
    """Small batches: every split of every tree at once (one numpy call each instead of one per split)."""
    splits = [(t, k, s) for t, tree in enumerate(model.trees) for k, s in enumerate(tree.splits)]
    inputs = np.array([s.input for _, _, s in splits])
    thr = np.array([s.threshold for _, _, s in splits], dtype=np.int64)[:, None]
    greater = np.array([s.op == ">" for _, _, s in splits])[:, None]
    cols = np.stack(x)[inputs]
    bits = np.where(greater, cols > thr, cols < thr).astype(np.int64)
    weights = np.zeros((len(model.trees), len(splits)), dtype=np.int64)  # tree t's split k -> 2^k
    for j, (t, k, _) in enumerate(splits):
        weights[t, j] = 1 << k
    idx = weights @ bits
    width = max(len(t.leaves) for t in model.trees)
    table = np.array([list(t.leaves) + [0] * (width - len(t.leaves)) for t in model.trees], dtype=np.int64)
    values = table[np.arange(len(model.trees))[:, None], idx]
    return [model.bias, *values], list(idx)


def ramp_terms(ops: IntOps, model: FxModel, x: Sequence[Any]) -> list[Any]:
    """Each ramp's term for policy inputs ``x``."""
    return [ops.ramp(i, ramp, x[ramp.input]) for i, ramp in enumerate(model.ramps)]


def sum_bound(model: FxModel) -> int:
    """A bound of the sum of the ensemble terms' magnitudes, also of a ramp's abstraction in the
    proof (any value of its bits)."""
    return abs(model.bias) + sum(max(abs(v) for v in t.leaves) for t in model.trees) + sum(
        1 << (r.term_bits - 1) for r in model.ramps)


def ramp_value(ops: IntOps, r: Ramp, x: Any) -> Any:
    """One ramp's term (Q16.16) for int32 input value ``x``: the module docstring's rule, as the
    firmware computes it (magnitude on unsigned 32-bit, then the sign)."""
    d = vocab.iclip(ops, x, r.lo, r.hi) - r.center
    below = d < 0
    mag = ops.where(below, -d, d)
    low = (mag * abs(r.k_below)) >> r.shift
    high = (mag * abs(r.k_above)) >> r.shift
    return ops.where(below, low if r.k_below < 0 else -low, -high if r.k_above < 0 else high)


def event_core(ops: IntOps, model: FxModel, ctx: Sequence[Any], ev: Sequence[Any]) -> EventOutcome:
    """The module docstring's rules 1-5 for one event: ``ctx``/``ev`` words are 0 .. 2^32 - 1."""
    spec, c = model.spec, model.constants
    ts = ev[fmt.EV_TIMESTAMP]
    etype = ev[fmt.EV_ATTR] & fmt.EVENT_TYPE_MASK
    new_flow = ctx[fmt.CTX_RATE] == 0
    fresh = [0] * fmt.CTX_WORDS
    fresh[fmt.CTX_RATE], fresh[fmt.CTX_PREV_FACTOR], fresh[fmt.CTX_PROBE_TS] = c.rate_initial, fmt.FACTOR_ONE, ts
    w = [ops.where(new_flow, fresh[i], ctx[i]) for i in range(fmt.CTX_WORDS)]

    counts = w[fmt.CTX_COUNTS]
    cnp, nack = (counts >> fmt.CNP_SHIFT) & fmt.COUNT_MAX, (counts >> fmt.NACK_SHIFT) & fmt.COUNT_MAX
    bump = vocab.imax(ops, ev[fmt.EV_COALESCED] & fmt.COALESCED_MASK, 1)
    counted = list(w)
    counted[fmt.CTX_COUNTS] = (
        (ops.where(etype == fmt.EVENT_CNP, vocab.imin(ops, cnp + bump, fmt.COUNT_MAX), cnp) << fmt.CNP_SHIFT)
        | (ops.where(etype == fmt.EVENT_NACK, vocab.imin(ops, nack + bump, fmt.COUNT_MAX), nack) << fmt.NACK_SHIFT)
    )
    due = ops.both(
        ops.both(etype == fmt.EVENT_TX, ops.negate(new_flow)),
        ((ts - w[fmt.CTX_PROBE_TS]) & _U32) >= c.probe_timeout_ns,
    )
    counted[fmt.CTX_PROBE_TS] = ops.where(due, ts, w[fmt.CTX_PROBE_TS])
    rtt_req_other = ops.where(ops.both(ops.negate(new_flow), ops.negate(due)), 0, 1)

    # rule 3: an RTT decision (its counts are the context's: RTT events do not count)
    rate = w[fmt.CTX_RATE]
    rtt_ns = (ts - ev[fmt.EV_RTT_REQ_SEND_TS]) & _U32
    current = features_core(ops, spec, c, rtt_ns, rate, _as_int32(ops, w[fmt.CTX_PREV_FACTOR]), cnp, nack)
    nf, k = spec.n_features, spec.history
    valid = (w[fmt.CTX_FLAGS] & fmt.CTX_FLAG_HISTORY_VALID) != 0
    steps = [current] + [
        [ops.where(valid, _as_int32(ops, w[fmt.CTX_HISTORY + (ago - 1) * nf + f]), current[f]) for f in range(nf)]
        for ago in range(1, k)
    ]
    x: list[Any] = [0] * spec.input_width
    for ago in range(k):
        for f in range(nf):
            x[spec.input_index(ago, f)] = steps[ago][f]
    derived, derived_states = _derived_step(ops, model, x, w, valid)
    x += derived
    state: dict[int, Any] = {}
    if hasattr(model, "decision_core"):  # another backend's decision (rlcc.fxp.int8_net): its state words
        total, leaves, state = model.decision_core(ops, x, w, valid)
    else:
        total, leaves = ensemble_core(ops, model, x)
    factor = vocab.iclip(ops, total, c.clamp_min_q16, c.clamp_max_q16)
    product = ops.mul_shr(rate, factor, 0) + (w[fmt.CTX_FLAGS] >> fmt.CTX_RATE_CARRY_SHIFT)
    new_rate = vocab.iclip(ops, product >> fmt.FACTOR_FRAC_BITS, c.rate_min, fmt.RATE_MAX)
    decided = list(w)
    decided[fmt.CTX_RATE] = new_rate
    decided[fmt.CTX_PREV_FACTOR] = factor & _U32
    decided[fmt.CTX_COUNTS] = 0
    decided[fmt.CTX_FLAGS] = ((product & fmt.RATE_CARRY_MASK) << fmt.CTX_RATE_CARRY_SHIFT) | fmt.CTX_FLAG_HISTORY_VALID
    decided[fmt.CTX_PROBE_TS] = ts
    for ago in range(1, k):  # stored step `ago` = this window's step ago - 1
        for f in range(nf):
            decided[fmt.CTX_HISTORY + (ago - 1) * nf + f] = steps[ago - 1][f] & _U32
    for k, s in enumerate(derived_states):
        decided[model.derived_word(k)] = s & _U32
    for word, value in state.items():
        decided[word] = value

    is_rtt = etype == fmt.EVENT_RTT
    out = [ops.where(is_rtt, decided[i], counted[i]) for i in range(fmt.CTX_WORDS)]
    return EventOutcome(
        ctx=out,
        rate=out[fmt.CTX_RATE],
        rtt_req=ops.where(is_rtt, 1, rtt_req_other),
        is_rtt=is_rtt,
        inputs=x,
        leaf_index=leaves,
    )


def step_features(
    spec: ObservationSpec,
    constants: FxConstants,
    rtt_ns: np.ndarray,
    rate: np.ndarray,
    prev_factor: np.ndarray,
    cnp: np.ndarray,
    nack: np.ndarray,
) -> np.ndarray:
    """Integer features of one step, shape (N, n_features) int64, in spec order."""
    rate = np.asarray(rate, dtype=np.int64)
    cols = features_core(
        NUMPY,
        spec,
        constants,
        np.asarray(rtt_ns, dtype=np.int64),
        rate,
        np.asarray(prev_factor, dtype=np.int64),
        np.asarray(cnp, dtype=np.int64),
        np.asarray(nack, dtype=np.int64),
    )
    return np.stack([np.broadcast_to(v, rate.shape) for v in cols], axis=-1)


def _derived_step(ops: IntOps, model: Any, x: Sequence[Any], w: Sequence[Any], valid: Any) -> tuple[list[Any], list[Any]]:
    """A decision's derived inputs and the states the context keeps for the next one: each input
    combines this step's state of its source (computed) with the previous step's (its context word,
    or this step's own while the history is invalid), in 32 bits as the firmware does (a context
    no decision wrote may hold any word)."""
    spec = model.spec
    values, states = [], []
    for k, name in enumerate(spec.derived):
        d = derived_vocab.get(name)
        s = d.state_value(ops, x[spec.derived_sources(k)[0]])
        prev = ops.where(valid, _as_int32(ops, w[model.derived_word(k)]), s)
        values.append(_as_int32(ops, d.combine(ops, s, prev) & _U32))
        states.append(s)
    return values, states


def store_derived_states(model: Any, ctx: np.ndarray) -> np.ndarray:
    """``ctx`` (N, CTX_WORDS) with each derived input's state word as the decision that stored its
    history would have written it: the state of the newest stored value of its source (contexts
    built from chosen history values stay ones a flow can reach)."""
    spec = model.spec
    for k, name in enumerate(spec.derived):
        ago, f = spec.locate_input(spec.derived_sources(k)[1])
        word = np.asarray(ctx[:, fmt.CTX_HISTORY + (ago - 1) * spec.n_features + f], dtype=np.int64) & _U32
        ctx[:, model.derived_word(k)] = derived_vocab.get(name).state_value(NUMPY, word - ((word >> 31) << 32)) & _U32
    return ctx


def derived_core(ops: IntOps, spec: ObservationSpec, x: Sequence[Any]) -> list[Any]:
    """The spec's derived student inputs (``rlcc.derived``) from the window inputs ``x``."""
    out = []
    for k, name in enumerate(spec.derived):
        cur, prev = spec.derived_sources(k)
        out.append(derived_vocab.get(name).device_value(ops, x[cur], x[prev]))
    return out


def window_inputs(spec: ObservationSpec, current: np.ndarray, history: np.ndarray) -> np.ndarray:
    """Student input vectors (N, student_width) from the current step (N, F) and history
    (N, k-1, F): the window, then the derived inputs."""
    steps = np.concatenate([current[:, None, :], history], axis=1)  # index 0 = current
    x = np.empty((len(current), spec.student_width), dtype=np.int64)
    for ago in range(spec.history):
        for f in range(spec.n_features):
            x[:, spec.input_index(ago, f)] = steps[:, ago, f]
    for k, v in enumerate(derived_core(NUMPY, spec, [x[:, i] for i in range(spec.input_width)])):
        x[:, spec.input_width + k] = v
    return x


def eval_trees(model: FxModel, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ensemble sum (Q16.16, int64) and leaf index per tree for integer inputs (N, width)."""
    x = np.asarray(x, dtype=np.int64)
    total, leaves = ensemble_core(NUMPY, model, [x[:, i] for i in range(x.shape[1])])
    total = np.broadcast_to(np.asarray(total, dtype=np.int64), len(x)).copy()
    leaf_index = np.zeros((len(x), len(model.trees)), dtype=np.int64)
    for t, idx in enumerate(leaves):
        leaf_index[:, t] = idx
    return total, leaf_index


# Rows per evaluation of a large step: its int64 temporaries then stay in cache (1M rows: 1.05 s
# whole, 0.68 s in these chunks, 0.41 s on two threads; numpy releases the GIL in its loops).
_CHUNK_ROWS = 1 << 15


def step(model: FxModel, ctx: np.ndarray, events: np.ndarray, attr: np.ndarray | None = None) -> GoldenResult:
    """Apply one event to each of N contexts; see the module docstring for the semantics.

    Rows are independent: a large N is evaluated in chunks on up to ``available_cpus()`` threads,
    with the same result as in one piece."""
    del attr  # the slot/overload attribute does not change this algorithm's decision
    ctx = np.asarray(ctx, dtype=np.uint32).reshape(-1, fmt.CTX_WORDS)
    ev = np.asarray(events, dtype=np.uint32).reshape(-1, fmt.EVENT_WORDS)
    n = len(ctx)
    if len(ev) != n:
        raise ValueError("one event per context")
    if n <= 2 * _CHUNK_ROWS:
        return _step_rows(model, ctx, ev)
    first = _step_rows(model, ctx[:_CHUNK_ROWS], ev[:_CHUNK_ROWS])
    fields = [f.name for f in dataclasses.fields(GoldenResult)]
    out = GoldenResult(*(np.empty((n, *getattr(first, f).shape[1:]), getattr(first, f).dtype) for f in fields))

    def fill(i: int) -> None:  # each thread writes its rows in place (no concatenation pass after)
        part = first if i == 0 else _step_rows(model, ctx[i : i + _CHUNK_ROWS], ev[i : i + _CHUNK_ROWS])
        for f in fields:
            getattr(out, f)[i : i + _CHUNK_ROWS] = getattr(part, f)

    cuts = range(0, n, _CHUNK_ROWS)
    with ThreadPoolExecutor(max(1, min(available_cpus(), len(cuts)))) as pool:
        list(pool.map(fill, cuts))
    return out


def _step_rows(model: FxModel, ctx: np.ndarray, ev: np.ndarray) -> GoldenResult:
    n = len(ctx)
    # one contiguous int64 array per word: every later operation then reads memory in order
    ctx_words = [ctx[:, i].astype(np.int64) for i in range(fmt.CTX_WORDS)]
    ev_words = [ev[:, i].astype(np.int64) for i in range(fmt.EVENT_WORDS)]
    with np.errstate(over="ignore"):  # rows that are not RTT events may compute garbage; discarded
        o = event_core(NUMPY, model, ctx_words, ev_words)
    is_rtt = np.asarray(o.is_rtt)
    features = np.zeros((n, model.spec.student_width), dtype=np.int64)
    for i, v in enumerate(o.inputs):
        features[:, i] = np.where(is_rtt, v, 0)
    leaf_index = np.zeros((n, len(o.leaf_index)), dtype=np.int64)
    for t, v in enumerate(o.leaf_index):
        leaf_index[:, t] = np.where(is_rtt, v, 0)
    ctx_out = np.empty((n, fmt.CTX_WORDS), dtype=np.uint32)
    for i, v in enumerate(o.ctx):  # column by column: the same wrap to 32 bits as astype, without an int64 copy
        ctx_out[:, i] = np.asarray(v, dtype=np.int64)
    return GoldenResult(
        ctx=ctx_out,
        rate=np.broadcast_to(o.rate, n).astype(np.uint32),
        rtt_req=np.broadcast_to(o.rtt_req, n).astype(np.uint32),
        features=features,
        leaf_index=leaf_index,
    )


def make_events(etype: np.ndarray, timestamp: np.ndarray, u0: np.ndarray | None = None, coalesced: np.ndarray | None = None) -> np.ndarray:
    """Event records (N, EVENT_WORDS) uint32: type, timestamp, RTT request-send ts / coalesced count."""
    etype = np.asarray(etype, dtype=np.int64)
    ev = np.zeros((len(etype), fmt.EVENT_WORDS), dtype=np.int64)
    ev[:, fmt.EV_ATTR] = etype & fmt.EVENT_TYPE_MASK
    ev[:, fmt.EV_TIMESTAMP] = np.asarray(timestamp, dtype=np.int64) & _U32
    if u0 is not None:
        ev[:, fmt.EV_RTT_REQ_SEND_TS] = np.asarray(u0, dtype=np.int64) & _U32
    if coalesced is not None:
        ev[:, fmt.EV_COALESCED] = np.asarray(coalesced, dtype=np.int64) & fmt.COALESCED_MASK
    return ev.astype(np.uint32)
