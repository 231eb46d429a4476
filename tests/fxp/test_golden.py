"""The golden model against an independent scalar oracle written with Python integers.

The oracle re-derives every step from the spec's *float* definitions where possible (so a
wrong Q-format in the golden model shows up), and uses math.isqrt and plain big-int
arithmetic where the golden model uses numpy vector tricks. The RTT-probe timeout rule is
written from the golden module's docstring (item 5), with its own elapsed-time arithmetic.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rlcc import formats as fmt
from rlcc.errors import BadInputError
from rlcc.fxp import golden
from rlcc.fxp.model import FxConstants, FxModel, Split, Tree
from rlcc.spec import Action, Feature, ObservationSpec, Reward

SPECS = [
    ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2),
    ObservationSpec(
        features=(Feature("rtt_inflation"), Feature("rate"), Feature("cnp_count"), Feature("nack_count")),
        history=2,
        step_order="newest_first",
        reward=Reward(target=0.05, beta=2.0, base_rtt_ns=13000),
        action=Action(type="factor", clamp_min=0.5, clamp_max=2.0),
    ),
    ObservationSpec(features=(Feature("delta", scale=-12.5), Feature("prev_action")), history=1),
    ObservationSpec(  # 6 of the 7 history words
        features=(Feature("nack_count"), Feature("rate"), Feature("rtt_inflation")),
        history=3,
        step_order="newest_first",
        reward=Reward(target=0.08, beta=1.25, base_rtt_ns=9000),
    ),
]
# probe timeout per spec: the default, a tiny one (most TX events re-request), the maximum
TIMEOUTS = [4_000_000, 1, 2**32 - 1, 12345]


def random_model(spec: ObservationSpec, rng: np.random.Generator, n_trees: int = 4, depth: int = 3,
                 timeout: int = 4_000_000) -> FxModel:
    trees = []
    for _ in range(n_trees):
        splits = tuple(
            Split(int(rng.integers(spec.input_width)), str(rng.choice([">", "<"])), int(rng.integers(-(2**17), 2**21)), 0.0)
            for _ in range(depth)
        )
        trees.append(Tree(splits, tuple(int(v) for v in rng.integers(-20000, 20000, 1 << depth))))
    return FxModel(spec, FxConstants.from_spec(spec, timeout), tuple(trees), bias=fmt.FACTOR_ONE)


def oracle_step(model: FxModel, ctx: list[int], ev: list[int]) -> tuple[list[int], int, int]:
    spec, c = model.spec, model.constants
    ctx = list(ctx)
    now = ev[fmt.EV_TIMESTAMP]
    etype = ev[0] & 0xFF
    rtt_req = 0
    if ctx[fmt.CTX_RATE] == 0:
        ctx = [0] * fmt.CTX_WORDS
        ctx[fmt.CTX_RATE] = round(spec.rate.initial * 2**20)
        ctx[fmt.CTX_PREV_FACTOR] = 2**16
        ctx[fmt.CTX_PROBE_TS] = now
        rtt_req = 1
    elif etype == fmt.EVENT_TX:
        # age of the last probe request on a wrapping 32-bit ns clock
        last = ctx[fmt.CTX_PROBE_TS]
        age = now - last if now >= last else now + 2**32 - last
        if age >= c.probe_timeout_ns:
            ctx[fmt.CTX_PROBE_TS] = now
            rtt_req = 1
    cnp, nack = ctx[fmt.CTX_COUNTS] & 0xFFFF, ctx[fmt.CTX_COUNTS] >> 16
    if etype in (fmt.EVENT_CNP, fmt.EVENT_NACK):
        inc = max(1, ev[fmt.EV_COALESCED] & 0xFFFF)
        if etype == fmt.EVENT_CNP:
            cnp = min(cnp + inc, 0xFFFF)
        else:
            nack = min(nack + inc, 0xFFFF)
    ctx[fmt.CTX_COUNTS] = cnp | (nack << 16)
    if etype != fmt.EVENT_RTT:
        return ctx, ctx[fmt.CTX_RATE], rtt_req
    rtt = (ev[fmt.EV_TIMESTAMP] - ev[fmt.EV_RTT_REQ_SEND_TS]) % 2**32
    inv = round(2**32 / spec.reward.base_rtt_ns)
    infl = min(rtt * inv // 2**16, 2**31 - 1)
    rate = ctx[fmt.CTX_RATE]
    excess = max(infl - round(spec.reward.beta * 2**16), 0)
    delta = round(spec.reward.target * 2**16) - excess * math.isqrt(rate * 2**20) // 2**20
    delta = max(min(delta, 2**31 - 1), -(2**31) + 1)
    prev = ctx[fmt.CTX_PREV_FACTOR] - (2**32 if ctx[fmt.CTX_PREV_FACTOR] >= 2**31 else 0)
    vocab = {"prev_action": prev, "rtt_inflation": infl, "rate": rate, "delta": delta, "cnp_count": cnp, "nack_count": nack}
    cur = [vocab[f.name] for f in spec.features]
    nf = spec.n_features
    if ctx[fmt.CTX_FLAGS] & 1:
        words = ctx[fmt.CTX_HISTORY : fmt.CTX_HISTORY + (spec.history - 1) * nf]
        signed = [w - 2**32 if w >= 2**31 else w for w in words]
        hist = [signed[i * nf : (i + 1) * nf] for i in range(spec.history - 1)]
    else:
        hist = [cur] * (spec.history - 1)
    steps = [cur] + hist
    x = [0] * spec.input_width
    for ago, step in enumerate(steps):
        for f, v in enumerate(step):
            x[spec.input_index(ago, f)] = v
    total = model.bias
    for tree in model.trees:
        idx = 0
        for k, s in enumerate(tree.splits):
            if (x[s.input] > s.threshold) if s.op == ">" else (x[s.input] < s.threshold):
                idx |= 1 << k
        total += tree.leaves[idx]
    factor = min(max(total, round(spec.action.clamp_min * 2**16)), round(spec.action.clamp_max * 2**16))
    # error feedback: the product's 16 fractional bits ride in the flags word's high half
    product = rate * factor + (ctx[fmt.CTX_FLAGS] >> 16)
    new_rate = min(max(product // 2**16, max(1, round(spec.rate.min * 2**20))), 2**20)
    ctx[fmt.CTX_RATE], ctx[fmt.CTX_PREV_FACTOR], ctx[fmt.CTX_COUNTS] = new_rate, factor, 0
    ctx[fmt.CTX_FLAGS] = (product % 2**16) * 2**16 + 1
    ctx[fmt.CTX_PROBE_TS] = now
    new_hist = ([cur] + hist)[: spec.history - 1]
    for i, step in enumerate(new_hist):
        for f, v in enumerate(step):
            ctx[fmt.CTX_HISTORY + i * nf + f] = v % 2**32
    return ctx, new_rate, 1


def random_vectors(model: FxModel, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    ctx = rng.integers(0, 2**32, (n, fmt.CTX_WORDS), dtype=np.uint64).astype(np.uint32)
    ctx[:, fmt.CTX_RATE] = rng.choice([0, 1, 64, 4096, 2**19, 2**20], n)
    ctx[:, fmt.CTX_PREV_FACTOR] = rng.integers(40000, 90000, n)
    ctx[:, fmt.CTX_FLAGS] = rng.integers(0, 2, n) | np.where(rng.random(n) < 0.5, rng.integers(0, 2**16, n) << 16, 0)
    hist = slice(fmt.CTX_HISTORY, fmt.CTX_HISTORY + model.history_words)
    ctx[:, hist] = rng.integers(-(2**20), 2**22, (n, model.history_words)).astype(np.int64).astype(np.uint32)
    etype = rng.choice([fmt.EVENT_RTT] * 5 + [fmt.EVENT_CNP, fmt.EVENT_NACK, fmt.EVENT_ACK] + [fmt.EVENT_TX] * 3, n)
    ts = rng.integers(0, 2**32, n, dtype=np.uint64)
    # TX events half the time at a probe age around the timeout, often across the clock wrap
    t = model.constants.probe_timeout_ns
    age = rng.choice([0, 1, t - 1, t, t + 1, t // 2, 2**32 - 1, 2**31], n).astype(np.int64)
    age = np.where(rng.random(n) < 0.5, age, rng.integers(0, 2**32, n))
    ctx[:, fmt.CTX_PROBE_TS] = ((ts.astype(np.int64) - age) & 0xFFFFFFFF).astype(np.uint32)
    near_wrap = rng.random(n) < 0.3
    ctx[near_wrap, fmt.CTX_PROBE_TS] = (2**32 - rng.integers(1, 1000, int(near_wrap.sum()))).astype(np.uint32)
    ts = np.where(near_wrap, (ctx[:, fmt.CTX_PROBE_TS].astype(np.int64) + age) & 0xFFFFFFFF, ts.astype(np.int64))
    rtt = rng.choice([0, 1, 8000, 12000, 50000, 400000, 2**31, 2**32 - 1], n)
    ev = golden.make_events(etype, ts, (ts.astype(np.int64) - rtt) & 0xFFFFFFFF, rng.integers(0, 3, n))
    return ctx, ev


@pytest.mark.parametrize("spec_index", range(len(SPECS)))
def test_golden_matches_scalar_oracle(spec_index):
    rng = np.random.default_rng(spec_index)
    model = random_model(SPECS[spec_index], rng, timeout=TIMEOUTS[spec_index])
    ctx, ev = random_vectors(model, rng, 3000)
    out = golden.step(model, ctx, ev)
    for i in range(len(ctx)):
        want_ctx, want_rate, want_req = oracle_step(model, [int(v) for v in ctx[i]], [int(v) for v in ev[i]])
        assert (int(out.rate[i]), int(out.rtt_req[i])) == (want_rate, want_req), i
        assert [int(v) for v in out.ctx[i]] == want_ctx, i


@pytest.mark.parametrize("rate0, factor_q16", [(512, 65536 + 40), (512, 65536 - 40), (64, 65536 + 7),
                                               (300_000, 65536 - 3), (2048, 65536 + 1)])
def test_rate_update_tracks_the_exact_product(rate0, factor_q16):
    """Error feedback, against the analytic product: a constant factor phi applied n times keeps
    |rate_n - rate0 phi^n| <= 1 + |phi^n - 1| max(phi, 1) (the carry is the fraction of x = rate +
    carry / 2^16, which obeys x' = x phi - (carry / 2^16)(phi - 1)). Truncation fails this: factors
    this close to 1 never move a rate of 512 (512 * 40 / 2^16 < 1)."""
    spec = SPECS[0]
    model = FxModel(spec, FxConstants.from_spec(spec), (), bias=factor_q16)  # no trees: factor = bias
    phi, n = factor_q16 / 2**16, 400
    ctx = np.zeros((1, fmt.CTX_WORDS), dtype=np.uint32)
    ctx[0, fmt.CTX_RATE], ctx[0, fmt.CTX_PREV_FACTOR] = rate0, fmt.FACTOR_ONE
    ev = golden.make_events([fmt.EVENT_RTT], [20_000], [10_000])
    for _ in range(n):
        out = golden.step(model, ctx, ev)
        ctx = out.ctx
    exact = rate0 * phi**n
    assert abs(int(out.rate[0]) - exact) <= 1 + abs(phi**n - 1) * max(phi, 1.0)
    assert int(out.rate[0]) != rate0 or abs(exact - rate0) < 1


def test_isqrt_exact_on_edges():
    n = np.array([0, 1, 2, 3, 4, 15, 16, 17, 2**40, 2**40 - 1, 2**52 - 1], dtype=np.int64)
    assert golden.isqrt(n).tolist() == [math.isqrt(int(v)) for v in n]


def test_rtt_wraparound_equals_plain_difference():
    model = random_model(SPECS[0], np.random.default_rng(9))
    ctx = np.zeros((2, fmt.CTX_WORDS), dtype=np.uint32)
    ev = golden.make_events([fmt.EVENT_RTT] * 2, [5000, 2**32 - 1000], [2**32 - 5000, 2**32 - 11000])
    out = golden.step(model, ctx, ev)  # both probes measured 10 us
    assert np.array_equal(out.features[0], out.features[1])


def test_model_json_round_trip_and_validation():
    model = random_model(SPECS[1], np.random.default_rng(3))
    again = FxModel.from_dict(json.loads(model.to_json()))
    assert again == model and again.to_json() == model.to_json()
    bad = json.loads(model.to_json())
    bad["trees"][0]["leaves"] = bad["trees"][0]["leaves"][:-1]
    with pytest.raises(BadInputError, match="leaves for depth"):
        FxModel.from_dict(bad)
    wide = ObservationSpec(features=tuple(Feature(n) for n in ("prev_action", "delta", "rate", "cnp_count", "nack_count")), history=3)
    with pytest.raises(BadInputError, match="history words"):
        FxModel(wide, FxConstants.from_spec(wide), (), 0)
    ok = FxModel(SPECS[0], FxConstants.from_spec(SPECS[0]), (), 0)
    assert ok.constants.probe_timeout_ns == fmt.PROBE_TIMEOUT_NS_DEFAULT
    for bad_timeout in (0, 2**32):
        with pytest.raises(BadInputError, match="PROBE_TIMEOUT_NS"):
            FxModel(SPECS[0], FxConstants.from_spec(SPECS[0], bad_timeout), (), 0)
    six = ObservationSpec(features=tuple(Feature(n) for n in ("prev_action", "delta", "rate", "cnp_count", "nack_count",
                                                              "rtt_inflation")), history=2)
    FxModel(six, FxConstants.from_spec(six), (), 0)  # 6 of the 7 history words after the probe word
    eight = ObservationSpec(features=(Feature("rtt_inflation"), Feature("rate"), Feature("cnp_count"), Feature("nack_count")),
                            history=3)
    with pytest.raises(BadInputError, match="only 7 fit"):
        FxModel(eight, FxConstants.from_spec(eight), (), 0)


def test_version_1_models_are_rejected_clearly():
    data = json.loads(random_model(SPECS[0], np.random.default_rng(4)).to_json())
    data["version"] = 1
    del data["constants"]["probe_timeout_ns"]
    with pytest.raises(BadInputError, match="version 1 predates RTT-probe loss recovery.*recompile"):
        FxModel.from_dict(data)


def _running(model: FxModel, probe_ts: int) -> np.ndarray:
    ctx = np.zeros((1, fmt.CTX_WORDS), dtype=np.uint32)
    ctx[0, fmt.CTX_RATE] = 5000
    ctx[0, fmt.CTX_PREV_FACTOR] = 2**16
    ctx[0, fmt.CTX_PROBE_TS] = probe_ts
    return ctx


@pytest.mark.parametrize("probe_ts", [0, 123_456_789, 2**32 - 10])
def test_tx_rerequests_a_probe_exactly_at_the_timeout(probe_ts):
    t = 4_000_000
    model = random_model(SPECS[0], np.random.default_rng(5), timeout=t)
    for elapsed, due in ((0, 0), (t - 1, 0), (t, 1), (t + 1, 1), (2**32 - 1, 1)):
        ctx = _running(model, probe_ts)
        now = (probe_ts + elapsed) % 2**32  # wraps for the last probe_ts
        out = golden.step(model, ctx, golden.make_events([fmt.EVENT_TX], [now]))
        assert int(out.rtt_req[0]) == due and int(out.rate[0]) == 5000, (elapsed, due)
        want = ctx.copy()
        if due:
            want[0, fmt.CTX_PROBE_TS] = now
        assert np.array_equal(out.ctx, want)


def test_probe_clock_starts_with_the_flow_and_restarts_on_rtt_events():
    t = 1000
    model = random_model(SPECS[0], np.random.default_rng(6), timeout=t)
    start = 2**32 - 400
    ctx = np.zeros((1, fmt.CTX_WORDS), dtype=np.uint32)
    trace = [(fmt.EVENT_TX, start, 1), (fmt.EVENT_TX, start + 999, 0), (fmt.EVENT_ACK, start + 5000, 0),
             (fmt.EVENT_CNP, start + 5000, 0), (fmt.EVENT_TX, start + 1000, 1), (fmt.EVENT_TX, start + 1999, 0),
             (fmt.EVENT_RTT, start + 1500, 1), (fmt.EVENT_TX, start + 2499, 0), (fmt.EVENT_TX, start + 2500, 1)]
    for etype, now, want in trace:
        out = golden.step(model, ctx, golden.make_events([etype], [now % 2**32], [(now - 50) % 2**32]))
        assert int(out.rtt_req[0]) == want, (etype, now - start)
        assert int(out.ctx[0, fmt.CTX_PROBE_TS]) == ((now % 2**32) if want else int(ctx[0, fmt.CTX_PROBE_TS]))
        ctx = out.ctx


@pytest.mark.parametrize("n", [16, golden._SPLIT_LOOP_MIN_ROWS - 1, golden._SPLIT_LOOP_MIN_ROWS, 4000])
def test_batched_trees_equal_the_split_by_split_evaluation(monkeypatch, n):
    """golden.tree_terms' batched numpy paths (one pass for small batches, byte-packed per split
    for large ones) give the generic split-by-split evaluation's terms and leaf indices (values
    and dtypes) on random and extreme inputs: both split operators, trees of 1 to 3 and of 9
    splits (wider than a byte), inputs repeated across trees, thresholds at the int32 ends."""
    spec = ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2)
    trees = (
        Tree((Split(1, ">", 1000, 0.0), Split(0, "<", 70000, 0.0), Split(3, ">", -5, 0.0)),
             (1, -2, 3, -4, 5, -6, 7, -8)),
        Tree((Split(2, "<", -(2**31) + 1, 0.0),), (-500, 500)),
        Tree((Split(3, ">", 2**31 - 2, 0.0), Split(1, ">", 1000, 0.0)), (11, 22, 33, 44)),
        Tree(tuple(Split(k % 4, "<" if k % 2 else ">", (k - 4) * 2**28, 0.0) for k in range(9)),
             tuple((-1) ** i * i for i in range(512))),
    )
    model = FxModel(spec, FxConstants.from_spec(spec), trees, bias=fmt.FACTOR_ONE)
    rng = np.random.default_rng(7)
    x = [np.where(rng.random(n) < 0.2, rng.choice([-(2**31), -(2**31) + 1, 2**31 - 2, 2**31 - 1, 1000, 1001, 69999, 70000], n),
                  rng.integers(-(2**31), 2**31, n)).astype(np.int64) for _ in range(4)]
    fast_terms, fast_leaves = golden.tree_terms(golden.NUMPY, model, x)
    slow_terms, slow_leaves = golden.tree_terms(golden.NumpyOps(), model, x)  # not NUMPY: split by split
    assert fast_terms[0] == slow_terms[0] == model.bias
    for a, b in zip([*fast_terms[1:], *fast_leaves], [*slow_terms[1:], *slow_leaves]):
        assert a.dtype == b.dtype == np.int64 and np.array_equal(a, b)
    assert len(fast_terms) == len(slow_terms) and len(fast_leaves) == len(slow_leaves) == 4


def test_a_large_step_in_threaded_chunks_equals_one_piece(monkeypatch):
    """golden.step cuts N > 2 chunks into chunks evaluated on threads: every output (values,
    dtypes, shapes) is the one-piece evaluation's, including a last chunk shorter than the rest."""
    rng = np.random.default_rng(11)
    model = random_model(SPECS[0], rng, timeout=TIMEOUTS[0])
    monkeypatch.setattr(golden, "_CHUNK_ROWS", 256)
    ctx, ev = random_vectors(model, rng, 5 * 256 + 77)
    chunked, whole = golden.step(model, ctx, ev), golden._step_rows(model, ctx, ev)
    for f in ("ctx", "rate", "rtt_req", "features", "leaf_index"):
        a, b = getattr(chunked, f), getattr(whole, f)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), f
