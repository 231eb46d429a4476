"""Directed corner-case tests of the ISA semantics (expected values from the RISC-V spec, computed in Python)."""

from __future__ import annotations

import pytest
import rv_testkit as K

from rlcc.emulator import Machine
from rlcc.errors import EmulationError

BASE = K.BASE


def run(xlen: int, code: bytes, regs: dict | None = None, zbb: bool | None = None, profile: str = "generic5") -> Machine:
    m = Machine(xlen=xlen, profile=profile, zbb=zbb)
    m.write_mem(BASE, code + K.words(K.EBREAK))
    for i, v in (regs or {}).items():
        m.set_reg(i, v)
    m.pc = BASE
    r = m.run(max_instructions=10_000)
    assert r.halt_reason == "ebreak"
    return m


def s(v: int, xlen: int) -> int:
    v &= (1 << xlen) - 1
    return v - (1 << xlen) if v >> (xlen - 1) else v


def u(v: int, xlen: int) -> int:
    return v & ((1 << xlen) - 1)


def binop(xlen: int, name: str, a: int, b: int, zbb: bool | None = None) -> int:
    return run(xlen, K.words(K.op(name, 10, 11, 12)), {11: a, 12: b}, zbb=zbb).reg(10)


# ------------------------------------------------------------------ M extension


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


@pytest.mark.parametrize("xlen", [32, 64])
def test_div_rem_by_zero_and_overflow(xlen):
    mn = 1 << (xlen - 1)
    allones = (1 << xlen) - 1
    for a in (0, 1, 7, mn, allones, 12345):
        assert binop(xlen, "div", a, 0) == allones
        assert binop(xlen, "divu", a, 0) == allones
        assert binop(xlen, "rem", a, 0) == a
        assert binop(xlen, "remu", a, 0) == a
    assert binop(xlen, "div", mn, allones) == mn  # INT_MIN / -1
    assert binop(xlen, "rem", mn, allones) == 0
    for a, b in ((-7, 2), (7, -2), (-7, -2), (mn, 3), (5, 7)):
        assert binop(xlen, "div", a, b) == u(_trunc_div(s(a, xlen), s(b, xlen)), xlen)
        assert binop(xlen, "rem", a, b) == u(s(a, xlen) - _trunc_div(s(a, xlen), s(b, xlen)) * s(b, xlen), xlen)


def test_w_forms_div_rem_and_sign_extension():
    m64 = (1 << 64) - 1
    # divw by zero -> -1 (sign-extended), remw by zero -> sext(low 32 of dividend)
    assert binop(64, "divw", 0x1234_0000_0005, 0) == m64
    assert binop(64, "divuw", 0x1234_0000_0005, 0) == m64
    assert binop(64, "remw", 0x1234_8000_0005, 0) == u(-0x7FFFFFFB, 64)
    assert binop(64, "remuw", 0x1234_8000_0005, 0) == u(-0x7FFFFFFB, 64)
    # INT32_MIN / -1
    assert binop(64, "divw", 0x8000_0000, m64) == u(-(1 << 31), 64)
    assert binop(64, "remw", 0x8000_0000, m64) == 0
    assert binop(64, "divuw", 0xFFFF_FFFE, 2) == 0x7FFF_FFFF
    assert binop(64, "mulw", 0x10000, 0x8000) == u(-(1 << 31), 64)
    assert binop(64, "addw", 0x7FFF_FFFF, 1) == u(-(1 << 31), 64)
    assert binop(64, "subw", 0, 1) == m64
    assert binop(64, "sllw", 1, 31 + 32) == u(-(1 << 31), 64)  # shift amount masked to 5 bits
    assert binop(64, "srlw", 0xFFFF_FFFF_8000_0000, 31) == 1
    assert binop(64, "sraw", 0x8000_0000, 4) == u(-(1 << 27), 64)
    m = run(64, K.words(K.addiw(10, 11, -1), K.shift_imm("slliw", 12, 11, 31, True),
                        K.shift_imm("srliw", 13, 14, 0, True)), {11: 0x1_0000_0000, 14: 0xFFFF_FFFF_8000_0001})
    assert m.reg(10) == m64 and m.reg(12) == 0 and m.reg(13) == u(-0x7FFFFFFF, 64)


@pytest.mark.parametrize("xlen", [32, 64])
def test_mulh_variants(xlen):
    vals = [0, 1, 3, (1 << xlen) - 1, 1 << (xlen - 1), (1 << (xlen - 1)) - 1, 0xDEADBEEF, 0x1234_5678_9ABC_DEF0]
    for a in vals:
        for b in vals:
            a, b = u(a, xlen), u(b, xlen)
            assert binop(xlen, "mul", a, b) == u(a * b, xlen)
            assert binop(xlen, "mulh", a, b) == u((s(a, xlen) * s(b, xlen)) >> xlen, xlen)
            assert binop(xlen, "mulhsu", a, b) == u((s(a, xlen) * b) >> xlen, xlen)
            assert binop(xlen, "mulhu", a, b) == u((a * b) >> xlen, xlen)


# ------------------------------------------------------------------ I extension corner cases


@pytest.mark.parametrize("xlen", [32, 64])
def test_load_sign_extension(xlen):
    m = Machine(xlen=xlen)
    m.write_mem(K.SCRATCH, bytes([0x80, 0xFF, 0x00, 0x80, 0xFE, 0xFF, 0xFF, 0xFF]))
    code = [K.load("lb", 10, 8, 0), K.load("lbu", 11, 8, 0), K.load("lh", 12, 8, 2), K.load("lhu", 13, 8, 2),
            K.load("lw", 14, 8, 0), K.load("lw", 15, 8, 4)]
    if xlen == 64:
        code += [K.load("lwu", 16, 8, 0), K.load("ld", 17, 8, 0)]
    m.write_mem(BASE, K.words(*code, K.EBREAK))
    m.set_reg(8, K.SCRATCH)
    m.pc = BASE
    m.run()
    assert m.reg(10) == u(-128, xlen) and m.reg(11) == 0x80
    assert m.reg(12) == u(-0x8000, xlen) and m.reg(13) == 0x8000
    assert m.reg(14) == u(s(0x8000FF80, 32), xlen) and m.reg(15) == u(-2, xlen)
    if xlen == 64:
        assert m.reg(16) == 0x8000FF80 and m.reg(17) == 0xFFFFFFFE_8000FF80


@pytest.mark.parametrize("xlen", [32, 64])
def test_register_shifts_mask_the_amount(xlen):
    v = u(-0x100, xlen)
    for amt in (xlen, xlen + 3, 2 * xlen - 1, (1 << xlen) - 1):
        sh = amt & (xlen - 1)
        assert binop(xlen, "sll", v, amt) == u(v << sh, xlen)
        assert binop(xlen, "srl", v, amt) == v >> sh
        assert binop(xlen, "sra", v, amt) == u(s(v, xlen) >> sh, xlen)


def test_rv32_shift_immediate_with_bit5_is_illegal():
    m = Machine(xlen=32)
    m.write_mem(BASE, K.words(K.i_type(0x020 | 1, 11, 1, 10, 0x13)))  # slli a0, a1, 33
    m.pc = BASE
    with pytest.raises(EmulationError) as ei:
        m.run()
    assert ei.value.kind == "illegal_instruction"


@pytest.mark.parametrize("xlen", [32, 64])
def test_x0_is_hardwired_and_jalr_with_rd_equal_rs1(xlen):
    target = BASE + 12
    m = run(xlen, K.words(K.opimm("addi", 0, 0, 5), K.jalr(5, 5, 0), K.NOP, K.opimm("addi", 6, 0, 1)), {5: target})
    assert m.reg(0) == 0
    assert m.reg(5) == BASE + 8  # link written after the target was computed from the old rs1
    assert m.reg(6) == 1


# ------------------------------------------------------------------ C extension


def test_c_jal_on_rv32_vs_c_addiw_on_rv64():
    # same halfword: rv32 c.jal +16 (links ra), rv64 c.addiw x16, imm
    hw = K.c_jal(16)
    code32 = K.assemble([(hw, 2)] + [(K.c_li(10, 7), 2)] * 7 + [(K.c_li(11, 9), 2)])
    m = Machine(xlen=32)
    m.write_mem(BASE, code32 + K.words(K.EBREAK))
    m.pc = BASE
    m.run()
    assert m.reg(1) == BASE + 2 and m.reg(10) == 0 and m.reg(11) == 9
    # decode the same bits on rv64: funct3=001 quadrant 1 -> c.addiw rd=field
    rd = (hw >> 7) & 31
    imm = s(((hw >> 12) & 1) << 5 | ((hw >> 2) & 31), 6)
    m = Machine(xlen=64)
    m.write_mem(BASE, K.assemble([(hw, 2), (K.C_EBREAK, 2)]))
    m.set_reg(rd, 0x7FFF_FFFF)
    m.pc = BASE
    m.run()
    assert rd != 0 and m.reg(rd) == u(s(0x7FFF_FFFF + imm, 32), 64)


@pytest.mark.parametrize("xlen", [32, 64])
def test_compressed_stack_and_upper_forms(xlen):
    sp = K.SCRATCH + 1024
    code = K.assemble([
        (K.c_lui(10, -1), 2),          # a0 = sext(0xfffff000)
        (K.c_lui(11, 31), 2),          # a1 = 0x1f000
        (K.c_addi16sp(-64), 2),        # sp -= 64
        (K.c_swsp(11, 8), 2),          # [sp+8] = a1
        (K.c_lwsp(12, 8), 2),          # a2 = [sp+8]
        (K.c_addi4spn(13, 16), 2),     # a3 = sp + 16
        (K.c_addi16sp(64), 2),
        (K.c_li(14, -1), 2), (K.c_shift("srli", 14, 1), 2),
        (K.c_mv(15, 2), 2),
    ])
    m = run(xlen, code, {2: sp})
    assert m.reg(10) == u(-4096, xlen) and m.reg(11) == 0x1F000 and m.reg(12) == 0x1F000
    assert m.reg(13) == sp - 64 + 16 and m.reg(2) == sp and m.reg(15) == sp
    assert m.reg(14) == (1 << (xlen - 1)) - 1
    assert m.read_u32(sp - 64 + 8) == 0x1F000


@pytest.mark.parametrize("xlen,hw", [
    (32, 0x0000),                    # all-zero halfword (c.addi4spn nzuimm=0)
    (64, 0x0000),
    (32, K.c_lui(10, 0)),            # c.lui nzimm=0: reserved
    (32, K.c_addi16sp(0)),           # c.addi16sp 0: reserved
    (64, K.c_jr(0)),                 # c.jr x0: reserved
    (32, K.c_lwsp(0, 4)),            # c.lwsp rd=x0: reserved
    (64, K.c_addiw(0, 1)),           # c.addiw rd=x0: reserved
    (32, 0x6000),                    # c.flw (no F)
    (64, 0x2000),                    # c.fld (no D)
    (32, K.c_shift("slli", 10, 33)), # RV32 shamt[5]=1
    (32, K.c_arith("addw", 10, 11)), # c.addw does not exist on RV32
])
def test_reserved_compressed_encodings_fault(xlen, hw):
    m = Machine(xlen=xlen)
    m.write_mem(BASE, K.assemble([(hw, 2), (K.C_EBREAK, 2)]))
    m.pc = BASE
    with pytest.raises(EmulationError) as ei:
        m.run()
    assert ei.value.kind == "illegal_instruction" and ei.value.pc == BASE and ei.value.insn == hw


# ------------------------------------------------------------------ A extension


@pytest.mark.parametrize("xlen", [32, 64])
def test_lr_sc(xlen):
    addr = K.SCRATCH + 64
    code = K.words(
        K.amo("sc", "w", 10, 8, 12),          # no reservation: fails (1), memory unchanged
        K.amo("lr", "w", 11, 8, 0),           # a1 = mem
        K.amo("sc", "w", 13, 8, 12),          # succeeds (0)
        K.amo("sc", "w", 14, 8, 15),          # reservation consumed: fails
        K.amo("lr", "w", 16, 8, 0),
        K.amo("sc", "w", 17, 9, 15),          # different address: fails
        K.amo("amoadd", "w", 18, 8, 19),
    )
    m = Machine(xlen=xlen)
    m.write_u32(addr, 0x8000_0001)
    m.write_mem(BASE, code + K.words(K.EBREAK))
    for r, v in {8: addr, 9: addr + 8, 12: 0x55, 15: 0x66, 19: 5}.items():
        m.set_reg(r, v)
    m.pc = BASE
    m.run()
    assert m.reg(10) == 1 and m.reg(11) == u(s(0x8000_0001, 32), xlen)
    assert m.reg(13) == 0 and m.reg(14) == 1 and m.reg(16) == 0x55 and m.reg(17) == 1
    assert m.reg(18) == 0x55 and m.read_u32(addr) == 0x5A and m.read_u32(addr + 8) == 0


# ------------------------------------------------------------------ Zbb (reference model in Python)


def _zbb_ref(name: str, a: int, b: int, xlen: int) -> int:
    sa, sb, sh = s(a, xlen), s(b, xlen), b & (xlen - 1)
    a32 = a & 0xFFFFFFFF
    r = {
        "andn": lambda: a & ~b, "orn": lambda: a | ~b, "xnor": lambda: ~(a ^ b),
        "min": lambda: min(sa, sb), "max": lambda: max(sa, sb), "minu": lambda: min(a, b), "maxu": lambda: max(a, b),
        "rol": lambda: (a << sh) | (a >> ((xlen - sh) % xlen)) if sh else a,
        "ror": lambda: (a >> sh) | (a << ((xlen - sh) % xlen)) if sh else a,
        "rolw": lambda: s(((a32 << (b & 31)) | (a32 >> ((32 - (b & 31)) % 32))) & 0xFFFFFFFF, 32),
        "rorw": lambda: s(((a32 >> (b & 31)) | (a32 << ((32 - (b & 31)) % 32))) & 0xFFFFFFFF, 32),
        "clz": lambda: xlen - a.bit_length(), "ctz": lambda: (a & -a).bit_length() - 1 if a else xlen,
        "cpop": lambda: bin(a).count("1"), "clzw": lambda: 32 - a32.bit_length(),
        "ctzw": lambda: (a32 & -a32).bit_length() - 1 if a32 else 32, "cpopw": lambda: bin(a32).count("1"),
        "sext.b": lambda: s(a & 0xFF, 8), "sext.h": lambda: s(a & 0xFFFF, 16), "zext.h": lambda: a & 0xFFFF,
        "rev8": lambda: int.from_bytes(a.to_bytes(xlen // 8, "little"), "big"),
        "orc.b": lambda: sum(0xFF << i for i in range(0, xlen, 8) if (a >> i) & 0xFF),
    }[name]()
    return u(r, xlen)


@pytest.mark.parametrize("xlen", [32, 64])
def test_zbb_against_reference(xlen):
    import random

    rng = random.Random(7)
    vals = [0, 1, 0x80, (1 << xlen) - 1, 1 << (xlen - 1), 0x00FF_0001] + [rng.getrandbits(xlen) for _ in range(8)]
    binops = ["andn", "orn", "xnor", "min", "max", "minu", "maxu", "rol", "ror"] + (["rolw", "rorw"] if xlen == 64 else [])
    unops = ["clz", "ctz", "cpop", "sext.b", "sext.h", "zext.h", "rev8", "orc.b"] + (
        ["clzw", "ctzw", "cpopw"] if xlen == 64 else [])
    for a in vals:
        code = [K.unary_zbb(n, 10 + i, 5, xlen) for i, n in enumerate(unops)]
        m = run(xlen, K.words(*code), {5: a}, zbb=True)
        for i, n in enumerate(unops):
            assert m.reg(10 + i) == _zbb_ref(n, a, 0, xlen), (n, hex(a))
        for b in vals[:6] + [3, xlen + 5]:
            code = [K.op(n, 10 + i, 5, 6) for i, n in enumerate(binops)]
            code += [K.shift_imm("rori", 28, 5, b % xlen)]
            if xlen == 64:
                code += [K.shift_imm("roriw", 29, 5, b % 32, True)]
            m = run(xlen, K.words(*code), {5: a, 6: b}, zbb=True)
            for i, n in enumerate(binops):
                assert m.reg(10 + i) == _zbb_ref(n, a, u(b, xlen), xlen), (n, hex(a), hex(b))
            assert m.reg(28) == _zbb_ref("ror", a, b % xlen, xlen)
            if xlen == 64:
                assert m.reg(29) == _zbb_ref("rorw", a, b % 32, xlen)


def test_zbb_illegal_without_zbb_and_enabled_by_dpa_profile():
    code = K.words(K.unary_zbb("cpop", 10, 11, 64))
    with pytest.raises(EmulationError) as ei:
        run(64, code, {11: 7}, profile="generic5")
    assert ei.value.kind == "illegal_instruction"
    assert run(64, code, {11: 7}, profile="dpa").reg(10) == 3


# ------------------------------------------------------------------ misc


@pytest.mark.parametrize("xlen", [32, 64])
def test_self_modifying_code_is_seen(xlen):
    # store "addi a0, x0, 42" over the instruction at BASE+8 after it ran once
    new = K.opimm("addi", 10, 0, 42)
    code = K.words(
        K.opimm("addi", 6, 0, 2),       # 0: loop counter
        K.opimm("addi", 10, 0, 1),      # 4
        K.opimm("addi", 10, 10, 0),     # 8: patched to addi a0, x0, 42
        K.store("sw", 7, 5, 8),         # 12: *(BASE + 8) = t2
        K.FENCE_I,                      # 16
        K.opimm("addi", 6, 6, -1),      # 20
        K.branch("bne", 6, 0, -16),     # 24 -> 8
    )
    m = run(xlen, code, {5: BASE, 7: new})
    assert m.reg(10) == 42
