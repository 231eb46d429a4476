"""rlcc.verify.observable: split boundaries and leaves hidden behind the factor clamp get vectors
whose golden output changes under the one-datum edit; the rest is reported, with proofs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from rlcc import formats as fmt
from rlcc.codegen import manifest
from rlcc.fxp import golden
from rlcc.verify import observable as O
from rlcc.fxp import vectors as FV
from rlcc.verify import generators as V
from rlcc.fxp.model import FxConstants, FxModel, Split, Tree
from rlcc.spec import Action, Feature, ObservationSpec, RateLimits, Reward
from clamp_models import bound_model

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "firmware" / "firmware.rlcc.json"
# inputs: 0 prev_action[t-1], 1 delta[t-1], 2 prev_action[t], 3 delta[t]
SPEC = ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2)
TARGET = FxConstants.from_spec(SPEC).target_q16


def hidden_model() -> FxModel:
    """Tree 0 saturates the clamp except in a 5-wide band of delta[t-1]; tree 2 has a 10-wide band
    of delta[t]; tree 3 splits delta[t] above the largest delta any RTT produces."""
    trees = (
        Tree((Split(1, ">", 1000, 0.0), Split(1, ">", 1005, 0.0)), (60000, 0, 12345, -60000)),  # leaf 2 unreachable
        Tree((Split(3, ">", -2000, 0.0),), (-500, 500)),
        Tree((Split(3, ">", -3000, 0.0), Split(3, ">", -2990, 0.0)), (-300, 300, 7, 900)),  # leaf 2 unreachable
        Tree((Split(3, ">", TARGET + 100, 0.0), Split(0, "<", 70000, 0.0)), (100, -100, 40, -40)),
    )
    return FxModel(SPEC, FxConstants.from_spec(SPEC), trees, bias=fmt.FACTOR_ONE)


def coupled_model() -> FxModel:
    """Current-step inflation, rate and delta (one RTT and rate realize all three) plus counts.
    Inputs: 0..3 = inflation, rate, delta, cnp_count at t; 4..7 the same at t-1."""
    spec = ObservationSpec(
        features=(Feature("rtt_inflation"), Feature("rate"), Feature("delta"), Feature("cnp_count")),
        history=2, step_order="newest_first", reward=Reward(target=0.05, beta=1.25, base_rtt_ns=12000),
        action=Action(clamp_min=0.9, clamp_max=1.1), rate=RateLimits(initial=0.5, min=1.0 / 1024),
    )
    trees = (
        Tree((Split(2, ">", -70000, 0.0), Split(1, ">", 300000, 0.0)), (-3000, 2500, 1800, -900)),
        Tree((Split(0, ">", 3 * 65536, 0.0), Split(2, ">", -5000, 0.0), Split(3, ">", 1, 0.0)),
             (4000, -4000, 2600, -2600, 1700, -1700, 800, -800)),
        Tree((Split(2, ">", 1000, 0.0), Split(5, ">", 500000, 0.0)), (-20000, 100, 300, 20000)),
        Tree((Split(1, "<", 40000, 0.0), Split(6, ">", -200000, 0.0)), (0, 1500, -1500, 700)),
    )
    return FxModel(spec, FxConstants.from_spec(spec), trees, bias=fmt.FACTOR_ONE)


def _flip_mutants(model: FxModel, target: str, x: np.ndarray) -> list[FxModel]:
    """The test's own reading of a target id: the edits its vector must expose."""
    kind, *rest = target.split(":")
    if kind == "split":
        t, k = int(rest[0][1:]), int(rest[1][1:])
        s = model.trees[t].splits[k]
        v = s.threshold + {"T-1": -1, "T": 0, "T+1": 1}[rest[2]]
        assert x[s.input] == v, target
        now = v > s.threshold if s.op == ">" else v < s.threshold
        thr = (v - 1 if not now else v) if s.op == ">" else (v if now else v + 1)
        splits = list(model.trees[t].splits)
        splits[k] = dataclasses.replace(s, threshold=thr)
        trees = list(model.trees)
        trees[t] = Tree(tuple(splits), model.trees[t].leaves)
        return [dataclasses.replace(model, trees=tuple(trees))]
    if kind == "leaf":
        t, i = int(rest[0][1:]), int(rest[1])
        out = []
        for d in (1, -1) if len(rest) == 2 else (int(rest[2]),):
            leaves = list(model.trees[t].leaves)
            leaves[i] += d
            trees = list(model.trees)
            trees[t] = Tree(model.trees[t].splits, tuple(leaves))
            out.append(dataclasses.replace(model, trees=tuple(trees)))
        return out
    if kind == "bias":
        return [dataclasses.replace(model, bias=model.bias + d) for d in (1, -1)]
    return []


def _assert_confirmed(model: FxModel, res: O.ObservableSet) -> None:
    v = res.vectors
    assert len(v) == len(res.targets) and list(v.targets) == res.targets
    assert len(set(res.targets)) == len(res.targets)
    g = golden.step(model, v.ctx_in, v.event, v.attr)
    assert np.array_equal(g.ctx, v.ctx_out) and np.array_equal(g.rate, v.rate)
    for r, target in enumerate(res.targets):
        for mutant in _flip_mutants(model, target, g.features[r]):
            m = golden.step(mutant, v.ctx_in[r : r + 1], v.event[r : r + 1], v.attr[r : r + 1])
            assert not np.array_equal(m.ctx, v.ctx_out[r : r + 1]), target


def _explained(model: FxModel, res: O.ObservableSet, cov: dict) -> list[str]:
    """Mutants the vectors miss whose target is not reported unobservable."""
    reported = {u["target"] for u in res.unobservable}
    return [m for m in cov["missed"] if not set(O.killed_by(model, m)) <= reported]


def test_splits_and_leaves_behind_the_clamp_are_exposed():
    model = hidden_model()
    res = O.observable_vectors(model)
    _assert_confirmed(model, res)
    got = set(res.targets)
    for t, k, tags in ((0, 0, "T-1 T T+1"), (0, 1, "T-1 T T+1"), (1, 0, "T-1 T T+1"), (2, 0, "T-1 T T+1"),
                       (2, 1, "T-1 T T+1"), (3, 1, "T-1 T T+1")):
        assert {f"split:t{t}:l{k}:{tag}" for tag in tags.split()} <= got
    for t, i in ((0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (2, 3), (3, 0), (3, 2)):
        assert f"leaf:t{t}:{i}" in got, (t, i)
    assert {"bias", "clamp_min:-1", "clamp_max:+1", "rate_round", "probe_timeout:T-1", "probe_timeout:T"} <= got
    cov = O.coverage(model, res.vectors)
    assert cov["splits"]["observable"] == cov["splits"]["targets"] - 2  # tree 3's split above the target
    assert cov["leaves"]["observable"] == cov["leaves"]["targets"] - 4  # tree 0's saturating leaves 0 and 3
    assert cov["other"]["observable"] == 8
    assert _explained(model, res, cov) == []
    # random vectors rarely hit the 5-wide band with delta[t] near -2000: the clamp hides tree 1
    rand = O.coverage(model, V.random_vectors(model, 5000, seed=1))
    assert "split:t1:l0:thr+1" in rand["missed"] and "leaf:t2:1:+1" in rand["missed"]


def test_unobservable_targets_are_reported_with_proofs():
    model = hidden_model()
    res = O.observable_vectors(model)
    found = {u["target"]: u for u in res.unobservable}
    for target in ("leaf:t0:2", "leaf:t2:2", "leaf:t3:1", "leaf:t3:3",
                   "split:t3:l0:T-1", "split:t3:l0:T", "split:t3:l0:T+1"):
        assert found[target]["exhaustive"] is True, target
    for target in ("leaf:t0:0", "leaf:t0:3"):  # +-60000: the clamp saturates whatever the other trees add
        assert found[target]["exhaustive"] is True
        for edit in (f"{target}:+1", f"{target}:-1"):
            assert found[edit]["exhaustive"] is True and "saturates" in found[edit]["reason"], edit
    assert "unreachable" in found["leaf:t0:2"]["reason"] and "never equals" in found["split:t3:l0:T"]["reason"]
    assert not set(found) & set(res.targets)


def test_clamp_and_rounding_targets():
    model = hidden_model()
    c = model.constants
    res = O.observable_vectors(model)
    v = res.vectors
    factor = {t: int(v.ctx_out[i, fmt.CTX_PREV_FACTOR]) for i, t in enumerate(res.targets)}
    g = golden.step(model, v.ctx_in, v.event, v.attr)
    total = {t: O._tree_sums(model, g.features[i : i + 1])[0][0] for i, t in enumerate(res.targets)}
    assert total["clamp_min:-1"] < c.clamp_min_q16 == factor["clamp_min:-1"]
    assert total["clamp_max:+1"] > c.clamp_max_q16 == factor["clamp_max:+1"]
    assert c.clamp_min_q16 < total["bias"] < c.clamp_max_q16
    r = res.targets.index("rate_round")
    prod = int(v.ctx_in[r, fmt.CTX_RATE]) * factor["rate_round"]
    assert prod & 0xFFFF >= 0x8000 and c.rate_min < prod >> 16 == int(v.rate[r]) < fmt.RATE_MAX


def test_coupled_rtt_features():
    """Inflation, rate and delta of the current step are realized by one (RTT, rate) pair."""
    model = coupled_model()
    res = O.observable_vectors(model, seed=1)
    _assert_confirmed(model, res)
    cov = O.coverage(model, res.vectors)
    assert _explained(model, res, cov) == []
    assert cov["splits"]["observable"] >= 0.75 * cov["splits"]["targets"]
    assert cov["leaves"]["observable"] >= 0.9 * cov["leaves"]["targets"]
    for split in ("t0:l0", "t0:l1", "t1:l1", "t2:l0", "t3:l0"):  # delta[t] / rate[t], exact, together
        assert {f"split:{split}:{tag}" for tag in ("T-1", "T", "T+1")} <= set(res.targets), split


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_example_misses_only_unobservable(seed):
    """With rlcc-verify's random vectors (its verification set at this seed), the example's search
    leaves no one-datum edit that is neither observed nor exhaustively proven unobservable.
    (Alone, the search misses leaves behind the derived input's coupling that random vectors
    reach: its options over a stored previous delta are a sample, so those misses are reported
    as non-exhaustive.)"""
    _, model, _ = manifest.load(str(EXAMPLE))
    res = O.observable_vectors(model, seed)
    cov = O.coverage(model, V.verification_set(model, seed)[0])
    proven = {u["target"] for u in res.unobservable if u["exhaustive"]}
    assert [m for m in cov["missed"] if not set(O.killed_by(model, m)) <= proven] == []
    assert cov["splits"]["observable"] == cov["splits"]["targets"]
    assert cov["other"]["observable"] == cov["other"]["targets"]
    # every leaf edit is seen except those of leaves whose every input saturates the clamp (proven:
    # on the ramps example leaf t2:3's sums stay below clamp_min whatever the ramps add)
    saturated = {u["target"] for u in res.unobservable if u["exhaustive"] and "saturates" in u["reason"]}
    missed = [m for m in cov["missed"] if m.startswith("leaf:")]
    assert {O.killed_by(model, m)[-1] for m in missed} <= saturated
    assert cov["leaves"]["observable"] == cov["leaves"]["targets"] - len(missed)


@pytest.mark.parametrize("chunk", [1, 97, 500, 10**6])
def test_coverage_in_chunks_gives_the_whole_sets_answer(monkeypatch, chunk):
    """Chunks are a shortcut only: whatever the first chunk's size (one vector: nothing seen at
    first, the rest found chunk by chunk; the whole set in one), coverage is the one-pass analysis
    of the whole set; on the example's own vectors plus random ones, with misses among the own."""
    _, model, _ = manifest.load(str(EXAMPLE))
    vec = FV.concat(V.model_derived_vectors(model, 0), V.random_vectors(model, 3000, seed=4))
    seen = O._observed(model, vec.ctx_in, vec.event, vec.attr)
    whole = {"missed": [m for m, (_, s) in seen.items() if not s]}
    for group in ("splits", "leaves", "other"):
        whole[group] = {"targets": sum(g == group for g, _ in seen.values()),
                        "observable": sum(g == group and s for g, s in seen.values())}
    own = O._observed(model, *(getattr(V.model_derived_vectors(model, 0), f) for f in ("ctx_in", "event", "attr")))
    assert any(not s for _, s in own.values()) and whole["missed"] != [m for m, (_, s) in own.items() if not s]
    monkeypatch.setattr(O, "COVERAGE_CHUNK", chunk)
    assert O.coverage(model, vec) == whole


def test_deterministic_per_seed():
    model = hidden_model()
    a, b, c = (O.observable_vectors(model, seed=s) for s in (5, 5, 6))
    assert a.targets == b.targets and a.unobservable == b.unobservable
    for f in ("ctx_in", "event", "attr", "ctx_out"):
        assert np.array_equal(getattr(a.vectors, f), getattr(b.vectors, f))
    assert not np.array_equal(a.vectors.ctx_in, c.vectors.ctx_in)


def test_coverage_matches_golden_mutants():
    """coverage's shortcut (only the clamped sum matters) agrees with running each mutant."""
    model = hidden_model()
    vec = FV.concat(V.random_vectors(model, 400, seed=3), O.observable_vectors(model).vectors)
    cov = O.coverage(model, vec)
    for mutant, edit in (("split:t1:l0:thr+1", dict(split=(1, 0, -1999))), ("leaf:t0:1:-1", dict(leaf=(0, 1, -1))),
                         ("clamp_max:thr-1", dict(clamp_max_q16=model.constants.clamp_max_q16 - 1)),
                         ("probe_timeout:thr+1", dict(probe_timeout_ns=model.constants.probe_timeout_ns + 1))):
        g = golden.step(O._mutant(model, **edit), vec.ctx_in, vec.event, vec.attr)
        seen = bool(np.any(g.ctx != vec.ctx_out) or np.any(g.rtt_req != vec.rtt_req))
        assert seen == (mutant not in cov["missed"]), mutant


def ramp_model() -> FxModel:
    """The hidden model's unsaturated trees plus ramps on every input kind: previous factor (context
    word), delta[t-1] (history word), delta[t] (the RTT slot), one of them so flat that several
    one-off edits change no term, and one whose slope is exactly zero above."""
    from rlcc.fxp.model import Ramp

    ramps = (
        Ramp(2, 64225, 65536, 66847, -333, -340, 10),
        Ramp(1, -1258, 0, 1258, -2571, 1863, 10),
        Ramp(3, -1258, 0, 1258, 3951, 0, 10),
        Ramp(0, 65000, 65536, 66000, 3, -2, 9),
    )
    base = hidden_model()
    return dataclasses.replace(base, trees=base.trees[1:], ramps=ramps)


def test_ramp_edits_are_observed_or_proven_harmless():
    """Every one-off edit of a ramp constant: either its observable vector changes the golden
    output (the mutated model run on it), or enumeration shows the term unchanged for every
    input value, which a brute-force pass over a wide random sample of int32 values confirms."""
    model = ramp_model()
    res = O.observable_vectors(model)
    assert not [u for u in res.unobservable if u["target"].startswith("ramp:") and not u["exhaustive"]]
    harmless = {u["target"] for u in res.unobservable if u["target"].startswith("ramp:")}
    mutants = dict(O.ramp_mutants(model))
    rng = np.random.default_rng(0)
    wide = np.unique(np.concatenate([rng.integers(-(2**31) + 1, 2**31, 200_000), np.arange(60000, 70000),
                                     np.arange(-3000, 3000)]))
    for tid, mutant in mutants.items():
        if mutant is None:
            continue
        i = int(tid.split(":")[1])
        r, m = model.ramps[i], mutant.ramps[i]
        same = np.array_equal(golden.ramp_value(golden.NUMPY, r, wide), golden.ramp_value(golden.NUMPY, m, wide))
        if tid in harmless:
            assert same, tid
            assert [u for u in res.unobservable if u["target"] == tid][0]["exhaustive"]
            continue
        assert not same, tid
        assert tid in res.targets, (tid, [u for u in res.unobservable if u["target"] == tid])
        r_ = res.targets.index(tid)
        v = res.vectors
        g = golden.step(mutant, v.ctx_in[r_:r_ + 1], v.event[r_:r_ + 1], v.attr[r_:r_ + 1])
        assert not np.array_equal(g.ctx, v.ctx_out[r_:r_ + 1]), tid
    assert harmless and len(harmless) < len(mutants) // 2  # the flat ramp has some, the others few
    cov = O.coverage(model, res.vectors)
    assert not [m for m in cov["missed"] if m.startswith("ramp:")]


def _one_ramp_model(ramp, leaves: tuple[int, int], bias: int) -> FxModel:
    """One ramp on prev_action[t-1] (a raw context word: any int32) and one split on delta[t-1]."""
    base = hidden_model()
    return dataclasses.replace(base, trees=(Tree((Split(1, ">", 0, 0.0),), leaves),), ramps=(ramp,), bias=bias)


def test_ramp_inside_an_interval_is_not_claimed_unobservable():
    """A steep ramp puts the sum inside the clamp window only for prev_action[t-1] in [486, 514],
    strictly inside one of the search's intervals: every option (one value per interval) saturates,
    which the one-value search used to claim as an exhaustive miss. Now the miss is either avoided
    (a witness found) or reported without the exhaustive claim."""
    from rlcc.fxp.model import Ramp

    model = _one_ramp_model(Ramp(0, 0, 1000, 2000, 1000, 1000, 0), (0, 0), 567000)
    c = model.constants
    x = np.zeros((4001, model.spec.student_width), dtype=np.int64)
    x[:, 0] = np.arange(-1000, 3001)
    total, _ = O._tree_sums(model, x)
    inside = x[(total > c.clamp_min_q16) & (total < c.clamp_max_q16), 0]
    assert inside.min() == 486 and inside.max() == 514
    srch = O._Search(model, 0)
    every = [srch.base(j) for j in range(len(srch.slots))]
    combo, full = srch.search(every, O._unclamped_score(c))
    assert combo is None and full and O._Plan(srch).exact_except(set())  # the old exhaustive claim
    res = O.observable_vectors(model)
    found = {u["target"]: u for u in res.unobservable}
    for tid in ("bias", "leaf:t0:0", "leaf:t0:1", "clamp_min:+1", "clamp_max:-1"):
        assert tid in res.targets or not found[tid]["exhaustive"], found[tid]
        if tid in found:
            assert "not proven" in found[tid]["reason"]
    _assert_confirmed(model, res)


def test_ramp_range_proves_a_saturating_leaf():
    """Leaf 1 plus the ramp's largest term stays one below clamp_min: the interval bound over the
    ramp's whole range proves both leaf edits invisible (checked by brute force), while leaf 0 is
    observed."""
    from rlcc.fxp.model import Ramp

    model = _one_ramp_model(Ramp(0, 0, 1000, 2000, 10, 10, 0), (0, -23108), fmt.FACTOR_ONE)
    c = model.constants
    res = O.observable_vectors(model)
    found = {u["target"]: u for u in res.unobservable}
    assert found["leaf:t0:1"]["exhaustive"] is True
    for edit in ("leaf:t0:1:+1", "leaf:t0:1:-1"):
        assert found[edit]["exhaustive"] is True and "saturates" in found[edit]["reason"], edit
    assert "leaf:t0:0" in res.targets and "bias" in res.targets
    rng = np.random.default_rng(0)
    x = rng.integers(-(2**31), 2**31, (20000, model.spec.student_width))
    x[:10000, 0] = rng.integers(-100, 2100, 10000)
    x[:, 1] = rng.integers(1, 2**31, 20000)  # delta[t-1] > 0: leaf 1
    total, _ = O._tree_sums(model, x)
    assert total.max() == c.clamp_min_q16 - 1  # reached at prev_action[t-1] >= 2000
    _assert_confirmed(model, res)


def test_leaf_edits_at_a_clamp_bound_are_told_apart():
    """Leaf t0:1 reaches only the sums lo and hi: no vector shows both edits, but +1 is visible at
    lo (clip(lo + 1) = lo + 1) and -1 at hi (clip(hi - 1) = hi - 1), each with its own vector. Leaf
    t1:1 reaches bias + Y < lo and lo: +1 is visible at lo, -1 at neither (clip(lo - 1) = lo =
    clip(lo), and below lo both clamp), so only -1 is proven invisible; the old planner claimed both
    edits of both leaves invisible ("every input reaching it saturates")."""
    model = bound_model()
    c = model.constants
    assert c.clamp_min_q16 < fmt.FACTOR_ONE < c.clamp_max_q16
    res = O.observable_vectors(model)
    _assert_confirmed(model, res)
    found = {u["target"]: u for u in res.unobservable}
    assert {"leaf:t0:0", "leaf:t1:0", "leaf:t0:1:+1", "leaf:t0:1:-1", "leaf:t1:1:+1"} <= set(res.targets)
    assert found["leaf:t0:1"]["exhaustive"] and found["leaf:t1:1"]["exhaustive"]
    assert found["leaf:t1:1:-1"]["exhaustive"] and "saturates" in found["leaf:t1:1:-1"]["reason"]
    assert "leaf:t1:1:+1" not in found and "leaf:t0:1:-1" not in found
    g = golden.step(model, res.vectors.ctx_in, res.vectors.event, res.vectors.attr)
    factor = dict(zip(res.targets, g.ctx[:, fmt.CTX_PREV_FACTOR].astype(np.int32)))
    assert factor["leaf:t0:1:+1"] == factor["leaf:t1:1:+1"] == c.clamp_min_q16
    assert factor["leaf:t0:1:-1"] == c.clamp_max_q16
    cov = O.coverage(model, res.vectors)
    assert sorted(cov["missed"]) == ["clamp_max:thr+1", "leaf:t1:1:-1"]  # no sum above hi (next test)
    proven = {t for t, u in found.items() if u["exhaustive"]}
    assert set(O.killed_by(model, "leaf:t1:1:-1")) <= proven
    assert not set(O.killed_by(model, "leaf:t1:1:+1")) <= proven


def test_killed_by_names_every_target_that_exposes_a_clamp_or_bias_edit():
    """Moving clamp_min up by one is seen at a sum at clamp_min as well as below it (clip(lo, lo + 1,
    hi) = lo + 1), moving it down only below it; likewise clamp_max mirrored, and bias +1 / -1 at a
    sum exactly at clamp_min / clamp_max. A mutant is unobservable only if every named target is:
    on bound_model no sum is above clamp_max but one is exactly at it, so clamp_max - 1 is visible
    (and killed by the clamp_max:0 vector) while clamp_max + 1 is proven invisible."""
    model = bound_model()
    assert O.killed_by(model, "clamp_min:thr+1") == ("clamp_min:-1", "clamp_min:0")
    assert O.killed_by(model, "clamp_min:thr-1") == ("clamp_min:-1",)
    assert O.killed_by(model, "clamp_max:thr-1") == ("clamp_max:+1", "clamp_max:0")
    assert O.killed_by(model, "bias:+1") == ("bias", "clamp_min:0")
    res = O.observable_vectors(model)
    proven = {u["target"] for u in res.unobservable if u["exhaustive"]}
    assert "clamp_max:+1" in proven and "clamp_max:0" in res.targets
    assert set(O.killed_by(model, "clamp_max:thr+1")) <= proven
    assert not set(O.killed_by(model, "clamp_max:thr-1")) <= proven
    cov = O.coverage(model, res.vectors)
    assert "clamp_max:thr-1" not in cov["missed"] and "clamp_max:thr+1" in cov["missed"]
