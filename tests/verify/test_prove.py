"""The symbolic prover: its decoder and executor against the emulator, its z3 golden model
against the numpy one, and its verdicts on right and wrong firmware."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import z3

from rlcc import formats as fmt
from rlcc.codegen import manifest
from rlcc.codegen.context import SLOG_FUNCTION
from rlcc.codegen.generate import generate
from rlcc.fxp import golden
from rlcc.verify.generators import random_vectors
from rlcc.verify import prove as P
from rlcc.verify import prove_abstractions as PA
from rlcc.verify import prove_handler as PH
from rlcc.verify import prove_parts as PP
from rlcc.verify.prove_image import RET_SENTINEL
from rlcc.verify.prove_solver import free_vars
from rlcc.verify.build import build_harness_elf
from rlcc.verify.runner import HarnessRunner, records_from_vectors
from rlcc.verify.symbolic_golden import Z3Ops, symbolic_event
from rlcc.verify.symexec import Executor, Region, State

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "firmware" / "firmware.rlcc.json"


@pytest.fixture(scope="module")
def example_model():
    _, model, _ = manifest.load(str(EXAMPLE))
    return model


def _elf(model, tmp: Path, target: str, edit: tuple[str, str] | None = None, style: str = "oblivious") -> Path:
    """The model's firmware built for ``target``; ``edit`` replaces a line of the C (the runtime
    header inlined, so runtime functions can be edited too). ``style``: the tree style (the edits
    below are written against the oblivious form; ``bitmask`` tests name their own)."""
    paths = generate(model, tmp / "src", inline_runtime=edit is not None, tree_style=style)
    if edit:
        text = paths["c"].read_text()
        assert edit[0] in text
        paths["c"].write_text(text.replace(edit[0], edit[1], 1))
    return build_harness_elf(paths["c"], target, tmp, zbb=target == "rv64imac")


@pytest.mark.parametrize("which", ["example", "ramps"])
def test_symbolic_golden_equals_numpy_golden(example_model, which):
    """Z3Ops and NumpyOps evaluate the same event_core: equal on concrete random inputs (the
    example, and a model with ramps, whose z3 sum is taken in 32 bits)."""
    example_model = example_model if which == "example" else _ramp_model()
    v = random_vectors(example_model, 40, seed=3)
    sqrt_fn = z3.Function("sqrt_rate", z3.BitVecSort(32), z3.BitVecSort(32))
    ctx = [z3.BitVec(f"c{i}", 32) for i in range(fmt.CTX_WORDS)]
    ev = [z3.BitVec(f"e{i}", 32) for i in range(fmt.EVENT_WORDS)]
    out = symbolic_event(example_model, ctx, ev, sqrt_fn)
    for i in range(len(v)):
        subst = [(w, z3.BitVecVal(int(x), 32)) for w, x in zip(ctx + ev, list(v.ctx_in[i]) + list(v.event[i]))]
        rates = {int(v.ctx_in[i, fmt.CTX_RATE]), example_model.constants.rate_initial}
        lemma = z3.And(*[sqrt_fn(z3.BitVecVal(r, 32)) == int(golden.NUMPY.sqrt_rate(np.array([r]))[0]) for r in rates])
        s = z3.Solver()
        s.add(lemma)
        got = [z3.substitute(t, *subst) for t in out.ctx + [out.rate, out.rtt_req]]
        want = list(v.ctx_out[i]) + [v.rate[i], v.rtt_req[i]]
        s.add(z3.Or(*[g != int(w) for g, w in zip(got, want)]))
        assert s.check() == z3.unsat, f"vector {i}"


@pytest.mark.slow
@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_executor_matches_the_emulator_on_concrete_inputs(example_model, tmp_path, target):
    """The decoder and instruction semantics of the symbolic executor, run on concrete values,
    reproduce the emulator's outputs (the square root executed, not summarized)."""
    elf = _elf(example_model, tmp_path, target)
    xlen = 64 if target == "rv64imac" else 32
    img = P.load_after_init(elf, xlen, "dpa" if xlen == 64 else "generic5", xlen == 64)
    v = random_vectors(example_model, 24, seed=5)
    runner = HarnessRunner(elf, xlen, img.machine.profile, zbb=img.machine.zbb)
    emu = runner.run(records_from_vectors(v))
    ctx_addr, ev_addr, res_addr = img.scratch, img.scratch + 64, img.scratch + 128
    regions = img.regions + [Region(ctx_addr, ctx_addr + 48, "ctx", True), Region(ev_addr, ev_addr + 32, "ev"),
                             Region(res_addr, res_addr + 8, "res", True)]
    for i in range(len(v)):
        ex = Executor(img.image, img.machine.mem_base, xlen, regions)
        mem = {}
        for base, words in ((ctx_addr, v.ctx_in[i]), (ev_addr, v.event[i])):
            for k, w in enumerate(words):
                for b in range(4):
                    mem[base + 4 * k + b] = (int(w) >> (8 * b)) & 0xFF
        regs = [0] * 32
        regs[1], regs[2], regs[3], regs[4] = RET_SENTINEL, img.machine.stack_top, img.gp, img.tp
        regs[10], regs[11], regs[12], regs[13] = ctx_addr, ev_addr, int(v.attr[i]), res_addr
        fin = ex.run(State(img.symbols["user_algo"][0], regs, mem, ()), RET_SENTINEL).state
        ctx_out = [ex.load(fin, ctx_addr + 4 * k, 4) for k in range(fmt.CTX_WORDS)]
        assert ctx_out == emu["ctx_out"][i].tolist(), f"vector {i}"
        assert ex.load(fin, res_addr, 4) == int(emu["rate"][i])
        assert ex.load(fin, res_addr + 4, 4) == int(emu["rtt_req"][i])


@pytest.mark.slow
def test_sqrt_rate_exhaustive_and_contract_parts(example_model, tmp_path):
    elf = _elf(example_model, tmp_path, "rv64imac")
    img = P.load_after_init(elf, 64, "dpa", True)
    part = PP.sqrt_values(img, 64, sampled=2000, seed=0)
    assert part.status == "exhaustive", part.detail
    assert PP.reachable_rates(example_model).status == "proven"


@pytest.mark.slow
def test_wrong_square_root_is_found(example_model, tmp_path):
    """A square root off by one for some rates fails the exhaustive part with the rate named."""
    elf = _elf(example_model, tmp_path, "rv64imac", ("return x - (uint32_t)((uint64_t)x * x > n);",
                                                      "return x - (uint32_t)((uint64_t)x * x >= n);"))  # perfect squares
    img = P.load_after_init(elf, 64, "dpa", True)
    part = PP.sqrt_values(img, 64, sampled=0, seed=0)
    assert part.status == "failed" and "sqrt_rate(" in part.detail


@pytest.mark.slow
def test_history_shift_bug_yields_a_counterexample_that_reproduces(example_model, tmp_path):
    """Storing the wrong feature into the history: the solver's input, replayed in the emulator,
    differs from the golden model."""
    wrong = ("c[FIRMWARE_HIST_WORD(1u, FIRMWARE_F_PREV_ACTION)] = (uint32_t)x[FIRMWARE_IN_PREV_ACTION_T];",
             "c[FIRMWARE_HIST_WORD(1u, FIRMWARE_F_PREV_ACTION)] = (uint32_t)x[FIRMWARE_IN_PREV_ACTION_T_1];")
    elf = _elf(example_model, tmp_path, "rv64imac", wrong)
    img = P.load_after_init(elf, 64, "dpa", True)
    part, cex = PH.prove_handler(img, example_model, 64, timeout_s=120.0)
    assert part.status == "counterexample", part.detail
    runner = HarnessRunner(elf, 64, img.machine.profile, zbb=True)
    out = runner.run(records_from_vectors(cex))
    assert np.any(out["ctx_out"][0] != cex.ctx_out[0])


@pytest.mark.slow
@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_a_wrong_inline_product_is_a_handler_counterexample(example_model, tmp_path, target):
    """The wide products are inline on both targets (no symbol: one mul on RV64, a mul and a mulhu
    on RV32), which the handler proof reads as the golden model's opaque product: a rate product
    off by one LSB is a counterexample the emulator reproduces, and the right one is proven."""
    xlen = 64 if target == "rv64imac" else 32
    profile = "dpa" if xlen == 64 else "generic5"
    right = P.load_after_init(_elf(example_model, tmp_path / "right", target), xlen, profile, xlen == 64)
    assert not {"rlcc_penalty_product", "rlcc_rate_product"} & set(right.symbols)
    part, _ = PH.prove_handler(right, example_model, xlen, timeout_s=120.0)
    assert part.status == "proven", part.detail
    wrong = ("return (uint64_t)rate * factor;", "return (uint64_t)rate * factor + 1u;")
    img = P.load_after_init(_elf(example_model, tmp_path / "wrong", target, wrong), xlen, profile, xlen == 64)
    part, cex = PH.prove_handler(img, example_model, xlen, timeout_s=120.0)
    assert part.status == "counterexample" and cex is not None, part.detail


@pytest.mark.slow
def test_sqrt_contract_is_proven_on_both_targets(example_model, tmp_path):
    for target, xlen, profile in (("rv64imac", 64, "dpa"), ("rv32imc", 32, "generic5")):
        img = P.load_after_init(_elf(example_model, tmp_path / target, target), xlen, profile, xlen == 64)
        part = PP.sqrt_contract(img, xlen)
        assert part.status == "proven", (target, part.detail)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_slog_part_proves_the_log_and_refutes_wrong_ones(example_model, tmp_path, target):
    """The derived input's state, the out-of-line signed log the handler proof abstracts as one
    uninterpreted slog, is proven equal to slog_int(d) for every int32; a mantissa shifted one bit
    short fails, and so does a log that drops the sign."""
    assert example_model.spec.derived, "the example distils with derived inputs"
    xlen = 64 if target == "rv64imac" else 32
    profile = "dpa" if xlen == 64 else "generic5"
    right = P.load_after_init(_elf(example_model, tmp_path / "right", target), xlen, profile, xlen == 64)
    part = PP.slog_part(right, xlen)
    assert part.status == "proven", part.detail
    wrong_mantissa = ("return (int32_t)(((msb - 16u) << 16) + ((u - (1u << msb)) >> (msb - 16u)));",
                      "return (int32_t)(((msb - 16u) << 16) + ((u - (1u << msb)) >> (msb - 15u)));")
    no_sign = ("    return rlcc_slog(d);\n}", "    return rlcc_slog(d < 0 ? -d : d);\n}")
    for k, edit in enumerate((wrong_mantissa, no_sign)):
        img = P.load_after_init(_elf(example_model, tmp_path / f"wrong{k}", target, edit), xlen, profile, xlen == 64)
        part = PP.slog_part(img, xlen)
        assert part.status == "failed" and "slog(d)" in part.detail, part.detail


@pytest.mark.slow
@pytest.mark.parametrize("edit", ["stale state", "ratio from the history"])
def test_a_wrong_derived_state_is_a_handler_counterexample(example_model, tmp_path, edit):
    """The log ratio's previous-step log is a context word the decision stores: not storing this
    step's (the old one stays), or computing the ratio from the previous delta again instead of the
    stored log (equal only where the context is one a flow reached), is a handler counterexample
    the emulator reproduces."""
    wrong = {"stale state": ("        c[FIRMWARE_DERIVED_WORD(0u)] = (uint32_t)state;\n", ""),
             "ratio from the history": (
                 "        const uint32_t prev = valid ? c[FIRMWARE_DERIVED_WORD(0u)] : (uint32_t)state;",
                 "        const uint32_t prev = (uint32_t)rlcc_signed_log((int32_t)x[FIRMWARE_IN_DELTA_T_1]);")}[edit]
    elf = _elf(example_model, tmp_path, "rv64imac", wrong)
    img = P.load_after_init(elf, 64, "dpa", True)
    part, cex = PH.prove_handler(img, example_model, 64, timeout_s=120.0)
    assert part.status == "counterexample" and cex is not None, part.detail
    out = HarnessRunner(elf, 64, img.machine.profile, zbb=True).run(records_from_vectors(cex))
    assert out["rate"][0] != cex.rate[0] or np.any(out["ctx_out"][0] != cex.ctx_out[0])


def _ramp_model():
    """One small tree and two ramps (previous factor, delta[t]) on the example's spec."""
    import dataclasses

    from rlcc.fxp.model import FxConstants, FxModel, Ramp, Split, Tree
    from rlcc.spec import Feature, ObservationSpec

    spec = ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2)
    tree = Tree((Split(3, ">", -5000, 0.0), Split(1, ">", 300, 0.0)), (-2000, 500, -700, 1200))
    model = FxModel(spec, FxConstants.from_spec(spec), (tree,), bias=fmt.FACTOR_ONE)
    return dataclasses.replace(model, ramps=(Ramp(2, 64225, 65536, 66847, -333, -340, 10),
                                             Ramp(3, -1258, 0, 1258, 3951, 2598, 10)))


@pytest.mark.slow
@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_ramps_sum_is_proven_ramp_by_ramp_and_a_wrong_ramp_refuted(tmp_path, target):
    """The ramps' sum (every rlcc_ramp inline) is proven equal to the golden ramp terms for every
    int32 input, one input at a time (each ramp's own obligation); a ramp whose center is off by
    one fails that ramp's obligation, a ramp fed its neighbour's input fails too."""
    model = _ramp_model()
    xlen = 64 if target == "rv64imac" else 32
    profile = "dpa" if xlen == 64 else "generic5"
    img = P.load_after_init(_elf(model, tmp_path / "right", target), xlen, profile, xlen == 64)
    part = PP.sum_parts(img, xlen, model)[1]
    assert (part.name, part.status) == ("ramps' sum", "proven"), part.detail
    wrong_center = ("#define FIRMWARE_RAMP_1_CENTER INT32_C(0)", "#define FIRMWARE_RAMP_1_CENTER INT32_C(1)")
    wrong_input = ("sum += rlcc_ramp((int32_t)x[FIRMWARE_IN_DELTA_T],", "sum += rlcc_ramp((int32_t)x[FIRMWARE_IN_DELTA_T_1],")
    for k, (edit, says) in enumerate(((wrong_center, "terms on ramps_x3"), (wrong_input, "equal their golden terms"))):
        img = P.load_after_init(_elf(model, tmp_path / f"wrong{k}", target, edit), xlen, profile, xlen == 64)
        part = PP.sum_parts(img, xlen, model)[1]
        assert part.status == "failed" and says in part.detail, part.detail


def test_separate_groups_terms_by_their_input_and_checks_at_zero():
    """``_separate`` groups a sum's addends and the golden terms by the input each reads: a right
    sum's obligations are all unsatisfiable; a constant off by one shows only at all-zero inputs,
    a slope off only in its input's group; one group alone is left to the whole proof."""
    x, y = z3.BitVec("x", 32), z3.BitVec("y", 32)
    wide = lambda t: z3.SignExt(32, t)  # noqa: E731 - golden terms are 64-bit
    terms = [wide(3 * x + 5), wide(7 * y)]
    cases = {"right": (3 * x + 7 * y + 5, None), "constant": (3 * x + 7 * y + 6, "all-zero"),
             "slope": (3 * x + 8 * y + 5, "terms on y")}
    for name, (got, fails) in cases.items():
        obligations = PP._separate(wide(got), terms)
        assert obligations is not None, name
        open_ = [d for d, f in obligations if z3.Solver().check(f) != z3.unsat]
        assert open_ == ([] if fails is None else [d for d, _ in obligations if fails in d]), (name, open_)
    assert PP._separate(wide(3 * x + 5), [wide(3 * x + 5)]) is None
    # an addend reading two inputs (two ramps interleaved by the compiler) joins their groups: the
    # group's obligation holds when the addend is their terms, and fails when it is not
    z = z3.BitVec("z", 32)
    terms3 = [wide(3 * x), wide(7 * y), wide(5 * z)]
    mixed_right = z3.If(y > 0, 3 * x + 7 * y, (x << 1) + x + 7 * y) + 5 * z  # x's term, two circuits by y
    for got, fails in ((mixed_right, None), (x * y + 5 * z, "terms on x, y")):
        obligations = PP._separate(wide(got), terms3)
        assert obligations is not None and any("x, y" in d for d, _ in obligations)
        open_ = [d for d, f in obligations if z3.Solver().check(f) != z3.unsat]
        assert open_ == ([] if fails is None else [d for d, _ in obligations if fails in d]), open_
    assert PP._separate(wide(x * y), [wide(x), wide(y)]) is None  # one group: the whole proof instead


@pytest.mark.slow
def test_handler_with_abstracted_ramps_is_proven(tmp_path):
    """With the trees' and ramps' sums uninterpreted functions of the input array, the whole handler
    of a small ramp model is proven equal to the golden model on rv64 (the sums' own parts close
    the argument)."""
    model = _ramp_model()
    res = P.prove_firmware(_elf(model, tmp_path, "rv64imac"), model, "rv64imac", timeout_s=240, zbb=True)
    assert res.status == "proven", [(p.name, p.status, p.detail) for p in res.parts]
    assert {"trees' sum", "ramps' sum"} <= {p.name for p in res.parts}


@pytest.mark.slow
@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_sum_parts_prove_right_sums_and_refute_wrong_ones(tmp_path, target):
    """A ramp model's out-of-line trees' and ramps' sums, which the handler proof abstracts, are
    proven equal to the golden partial sums for all input words; a leaf off by one fails the
    trees' sum (a wrong ramp: test_ramps_sum_is_proven_ramp_by_ramp_and_a_wrong_ramp_refuted)."""
    model = _ramp_model()
    xlen = 64 if target == "rv64imac" else 32
    profile = "dpa" if xlen == 64 else "generic5"
    img = P.load_after_init(_elf(model, tmp_path / "right", target), xlen, profile, xlen == 64)
    parts = PP.sum_parts(img, xlen, model)
    assert [(p.name, p.status) for p in parts] == [("trees' sum", "proven"), ("ramps' sum", "proven")], parts
    wrong_leaf = ("    -2000, 500, -700, 1200,", "    -2000, 501, -700, 1200,")
    img = P.load_after_init(_elf(model, tmp_path / "wrong", target, wrong_leaf), xlen, profile, xlen == 64)
    part = next(p for p in PP.sum_parts(img, xlen, model) if p.name == "trees' sum")
    assert part.status == "failed" and "result equals" in part.detail, part.detail


def _bitmask_model():
    """The ramp model with two more trees whose splits put five cuts on delta[t] (binary search,
    padded) and a ``<`` split on prev_action[t] (a cut at t - 1)."""
    import dataclasses

    from rlcc.fxp.model import Split, Tree

    base = _ramp_model()
    extra = (Tree((Split(3, ">", -9000, 0.0), Split(3, ">", 2000, 0.0), Split(2, "<", 66000, 0.0)),
                  (100, -200, 300, -400, 500, -600, 700, -800)),
             Tree((Split(3, ">", -30000, 0.0), Split(3, ">", 150, 0.0), Split(1, ">", -400, 0.0)),
                  (11, 22, 33, 44, 55, 66, 77, 88)))
    return dataclasses.replace(base, trees=base.trees + extra)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
@pytest.mark.parametrize("style", ["bitmask", "bitmask-per-tree", "bitmask-branchfree"])
def test_bitmask_sums_are_proven_and_wrong_tables_refuted(tmp_path, target, style):
    """The bit-parallel trees' sum (bucket per input, split-bit words ORed, one leaf lookup per
    tree or per group of trees) and the ramps' sum (folded into the searches by the default style:
    one function returns both) are proven equal to the golden sums for all input words, with either
    search (branch-free over a padded table of cuts: a padded cut lowered to just below INT32_MAX too,
    its bucket repeats the last one's bits); a search comparing with the wrong cut (a table entry,
    or a nested comparison's constant), or a split-bit word with a bit cleared, fails it."""
    model = _bitmask_model()
    xlen = 64 if target == "rv64imac" else 32
    profile = "dpa" if xlen == 64 else "generic5"
    img = P.load_after_init(_elf(model, tmp_path / "right", target, style=style), xlen, profile, xlen == 64)
    parts = PP.sum_parts(img, xlen, model)
    folded = style == "bitmask"  # its searches also add the ramps' pieces: one function returns both sums
    want = [("trees' and ramps' sums", "proven")] if folded else [("trees' sum", "proven"), ("ramps' sum", "proven")]
    assert [(p.name, p.status) for p in parts] == want, parts
    if style == "bitmask-branchfree":
        harmless_pad = ("            INT32_MAX, /* padding: no int32 is above it */",
                        "            INT32_C(2147483000), /* padding: no int32 is above it */")
        img = P.load_after_init(_elf(model, tmp_path / "pad", target, harmless_pad, style=style), xlen, profile, xlen == 64)
        assert PP.sum_parts(img, xlen, model)[0].status == "proven"
        wrong_cut = ("            FIRMWARE_CUT_3_1, /* cut 1 */", "            FIRMWARE_CUT_3_0, /* cut 1 */")
    else:
        wrong_cut = ("if (x > FIRMWARE_CUT_3_1) {", "if (x > FIRMWARE_CUT_3_0) {")
    wrong_bit = ("            UINT64_C(0x0000000000000082), /* x > 0.00457764 */",
                 "            UINT64_C(0x0000000000000080), /* x > 0.00457764 */")
    edits = [(wrong_cut, "equals the bias plus"), (wrong_bit, "equals the bias plus")]
    if folded:  # a folded ramp's constant piece, its linear piece's slope, or its center cut off by one
        edits += [(("#define FIRMWARE_RAMP_1_AT_HI INT32_C(3191)", "#define FIRMWARE_RAMP_1_AT_HI INT32_C(3192)"), "terms on"),
                  (("#define FIRMWARE_RAMP_0_K_ABOVE INT32_C(-340)", "#define FIRMWARE_RAMP_0_K_ABOVE INT32_C(-341)"), "terms on"),
                  (("#define FIRMWARE_CUT_3_4 INT32_C(-1)", "#define FIRMWARE_CUT_3_4 INT32_C(-2)"), "terms on")]
    for k, (edit, says) in enumerate(edits):
        img = P.load_after_init(_elf(model, tmp_path / f"wrong{k}", target, edit, style=style), xlen, profile, xlen == 64)
        part = PP.sum_parts(img, xlen, model)[0]
        assert part.status == "failed" and says in part.detail, (edit, part.detail)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_a_ramp_on_an_input_no_split_uses_folds_into_its_own_search(tmp_path, target):
    """Ramp 0's input has no split: the default style still folds it, into a search of its own cuts
    that only adds the ramp's piece (no ramps' sum function); the sums are proven, and a wrong
    constant piece, slope or cut of that search fails the ramps' obligation; the handler is proven
    with the sums abstracted."""
    model = _ramp_model()
    xlen = 64 if target == "rv64imac" else 32
    profile = "dpa" if xlen == 64 else "generic5"
    elf = _elf(model, tmp_path / "right", target, style="bitmask")
    img = P.load_after_init(elf, xlen, profile, xlen == 64)
    assert not any(n.endswith("_ramp_sum") for n in img.symbols)
    assert [(p.name, p.status) for p in PP.sum_parts(img, xlen, model)] == [("trees' and ramps' sums", "proven")]
    part, _ = PH.prove_handler(img, model, xlen, timeout_s=120.0)
    assert part.status == "proven", part.detail
    edits = [("#define FIRMWARE_RAMP_0_AT_LO INT32_C(426)", "#define FIRMWARE_RAMP_0_AT_LO INT32_C(427)"),
             ("#define FIRMWARE_RAMP_0_K_BELOW INT32_C(-333)", "#define FIRMWARE_RAMP_0_K_BELOW INT32_C(-334)"),
             ("#define FIRMWARE_CUT_2_2 INT32_C(66847)", "#define FIRMWARE_CUT_2_2 INT32_C(67847)")]
    for k, edit in enumerate(edits):
        img = P.load_after_init(_elf(model, tmp_path / f"wrong{k}", target, edit, style="bitmask"), xlen, profile, xlen == 64)
        part = PP.sum_parts(img, xlen, model)[0]
        assert part.status == "failed" and "terms on" in part.detail, (edit, part.detail)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_sum_arguments_in_the_wrong_registers_are_a_handler_counterexample(tmp_path, target):
    """The folded sum takes the inputs its searches read in a0, a1, ... (input 0, which no split
    or ramp uses, is not passed): the handler proof reads each register as its input, so two
    inputs swapped at the call are a counterexample the emulator reproduces, where the right
    call is proven."""
    from rlcc.codegen.context import sum_register_inputs

    model = _bitmask_model()
    assert sum_register_inputs(model) == (1, 2, 3)
    xlen = 64 if target == "rv64imac" else 32
    profile = "dpa" if xlen == 64 else "generic5"
    swapped = ("firmware_tree_sum(x[FIRMWARE_IN_DELTA_T_1], /* a0 */", "firmware_tree_sum(x[FIRMWARE_IN_DELTA_T], /* a0 */")
    elf = _elf(model, tmp_path / "wrong", target, swapped, style="bitmask")
    img = P.load_after_init(elf, xlen, profile, xlen == 64)
    part, cex = PH.prove_handler(img, model, xlen, timeout_s=120.0)
    assert part.status == "counterexample" and cex is not None, part.detail
    out = HarnessRunner(elf, xlen, img.machine.profile, zbb=xlen == 64).run(records_from_vectors(cex))
    assert out["rate"][0] != cex.rate[0] or np.any(out["ctx_out"][0] != cex.ctx_out[0])


@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_user_algo_has_no_stack_frame(example_model, tmp_path, target):
    """The RTT decision is out of line (``firmware_on_rtt``) and tail-called: user_algo itself, the
    path of the TX event (far more frequent), never moves the stack pointer, so it saves no
    registers; the decision's frame is on_rtt's."""
    from rlcc.emulator.decode import decode

    xlen = 64 if target == "rv64imac" else 32
    img = P.load_after_init(_elf(example_model, tmp_path, target, style="bitmask"), xlen, "dpa" if xlen == 64 else "generic5",
                            xlen == 64)

    def writes_sp(symbol: str) -> bool:
        start, size = img.symbols[symbol]
        pc, found = start, False
        while pc < start + size:
            at = pc - img.machine.mem_base
            n = 4 if img.image[at] & 3 == 3 else 2
            found |= decode(int.from_bytes(img.image[at : at + n], "little"), xlen).rd == 2
            pc += n
        return found

    assert not writes_sp("user_algo") and writes_sp("firmware_on_rtt")


@pytest.mark.slow
def test_bitmask_handler_is_proven(tmp_path):
    """The whole rv64 handler of the bit-parallel firmware (the out-of-line trees' and ramps' sums,
    both leaves) is proven, every part included."""
    model = _bitmask_model()
    res = P.prove_firmware(_elf(model, tmp_path, "rv64imac", style="bitmask"), model, "rv64imac", timeout_s=240, zbb=True)
    assert res.status == "proven", [(p.name, p.status, p.detail) for p in res.parts]
    assert "trees' and ramps' sums" in {p.name for p in res.parts}


@pytest.mark.slow
@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_clobbered_registers_hold_in_the_emulator(example_model, tmp_path, target):
    """The registers the prover lets a call of each abstracted function keep (all but
    ``ElfImage.clobbered_registers``, read from its code) keep their values when the emulator runs
    it on random arguments and random register contents; and each function writes some (the read
    is not vacuous)."""
    xlen = 64 if target == "rv64imac" else 32
    img = P.load_after_init(_elf(example_model, tmp_path, target, style="bitmask"), xlen, "dpa" if xlen == 64 else "generic5",
                            xlen == 64)
    m, rng = img.machine, np.random.default_rng(3)
    for name in PA.Abstraction.for_image(img, example_model).symbols():
        clobbered = img.clobbered_registers(name, xlen)
        assert 10 in clobbered and 2 not in clobbered, (name, sorted(clobbered))
        kept = [r for r in range(5, 32) if r not in clobbered]
        for _ in range(20):
            before = {r: int(rng.integers(0, 2**xlen - 1, dtype=np.uint64)) for r in kept}
            for r, v in before.items():
                m.set_reg(r, v)
            args = [int(v) for v in rng.integers(0, 2**31, 2)]
            if "sum" in name:  # these read an array of input words at a0
                m.write_mem(img.scratch, rng.integers(-2**20, 2**20, 8, dtype=np.int32).tobytes())
                args = [img.scratch]
            m.call(name, *args)
            assert all(m.reg(r) == before[r] for r in kept if not 10 <= r < 10 + len(args)), (name, sorted(clobbered))
            assert all(m.reg(10 + k) == a for k, a in enumerate(args) if 10 + k in kept), name


@pytest.mark.slow
def test_a_part_refutes_a_register_its_function_writes_claimed_kept(example_model, tmp_path, monkeypatch):
    """The prover's register read is a claim its parts check: told that the signed log keeps every
    register but ra, its part fails, naming a register it writes."""
    img = P.load_after_init(_elf(example_model, tmp_path, "rv32imc", style="bitmask"), 32, "generic5", False)
    assert SLOG_FUNCTION in img.symbols
    assert PP.slog_part(img, 32).status == "proven"
    written = img.clobbered_registers(SLOG_FUNCTION, 32)
    monkeypatch.setattr(type(img), "clobbered_registers", lambda self, symbol, xlen: frozenset({1}))
    part = PP.slog_part(img, 32)
    named = re.search(r"register x(\d+)", part.detail)
    assert part.status == "failed" and named and int(named.group(1)) in written - {1}, part.detail


def test_sum_part_refutes_a_sum_that_reads_past_its_array(tmp_path):
    """A trees' sum whose result depends on memory next to its input array (not an input word)
    fails: the abstraction in the handler assumes a function of the array alone."""
    model = _ramp_model()
    edit = ("    sum += firmware_leaves_0[idx];", "    sum += firmware_leaves_0[idx] + (int32_t)x[FIRMWARE_N_INPUTS];")
    img = P.load_after_init(_elf(model, tmp_path, "rv64imac", edit), 64, "dpa", True)
    part = PP.sum_parts(img, 64, model)[0]
    assert part.status == "failed", part.detail


def test_memory_reading_summary_sees_the_callers_array(tmp_path):
    """A summary reads its pointer argument's array through ``load`` over the caller's state: with
    the two sums summarized by their numpy golden values of the words it reads, the executor on
    concrete inputs reproduces the emulator (so the words are the handler's inputs, in order)."""
    model = _ramp_model()
    elf = _elf(model, tmp_path, "rv64imac")
    img = P.load_after_init(elf, 64, "dpa", True)
    cut = PA.Abstraction.for_image(img, model)
    assert cut.sums is not None
    true = dict(cut.sums.true_values())
    seen: list[list[int]] = []

    def summary_of(fn):
        def summary(regs, path, load):
            words = [load(regs[10] + 4 * i, 4) for i in range(cut.sums.n_inputs)]
            seen.append(words)
            v = true[fn](words)
            return {10: (v - (v >> 31 << 32)) & (2**64 - 1)}, []
        return summary

    summaries = {img.symbols[cut.sums.tree_symbol][0]: summary_of(cut.sums.fns.trees),
                 img.symbols[cut.sums.ramp_symbol][0]: summary_of(cut.sums.fns.ramps)}
    v = random_vectors(model, 12, seed=9)
    emu = HarnessRunner(elf, 64, img.machine.profile, zbb=True).run(records_from_vectors(v))
    ctx_addr, ev_addr, res_addr = img.scratch, img.scratch + 64, img.scratch + 128
    regions = img.regions + [Region(ctx_addr, ctx_addr + 48, "ctx", True), Region(ev_addr, ev_addr + 32, "ev"),
                             Region(res_addr, res_addr + 8, "res", True)]
    for i in range(len(v)):
        ex = Executor(img.image, img.machine.mem_base, 64, regions, summaries, clobbers=cut.clobbers(img, 64))
        mem = {base + 4 * k + b: (int(w) >> (8 * b)) & 0xFF
               for base, words in ((ctx_addr, v.ctx_in[i]), (ev_addr, v.event[i])) for k, w in enumerate(words) for b in range(4)}
        regs = [0] * 32
        regs[1], regs[2], regs[3], regs[4] = RET_SENTINEL, img.machine.stack_top, img.gp, img.tp
        regs[10], regs[11], regs[12], regs[13] = ctx_addr, ev_addr, int(v.attr[i]), res_addr
        fin = ex.run(State(img.symbols["user_algo"][0], regs, mem, ()), RET_SENTINEL).state
        assert [ex.load(fin, ctx_addr + 4 * k, 4) for k in range(fmt.CTX_WORDS)] == emu["ctx_out"][i].tolist(), f"vector {i}"
    assert seen and all(isinstance(w, int) for words in seen for w in words)


def test_product_facts_hold_for_the_exact_product():
    """Every fact the handler proof states of an opaque product application (commutativity, the
    ranges of ``_OPERAND_BOUNDS``) and of a square root (at most 2^20) is true of the exact values,
    for all operands (the solver checks each with the application replaced by the exact value)."""
    a, b, r = z3.BitVecs("a b r", 32)
    cut = PA.Abstraction(z3.Function("sq", z3.BitVecSort(32), z3.BitVecSort(32)), None)
    app, root = cut.mul(a, b), cut.sqrt(r)
    facts = cut.product_ranges([z3.Extract(31, 0, app) + root])
    assert len(facts) == 1 + len(PA._OPERAND_BOUNDS) + 1
    exact = z3.ZeroExt(32, a) * z3.ZeroExt(32, b)
    clamped = z3.If(z3.ULT(r, fmt.RATE_MAX), r, z3.BitVecVal(fmt.RATE_MAX, 32))
    n, s_ = z3.ZeroExt(32, clamped) << fmt.RATE_FRAC_BITS, z3.BitVec("s", 32)
    true_root = z3.And(z3.ULE(z3.ZeroExt(32, s_) * z3.ZeroExt(32, s_), n), z3.ULT(n, (z3.ZeroExt(32, s_) + 1) * (z3.ZeroExt(32, s_) + 1)))
    for fact in facts:
        solver = z3.Solver()
        solver.add(true_root, z3.Not(z3.substitute(fact, (app, exact), (cut.mul(b, a), exact), (root, s_))))
        assert solver.check() == z3.unsat, fact


def test_symbolic_sum_is_taken_in_32_bits_only_when_it_cannot_wrap():
    """Z3Ops.add_terms: within the bound the 32-bit sum equals the exact sum (checked by the solver
    for all values); a bound that could wrap int32 gets the exact 64-bit sum instead."""
    from rlcc.verify.symbolic_golden import WIDTH, Z3Ops

    a, b, c = (z3.BitVec(n, 16) for n in "abc")
    terms = [z3.SignExt(WIDTH - 16, v) for v in (a, b, c)] + [z3.BitVecVal(-(2**30), WIDTH)]
    exact = terms[0] + terms[1] + terms[2] + terms[3]
    for bound in (3 * 2**15 + 2**30, 2**31):
        s = z3.Solver()
        s.add(Z3Ops.add_terms(terms, bound) != exact)
        assert s.check() == z3.unsat, bound
    big = [z3.BitVecVal(2**30, WIDTH)] * 3  # wraps int32: only the 64-bit sum is right
    assert z3.simplify(Z3Ops.add_terms(big, 3 * 2**30)).as_signed_long() == 3 * 2**30


def _rv32_code(words: list[int]) -> bytes:
    import struct

    return b"".join(struct.pack("<I", w) for w in words) + bytes(64)


def _r_type(f7: int, rs2: int, rs1: int, f3: int, rd: int) -> int:
    return (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | 0x33


def _i_type(imm: int, rs1: int, f3: int, rd: int, op: int = 0x13) -> int:
    return ((imm & 0xFFF) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op


_RET = _i_type(0, 1, 0, 0, 0x67)  # jalr x0, 0(ra)


def _run_rv32(words: list[int], args: list[z3.BitVecRef]) -> z3.BitVecRef:
    regs = [0] * 32
    regs[1] = RET_SENTINEL
    regs[10 : 10 + len(args)] = args
    ex = Executor(_rv32_code(words), 0x1000, 32, [])
    return ex.run(State(0x1000, regs, {}, ()), RET_SENTINEL).state.regs[10]


def test_rv32_product_halves_recombine_into_the_golden_models_term():
    """RV32 ``mul`` + ``mulhu`` of ``(a - b) * c`` shifted right by 16 (the firmware's RTT inflation)
    is bits 47..16 of the one 64-bit product the golden model writes, not the simplifier's
    distributed low half ``c * a - c * b`` (a different multiplier circuit the solver could not
    relate to the golden product: the rv32 handler proof timed out on delta)."""
    a, b = z3.BitVecs("a b", 32)
    words = [_r_type(0x20, 11, 10, 0, 10),  # sub a0, a0, a1
             (0x83 << 12) | (12 << 7) | 0x37, _i_type(0x127, 12, 0, 12),  # li a2, 0x83127
             _r_type(1, 12, 10, 0, 13), _r_type(1, 12, 10, 3, 14),  # mul a3 / mulhu a4, a0, a2
             _i_type(16, 13, 5, 13), _i_type(16, 14, 1, 14), _r_type(0, 14, 13, 6, 10), _RET]  # (a3 >> 16) | (a4 << 16)
    got = _run_rv32(words, [a, b])
    want = z3.simplify(z3.Extract(47, 16, z3.BitVecVal(0x83127, 64) * z3.ZeroExt(32, a - b)))
    assert got.eq(want), got


def _run_rv64_opaque(words: list[int], args: list[z3.BitVecRef]) -> tuple[z3.BitVecRef, list]:
    """Run RV64 ``words`` with the handler proof's opaque products: a0 and the obligations."""
    cut = PA.Abstraction(z3.Function("s", z3.BitVecSort(32), z3.BitVecSort(32)), None)
    regs = [0] * 32
    regs[1] = RET_SENTINEL
    regs[10 : 10 + len(args)] = args
    ex = Executor(_rv32_code(words), 0x1000, 64, [], opaque_mul=cut.opaque_mul)
    return ex.run(State(0x1000, regs, {}, ()), RET_SENTINEL).state.regs[10], ex.obligations


def test_rv64_inline_products_are_the_golden_models_opaque_product():
    """With the wide products inline on RV64, a ``mul`` of two zero-extended 32-bit values and a
    ``mulhu`` of the two shifted up by 32 (the compiler's way to multiply them unextended) are the one
    opaque product the golden model takes for ``mul_shr``, each under an obligation that its operands
    have that form (unsatisfiable here, satisfiable for a 64-bit operand: the proof would fail);
    a product by a constant stays a multiplication (the RTT inflation's)."""
    a, b = z3.BitVecs("a b", 32)
    wide = [z3.ZeroExt(32, a), z3.ZeroExt(32, b)]
    zext = [_i_type(32, 10, 1, 10), _i_type(32, 11, 1, 11), _i_type(32, 10, 5, 10), _i_type(32, 11, 5, 11)]
    mul, mulhu = _r_type(1, 11, 10, 0, 10), _r_type(1, 11, 10, 3, 10)
    cut = PA.Abstraction(z3.Function("s", z3.BitVecSort(32), z3.BitVecSort(32)), None)
    side: list = []
    want = Z3Ops(cut.sqrt, side, opaque_mul=cut.opaque_mul).mul_shr(wide[0], wide[1], 0)
    junk = [z3.Concat(z3.BitVec("ha", 32), a), z3.Concat(z3.BitVec("hb", 32), b)]  # unknown upper halves
    for words, args in (([mul, _RET], wide), (zext[:2] + [mulhu, _RET], junk), (zext + [mul, _RET], junk)):
        got, obligations = _run_rv64_opaque(words, args)
        assert z3.simplify(got).eq(z3.simplify(want)), got
        assert obligations and all(z3.Solver().check(f) == z3.unsat for _, f in obligations)
    _, obligations = _run_rv64_opaque([mul, _RET], [z3.BitVec("w", 64), wide[1]])  # a full 64-bit operand
    assert any(z3.Solver().check(f) == z3.sat for _, f in obligations)
    got, obligations = _run_rv64_opaque([_i_type(7, 0, 0, 11), mul, _RET], wide[:1])  # li a1, 7; mul
    assert not obligations and z3.simplify(got).eq(z3.simplify(wide[0] * 7))



def test_rv32_inline_products_are_the_golden_models_opaque_product():
    """On RV32 a ``mul`` and a ``mulhu`` of two unknown words are the low and high word of the one
    opaque product the golden model takes for ``mul_shr`` (no obligation: the operands are 32-bit
    registers), so ``(lo >> 16) | (hi << 16)`` is the golden ``>> 16`` product's low word; a
    product by a constant stays a multiplication."""
    a, b = z3.BitVecs("a b", 32)
    cut = PA.Abstraction(z3.Function("s", z3.BitVecSort(32), z3.BitVecSort(32)), None)
    words = [_r_type(1, 11, 10, 0, 13), _r_type(1, 10, 11, 3, 14),  # mul a3, a0, a1 / mulhu a4, a1, a0
             _i_type(16, 13, 5, 13), _i_type(16, 14, 1, 14), _r_type(0, 14, 13, 6, 10), _RET]  # (a3 >> 16) | (a4 << 16)
    regs = [0] * 32
    regs[1], regs[10], regs[11] = RET_SENTINEL, a, b
    ex = Executor(_rv32_code(words), 0x1000, 32, [], opaque_mul=cut.opaque_mul)
    got = ex.run(State(0x1000, regs, {}, ()), RET_SENTINEL).state.regs[10]
    side: list = []
    want = Z3Ops(cut.sqrt, side, opaque_mul=cut.opaque_mul).mul_shr(z3.ZeroExt(32, a), z3.ZeroExt(32, b), 16)
    facts = cut.product_ranges([got])  # the operands' order differs between the two words: commutativity
    solver = z3.Solver()
    solver.add(*facts, got != z3.Extract(31, 0, want))
    assert not ex.obligations and solver.check() == z3.unsat
    ex = Executor(_rv32_code([_i_type(7, 0, 0, 11), _r_type(1, 11, 10, 0, 10), _RET]), 0x1000, 32, [], opaque_mul=cut.opaque_mul)
    regs = [0] * 32
    regs[1], regs[10] = RET_SENTINEL, a
    got = ex.run(State(0x1000, regs, {}, ()), RET_SENTINEL).state.regs[10]  # li a1, 7; mul a0, a0, a1
    assert z3.simplify(got).eq(z3.simplify(a * 7)), got


def test_rv32_products_of_product_halves_unfold_completely():
    """A product of an earlier product's low half: the result speaks of the arguments only (every
    opaque stand-in replaced), and equals the exact value for concrete arguments."""
    a, b, c = z3.BitVecs("a b c", 32)
    words = [_r_type(1, 11, 10, 0, 10), _r_type(1, 12, 10, 3, 10), _RET]  # a0 = mulhu(a * b, c)
    got = _run_rv32(words, [a, b, c])
    assert {str(v) for v in free_vars(got)} == {"a", "b", "c"}
    x, y, z = 0x9ABCDEF1, 0x12345677, 0xFEDCBA98
    value = z3.simplify(z3.substitute(got, (a, z3.BitVecVal(x, 32)), (b, z3.BitVecVal(y, 32)), (c, z3.BitVecVal(z, 32))))
    assert value.as_long() == ((x * y) % 2**32 * z) >> 32


# delta one too small when the penalty is 777777 or 777778: two penalty values of 2^31, which the
# random and boundary vectors miss (the RV32 form of rlcc_delta)
_DELTA_OFF_BY_ONE = ("const uint32_t diff = target_q16 - penalty; /* mod 2^32 */",
                     "const uint32_t diff = target_q16 - penalty - (uint32_t)(penalty - 777777u < 2u);")


@pytest.mark.slow
def test_delta_off_by_one_in_a_narrow_range_is_refuted_on_rv32(example_model, tmp_path):
    """rv32 firmware whose delta is one LSB low for two penalty values: the handler proof finds an
    input in that range, the emulator reproduces the difference, and rlcc-verify --prove exits 4
    although its vectors pass."""
    import json
    import subprocess

    elf = _elf(example_model, tmp_path, "rv32imc", _DELTA_OFF_BY_ONE)
    img = P.load_after_init(elf, 32, "generic5", False)
    part, cex = PH.prove_handler(img, example_model, 32, timeout_s=120.0)
    assert part.status == "counterexample", part.detail
    out = HarnessRunner(elf, 32, img.machine.profile).run(records_from_vectors(cex))
    assert np.any(out["ctx_out"][0] != cex.ctx_out[0])
    c = tmp_path / "src" / "firmware.c"
    report = tmp_path / "verify.json"
    r = subprocess.run(["rlcc-verify", str(c), "--target", "rv32imc", "--prove", "-q", "--random", "0", "--json", str(report)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 4, r.stderr
    data = json.loads(report.read_text())
    assert data["mismatches"] == 0 and data["proof"]["status"] == "counterexample", data["proof"]["parts"][0]
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("rlcc-verify: error: "), r.stderr
