"""The symbolic prover: its decoder and executor against the emulator, its z3 golden model
against the numpy one, and its verdicts on right and wrong firmware."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import z3

from rlcc import formats as fmt
from rlcc.codegen import manifest
from rlcc.codegen.context import PRODUCT_SHIFTS, RATE_PRODUCT_FUNCTION
from rlcc.codegen.generate import generate
from rlcc.fxp import golden
from rlcc.fxp.vectors import random_vectors
from rlcc.verify import prove as P
from rlcc.verify.build import build_harness_elf
from rlcc.verify.runner import HarnessRunner, records_from_vectors
from rlcc.verify.symbolic_golden import symbolic_event
from rlcc.verify.symexec import Executor, Region, State

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "firmware" / "firmware.rlcc.json"


@pytest.fixture(scope="module")
def example_model():
    _, model, _ = manifest.load(str(EXAMPLE))
    return model


def _elf(model, tmp: Path, target: str, edit: tuple[str, str] | None = None) -> Path:
    """The model's firmware built for ``target``; ``edit`` replaces a line of the C (the runtime
    header inlined, so runtime functions can be edited too)."""
    paths = generate(model, tmp / "src", inline_runtime=edit is not None)
    if edit:
        text = paths["c"].read_text()
        assert edit[0] in text
        paths["c"].write_text(text.replace(edit[0], edit[1], 1))
    return build_harness_elf(paths["c"], target, tmp, zbb=target == "rv64imac")


def test_symbolic_golden_equals_numpy_golden(example_model):
    """Z3Ops and NumpyOps evaluate the same event_core: equal on concrete random inputs."""
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


@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_executor_matches_the_emulator_on_concrete_inputs(example_model, tmp_path, target):
    """The decoder and instruction semantics of the symbolic executor, run on concrete values,
    reproduce the emulator's outputs (the square root executed, not summarized)."""
    elf = _elf(example_model, tmp_path, target)
    xlen = 64 if target == "rv64imac" else 32
    img = P._load_after_init(elf, xlen, "dpa" if xlen == 64 else "generic5", xlen == 64)
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
        regs[1], regs[2], regs[3], regs[4] = P.RET_SENTINEL, img.machine.stack_top, img.gp, img.tp
        regs[10], regs[11], regs[12], regs[13] = ctx_addr, ev_addr, int(v.attr[i]), res_addr
        fin = ex.run(State(img.symbols["user_algo"][0], regs, mem, ()), P.RET_SENTINEL).state
        ctx_out = [ex.load(fin, ctx_addr + 4 * k, 4) for k in range(fmt.CTX_WORDS)]
        assert ctx_out == emu["ctx_out"][i].tolist(), f"vector {i}"
        assert ex.load(fin, res_addr, 4) == int(emu["rate"][i])
        assert ex.load(fin, res_addr + 4, 4) == int(emu["rtt_req"][i])


def test_sqrt_rate_exhaustive_and_contract_parts(example_model, tmp_path):
    elf = _elf(example_model, tmp_path, "rv64imac")
    img = P._load_after_init(elf, 64, "dpa", True)
    part = P._sqrt_values(img, 64, sampled=2000, seed=0)
    assert part.status == "exhaustive", part.detail
    assert P._reachable_rates(example_model).status == "proven"


def test_wrong_square_root_is_found(example_model, tmp_path):
    """A square root off by one for some rates fails the exhaustive part with the rate named."""
    elf = _elf(example_model, tmp_path, "rv64imac", ("return x + (uint32_t)(n - sq >= 2u * (uint64_t)x + 1u);",
                                                      "return x + (uint32_t)(n - sq > 2u * (uint64_t)x + 1u);"))
    img = P._load_after_init(elf, 64, "dpa", True)
    part = P._sqrt_values(img, 64, sampled=0, seed=0)
    assert part.status == "failed" and "sqrt_rate(" in part.detail


def test_history_shift_bug_yields_a_counterexample_that_reproduces(example_model, tmp_path):
    """Storing the wrong feature into the history: the solver's input, replayed in the emulator,
    differs from the golden model."""
    wrong = ("c[FIRMWARE_HIST_WORD(1u, FIRMWARE_F_PREV_ACTION)] = (uint32_t)x[FIRMWARE_IN_PREV_ACTION_T];",
             "c[FIRMWARE_HIST_WORD(1u, FIRMWARE_F_PREV_ACTION)] = (uint32_t)x[FIRMWARE_IN_PREV_ACTION_T_1];")
    elf = _elf(example_model, tmp_path, "rv64imac", wrong)
    img = P._load_after_init(elf, 64, "dpa", True)
    part, cex = P._prove_handler(img, example_model, 64, timeout_s=120.0)
    assert part.status == "counterexample", part.detail
    runner = HarnessRunner(elf, 64, img.machine.profile, zbb=True)
    out = runner.run(records_from_vectors(cex))
    assert np.any(out["ctx_out"][0] != cex.ctx_out[0])


@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_product_parts_prove_right_and_refute_wrong_products(example_model, tmp_path, target):
    """The out-of-line products the handler proof abstracts are proven on their own; a rate
    product that rounds differently (one shift short) fails its part, naming the result."""
    xlen = 64 if target == "rv64imac" else 32
    profile = "dpa" if xlen == 64 else "generic5"
    right = P._load_after_init(_elf(example_model, tmp_path / "right", target), xlen, profile, xlen == 64)
    for name, shift in P.PRODUCT_SHIFTS.items():
        part = P._product_part(right, xlen, name, shift)
        assert part.status == "proven", (name, part.detail)
    wrong = ("return ((uint64_t)rate * factor) >> RLCC_FACTOR_FRAC_BITS;",
             "return ((uint64_t)rate * factor) >> (RLCC_FACTOR_FRAC_BITS - 1u);")
    img = P._load_after_init(_elf(example_model, tmp_path / "wrong", target, wrong), xlen, profile, xlen == 64)
    part = P._product_part(img, xlen, RATE_PRODUCT_FUNCTION, PRODUCT_SHIFTS[RATE_PRODUCT_FUNCTION])
    assert part.status == "failed" and "result" in part.detail


def test_sqrt_contract_is_proven_on_both_targets(example_model, tmp_path):
    for target, xlen, profile in (("rv64imac", 64, "dpa"), ("rv32imc", 32, "generic5")):
        img = P._load_after_init(_elf(example_model, tmp_path / target, target), xlen, profile, xlen == 64)
        part = P._sqrt_contract(img, xlen)
        assert part.status == "proven", (target, part.detail)


@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_slog_part_proves_the_log_and_refutes_a_wrong_mantissa(example_model, tmp_path, target):
    """The derived input's out-of-line signed log, which the handler proof abstracts, is proven
    equal to rlcc.derived.slog_int for every int32; a mantissa shifted one bit short fails."""
    assert example_model.spec.derived, "the example distils with derived inputs"
    xlen = 64 if target == "rv64imac" else 32
    profile = "dpa" if xlen == 64 else "generic5"
    right = P._load_after_init(_elf(example_model, tmp_path / "right", target), xlen, profile, xlen == 64)
    part = P._slog_part(right, xlen)
    assert part.status == "proven", part.detail
    wrong = ("return (int32_t)(((msb - 16u) << 16) + ((u - (1u << msb)) >> (msb - 16u)));",
             "return (int32_t)(((msb - 16u) << 16) + ((u - (1u << msb)) >> (msb - 15u)));")
    img = P._load_after_init(_elf(example_model, tmp_path / "wrong", target, wrong), xlen, profile, xlen == 64)
    part = P._slog_part(img, xlen)
    assert part.status == "failed" and "slog_int" in part.detail, part.detail


def test_symbolic_sum_is_taken_in_32_bits_only_when_it_cannot_wrap():
    """Z3Ops.add_terms: the 32-bit sum equals the exact sum for terms within the bound (checked
    by the solver for all values), and a bound that could wrap int32 is refused."""
    from rlcc.verify.symbolic_golden import WIDTH, Z3Ops

    a, b, c = (z3.BitVec(n, 16) for n in "abc")
    terms = [z3.SignExt(WIDTH - 16, v) for v in (a, b, c)] + [z3.BitVecVal(-(2**30), WIDTH)]
    s = z3.Solver()
    s.add(Z3Ops.add_terms(terms, 3 * 2**15 + 2**30) != terms[0] + terms[1] + terms[2] + terms[3])
    assert s.check() == z3.unsat
    with pytest.raises(ValueError, match="wrap"):
        Z3Ops.add_terms(terms, 2**31)
