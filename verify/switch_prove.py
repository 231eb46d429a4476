"""``rlcc-verify --prove`` for switch-agent firmware: the per-queue decision equals the golden
agent for all inputs.

``sw_agent_on_interval`` (the entry point the SDK's dispatcher calls per queue) is executed
symbolically (``rlcc.verify.symexec``) in the switch harness ELF, from the RAM image after the
harness's start-up, with every input symbolic: the three u32 statistics, ``util_mul``, all 32
context words (the window's history and the template index in force), port and queue, and the
ECN output holding unknown bytes (the firmware must write all of it); ``trace`` is NULL, as the
dispatcher passes it. Against the z3 twin of the golden agent
(``rlcc.verify.switch_symbolic_golden``) it proves for all inputs: the returned action, the
written ECN template (kmin, kmax, pmax_q16) and every context word equal the golden model's; no
store outside the context, the ECN output and the stack; no load outside code, read-only data,
the inputs and the stack, and every table load aligned and inside its table; sp and the
callee-saved registers restored; on RV64 the u32 result returned sign-extended (ABI).

**Precondition.** The generated C drops a split whose threshold is at or above its feature's
maximum (never true for a value the firmware produces, ``codegen.switch_generate``), while the
golden model compares whatever the context holds. When such a split reads a history word or the
template index, the proof assumes the context words of the bounded features (utilizations <= 1.0
in Q16, template indices < n_actions) are in range, and proves that this range is an invariant:
the bring-up context is in it and every decision from a context in it leaves one in it. Without
such splits the proof is unconditional (any context, any template index).

A satisfying assignment is replayed in the emulator (the harness, one decision) and in the numpy
golden agent; an input where the two differ is the counterexample.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import z3
from elftools.elf.elffile import ELFFile

from rlcc.class_trees import ClassEnsemble
from rlcc.emulator import Machine
from rlcc.emulator.cycle_model import Profile, load_profile
from rlcc.errors import RlccError
from rlcc.firmware_sdk_stub import switch_layout as sl
from rlcc.fxp import switch_vectors as sv
from rlcc.fxp.switch_agent import initial_window
from rlcc.switch_spec import STAT_MAX, SwitchAgentSpec
from rlcc.targets import get_target
from rlcc.verify.prove import RET_SENTINEL, _fresh_regs, _frame_checks, _solve, _word
from rlcc.verify.switch_symbolic_golden import symbolic_decision
from rlcc.verify.symexec import Executor, Region, State, SymexecUnsupported

ENTRY_SYMBOL = "sw_agent_on_interval"
DEFAULT_TIMEOUT_S = 120.0
_STACK_BYTES = 64 * 1024  # only for an ELF without __stack_bottom/__stack_top
_CTX_BYTES = 4 * sl.CTX_WORDS
# scratch layout inside the harness's input table (RAM the decision never touches)
_CTX_OFF, _STATS_OFF, _INFO_OFF, _ECN_OFF = 0, 256, 320, 384


@dataclasses.dataclass
class SwitchProofResult:
    status: str  # proved | counterexample | timeout | unsupported | failed
    seconds: float
    paths: int
    steps: int
    detail: str
    precondition: str | None  # what the proof assumes of the context (None: nothing)
    invariant: str | None  # the precondition's inductiveness, when there is one
    proven: list[str]
    open: list[str]
    side_conditions: int
    counterexample: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "seconds": round(self.seconds, 3), "paths": self.paths, "steps": self.steps,
                "detail": self.detail, "precondition": self.precondition, "invariant": self.invariant,
                "proven": self.proven, "open": self.open, "side_conditions": self.side_conditions,
                "counterexample": self.counterexample}

    def summary(self) -> str:
        return proof_line(self.to_dict())


def proof_line(d: dict[str, Any]) -> str:
    """The one-line summary of a proof result (its ``to_dict()``)."""
    if d["status"] == "proved":
        pre = f" (precondition: {d['precondition']}; {d['invariant']})" if d["precondition"] else " (no precondition)"
        return f"proof: PROVED equal to the golden agent for all inputs{pre}; {d['paths']} path(s), {d['seconds']:.1f} s"
    if d["status"] == "counterexample":
        c = d["counterexample"] or {}
        if "expected" not in c:
            return f"proof: COUNTEREXAMPLE ({d['detail']}): {c.get('fault', '')}"
        i, e, g = c["inputs"], c["expected"], c["got"]
        return (f"proof: COUNTEREXAMPLE ({d['detail']}), reproduced in the emulator: qlen_bytes {i['qlen_bytes']}, "
                f"tx_bytes {i['tx_bytes']}, marked_pkts {i['marked_pkts']}, util_mul {i['util_mul']}, "
                f"ctx {i['ctx_in'][:1 + 8]}...: golden action {e['action']} ecn {e['ecn']}, "
                f"firmware action {g['action']} ecn {g['ecn']}")
    return f"proof: not proven ({d['status']}: {d['detail']}; {d['seconds']:.1f} s)"


@dataclasses.dataclass
class _Image:
    elf: Path
    machine: Machine
    image: bytes
    symbols: dict[str, int]
    regions: list[Region]
    scratch: int
    gp: int
    tp: int


def _load_after_start(elf: Path, xlen: int, profile: str | Profile, zbb: bool | None) -> _Image:
    """The switch harness ELF in the emulator after its start-up (an empty decision table)."""
    m = Machine(xlen=xlen, profile=load_profile(profile), zbb=zbb)
    loaded = m.load_elf(elf)
    in_addr, in_size = sl.table_symbols(elf)[sl.SYM_IN]
    m.write_mem(in_addr, sl.pack_input(sl.new_records(0)))
    m.pc = loaded.entry
    m.set_reg(2, m.stack_top)
    m.run(max_instructions=10_000_000)
    symbols: dict[str, int] = {}
    regions: list[Region] = []
    with open(elf, "rb") as fh:
        f = ELFFile(fh)
        for sec in f.iter_sections():
            if sec.name.startswith((".text", ".rodata", ".srodata")) and sec["sh_size"]:
                regions.append(Region(sec["sh_addr"], sec["sh_addr"] + sec["sh_size"], sec.name))
        tab = f.get_section_by_name(".symtab")
        for s in tab.iter_symbols() if tab else ():
            if s.name and s["st_value"]:
                symbols.setdefault(s.name, s["st_value"])
    bottom, top = m.stack_bounds or (m.stack_top - _STACK_BYTES, m.stack_top)
    regions.append(Region(bottom, top, "stack", writable=True))
    scratch = (in_addr + sl.IN_HEADER_SIZE + 63) & ~63
    assert scratch + 512 <= in_addr + in_size
    return _Image(elf, m, m.read_mem(m.mem_base, m.mem_size), symbols, regions, scratch, m.reg(3), m.reg(4))


def range_precondition(spec: SwitchAgentSpec, model: ClassEnsemble) -> dict[int, int]:
    """{context word: its maximum} the proof must assume: the bounded features' history words and
    the template index, when the C drops a split (threshold >= the feature's maximum) that reads
    one of them; {} otherwise."""
    fmax = [int(v) for v in spec.feature_max()]
    hw, F = sv.hist_words(spec), spec.n_features
    bounded = {f for f in range(F) if fmax[f] < STAT_MAX}
    action_f = spec.features.index("ecn_action") if "ecn_action" in spec.features else None

    def from_context(i: int) -> bool:  # window input i holds a context word
        return i < hw or (action_f is not None and i == hw + action_f)

    dropped = any(s.threshold >= fmax[s.input % F] and s.input % F in bounded and from_context(s.input)
                  for t in model.trees for s in t.splits)
    if not dropped:
        return {}
    words = {sv.CTX_HIST + k: fmax[k % F] for k in range(hw) if k % F in bounded}
    if action_f is not None:
        words[sv.CTX_ACTION] = spec.n_actions - 1
    return words


def _in_range(words: list[Any], bounds: dict[int, int]) -> Any:
    return z3.And(*[z3.ULE(words[w], hi) for w, hi in sorted(bounds.items())]) if bounds else z3.BoolVal(True)


def _describe(spec: SwitchAgentSpec, bounds: dict[int, int]) -> str | None:
    if not bounds:
        return None
    parts = [f"ctx[{sv.CTX_ACTION}] (template index) < {spec.n_actions}"] if sv.CTX_ACTION in bounds else []
    hist = sorted(w for w in bounds if w != sv.CTX_ACTION)
    if hist:
        parts.append(f"history words {', '.join(f'ctx[{w}]' for w in hist)} <= their feature's maximum")
    return "; ".join(parts) + " (values the firmware itself writes; it omits never-true splits)"


def prove_switch_firmware(elf: Path, spec: SwitchAgentSpec, model: ClassEnsemble, target: str,
                          timeout_s: float = DEFAULT_TIMEOUT_S, profile: str | Profile | None = None,
                          zbb: bool | None = None) -> SwitchProofResult:
    """Prove (or refute) that ``elf``'s ``sw_agent_on_interval`` computes the golden decision."""
    t0 = time.monotonic()
    t = get_target(target)
    xlen = t.xlen
    img = _load_after_start(Path(elf), xlen, profile or t.default_profile, bool(zbb) and t.zbb_capable)
    bounds = range_precondition(spec, model)
    pre_text = _describe(spec, bounds)

    def result(status: str, detail: str, **kw: Any) -> SwitchProofResult:
        base = dict(paths=0, steps=0, precondition=pre_text, invariant=None, proven=[], open=[], side_conditions=0)
        base.update(kw)
        return SwitchProofResult(status, time.monotonic() - t0, detail=detail, **base)

    if ENTRY_SYMBOL not in img.symbols:
        return result("unsupported", f"no '{ENTRY_SYMBOL}' in the ELF")
    ctx_a, st_a, info_a, ecn_a = (img.scratch + o for o in (_CTX_OFF, _STATS_OFF, _INFO_OFF, _ECN_OFF))
    regions = img.regions + [Region(ctx_a, ctx_a + _CTX_BYTES, "context", writable=True),
                             Region(st_a, st_a + 12, "stats"), Region(info_a, info_a + 4, "port info"),
                             Region(ecn_a, ecn_a + 12, "ecn", writable=True)]
    ex = Executor(img.image, img.machine.mem_base, xlen, regions)
    ctx = [z3.BitVec(f"ctx{i}", 32) for i in range(sl.CTX_WORDS)]
    qlen, tx, marked, util_mul = (z3.BitVec(n, 32) for n in ("qlen_bytes", "tx_bytes", "marked_pkts", "util_mul"))
    mem: dict[int, Any] = {}
    for base, words in ((ctx_a, ctx), (st_a, [qlen, tx, marked]), (info_a, [util_mul])):
        for i, w in enumerate(words):
            for b in range(4):
                mem[base + 4 * i + b] = z3.Extract(8 * b + 7, 8 * b, w)
    for b in range(12):
        mem[ecn_a + b] = z3.BitVec(f"ecn_garbage{b}", 8)
    regs = _fresh_regs(xlen, "in_")
    regs[1], regs[2], regs[3], regs[4] = RET_SENTINEL, img.machine.stack_top, img.gp, img.tp
    regs[12], regs[13], regs[14], regs[15], regs[16] = ctx_a, st_a, info_a, ecn_a, 0  # a2..a6; a0/a1 port, queue free
    entry = State(img.symbols[ENTRY_SYMBOL], regs, mem, ())
    try:
        run = ex.run(State(entry.pc, list(regs), dict(mem), ()), RET_SENTINEL)
    except SymexecUnsupported as exc:
        return result("unsupported", str(exc))
    fin = run.state
    ret = fin.regs[10]
    ret = ret if isinstance(ret, z3.BitVecRef) else z3.BitVecVal(ret, xlen)
    fw = {"action": z3.Extract(31, 0, ret)}
    for k, name in enumerate(("kmin_bytes", "kmax_bytes", "pmax_q16")):
        fw[f"ecn.{name}"] = _word(fin, ex, ecn_a + 4 * k)
    for i in range(sl.CTX_WORDS):
        fw[f"ctx[{i}]"] = _word(fin, ex, ctx_a + 4 * i)
    gold = symbolic_decision(spec, model, ctx, qlen, tx, marked, util_mul)
    want = {"action": gold.action, **{f"ecn.{n}": v for n, v in zip(("kmin_bytes", "kmax_bytes", "pmax_q16"), gold.ecn)},
            **{f"ctx[{i}]": v for i, v in enumerate(gold.ctx)}}
    pre = _in_range(ctx, bounds)
    side = run.obligations + _frame_checks(fin, entry, xlen)
    if xlen == 64:
        side.append(("u32 result returned sign-extended (RV64 ABI)", ret != z3.SignExt(32, z3.Extract(31, 0, ret))))
    deadline = t0 + timeout_s
    common = dict(paths=run.paths, steps=run.steps, side_conditions=len(side))
    for desc, formula in side:
        verdict, _ = _solve([pre, formula], deadline)
        if verdict != "unsat":
            return result("timeout" if verdict == "unknown" else "failed", f"side condition not proven: {desc}", **common)
    invariant = None
    if bounds:
        init = initial_window(spec, 1)[0]
        init_ctx = [0] * sl.CTX_WORDS
        init_ctx[sv.CTX_ACTION] = spec.initial_action
        init_ctx[sv.CTX_HIST : sv.CTX_HIST + sv.hist_words(spec)] = init[spec.n_features:].tolist()
        if any(init_ctx[w] > hi for w, hi in bounds.items()):
            return result("failed", "the bring-up context violates the precondition", **common)
        verdict, _ = _solve([pre, z3.Not(_in_range(gold.ctx, bounds))], deadline)
        if verdict != "unsat":
            return result("timeout" if verdict == "unknown" else "failed", "precondition not proven invariant", **common)
        invariant = "invariant proven: holds at bring-up and after every decision"
    # The action first: once proven, it is a fact that makes the template and the context's
    # template index immediate.
    order = ["action"] + [k for k in fw if k != "action"]
    proven: list[str] = []
    facts: list[Any] = [pre]
    for k in order:
        f, g = z3.simplify(fw[k]), z3.simplify(want[k])
        if f.eq(g):
            proven.append(k)
            continue
        verdict, m = _solve([f != g, *facts], deadline)
        if verdict == "unsat":
            proven.append(k)
            facts.append(f == g)
            continue
        if verdict == "sat":
            cex = _replay(img, spec, model, m, ctx, qlen, tx, marked, util_mul, xlen)
            if cex is not None:
                return result("counterexample", f"{k} differs", proven=proven, counterexample=cex, invariant=invariant,
                              **common)
            return result("failed", f"{k}: the solver's difference does not reproduce in the emulator (prover bug?)",
                          proven=proven, invariant=invariant, **common)
        return result("timeout", f"timeout after {timeout_s:g} s at {k}", proven=proven, invariant=invariant,
                      open=[x for x in order if x not in proven], **common)
    return result("proved", f"action, ECN template and all {sl.CTX_WORDS} context words equal for all inputs; "
                  f"{len(side)} side conditions (table bounds, frame, ABI) proven", proven=proven, invariant=invariant,
                  **common)


def _replay(img: _Image, spec: SwitchAgentSpec, model: ClassEnsemble, m: Any, ctx: list[Any], qlen: Any, tx: Any,
            marked: Any, util_mul: Any, xlen: int) -> dict[str, Any] | None:
    """The model's input as one record, run in the emulator and in the numpy golden agent; the
    record and both outputs when they differ, else None."""
    from rlcc.verify.switch_check import _example, mismatches, to_records
    from rlcc.verify.switch_run import SwitchRunner

    val = lambda e: m.eval(e, model_completion=True).as_long()  # noqa: E731
    ctx_in = np.array([[val(w) for w in ctx]], np.int64)
    v = sv.expected(spec, model, ctx_in, [val(qlen)], [val(tx)], [val(marked)], [val(util_mul)], [0], ["proof"])
    runner = SwitchRunner(img.elf, xlen, img.machine.profile, zbb=img.machine.zbb)
    try:
        out = runner.run(to_records(v))
    except RlccError as exc:
        return {"inputs": {"ctx_in": ctx_in[0].tolist()}, "fault": str(exc)}
    bad = mismatches(v, out, model.n_classes)
    return _example(v, 0, out, model.n_classes) if len(bad) else None
