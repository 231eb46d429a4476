"""Compiled C programs (zig cc, -O2) give the same results on rlcc's emulator and on unicorn."""

from __future__ import annotations

import pytest
from unicorn import UC_ARCH_RISCV, UC_HOOK_INTR, UC_MODE_RISCV32, UC_MODE_RISCV64, Uc
from unicorn import riscv_const as rc

from rlcc.emulator import Machine
from rlcc.emulator.elf_loader import load_elf

BASE, SIZE = 0x10000, 4 << 20


class _UcMem:
    def __init__(self, uc: Uc) -> None:
        self.uc = uc

    def write_mem(self, addr: int, data: bytes) -> None:
        self.uc.mem_write(addr, bytes(data))


def run_on_unicorn(path, xlen):
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV32 if xlen == 32 else UC_MODE_RISCV64)
    uc.mem_map(BASE, SIZE)
    elf = load_elf(path, _UcMem(uc), xlen, BASE, SIZE)
    uc.reg_write(rc.UC_RISCV_REG_SP, BASE + SIZE - 16)
    stopped = []

    def on_intr(uc_, intno, _):
        stopped.append(intno)
        uc_.emu_stop()

    uc.hook_add(UC_HOOK_INTR, on_intr)
    uc.emu_start(elf.entry, 0, count=50_000_000)
    assert stopped, "unicorn did not reach ecall"
    regs = tuple(uc.reg_read(rc.UC_RISCV_REG_X0 + i) & ((1 << xlen) - 1) for i in range(32))
    return elf, regs, uc


@pytest.mark.parametrize("xlen", [32, 64])
@pytest.mark.parametrize("name", ["crc", "sort", "muldiv64", "trees"])
def test_program_matches_unicorn(compiled, name, xlen):
    path = compiled(name, xlen)
    m = Machine(xlen=xlen, mem_base=BASE, mem_size=SIZE)
    elf = m.load_elf(path)
    r = m.run(max_instructions=50_000_000)
    assert r.halt_reason == "ecall"
    assert r.instret > 1000
    uelf, uregs, uc = run_on_unicorn(path, xlen)
    assert m.regs() == uregs
    out = elf.symbols["out"] if "out" in elf.symbols else elf.symbols["result_crc"]
    assert m.read_mem(out.addr, out.size) == bytes(uc.mem_read(out.addr, out.size))
    # the whole loaded image (code + data + bss) matches too
    for vaddr, _filesz, memsz in elf.segments:
        assert m.read_mem(vaddr, memsz) == bytes(uc.mem_read(vaddr, memsz)), f"segment {vaddr:#x} differs"
    # and the top of the stack
    assert m.read_mem(BASE + SIZE - 4096, 4096) == bytes(uc.mem_read(BASE + SIZE - 4096, 4096))


def test_crc_value_is_right(compiled):
    """Independent check of one program's output against Python (zlib)."""
    import zlib

    s, buf = 12345, bytearray()
    for _ in range(4096):
        s = (s * 1103515245 + 12345) & 0xFFFFFFFF
        buf.append((s >> 16) & 0xFF)
    c = 0
    for r in range(4):
        c = (c * 31 + zlib.crc32(bytes(buf[r * 7 :]))) & 0xFFFFFFFF
    for xlen in (32, 64):
        m = Machine(xlen=xlen)
        elf = m.load_elf(compiled("crc", xlen))
        r = m.run()
        assert m.read_u32(elf.addr("result_crc")) == c
        assert r.exit_code == c & 0x7F


def test_sort_is_sorted(compiled):
    for xlen in (32, 64):
        m = Machine(xlen=xlen)
        elf = m.load_elf(compiled("sort", xlen))
        assert m.run().exit_code == 0
        data = m.read_array(elf.addr("data"), "<i4", 600)
        assert (data[1:] >= data[:-1]).all()
