"""Part 1 of the NIC proof: the compiled ``user_algo`` equals the golden event core for all
inputs, with the out-of-line functions abstracted (``rlcc.verify.prove_abstractions``).

The handler runs symbolically from the post-start-up image with every context, event and
attribute word free; its side conditions (alignment, table bounds, frame, ABI) are discharged
first, then each output word is proven equal to the golden model's, the outputs spread over
processes (``rlcc.parallel``), each proven output a fact for the queries started after it. A
satisfying assignment is replayed in the emulator: a real difference is the counterexample, a
spurious one (the abstraction assumed an impossible value) is refined away.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import z3

from rlcc import formats as fmt
from rlcc.fxp import golden
from rlcc.fxp.model import FxModel
from rlcc.fxp.vectors import Vectors, expected
from rlcc.parallel import Runner
from rlcc.verify.prove_abstractions import Abstraction
from rlcc.verify.prove_image import RET_SENTINEL, ElfImage, frame_checks, word
from rlcc.verify.prove_parts import ProofPart
from rlcc.verify.prove_solver import first_open, solve
from rlcc.verify.symbolic_golden import symbolic_event
from rlcc.verify.symexec import Region, State, SymexecUnsupported

HANDLER_SYMBOL = "user_algo"
MAX_REFINEMENTS = 16
# Spurious models refined by true values at their points this many times; then the square root
# and the products are stated exactly at every application (a difference confined to a narrow
# range of a product, e.g. delta's penalty, is otherwise chased one point at a time).
POINT_REFINEMENTS = 2
PINNED_SEARCH_S = 15.0  # seconds of one pinned-rate counterexample search
_LOST_GRACE_S = 30.0  # an output query's process still running this long after the budget is killed (not proven)


def prove_handler(img: ElfImage, model: FxModel, xlen: int, timeout_s: float, jobs: int = 2) -> tuple[ProofPart, Vectors | None]:
    t0 = time.monotonic()
    ctx_addr, ev_addr, res_addr = img.scratch, img.scratch + 64, img.scratch + 128
    regions = img.regions + [
        Region(ctx_addr, ctx_addr + fmt.CTX_BYTES, "context", writable=True),
        Region(ev_addr, ev_addr + fmt.EVENT_BYTES, "event"),
        Region(res_addr, res_addr + 4 * fmt.RESULT_WORDS, "results", writable=True),
    ]
    cut = Abstraction.for_image(img, model)
    ex = img.executor(xlen, regions, summaries=cut.summaries(img, xlen), clobbers=cut.clobbers(img, xlen),
                      opaque_mul=cut.opaque_mul)
    ctx = [z3.BitVec(f"ctx{i}", 32) for i in range(fmt.CTX_WORDS)]
    ev = [z3.BitVec(f"ev{i}", 32) for i in range(fmt.EVENT_WORDS)]
    regs = img.call_registers(xlen, "in_")
    attr = regs[12]
    regs[10], regs[11], regs[13] = ctx_addr, ev_addr, res_addr
    mem: dict[int, Any] = {}
    for base, words in ((ctx_addr, ctx), (ev_addr, ev)):
        for i, w in enumerate(words):
            for b in range(4):
                mem[base + 4 * i + b] = z3.Extract(8 * b + 7, 8 * b, w)
    for b in range(4 * fmt.RESULT_WORDS):
        mem[res_addr + b] = z3.BitVec(f"res_garbage{b}", 8)  # the handler must write both results
    entry = State(img.address(HANDLER_SYMBOL), regs, mem, ())
    try:
        run = ex.run(State(entry.pc, list(regs), dict(mem), ()), RET_SENTINEL)
    except SymexecUnsupported as exc:
        return ProofPart("handler", "unsupported", time.monotonic() - t0, str(exc)), None
    fin = run.state
    fw_ctx = [word(fin, ex, ctx_addr + 4 * i) for i in range(fmt.CTX_WORDS)]
    fw_rate, fw_req = word(fin, ex, res_addr), word(fin, ex, res_addr + 4)
    golden_side: list[tuple[str, Any]] = []
    gold = symbolic_event(model, ctx, ev, cut.sqrt, golden_side, cut.slog, None, cut.sums.fns if cut.sums else None,
                          cut.opaque_mul)
    side = run.obligations + golden_side + frame_checks(fin, entry, xlen)
    deadline = t0 + timeout_s
    still_open = first_open(side, deadline)
    if still_open is not None:
        return ProofPart("handler", still_open[1], time.monotonic() - t0, f"side condition not proven: {still_open[0]}"), None
    names = [f"ctx[{i}]" for i in range(fmt.CTX_WORDS)] + ["rate", "rtt_req"]
    fw_out = fw_ctx + [fw_rate, fw_req]
    gold_out = [z3.simplify(t) for t in gold.ctx + [gold.rate, gold.rtt_req]]
    # Passes over the open outputs, `jobs` at a time in forked processes; in each pass an output
    # gets its share of the time left, so the easy ones finish before the hard ones get the rest.
    # Each proven equality is a valid fact handed to the queries started after it (the result rate
    # is the context's rate word once that is proven).
    proven: list[str] = []
    facts: list[Any] = []
    todo = list(range(len(names)))
    finished = [0]  # outputs of this pass done: a query's process sees the count at its start

    def attempt(k: int) -> tuple[str, Vectors | None]:
        left = deadline - time.monotonic()
        unfinished = len(todo) - finished[0]
        share = left if unfinished <= jobs else left * jobs / unfinished
        return _prove_output(img, model, xlen, fw_out[k], gold_out[k], ctx, ev, attr, cut, time.monotonic() + share, facts)

    def done(i: int, result: tuple[str, Vectors | None]) -> None:
        finished[0] += 1
        if result[0] == "proven":
            proven.append(names[todo[i]])
            facts.append(fw_out[todo[i]] == gold_out[todo[i]])

    while todo and deadline - time.monotonic() > 1:
        finished[0] = 0
        results = Runner(jobs).map(attempt, todo, on_done=done, pickled=False, timeout=deadline - time.monotonic() + _LOST_GRACE_S,
                                   lost=lambda _k, _err: ("timeout", None))
        for k, (verdict, cex) in zip(todo, results):
            if verdict == "counterexample":
                return ProofPart("handler", "counterexample", time.monotonic() - t0,
                                 f"{names[k]} differs on an input the emulator reproduces"), cex
        todo = [k for k in todo if names[k] not in proven]
    open_ = [n for n in names if n not in proven]
    seconds = time.monotonic() - t0
    scope = (f"{run.steps} straight-line runs on {run.paths} paths, merged; {len(side)} side conditions "
             "(alignment, table bounds, frame) proven")
    if not open_:
        return ProofPart("handler", "proven", seconds, f"rate, rtt_req and the 48-byte context equal for all inputs; {scope}"), None
    return ProofPart("handler", "timeout", seconds,
                     f"not proven (timeout after {timeout_s:.0f} s) for {', '.join(open_)}; proven for {', '.join(proven) or 'none'}; {scope}"), None


def _prove_output(img: ElfImage, model: FxModel, xlen: int, fw: Any, gold: Any, ctx: list[Any], ev: list[Any], attr: Any,
                  cut: Abstraction, deadline: float, facts: list[Any]) -> tuple[str, Vectors | None]:
    """"proven", "counterexample" (reproduced in the emulator) or "timeout" for one output word
    (``facts``: proven equalities of other outputs)."""
    lemmas: list[Any] = cut.product_ranges([fw, gold])
    for round_ in range(MAX_REFINEMENTS):
        verdict, m = solve([fw != gold, *facts, *lemmas], deadline)
        if verdict == "unsat":
            return "proven", None
        if verdict == "unknown":
            return "timeout", None
        vec = _concrete_vector(m, ctx, ev, attr, xlen, model)
        if _differs_in_emulator(img, vec, xlen):
            return "counterexample", vec
        refined = cut.lemmas(m, [fw, gold])
        lemmas.extend(refined)
        if not refined and round_ + 1 != POINT_REFINEMENTS:  # every abstracted value true: a gap elsewhere
            return "timeout", None
        if round_ + 1 == POINT_REFINEMENTS:
            vec = _pinned_rate_search(img, model, xlen, fw, gold, ctx, ev, attr, cut, m, [*facts, *lemmas], deadline)
            if vec is not None:
                return "counterexample", vec
            lemmas.extend(cut.exact_lemmas([fw, gold]))
    return "timeout", None


def _pinned_rate_search(img: ElfImage, model: FxModel, xlen: int, fw: Any, gold: Any, ctx: list[Any], ev: list[Any],
                        attr: Any, cut: Abstraction, m: Any, known: list[Any], deadline: float) -> Vectors | None:
    """A counterexample with the context's rate fixed (the spurious model's, if a stored rate, else
    the initial one): the square root is then one known value and the products stated exactly, so
    a difference confined to a narrow range of a product (delta's penalty) is found at once, where
    refining the abstraction point by point would chase it one argument at a time."""
    rate = m.eval(ctx[fmt.CTX_RATE], model_completion=True).as_long()
    rate = rate if 1 <= rate <= fmt.RATE_MAX else model.constants.rate_initial
    root = int(golden.NUMPY.sqrt_rate(np.array([rate]))[0])
    pinned = [ctx[fmt.CTX_RATE] == rate, cut.sqrt(z3.BitVecVal(rate, 32)) == root, *cut.exact_lemmas([fw, gold], roots=False)]
    verdict, m2 = solve([fw != gold, *known, *pinned], min(deadline, time.monotonic() + PINNED_SEARCH_S))
    if verdict != "sat":
        return None
    vec = _concrete_vector(m2, ctx, ev, attr, xlen, model)
    return vec if _differs_in_emulator(img, vec, xlen) else None


def _concrete_vector(m: Any, ctx: list[Any], ev: list[Any], attr: Any, xlen: int, model: FxModel) -> Vectors:
    val = lambda e: m.eval(e, model_completion=True).as_long()  # noqa: E731
    c = np.array([[val(w) for w in ctx]], dtype=np.uint32)
    e = np.array([[val(w) for w in ev]], dtype=np.uint32)
    a = np.array([val(attr) & 0xFFFFFFFF], dtype=np.uint32)
    return expected(model, c, e, a)


def _differs_in_emulator(img: ElfImage, vec: Vectors, xlen: int) -> bool:
    from rlcc.verify.runner import HarnessRunner, records_from_vectors

    runner = HarnessRunner(img.elf, xlen, img.machine.profile, zbb=img.machine.zbb)
    out = runner.run(records_from_vectors(vec))
    return bool(out["rate"][0] != vec.rate[0] or out["rtt_req"][0] != vec.rtt_req[0] or np.any(out["ctx_out"][0] != vec.ctx_out[0]))
