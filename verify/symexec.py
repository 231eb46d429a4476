"""Symbolic execution of a loop-free RISC-V function over z3 bit-vectors, with state merging.

The executor walks the decoded instructions of the ELF that the emulator runs. Values are
Python ints while concrete (stack addresses, constants) and z3 terms otherwise. Paths fork at
symbolic branches and merge again wherever they meet (states are processed in address order,
so the join point of forward branches is reached by every predecessor first; a straight-line run
stops at every branch or jump target seen so far, so a diamond merges where it closes and a path
condition that then covers every case is dropped), which keeps the handler's hundreds of paths
down to one final state whose outputs are if-then-else terms, and a select compiled to branches
one if-then-else on the input it tests.

Memory is the concrete image of RAM after ``user_init`` plus an overlay of bytes the function
stored. Loads from symbolic addresses (table lookups) become multiplexers over the aligned
addresses an interval analysis allows (from a read-only table, or from an array on the stack
as the path has written it); each such load adds a safety obligation (aligned, inside
the table's section) that the prover discharges. Calls to a *summarized* function are replaced
by terms of their arguments, registers or arrays in memory (the proof abstracts ``sqrt_rate``, the
wide products and the ensemble's partial sums this way).
"""

from __future__ import annotations

import dataclasses
import heapq
from typing import Any, Callable

import z3

from rlcc.errors import RlccError
from rlcc.emulator import Decoded, decode

Val = Any  # int (concrete, in [0, 2^xlen)) or z3.BitVecRef of width xlen
# Reads the caller's memory at the call: (address, size in bytes) -> value (as Executor.load).
Load = Callable[[Val, int], Val]
# A summarized callee: (registers at the call, path condition, load) -> (register results,
# obligations as (description, formula that must be unsatisfiable)). ``load`` lets a callee that
# takes a pointer read its argument array.
Summary = Callable[[list[Val], Any, Load], tuple[dict[int, Val], list[tuple[str, Any]]]]
# A symbolic-address load the caller models itself: (state, address, size in bytes) -> None (load
# it as usual) or (value, obligations that make the value the memory's). The switch prover
# replaces a leaf-table load by the golden model's row term once the address is proven.
LoadHook = Callable[["State", z3.BitVecRef, int], "tuple[Val, list[tuple[str, Any]]] | None"]
MAX_STEPS = 200_000
MAX_TABLE_SPAN = 4096  # bytes a symbolic address may range over
_VALID_MS = 1000  # solver time for a joined path condition (``_valid``)
_MERGE_WORD = 4  # memory is merged in aligned words of this many bytes (context words, int32 arrays)


class SymexecUnsupported(RlccError):
    """The function does something the executor does not model (the proof cannot conclude)."""


@dataclasses.dataclass
class State:
    pc: int
    regs: list[Val]
    mem: dict[int, Val]  # overlay: address -> byte (int or 8-bit term)
    cond: tuple  # path condition: conjunction of branch decisions, outermost first


@dataclasses.dataclass
class Region:
    """Address range readable by the function (``writable`` ranges may also be stored to)."""

    lo: int
    hi: int  # exclusive
    name: str
    writable: bool = False


@dataclasses.dataclass
class Result:
    state: State  # the merged final state (pc == return sentinel)
    obligations: list[tuple[str, Any]]  # (description, formula that must be unsatisfiable)
    steps: int
    paths: int  # states that reached the return, before merging


def _bits(v: Val, width: int) -> z3.BitVecRef:
    return v if isinstance(v, z3.BitVecRef) else z3.BitVecVal(v & ((1 << width) - 1), width)


def _is_true(c: Any) -> bool:
    return c is True or (isinstance(c, z3.BoolRef) and z3.is_true(c))


def _and(a: Any, b: Any) -> Any:
    if _is_true(a):
        return b
    if _is_true(b):
        return a
    return z3.And(a, b)


def _valid(c: z3.BoolRef) -> bool:
    """``c`` holds for every input (checked by the solver within a second; False when unsure). Paths
    that split and join again in the middle of a function (a select compiled to branches) cover
    every case without the simplifier seeing it; dropping that condition keeps the next joins'
    if-then-else terms small and their conditions on the inputs they test."""
    s = z3.SolverFor("QF_BV")
    s.set("timeout", _VALID_MS)
    s.add(z3.Not(c))
    return s.check() == z3.unsat


def path_formula(cond: tuple) -> Any:
    """The path condition as one formula."""
    return z3.And(*cond) if cond else z3.BoolVal(True)


def _word_term(byte_values: list[Val]) -> Val:
    """Little-endian bytes (ints or 8-bit terms) as one int or one term.

    Bytes that are consecutive slices of one term become that term's slice directly: the
    simplifier would push the slices into an if-then-else's branches instead and leave a
    concatenation of per-byte choices."""
    if all(isinstance(b, int) for b in byte_values):
        return int.from_bytes(bytes(byte_values), "little")
    if len(byte_values) == 1:
        return byte_values[0]
    first = byte_values[0]
    if all(isinstance(b, z3.ExprRef) and z3.is_app_of(b, z3.Z3_OP_EXTRACT) for b in byte_values):
        base = first.arg(0)
        low = first.params()[1]
        if all(b.arg(0).eq(base) and b.params()[1] == low + 8 * i for i, b in enumerate(byte_values)):
            high = low + 8 * len(byte_values) - 1
            return base if (low, high) == (0, base.size() - 1) else z3.Extract(high, low, base)
    return z3.simplify(z3.Concat(*[_bits(b, 8) for b in reversed(byte_values)]))


def _same(a: Val, b: Val) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, z3.ExprRef) and isinstance(b, z3.ExprRef):
        return a.eq(b)
    return False


def unsigned_bounds(e: z3.BitVecRef) -> tuple[int, int]:
    """A sound unsigned interval of ``e`` by structural analysis (full range when unsure)."""
    width = e.size()
    full = (0, (1 << width) - 1)
    if z3.is_bv_value(e):
        return e.as_long(), e.as_long()
    k = e.decl().kind()
    args = e.children()
    if k == z3.Z3_OP_BADD:
        lo = sum(unsigned_bounds(a)[0] for a in args)
        hi = sum(unsigned_bounds(a)[1] for a in args)
        return (lo, hi) if hi < (1 << width) else full
    if k == z3.Z3_OP_BAND:
        return 0, min(unsigned_bounds(a)[1] for a in args)
    if k == z3.Z3_OP_BOR:
        his = [unsigned_bounds(a)[1] for a in args]
        return max(unsigned_bounds(a)[0] for a in args), (1 << max(h.bit_length() for h in his)) - 1
    if k == z3.Z3_OP_BSHL and z3.is_bv_value(args[1]):
        lo, hi = unsigned_bounds(args[0])
        s = args[1].as_long()
        return (lo << s, hi << s) if hi << s < (1 << width) else full
    if k == z3.Z3_OP_BLSHR and z3.is_bv_value(args[1]):
        lo, hi = unsigned_bounds(args[0])
        s = args[1].as_long()
        return lo >> s, hi >> s
    if k == z3.Z3_OP_BMUL and len(args) == 2 and z3.is_bv_value(args[0]):
        lo, hi = unsigned_bounds(args[1])
        c = args[0].as_long()
        return (lo * c, hi * c) if hi * c < (1 << width) else full
    if k == z3.Z3_OP_ZERO_EXT:
        return unsigned_bounds(args[0])
    if k == z3.Z3_OP_CONCAT:
        lo = hi = 0
        for a in args:
            alo, ahi = unsigned_bounds(a)
            lo, hi = (lo << a.size()) | alo, (hi << a.size()) | ahi
        return lo, hi
    if k == z3.Z3_OP_EXTRACT:
        h, low = e.params()
        lo, hi = unsigned_bounds(args[0])
        if hi < (1 << (h + 1)):
            return lo >> low, hi >> low
        return full
    if k == z3.Z3_OP_ITE:
        a, b = unsigned_bounds(args[1]), unsigned_bounds(args[2])
        return min(a[0], b[0]), max(a[1], b[1])
    if k == z3.Z3_OP_SIGN_EXT:
        lo, hi = unsigned_bounds(args[0])
        return (lo, hi) if hi < (1 << (args[0].size() - 1)) else full
    return full


def _solver_bounds(e: z3.BitVecRef, cond: Any) -> tuple[int, int]:
    """Exact unsigned min and max of ``e`` under ``cond`` (when the structural bound is too loose)."""
    out = []
    for goal in ("min", "max"):
        opt = z3.Optimize()
        opt.set("timeout", 20_000)
        if not _is_true(cond):
            opt.add(cond)
        h = opt.minimize(e) if goal == "min" else opt.maximize(e)
        if opt.check() != z3.sat:
            return 0, (1 << e.size()) - 1
        out.append(opt.lower(h).as_long() if goal == "min" else opt.upper(h).as_long())
    return out[0], out[1]


class Executor:
    """Symbolic RISC-V hart over a concrete memory image; see the module docstring."""

    def __init__(self, image: bytes, image_base: int, xlen: int, regions: list[Region],
                 summaries: dict[int, Summary] | None = None, load_hook: LoadHook | None = None,
                 paired_products: bool = True, clobbers: dict[int, frozenset[int]] | None = None,
                 opaque_mul: Callable[[z3.BitVecRef, z3.BitVecRef], z3.BitVecRef] | None = None) -> None:
        """``paired_products``: RV32 ``mul``/``mulhu`` share one opaque 64-bit product (see
        :meth:`_wide_product`); for a golden model that reads 64-bit products across their halves
        (the PCC handler's RTT inflation). Off, each half is its own 32-bit term, which the switch
        agent's proof (32-bit arithmetic only) needs: its rv32 proof times out with the 64-bit
        multipliers the pairing brings in. ``clobbers``: per summarized callee, the registers a
        call may change (default every caller-saved one); the callee's own proof must show that
        it keeps the others (a compiler with interprocedural register allocation keeps values in
        them across the call). ``opaque_mul``: on RV64 a ``mul`` of two unknown values, both below 2^32
        (an obligation), is ``opaque_mul`` of their low halves; on RV32 a ``mul`` / ``mulhu`` of two
        unknown values is the low / high word of their ``opaque_mul``. It is the product the golden
        model takes too, so the solver matches the two products by their operands instead of
        multiplying."""
        self.paired_products = paired_products
        self.image = image
        self.load_hook = load_hook
        self.base = image_base
        self.xlen = xlen
        self.mask = (1 << xlen) - 1
        self.regions = regions
        self.summaries = summaries or {}
        self.clobbers = clobbers or {}
        self.opaque_mul = opaque_mul
        self.obligations: list[tuple[str, Any]] = []
        self._decoded: dict[int, Decoded] = {}
        self._products: dict[int, tuple[z3.BitVecRef, z3.BitVecRef]] = {}  # RV32: product id -> (opaque, product)
        self._joins: set[int] = set()  # targets of the branches and jumps decoded so far: where paths meet

    # ---- memory -------------------------------------------------------------------------
    def _image_byte(self, addr: int) -> int:
        off = addr - self.base
        if not 0 <= off < len(self.image):
            raise SymexecUnsupported(f"read outside RAM at {addr:#x}")
        return self.image[off]

    def _byte(self, st: State, addr: int) -> Val:
        return st.mem[addr] if addr in st.mem else self._image_byte(addr)

    def _region_of(self, addr: int, size: int) -> Region | None:
        for r in self.regions:
            if r.lo <= addr and addr + size <= r.hi:
                return r
        return None

    def _load_concrete(self, st: State, addr: int, size: int) -> Val:
        if self._region_of(addr, size) is None:
            raise SymexecUnsupported(f"load of {size} bytes outside the modelled regions at {addr:#x} (pc {st.pc:#x})")
        parts = [self._byte(st, addr + i) for i in range(size)]
        if all(isinstance(p, int) for p in parts):
            return int.from_bytes(bytes(parts), "little")
        return _word_term(parts)

    def load(self, st: State, addr: Val, size: int) -> Val:
        """``size`` bytes little-endian, zero-extended to an int or a (8*size)-bit term."""
        if isinstance(addr, z3.BitVecRef):
            addr = z3.simplify(addr)
            if z3.is_bv_value(addr):
                addr = addr.as_long()
        if isinstance(addr, int):
            return self._load_concrete(st, addr & self.mask, size)
        hooked = self.load_hook(st, addr, size) if self.load_hook else None
        if hooked is not None:
            self.obligations.extend(hooked[1])
            return hooked[0]
        lo, hi = unsigned_bounds(addr)
        region = self._region_of(lo - lo % size, hi - hi % size - (lo - lo % size) + size)
        if hi - lo > MAX_TABLE_SPAN or region is None:  # structural bound too loose
            lo, hi = _solver_bounds(addr, path_formula(st.cond))
        first, last = lo - lo % size, hi - hi % size
        if last - first > MAX_TABLE_SPAN:
            raise SymexecUnsupported(f"load from an unbounded symbolic address at pc {st.pc:#x}")
        region = self._region_of(first, last - first + size)
        if region is None:
            raise SymexecUnsupported(f"symbolic-address load outside the modelled regions at pc {st.pc:#x}")
        self.obligations.append((  # a writable region (an array on the stack) is read as this state holds it
            f"aligned in-table load at pc {st.pc:#x} ({region.name})",
            z3.And(path_formula(st.cond), z3.Or(z3.URem(addr, size) != 0, z3.ULT(addr, first), z3.UGT(addr, last))),
        ))
        value: Val = self._load_concrete(st, last, size)
        for a in range(last - size, first - 1, -size):
            value = z3.If(addr == a, _bits(self._load_concrete(st, a, size), 8 * size), _bits(value, 8 * size))
        return value

    def store(self, st: State, addr: Val, size: int, value: Val) -> None:
        if isinstance(addr, z3.BitVecRef):
            addr = z3.simplify(addr)
            if not z3.is_bv_value(addr):
                raise SymexecUnsupported(f"store to a symbolic address at pc {st.pc:#x}")
            addr = addr.as_long()
        addr &= self.mask
        region = self._region_of(addr, size)
        if region is None or not region.writable:
            raise SymexecUnsupported(f"store outside writable memory at {addr:#x} (pc {st.pc:#x})")
        for i in range(size):
            if isinstance(value, int):
                st.mem[addr + i] = (value >> (8 * i)) & 0xFF
            else:
                st.mem[addr + i] = z3.Extract(8 * i + 7, 8 * i, value)  # unsimplified: see _word_term

    # ---- execution ------------------------------------------------------------------------
    def insn(self, pc: int) -> Decoded:
        if pc not in self._decoded:
            word = int.from_bytes(bytes(self._image_byte(pc + i) for i in range(4 if self._image_byte(pc) & 3 == 3 else 2)), "little")
            d = decode(word, self.xlen)  # Zbb decoded whatever the target: the emulator refuses it there
            if d.op == "illegal":
                raise SymexecUnsupported(f"unsupported instruction {word:#x} at pc {pc:#x}")
            self._decoded[pc] = d
        return self._decoded[pc]

    def run(self, entry: State, stop_pc: int) -> Result:
        """Execute from ``entry`` until every path reaches ``stop_pc``; merged final state."""
        queue: list[int] = [entry.pc]
        pending: dict[int, list[State]] = {entry.pc: [entry]}
        finals: list[State] = []
        steps = 0
        while queue:
            pc = heapq.heappop(queue)
            states = pending.pop(pc, [])
            if not states:
                continue
            st = self.merge(states) if len(states) > 1 else states[0]
            for nxt in self.step(st):
                steps += 1
                if steps > MAX_STEPS:
                    raise SymexecUnsupported(f"more than {MAX_STEPS} symbolic steps (a loop with a symbolic bound?)")
                if nxt.pc == stop_pc:
                    finals.append(nxt)
                    continue
                if nxt.pc not in pending:
                    pending[nxt.pc] = []
                    heapq.heappush(queue, nxt.pc)
                pending[nxt.pc].append(nxt)
        if not finals:
            raise SymexecUnsupported("no path returned")
        final = self.merge(finals) if len(finals) > 1 else finals[0]
        return Result(self._unfold_state(final), [(d, self.unfold(f)) for d, f in self.obligations], steps, len(finals))

    def unfold(self, v: Val) -> Val:
        """``v`` with every opaque RV32 product (see :meth:`_wide_product`) replaced by its definition."""
        if isinstance(v, int) or not self._products:
            return v
        return z3.substitute(v, *self._products.values())

    def _unfold_state(self, st: State) -> State:
        if not self._products:
            return st
        mem: dict[int, Val] = {}
        for word in sorted({a - a % _MERGE_WORD for a in st.mem}):
            addrs = [a for a in range(word, word + _MERGE_WORD) if a in st.mem]
            if all(isinstance(st.mem[a], int) for a in addrs):
                mem.update((a, st.mem[a]) for a in addrs)
                continue
            term = _word_term([self._byte(st, a) for a in range(word, word + _MERGE_WORD)])
            whole = self.unfold(term)
            if _same(whole, term):  # no product in it: the bytes stay as they are
                mem.update((a, st.mem[a]) for a in addrs)
                continue
            for a in addrs:
                mem[a] = z3.Extract(8 * (a - word) + 7, 8 * (a - word), whole)
        return State(st.pc, [self.unfold(r) for r in st.regs], mem, tuple(self.unfold(c) for c in st.cond))

    def _wide_product(self, a: Val, b: Val) -> z3.BitVecRef:
        """RV32 ``mul``/``mulhu``: an opaque 64-bit stand-in for the unsigned product of ``a`` and ``b``
        (one per product, shared by its two halves), replaced by the product itself when the run ends
        (:meth:`unfold`). The simplifier rewrites the low half of a product by a constant, ``c *
        (x - y)``, into ``c * x - c * y``: a different circuit from the golden model's 64-bit ``c * (x -
        y)``, whose equality the solver cannot show by bit-blasting. Opaque while executing, the halves
        recombine (``(lo >> 16) | (hi << 16)`` becomes bits 47..16 of one term) as the golden model
        extracts them."""
        product = z3.simplify(z3.ZeroExt(32, _bits(a, 32)) * z3.ZeroExt(32, _bits(b, 32)))
        if z3.is_bv_value(product):
            return product
        key = product.get_id()
        if key not in self._products:
            # a product of earlier products' halves: defined by the unfolded product, so one
            # substitution unfolds every stand-in
            self._products[key] = (z3.FreshConst(z3.BitVecSort(64), "product"), self.unfold(product))
        return self._products[key][0]

    def merge(self, states: list[State]) -> State:
        """One state equivalent to the disjunction of ``states`` (all at the same pc)."""
        pc, xlen = states[0].pc, self.xlen
        # Under the conditions every path shares (wherever on its path: tail-duplicated code
        # branches on the same test in both arms of an earlier one) the remaining ones are mutually
        # exclusive, so they alone select each state's values: small if-then-else terms, each on
        # the inputs whose tests tell the states apart.
        shared = [c for c in states[0].cond if all(any(c.eq(o) for o in s.cond) for s in states[1:])]
        rests = [[c for c in s.cond if not any(c.eq(o) for o in shared)] for s in states]
        if any(not r for r in rests):
            raise SymexecUnsupported(f"merging an unconditional path at pc {pc:#x}")
        conds = [path_formula(tuple(r)) for r in rests]

        def pick(values: list[Val], width: int) -> Val:
            if all(_same(values[0], v) for v in values[1:]):
                return values[0]
            out = _bits(values[-1], width)
            for c, v in zip(reversed(conds[:-1]), reversed(values[:-1])):
                out = z3.If(c, _bits(v, width), out)
            return z3.simplify(out)

        regs = [pick([s.regs[r] for s in states], xlen) for r in range(32)]
        mem: dict[int, Val] = {}
        # Merge memory a word at a time: a word stored on several paths becomes one if-then-else
        # of the whole words, whose bytes a later load reassembles into that term (byte-wise
        # if-then-elses would leave the solver a concatenation of per-byte choices).
        touched = set().union(*(s.mem.keys() for s in states))
        for word in sorted({a - a % _MERGE_WORD for a in touched}):
            addrs = [word + i for i in range(_MERGE_WORD)]
            per_state = [[s.mem[a] if a in s.mem else self._image_byte(a) for a in addrs] for s in states]
            if all(_same(x, y) for other in per_state[1:] for x, y in zip(per_state[0], other)):
                for a, v in zip(addrs, per_state[0]):
                    if a in touched:
                        mem[a] = v
                continue
            merged = pick([_word_term(bs) for bs in per_state], 8 * _MERGE_WORD)
            for i, a in enumerate(addrs):
                mem[a] = merged >> (8 * i) & 0xFF if isinstance(merged, int) else z3.Extract(8 * i + 7, 8 * i, merged)
        joined = z3.simplify(z3.Or(*conds))
        whole = z3.is_true(joined) or _valid(joined)  # the paths cover every case: no condition left
        return State(pc, regs, mem, tuple(shared) + (() if whole else (joined,)))

    def _reg(self, st: State, r: int) -> Val:
        return 0 if r == 0 else st.regs[r]

    def _set(self, st: State, r: int, v: Val) -> None:
        if r:
            st.regs[r] = v & self.mask if isinstance(v, int) else v

    def step(self, st: State) -> list[State]:
        """Execute one instruction (straight-line runs are stepped inside); successor states."""
        first = True
        while True:
            if not first and st.pc in self._joins:  # another path may arrive here: queue, to merge with it
                return [st]
            first = False
            i = self.insn(st.pc)
            if i.op in BRANCHES:
                return self._branch(st, i)
            if i.op in ("jal", "jalr"):
                target = self._jump_target(st, i)
                if i.rd == 1 and target in self.summaries:
                    results, obligations = self.summaries[target](list(st.regs), path_formula(st.cond),
                                                                  lambda addr, size, st=st: self.load(st, addr, size))
                    self.obligations.extend(obligations)
                    for r in self.clobbers.get(target, CALLER_SAVED):  # what the summarized callee may change
                        st.regs[r] = z3.FreshConst(z3.BitVecSort(self.xlen), "clobbered")
                    for r, v in results.items():
                        st.regs[r] = v
                    st.pc += i.size
                    continue
                self._set(st, i.rd, st.pc + i.size)
                st.pc = target
                self._joins.add(target)
                return [st]
            self._exec(st, i)
            st.pc += i.size

    def _jump_target(self, st: State, i: Decoded) -> int:
        if i.op == "jal":
            return (st.pc + i.imm) & self.mask
        base = self._reg(st, i.rs1)
        if isinstance(base, z3.BitVecRef):
            base = z3.simplify(base)
            if not z3.is_bv_value(base):
                raise SymexecUnsupported(f"indirect jump to a symbolic target at pc {st.pc:#x}")
            base = base.as_long()
        return (base + i.imm) & self.mask & ~1

    def _branch(self, st: State, i: Decoded) -> list[State]:
        a, b = self._reg(st, i.rs1), self._reg(st, i.rs2)
        taken_pc, fall_pc = (st.pc + i.imm) & self.mask, st.pc + i.size
        self._joins.add(taken_pc)
        if isinstance(a, int) and isinstance(b, int):
            st.pc = taken_pc if _compare(i.op, a, b, self.xlen) else fall_pc
            return [st]
        c = z3.simplify(_compare_z3(i.op, _bits(a, self.xlen), _bits(b, self.xlen)))
        if z3.is_true(c) or z3.is_false(c):
            st.pc = taken_pc if z3.is_true(c) else fall_pc
            return [st]
        other = State(fall_pc, list(st.regs), dict(st.mem), st.cond + (z3.simplify(z3.Not(c)),))
        st.pc, st.cond = taken_pc, st.cond + (c,)
        return [st, other]

    def _exec(self, st: State, i: Decoded) -> None:
        x, op = self.xlen, i.op
        a, b = self._reg(st, i.rs1), self._reg(st, i.rs2)
        if op == "lui":
            return self._set(st, i.rd, i.imm)
        if op == "auipc":
            return self._set(st, i.rd, st.pc + i.imm)
        if op in _LOADS:
            size, signed = _LOADS[op]
            v = self.load(st, _add(a, i.imm, x), size)
            if signed:
                v = _sext(v, 8 * size, x)
            elif not isinstance(v, int) and 8 * size < x:
                v = z3.ZeroExt(x - 8 * size, v)
            return self._set(st, i.rd, v)
        if op in _STORES:
            size = _STORES[op]
            v = b if isinstance(b, int) else z3.Extract(8 * size - 1, 0, b)
            return self.store(st, _add(a, i.imm, x), size, v & ((1 << (8 * size)) - 1) if isinstance(v, int) else v)
        if op == "fence":
            return None
        if op in ("ecall", "ebreak"):
            raise SymexecUnsupported(f"{op} at pc {st.pc:#x}")
        imm_ops = {"addi": "add", "slti": "slt", "sltiu": "sltu", "xori": "xor", "ori": "or", "andi": "and",
                   "slli": "sll", "srli": "srl", "srai": "sra", "addiw": "addw", "slliw": "sllw",
                   "srliw": "srlw", "sraiw": "sraw", "rori": "ror", "roriw": "rorw"}
        if op in imm_ops:
            op, b = imm_ops[op], i.imm & self.mask
        if x == 64 and op in ("mul", "mulhu") and self.opaque_mul is not None and _unknown(a) and _unknown(b):
            # mul of two values below 2^32, or mulhu of two values shifted up by 32 (how a compiler
            # multiplies two zero-extended 32-bit values without extending them): their product
            half = (31, 0) if op == "mul" else (63, 32)
            outside = ((z3.UGE(a, 1 << 32), z3.UGE(b, 1 << 32)) if op == "mul" else
                       (z3.Extract(31, 0, a) != 0, z3.Extract(31, 0, b) != 0))
            self.obligations.append((f"operands of the product at pc {st.pc:#x} 32-bit values",
                                     z3.And(path_formula(st.cond), z3.Or(*outside))))
            return self._set(st, i.rd, self.opaque_mul(z3.Extract(*half, a), z3.Extract(*half, b)))
        if x == 32 and op in ("mul", "mulhu") and self.opaque_mul is not None and _unknown(a) and _unknown(b):
            # the low or high word of the opaque product of two 32-bit values
            half = (31, 0) if op == "mul" else (63, 32)
            return self._set(st, i.rd, z3.Extract(*half, self.opaque_mul(a, b)))
        if x == 32 and self.paired_products and op in ("mul", "mulhu") and not (isinstance(a, int) and isinstance(b, int)):
            wide = self._wide_product(a, b)
            return self._set(st, i.rd, z3.simplify(z3.Extract(31, 0, wide) if op == "mul" else z3.Extract(63, 32, wide)))
        self._set(st, i.rd, alu(op, a, b, x))


def _unknown(v: Val) -> bool:
    """Whether ``v`` is a term other than a constant."""
    return isinstance(v, z3.BitVecRef) and not z3.is_bv_value(z3.simplify(v))


BRANCHES = frozenset(("beq", "bne", "blt", "bge", "bltu", "bgeu"))
_LOADS = {"lb": (1, True), "lh": (2, True), "lw": (4, True), "ld": (8, True), "lbu": (1, False), "lhu": (2, False), "lwu": (4, False)}
_STORES = {"sb": 1, "sh": 2, "sw": 4, "sd": 8}
CALLER_SAVED = frozenset((1, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 28, 29, 30, 31))  # ra t0-t2 a0-a7 t3-t6
_W_OPS = frozenset(("addw", "subw", "sllw", "srlw", "sraw", "mulw"))


def _add(a: Val, imm: int, x: int) -> Val:
    return (a + imm) & ((1 << x) - 1) if isinstance(a, int) else a + imm


def _sext(v: Val, bits: int, x: int) -> Val:
    if isinstance(v, int):
        v &= (1 << bits) - 1
        return (v - (1 << bits) if v >> (bits - 1) else v) & ((1 << x) - 1)
    return z3.SignExt(x - bits, z3.Extract(bits - 1, 0, v)) if bits < x else v


def _signed(v: int, x: int) -> int:
    return v - (1 << x) if v >> (x - 1) else v


def _compare(op: str, a: int, b: int, x: int) -> bool:
    if op == "beq":
        return a == b
    if op == "bne":
        return a != b
    if op == "blt":
        return _signed(a, x) < _signed(b, x)
    if op == "bge":
        return _signed(a, x) >= _signed(b, x)
    if op == "bltu":
        return a < b
    return a >= b


def _compare_z3(op: str, a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BoolRef:
    return {
        "beq": lambda: a == b, "bne": lambda: a != b, "blt": lambda: a < b, "bge": lambda: a >= b,
        "bltu": lambda: z3.ULT(a, b), "bgeu": lambda: z3.UGE(a, b),
    }[op]()


def alu(op: str, a: Val, b: Val, x: int) -> Val:
    """Register-register semantics (immediates already in ``b``); concrete when both are ints."""
    if isinstance(a, int) and isinstance(b, int):
        return _alu_int(op, a, b, x)
    return z3.simplify(_alu_z3(op, _bits(a, x), _bits(b, x), x))


def _alu_int(op: str, a: int, b: int, x: int) -> int:
    m = (1 << x) - 1
    sh = b & (x - 1)
    if x == 64 and op in _W_OPS:
        lo = {"addw": lambda: a + b, "subw": lambda: a - b, "sllw": lambda: a << (b & 31),
              "srlw": lambda: (a & 0xFFFFFFFF) >> (b & 31), "sraw": lambda: _signed(a & 0xFFFFFFFF, 32) >> (b & 31),
              "mulw": lambda: a * b}.get(op)
        if lo is not None:
            return _sext(lo() & 0xFFFFFFFF, 32, x)
    simple = {
        "add": lambda: a + b, "sub": lambda: a - b, "sll": lambda: a << sh, "srl": lambda: a >> sh,
        "sra": lambda: _signed(a, x) >> sh, "xor": lambda: a ^ b, "or": lambda: a | b, "and": lambda: a & b,
        "slt": lambda: int(_signed(a, x) < _signed(b, x)), "sltu": lambda: int(a < b),
        "mul": lambda: a * b, "mulhu": lambda: (a * b) >> x, "mulh": lambda: (_signed(a, x) * _signed(b, x)) >> x,
        "mulhsu": lambda: (_signed(a, x) * b) >> x, "andn": lambda: a & ~b, "orn": lambda: a | ~b,
        "xnor": lambda: ~(a ^ b), "min": lambda: a if _signed(a, x) < _signed(b, x) else b,
        "max": lambda: a if _signed(a, x) > _signed(b, x) else b, "minu": lambda: min(a, b), "maxu": lambda: max(a, b),
        "zext.h": lambda: a & 0xFFFF,
    }
    if op in simple:
        return simple[op]() & m
    return _alu_z3_concrete(op, a, b, x)


def _alu_z3_concrete(op: str, a: int, b: int, x: int) -> int:
    e = z3.simplify(_alu_z3(op, z3.BitVecVal(a, x), z3.BitVecVal(b, x), x))
    if not z3.is_bv_value(e):
        raise SymexecUnsupported(f"cannot evaluate {op}")
    return e.as_long()


def _divide(op: str, a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
    """RISC-V division at the operands' width: no trap; by zero all ones (quotient) or the
    dividend (remainder); the most negative value by -1 overflows to itself (remainder 0)."""
    n = a.size()
    zero = z3.BitVecVal(0, n)
    overflow = z3.And(a == 1 << (n - 1), b == ~zero)
    return {"div": lambda: z3.If(b == 0, ~zero, z3.If(overflow, a, a / b)),
            "divu": lambda: z3.If(b == 0, ~zero, z3.UDiv(a, b)),
            "rem": lambda: z3.If(b == 0, a, z3.If(overflow, zero, z3.SRem(a, b))),
            "remu": lambda: z3.If(b == 0, a, z3.URem(a, b))}[op]()


def _alu_z3(op: str, a: z3.BitVecRef, b: z3.BitVecRef, x: int) -> z3.BitVecRef:
    sh = b & (x - 1)
    zero, one = z3.BitVecVal(0, x), z3.BitVecVal(1, x)
    lo32 = lambda v: z3.Extract(31, 0, v)  # noqa: E731
    w = lambda v: z3.SignExt(x - 32, v) if x > 32 else v  # noqa: E731

    def wide_product(sa: bool, sb: bool) -> z3.BitVecRef:
        ea = z3.SignExt(x, a) if sa else z3.ZeroExt(x, a)
        eb = z3.SignExt(x, b) if sb else z3.ZeroExt(x, b)
        return ea * eb

    table: dict[str, Callable[[], z3.BitVecRef]] = {
        "add": lambda: a + b, "sub": lambda: a - b, "sll": lambda: a << sh, "srl": lambda: z3.LShR(a, sh),
        "sra": lambda: a >> sh, "xor": lambda: a ^ b, "or": lambda: a | b, "and": lambda: a & b,
        "slt": lambda: z3.If(a < b, one, zero), "sltu": lambda: z3.If(z3.ULT(a, b), one, zero),
        # On RV32 the low and high halves of a product share one 2x-wide term, so a 64-bit product
        # assembled from mul + mulhu is the very term the golden model multiplies.
        "mul": lambda: z3.Extract(x - 1, 0, wide_product(False, False)) if x == 32 else a * b,
        "mulhu": lambda: _mulhu(a, b, x, wide_product),
        "mulh": lambda: z3.Extract(2 * x - 1, x, wide_product(True, True)),
        "mulhsu": lambda: z3.Extract(2 * x - 1, x, wide_product(True, False)),
        "div": lambda: _divide("div", a, b), "divu": lambda: _divide("divu", a, b),
        "rem": lambda: _divide("rem", a, b), "remu": lambda: _divide("remu", a, b),
        "divw": lambda: w(_divide("div", lo32(a), lo32(b))), "divuw": lambda: w(_divide("divu", lo32(a), lo32(b))),
        "remw": lambda: w(_divide("rem", lo32(a), lo32(b))), "remuw": lambda: w(_divide("remu", lo32(a), lo32(b))),
        "andn": lambda: a & ~b, "orn": lambda: a | ~b, "xnor": lambda: ~(a ^ b),
        "min": lambda: z3.If(a < b, a, b), "max": lambda: z3.If(a > b, a, b),
        "minu": lambda: z3.If(z3.ULT(a, b), a, b), "maxu": lambda: z3.If(z3.UGT(a, b), a, b),
        "rol": lambda: z3.RotateLeft(a, sh), "ror": lambda: z3.RotateRight(a, sh),
        "clz": lambda: _clz(a, x), "ctz": lambda: _ctz(a, x), "cpop": lambda: _cpop(a, x),
        "sext.b": lambda: z3.SignExt(x - 8, z3.Extract(7, 0, a)), "sext.h": lambda: z3.SignExt(x - 16, z3.Extract(15, 0, a)),
        "zext.h": lambda: z3.ZeroExt(x - 16, z3.Extract(15, 0, a)),
        "addw": lambda: w(lo32(a) + lo32(b)), "subw": lambda: w(lo32(a) - lo32(b)),
        "sllw": lambda: w(lo32(a) << (lo32(b) & 31)), "srlw": lambda: w(z3.LShR(lo32(a), lo32(b) & 31)),
        "sraw": lambda: w(lo32(a) >> (lo32(b) & 31)), "mulw": lambda: w(lo32(a) * lo32(b)),
        "rolw": lambda: w(z3.RotateLeft(lo32(a), lo32(b) & 31)), "rorw": lambda: w(z3.RotateRight(lo32(a), lo32(b) & 31)),
        "clzw": lambda: z3.ZeroExt(x - 32, _clz(lo32(a), 32)), "ctzw": lambda: z3.ZeroExt(x - 32, _ctz(lo32(a), 32)),
        "cpopw": lambda: z3.ZeroExt(x - 32, _cpop(lo32(a), 32)),
        "rev8": lambda: z3.Concat(*[z3.Extract(8 * k + 7, 8 * k, a) for k in range(x // 8)]),
        "orc.b": lambda: z3.Concat(*[z3.If(z3.Extract(8 * k + 7, 8 * k, a) == 0, z3.BitVecVal(0, 8), z3.BitVecVal(0xFF, 8))
                                     for k in reversed(range(x // 8))]),
    }
    if op not in table:
        raise SymexecUnsupported(f"instruction {op} is not modelled")
    return table[op]()


def _low_zeros(v: z3.BitVecRef) -> tuple[z3.BitVecRef, int] | None:
    """(high part, k) when ``v`` is structurally ``high ++ 0^k`` (k = half the width for constants)."""
    half = v.size() // 2
    if z3.is_bv_value(v) and v.as_long() % (1 << half) == 0:
        return z3.BitVecVal(v.as_long() >> half, v.size() - half), half
    if z3.is_app_of(v, z3.Z3_OP_CONCAT):
        *high, low = v.children()
        if z3.is_bv_value(low) and low.as_long() == 0:
            return (high[0] if len(high) == 1 else z3.Concat(*high)), low.size()
    return None


def _mulhu(a: z3.BitVecRef, b: z3.BitVecRef, x: int, wide: Callable[[bool, bool], z3.BitVecRef]) -> z3.BitVecRef:
    """High half of an unsigned product; ``mulhu(p << x/2, q << x/2)`` is the x-bit ``p * q``.

    Compilers zero-extend two 32-bit values and multiply them that way on RV64; writing the
    result as the plain x-bit product keeps it the same term as the golden model's product.
    """
    sa, sb = _low_zeros(z3.simplify(a)), _low_zeros(z3.simplify(b))
    if sa and sb and sa[1] + sb[1] == x:
        return z3.ZeroExt(x - sa[0].size(), sa[0]) * z3.ZeroExt(x - sb[0].size(), sb[0])
    return z3.Extract(2 * x - 1, x, wide(False, False))


def _clz(a: z3.BitVecRef, n: int) -> z3.BitVecRef:
    out: z3.BitVecRef = z3.BitVecVal(n, a.size())
    for k in range(n):  # the highest set bit wins: fold from the lowest up
        out = z3.If(z3.Extract(k, k, a) == 1, z3.BitVecVal(n - 1 - k, a.size()), out)
    return out


def _ctz(a: z3.BitVecRef, n: int) -> z3.BitVecRef:
    out: z3.BitVecRef = z3.BitVecVal(n, a.size())
    for k in reversed(range(n)):
        out = z3.If(z3.Extract(k, k, a) == 1, z3.BitVecVal(k, a.size()), out)
    return out


def _cpop(a: z3.BitVecRef, n: int) -> z3.BitVecRef:
    return sum((z3.ZeroExt(a.size() - 1, z3.Extract(k, k, a)) for k in range(n)), z3.BitVecVal(0, a.size()))
