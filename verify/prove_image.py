"""A harness ELF as the provers read it: the RAM image after start-up, symbols and regions.

Both provers (the NIC handler's, ``rlcc.verify.prove``, and the switch agent's) run the harness
in the emulator until its start-up halts, then execute one function symbolically from that RAM
image. This module loads that image, names the regions the function may read (code, read-only
data) and write (the stack), and states the calling convention the proofs check: the entry
registers of a call that returns to a sentinel outside RAM, 32-bit arguments as the ABI passes
them, and the callee-saved registers restored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import z3
from elftools.elf.elffile import ELFFile

from rlcc.emulator import Machine, decode
from rlcc.emulator.cycle_model import Profile, load_profile
from rlcc.verify.symexec import BRANCHES, CALLER_SAVED, Executor, Region, State

RET_SENTINEL = 0x4  # return address outside RAM: reaching it ends the symbolic run
CALLEE_SAVED = (2, 3, 4, 8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27)  # sp gp tp s0..s11
STACK_BYTES = 64 * 1024  # only for an ELF without __stack_bottom/__stack_top
START_UP_INSTRUCTIONS = 10_000_000


@dataclasses.dataclass
class ElfImage:
    elf: Path
    machine: Machine  # after start-up; its RAM may since have been reused (``image`` is the pristine copy)
    image: bytes  # RAM after start-up
    symbols: dict[str, tuple[int, int]]  # name -> (address, size), the first definition of each
    regions: list[Region]  # code, read-only data, named data symbols, the stack
    scratch: int  # RAM the function never touches (inside the harness's input table)
    gp: int
    tp: int

    def address(self, symbol: str) -> int:
        return self.symbols[symbol][0]

    @property
    def stack(self) -> Region:
        return next(r for r in self.regions if r.name == "stack")

    def executor(self, xlen: int, regions: list[Region] | None = None, **kwargs: Any) -> Executor:
        """A symbolic executor over this image (``regions``: default the image's own)."""
        return Executor(self.image, self.machine.mem_base, xlen, self.regions if regions is None else regions, **kwargs)

    def clobbered_registers(self, symbol: str, xlen: int) -> frozenset[int]:
        """The registers a call of leaf function ``symbol`` may change: ra (the call writes it), the
        caller-saved ones its instructions write, and the callee-saved ones it writes without
        saving them on the stack (a compiler with interprocedural register allocation lets a static
        function do that: its callers know); every caller-saved one when it calls, jumps
        indirectly other than its return, or branches outside itself. Read from its code once;
        its proof part checks that every other register keeps its value (``frame_checks``)."""
        start, size = self.symbols[symbol]
        written, saved = {1}, set()
        pc = start
        while pc < start + size:
            at = pc - self.machine.mem_base
            n = 4 if self.image[at] & 3 == 3 else 2
            d = decode(int.from_bytes(self.image[at : at + n], "little"), xlen)
            ret = d.op == "jalr" and d.rd == 0 and d.rs1 == 1 and d.imm == 0
            inside = start <= pc + d.imm < start + size
            if (d.op in ("illegal", "ecall", "ebreak") or (d.op == "jalr" and not ret)
                    or (d.op == "jal" and (d.rd != 0 or not inside)) or (d.op in BRANCHES and not inside)):
                return CALLER_SAVED
            written.add(d.rd)
            if d.op in ("sw", "sd") and d.rs1 == 2:
                saved.add(d.rs2)
            pc += n
        return frozenset(r for r in written if r in CALLER_SAVED or (r in CALLEE_SAVED and r != 2 and r not in saved))

    def call_registers(self, xlen: int, prefix: str, sp: int | None = None) -> list[Any]:
        """Registers at a call: each free (``<prefix>x<r>``), except ra (the sentinel), sp (the
        stack top unless given), gp and tp (as start-up left them)."""
        regs = fresh_registers(xlen, prefix)
        regs[1], regs[2], regs[3], regs[4] = RET_SENTINEL, self.machine.stack_top if sp is None else sp, self.gp, self.tp
        return regs


def load_after_start(elf: Path, xlen: int, profile: str | Profile, zbb: bool | None, input_at: int, empty_input: bytes,
                     scratch: int, data_symbols: Sequence[str] = ()) -> ElfImage:
    """``elf`` in the emulator after its start-up, its input table (at ``input_at``) holding
    ``empty_input``; ``data_symbols``: data objects the function may also read."""
    m = Machine(xlen=xlen, profile=load_profile(profile), zbb=zbb)
    loaded = m.load_elf(elf)
    m.write_mem(input_at, empty_input)
    m.pc = loaded.entry
    m.set_reg(2, m.stack_top)
    m.run(max_instructions=START_UP_INSTRUCTIONS)
    regions, symbols = elf_code_regions(elf)
    for name in data_symbols:
        if name in symbols:
            a, n = symbols[name]
            regions.append(Region(a, a + n, name))
    bottom, top = m.stack_bounds or (m.stack_top - STACK_BYTES, m.stack_top)  # the linker's stack symbols
    regions.append(Region(bottom, top, "stack", writable=True))
    return ElfImage(Path(elf), m, m.read_mem(m.mem_base, m.mem_size), symbols, regions, scratch, m.reg(3), m.reg(4))


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


def fresh_registers(xlen: int, prefix: str) -> list[Any]:
    return [0] + [z3.BitVec(f"{prefix}x{r}", xlen) for r in range(1, 32)]


def word(st: State, ex: Executor, addr: int) -> z3.BitVecRef:
    """The 32-bit word at ``addr`` in ``st`` as a term."""
    v = ex.load(st, addr, 4)
    return v if isinstance(v, z3.BitVecRef) else z3.BitVecVal(v, 32)


def arg32(v: Any, xlen: int, path: Any, what: str) -> tuple[z3.BitVecRef, list[tuple[str, Any]]]:
    """A 32-bit argument register: its low word, and on RV64 the ABI's sign extension as an obligation."""
    if not isinstance(v, z3.BitVecRef):
        return z3.BitVecVal(v & 0xFFFFFFFF, 32), []
    low = z3.Extract(31, 0, v)
    if xlen == 32:
        return low, []
    return low, [(f"{what} passed sign-extended (RV64 ABI)", z3.And(path, v != z3.SignExt(32, low)))]


def frame_checks(final: State, entry: State, xlen: int, clobbered: frozenset[int] | None = None) -> list[tuple[str, Any]]:
    """Obligations: every callee-saved register (sp included) holds its entry value at the return;
    with ``clobbered`` (a leaf function's ``ElfImage.clobbered_registers``), every register but
    those does."""
    out = []
    keep = CALLEE_SAVED if clobbered is None else [r for r in range(1, 32) if r not in clobbered]
    for r in keep:
        a, b = final.regs[r], entry.regs[r]
        if isinstance(a, int) and isinstance(b, int):
            if a != b:
                out.append((f"register x{r} restored", z3.BoolVal(True)))
        else:
            out.append((f"register x{r} restored", z3.BitVecVal(a, xlen) != b if isinstance(a, int) else a != (
                z3.BitVecVal(b, xlen) if isinstance(b, int) else b)))
    return out
