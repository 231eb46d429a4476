"""Test helpers: a small RISC-V instruction encoder and a unicorn oracle runner.

The encoder is written from the ISA manual's tables, independently of emulator/csrc.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from unicorn import UC_ARCH_RISCV, UC_MODE_RISCV32, UC_MODE_RISCV64, Uc
from unicorn import riscv_const as rc

from rlcc.emulator import Machine

# ----------------------------------------------------------------------------- 32-bit encoders


def r_type(f7: int, rs2: int, rs1: int, f3: int, rd: int, opc: int) -> int:
    return (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc


def i_type(imm: int, rs1: int, f3: int, rd: int, opc: int) -> int:
    return ((imm & 0xFFF) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc


def s_type(imm: int, rs2: int, rs1: int, f3: int, opc: int = 0x23) -> int:
    imm &= 0xFFF
    return ((imm >> 5) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((imm & 0x1F) << 7) | opc


def b_type(off: int, rs2: int, rs1: int, f3: int) -> int:
    o = off & 0x1FFF
    return (
        (((o >> 12) & 1) << 31) | (((o >> 5) & 0x3F) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12)
        | (((o >> 1) & 0xF) << 8) | (((o >> 11) & 1) << 7) | 0x63
    )


def u_type(imm20: int, rd: int, opc: int) -> int:
    return ((imm20 & 0xFFFFF) << 12) | (rd << 7) | opc


def j_type(off: int, rd: int) -> int:
    o = off & 0x1FFFFF
    return (
        (((o >> 20) & 1) << 31) | (((o >> 1) & 0x3FF) << 21) | (((o >> 11) & 1) << 20) | (((o >> 12) & 0xFF) << 12)
        | (rd << 7) | 0x6F
    )


OP = {  # name: (f7, f3) for opcode 0x33
    "add": (0, 0), "sub": (0x20, 0), "sll": (0, 1), "slt": (0, 2), "sltu": (0, 3), "xor": (0, 4),
    "srl": (0, 5), "sra": (0x20, 5), "or": (0, 6), "and": (0, 7),
    "mul": (1, 0), "mulh": (1, 1), "mulhsu": (1, 2), "mulhu": (1, 3), "div": (1, 4), "divu": (1, 5),
    "rem": (1, 6), "remu": (1, 7),
    "andn": (0x20, 7), "orn": (0x20, 6), "xnor": (0x20, 4), "min": (5, 4), "minu": (5, 5), "max": (5, 6),
    "maxu": (5, 7), "rol": (0x30, 1), "ror": (0x30, 5),
}
OP32 = {  # opcode 0x3b (RV64 only)
    "addw": (0, 0), "subw": (0x20, 0), "sllw": (0, 1), "srlw": (0, 5), "sraw": (0x20, 5),
    "mulw": (1, 0), "divw": (1, 4), "divuw": (1, 5), "remw": (1, 6), "remuw": (1, 7),
    "rolw": (0x30, 1), "rorw": (0x30, 5),
}
OPIMM = {"addi": 0, "slti": 2, "sltiu": 3, "xori": 4, "ori": 6, "andi": 7}
LOADS = {"lb": (0, 1), "lh": (1, 2), "lw": (2, 4), "ld": (3, 8), "lbu": (4, 1), "lhu": (5, 2), "lwu": (6, 4)}
STORES = {"sb": (0, 1), "sh": (1, 2), "sw": (2, 4), "sd": (3, 8)}
BRANCHES = {"beq": 0, "bne": 1, "blt": 4, "bge": 5, "bltu": 6, "bgeu": 7}
AMOS = {"amoswap": 1, "amoadd": 0, "amoxor": 4, "amoand": 0xC, "amoor": 8, "amomin": 0x10, "amomax": 0x14,
        "amominu": 0x18, "amomaxu": 0x1C}


def op(name: str, rd: int, rs1: int, rs2: int) -> int:
    if name in OP:
        f7, f3 = OP[name]
        return r_type(f7, rs2, rs1, f3, rd, 0x33)
    f7, f3 = OP32[name]
    return r_type(f7, rs2, rs1, f3, rd, 0x3B)


def opimm(name: str, rd: int, rs1: int, imm: int) -> int:
    return i_type(imm, rs1, OPIMM[name], rd, 0x13)


def shift_imm(name: str, rd: int, rs1: int, sh: int, word: bool = False) -> int:
    f3 = 1 if name.startswith("sll") else 5
    hi = 0x400 if name.startswith("sra") else 0
    if name.startswith("ror"):
        hi = 0x600
    return i_type(hi | sh, rs1, f3, rd, 0x1B if word else 0x13)


def addiw(rd: int, rs1: int, imm: int) -> int:
    return i_type(imm, rs1, 0, rd, 0x1B)


def load(name: str, rd: int, rs1: int, imm: int) -> int:
    return i_type(imm, rs1, LOADS[name][0], rd, 0x03)


def store(name: str, rs2: int, rs1: int, imm: int) -> int:
    return s_type(imm, rs2, rs1, STORES[name][0])


def branch(name: str, rs1: int, rs2: int, off: int) -> int:
    return b_type(off, rs2, rs1, BRANCHES[name])


def lui(rd: int, imm20: int) -> int:
    return u_type(imm20, rd, 0x37)


def auipc(rd: int, imm20: int) -> int:
    return u_type(imm20, rd, 0x17)


def jal(rd: int, off: int) -> int:
    return j_type(off, rd)


def jalr(rd: int, rs1: int, imm: int) -> int:
    return i_type(imm, rs1, 0, rd, 0x67)


def amo(name: str, width: str, rd: int, rs1: int, rs2: int, aq: int = 0, rl: int = 0) -> int:
    f3 = 2 if width == "w" else 3
    if name == "lr":
        f5, rs2 = 2, 0
    elif name == "sc":
        f5 = 3
    else:
        f5 = AMOS[name]
    return (f5 << 27) | (aq << 26) | (rl << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | 0x2F


def csrr(rd: int, csr: int) -> int:
    return i_type(csr, 0, 2, rd, 0x73)  # csrrs rd, csr, x0


def unary_zbb(name: str, rd: int, rs1: int, xlen: int) -> int:
    codes = {"clz": (0x600, 1, 0x13), "ctz": (0x601, 1, 0x13), "cpop": (0x602, 1, 0x13),
             "sext.b": (0x604, 1, 0x13), "sext.h": (0x605, 1, 0x13), "orc.b": (0x287, 5, 0x13),
             "rev8": (0x6B8 if xlen == 64 else 0x698, 5, 0x13),
             "clzw": (0x600, 1, 0x1B), "ctzw": (0x601, 1, 0x1B), "cpopw": (0x602, 1, 0x1B)}
    if name == "zext.h":
        return r_type(0x04, 0, rs1, 4, rd, 0x3B if xlen == 64 else 0x33)
    imm, f3, opc = codes[name]
    return i_type(imm, rs1, f3, rd, opc)


ECALL = 0x00000073
EBREAK = 0x00100073
FENCE = 0x0FF0000F
FENCE_I = 0x0000100F
NOP = 0x00000013

# ----------------------------------------------------------------------------- 16-bit encoders


def _b(v: int, hi: int, lo: int) -> int:
    return (v >> lo) & ((1 << (hi - lo + 1)) - 1)


def c_addi(rd: int, imm: int) -> int:
    return (0 << 13) | (_b(imm, 5, 5) << 12) | (rd << 7) | (_b(imm, 4, 0) << 2) | 1


def c_li(rd: int, imm: int) -> int:
    return (2 << 13) | (_b(imm, 5, 5) << 12) | (rd << 7) | (_b(imm, 4, 0) << 2) | 1


def c_addiw(rd: int, imm: int) -> int:
    return (1 << 13) | (_b(imm, 5, 5) << 12) | (rd << 7) | (_b(imm, 4, 0) << 2) | 1


def c_lui(rd: int, nzimm6: int) -> int:  # loads nzimm6 << 12 (sign-extended 6-bit field)
    return (3 << 13) | (_b(nzimm6, 5, 5) << 12) | (rd << 7) | (_b(nzimm6, 4, 0) << 2) | 1


def c_addi16sp(imm: int) -> int:  # imm multiple of 16
    return ((3 << 13) | (_b(imm, 9, 9) << 12) | (2 << 7) | (_b(imm, 4, 4) << 6) | (_b(imm, 6, 6) << 5)
            | (_b(imm, 8, 7) << 3) | (_b(imm, 5, 5) << 2) | 1)


def c_addi4spn(rdp: int, imm: int) -> int:  # rd' = 8..15, imm multiple of 4, nonzero
    return (_b(imm, 5, 4) << 11) | (_b(imm, 9, 6) << 7) | (_b(imm, 2, 2) << 6) | (_b(imm, 3, 3) << 5) | ((rdp - 8) << 2)


def c_lw(rdp: int, rs1p: int, off: int) -> int:
    return (2 << 13) | (_b(off, 5, 3) << 10) | ((rs1p - 8) << 7) | (_b(off, 2, 2) << 6) | (_b(off, 6, 6) << 5) | ((rdp - 8) << 2)


def c_sw(rs2p: int, rs1p: int, off: int) -> int:
    return (6 << 13) | (_b(off, 5, 3) << 10) | ((rs1p - 8) << 7) | (_b(off, 2, 2) << 6) | (_b(off, 6, 6) << 5) | ((rs2p - 8) << 2)


def c_ld(rdp: int, rs1p: int, off: int) -> int:
    return (3 << 13) | (_b(off, 5, 3) << 10) | ((rs1p - 8) << 7) | (_b(off, 7, 6) << 5) | ((rdp - 8) << 2)


def c_sd(rs2p: int, rs1p: int, off: int) -> int:
    return (7 << 13) | (_b(off, 5, 3) << 10) | ((rs1p - 8) << 7) | (_b(off, 7, 6) << 5) | ((rs2p - 8) << 2)


def c_lwsp(rd: int, off: int) -> int:
    return (2 << 13) | (_b(off, 5, 5) << 12) | (rd << 7) | (_b(off, 4, 2) << 4) | (_b(off, 7, 6) << 2) | 2


def c_ldsp(rd: int, off: int) -> int:
    return (3 << 13) | (_b(off, 5, 5) << 12) | (rd << 7) | (_b(off, 4, 3) << 5) | (_b(off, 8, 6) << 2) | 2


def c_swsp(rs2: int, off: int) -> int:
    return (6 << 13) | (_b(off, 5, 2) << 9) | (_b(off, 7, 6) << 7) | (rs2 << 2) | 2


def c_sdsp(rs2: int, off: int) -> int:
    return (7 << 13) | (_b(off, 5, 3) << 10) | (_b(off, 8, 6) << 7) | (rs2 << 2) | 2


def c_shift(kind: str, rd: int, sh: int) -> int:
    if kind == "slli":
        return (0 << 13) | (_b(sh, 5, 5) << 12) | (rd << 7) | (_b(sh, 4, 0) << 2) | 2
    f2 = 0 if kind == "srli" else 1
    return (4 << 13) | (_b(sh, 5, 5) << 12) | (f2 << 10) | ((rd - 8) << 7) | (_b(sh, 4, 0) << 2) | 1


def c_andi(rdp: int, imm: int) -> int:
    return (4 << 13) | (_b(imm, 5, 5) << 12) | (2 << 10) | ((rdp - 8) << 7) | (_b(imm, 4, 0) << 2) | 1


def c_arith(kind: str, rdp: int, rs2p: int) -> int:
    w = kind in ("subw", "addw")
    f = {"sub": 0, "xor": 1, "or": 2, "and": 3, "subw": 0, "addw": 1}[kind]
    return (4 << 13) | (int(w) << 12) | (3 << 10) | ((rdp - 8) << 7) | (f << 5) | ((rs2p - 8) << 2) | 1


def c_mv(rd: int, rs2: int) -> int:
    return (4 << 13) | (rd << 7) | (rs2 << 2) | 2


def c_add(rd: int, rs2: int) -> int:
    return (4 << 13) | (1 << 12) | (rd << 7) | (rs2 << 2) | 2


def c_jr(rs1: int) -> int:
    return (4 << 13) | (rs1 << 7) | 2


def c_jalr(rs1: int) -> int:
    return (4 << 13) | (1 << 12) | (rs1 << 7) | 2


C_EBREAK = 0x9002


def _cj(off: int) -> int:
    return ((_b(off, 11, 11) << 12) | (_b(off, 4, 4) << 11) | (_b(off, 9, 8) << 9) | (_b(off, 10, 10) << 8)
            | (_b(off, 6, 6) << 7) | (_b(off, 7, 7) << 6) | (_b(off, 3, 1) << 3) | (_b(off, 5, 5) << 2))


def c_j(off: int) -> int:
    return (5 << 13) | _cj(off) | 1


def c_jal(off: int) -> int:  # RV32 only
    return (1 << 13) | _cj(off) | 1


def c_bz(kind: str, rs1p: int, off: int) -> int:
    f3 = 6 if kind == "beqz" else 7
    return ((f3 << 13) | (_b(off, 8, 8) << 12) | (_b(off, 4, 3) << 10) | ((rs1p - 8) << 7) | (_b(off, 7, 6) << 5)
            | (_b(off, 2, 1) << 3) | (_b(off, 5, 5) << 2) | 1)


# ----------------------------------------------------------------------------- program assembly


def assemble(items: list[tuple[int, int]]) -> bytes:
    """items: (word, length 2|4) pairs -> little-endian bytes."""
    out = bytearray()
    for w, n in items:
        out += struct.pack("<H" if n == 2 else "<I", w)
    return bytes(out)


def words(*ws: int) -> bytes:
    return b"".join(struct.pack("<I", w & 0xFFFFFFFF) for w in ws)


# ----------------------------------------------------------------------------- oracle

BASE = 0x10000
SIZE = 4 << 20
CODE = BASE
SCRATCH = BASE + 0x100000
SCRATCH_SIZE = 0x2000


@dataclass
class State:
    regs: tuple[int, ...]
    pc: int
    scratch: bytes


def run_unicorn(xlen: int, code: bytes, regs: dict[int, int], scratch: bytes, end_offset: int | None = None) -> State:
    """Run ``code`` (at CODE) on unicorn until pc == CODE + end_offset; return the final state."""
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV32 if xlen == 32 else UC_MODE_RISCV64)
    uc.mem_map(BASE, SIZE)
    uc.mem_write(CODE, code)
    uc.mem_write(SCRATCH, scratch)
    mask = (1 << xlen) - 1
    for i, v in regs.items():
        uc.reg_write(rc.UC_RISCV_REG_X0 + i, v & mask)
    end = CODE + (len(code) if end_offset is None else end_offset)
    uc.emu_start(CODE, end, count=1_000_000)
    out = tuple(uc.reg_read(rc.UC_RISCV_REG_X0 + i) & mask for i in range(32))
    return State(out, uc.reg_read(rc.UC_RISCV_REG_PC) & mask, bytes(uc.mem_read(SCRATCH, SCRATCH_SIZE)))


def run_rlcc(xlen: int, code: bytes, regs: dict[int, int], scratch: bytes, profile: str = "generic5",
             zbb: bool | None = None) -> tuple[State, Machine]:
    """Run ``code`` + ebreak on the rlcc emulator; return the state at the ebreak."""
    m = Machine(xlen=xlen, profile=profile, mem_base=BASE, mem_size=SIZE, zbb=zbb)
    m.write_mem(CODE, code + words(EBREAK))
    m.write_mem(SCRATCH, scratch)
    for i, v in regs.items():
        m.set_reg(i, v)
    m.pc = CODE
    r = m.run(max_instructions=1_000_000)
    assert r.halt_reason == "ebreak", r
    return State(m.regs(), m.pc - 4, m.read_mem(SCRATCH, SCRATCH_SIZE)), m
