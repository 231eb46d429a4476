"""Mutation analysis: mutants are one-line edits that compile; weak vectors leave reported
survivors; a prover's verdicts are handled; wrong or unbuildable firmware is refused; and the
acceptance gate: every threshold and reachable-leaf off-by-one of the example is killed."""

from __future__ import annotations

import itertools
import json
import shutil
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from rlcc import derived as derived_vocab
from rlcc import formats as fmt
from rlcc.codegen import bitmask, generate, manifest as manifest_io
from rlcc.codegen.context import BITMASK_STYLES
from rlcc.errors import BuildError, ExitCode, RlccError
from rlcc.firmware_sdk_stub import include_dirs, runtime_header
from rlcc.fxp import golden
from rlcc.fxp.model import INT32_MAX, INT32_MIN, FxConstants, FxModel, Split, Tree
from rlcc.fxp.vectors import concat, expected
from rlcc.verify.generators import verification_set
from rlcc.spec import Feature, ObservationSpec
from rlcc.verify.mutants import _unobservable_edits, run_mutation_analysis
from rlcc.verify.mutate import KINDS, generate_mutants, input_domains, reachable_leaves
from rlcc.verify.toolchain import compile_riscv

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "firmware"
GOLDEN = REPO / "tests" / "codegen" / "golden"
SPEC = ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2)
FIXED_KINDS = {"bias": 2, "clamp": 4, "round": 4, "hist": 6, "probe": 3, "carry": 3}  # 2 features, 2 steps


def example_model() -> FxModel:
    return manifest_io.load(str(EXAMPLE / "firmware.rlcc.json"))[1]


def sources(c: Path, h: Path) -> dict[str, str]:
    """The firmware's sources, with the runtime header it includes (its rounding/probe mutants)."""
    return {"c": c.read_text(), "h": h.read_text(), "rt": runtime_header().read_text()}


NAMES = {"rt": "rlcc_runtime.h"}


def _crossing(ok, lo: int, hi: int, rising: bool) -> int | None:
    """For a monotone predicate on [lo, hi]: the first value where it holds (``rising``) or the last
    (falling), by bisection; None if it holds nowhere."""
    if not ok(hi if rising else lo):
        return None
    a, b = lo, hi
    while a < b:
        if rising:
            mid = (a + b) // 2
            a, b = (a, mid) if ok(mid) else (mid + 1, b)
        else:
            mid = (a + b + 1) // 2
            a, b = (mid, b) if ok(mid) else (a, mid - 1)
    return a


def brute_force_reachable(model: FxModel) -> list[set[int]]:
    """Leaves hit by some input built from each split's T / T+1 and the domain ends (an
    oracle independent of the interval reasoning: it just evaluates the trees). A derived input
    is never enumerated: it is computed from its sources, whose candidates include, per
    candidate current value, the previous values where the derived input crosses each of its
    thresholds, and per previous value near its thresholds, the current values where it does
    (found by bisection, the derived value being monotone in each source)."""
    spec = model.spec
    domains = input_domains(model)
    derived = {spec.input_width + k: spec.derived_sources(k) for k in range(len(spec.derived))}

    def near(i: int, thresholds: set[int]) -> set[int]:
        lo, hi = domains[i]
        return {v for t in thresholds for v in (t - 1, t, t + 1) if lo <= v <= hi} | {lo, hi}

    def dval(k: int, cur: int, prev: int) -> int:
        d = derived_vocab.get(spec.derived[k])
        return int(d.device_value(golden.NUMPY, np.int64(cur), np.int64(prev)))

    out = []
    for tree in model.trees:
        thr: dict[int, set[int]] = {}
        for sp in tree.splits:
            thr.setdefault(sp.input, set()).add(sp.threshold)
        free = sorted({j for i in thr for j in (derived[i] if i in derived else (i,))})
        cand = {i: near(i, thr.get(i, set())) for i in free}
        for i, (c, p) in derived.items():
            if i not in thr:
                continue
            k = i - spec.input_width
            # the derived value falls with the previous source and rises with the current one:
            # per candidate of one source, the other's values where it crosses each threshold
            # (a leaf may need a current value far from any of its own thresholds)
            sweeps = [(p, sorted(cand[c]), lambda v, o: dval(k, o, v)),
                      (c, sorted(near(p, thr.get(p, set()))), lambda v, o: dval(k, v, o))]
            for src, others, g in sweeps:
                lo, hi = domains[src]
                for other in others:
                    for goal in (t + d for t in thr[i] for d in (-1, 0, 1)):
                        edge = _crossing(lambda v: g(v, other) >= goal, lo, hi, rising=src == c)
                        if edge is not None:
                            cand[src] |= {v for v in (edge - 1, edge, edge + 1) if lo <= v <= hi}
        hit = set()
        for combo in itertools.product(*(sorted(cand[i]) for i in free)):
            x = np.zeros((1, spec.student_width), dtype=np.int64)
            x[0, free] = combo
            for i, (c, p) in derived.items():
                x[0, i] = dval(i - spec.input_width, int(x[0, c]), int(x[0, p]))
            hit.add(int(golden.eval_trees(model, x)[1][0, model.trees.index(tree)]))
        out.append(hit)
    return out


def edited_lines(m) -> list[tuple[str, int]]:
    """The lines a mutant may change: its line, or the span its multi-line edit covers (a leaf of
    a leaf group is every entry that reads it)."""
    return [(m.file, m.line + k) for k in range(m.original.count("\n") + 1)]


def one_line_diff(before: dict[str, str], after: dict[str, str]) -> list[tuple[str, int]]:
    diffs = []
    for key in before:
        a, b = before[key].splitlines(), after[key].splitlines()
        assert len(a) == len(b), key
        diffs += [(key, n + 1) for n, (x, y) in enumerate(zip(a, b)) if x != y]
    return diffs


def compiles(texts: dict[str, str], names: dict[str, str], work: Path, target: str = "rv32imc") -> None:
    work.mkdir(parents=True, exist_ok=True)
    for key, text in texts.items():
        (work / names[key]).write_text(text)
    compile_riscv([work / names["c"]], target, [work, *include_dirs()], out_path=work / "m.o", extra_flags=["-c"])


# ---- generation --------------------------------------------------------------------------


@pytest.mark.slow
def test_reachable_leaves_match_brute_force():
    model = example_model()
    got = reachable_leaves(model)
    assert [set(s) for s in got] == brute_force_reachable(model)
    assert 0 < sum(map(len, got)) < sum(len(t.leaves) for t in model.trees)  # some leaves are dead


@pytest.mark.slow
def test_example_mutant_counts_and_one_line_edits(tmp_path):
    model = example_model()
    src = sources(EXAMPLE / "firmware.c", EXAMPLE / "firmware.h")
    mutants = generate_mutants(src["c"], src["h"], model, rt_text=src["rt"])
    counts = Counter(m.kind for m in mutants)
    leaves = {"leaf": 2 * sum(map(len, brute_force_reachable(model)))}
    fixed = {**FIXED_KINDS, **({"ramp": 12 * len(model.ramps)} if model.ramps else {})}
    t, leaf = next((t, min(r)) for t, r in enumerate(brute_force_reachable(model)) if r)
    common = {f"leaf:t{t}:{leaf}:-1", "bias:+1", "clamp_min:+1", "round:nearest", "probe:gt", "hist:drop",
              "probe_timeout:-1"}
    if json.loads((EXAMPLE / "firmware.rlcc.json").read_text())["tree_style"] == "bitmask":
        # one +-1 pair per distinct cut of a split (named by its first split), no per-split operator;
        # with the ramps folded into the searches, a cut of a ramp alone moves out by one (one mutant)
        _, group_bits, fold = BITMASK_STYLES["bitmask"]
        plan = bitmask.plan(model, group_bits=group_bits, fold_ramps=fold)
        cuts = [c for b in plan.inputs for c in b.cuts if c.uses]
        ramp_cuts = [c for b in plan.inputs for c in b.cuts if not c.uses]
        assert plan.folded and ramp_cuts
        assert counts == {"thr": 2 * len(cuts), **leaves, **fixed, "ramp": fixed["ramp"] + len(ramp_cuts)}
        t0, k0 = cuts[0].uses[0]
        common |= {f"thr:t{t0}:l{k0}:+1"}
    else:
        n_splits = sum(t.depth for t in model.trees)
        assert counts == {"thr": 2 * n_splits, "op": n_splits, **leaves, **fixed}
        common |= {"thr:t3:l2:+1", "op:t0:l1"}
    assert len({m.id for m in mutants}) == len(mutants)
    assert common <= {m.id for m in mutants}
    for m in mutants:
        after = m.apply(src)
        changed = one_line_diff(src, after)
        assert changed[0] == (m.file, m.line) and set(changed) <= set(edited_lines(m)), m.id
        assert m.description and m.kind in KINDS
    first_per_kind = {m.kind: m for m in reversed(mutants)}
    for m in first_per_kind.values():
        compiles(m.apply(src), {"c": "firmware.c", "h": "firmware.h", **NAMES}, tmp_path / m.id.replace(":", "_"))


@pytest.mark.slow
@pytest.mark.parametrize("style, n_op", [("oblivious", 4), ("ifelse", 6), ("bitmask", 0)])
def test_golden_tiny_mutants_all_compile(style, n_op, tmp_path):
    """Every tree style parses the same; the if-else form repeats a level-1 split per node; the
    bitmask form has one cut per split here (no shared cut) and no per-split comparison to flip."""
    src = sources(GOLDEN / f"tiny_{style}.c", GOLDEN / f"tiny_{style}.h")
    mutants = generate_mutants(src["c"], src["h"], rt_text=src["rt"])  # no model: every leaf
    assert Counter(m.kind for m in mutants) == {"thr": 8, "leaf": 16, **({"op": n_op} if n_op else {}), **FIXED_KINDS}
    if style == "ifelse":
        assert {"op:t0:l0", "op:t0:l1:n0", "op:t0:l1:n1"} <= {m.id for m in mutants}
    for m in mutants:
        after = m.apply(src)
        changed = one_line_diff(src, after)
        assert changed[0] == (m.file, m.line) and set(changed) <= set(edited_lines(m)), m.id
        compiles(after, {"c": "tiny.c", "h": "tiny.h", **NAMES}, tmp_path / m.id.replace(":", "_"))


@pytest.mark.parametrize("style, expected", [
    # x < INT32_MAX is the constant INT32_MAX (no +1); as a cut it is x > INT32_MAX - 1 (both ways)
    ("oblivious", {"thr:t0:l0:+1", "thr:t0:l1:-1"}),
    ("bitmask", {"thr:t0:l0:+1", "thr:t0:l1:-1", "thr:t0:l1:+1"}),
])
def test_int32_extreme_thresholds_stay_in_range(style, expected):
    spec = ObservationSpec(features=(Feature("rate"), Feature("delta")), history=1)
    tree = Tree((Split(1, ">", INT32_MIN, -1.0), Split(1, "<", INT32_MAX, 1.0)), (1, 2, 3, 4))
    model = FxModel(spec, FxConstants.from_spec(spec), (tree,), bias=fmt.FACTOR_ONE)
    from rlcc.codegen import render_sources

    texts, _ = render_sources(model, name="edge", tree_style=style)
    ids = {m.id: m for m in generate_mutants(texts["c"], texts["h"], model, kinds=("thr",))}
    assert set(ids) == expected
    assert "INT32_C(-2147483647)" in ids["thr:t0:l0:+1"].mutated
    if style == "bitmask":
        assert "INT32_C(2147483647)" in ids["thr:t0:l1:+1"].mutated
    with pytest.raises(ValueError):
        generate_mutants(texts["c"], texts["h"], kinds=("nonsense",))


# ---- running -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_copy(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("example")
    for name in ("firmware.c", "firmware.h", "firmware.rlcc.json"):
        shutil.copy(EXAMPLE / name, out / name)
    return out / "firmware.c"


def shipped(firmware_c: Path):
    """The manifest's pinned vectors and what verification adds for its model (1,024 random)."""
    _, model, pinned = manifest_io.load(str(firmware_c.with_name("firmware.rlcc.json")))
    return concat(pinned, verification_set(model, n_random=1024)[0])


def take(v, n):
    idx = np.arange(min(n, len(v)))
    return type(v)(*(getattr(v, f)[idx] for f in ("ctx_in", "event", "attr", "ctx_out", "rate", "rtt_req")))


@pytest.mark.slow
def test_weak_vectors_leave_reported_survivors(example_copy):
    kinds = ("bias", "clamp", "probe")
    weak = run_mutation_analysis(example_copy, None, "rv64imac", vectors=take(shipped(example_copy), 10), kinds=kinds)
    strong = run_mutation_analysis(example_copy, None, "rv64imac", vectors=shipped(example_copy), kinds=kinds)
    d = json.loads(json.dumps(weak.to_dict()))
    assert d["schema"] == "rlcc.mutants/1" and d["target"] == "rv64imac" and d["mutants"] == 9
    assert d["survived"] > 0 and d["kill_rate"] < 1.0 and not weak.passed
    assert d["killed"] + d["survived"] + d["equivalent"] + d["stillborn"] == 9
    assert {s["id"] for s in d["survivors"]} >= {"probe:gt", "probe_timeout:+1", "probe_timeout:-1"}
    for s in d["survivors"]:
        assert s["file"] in ("firmware.c", "firmware.h", "rlcc_runtime.h") and s["line"] > 0 and s["description"]
    assert sum(k["mutants"] for k in d["by_kind"].values()) == 9
    assert "9 mutants" in weak.summary() and "survived" in weak.summary()
    assert strong.passed and strong.kill_rate == 1.0, strong.to_dict()["survivors"]


class FakeProver:
    """Judges a mutant from the sources beside the ELF it is given (the mutant's build dir)."""

    def __init__(self, model: FxModel) -> None:
        self.model = model
        self.calls = 0

    def __call__(self, elf: Path, model: FxModel, target: str):
        self.calls += 1
        assert elf.is_file() and target == "rv64imac" and model == self.model
        h, rt = (elf.parent / "firmware.h").read_text(), (elf.parent / "rlcc_runtime.h").read_text()
        if "PROBE_TS] > timeout_ns" in rt:  # probe:gt (a runtime header edit, built beside firmware.c)
            return SimpleNamespace(status="proven", counterexample=None)
        if "UINT32_C(4000001)" in h:  # a TX event exactly one timeout after the last probe
            return SimpleNamespace(status="counterexample", counterexample=self.tx_at(4_000_000))
        if "UINT32_C(3999999)" in h:  # a vector that does not tell this mutant apart
            return SimpleNamespace(status="counterexample", counterexample=self.tx_at(10))
        return SimpleNamespace(status="timeout", counterexample=None)

    def tx_at(self, elapsed: int):
        ctx = np.zeros((1, fmt.CTX_WORDS), dtype=np.uint32)
        ctx[0, fmt.CTX_RATE], ctx[0, fmt.CTX_PREV_FACTOR] = 5000, fmt.FACTOR_ONE
        ev = golden.make_events(np.array([fmt.EVENT_TX]), np.array([elapsed]))
        v = expected(self.model, ctx, ev)
        return type(v)(v.ctx_in, v.event, v.attr, v.ctx_out * 0, v.rate * 0, v.rtt_req * 0)  # outputs must be ignored


@pytest.mark.slow
def test_prover_verdicts(example_copy):
    prover = FakeProver(example_model())
    report = run_mutation_analysis(example_copy, None, "rv64imac", vectors=take(shipped(example_copy), 10),
                                   kinds=("probe", "bias"), prover=prover, jobs=1)
    by_id = {r.mutant.id: r for r in report.results}
    assert prover.calls == 3  # the bias mutants die on the vectors, the probe ones reach the prover
    assert by_id["probe:gt"].status == "equivalent"
    assert by_id["probe_timeout:+1"].status == "killed" and by_id["probe_timeout:+1"].phase == "proof"
    assert by_id["probe_timeout:+1"].vector["got"]["rtt_req"] == 0
    assert by_id["probe_timeout:-1"].status == "survived" and "not confirmed" in by_id["probe_timeout:-1"].reason
    d = report.to_dict()
    assert (d["killed"], d["equivalent"], d["survived"]) == (3, 1, 1) and d["kill_rate"] == 0.75
    assert [e["id"] for e in d["equivalent_list"]] == ["probe:gt"]
    assert [p["id"] for p in d["killed_by_proof"]] == ["probe_timeout:+1"]


@pytest.mark.slow
def test_golden_level_equivalence_only_for_exhaustively_unobservable_edits(tmp_path):
    """Leaves every input of which saturates the factor clamp: their +-1 edits are proven
    unobservable at the golden level (exhaustive search), and no other edit is; on the bundled
    example only harmless ramp edits and the edits of leaf t2:3 (whose sums stay below clamp_min
    whatever the ramps add: an interval proof) are."""
    pytest.importorskip("rlcc.verify.observable")
    tree = Tree((Split(1, ">", 1000, 0.0), Split(3, ">", 0, 0.0)), (60000, 100, -60000, -100))  # 0, 2: clamped
    model = FxModel(SPEC, FxConstants.from_spec(SPEC), (tree,), bias=fmt.FACTOR_ONE)
    paths = generate(model, tmp_path)
    src = sources(paths["c"], paths["h"])
    edits = _unobservable_edits(model, generate_mutants(src["c"], src["h"], model, rt_text=src["rt"]))
    assert set(edits) == {"leaf:t0:0:+1", "leaf:t0:0:-1", "leaf:t0:2:+1", "leaf:t0:2:-1"}
    assert all("saturates the factor clamp" in why for why in edits.values())
    assert {0, 2} <= brute_force_reachable(model)[0]
    ex = sources(EXAMPLE / "firmware.c", EXAMPLE / "firmware.h")
    example = _unobservable_edits(example_model(), generate_mutants(ex["c"], ex["h"], example_model(), rt_text=ex["rt"]))
    assert all((mid.startswith("ramp:") and "the same for every input value" in why)
               or (mid in ("leaf:t2:3:+1", "leaf:t2:3:-1") and "saturates the factor clamp" in why)
               for mid, why in example.items()), example


def test_ramp_mutants_one_line_each_and_harmless_ones_proven(tmp_path):
    """Every ramp constant +-1 is one mutant (one #define), builds, and is called equivalent at the
    golden level exactly when enumerating the ramp's inputs shows its term never changes (the
    ramps' own sum, rlcc_ramp: a style that does not fold them into the searches)."""
    from rlcc.fxp.model import Ramp
    from rlcc.verify.observable import ramp_witnesses

    tree = Tree((Split(3, ">", 0, 0.0),), (-100, 100))
    ramps = (Ramp(2, 64225, 65536, 66847, -333, -340, 10), Ramp(3, -1258, 0, 1258, 3951, 0, 10))
    model = FxModel(SPEC, FxConstants.from_spec(SPEC), (tree,), bias=fmt.FACTOR_ONE, ramps=ramps)
    paths = generate(model, tmp_path / "fw", tree_style="bitmask-per-tree")
    src = sources(paths["c"], paths["h"])
    mutants = [m for m in generate_mutants(src["c"], src["h"], model, rt_text=src["rt"]) if m.kind == "ramp"]
    assert len(mutants) == 12 * len(ramps)
    fields = ("lo", "center", "hi", "k_below", "k_above", "shift")
    assert {m.id for m in mutants} == {f"ramp:{i}:{f}:{d}" for i in range(2) for f in fields for d in ("+1", "-1")}
    for m in mutants:
        assert one_line_diff(src, m.apply(src)) == [("c", m.line)], m.id
    compiles(mutants[0].apply(src), {"c": "firmware.c", "h": "firmware.h", **NAMES}, tmp_path / "m0")
    harmless = {tid for tid, w in ramp_witnesses(model).items() if w is None}
    assert harmless  # the flat previous-factor ramp has edits no input can see
    assert set(_unobservable_edits(model, mutants)) == harmless


def test_folded_ramp_cut_mutants_are_their_model_edits_at_one_value(tmp_path):
    """A folded ramp's LO - 1 (HI) cut moved outward puts LO - 1 (HI + 1) in the linear piece and
    changes the term there alone: the mutant is invisible exactly when the ramp edit it stands for
    (LO - 1, HI + 1) is, and that edit's witness is that value (checked against the linear piece's
    own value there, for slopes whose step is below and above one LSB); the center cut has none."""
    from rlcc.fxp.model import Ramp
    from rlcc.verify.mutants import _coverage_id
    from rlcc.verify.observable import ramp_witnesses

    tree = Tree((Split(3, ">", 0, 0.0), Split(2, ">", 65000, 0.0)), (-100, 100, 7, -7))
    ramps = (Ramp(2, 64225, 65536, 66847, -333, -340, 10), Ramp(3, -1258, 0, 1258, 3951, -2770, 10))
    model = FxModel(SPEC, FxConstants.from_spec(SPEC), (tree,), bias=fmt.FACTOR_ONE, ramps=ramps)
    paths = generate(model, tmp_path / "fw")
    src = sources(paths["c"], paths["h"])
    cuts = [m for m in generate_mutants(src["c"], src["h"], model, rt_text=src["rt"]) if "_cut:" in m.id]
    assert {m.id for m in cuts} == {f"ramp:{i}:{r}" for i in range(2) for r in ("lo_cut:-1", "center_cut:-1", "hi_cut:+1")}
    witnesses, seen = ramp_witnesses(model), set()
    for m in cuts:
        i, role = int(m.id.split(":")[1]), m.id.split(":")[2]
        r = model.ramps[i]
        if role == "center_cut":
            assert _coverage_id(m) is None
            continue
        v, k = (r.lo - 1, r.k_below) if role == "lo_cut" else (r.hi + 1, r.k_above)
        step = (abs(v - r.center) * abs(k)) >> r.shift
        linear = -step if (role == "lo_cut") == (k > 0) else step  # rlcc_ramp_below / _above at v
        changed = linear != int(golden.ramp_value(golden.NUMPY, r, np.int64(v)))
        w = witnesses[_coverage_id(m)]
        assert (w is not None) == changed and (w is None or w == (r.input, v)), (m.id, w, linear)
        seen.add(changed)
    assert seen == {False, True}  # both cases met


@pytest.mark.slow
def test_unbuildable_and_wrong_firmware_refused(example_copy, tmp_path):
    for name in ("firmware.h", "firmware.rlcc.json"):
        shutil.copy(example_copy.with_name(name), tmp_path / name)
    broken = tmp_path / "firmware.c"
    broken.write_text(example_copy.read_text() + "\n#error broken on purpose\n")
    with pytest.raises(BuildError) as err:
        run_mutation_analysis(broken, None, "rv32imc", vectors=shipped(example_copy), kinds=("bias",))
    assert err.value.exit_code == ExitCode.BUILD == 6
    m = generate_mutants(example_copy.read_text(), "", kinds=("bias",))[0]
    broken.write_text(m.apply({"c": example_copy.read_text()})["c"])
    with pytest.raises(RlccError) as err:
        run_mutation_analysis(broken, None, "rv32imc", vectors=shipped(example_copy), kinds=("bias",))
    assert err.value.exit_code == ExitCode.MISMATCH and "meaningless" in str(err.value)


@pytest.mark.slow
def test_ifelse_firmware_runs(tmp_path):
    trees = (Tree((Split(3, ">", -4194, 0.0), Split(2, ">", 65536, 0.0)), (-6554, 3277, -1638, 6554)),
             Tree((Split(1, ">", 0, 0.0), Split(0, "<", 60000, 0.0)), (-1000, 500, 1000, 2000)))
    model = FxModel(SPEC, FxConstants.from_spec(SPEC), trees, bias=fmt.FACTOR_ONE)
    c = generate(model, tmp_path, tree_style="ifelse")["c"]
    report = run_mutation_analysis(c, None, "rv32imc", vectors=shipped(c), kinds=("thr", "op"))
    d = report.to_dict()
    assert d["mutants"] == 8 + 6 and d["stillborn"] == 0
    assert d["killed"] + d["survived"] == 14 and d["killed"] > 0


# ---- acceptance --------------------------------------------------------------------------


def _lead_prover():
    try:
        from rlcc.verify.prove import prove_firmware
    except ImportError:
        return None
    return lambda elf, model, target: prove_firmware(elf, model, target, timeout_s=60.0)


@pytest.mark.slow  # ~1.5 min for rv64 (302 mutants, one build each) on 2 cores: CI runs it
@pytest.mark.parametrize("target, kinds", [("rv64imac", ("thr", "leaf")), ("rv32imc", ("thr",))])
def test_acceptance_every_threshold_and_reachable_leaf_off_by_one_is_killed(target, kinds):
    """Issue 11: verification must catch every +-1 of a threshold and of a reachable leaf. On
    rv32 the thresholds only: they are the immediates whose code differs between the targets
    (lui/addi pairs, signed compares), while a leaf is the same table word on both, read by the
    same lookup, and its 238 mutants cost ~2 min of CI there (``rlcc-verify --mutants --target
    rv32imc`` runs them all)."""
    t0 = time.perf_counter()
    report = run_mutation_analysis(EXAMPLE / "firmware.c", None, target, kinds=kinds, prover=_lead_prover())
    d = report.to_dict()
    print(f"\n{report.summary()} [test wall {time.perf_counter() - t0:.1f} s]")
    assert d["stillborn"] == 0
    assert d["survived"] == 0, "survivors: " + ", ".join(s["id"] for s in d["survivors"])


def test_clamp_edit_seen_only_at_the_bound_is_not_called_equivalent():
    """On a model whose sums reach clamp_max exactly but never exceed it, the C mutant
    ``clamp_max:-1`` is visible (clip(hi, lo, hi - 1) = hi - 1: killed by the clamp_max:0 vector),
    so the golden-level check must not report it equivalent, while ``clamp_max:+1`` is (no sum
    above hi); before, killed_by named only clamp_max:+1 for both and called both equivalent. Leaf
    t1:1 (sums below clamp_min and exactly at it): +1 visible, -1 equivalent."""
    from clamp_models import bound_model
    from rlcc.verify.mutants import _unobservable_edits
    from rlcc.verify.mutate import Mutant

    model = bound_model()
    mutants = [Mutant("clamp_max:-1", "clamp", "", "h", 1, "", ""), Mutant("clamp_max:+1", "clamp", "", "h", 1, "", ""),
               Mutant("leaf:t1:1:+1", "leaf", "", "c", 1, "", "", tree=1, leaf=1),
               Mutant("leaf:t1:1:-1", "leaf", "", "c", 1, "", "", tree=1, leaf=1)]
    equivalent = _unobservable_edits(model, mutants)
    assert set(equivalent) == {"clamp_max:+1", "leaf:t1:1:-1"}, equivalent
    assert "saturates" in equivalent["leaf:t1:1:-1"]
