"""``rlcc-verify --prove``: equivalence of the compiled event handler with the golden model for all inputs.

The proof is decomposed where the solver cannot go (wide products inside the square root):

1. **handler** — the ``user_algo`` machine code of the harness ELF, symbolically executed
   (``rlcc.verify.symexec``) from the RAM image after ``user_init``, with every context word,
   every event word and the attribute word symbolic, against ``rlcc.fxp.golden.event_core`` on
   z3 bit-vectors. The firmware's out-of-line ``sqrt_rate`` and the golden model's square root
   are the same uninterpreted function, so this part holds whatever that function is. Also
   proven: no fault (every table load aligned and inside its table), no store outside the
   context, results and stack, callee-saved registers and sp restored.
2. **sqrt_rate contract** — the function alone, symbolically: returns, restores sp and the
   callee-saved registers, stores only into its own stack frame, and its result depends on
   its argument only.
3. **sqrt_rate values** — run in the emulator for every rate 0 .. 2^20 (every rate the firmware
   can store: proven in part 4) and compared with exact integer square roots; rates above 2^20,
   which only a corrupted context holds, are sampled.
4. **reachable rates** — from a zeroed or valid context (rate <= 2^20) every event leaves a rate
   in [rate_min, 2^20], so parts 1 + 3 cover every context the firmware itself produces.
5. **products, slog and ramps** — the out-of-line wide products, with derived inputs the signed
   log ``rlcc_slog``, and each ramp's ``<name>_ramp_<i>``, each symbolically alone: exact for all
   32-bit arguments (the log as ``rlcc.derived.slog_int``, a ramp as
   ``rlcc.fxp.golden.ramp_value``, each within the bits its abstraction in part 1 gives it).
6. **trees' and ramps' sums** — with ramps, the firmware sums the bias and leaves
   (``<name>_tree_sum``) and the ramps' terms (``<name>_ramp_sum``) out of line, each from a
   pointer to the input array. Part 1 abstracts each as one uninterpreted function of the array's
   words (read from the handler's stack at the call), and the golden model's ensemble sum as the
   32-bit sum of the same two functions of its inputs, so the factor is no longer a bit-level
   match of two differently grouped adder chains. Each sum is proven alone: for all input words,
   with every other byte around the array unknown, it returns the golden partial sum (so it reads
   the array only), stores only below its stack pointer and restores its frame.

The rate product's function is known to stay below ``(2^32 - 1) * (2^31 - 1)`` when an operand
is below 2^31 (true of the exact product part 5 proves); part 1 states that for each of its
applications, since the golden model reads a product near 2^63 plus the carry as negative.

A satisfying assignment of part 1 is replayed in the emulator and the numpy golden model;
if the two agree there the model relied on an impossible square root, the true value is added
as a lemma and the solver runs again (counterexample-guided refinement). After two such rounds a
search with the context's rate fixed (its square root one known value, the products exact) looks
for a difference confined to a narrow range of a product, then the products and the square root
are stated exactly at every application.
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import multiprocessing.connection as mp_connection
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import z3
from elftools.elf.elffile import ELFFile

from rlcc import formats as fmt
from rlcc.codegen.context import (PRODUCT_SHIFTS, SLOG_FUNCTION, SQRT_FUNCTION, input_bits, ramp_function, ramp_sum_function,
                                  tree_sum_function)
from rlcc.derived import SLOG_BITS
from rlcc.emulator import Machine
from rlcc.emulator.cycle_model import load_profile
from rlcc.targets import get_target
from rlcc.firmware_sdk_stub import harness_layout as hl
from rlcc.fxp import golden
from rlcc.fxp.model import FxModel, Ramp
from rlcc.fxp.vectors import Vectors, expected
from rlcc.verify.symbolic_golden import (SumFunctions, Z3Ops, product_functions, ramp_functions, slog_function,
                                         symbolic_event)
from rlcc.verify.symexec import Executor, Load, Region, State, Summary, SymexecUnsupported

RET_SENTINEL = 0x4  # return address outside RAM: reaching it ends the symbolic run
HANDLER_SYMBOL = "user_algo"
# the DOCA adapter's "event laid out in advance" pointer (harness_doca.c): NULL after init, so the
# handler lays the symbolic event out itself and the proof covers the layout and byte order too
PREPARED_SYMBOL = "rlcc_doca_prepared_for"
EXHAUSTIVE_RATES = 1 << fmt.RATE_FRAC_BITS  # rates 0 .. 2^20 inclusive
SAMPLED_RATES = 1 << 20
MAX_REFINEMENTS = 16
# Spurious models refined by true values at their points this many times; then the square root
# and the products are stated exactly at every application (a difference confined to a narrow
# range of a product, e.g. delta's penalty, is otherwise chased one point at a time).
POINT_REFINEMENTS = 2
_CALLEE_SAVED = (2, 3, 4, 8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27)  # sp gp tp s0..s11
_STACK_BYTES = 64 * 1024  # only for an ELF without __stack_bottom/__stack_top


@dataclasses.dataclass
class ProofPart:
    name: str
    status: str  # proven | exhaustive | sampled | counterexample | timeout | unsupported | failed
    seconds: float
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"part": self.name, "status": self.status, "seconds": round(self.seconds, 3), "detail": self.detail}


@dataclasses.dataclass
class ProofResult:
    status: str  # proven | counterexample | timeout | unsupported | failed
    parts: list[ProofPart]
    seconds: float
    counterexample: Vectors | None = None

    @property
    def assurance(self) -> str:
        """The one-line statement of what was established."""
        if self.status == "proven":
            sampled = next((p for p in self.parts if p.name == "sqrt_rate values"), None)
            tail = f"; {sampled.detail}" if sampled else ""
            return f"proven equivalent for all inputs{tail}"
        if self.status == "counterexample":
            return "NOT equivalent: the solver found an input where firmware and golden model differ"
        bad = [p for p in self.parts if p.status not in ("proven", "exhaustive", "sampled")]
        return f"not proven ({', '.join(f'{p.name}: {p.status}' for p in bad)})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "assurance": self.assurance,
            "seconds": round(self.seconds, 3),
            "parts": [p.to_dict() for p in self.parts],
            "counterexample": None if self.counterexample is None else self.counterexample.to_dict(),
        }


@dataclasses.dataclass
class _Image:
    elf: Path
    machine: Machine
    image: bytes
    symbols: dict[str, tuple[int, int]]
    regions: list[Region]
    scratch: int
    gp: int
    tp: int


def _load_after_init(elf: Path, xlen: int, profile: str, zbb: bool | None) -> _Image:
    """The harness ELF in the emulator after user_init (an empty table), plus its memory map."""
    m = Machine(xlen=xlen, profile=load_profile(profile), zbb=zbb)
    loaded = m.load_elf(elf)
    syms = hl.table_symbols(elf)
    in_addr, in_size = syms[hl.SYM_IN]
    m.write_mem(in_addr, hl.pack_input(hl.new_records(0)))
    m.pc = loaded.entry
    m.set_reg(2, m.stack_top)
    m.run(max_instructions=10_000_000)
    regions, symbols = elf_code_regions(elf)
    for name in ("pcc_params", PREPARED_SYMBOL):
        if name in symbols:
            a, n = symbols[name]
            regions.append(Region(a, a + n, name))
    bottom, top = m.stack_bounds or (m.stack_top - _STACK_BYTES, m.stack_top)  # the linker's stack symbols
    regions.append(Region(bottom, top, "stack", writable=True))
    image = m.read_mem(m.mem_base, m.mem_size)
    return _Image(elf, m, image, symbols, regions, in_addr + in_size // 2 - 256, m.reg(3), m.reg(4))


def elf_code_regions(elf: Path) -> tuple[list[Region], dict[str, tuple[int, int]]]:
    """The ELF's read-only code and data sections as symbolic-execution regions, and its symbols
    {name: (address, size)} (the first definition of each name)."""
    symbols: dict[str, tuple[int, int]] = {}
    regions: list[Region] = []
    with open(elf, "rb") as fh:
        f = ELFFile(fh)
        for sec in f.iter_sections():
            if sec.name.startswith((".text", ".rodata", ".srodata")) and sec["sh_size"]:
                regions.append(Region(sec["sh_addr"], sec["sh_addr"] + sec["sh_size"], sec.name))
        tab = f.get_section_by_name(".symtab")
        for s in tab.iter_symbols() if tab else ():
            if s.name and s["st_value"]:
                symbols.setdefault(s.name, (s["st_value"], s["st_size"]))
    return regions, symbols


def _fresh_regs(xlen: int, prefix: str) -> list[Any]:
    return [0] + [z3.BitVec(f"{prefix}x{r}", xlen) for r in range(1, 32)]


def _word(st: State, ex: Executor, addr: int) -> z3.BitVecRef:
    v = ex.load(st, addr, 4)
    return v if isinstance(v, z3.BitVecRef) else z3.BitVecVal(v, 32)


def _arg32(v: Any, xlen: int, path: Any, what: str) -> tuple[z3.BitVecRef, list[tuple[str, Any]]]:
    """A 32-bit argument register: its low word, and on RV64 the ABI's sign extension as an obligation."""
    if not isinstance(v, z3.BitVecRef):
        return z3.BitVecVal(v & 0xFFFFFFFF, 32), []
    low = z3.Extract(31, 0, v)
    if xlen == 32:
        return low, []
    return low, [(f"{what} passed sign-extended (RV64 ABI)", z3.And(path, v != z3.SignExt(32, low)))]


def _sqrt_summary(fn: z3.FuncDeclRef, xlen: int) -> Summary:
    def summary(regs: list[Any], path: Any, load: Load) -> tuple[dict[int, Any], list[tuple[str, Any]]]:
        arg, checks = _arg32(regs[10], xlen, path, f"{SQRT_FUNCTION} argument")
        r = fn(arg)
        return {10: z3.SignExt(32, r) if xlen == 64 else r}, checks  # RV64 ABI: 32-bit results sign-extended

    return summary


def _slog_summary(fn: z3.FuncDeclRef, xlen: int) -> Summary:
    def summary(regs: list[Any], path: Any, load: Load) -> tuple[dict[int, Any], list[tuple[str, Any]]]:
        arg, checks = _arg32(regs[10], xlen, path, f"{SLOG_FUNCTION} argument")
        return {10: z3.SignExt(xlen - SLOG_BITS, fn(arg))}, checks  # int32 result, sign-extended on RV64

    return summary


def _ramp_summary(name: str, fn: z3.FuncDeclRef, bits: int, xlen: int) -> Summary:
    def summary(regs: list[Any], path: Any, load: Load) -> tuple[dict[int, Any], list[tuple[str, Any]]]:
        arg, checks = _arg32(regs[10], xlen, path, f"{name} argument")
        return {10: z3.SignExt(xlen - bits, fn(arg))}, checks  # int32 result, sign-extended on RV64

    return summary


def ramp_symbol(img: _Image, i: int) -> str:
    """The ELF symbol of ramp ``i``'s out-of-line function (``codegen.context.ramp_function``,
    whatever the firmware's name prefix)."""
    return _prefixed_symbol(img, ramp_function("", i), f"ramp {i}")


def _prefixed_symbol(img: _Image, suffix: str, what: str) -> str:
    found = [n for n in img.symbols if n.endswith("_" + suffix)]
    if len(found) != 1:
        raise SymexecUnsupported(f"{what}: expected one out-of-line '*_{suffix}' function, found {found or 'none'}")
    return found[0]


def _sum_summary(name: str, fn: z3.FuncDeclRef, n_inputs: int, word_bytes: int, xlen: int, stack: Region) -> Summary:
    """An ensemble partial sum called with a pointer to the caller's input array: ``fn`` of the
    array's words, read from the caller's memory at the call."""
    def summary(regs: list[Any], path: Any, load: Load) -> tuple[dict[int, Any], list[tuple[str, Any]]]:
        base, sp = _concrete(regs[10]), _concrete(regs[2])
        end = None if base is None else base + n_inputs * word_bytes
        if base is None or sp is None or not (sp <= base and end <= stack.hi):
            return {10: 0}, [(f"{name} argument: the input array in the caller's stack frame", path)]
        words = [load(base + word_bytes * i, word_bytes) for i in range(n_inputs)]
        r = fn(*[w if isinstance(w, z3.BitVecRef) else z3.BitVecVal(w, 8 * word_bytes) for w in words])
        return {10: z3.SignExt(32, r) if xlen == 64 else r}, []  # int32 result, sign-extended on RV64

    return summary


def _concrete(v: Any) -> int | None:
    if isinstance(v, int):
        return v
    v = z3.simplify(v)
    return v.as_long() if z3.is_bv_value(v) else None


def _product_summary(name: str, fn: z3.FuncDeclRef, shift: int, xlen: int) -> Summary:
    def summary(regs: list[Any], path: Any, load: Load) -> tuple[dict[int, Any], list[tuple[str, Any]]]:
        a, ca = _arg32(regs[10], xlen, path, f"{name} first argument")
        b, cb = _arg32(regs[11], xlen, path, f"{name} second argument")
        r = z3.ZeroExt(shift, fn(a, b))
        return ({10: r} if xlen == 64 else {10: z3.Extract(31, 0, r), 11: z3.Extract(63, 32, r)}), ca + cb

    return summary


def _frame_checks(final: State, entry: State, xlen: int) -> list[tuple[str, Any]]:
    out = []
    for r in _CALLEE_SAVED:
        a, b = final.regs[r], entry.regs[r]
        if isinstance(a, int) and isinstance(b, int):
            if a != b:
                out.append((f"register x{r} restored", z3.BoolVal(True)))
        else:
            out.append((f"register x{r} restored", z3.BitVecVal(a, xlen) != b if isinstance(a, int) else a != (
                z3.BitVecVal(b, xlen) if isinstance(b, int) else b)))
    return out


def prove_firmware(elf: Path, model: FxModel, target: str, timeout_s: float = 120.0, profile: str | None = None,
                   zbb: bool | None = None, sampled_rates: int = SAMPLED_RATES, seed: int = 0, jobs: int = 2) -> ProofResult:
    """Prove (or refute) that ``elf``'s ``user_algo`` computes ``golden.step`` for all inputs."""
    t0 = time.monotonic()
    t = get_target(target)
    xlen = t.xlen
    img = _load_after_init(Path(elf), xlen, profile or t.default_profile, bool(zbb) and t.zbb_capable)
    parts: list[ProofPart] = []
    if SQRT_FUNCTION not in img.symbols or HANDLER_SYMBOL not in img.symbols:
        missing = SQRT_FUNCTION if HANDLER_SYMBOL in img.symbols else HANDLER_SYMBOL
        parts.append(ProofPart("handler", "unsupported", 0.0, f"no out-of-line '{missing}' in the ELF (regenerate the C with this rlcc)"))
        return ProofResult("unsupported", parts, time.monotonic() - t0)
    handler, cex = _prove_handler(img, model, xlen, timeout_s, jobs)
    parts.append(handler)
    if handler.status == "counterexample":
        return ProofResult("counterexample", parts, time.monotonic() - t0, cex)
    parts.append(_sqrt_contract(img, xlen))
    parts.append(_sqrt_values(img, xlen, sampled_rates, seed))
    parts.extend(_product_part(img, xlen, name, shift) for name, shift in PRODUCT_SHIFTS.items() if name in img.symbols)
    if SLOG_FUNCTION in img.symbols:
        parts.append(_slog_part(img, xlen))
    for i, r in enumerate(model.ramps):
        parts.append(_ramp_part(img, xlen, ramp_symbol(img, i), i, r))
    parts.extend(_sum_parts(img, xlen, model))
    parts.append(_reachable_rates(model))
    ok = all(p.status in ("proven", "exhaustive", "sampled") for p in parts)
    failed = [p.status for p in parts if p.status in ("failed", "counterexample")]
    status = "proven" if ok else ("failed" if failed else ("timeout" if any(p.status == "timeout" for p in parts) else "unsupported"))
    return ProofResult(status, parts, time.monotonic() - t0)


def _prove_handler(img: _Image, model: FxModel, xlen: int, timeout_s: float, jobs: int = 2) -> tuple[ProofPart, Vectors | None]:
    t0 = time.monotonic()
    ctx_addr, ev_addr, res_addr = img.scratch, img.scratch + 64, img.scratch + 128
    regions = img.regions + [
        Region(ctx_addr, ctx_addr + fmt.CTX_BYTES, "context", writable=True),
        Region(ev_addr, ev_addr + fmt.EVENT_BYTES, "event"),
        Region(res_addr, res_addr + 4 * fmt.RESULT_WORDS, "results", writable=True),
    ]
    cut = _Abstraction.for_image(img, model)
    ex = Executor(img.image, img.machine.mem_base, xlen, regions, cut.summaries(img, xlen))
    ctx = [z3.BitVec(f"ctx{i}", 32) for i in range(fmt.CTX_WORDS)]
    ev = [z3.BitVec(f"ev{i}", 32) for i in range(fmt.EVENT_WORDS)]
    regs = _fresh_regs(xlen, "in_")
    attr = regs[12]
    regs[1], regs[2], regs[3], regs[4] = RET_SENTINEL, img.machine.stack_top, img.gp, img.tp
    regs[10], regs[11], regs[13] = ctx_addr, ev_addr, res_addr
    mem: dict[int, Any] = {}
    for base, words in ((ctx_addr, ctx), (ev_addr, ev)):
        for i, w in enumerate(words):
            for b in range(4):
                mem[base + 4 * i + b] = z3.Extract(8 * b + 7, 8 * b, w)
    for b in range(4 * fmt.RESULT_WORDS):
        mem[res_addr + b] = z3.BitVec(f"res_garbage{b}", 8)  # the handler must write both results
    entry = State(img.symbols[HANDLER_SYMBOL][0], regs, mem, ())
    try:
        run = ex.run(State(entry.pc, list(regs), dict(mem), ()), RET_SENTINEL)
    except SymexecUnsupported as exc:
        return ProofPart("handler", "unsupported", time.monotonic() - t0, str(exc)), None
    fin = run.state
    fw_ctx = [_word(fin, ex, ctx_addr + 4 * i) for i in range(fmt.CTX_WORDS)]
    fw_rate, fw_req = _word(fin, ex, res_addr), _word(fin, ex, res_addr + 4)
    golden_side: list[tuple[str, Any]] = []
    gold = symbolic_event(model, ctx, ev, cut.sqrt, cut.by_shift(), golden_side, cut.slog, cut.ramp_fns(),
                          cut.sums.fns if cut.sums else None)
    side = run.obligations + golden_side + _frame_checks(fin, entry, xlen)
    deadline = t0 + timeout_s
    for desc, formula in side:
        verdict, _ = _solve([formula], deadline)
        if verdict != "unsat":
            status = "timeout" if verdict == "unknown" else "failed"
            return ProofPart("handler", status, time.monotonic() - t0, f"side condition not proven: {desc}"), None
    names = [f"ctx[{i}]" for i in range(fmt.CTX_WORDS)] + ["rate", "rtt_req"]
    fw_out = fw_ctx + [fw_rate, fw_req]
    gold_out = [z3.simplify(t) for t in gold.ctx + [gold.rate, gold.rtt_req]]
    # Passes over the open outputs on `jobs` forked processes; in each pass an output gets its
    # share of the time left, so the easy ones finish before the hard ones get the rest. Each
    # proven equality is a valid fact handed to later queries (the result rate is the context's
    # rate word once that is proven).
    proven: list[str] = []
    facts: list[Any] = []
    deadline = t0 + timeout_s

    def attempt(k: int, unfinished: int) -> tuple[str, Vectors | None]:
        left = deadline - time.monotonic()
        share = left if unfinished <= jobs else left * jobs / unfinished
        return _prove_output(img, model, xlen, fw_out[k], gold_out[k], ctx, ev, attr, cut, time.monotonic() + share, facts)

    def done(k: int, result: tuple[str, Vectors | None]) -> None:
        if result[0] == "proven":
            proven.append(names[k])
            facts.append(fw_out[k] == gold_out[k])

    todo = list(range(len(names)))
    while todo and deadline - time.monotonic() > 1:
        for k, (verdict, cex) in _in_processes(todo, attempt, jobs, done):
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


def _prove_output(img: _Image, model: FxModel, xlen: int, fw: Any, gold: Any, ctx: list[Any], ev: list[Any], attr: Any,
                  cut: _Abstraction, deadline: float, facts: list[Any]) -> tuple[str, Vectors | None]:
    """"proven", "counterexample" (reproduced in the emulator) or "timeout" for one output word
    (``facts``: proven equalities of other outputs)."""
    lemmas: list[Any] = cut.product_ranges([fw, gold])
    for round_ in range(MAX_REFINEMENTS):
        verdict, m = _solve([fw != gold, *facts, *lemmas], deadline)
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


PINNED_SEARCH_S = 15.0  # seconds of one pinned-rate counterexample search


def _pinned_rate_search(img: _Image, model: FxModel, xlen: int, fw: Any, gold: Any, ctx: list[Any], ev: list[Any],
                        attr: Any, cut: _Abstraction, m: Any, known: list[Any], deadline: float) -> Vectors | None:
    """A counterexample with the context's rate fixed (the spurious model's, if a stored rate, else
    the initial one): the square root is then one known value and the products stated exactly, so
    a difference confined to a narrow range of a product (delta's penalty) is found at once, where
    refining the abstraction point by point would chase it one argument at a time."""
    rate = m.eval(ctx[fmt.CTX_RATE], model_completion=True).as_long()
    rate = rate if 1 <= rate <= fmt.RATE_MAX else model.constants.rate_initial
    root = int(golden.NUMPY.sqrt_rate(np.array([rate]))[0])
    pinned = [ctx[fmt.CTX_RATE] == rate, cut.sqrt(z3.BitVecVal(rate, 32)) == root, *cut.exact_lemmas([fw, gold], roots=False)]
    verdict, m2 = _solve([fw != gold, *known, *pinned], min(deadline, time.monotonic() + PINNED_SEARCH_S))
    if verdict != "sat":
        return None
    vec = _concrete_vector(m2, ctx, ev, attr, xlen, model)
    return vec if _differs_in_emulator(img, vec, xlen) else None


def _in_processes(items: list[int], work: Callable[[int, int], Any], jobs: int,
                  on_done: Callable[[int, Any], None]) -> list[tuple[int, Any]]:
    """``work(item, unfinished)`` for each item (``unfinished``: items not done at its start, itself
    included), at most ``jobs`` at a time, each in a forked process (z3 is not thread-safe; a fork
    inherits the formulas). An item starts after ``on_done`` of the items finished before it, so
    it sees their facts. Results in completion order."""
    if jobs <= 1 or len(items) <= 1 or "fork" not in mp.get_all_start_methods():
        out = []
        for i, item in enumerate(items):
            r = work(item, len(items) - i)
            on_done(item, r)
            out.append((item, r))
        return out
    ctx = mp.get_context("fork")
    pending: list[int] = list(items)
    running: dict[Any, tuple[int, Any]] = {}
    out = []
    while pending or running:
        while pending and len(running) < jobs:
            unfinished = len(pending) + len(running)
            item = pending.pop(0)
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(work, item, unfinished, send), daemon=True)
            proc.start()
            send.close()
            running[recv] = (item, proc)
        for recv in mp_connection.wait(list(running)):
            item, proc = running.pop(recv)
            try:
                r = recv.recv()
            except EOFError:  # the child died (out of memory, killed): not proven
                r = ("timeout", None)
            proc.join()
            on_done(item, r)
            out.append((item, r))
    return out


def _child(work: Callable[[int, int], Any], item: int, unfinished: int, send: Any) -> None:
    send.send(work(item, unfinished))
    send.close()


def _solve(formulas: list[Any], deadline: float) -> tuple[str, Any]:
    left_ms = int(max(1.0, deadline - time.monotonic()) * 1000)
    s = z3.SolverFor("QF_UFBV")
    s.set("timeout", left_ms)
    s.add(*formulas)
    r = s.check()
    if r == z3.unsat:
        return "unsat", None
    if r == z3.sat:
        return "sat", s.model()
    return "unknown", None


def _concrete_vector(m: Any, ctx: list[Any], ev: list[Any], attr: Any, xlen: int, model: FxModel) -> Vectors:
    val = lambda e: m.eval(e, model_completion=True).as_long()  # noqa: E731
    c = np.array([[val(w) for w in ctx]], dtype=np.uint32)
    e = np.array([[val(w) for w in ev]], dtype=np.uint32)
    a = np.array([val(attr) & 0xFFFFFFFF], dtype=np.uint32)
    return expected(model, c, e, a)


@dataclasses.dataclass
class _Abstraction:
    """The uninterpreted functions standing for the firmware's out-of-line functions."""

    sqrt: z3.FuncDeclRef
    products: dict[str, tuple[int, z3.FuncDeclRef]]  # symbol -> (shift, function)
    slog: z3.FuncDeclRef | None  # only when the firmware has derived inputs
    ramps: list[tuple[str, Ramp, z3.FuncDeclRef]] = dataclasses.field(default_factory=list)  # symbol, ramp, function
    sums: _Sums | None = None  # only when the firmware sums trees and ramps out of line

    @classmethod
    def for_image(cls, img: _Image, model: FxModel) -> _Abstraction:
        present = {n: sh for n, sh in PRODUCT_SHIFTS.items() if n in img.symbols}
        fns = product_functions(present.values())
        return cls(z3.Function(SQRT_FUNCTION, z3.BitVecSort(32), z3.BitVecSort(32)),
                   {n: (sh, fns[sh]) for n, sh in present.items()},
                   slog_function() if SLOG_FUNCTION in img.symbols else None,
                   [(ramp_symbol(img, i), r, fn) for (i, r), fn in zip(enumerate(model.ramps), ramp_functions(model))],
                   _Sums.for_image(img, model))

    def ramp_fns(self) -> list[z3.FuncDeclRef] | None:
        return [fn for _, _, fn in self.ramps] if self.ramps else None

    def by_shift(self) -> dict[int, z3.FuncDeclRef]:
        return {sh: fn for sh, fn in self.products.values()}

    def summaries(self, img: _Image, xlen: int) -> dict[int, Summary]:
        out = {img.symbols[SQRT_FUNCTION][0]: _sqrt_summary(self.sqrt, xlen)}
        for name, (shift, fn) in self.products.items():
            out[img.symbols[name][0]] = _product_summary(name, fn, shift, xlen)
        if self.slog is not None:
            out[img.symbols[SLOG_FUNCTION][0]] = _slog_summary(self.slog, xlen)
        for name, r, fn in self.ramps:
            out[img.symbols[name][0]] = _ramp_summary(name, fn, r.term_bits, xlen)
        if self.sums is not None:
            stack = next(r for r in img.regions if r.name == "stack")
            for name, fn in ((self.sums.tree_symbol, self.sums.fns.trees), (self.sums.ramp_symbol, self.sums.fns.ramps)):
                out[img.symbols[name][0]] = _sum_summary(name, fn, self.sums.n_inputs, self.sums.fns.input_bits // 8, xlen, stack)
        return out

    def product_ranges(self, terms: list[Any]) -> list[Any]:
        """For each product application in ``terms``: true of the exact ``(a * b) >> shift`` (its
        own part proves the function exact), at most ``((2^32 - 1) * (2^31 - 1)) >> shift`` when an
        operand is below 2^31. Without it the solver may pick a product near 2^63, which plus the
        rate carry the golden model's int64 reads as negative and the firmware's uint64 does not
        (a spurious difference)."""
        shifts = {fn.get_id(): sh for sh, fn in self.products.values()}
        out = []
        for app in _applications(terms, set(shifts)):
            a, b = app.arg(0), app.arg(1)
            small = z3.Or(z3.ULT(a, 1 << 31), z3.ULT(b, 1 << 31))
            top = _MAX_SMALL_PRODUCT >> shifts[app.decl().get_id()]
            out.append(z3.Implies(small, z3.ULE(app, z3.BitVecVal(top, app.size()))))
        return out

    def exact_lemmas(self, terms: list[Any], roots: bool = True) -> list[Any]:
        """The exact value of every product (and, with ``roots``, square-root) application in
        ``terms`` as a formula of its arguments (true of the functions their own parts prove the
        firmware computes)."""
        shifts = {fn.get_id(): sh for sh, fn in self.products.values()}
        out = []
        for app in _applications(terms, set(shifts) | ({self.sqrt.get_id()} if roots else set())):
            if app.decl().get_id() in shifts:
                a, b = (z3.ZeroExt(32, app.arg(i)) for i in range(2))
                out.append(app == z3.Extract(app.size() - 1, 0, z3.LShR(a * b, shifts[app.decl().get_id()])))
                continue
            n = z3.ZeroExt(32, app.arg(0)) << fmt.RATE_FRAC_BITS  # below 2^52: its root below 2^26
            r = z3.ZeroExt(32, app)
            out.append(z3.And(z3.ULE(app, 1 << 26), z3.ULE(r * r, n), z3.ULT(n, (r + 1) * (r + 1))))
        return out

    def lemmas(self, m: Any, terms: list[Any] = ()) -> list[Any]:
        """The true value at every argument the model used where it assumed another (refines a
        spurious model): each function's table, and each application in ``terms`` (an argument
        outside the table takes the table's default)."""
        out: dict[str, Any] = {}
        true_slog = lambda a: int(golden.NUMPY.slog(np.int64(a[0] - (a[0] >> 31 << 32)))) & ((1 << SLOG_BITS) - 1)  # noqa: E731
        true_ramp = lambda r: lambda a: int(golden.ramp_value(golden.NUMPY, r, np.int64(a[0] - (a[0] >> 31 << 32)))) & (  # noqa: E731
            (1 << r.term_bits) - 1)
        functions = [(self.sqrt, lambda a: int(golden.NUMPY.sqrt_rate(np.array([a[0]]))[0]))] + [
            (fn, lambda a, sh=sh: (a[0] * a[1]) >> sh) for sh, fn in self.products.values()] + (
            [(self.slog, true_slog)] if self.slog is not None else []) + [(fn, true_ramp(r)) for _, r, fn in self.ramps] + (
            self.sums.true_values() if self.sums is not None else [])

        def check(fn: z3.FuncDeclRef, true: Callable[[list[int]], int], args: list[int], value: int) -> None:
            if value != true(args):
                lemma = fn(*[z3.BitVecVal(a, fn.domain(j).size()) for j, a in enumerate(args)]) == true(args)
                out.setdefault(str(lemma), lemma)

        truth = {fn.get_id(): (fn, true) for fn, true in functions}
        for fn, true in functions:
            interp = m[fn]
            if not isinstance(interp, z3.FuncInterp) or not interp.f:  # not in the model
                continue
            try:
                n_entries = interp.num_entries()
            except z3.Z3Exception:  # interpreted without a table (as a lambda): nothing to refine here
                continue
            for i in range(n_entries):
                e = interp.entry(i)
                check(fn, true, [e.arg_value(j).as_long() for j in range(fn.arity())], e.value().as_long())
        for app in _applications(terms, set(truth)):
            fn, true = truth[app.decl().get_id()]
            val = lambda e: m.eval(e, model_completion=True).as_long()  # noqa: E731
            check(fn, true, [val(app.arg(j)) for j in range(fn.arity())], val(app))
        return list(out.values())


@dataclasses.dataclass
class _Sums:
    """The ensemble's out-of-line partial sums (a model with ramps): their symbols and functions."""

    tree_symbol: str
    ramp_symbol: str
    fns: SumFunctions
    model: FxModel

    @property
    def n_inputs(self) -> int:
        return self.model.spec.student_width

    @classmethod
    def for_image(cls, img: _Image, model: FxModel) -> _Sums | None:
        tree, ramp = tree_sum_function(""), ramp_sum_function("")
        if not model.ramps or golden.sum_bound(model) >= 2**31 or not any(n.endswith("_" + tree) for n in img.symbols):
            return None  # the handler proof then executes the sum inline
        return cls(_prefixed_symbol(img, tree, "trees' sum"), _prefixed_symbol(img, ramp, "ramps' sum"),
                   SumFunctions.make(model.spec.student_width, input_bits(model)), model)

    def inputs(self, words: list[int]) -> list[np.ndarray]:
        """Array words (unsigned) as the golden model's signed input values."""
        bits = self.fns.input_bits
        return [np.array([w - (w >> (bits - 1) << bits)], dtype=np.int64) for w in words]

    def true_values(self) -> list[tuple[z3.FuncDeclRef, Callable[[list[int]], int]]]:
        """Each sum function with its true value (int32, as unsigned) at given array words."""
        def low(terms: list[Any]) -> int:
            return int(sum(np.asarray(t, dtype=np.int64).reshape(-1)[0] for t in terms)) & 0xFFFFFFFF

        return [(self.fns.trees, lambda a: low(golden.tree_terms(golden.NUMPY, self.model, self.inputs(a))[0])),
                (self.fns.ramps, lambda a: low(golden.ramp_terms(golden.NUMPY, self.model, self.inputs(a))))]


_MAX_SMALL_PRODUCT = (2**32 - 1) * (2**31 - 1)  # the largest product of a uint32 and a value below 2^31


def _applications(terms: list[Any], decl_ids: set[int]) -> list[z3.ExprRef]:
    """The distinct applications of the given functions in ``terms``."""
    seen: set[int] = set()
    out: dict[int, z3.ExprRef] = {}
    stack = [t for t in terms if isinstance(t, z3.ExprRef)]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t) and t.decl().get_id() in decl_ids:
            out[t.get_id()] = t
        stack.extend(t.children())
    return list(out.values())


def _differs_in_emulator(img: _Image, vec: Vectors, xlen: int) -> bool:
    from rlcc.verify.runner import HarnessRunner, records_from_vectors

    runner = HarnessRunner(img.elf, xlen, img.machine.profile, zbb=img.machine.zbb)
    out = runner.run(records_from_vectors(vec))
    return bool(out["rate"][0] != vec.rate[0] or out["rtt_req"][0] != vec.rtt_req[0] or np.any(out["ctx_out"][0] != vec.ctx_out[0]))


def _sqrt_contract(img: _Image, xlen: int) -> ProofPart:
    t0 = time.monotonic()
    ex = Executor(img.image, img.machine.mem_base, xlen, img.regions)
    regs = _fresh_regs(xlen, "sq_")
    regs[1], regs[2], regs[3], regs[4] = RET_SENTINEL, img.machine.stack_top, img.gp, img.tp
    arg = z3.BitVec("sq_rate", 32)
    regs[10] = z3.SignExt(32, arg) if xlen == 64 else arg  # as the ABI passes a uint32 (the handler proof checks it)
    entry = State(img.symbols[SQRT_FUNCTION][0], list(regs), {}, ())
    try:
        run = ex.run(State(entry.pc, list(regs), {}, ()), RET_SENTINEL)
    except SymexecUnsupported as exc:
        return ProofPart("sqrt_rate contract", "unsupported", time.monotonic() - t0, str(exc))
    result = run.state.regs[10]
    returns = []
    if xlen == 64 and isinstance(result, z3.BitVecRef):  # the handler proof reads it sign-extended
        returns.append(("result returned sign-extended (RV64 ABI)", result != z3.SignExt(32, z3.Extract(31, 0, result))))
    free = {str(v) for v in _free_vars(result)} if isinstance(result, z3.ExprRef) else set()
    if free - {str(arg)}:
        return ProofPart("sqrt_rate contract", "failed", time.monotonic() - t0, f"result depends on {sorted(free - {str(arg)})}")
    deadline = time.monotonic() + 60
    for desc, formula in returns + run.obligations + _frame_checks(run.state, entry, xlen):
        verdict, _ = _solve([formula], deadline)
        if verdict != "unsat":
            return ProofPart("sqrt_rate contract", "timeout" if verdict == "unknown" else "failed", time.monotonic() - t0, desc)
    return ProofPart("sqrt_rate contract", "proven", time.monotonic() - t0,
                     "returns, restores sp and callee-saved registers, stores only in its frame, result a function of the rate alone")


def _product_part(img: _Image, xlen: int, name: str, shift: int) -> ProofPart:
    """An out-of-line product returns ``(a * b) >> shift`` exactly for all 32-bit ``a``, ``b``,
    takes its arguments as the ABI passes them, and keeps its frame (the handler proof relies on it)."""
    t0 = time.monotonic()
    ex = Executor(img.image, img.machine.mem_base, xlen, img.regions)
    a, b = z3.BitVec(f"{name}_a", 32), z3.BitVec(f"{name}_b", 32)
    regs = _fresh_regs(xlen, f"{name}_")
    regs[1], regs[2], regs[3], regs[4] = RET_SENTINEL, img.machine.stack_top, img.gp, img.tp
    regs[10], regs[11] = (z3.SignExt(32, a), z3.SignExt(32, b)) if xlen == 64 else (a, b)
    entry = State(img.symbols[name][0], list(regs), {}, ())
    try:
        run = ex.run(State(entry.pc, list(regs), {}, ()), RET_SENTINEL)
    except SymexecUnsupported as exc:
        return ProofPart(f"{name} product", "unsupported", time.monotonic() - t0, str(exc))
    lo, hi = run.state.regs[10], run.state.regs[11]
    as_bv = lambda v, w: v if isinstance(v, z3.BitVecRef) else z3.BitVecVal(v, w)  # noqa: E731
    got = as_bv(lo, 64) if xlen == 64 else z3.Concat(as_bv(hi, 32), as_bv(lo, 32))
    want = z3.LShR(z3.ZeroExt(32, a) * z3.ZeroExt(32, b), shift)
    deadline = time.monotonic() + 60
    for desc, formula in [("result", got != want)] + run.obligations + _frame_checks(run.state, entry, xlen):
        verdict, _ = _solve([formula], deadline)
        if verdict != "unsat":
            return ProofPart(f"{name} product", "timeout" if verdict == "unknown" else "failed", time.monotonic() - t0,
                             f"not proven: {desc}")
    return ProofPart(f"{name} product", "proven", time.monotonic() - t0,
                     f"returns (a * b) >> {shift} for all 32-bit a, b; restores sp and callee-saved registers")


def _int32_function_part(img: _Image, xlen: int, part: str, symbol: str, want_of: Callable[[Any], Any], bits: int,
                         equals: str, proven: str) -> ProofPart:
    """An out-of-line function of one int32 argument, symbolically alone: its result equals
    ``want_of`` (the golden value, 64-bit z3) for every int32, that value fits the ``bits`` the
    handler proof's abstraction gives it, and the function keeps its frame."""
    t0 = time.monotonic()
    ex = Executor(img.image, img.machine.mem_base, xlen, img.regions)
    arg = z3.BitVec(f"{part.replace(' ', '_')}_arg", 32)
    regs = _fresh_regs(xlen, f"{part.replace(' ', '_')}_")
    regs[1], regs[2], regs[3], regs[4] = RET_SENTINEL, img.machine.stack_top, img.gp, img.tp
    regs[10] = z3.SignExt(32, arg) if xlen == 64 else arg
    entry = State(img.symbols[symbol][0], list(regs), {}, ())
    try:
        run = ex.run(State(entry.pc, list(regs), {}, ()), RET_SENTINEL)
    except SymexecUnsupported as exc:
        return ProofPart(part, "unsupported", time.monotonic() - t0, str(exc))
    r = run.state.regs[10]
    got = r if isinstance(r, z3.BitVecRef) else z3.BitVecVal(r, xlen)
    want = z3.simplify(want_of(z3.SignExt(32, arg)))
    checks = [(f"value fits the abstraction's {bits} bits", want != z3.SignExt(64 - bits, z3.Extract(bits - 1, 0, want))),
              (f"result equals {equals}", got != z3.Extract(xlen - 1, 0, want))]
    deadline = time.monotonic() + 60
    for desc, formula in checks + run.obligations + _frame_checks(run.state, entry, xlen):
        verdict, _ = _solve([formula], deadline)
        if verdict != "unsat":
            return ProofPart(part, "timeout" if verdict == "unknown" else "failed", time.monotonic() - t0, f"not proven: {desc}")
    return ProofPart(part, "proven", time.monotonic() - t0, proven)


def _exact_ops() -> Z3Ops:
    """The z3 golden operations with nothing abstracted (the square root is unused here)."""
    return Z3Ops(z3.Function("unused_sqrt", z3.BitVecSort(32), z3.BitVecSort(32)))


def _slog_part(img: _Image, xlen: int) -> ProofPart:
    """The out-of-line signed log returns ``rlcc.derived.slog_int`` of its argument for every int32."""
    return _int32_function_part(
        img, xlen, "slog", SLOG_FUNCTION, _exact_ops().slog, SLOG_BITS, "rlcc.derived.slog_int",
        "returns slog(d) exactly (21-bit signed, sign-extended) for all int32 d; restores sp and callee-saved registers")


def _ramp_part(img: _Image, xlen: int, name: str, i: int, r: Ramp) -> ProofPart:
    """Ramp ``i``'s out-of-line function returns ``rlcc.fxp.golden.ramp_value`` of its argument."""
    return _int32_function_part(
        img, xlen, f"ramp {i}", name, lambda x: golden.ramp_value(_exact_ops(), r, x), r.term_bits,
        "rlcc.fxp.golden.ramp_value",
        f"{name} returns the ramp's term exactly ({r.term_bits}-bit signed, sign-extended) for all int32 x; "
        "restores sp and callee-saved registers")


_CALLER_FRAME = 512  # bytes of the caller's frame (holding the input array) above a sum's stack pointer
_ARRAY_OFFSET = 64  # the input array's offset in that frame


def _sum_parts(img: _Image, xlen: int, model: FxModel) -> list[ProofPart]:
    """The trees' and the ramps' out-of-line sums (a model with ramps), each alone."""
    cut = _Abstraction.for_image(img, model)
    if cut.sums is None:
        return []
    bound = golden.sum_bound(model)

    def trees(ops: Z3Ops, x: list[Any]) -> Any:
        return ops.add_terms(golden.tree_terms(ops, model, x)[0], bound)

    def ramps(ops: Z3Ops, x: list[Any]) -> Any:
        return ops.add_terms(golden.ramp_terms(ops, model, x), bound)

    return [_sum_part(img, xlen, cut, "trees' sum", cut.sums.tree_symbol, trees, "the bias plus the trees' leaves"),
            _sum_part(img, xlen, cut, "ramps' sum", cut.sums.ramp_symbol, ramps,
                      "the sum of the ramps' terms (each ramp the function its own part proves)")]


def _sum_part(img: _Image, xlen: int, cut: _Abstraction, part: str, symbol: str,
              want_of: Callable[[Z3Ops, list[Any]], Any], what: str) -> ProofPart:
    """An out-of-line partial sum, symbolically alone: called with a pointer to an array of free
    input words in the caller's frame, every other byte around it unknown, it returns ``want_of``
    (the golden 32-bit sum, the ramps as their functions) for all words, so its result depends on
    the array alone, which is what its abstraction in the handler assumes; it stores only below its
    stack pointer and restores sp and the callee-saved registers."""
    t0 = time.monotonic()
    assert cut.sums is not None
    tag = part.split("'")[0]
    n, bits = cut.sums.n_inputs, cut.sums.fns.input_bits
    sp = img.machine.stack_top - _CALLER_FRAME
    base = sp + _ARRAY_OFFSET
    words = [z3.BitVec(f"{tag}_x{i}", bits) for i in range(n)]
    mem: dict[int, Any] = {a: z3.BitVec(f"{tag}_unknown_{a - sp}", 8) for a in range(sp - _CALLER_FRAME, img.machine.stack_top)}
    for i, w in enumerate(words):
        for b in range(bits // 8):
            mem[base + i * bits // 8 + b] = z3.Extract(8 * b + 7, 8 * b, w)
    regs = _fresh_regs(xlen, f"{tag}_")
    regs[1], regs[2], regs[3], regs[4], regs[10] = RET_SENTINEL, sp, img.gp, img.tp, base
    summaries = {a: f for a, f in cut.summaries(img, xlen).items() if a != img.symbols[symbol][0]}
    ex = Executor(img.image, img.machine.mem_base, xlen, img.regions, summaries)
    entry = State(img.symbols[symbol][0], list(regs), dict(mem), ())
    try:
        run = ex.run(State(entry.pc, list(regs), dict(mem), ()), RET_SENTINEL)
    except SymexecUnsupported as exc:
        return ProofPart(part, "unsupported", time.monotonic() - t0, str(exc))
    side: list[tuple[str, Any]] = []
    ops = Z3Ops(_exact_ops().sqrt_fn, obligations=side, ramp_fns=cut.ramp_fns())
    want = z3.simplify(want_of(ops, [z3.SignExt(64 - bits, w) if bits < 64 else w for w in words]))
    r = run.state.regs[10]
    got = r if isinstance(r, z3.BitVecRef) else z3.BitVecVal(r, xlen)
    caller = [a for a in run.state.mem if a >= sp and not _same_byte(run.state.mem[a], mem.get(a))]
    if caller:
        return ProofPart(part, "failed", time.monotonic() - t0, f"stores into its caller's frame at {min(caller):#x}")
    checks = [(f"result equals {what}", got != z3.Extract(xlen - 1, 0, want))]
    deadline = time.monotonic() + 60
    for desc, formula in checks + side + run.obligations + _frame_checks(run.state, entry, xlen):
        verdict, _ = _solve([formula], deadline)
        if verdict != "unsat":
            return ProofPart(part, "timeout" if verdict == "unknown" else "failed", time.monotonic() - t0, f"not proven: {desc}")
    return ProofPart(part, "proven", time.monotonic() - t0,
                     f"{symbol} returns {what} (int32, sign-extended) for all {n} input words, reads nothing else; "
                     "stores only in its frame, restores sp and callee-saved registers")


def _same_byte(a: Any, b: Any) -> bool:
    if isinstance(a, int) or isinstance(b, int) or b is None:
        return isinstance(a, int) and isinstance(b, int) and a == b
    return a.eq(b)


def _free_vars(e: z3.ExprRef) -> set[z3.ExprRef]:
    seen: set[int] = set()
    out: set[z3.ExprRef] = set()
    stack = [e]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.add(t)
        stack.extend(t.children())
    return out


def _assemble_loop(xlen: int, loop_addr: int) -> bytes:
    """for (s0 = first; s0 != s1; s0++) { *s2++ = sqrt_rate(s0); } ebreak  (s3 = function)."""
    def i_type(op: int, rd: int, f3: int, rs1: int, imm: int) -> int:
        return ((imm & 0xFFF) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op

    def s_type(rs1: int, rs2: int, imm: int) -> int:
        return ((imm >> 5 & 0x7F) << 25) | (rs2 << 20) | (rs1 << 15) | (2 << 12) | ((imm & 0x1F) << 7) | 0x23

    def b_type(f3: int, rs1: int, rs2: int, off: int) -> int:
        o = off & 0x1FFF
        return ((o >> 12) << 31) | ((o >> 5 & 0x3F) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((o >> 1 & 0xF) << 8) | ((o >> 11 & 1) << 7) | 0x63

    words = [
        i_type(0x13, 10, 0, 8, 0),  # mv a0, s0
        i_type(0x67, 1, 0, 19, 0),  # jalr ra, 0(s3)
        s_type(18, 10, 0),  # sw a0, 0(s2)
        i_type(0x13, 18, 0, 18, 4),  # addi s2, s2, 4
        i_type(0x13, 8, 0, 8, 1),  # addi s0, s0, 1
        b_type(1, 8, 9, -20),  # bne s0, s1, loop
        0x00100073,  # ebreak
    ]
    return b"".join(struct.pack("<I", w) for w in words)


def sqrt_in_emulator(img: _Image, rates: np.ndarray, xlen: int) -> np.ndarray:
    """``sqrt_rate`` of the ELF for consecutive runs of ``rates`` (called through a small loop)."""
    m = img.machine
    fn = img.symbols[SQRT_FUNCTION][0]
    loop = img.scratch
    out_base = img.scratch + 64
    chunk = max(1, (m.stack_top - _STACK_BYTES - out_base - 4096) // 4)
    chunk = min(chunk, 1 << 16)
    results = np.empty(len(rates), dtype=np.uint32)
    m.write_mem(m.mem_base, img.image)
    m.write_mem(loop, _assemble_loop(xlen, loop))
    for start in range(0, len(rates), chunk):
        part = rates[start : start + chunk]
        if not np.all(np.diff(part.astype(np.int64)) == 1):
            for j, r in enumerate(part):  # non-consecutive: one call each
                m.set_reg(8, int(r))
                m.set_reg(9, int(r) + 1 & 0xFFFFFFFF if xlen == 32 else int(r) + 1)
                _run_loop(m, loop, fn, out_base)
                results[start + j] = m.read_u32(out_base)
            continue
        m.set_reg(8, int(part[0]))
        m.set_reg(9, int(part[-1]) + 1 if xlen == 64 else (int(part[-1]) + 1) & 0xFFFFFFFF)
        _run_loop(m, loop, fn, out_base)
        results[start : start + len(part)] = m.read_array(out_base, np.uint32, len(part))
    return results


def _run_loop(m: Machine, loop: int, fn: int, out_base: int) -> None:
    m.set_reg(18, out_base)
    m.set_reg(19, fn)
    m.set_reg(2, m.stack_top)
    m.pc = loop
    r = m.run(max_instructions=1 << 33)
    if r.halt_reason != "ebreak":
        raise SymexecUnsupported(f"sqrt_rate loop stopped with {r.halt_reason}")


def _sqrt_values(img: _Image, xlen: int, sampled: int, seed: int) -> ProofPart:
    t0 = time.monotonic()
    rates = np.arange(0, EXHAUSTIVE_RATES + 1, dtype=np.uint32)
    got = sqrt_in_emulator(img, rates, xlen)
    want = golden.NUMPY.sqrt_rate(rates.astype(np.int64))
    bad = np.flatnonzero(got != want)
    if len(bad):
        r = int(rates[bad[0]])
        return ProofPart("sqrt_rate values", "failed", time.monotonic() - t0,
                         f"sqrt_rate({r}) = {int(got[bad[0]])}, exact {int(want[bad[0]])} ({len(bad)} rates wrong)")
    rng = np.random.default_rng(seed)
    high = np.sort(rng.integers(EXHAUSTIVE_RATES + 1, 1 << 32, sampled, dtype=np.int64)).astype(np.uint32)
    got_hi = sqrt_in_emulator(img, high, xlen) if sampled else np.zeros(0, np.uint32)
    bad_hi = np.flatnonzero(got_hi != golden.NUMPY.sqrt_rate(high.astype(np.int64)))
    if len(bad_hi):
        return ProofPart("sqrt_rate values", "failed", time.monotonic() - t0, f"sqrt_rate({int(high[bad_hi[0]])}) wrong")
    return ProofPart("sqrt_rate values", "exhaustive", time.monotonic() - t0,
                     f"square root exhaustive over rates 0..2^20; rates above 2^20 (corrupted contexts only) sampled: {sampled:,}")


def _reachable_rates(model: FxModel) -> ProofPart:
    """From a context with rate <= 2^20 every event leaves a rate in [rate_min, 2^20] (golden, z3)."""
    t0 = time.monotonic()
    sqrt_fn = z3.Function("sqrt_rate", z3.BitVecSort(32), z3.BitVecSort(32))
    ctx = [z3.BitVec(f"ctx{i}", 32) for i in range(fmt.CTX_WORDS)]
    ev = [z3.BitVec(f"ev{i}", 32) for i in range(fmt.EVENT_WORDS)]
    # any slog and any ramp terms (within their bits): sound for "every event"
    out = symbolic_event(model, ctx, ev, sqrt_fn, slog_fn=slog_function(), ramp_fns=ramp_functions(model) or None)
    lo = min(model.constants.rate_min, model.constants.rate_initial)
    bad = z3.Or(z3.ULT(out.rate, lo), z3.UGT(out.rate, fmt.RATE_MAX))
    verdict, _ = _solve([z3.ULE(ctx[fmt.CTX_RATE], fmt.RATE_MAX), z3.Or(ctx[fmt.CTX_RATE] == 0, z3.UGE(ctx[fmt.CTX_RATE], lo)), bad],
                        time.monotonic() + 60)
    status = {"unsat": "proven", "unknown": "timeout"}.get(verdict, "failed")
    return ProofPart("reachable rates", status, time.monotonic() - t0,
                     f"every event maps a context with rate 0 or in [{lo}, 2^20] to a rate in [{lo}, 2^20]")
