"""Python API: ELF loading and validation, bulk memory access, call(), and the toolchain helper."""

from __future__ import annotations

import numpy as np
import pytest

from rlcc.emulator import Machine
from rlcc.errors import BadInputError, BuildError, EmulationError
from rlcc.verify.toolchain import compile_riscv, target_flags


def test_elf_symbols_entry_and_class_check(compiled):
    path64 = compiled("trees", 64)
    m = Machine(xlen=64)
    elf = m.load_elf(path64)
    assert m.pc == elf.entry == elf.addr("_start")
    assert {"main", "out", "predict"} <= set(m.symbols) or {"main", "out"} <= set(m.symbols)
    assert elf.symbols["out"].size == 16 and elf.symbols["out"].kind == "object"
    with pytest.raises(BadInputError, match="no symbol"):
        elf.addr("does_not_exist")
    with pytest.raises(BadInputError, match="64-bit but the machine is RV32"):
        Machine(xlen=32).load_elf(path64)
    with pytest.raises(BadInputError, match="32-bit but the machine is RV64"):
        Machine(xlen=64).load_elf(compiled("trees", 32))


def test_elf_bad_inputs(tmp_path, compiled):
    p = tmp_path / "junk.elf"
    p.write_bytes(b"not an elf at all" * 10)
    with pytest.raises(BadInputError, match="not an ELF"):
        Machine().load_elf(p)
    with pytest.raises(BadInputError, match="cannot open"):
        Machine().load_elf(tmp_path / "missing.elf")
    with pytest.raises(BadInputError, match="outside RAM"):
        Machine(xlen=64, mem_base=0x100000).load_elf(compiled("crc", 64))
    import sys

    with pytest.raises(BadInputError, match="expected RISC-V"):
        Machine().load_elf(sys.executable)


def test_bulk_memory_roundtrip_and_bounds():
    m = Machine(xlen=64)
    addr = m.mem_base + 0x2000
    recs = np.arange(4096, dtype=np.uint32).reshape(-1, 8)
    m.write_mem(addr, recs)
    assert (m.read_array(addr, np.uint32, recs.size) == recs.ravel()).all()
    assert bytes(m.memory[0x2000:0x2008]) == recs.tobytes()[:8]
    m.write_array(addr, [-1, 2], dtype=np.int64)
    assert m.read_u64(addr) == (1 << 64) - 1 and m.read_u32(addr + 8) == 2
    with pytest.raises(EmulationError, match="outside RAM"):
        m.read_mem(m.mem_base + m.mem_size - 4, 8)
    with pytest.raises(EmulationError, match="outside RAM"):
        m.write_mem(m.mem_base - 1, b"x")
    with pytest.raises(TypeError):
        m.memory[0] = 1  # read-only view
    with pytest.raises(BadInputError):
        Machine(xlen=16)
    with pytest.raises(BadInputError):
        Machine(xlen=32, mem_base=0xFFFF0000, mem_size=1 << 20)


def test_reg_names_and_masking():
    m = Machine(xlen=32)
    m.set_reg("a0", -1)
    assert m.reg(10) == 0xFFFFFFFF and m.reg_signed("a0") == -1
    m.set_reg("zero", 5)
    assert m.reg(0) == 0
    assert len(m.regs()) == 32 and m.reg("sp") == m.stack_top


@pytest.mark.parametrize("xlen", [32, 64])
def test_call_guest_function(compiled, xlen):
    m = Machine(xlen=xlen)
    elf = m.load_elf(compiled("crc", xlen))
    data = bytes(range(200))
    buf = m.mem_base + 0x300000
    m.write_mem(buf, data)
    import zlib

    for n in (0, 1, 200):
        r = m.call("crc32", buf, n)
        assert r.halt_reason == "ebreak"
        assert (r.exit_code & 0xFFFFFFFF) == zlib.crc32(data[:n])
    assert elf.addr("crc32") == m.symbol("crc32")


def test_toolchain_errors_and_flags(tmp_path):
    bad = tmp_path / "bad.c"
    bad.write_text("int main(void) { return undefined_thing; }\n")
    with pytest.raises(BuildError, match="undefined_thing"):
        compile_riscv([bad], target="rv32imc", out_path=tmp_path / "bad.elf")
    with pytest.raises(BuildError, match="unknown target"):
        compile_riscv([bad], target="rv64gc")
    with pytest.raises(BuildError, match="not found"):
        compile_riscv([tmp_path / "nope.c"])
    with pytest.raises(BuildError, match="compiler not found"):
        compile_riscv([bad], cc="definitely-not-a-compiler-xyz")
    assert target_flags("rv64imac", zbb=True)[-2] == "-mcpu=generic_rv64+m+a+c+zbb"
    assert target_flags("rv32imc", gcc_style=True) == ["-march=rv32imc", "-mabi=ilp32"]
    assert "-march=rv64imac_zbb" in target_flags("rv64imac", zbb=True, gcc_style=True)


def test_zbb_build_runs_on_dpa_profile(compiled):
    path = compiled("crc", 64, zbb=True)
    m = Machine(xlen=64, profile="dpa")
    m.load_elf(path)
    r = m.run()
    ref = Machine(xlen=64, profile="dpa")
    ref.load_elf(compiled("crc", 64))
    assert r.exit_code == ref.run().exit_code


def test_write_mem_over_executed_code_takes_effect():
    import rv_testkit as K

    m = Machine(xlen=64)
    prog = K.words(K.opimm("addi", 10, 0, 1), K.ECALL)
    m.write_mem(m.mem_base, prog)
    m.pc = m.mem_base
    assert m.run().exit_code == 1
    m.write_mem(m.mem_base, prog)  # same bytes: decode cache kept
    m.pc = m.mem_base
    assert m.run().exit_code == 1
    m.write_mem(m.mem_base, K.words(K.opimm("addi", 10, 0, 2)))  # new code is executed
    m.pc = m.mem_base
    assert m.run().exit_code == 2
