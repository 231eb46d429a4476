"""Test vectors for switch-agent firmware: per-queue records -> the golden agent's outputs.

A record is what one ``sw_agent_on_interval`` call sees: the queue context (the template index in
force and the features of the last history-1 intervals, :data:`CTX_ACTION` / :data:`CTX_HIST`:
the layout ``templates/switch_agent.c.j2`` takes from here), this interval's statistics and the
port's ``util_mul``. Expected outputs always come from :class:`rlcc.fxp.switch_agent.GoldenAgent`
(and :func:`~rlcc.fxp.switch_agent.scores`): the context after the call, the action, its ECN
template and the class scores. Generators:

- :func:`random_records`: features across each one's whole range (history set directly, the
  current interval through the collector's inverse) and raw statistics across the u32 range;
- :func:`boundary_records`: every split threshold t at t and t + 1, on the input it reads;
- :func:`leaf_records`: one record per reachable leaf of every tree;
- :func:`saturation_records`: qlen 2^32-1, utilization above 1.0, marked x packet bytes overflow;
- :func:`chain_records`: closed-loop windows, each a queue's bring-up (``INIT``) followed by
  intervals chained through the context.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlcc.class_trees import ClassEnsemble
from rlcc.fxp.switch_agent import GoldenAgent, initial_window, scores
from rlcc.switch_spec import STAT_MAX, UTIL_MUL_SHIFT, UTIL_ONE, SwitchAgentSpec

CTX_WORDS = 32  # the SDK's per-queue context (switch_sdk.h SW_CTX_WORDS)
CTX_ACTION = 0  # context word: the template index in force
CTX_HIST = 1  # first context word of the stored features (oldest interval first)
FLAG_CHAIN = 1  # the record's context is the previous record's output
FLAG_INIT = 2  # the record is a queue bring-up: context and template from sw_agent_queue_init
NO_ACTION = 0xFFFFFFFF
PORT_GBPS = (10.0, 25.0, 40.0, 100.0, 200.0, 400.0)


@dataclasses.dataclass(frozen=True)
class SwitchVectors:
    """N records and the golden outputs; ``tags`` name what each record was built to hit."""

    ctx_in: np.ndarray  # (N, CTX_WORDS) int64 (u32 values)
    qlen_bytes: np.ndarray  # (N,)
    tx_bytes: np.ndarray
    marked_pkts: np.ndarray
    util_mul: np.ndarray
    flags: np.ndarray
    tags: tuple[str, ...]
    ctx_out: np.ndarray  # (N, CTX_WORDS)
    action: np.ndarray  # (N,) NO_ACTION for INIT records
    ecn: np.ndarray  # (N, 3) kmin_bytes, kmax_bytes, pmax_q16
    scores: np.ndarray  # (N, n_classes) int64; 0 for INIT records
    window: np.ndarray  # (N, input_width) the classifier's input (zeros for INIT records)

    def __len__(self) -> int:
        return len(self.flags)


def hist_words(spec: SwitchAgentSpec) -> int:
    return (spec.history - 1) * spec.n_features


def expected(spec: SwitchAgentSpec, model: ClassEnsemble, ctx_in: np.ndarray, qlen_bytes, tx_bytes, marked_pkts,
             util_mul, flags, tags) -> SwitchVectors:
    """Golden outputs for records; chained records read the previous record's output context."""
    ctx_in = np.asarray(ctx_in, np.int64)
    n = len(ctx_in)
    stats = [np.asarray(a, np.int64) for a in (qlen_bytes, tx_bytes, marked_pkts, util_mul)]
    flags = np.asarray(flags, np.int64)
    hw, F = hist_words(spec), spec.n_features
    ctx_out = ctx_in.copy()
    action = np.full(n, NO_ACTION, np.int64)
    window = np.zeros((n, spec.input_width), np.int64)
    sc = np.zeros((n, model.n_classes), np.int64)
    depth = np.zeros(n, np.int64)  # position in a chain: a record waits for its predecessor
    for i in range(1, n):
        if flags[i] & FLAG_CHAIN and not flags[i] & FLAG_INIT:
            depth[i] = depth[i - 1] + 1
    init = (flags & FLAG_INIT) != 0
    if init.any():
        w0 = initial_window(spec, int(init.sum()))
        ctx_out[init] = 0
        ctx_out[init, CTX_ACTION] = spec.initial_action
        ctx_out[init, CTX_HIST : CTX_HIST + hw] = w0[:, F:]
    agent = GoldenAgent(spec, model)
    for d in range(int(depth.max(initial=0)) + 1):
        idx = np.flatnonzero((depth == d) & ~init)
        if len(idx) == 0:
            continue
        src = ctx_in[idx].copy()
        chained = (flags[idx] & FLAG_CHAIN) != 0
        src[chained & (idx > 0)] = ctx_out[idx[chained & (idx > 0)] - 1]
        win = np.concatenate([np.zeros((len(idx), F), np.int64), src[:, CTX_HIST : CTX_HIST + hw]], axis=1)
        new, act = agent.step(win, *(s[idx] for s in stats[:3]), src[:, CTX_ACTION], stats[3][idx])
        out = src.copy()
        out[:, CTX_HIST : CTX_HIST + hw] = new[:, F:]
        out[:, CTX_ACTION] = act
        ctx_out[idx], action[idx], window[idx] = out, act, new
        sc[idx] = scores(model, new)
    table = np.array([[a.kmin_bytes, a.kmax_bytes, a.pmax_q16] for a in spec.actions], np.int64)
    ecn = table[np.where(init, spec.initial_action, np.where(action == NO_ACTION, 0, action))]
    return SwitchVectors(ctx_in, *stats[:3], stats[3], flags, tuple(tags), ctx_out, action, ecn, sc, window)


def concat(*parts: SwitchVectors) -> SwitchVectors:
    """Records of several sets in order (chains stay whole: each part starts unchained)."""
    fields = [f.name for f in dataclasses.fields(SwitchVectors)]
    return SwitchVectors(**{k: (sum((p.tags for p in parts), ()) if k == "tags"
                                else np.concatenate([getattr(p, k) for p in parts])) for k in fields})


# ---- the collector's inverse -------------------------------------------------------------------


def _log_uniform(rng: np.random.Generator, n: int, hi: int) -> np.ndarray:
    return np.minimum(np.floor(np.exp(rng.uniform(0.0, np.log(hi + 1.0), n))).astype(np.int64), hi)


def realistic_util_mul(spec: SwitchAgentSpec, rng: np.random.Generator, n: int) -> np.ndarray:
    muls = np.array([spec.util_mul(g) for g in PORT_GBPS if spec.bytes_per_interval(g) >= 1 << 16], np.int64)
    return muls[rng.integers(len(muls), size=n)]


def invert_utils(spec: SwitchAgentSpec, rng: np.random.Generator, tx_util: np.ndarray,
                 mark_util: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tx_bytes, marked_pkts, util_mul) whose collected utilizations are exactly the targets
    (Q16, 0..UTIL_ONE) where one util_mul can produce both; else the closest the search found."""
    a, b = np.asarray(tx_util, np.int64), np.asarray(mark_util, np.int64)
    pb, one = spec.packet_bytes, 1 << UTIL_MUL_SHIFT
    lo = np.maximum(np.maximum(a, b), 1) + 1  # util_mul > target: tx_bytes stays below 2^32
    hi = np.maximum(lo, one // pb)  # pb x util_mul <= 2^32: every marked-bytes step hits each value
    mul = np.minimum(lo + (rng.random(len(a)) * (hi - lo + 1)).astype(np.int64), STAT_MAX)
    tx = np.minimum(-(-a * one // mul), STAT_MAX)
    pkts = np.minimum(-(-b * one // (pb * mul)), STAT_MAX)
    return tx, pkts, mul


def _background(spec: SwitchAgentSpec, rng: np.random.Generator, n: int) -> np.ndarray:
    """Random feature values (n, input_width), each feature across its whole range."""
    fmax = spec.feature_max()
    cols = []
    for f, name in enumerate(spec.features):
        if name == "qlen":
            v = np.where(rng.random(n) < 0.5, _log_uniform(rng, n, STAT_MAX), rng.integers(0, STAT_MAX + 1, n))
        elif name in ("tx_util", "mark_util"):
            v = np.where(rng.random(n) < 0.1, rng.choice([0, UTIL_ONE], n), rng.integers(0, UTIL_ONE + 1, n))
        else:
            v = rng.integers(0, fmax[f] + 1, n)
        cols.append(v)
    step = np.stack(cols, axis=1)
    return np.concatenate([np.roll(step, s, axis=0) if s else step for s in range(spec.history)], axis=1)


def records_for_windows(spec: SwitchAgentSpec, rng: np.random.Generator, windows: np.ndarray) -> dict[str, np.ndarray]:
    """Record inputs whose golden window is ``windows`` (history set in the context; the current
    interval's features through the collector's inverse). Utilizations the inverse cannot hit come
    out as near neighbours: callers check with :func:`collect`."""
    w = np.asarray(windows, np.int64)
    n, hw = len(w), hist_words(spec)
    ctx = rng.integers(0, STAT_MAX + 1, (n, CTX_WORDS))  # words the firmware must leave alone
    ctx[:, CTX_HIST : CTX_HIST + hw] = w[:, :hw]
    cur = {name: w[:, hw + f] for f, name in enumerate(spec.features)}
    zeros = np.zeros(n, np.int64)
    tx, pkts, mul = invert_utils(spec, rng, cur.get("tx_util", zeros), cur.get("mark_util", zeros))
    if "tx_util" not in cur:
        tx = rng.integers(0, STAT_MAX + 1, n)
    if "mark_util" not in cur:
        pkts = rng.integers(0, STAT_MAX + 1, n)
    if not {"tx_util", "mark_util"} & set(cur):
        mul = realistic_util_mul(spec, rng, n)
    ctx[:, CTX_ACTION] = cur.get("ecn_action", rng.integers(0, spec.n_actions, n))
    qlen = cur.get("qlen", rng.integers(0, STAT_MAX + 1, n))
    return {"ctx_in": ctx, "qlen_bytes": qlen, "tx_bytes": tx, "marked_pkts": pkts, "util_mul": mul}


def _vectors(spec, model, recs: dict[str, np.ndarray], tags, flags=None) -> SwitchVectors:
    n = len(recs["ctx_in"])
    return expected(spec, model, recs["ctx_in"], recs["qlen_bytes"], recs["tx_bytes"], recs["marked_pkts"],
                    recs["util_mul"], np.zeros(n, np.int64) if flags is None else flags, tags)


# ---- generators --------------------------------------------------------------------------------


def random_records(spec: SwitchAgentSpec, model: ClassEnsemble, n: int, seed: int = 0) -> SwitchVectors:
    """Half feature-space (each feature across its range, exact through the inverse), half raw
    statistics across the u32 range with random and realistic util_mul."""
    rng = np.random.default_rng([seed, 1])
    half = n // 2
    recs = records_for_windows(spec, rng, _background(spec, rng, half))
    m = n - half
    raw = {
        "ctx_in": records_for_windows(spec, rng, _background(spec, rng, m))["ctx_in"],
        "qlen_bytes": np.where(rng.random(m) < 0.5, _log_uniform(rng, m, STAT_MAX), rng.integers(0, STAT_MAX + 1, m)),
        "tx_bytes": _log_uniform(rng, m, STAT_MAX),
        "marked_pkts": _log_uniform(rng, m, STAT_MAX),
        "util_mul": np.where(rng.random(m) < 0.5, realistic_util_mul(spec, rng, m), _log_uniform(rng, m, STAT_MAX)),
    }
    both = {k: np.concatenate([recs[k], raw[k]]) for k in recs}
    return _vectors(spec, model, both, ["random"] * n)


def split_targets(spec: SwitchAgentSpec, model: ClassEnsemble) -> list[tuple[int, int, int, int]]:
    """(tree, level, input, value) for every split's t and t + 1 inside the feature's range."""
    fmax = np.tile(spec.feature_max(), spec.history)
    out = []
    for t, tree in enumerate(model.trees):
        for k, s in enumerate(tree.splits):
            for v in (s.threshold, s.threshold + 1):
                if 0 <= v <= fmax[s.input]:
                    out.append((t, k, s.input, v))
    return out


def boundary_records(spec: SwitchAgentSpec, model: ClassEnsemble, seed: int = 0, per_target: int = 2) -> SwitchVectors:
    """``per_target`` records per split boundary value (random backgrounds); tags ``split:tT:lK:=V``."""
    rng = np.random.default_rng([seed, 2])
    targets = split_targets(spec, model)
    if not targets:
        return _vectors(spec, model, records_for_windows(spec, rng, np.zeros((0, spec.input_width), np.int64)), [])
    w = _background(spec, rng, len(targets) * per_target)
    tags = []
    for j, (t, k, i, v) in enumerate(targets):
        w[j * per_target : (j + 1) * per_target, i] = v
        tags += [f"split:t{t}:l{k}:={v}"] * per_target
    return _vectors(spec, model, records_for_windows(spec, rng, w), tags)


def leaf_windows(spec: SwitchAgentSpec, model: ClassEnsemble, rng: np.random.Generator) -> tuple[np.ndarray, list[str]]:
    """One window per reachable (tree, leaf): each input inside the interval its splits allow."""
    fmax = np.tile(spec.feature_max(), spec.history)
    rows, tags = [], []
    for t, tree in enumerate(model.trees):
        for leaf in range(1 << tree.depth):
            lo, hi = np.full(spec.input_width, -1, np.int64), fmax.copy()  # lo < x <= hi
            for k, s in enumerate(tree.splits):
                if leaf >> k & 1:
                    lo[s.input] = max(lo[s.input], s.threshold)
                else:
                    hi[s.input] = min(hi[s.input], s.threshold)
            if np.all(lo < hi):
                w = _background(spec, rng, 1)[0]
                free = [i for i in range(spec.input_width) if lo[i] > -1 or hi[i] < fmax[i]]
                for i in free:
                    w[i] = rng.integers(lo[i] + 1, hi[i] + 1)
                rows.append(w)
                tags.append(f"leaf:t{t}:{leaf}")
    return np.array(rows, np.int64).reshape(len(rows), spec.input_width), tags


def leaf_records(spec: SwitchAgentSpec, model: ClassEnsemble, seed: int = 0) -> SwitchVectors:
    rng = np.random.default_rng([seed, 3])
    w, tags = leaf_windows(spec, model, rng)
    return _vectors(spec, model, records_for_windows(spec, rng, w), tags)


def saturation_records(spec: SwitchAgentSpec, model: ClassEnsemble, seed: int = 0) -> SwitchVectors:
    """Statistic extremes: qlen 2^32-1, utilization above 1.0 (clamped), marked x packet bytes
    beyond 2^32, util_mul 0 and 2^32-1, and the packet count where the product starts saturating."""
    rng = np.random.default_rng([seed, 4])
    edge_pkts = STAT_MAX // spec.packet_bytes
    cases = [  # qlen, tx_bytes, marked_pkts, util_mul
        (STAT_MAX, STAT_MAX, STAT_MAX, STAT_MAX), (STAT_MAX, 0, 0, 0), (0, STAT_MAX, edge_pkts, STAT_MAX),
        (0, STAT_MAX, edge_pkts + 1, STAT_MAX), (1, 1 << 20, edge_pkts, 1 << 20), (1, 1 << 20, edge_pkts + 1, 1 << 20),
        (STAT_MAX - 1, (1 << 16) + 1, 1, 1 << 31), (0, 0, 0, STAT_MAX), (STAT_MAX, STAT_MAX, STAT_MAX, 1),
    ]
    muls = realistic_util_mul(spec, rng, 4)
    cases += [(STAT_MAX, int(2 ** 48 // m) + 1, int(2 ** 48 // m) // spec.packet_bytes + 1, int(m)) for m in muls]
    arr = np.array(cases, np.int64)
    ctx = records_for_windows(spec, rng, _background(spec, rng, len(arr)))["ctx_in"]
    recs = {"ctx_in": ctx, "qlen_bytes": arr[:, 0], "tx_bytes": arr[:, 1], "marked_pkts": arr[:, 2], "util_mul": arr[:, 3]}
    return _vectors(spec, model, recs, ["saturation"] * len(arr))


def chain_records(spec: SwitchAgentSpec, model: ClassEnsemble, n_chains: int, length: int, seed: int = 0) -> SwitchVectors:
    """Closed-loop windows: per chain, an INIT record then ``length`` intervals of a random-walk
    queue (depth, load, marking), each record reading the previous one's context."""
    rng = np.random.default_rng([seed, 5])
    n = n_chains * (length + 1)
    flags = np.tile(np.r_[FLAG_INIT, np.full(length, FLAG_CHAIN)], n_chains)
    mul = np.repeat(realistic_util_mul(spec, rng, n_chains), length + 1)
    bpi = (1 << 48) / mul
    load = np.clip(np.cumsum(rng.normal(0, 0.15, n)) % 2.4, 0, 1.2)
    qlen = np.minimum(np.abs(np.cumsum(rng.normal(0, 2e5, n))) * rng.choice([1, 1, 1, 100], n), STAT_MAX).astype(np.int64)
    tx = np.minimum(load * bpi, STAT_MAX).astype(np.int64)
    pkts = (tx * rng.random(n) * 0.3 / spec.packet_bytes).astype(np.int64)
    recs = {"ctx_in": rng.integers(0, STAT_MAX + 1, (n, CTX_WORDS)), "qlen_bytes": qlen, "tx_bytes": tx,
            "marked_pkts": pkts, "util_mul": mul}
    return _vectors(spec, model, recs, ["chain"] * n, flags)


def verification_set(spec: SwitchAgentSpec, model: ClassEnsemble, seed: int = 0, n_random: int = 2000,
                     n_chains: int = 8, chain_length: int = 32) -> SwitchVectors:
    return concat(boundary_records(spec, model, seed), leaf_records(spec, model, seed),
                  saturation_records(spec, model, seed), random_records(spec, model, n_random, seed),
                  chain_records(spec, model, n_chains, chain_length, seed))


def boundary_coverage(spec: SwitchAgentSpec, model: ClassEnsemble, v: SwitchVectors) -> dict[str, int]:
    """Split boundary values (t, t + 1) and reachable leaves the vectors actually hit."""
    decided = v.action != NO_ACTION
    win = v.window[decided]
    targets = split_targets(spec, model)
    hit = sum(bool(np.any(win[:, i] == val)) for _, _, i, val in targets)
    inputs, thr, _ = model.tables() if model.trees else (None, None, None)
    reached = 0
    if model.trees:
        bits = win[:, inputs] > thr
        idx = bits.astype(np.int64) @ (1 << np.arange(inputs.shape[1], dtype=np.int64))
        reached = sum(len(np.unique(idx[:, t] & ((1 << tree.depth) - 1))) for t, tree in enumerate(model.trees))
    reachable = len(leaf_windows(spec, model, np.random.default_rng(0))[1])
    return {"split_values": len(targets), "split_values_hit": hit, "leaves_reachable": reachable,
            "leaves_reached": reached}
