"""Machine: one emulated RISC-V hart (RV32IMC / RV64IMAC, optional Zbb) with flat RAM and a cycle model."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from rlcc.errors import BadInputError, EmulationError, RlccError

from . import _rvcore
from .cycle_model import Profile, load_profile
from .elf_loader import LoadedElf, load_elf

DEFAULT_MEM_BASE = 0x10000
DEFAULT_MEM_SIZE = 4 << 20
# The block cache's address map takes 2 bytes per RAM byte on top of the RAM itself.
MAX_MEM_SIZE = 256 << 20
DEFAULT_MAX_INSTRUCTIONS = 200_000_000
_EBREAK = 0x00100073
ABI_NAMES = (
    "zero ra sp gp tp t0 t1 t2 s0 s1 a0 a1 a2 a3 a4 a5 a6 a7 s2 s3 s4 s5 s6 s7 s8 s9 s10 s11 t3 t4 t5 t6".split()
)
_REG_INDEX = {n: i for i, n in enumerate(ABI_NAMES)} | {f"x{i}": i for i in range(32)} | {"fp": 8}


class EmulationFault(EmulationError):
    """The guest faulted or hit the instruction limit. ``kind`` is one of ``FAULT_KINDS`` or "limit"."""

    def __init__(self, message: str, kind: str, pc: int, addr: int | None = None, insn: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.pc = pc
        self.addr = addr
        self.insn = insn


FAULT_KINDS: tuple[str, ...] = tuple(_rvcore.FAULT_NAMES[1:])
_NO_SP = (1 << 64) - 1  # Core.sp_min before any memory access


def _core_call(fn: Callable[..., Any], *args: Any) -> Any:
    """Call into the core, which refuses (RuntimeError) while another thread is inside run()."""
    try:
        return fn(*args)
    except RuntimeError as e:
        if "already running" in str(e):
            raise RlccError("machine is already running (run() in another thread); use one Machine per thread") from None
        raise


@dataclass
class RunResult:
    """Outcome of one :meth:`Machine.run`. ``instret``/``cycles`` are for this run only."""

    halt_reason: str  # "ecall", "ebreak" or "limit" (only with limit_ok=True)
    exit_code: int | None  # a0 (signed) for ecall, None otherwise
    instret: int
    cycles: int
    pc: int
    total_instret: int
    total_cycles: int
    class_counts: dict[str, int] = field(default_factory=dict)  # retired instructions per class, this run
    halt_pc: int | None = None  # address of the ecall/ebreak that stopped the run
    # Stack bytes used this run (stack top - lowest sp at a memory access); None without stack bounds.
    stack_high_water_bytes: int | None = None

    def time_s(self, profile: Profile) -> float:
        """Modelled wall time of this run on ``profile``'s clock."""
        return self.cycles / profile.clock_hz


class Machine:
    """One hart + RAM [mem_base, mem_base + mem_size) + cycle profile.

    Example::

        m = Machine(xlen=64, profile="dpa")
        elf = m.load_elf("fw.elf")
        m.write_mem(elf.addr("inputs"), records.tobytes())
        r = m.run(max_instructions=10_000_000)
        out = m.read_array(elf.addr("outputs"), np.uint32, n)
    """

    def __init__(
        self,
        xlen: int = 64,
        profile: str | Path | Profile = "generic5",
        mem_base: int = DEFAULT_MEM_BASE,
        mem_size: int = DEFAULT_MEM_SIZE,
        zbb: bool | None = None,
    ) -> None:
        """``zbb=None`` enables Zbb iff the profile's ISA string has it."""
        if xlen not in (32, 64):
            raise BadInputError(f"xlen must be 32 or 64, got {xlen!r}")
        if mem_base % 8 or mem_size % 8 or mem_size < 4096 or mem_base < 0:
            raise BadInputError(f"RAM base/size must be multiples of 8 and size >= 4096 (got {mem_base:#x}, {mem_size:#x})")
        if mem_base + mem_size > (1 << xlen):
            raise BadInputError(f"RAM [{mem_base:#x}, {mem_base + mem_size:#x}) does not fit RV{xlen} addresses")
        if mem_size > MAX_MEM_SIZE:
            raise BadInputError(f"RAM size {mem_size:#x} exceeds the emulator's limit of {MAX_MEM_SIZE >> 20} MiB")
        self.profile: Profile = load_profile(profile)
        self.xlen = xlen
        self.mem_base = mem_base
        self.mem_size = mem_size
        self.zbb = self.profile.zbb if zbb is None else bool(zbb)
        try:
            self._core = _rvcore.Core(xlen, mem_base, mem_size, self.zbb)
        except MemoryError:
            raise BadInputError(
                f"cannot allocate {mem_size >> 20} MiB of guest RAM plus its block cache"
                f" (limit {MAX_MEM_SIZE >> 20} MiB; the host is short of memory)"
            ) from None
        self._core.set_costs(self.profile.cost_tuple(), self.profile.clock_hz, self.profile.timebase_hz)
        self.elf: LoadedElf | None = None
        self._mask = (1 << xlen) - 1
        self.stack_bounds: tuple[int, int] | None = None  # [bottom, top) of the guarded stack
        self.set_reg(2, self.stack_top)

    # --- program loading -------------------------------------------------------------------
    @property
    def stack_top(self) -> int:
        """Initial sp: 16 bytes below the end of RAM (the top 16 bytes hold the call() return stub)."""
        return self.mem_base + self.mem_size - 16

    def load_elf(self, path: str | Path) -> LoadedElf:
        """Load PT_LOAD segments, set pc = e_entry and sp = stack_top; returns entry + symbols.

        If the ELF defines its stack (``__stack_bottom``/``__stack_top``, or ``__stack_top`` and
        ``__stack_size``, as the SDK's link.ld does) the stack guard is set from it.
        """
        self.elf = load_elf(path, self._core, self.xlen, self.mem_base, self.mem_size)
        self.pc = self.elf.entry
        self.set_reg(2, self.stack_top)
        syms = self.elf.symbols
        if "__stack_top" in syms and ("__stack_bottom" in syms or "__stack_size" in syms):
            top = syms["__stack_top"].addr
            bottom = syms["__stack_bottom"].addr if "__stack_bottom" in syms else top - syms["__stack_size"].addr
            self.set_stack_bounds(bottom, top)
        return self.elf

    def set_stack_bounds(self, bottom: int, top: int) -> None:
        """Guard the stack [bottom, top): a load/store/atomic executed while sp < bottom faults with
        kind "stack_overflow", and each run measures its stack high-water mark against ``top``."""
        if not self.mem_base <= bottom < top <= self.mem_base + self.mem_size:
            raise BadInputError(
                f"stack [{bottom:#x}, {top:#x}) is not inside RAM [{self.mem_base:#x}, {self.mem_base + self.mem_size:#x})"
            )
        _core_call(self._core.set_stack_guard, bottom)
        self.stack_bounds = (bottom, top)

    def symbolize(self, addr: int) -> str | None:
        """Name of the loaded ELF's function containing ``addr`` (None if unknown)."""
        if self.elf is None:
            return None
        best = None
        for sym in self.elf.symbols.values():
            if sym.kind != "func" or sym.addr > addr:
                continue
            if addr < sym.addr + max(sym.size, 1) and (best is None or sym.addr > best.addr):
                best = sym
        return None if best is None else best.name

    def _where(self, pc: int) -> str:
        name = self.symbolize(pc)
        return f" in {name}" if name else ""

    @property
    def symbols(self) -> dict[str, int]:
        """Symbol name -> address of the loaded ELF."""
        return {} if self.elf is None else {n: s.addr for n, s in self.elf.symbols.items()}

    def symbol(self, name: str) -> int:
        """Address of a symbol of the loaded ELF (BadInputError if absent)."""
        if self.elf is None:
            raise BadInputError("no ELF loaded")
        return self.elf.addr(name)

    # --- memory ------------------------------------------------------------------------------
    def read_mem(self, addr: int, n: int) -> bytes:
        """Copy ``n`` bytes of guest RAM (EmulationError if outside RAM)."""
        try:
            return self._core.read_mem(addr, n)
        except (IndexError, OverflowError) as e:
            raise EmulationError(f"read_mem: {e}") from None

    def write_mem(self, addr: int, data: bytes | bytearray | memoryview | np.ndarray) -> None:
        """Copy a bytes-like object (or a C-contiguous numpy array) into guest RAM."""
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data)
        try:
            _core_call(self._core.write_mem, addr, data)
        except (IndexError, OverflowError) as e:
            raise EmulationError(f"write_mem: {e}") from None

    @property
    def memory(self) -> memoryview:
        """Read-only zero-copy view of all RAM (index 0 = mem_base). Write through write_mem().

        The view keeps the RAM alive (it references the core), even after the Machine is gone.
        """
        return self._core.memory()

    def read_array(self, addr: int, dtype: np.dtype | type | str, count: int) -> np.ndarray:
        """``count`` little-endian elements of ``dtype`` at ``addr`` (a copy)."""
        dt = np.dtype(dtype).newbyteorder("<")
        return np.frombuffer(self.read_mem(addr, dt.itemsize * count), dtype=dt).copy()

    def write_array(self, addr: int, values: Iterable | np.ndarray, dtype: np.dtype | type | str | None = None) -> None:
        """Write values as a little-endian array (dtype defaults to the array's own)."""
        arr = np.asarray(values, dtype=dtype)
        self.write_mem(addr, arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes())

    def read_u32(self, addr: int) -> int:
        return struct.unpack("<I", self.read_mem(addr, 4))[0]

    def read_u64(self, addr: int) -> int:
        return struct.unpack("<Q", self.read_mem(addr, 8))[0]

    def write_u32(self, addr: int, value: int) -> None:
        self.write_mem(addr, struct.pack("<I", value & 0xFFFFFFFF))

    def write_u64(self, addr: int, value: int) -> None:
        self.write_mem(addr, struct.pack("<Q", value & 0xFFFFFFFFFFFFFFFF))

    # --- registers and counters ------------------------------------------------------------
    def reg(self, r: int | str) -> int:
        """Unsigned value of register ``r`` (index or ABI name such as "a0")."""
        return self._core.get_reg(_REG_INDEX[r] if isinstance(r, str) else r)

    def reg_signed(self, r: int | str) -> int:
        v = self.reg(r)
        return v - (1 << self.xlen) if v >> (self.xlen - 1) else v

    def set_reg(self, r: int | str, value: int) -> None:
        """Set register ``r`` (value masked to XLEN; writes to x0 are ignored)."""
        _core_call(self._core.set_reg, _REG_INDEX[r] if isinstance(r, str) else r, value)

    def regs(self) -> tuple[int, ...]:
        """x0..x31 as unsigned integers."""
        return self._core.get_regs()

    @property
    def pc(self) -> int:
        return self._core.pc

    @pc.setter
    def pc(self, value: int) -> None:
        _core_call(setattr, self._core, "pc", value)

    @property
    def cycles(self) -> int:
        """Modelled cycles since creation / reset_counters() (what rdcycle returns)."""
        return self._core.cycles

    @property
    def instret(self) -> int:
        """Retired instructions since creation / reset_counters() (what rdinstret returns)."""
        return self._core.instret

    def reset_counters(self) -> None:
        """Zero cycles, instret and per-class statistics."""
        _core_call(self._core.reset_counters)

    def stats(self) -> dict[str, int]:
        """Cumulative retired counts per cycle class plus "branch_taken" and "load_use_stalls"."""
        vals = self._core.stats()
        names = list(_rvcore.CLASS_NAMES) + ["branch_taken", "load_use_stalls"]
        return dict(zip(names, vals))

    # --- execution ---------------------------------------------------------------------------
    def run(self, max_instructions: int = DEFAULT_MAX_INSTRUCTIONS, limit_ok: bool = False) -> RunResult:
        """Run from pc until ecall/ebreak (pc is left after it, so run() can resume).

        Raises EmulationFault (an rlcc.errors.EmulationError) on any guest fault, and on reaching
        ``max_instructions`` unless ``limit_ok`` (then halt_reason == "limit").
        """
        if max_instructions < 0:
            raise BadInputError("max_instructions must be >= 0")
        c = self._core
        i0, c0, s0 = c.instret, c.cycles, c.stats()
        _core_call(setattr, c, "sp_min", _NO_SP)
        halt = _rvcore.HALT_NAMES[_core_call(c.run, i0 + max_instructions)]
        if halt == "fault":
            raise self._fault_error()
        if halt == "limit" and not limit_ok:
            raise EmulationFault(
                f"instruction limit of {max_instructions} reached at pc={c.pc:#x}{self._where(c.pc)}"
                " without ecall/ebreak",
                "limit",
                c.pc,
            )
        s1 = c.stats()
        counts = {n: b - a for n, a, b in zip(_rvcore.CLASS_NAMES, s0, s1)}
        return RunResult(
            halt_reason=halt,
            exit_code=self.reg_signed(10) if halt == "ecall" else None,
            instret=c.instret - i0,
            cycles=c.cycles - c0,
            pc=c.pc,
            total_instret=c.instret,
            total_cycles=c.cycles,
            class_counts=counts,
            halt_pc=c.halt_pc if halt in ("ecall", "ebreak") else None,
            stack_high_water_bytes=self._stack_high_water(),
        )

    def _stack_high_water(self) -> int | None:
        if self.stack_bounds is None:
            return None
        top, sp_min = self.stack_bounds[1], self._core.sp_min
        return top - sp_min if sp_min < top else 0


    def call(self, func: str | int, *args: int, max_instructions: int = DEFAULT_MAX_INSTRUCTIONS) -> RunResult:
        """Call a guest function with integer args in a0..a7; returns when it returns (a0 in exit_code).

        ra points at an ebreak stub in the top 16 bytes of RAM; sp is reset to stack_top.
        """
        if len(args) > 8:
            raise BadInputError("call(): at most 8 register arguments")
        addr = self.symbol(func) if isinstance(func, str) else func
        stub = self.mem_base + self.mem_size - 16
        self.write_u32(stub, _EBREAK)
        for i, a in enumerate(args):
            self.set_reg(10 + i, a)
        self.set_reg(1, stub)
        self.set_reg(2, self.stack_top)
        self.pc = addr
        r = self.run(max_instructions)
        if r.halt_reason == "ebreak" and r.pc == stub + 4:
            r.exit_code = self.reg_signed(10)
        return r

    def _fault_error(self) -> EmulationFault:
        kind_i, pc, addr, insn = self._core.fault()
        kind = _rvcore.FAULT_NAMES[kind_i]
        ram = f"RAM [{self.mem_base:#x}, {self.mem_base + self.mem_size:#x})"
        where = self._where(pc)
        if kind == "stack_overflow":
            lo, hi = self.stack_bounds or (self._core.stack_lo, self.mem_base + self.mem_size)
            msg = (
                f"stack overflow at pc {pc:#x}{where} (sp {addr:#x} is below the stack bottom {lo:#x};"
                f" the stack is {hi - lo} bytes)"
            )
            return EmulationFault(msg, kind, pc, addr, insn)
        w = 8 if self.xlen == 64 else 8
        insn_s = f" (insn {insn:#0{w + 2}x})" if kind not in ("fetch_out_of_range", "fetch_misaligned") else ""
        if kind == "illegal_instruction":
            msg = f"illegal or unsupported instruction {insn:#x} at pc={pc:#x}{where}"
            return EmulationFault(msg, kind, pc, None, insn)
        if kind.endswith("out_of_range"):
            what = {"fetch": "instruction fetch", "load": "load", "store": "store", "amo": "atomic", "jump": "jump target"}[
                kind.split("_")[0]
            ]
            msg = f"{kind}: {what} address {addr:#x} outside {ram} at pc={pc:#x}{where}{insn_s}"
        else:
            msg = f"{kind}: misaligned address {addr:#x} at pc={pc:#x}{where}{insn_s}"
        return EmulationFault(msg, kind, pc, addr, insn if insn_s else None)
