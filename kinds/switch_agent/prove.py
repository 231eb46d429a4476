"""``rlcc-verify --prove`` for switch-agent firmware: the per-queue decision equals the golden
agent for all inputs.

``sw_agent_on_interval`` (the entry point the SDK's dispatcher calls per queue) is executed
symbolically (``rlcc.verify.symexec``) in the switch harness ELF, from the RAM image after the
harness's start-up, with every input symbolic: the three u32 statistics, ``util_mul``, all 32
context words (the window's history and the template index in force), port and queue, and the
ECN output holding unknown bytes (the firmware must write all of it); ``trace`` is NULL, as the
dispatcher passes it. Against the z3 twin of the golden agent
(``rlcc.kinds.switch_agent.symbolic_golden``) it proves for all inputs: the returned action, the
written ECN template (kmin, kmax, pmax_q16) and every context word equal the golden model's; no
store outside the context, the ECN output and the stack; no load outside code, read-only data,
the inputs and the stack, and every table load aligned and inside its table; sp and the
callee-saved registers restored; on RV64 the u32 result returned sign-extended (ABI).

**Decomposition (what makes 10 trees of depth 4 cheap).** A load of the classifier's leaf tables
is a load from a symbolic address; read as a multiplexer over the table it leaves the solver
sums of 16-way choices to compare per class, and the argmax over them. Instead the proof has
three parts:

1. *Addresses.* A load (4 bytes) whose address, evaluated at one input, falls in tree t's table
   ``*_leaves_t`` at class c's column returns ``leaf_t_c(idx_t)`` (an uninterpreted function of
   the golden leaf index, the depth-bit concatenation of the golden split bits) and adds the
   side condition ``address == &leaves_t[0][c] + 4 * n_classes * idx_t`` on its path, for all
   inputs: comparisons only, and it implies the load is aligned and inside the table.
2. *Tables.* Each tree's ``*_leaves_t`` lies in the ELF's read-only data (which the executor
   never lets the function store to) and its bytes are the model's leaves, checked concretely.
   A tree whose table fails this check is not abstracted: its loads stay multiplexers over the
   table's bytes and its golden rows multiplexers over the model's leaves (so a wrong table is
   refuted with a counterexample, not merely unproven).
3. *Outputs.* The golden model's rows are the same ``leaf_t_c(idx_t)`` terms, and the action,
   template and context are proven equal for every interpretation of the ``leaf_t_c``: after
   simplification both score sums are the same terms, so the argmax is a congruence problem.

They compose: under the interpretation ``leaf_t_c(i) = leaves[i][c]`` the firmware's load returns
what memory holds at the proven address (1, 2), and the golden rows are the model's leaves, so a
proof for all interpretations is one for the real firmware and model. A satisfying assignment
under the abstraction may be spurious (it may pick leaf values the tables do not hold): it is
replayed in the emulator, and when it does not reproduce (or an address does not match), the
proof is redone with every leaf load a multiplexer over its table's contents.

**Precondition.** The generated C drops a split whose threshold is at or above its feature's
maximum (never true for a value the firmware produces, ``rlcc.kinds.switch_agent.codegen``), while the
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

from rlcc.class_trees import ClassEnsemble
from rlcc.emulator.cycle_model import Profile
from rlcc.errors import RlccError
from rlcc.firmware_sdk_stub import switch_layout as sl
from rlcc.kinds.switch_agent import vectors as sv
from rlcc.fxp.switch_agent import initial_window
from rlcc.switch_spec import STAT_MAX, SwitchAgentSpec
from rlcc.targets import get_target
from rlcc.verify.prove_image import RET_SENTINEL, ElfImage, frame_checks, load_after_start, word
from rlcc.verify.prove_solver import solve
from rlcc.kinds.switch_agent.symbolic_golden import leaf_index, symbolic_decision
from rlcc.verify.symexec import Region, State, SymexecUnsupported, path_formula
from rlcc.kinds.switch_agent.records import example, mismatches, to_records
from rlcc.kinds.switch_agent.firmware_run import SwitchRunner

ENTRY_SYMBOL = "sw_agent_on_interval"
DEFAULT_TIMEOUT_S = 120.0
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


def _load_after_start(elf: Path, xlen: int, profile: str | Profile, zbb: bool | None) -> ElfImage:
    """The switch harness ELF in the emulator after its start-up (an empty decision table); the
    proof's scratch RAM is the start of the table's records."""
    in_addr, in_size = sl.table_symbols(elf)[sl.SYM_IN]
    scratch = (in_addr + sl.IN_HEADER_SIZE + 63) & ~63
    assert scratch + 512 <= in_addr + in_size
    return load_after_start(elf, xlen, profile, zbb, in_addr, sl.pack_input(sl.new_records(0)), scratch)


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
    """Prove (or refute) that ``elf``'s ``sw_agent_on_interval`` computes the golden decision:
    first with the leaf tables abstracted (see the module docstring), then, when that does not
    conclude, with the tables' contents."""
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
    deadline = t0 + timeout_s
    tables = _leaf_tables(img, model)
    if tables:
        first = _attempt(img, spec, model, xlen, bounds, deadline, timeout_s, result, tables)
        if first.status in ("proved", "counterexample", "timeout"):
            return first
    return _attempt(img, spec, model, xlen, bounds, deadline, timeout_s, result, None)


def _leaf_tables(img: ElfImage, model: ClassEnsemble) -> dict[int, int]:
    """{tree: its leaf table's address} for the trees with splits whose table (one symbol
    ``*_leaves_t``) is in the ELF's read-only data and holds the model's leaves (part 2 of the
    proof). A tree left out (a wrong table, say) keeps multiplexers on both sides."""
    stride = 4 * model.n_classes
    out: dict[int, int] = {}
    for t, tree in enumerate(model.trees):
        hits = [a for name, (a, _) in img.symbols.items() if name.endswith(f"_leaves_{t}")]
        if not tree.splits or len(hits) != 1:
            continue
        base, size = hits[0], stride * len(tree.leaves)
        if not any(r.lo <= base and base + size <= r.hi and not r.writable and r.name != "stack" for r in img.regions):
            continue
        off = base - img.machine.mem_base
        raw = np.frombuffer(img.image[off : off + size], dtype="<i4").reshape(len(tree.leaves), model.n_classes)
        if raw.tolist() == [list(r) for r in tree.leaves]:
            out[t] = base
    return out


def _attempt(img: ElfImage, spec: SwitchAgentSpec, model: ClassEnsemble, xlen: int, bounds: dict[int, int],
             deadline: float, timeout_s: float, result: Any, tables: dict[int, int] | None) -> SwitchProofResult:
    """One proof; with ``tables``, the leaf loads and the golden rows abstracted (an attempt that
    cannot conclude that way returns "failed" or "unsupported", and the caller retries without)."""
    ctx_a, st_a, info_a, ecn_a = (img.scratch + o for o in (_CTX_OFF, _STATS_OFF, _INFO_OFF, _ECN_OFF))
    regions = img.regions + [Region(ctx_a, ctx_a + _CTX_BYTES, "context", writable=True),
                             Region(st_a, st_a + 12, "stats"), Region(info_a, info_a + 4, "port info"),
                             Region(ecn_a, ecn_a + 12, "ecn", writable=True)]
    ctx = [z3.BitVec(f"ctx{i}", 32) for i in range(sl.CTX_WORDS)]
    qlen, tx, marked, util_mul = (z3.BitVec(n, 32) for n in ("qlen_bytes", "tx_bytes", "marked_pkts", "util_mul"))
    garbage = [z3.BitVec(f"ecn_garbage{b}", 8) for b in range(12)]
    mem: dict[int, Any] = {}
    for base, words in ((ctx_a, ctx), (st_a, [qlen, tx, marked]), (info_a, [util_mul])):
        for i, w in enumerate(words):
            for b in range(4):
                mem[base + 4 * i + b] = z3.Extract(8 * b + 7, 8 * b, w)
    for b in range(12):
        mem[ecn_a + b] = garbage[b]
    regs = img.call_registers(xlen, "in_")
    inputs = ctx + [qlen, tx, marked, util_mul] + garbage + [r for r in regs[1:] if not isinstance(r, int)]
    regs[12], regs[13], regs[14], regs[15], regs[16] = ctx_a, st_a, info_a, ecn_a, 0  # a2..a6; a0/a1 port, queue free
    if tables is not None and any(r.writable and r.lo < base + 4 * model.n_classes * len(model.trees[t].leaves)
                                  and base < r.hi for r in regions for t, base in tables.items()):
        return result("failed", "a leaf table overlaps writable memory")
    rows: dict[tuple[int, int], Any] = {}

    def row(t: int, tree: Any, x: list[Any], c: int) -> Any:
        """Tree ``t``'s leaf of class ``c`` as an uninterpreted table read (None: read the leaf itself)."""
        if tables is None or t not in tables:
            return None
        idx = leaf_index(tree, x)
        fn = rows.setdefault((t, c), z3.Function(f"leaf_{t}_{c}", z3.BitVecSort(idx.size()), z3.BitVecSort(32)))
        return fn(idx)

    gold = symbolic_decision(spec, model, ctx, qlen, tx, marked, util_mul, row if tables is not None else None)
    hook = _leaf_hook(model, tables, gold.window, rows, inputs, xlen) if tables is not None else None
    ex = img.executor(xlen, regions, load_hook=hook, paired_products=False)
    entry = State(img.address(ENTRY_SYMBOL), regs, mem, ())
    try:
        run = ex.run(State(entry.pc, list(regs), dict(mem), ()), RET_SENTINEL)
    except SymexecUnsupported as exc:
        return result("unsupported", str(exc))
    fin = run.state
    ret = fin.regs[10]
    ret = ret if isinstance(ret, z3.BitVecRef) else z3.BitVecVal(ret, xlen)
    fw = {"action": z3.Extract(31, 0, ret)}
    for k, name in enumerate(("kmin_bytes", "kmax_bytes", "pmax_q16")):
        fw[f"ecn.{name}"] = word(fin, ex, ecn_a + 4 * k)
    for i in range(sl.CTX_WORDS):
        fw[f"ctx[{i}]"] = word(fin, ex, ctx_a + 4 * i)
    want = {"action": gold.action, **{f"ecn.{n}": v for n, v in zip(("kmin_bytes", "kmax_bytes", "pmax_q16"), gold.ecn)},
            **{f"ctx[{i}]": v for i, v in enumerate(gold.ctx)}}
    pre = _in_range(ctx, bounds)
    side = run.obligations + frame_checks(fin, entry, xlen)
    if xlen == 64:
        side.append(("u32 result returned sign-extended (RV64 ABI)", ret != z3.SignExt(32, z3.Extract(31, 0, ret))))
    common = dict(paths=run.paths, steps=run.steps, side_conditions=len(side))
    order = ["action"] + [k for k in fw if k != "action"]
    replay = lambda m: _replay(img, spec, model, m, ctx, qlen, tx, marked, util_mul, xlen)  # noqa: E731
    for desc, formula in side:
        verdict, m = _solve([pre, formula], deadline)
        if verdict == "sat" and tables is not None:
            cex = replay(m)
            if cex is not None:
                return result("counterexample", f"{desc} violated", counterexample=cex, **common)
        if verdict != "unsat":
            return result("timeout" if verdict == "unknown" else "failed", f"side condition not proven: {desc}",
                          open=order, **common)
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
            return result("timeout" if verdict == "unknown" else "failed", "precondition not proven invariant",
                          open=order, **common)
        invariant = "invariant proven: holds at bring-up and after every decision"
    # The action first: once proven, it is a fact (valid, so only a hint) that makes the template
    # and the context's template index immediate; the other outputs do without it (its terms
    # would only burden the solver).
    of_action = {k for k in fw if k.startswith("ecn.")} | {f"ctx[{sv.CTX_ACTION}]"}
    proven: list[str] = []
    facts: list[Any] = []
    for k in order:
        f, g = z3.simplify(fw[k]), z3.simplify(want[k])
        if f.eq(g):
            proven.append(k)
            continue
        verdict, m = _solve([f != g, pre, *(facts if k in of_action else [])], deadline)
        if verdict == "unsat":
            proven.append(k)
            if k == "action":
                facts.append(f == g)
            continue
        if verdict == "sat":
            cex = replay(m)
            if cex is not None:
                return result("counterexample", f"{k} differs", proven=proven, counterexample=cex, invariant=invariant,
                              **common)
            return result("failed", f"{k}: the solver's difference does not reproduce in the emulator"
                          + (" (abstract leaves)" if tables is not None else " (prover bug?)"),
                          proven=proven, invariant=invariant, **common)
        return result("timeout", f"timeout after {timeout_s:g} s at {k}", proven=proven, invariant=invariant,
                      open=[x for x in order if x not in proven], **common)
    how = (f"{len(tables)} of {len(model.trees)} leaf table(s) checked, their loads abstracted at proven addresses"
           if tables is not None else "leaf tables by content")
    return result("proved", f"action, ECN template and all {sl.CTX_WORDS} context words equal for all inputs ({how}); "
                  f"{len(side)} side conditions (table bounds, leaf addresses, frame, ABI) proven", proven=proven,
                  invariant=invariant, **common)


def _solve(formulas: list[Any], deadline: float) -> tuple[str, Any]:
    return solve(formulas, deadline, after_deadline=False)  # the budget is the whole proof's


def _leaf_hook(model: ClassEnsemble, tables: dict[int, int], window: list[Any], rows: dict[tuple[int, int], Any],
               inputs: list[Any], xlen: int) -> Any:
    """The executor's load hook: a load from inside tree t's leaf table at class c's column
    becomes ``leaf_t_c(golden leaf index)``, with the obligation that its address is that row's."""
    stride = 4 * model.n_classes
    zero = [(v, z3.BitVecVal(0, v.size())) for v in inputs]

    def hook(st: State, addr: Any, size: int) -> Any:
        if size != 4:
            return None
        probe = z3.simplify(z3.substitute(addr, *zero))  # which table: the address at one input
        if not z3.is_bv_value(probe):
            return None
        a = probe.as_long()
        hit = [(t, base) for t, base in tables.items() if base <= a < base + stride * len(model.trees[t].leaves)]
        if not hit or (a - hit[0][1]) % 4:
            return None
        t, base = hit[0]
        c = (a - base) % stride // 4
        idx = leaf_index(model.trees[t], window)
        want = z3.BitVecVal(base + 4 * c, xlen) + z3.BitVecVal(stride, xlen) * z3.ZeroExt(xlen - idx.size(), idx)
        ob = (f"leaf address of tree {t} class {c} at pc {st.pc:#x} is the golden leaf index's row",
              z3.And(path_formula(st.cond), addr != want))
        return rows[(t, c)](idx), [ob]

    return hook


def _replay(img: ElfImage, spec: SwitchAgentSpec, model: ClassEnsemble, m: Any, ctx: list[Any], qlen: Any, tx: Any,
            marked: Any, util_mul: Any, xlen: int) -> dict[str, Any] | None:
    """The model's input as one record, run in the emulator and in the numpy golden agent; the
    record and both outputs when the decision (action, ECN template, context) differs, else None."""
    val = lambda e: m.eval(e, model_completion=True).as_long()  # noqa: E731
    ctx_in = np.array([[val(w) for w in ctx]], np.int64)
    v = sv.expected(spec, model, ctx_in, [val(qlen)], [val(tx)], [val(marked)], [val(util_mul)], [0], ["proof"])
    runner = SwitchRunner(img.elf, xlen, img.machine.profile, zbb=img.machine.zbb)
    try:
        out = runner.run(to_records(v))
    except RlccError as exc:
        return {"inputs": {"ctx_in": ctx_in[0].tolist()}, "fault": str(exc)}
    # the proven outputs only (the trace's scores are not one: an abstracted proof's assignment
    # may give the firmware other scores but the same decision)
    differs = len(mismatches(v, out, model.n_classes, with_scores=False)) or int(out["action"][0]) != int(v.action[0])
    return example(v, 0, out, model.n_classes) if differs else None
