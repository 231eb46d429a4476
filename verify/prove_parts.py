"""The parts of the NIC proof besides the handler (``rlcc.verify.prove`` says how they compose):
each out-of-line function symbolically alone against its exact value (square root contract,
log ratio, the ensemble's partial sums), the square root's values in the
emulator, and the rates the handler can leave in a context.

Every part is one ``ProofPart``; a function part runs the function from the post-start-up image
with free arguments and discharges its obligations (result, safety, frame) in order.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import z3

from rlcc import formats as fmt
from rlcc.codegen.context import SLOG_FUNCTION, SQRT_FUNCTION
from rlcc.derived import SLOG_BITS
from rlcc.emulator import Machine
from rlcc.fxp import golden
from rlcc.fxp.model import FxModel
from rlcc.verify import rv_asm
from rlcc.verify.prove_abstractions import Abstraction
from rlcc.verify.prove_image import RET_SENTINEL, STACK_BYTES, ElfImage, frame_checks
from rlcc.verify.prove_solver import first_open, free_vars, solve
from rlcc.verify.symbolic_golden import Z3Ops, ramp_functions, slog_function, symbolic_event
from rlcc.verify.symexec import Result, State, Summary, SymexecUnsupported

EXHAUSTIVE_RATES = 1 << fmt.RATE_FRAC_BITS  # rates 0 .. 2^20 inclusive
SAMPLED_RATES = 1 << 20
PART_SOLVER_S = 60.0  # seconds for one function part's obligations
_CALLER_FRAME = 512  # bytes of the caller's frame (holding the input array) above a sum's stack pointer
_ARRAY_OFFSET = 64  # the input array's offset in that frame


@dataclasses.dataclass
class ProofPart:
    name: str
    status: str  # proven | exhaustive | sampled | counterexample | timeout | unsupported | failed
    seconds: float
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"part": self.name, "status": self.status, "seconds": round(self.seconds, 3), "detail": self.detail}


def _run_alone(img: ElfImage, xlen: int, symbol: str, regs: list[Any], mem: dict[int, Any] | None = None,
               summaries: dict[int, Summary] | None = None,
               clobbers: dict[int, frozenset[int]] | None = None) -> tuple[State, Result]:
    """``symbol`` executed from its entry with ``regs`` and memory overlay ``mem`` until it returns:
    its entry state and the merged run (raises SymexecUnsupported)."""
    entry = State(img.address(symbol), list(regs), dict(mem or {}), ())
    run = img.executor(xlen, summaries=summaries, clobbers=clobbers).run(State(entry.pc, list(regs), dict(mem or {}), ()), RET_SENTINEL)
    return entry, run


def _conclude(part: str, t0: float, obligations: list[tuple[str, Any]], proven: str, open_prefix: str = "not proven: ") -> ProofPart:
    """"proven" when every obligation is discharged, else the first open one's status and name."""
    still_open = first_open(obligations, time.monotonic() + PART_SOLVER_S)
    if still_open is not None:
        return ProofPart(part, still_open[1], time.monotonic() - t0, open_prefix + still_open[0])
    return ProofPart(part, "proven", time.monotonic() - t0, proven)


def sqrt_contract(img: ElfImage, xlen: int) -> ProofPart:
    """``sqrt_rate`` returns, keeps its frame and its result is a function of its argument alone."""
    t0 = time.monotonic()
    regs = img.call_registers(xlen, "sq_")
    arg = z3.BitVec("sq_rate", 32)
    regs[10] = z3.SignExt(32, arg) if xlen == 64 else arg  # as the ABI passes a uint32 (the handler proof checks it)
    try:
        entry, run = _run_alone(img, xlen, SQRT_FUNCTION, regs)
    except SymexecUnsupported as exc:
        return ProofPart("sqrt_rate contract", "unsupported", time.monotonic() - t0, str(exc))
    result = run.state.regs[10]
    returns = []
    if xlen == 64 and isinstance(result, z3.BitVecRef):  # the handler proof reads it sign-extended
        returns.append(("result returned sign-extended (RV64 ABI)", result != z3.SignExt(32, z3.Extract(31, 0, result))))
    free = {str(v) for v in free_vars(result)} if isinstance(result, z3.ExprRef) else set()
    if free - {str(arg)}:
        return ProofPart("sqrt_rate contract", "failed", time.monotonic() - t0, f"result depends on {sorted(free - {str(arg)})}")
    return _conclude("sqrt_rate contract", t0, returns + run.obligations + frame_checks(run.state, entry, xlen, img.clobbered_registers(SQRT_FUNCTION, xlen)),
                     "returns, restores sp and every register it saves, keeps every other register it does not write, stores only in its frame, result a function of the rate alone",
                     open_prefix="")


def _exact_ops() -> Z3Ops:
    """The z3 golden operations with nothing abstracted (the square root is unused here)."""
    return Z3Ops(z3.Function("unused_sqrt", z3.BitVecSort(32), z3.BitVecSort(32)))


def slog_part(img: ElfImage, xlen: int) -> ProofPart:
    """The out-of-line signed log (a derived input's state) returns ``slog_int(d)``
    (``rlcc.derived``) for every int32 ``d``, within the 21 bits the handler proof's abstraction
    gives it; it keeps its frame."""
    t0 = time.monotonic()
    d = z3.BitVec("slog_d", 32)
    regs = img.call_registers(xlen, "slog_")
    regs[10] = z3.SignExt(32, d) if xlen == 64 else d
    try:
        entry, run = _run_alone(img, xlen, SLOG_FUNCTION, regs)
    except SymexecUnsupported as exc:
        return ProofPart("signed log", "unsupported", time.monotonic() - t0, str(exc))
    r = run.state.regs[10]
    got = r if isinstance(r, z3.BitVecRef) else z3.BitVecVal(r, xlen)
    log = z3.simplify(_exact_ops().slog(z3.SignExt(32, d)))
    fits = (f"slog fits the abstraction's {SLOG_BITS} bits", log != z3.SignExt(64 - SLOG_BITS, z3.Extract(SLOG_BITS - 1, 0, log)))
    checks = [fits, ("result equals slog(d)", got != z3.Extract(xlen - 1, 0, log))]
    return _conclude("signed log", t0, checks + run.obligations + frame_checks(run.state, entry, xlen, img.clobbered_registers(SLOG_FUNCTION, xlen)),
                     f"{SLOG_FUNCTION} returns slog(d) exactly (rlcc.derived.slog_int, within {SLOG_BITS} bits, "
                     "sign-extended) for all int32 d; restores sp and every register it saves, keeps every other register it does not write")


def sum_parts(img: ElfImage, xlen: int, model: FxModel) -> list[ProofPart]:
    """The trees' and the ramps' out-of-line sums (a model with ramps), each alone; or the one sum
    of both when the firmware folds the ramps into the trees' searches."""
    cut = Abstraction.for_image(img, model)
    if cut.sums is None:
        return []
    bound = golden.sum_bound(model)

    def trees(ops: Z3Ops, x: list[Any]) -> list[Any]:
        return list(golden.tree_terms(ops, model, x)[0])

    def ramps(ops: Z3Ops, x: list[Any]) -> list[Any]:
        return list(golden.ramp_terms(ops, model, x))

    tree_out = (10, trees, "the bias plus the trees' leaves", False)
    ramp_out = (10, ramps, "the sum of the ramps' terms (each ramp exactly, on its own input)", True)
    if cut.sums.ramp_symbol is None:  # the ramps folded into the trees' searches: both sums from one call
        return [_sum_part(img, xlen, cut, "trees' and ramps' sums", cut.sums.tree_symbol, [tree_out, (11, *ramp_out[1:])], bound)]
    return [_sum_part(img, xlen, cut, "trees' sum", cut.sums.tree_symbol, [tree_out], bound),
            _sum_part(img, xlen, cut, "ramps' sum", cut.sums.ramp_symbol, [ramp_out], bound)]


def _addends(t: Any, sign: int = 1) -> list[tuple[int, Any]] | None:
    """``t`` modulo 2^32 as signed 32-bit addends (sign, term) through its additions, subtractions,
    negations, extensions and low-part extractions; None when ``t`` is narrower than 32 bits."""
    if t.size() < 32:
        return None
    kind = t.decl().kind()
    kids = t.children()
    if kind == z3.Z3_OP_BADD:
        out: list[tuple[int, Any]] = []
        for k in kids:
            sub = _addends(k, sign)
            if sub is None:
                return None
            out += sub
        return out
    if kind == z3.Z3_OP_BSUB:
        first, rest = _addends(kids[0], sign), [_addends(k, -sign) for k in kids[1:]]
        return None if first is None or any(r is None for r in rest) else first + [a for r in rest for a in r]
    if kind == z3.Z3_OP_BNEG:
        return _addends(kids[0], -sign)
    if kind in (z3.Z3_OP_SIGN_EXT, z3.Z3_OP_ZERO_EXT) and kids[0].size() >= 32:
        return _addends(kids[0], sign)
    if kind == z3.Z3_OP_EXTRACT and t.params()[1] == 0:  # the low bits: addition commutes with them
        return _addends(kids[0], sign)
    if kind == z3.Z3_OP_CONCAT and kids[-1].size() >= 32:
        return _addends(kids[-1], sign)
    if kind == z3.Z3_OP_ITE:  # if c then A + R else B + R: R + (if c then A else B), R the shared addends
        then, other = _addends(kids[1], sign), _addends(kids[2], sign)
        if then is not None and other is not None:
            shared = []
            for s, a in then:
                match = next((j for j, (s2, b) in enumerate(other) if s2 == s and a.eq(b)), None)
                if match is not None:
                    shared.append((s, a))
                    other.pop(match)
            rest = list(then)
            for s, a in shared:
                rest.pop(next(j for j, (s2, b) in enumerate(rest) if s2 == s and a.eq(b)))
            return shared + [(1, z3.If(kids[0], _total(rest), _total(other)))]
    return [(sign, z3.Extract(31, 0, t))]


def _total(addends: list[tuple[int, Any]]) -> Any:
    """The 32-bit sum of signed addends (0 for none)."""
    out: Any = z3.BitVecVal(0, 32)
    for s, a in addends:
        out = out + a if s > 0 else out - a
    return out


def _separate(got: Any, terms: list[Any]) -> list[tuple[str, Any]] | None:
    """Obligations that prove ``got`` equals the golden sum of ``terms`` modulo 2^32 piece by piece,
    when each golden term reads one input (a ramp): the inputs are grouped so that every firmware
    addend reads inputs of one group only (an addend reading several inputs, where the compiler
    interleaved two ramps, joins their groups), and each golden term goes to its input's group.
    For each group, its addends minus its terms is proven the same for every value of its inputs as
    for zero, and at all-zero inputs the two whole sums agree; so the whole difference equals its
    value at zero everywhere: zero. None (one proof of the whole instead) when there are not two
    groups."""
    mine = _addends(got)
    low = lambda t: z3.Extract(31, 0, t)  # noqa: E731
    if mine is None or any(len(free_vars(t)) != 1 for t in terms):
        return None
    pieces = [(a, sorted(str(v) for v in free_vars(a))) for a in [a if s > 0 else -a for s, a in mine]]
    pieces += [(-low(t), [str(v) for v in free_vars(t)]) for t in terms]
    group = {v: v for _, vs in pieces for v in vs}  # union-find over input names

    def root(v: str) -> str:
        while group[v] != v:
            v = group[v]
        return v

    for _, vs in pieces:
        for v in vs[1:]:
            group[root(v)] = root(vs[0])
    groups: dict[str, list[Any]] = {}
    for a, vs in pieces:
        if vs:  # a constant: the all-zero check covers it
            groups.setdefault(root(vs[0]), []).append(a)
    if len(groups) < 2:
        return None
    names = {r: ", ".join(sorted(v for v in group if root(v) == r)) for r in groups}
    zero = lambda e: z3.substitute(e, *[(v, z3.BitVecVal(0, v.size())) for v in free_vars(e)])  # noqa: E731
    out = []
    for key, parts in groups.items():
        diff = z3.simplify(sum(parts[1:], parts[0]))
        out.append((f"the terms on {names[key]} equal their golden terms", diff != zero(diff)))
    total = z3.simplify(zero(low(got) - sum((low(t) for t in terms), z3.BitVecVal(0, 32))))
    out.append(("the sums agree at all-zero inputs", total != 0))
    return out


SumOutput = tuple[int, Callable[[Z3Ops, list[Any]], list[Any]], str, bool]  # register, golden terms, what, separate


def _sum_part(img: ElfImage, xlen: int, cut: Abstraction, part: str, symbol: str, outputs: list[SumOutput],
              bound: int) -> ProofPart:
    """An out-of-line partial sum, symbolically alone: called with a pointer to an array of free
    input words in the caller's frame (or with the words in the argument registers,
    ``Sums.in_registers``), every other byte around it unknown, it returns in each
    output's register the golden 32-bit sum of its terms for all words, so its results depend on
    the array alone, which is what its abstraction in the handler assumes; it stores only below
    its stack pointer and restores sp and the callee-saved registers. An output marked
    ``separate`` has terms that each read their own input (the ramps): it is proven term by term
    (``_separate``), each a one-input proof instead of one over all inputs at once."""
    t0 = time.monotonic()
    assert cut.sums is not None
    tag = part.split("'")[0].replace(" ", "_")
    n, bits = cut.sums.n_inputs, cut.sums.fns.input_bits
    sp = img.machine.stack_top - _CALLER_FRAME
    base = sp + _ARRAY_OFFSET
    words = [z3.BitVec(f"{tag}_x{i}", bits) for i in range(n)]
    mem: dict[int, Any] = {a: z3.BitVec(f"{tag}_unknown_{a - sp}", 8) for a in range(sp - _CALLER_FRAME, img.machine.stack_top)}
    for i, w in enumerate(words):
        for b in range(bits // 8):
            mem[base + i * bits // 8 + b] = z3.Extract(8 * b + 7, 8 * b, w)
    regs = img.call_registers(xlen, f"{tag}_", sp=sp)
    if cut.sums.fns.inputs is not None:  # the inputs it reads in a0, a1, ... (sign-extended on RV64: the ABI's int32)
        for k, i in enumerate(cut.sums.fns.inputs):
            regs[10 + k] = z3.SignExt(xlen - bits, words[i]) if xlen > bits else words[i]
    else:
        regs[10] = base
    summaries = {a: f for a, f in cut.summaries(img, xlen).items() if a != img.address(symbol)}
    try:
        entry, run = _run_alone(img, xlen, symbol, regs, mem, summaries, cut.clobbers(img, xlen))
    except SymexecUnsupported as exc:
        return ProofPart(part, "unsupported", time.monotonic() - t0, str(exc))
    side: list[tuple[str, Any]] = []
    ops = Z3Ops(_exact_ops().sqrt_fn, obligations=side)
    as_bv = lambda t: t if isinstance(t, z3.ExprRef) else z3.BitVecVal(int(t), 64)  # noqa: E731 - a constant term
    caller = [a for a in run.state.mem if a >= sp and not _same_byte(run.state.mem[a], mem.get(a))]
    if caller:
        return ProofPart(part, "failed", time.monotonic() - t0, f"stores into its caller's frame at {min(caller):#x}")
    checks = []
    for reg, terms_of, what, separate in outputs:
        terms = [as_bv(t) for t in terms_of(ops, [z3.SignExt(64 - bits, w) if bits < 64 else w for w in words])]
        want = z3.simplify(ops.add_terms(terms, bound))
        r = run.state.regs[reg]
        got = r if isinstance(r, z3.BitVecRef) else z3.BitVecVal(r, xlen)
        name = "result" if len(outputs) == 1 else f"x{reg}"
        pieces = _separate(got, terms) if separate and bound < 2**31 else None
        if pieces is None:
            checks.append((f"{name} equals {what}", got != z3.Extract(xlen - 1, 0, want)))
        else:  # the low 32 bits piece by piece; on RV64 the register is their sign extension, as the int32 sum's
            wide = [(f"{name} is a sign-extended int32", got != z3.SignExt(32, z3.Extract(31, 0, got)))] if xlen == 64 else []
            checks += [(f"{name} equals {what}: {d}", f) for d, f in pieces] + wide
    returns = ("returns " + outputs[0][2] if len(outputs) == 1 else
               "returns " + " and ".join(f"{what} in x{reg}" for reg, _, what, _ in outputs))
    return _conclude(part, t0, checks + side + run.obligations + frame_checks(run.state, entry, xlen, img.clobbered_registers(symbol, xlen)),
                     f"{symbol} {returns} (int32, sign-extended) for all {n} input words, reads nothing else; "
                     "stores only in its frame, restores sp and every register it saves, keeps every other register it does not write")


def _same_byte(a: Any, b: Any) -> bool:
    if isinstance(a, int) or isinstance(b, int) or b is None:
        return isinstance(a, int) and isinstance(b, int) and a == b
    return a.eq(b)


def _call_loop() -> bytes:
    """for (s0 = first; s0 != s1; s0++) { *s2++ = f(s0); } ebreak  (s3 = f)."""
    return rv_asm.assemble([
        rv_asm.addi(10, 8, 0),  # mv a0, s0
        rv_asm.jalr(1, 19, 0),  # jalr ra, 0(s3)
        rv_asm.sw(10, 18, 0),  # sw a0, 0(s2)
        rv_asm.addi(18, 18, 4),  # addi s2, s2, 4
        rv_asm.addi(8, 8, 1),  # addi s0, s0, 1
        rv_asm.bne(8, 9, -20),  # bne s0, s1, loop
        rv_asm.EBREAK,
    ])
def sqrt_in_emulator(img: ElfImage, rates: np.ndarray, xlen: int) -> np.ndarray:
    """``sqrt_rate`` of the ELF for consecutive runs of ``rates`` (called through a small loop)."""
    m = img.machine
    fn = img.address(SQRT_FUNCTION)
    loop = img.scratch
    out_base = img.scratch + 64
    chunk = max(1, (m.stack_top - STACK_BYTES - out_base - 4096) // 4)
    chunk = min(chunk, 1 << 16)
    results = np.empty(len(rates), dtype=np.uint32)
    m.write_mem(m.mem_base, img.image)
    m.write_mem(loop, _call_loop())
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


def sqrt_values(img: ElfImage, xlen: int, sampled: int, seed: int) -> ProofPart:
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


def reachable_rates(model: FxModel) -> ProofPart:
    """From a context with rate <= 2^20 every event leaves a rate in [rate_min, 2^20] (golden, z3)."""
    t0 = time.monotonic()
    sqrt_fn = z3.Function("sqrt_rate", z3.BitVecSort(32), z3.BitVecSort(32))
    ctx = [z3.BitVec(f"ctx{i}", 32) for i in range(fmt.CTX_WORDS)]
    ev = [z3.BitVec(f"ev{i}", 32) for i in range(fmt.EVENT_WORDS)]
    # any slog and any ramp terms (within their bits): sound for "every event"
    out = symbolic_event(model, ctx, ev, sqrt_fn, slog_fn=slog_function(), ramp_fns=ramp_functions(model) or None)
    lo = min(model.constants.rate_min, model.constants.rate_initial)
    bad = z3.Or(z3.ULT(out.rate, lo), z3.UGT(out.rate, fmt.RATE_MAX))
    verdict, _ = solve([z3.ULE(ctx[fmt.CTX_RATE], fmt.RATE_MAX), z3.Or(ctx[fmt.CTX_RATE] == 0, z3.UGE(ctx[fmt.CTX_RATE], lo)), bad],
                        time.monotonic() + 60)
    status = {"unsat": "proven", "unknown": "timeout"}.get(verdict, "failed")
    return ProofPart("reachable rates", status, time.monotonic() - t0,
                     f"every event maps a context with rate 0 or in [{lo}, 2^20] to a rate in [{lo}, 2^20]")
