"""Decode RV32/RV64 IMC + Zbb instruction words into one uniform record, for the symbolic executor.

Compressed instructions are expanded to their base equivalents (``c.addi`` -> ``addi``), so the
executor knows one semantics per operation. The emulator's C decoder is the executable one;
this decoder is checked against it by running the same ELF both ways (tests/verify/test_symexec.py).
"""

from __future__ import annotations

from typing import NamedTuple

from rlcc.errors import RlccError


class Insn(NamedTuple):
    op: str  # base mnemonic, e.g. "addi", "lw", "beq", "mulhu", "clz"
    rd: int
    rs1: int
    rs2: int
    imm: int  # sign-extended immediate (shift amount for shifts)
    size: int  # 2 (compressed) or 4 bytes


class DecodeError(RlccError):
    """A word that is not an instruction of the supported set."""


def _sext(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _bits(w: int, hi: int, lo: int) -> int:
    return (w >> lo) & ((1 << (hi - lo + 1)) - 1)


_BRANCH = {0: "beq", 1: "bne", 4: "blt", 5: "bge", 6: "bltu", 7: "bgeu"}
_LOAD = {0: "lb", 1: "lh", 2: "lw", 3: "ld", 4: "lbu", 5: "lhu", 6: "lwu"}
_STORE = {0: "sb", 1: "sh", 2: "sw", 3: "sd"}
_OPIMM = {0: "addi", 2: "slti", 3: "sltiu", 4: "xori", 6: "ori", 7: "andi"}
_OP = {
    (0, 0): "add", (0x20, 0): "sub", (0, 1): "sll", (0, 2): "slt", (0, 3): "sltu", (0, 4): "xor",
    (0, 5): "srl", (0x20, 5): "sra", (0, 6): "or", (0, 7): "and",
    (1, 0): "mul", (1, 1): "mulh", (1, 2): "mulhsu", (1, 3): "mulhu", (1, 4): "div", (1, 5): "divu",
    (1, 6): "rem", (1, 7): "remu",
    (0x20, 7): "andn", (0x20, 6): "orn", (0x20, 4): "xnor", (5, 4): "min", (5, 5): "minu", (5, 6): "max",
    (5, 7): "maxu", (0x30, 1): "rol", (0x30, 5): "ror",
}
_OP32 = {
    (0, 0): "addw", (0x20, 0): "subw", (0, 1): "sllw", (0, 5): "srlw", (0x20, 5): "sraw",
    (1, 0): "mulw", (1, 4): "divw", (1, 5): "divuw", (1, 6): "remw", (1, 7): "remuw",
    (0x30, 1): "rolw", (0x30, 5): "rorw", (4, 0): "add.uw", (4, 4): "zext.h",
}


def decode(word: int, xlen: int) -> Insn:
    """Decode the instruction whose low 16 (compressed) or 32 bits are in ``word``."""
    if word & 3 != 3:
        return _decode_c(word & 0xFFFF, xlen)
    return _decode_32(word & 0xFFFFFFFF, xlen)


def _decode_32(w: int, xlen: int) -> Insn:
    opcode = w & 0x7F
    rd, f3, rs1, rs2, f7 = _bits(w, 11, 7), _bits(w, 14, 12), _bits(w, 19, 15), _bits(w, 24, 20), _bits(w, 31, 25)
    imm_i = _sext(w >> 20, 12)
    if opcode == 0x37:
        return Insn("lui", rd, 0, 0, _sext(w & 0xFFFFF000, 32), 4)
    if opcode == 0x17:
        return Insn("auipc", rd, 0, 0, _sext(w & 0xFFFFF000, 32), 4)
    if opcode == 0x6F:
        imm = (_bits(w, 31, 31) << 20) | (_bits(w, 19, 12) << 12) | (_bits(w, 20, 20) << 11) | (_bits(w, 30, 21) << 1)
        return Insn("jal", rd, 0, 0, _sext(imm, 21), 4)
    if opcode == 0x67 and f3 == 0:
        return Insn("jalr", rd, rs1, 0, imm_i, 4)
    if opcode == 0x63 and f3 in _BRANCH:
        imm = (_bits(w, 31, 31) << 12) | (_bits(w, 7, 7) << 11) | (_bits(w, 30, 25) << 5) | (_bits(w, 11, 8) << 1)
        return Insn(_BRANCH[f3], 0, rs1, rs2, _sext(imm, 13), 4)
    if opcode == 0x03 and f3 in _LOAD and (xlen == 64 or f3 not in (3, 6)):
        return Insn(_LOAD[f3], rd, rs1, 0, imm_i, 4)
    if opcode == 0x23 and f3 in _STORE and (xlen == 64 or f3 != 3):
        return Insn(_STORE[f3], 0, rs1, rs2, _sext((f7 << 5) | rd, 12), 4)
    if opcode == 0x13:
        shamt_bits = 6 if xlen == 64 else 5
        shamt = _bits(w, 19 + shamt_bits, 20)
        top = w >> (20 + shamt_bits)  # funct6 (RV64) / funct7 (RV32) of shifts
        top = top << 1 if xlen == 64 else top
        if f3 in _OPIMM:
            return Insn(_OPIMM[f3], rd, rs1, 0, imm_i, 4)
        if f3 == 1 and top == 0:
            return Insn("slli", rd, rs1, 0, shamt, 4)
        if f3 == 5 and top == 0:
            return Insn("srli", rd, rs1, 0, shamt, 4)
        if f3 == 5 and top == 0x20:
            return Insn("srai", rd, rs1, 0, shamt, 4)
        if f3 == 5 and top == 0x30:
            return Insn("rori", rd, rs1, 0, shamt, 4)
        if f3 == 1 and f7 == 0x30:
            unary = {0: "clz", 1: "ctz", 2: "cpop", 4: "sext.b", 5: "sext.h"}
            if rs2 in unary:
                return Insn(unary[rs2], rd, rs1, 0, 0, 4)
        if f3 == 5 and (w >> 20) == 0x287:
            return Insn("orc.b", rd, rs1, 0, 0, 4)
        if f3 == 5 and (w >> 20) == (0x6B8 if xlen == 64 else 0x698):
            return Insn("rev8", rd, rs1, 0, 0, 4)
    if opcode == 0x33 and (f7, f3) in _OP:
        return Insn(_OP[(f7, f3)], rd, rs1, rs2, 0, 4)
    if opcode == 0x33 and (f7, f3, rs2) == (4, 4, 0) and xlen == 32:
        return Insn("zext.h", rd, rs1, 0, 0, 4)
    if xlen == 64 and opcode == 0x1B:
        if f3 == 0:
            return Insn("addiw", rd, rs1, 0, imm_i, 4)
        if f3 == 1 and f7 == 0:
            return Insn("slliw", rd, rs1, 0, rs2, 4)
        if f3 == 5 and f7 == 0:
            return Insn("srliw", rd, rs1, 0, rs2, 4)
        if f3 == 5 and f7 == 0x20:
            return Insn("sraiw", rd, rs1, 0, rs2, 4)
        if f3 == 5 and f7 == 0x30:
            return Insn("roriw", rd, rs1, 0, rs2, 4)
        if f3 == 1 and f7 == 0x30 and rs2 in (0, 1, 2):
            return Insn(("clzw", "ctzw", "cpopw")[rs2], rd, rs1, 0, 0, 4)
    if xlen == 64 and opcode == 0x3B and (f7, f3) in _OP32:
        if (f7, f3) == (4, 4) and rs2 != 0:
            raise DecodeError(f"unsupported instruction {w:#010x}")
        return Insn(_OP32[(f7, f3)], rd, rs1, rs2, 0, 4)
    if opcode == 0x0F:
        return Insn("fence", 0, 0, 0, 0, 4)
    if w == 0x00100073:
        return Insn("ebreak", 0, 0, 0, 0, 4)
    if w == 0x00000073:
        return Insn("ecall", 0, 0, 0, 0, 4)
    raise DecodeError(f"unsupported instruction {w:#010x}")


def _decode_c(h: int, xlen: int) -> Insn:
    if h == 0:
        raise DecodeError("illegal instruction 0x0000")
    q, f3 = h & 3, _bits(h, 15, 13)
    r3a, r3b = 8 + _bits(h, 9, 7), 8 + _bits(h, 4, 2)  # rs1'/rd' and rs2'/rd'
    rd = _bits(h, 11, 7)
    rs2 = _bits(h, 6, 2)
    imm6 = _sext((_bits(h, 12, 12) << 5) | _bits(h, 6, 2), 6)
    if q == 0:
        if f3 == 0:
            nz = (_bits(h, 10, 7) << 6) | (_bits(h, 12, 11) << 4) | (_bits(h, 5, 5) << 3) | (_bits(h, 6, 6) << 2)
            if nz:
                return Insn("addi", r3b, 2, 0, nz, 2)
        off_w = (_bits(h, 5, 5) << 6) | (_bits(h, 12, 10) << 3) | (_bits(h, 6, 6) << 2)
        off_d = (_bits(h, 6, 5) << 6) | (_bits(h, 12, 10) << 3)
        if f3 == 2:
            return Insn("lw", r3b, r3a, 0, off_w, 2)
        if f3 == 6:
            return Insn("sw", 0, r3a, r3b, off_w, 2)
        if f3 == 3 and xlen == 64:
            return Insn("ld", r3b, r3a, 0, off_d, 2)
        if f3 == 7 and xlen == 64:
            return Insn("sd", 0, r3a, r3b, off_d, 2)
    elif q == 1:
        if f3 == 0:
            return Insn("addi", rd, rd, 0, imm6, 2)
        if f3 == 1:
            if xlen == 64:
                if rd:
                    return Insn("addiw", rd, rd, 0, imm6, 2)
            else:
                return Insn("jal", 1, 0, 0, _cj_offset(h), 2)
        if f3 == 2:
            return Insn("addi", rd, 0, 0, imm6, 2)
        if f3 == 3:
            if rd == 2:
                nz = (_bits(h, 12, 12) << 9) | (_bits(h, 4, 3) << 7) | (_bits(h, 5, 5) << 6) | (_bits(h, 2, 2) << 5) | (_bits(h, 6, 6) << 4)
                return Insn("addi", 2, 2, 0, _sext(nz, 10), 2)
            return Insn("lui", rd, 0, 0, _sext(imm6 << 12, 32), 2)
        if f3 == 4:
            f2 = _bits(h, 11, 10)
            shamt = (_bits(h, 12, 12) << 5) | _bits(h, 6, 2)
            if f2 == 0:
                return Insn("srli", r3a, r3a, 0, shamt, 2)
            if f2 == 1:
                return Insn("srai", r3a, r3a, 0, shamt, 2)
            if f2 == 2:
                return Insn("andi", r3a, r3a, 0, imm6, 2)
            sub = (_bits(h, 12, 12) << 2) | _bits(h, 6, 5)
            ops = {0: "sub", 1: "xor", 2: "or", 3: "and", 4: "subw", 5: "addw"}
            if sub in ops and (sub < 4 or xlen == 64):
                return Insn(ops[sub], r3a, r3a, r3b, 0, 2)
        if f3 == 5:
            return Insn("jal", 0, 0, 0, _cj_offset(h), 2)
        if f3 in (6, 7):
            off = (_bits(h, 12, 12) << 8) | (_bits(h, 6, 5) << 6) | (_bits(h, 2, 2) << 5) | (_bits(h, 11, 10) << 3) | (_bits(h, 4, 3) << 1)
            return Insn("beq" if f3 == 6 else "bne", 0, r3a, 0, _sext(off, 9), 2)
    else:
        if f3 == 0:
            return Insn("slli", rd, rd, 0, (_bits(h, 12, 12) << 5) | _bits(h, 6, 2), 2)
        if f3 == 2:
            off = (_bits(h, 3, 2) << 6) | (_bits(h, 12, 12) << 5) | (_bits(h, 6, 4) << 2)
            return Insn("lw", rd, 2, 0, off, 2)
        if f3 == 3 and xlen == 64:
            off = (_bits(h, 4, 2) << 6) | (_bits(h, 12, 12) << 5) | (_bits(h, 6, 5) << 3)
            return Insn("ld", rd, 2, 0, off, 2)
        if f3 == 4:
            if _bits(h, 12, 12) == 0:
                if rs2 == 0 and rd:
                    return Insn("jalr", 0, rd, 0, 0, 2)
                return Insn("add", rd, 0, rs2, 0, 2)  # c.mv
            if rs2 == 0 and rd == 0:
                return Insn("ebreak", 0, 0, 0, 0, 2)
            if rs2 == 0:
                return Insn("jalr", 1, rd, 0, 0, 2)
            return Insn("add", rd, rd, rs2, 0, 2)
        if f3 == 6:
            return Insn("sw", 0, 2, rs2, (_bits(h, 8, 7) << 6) | (_bits(h, 12, 9) << 2), 2)
        if f3 == 7 and xlen == 64:
            return Insn("sd", 0, 2, rs2, (_bits(h, 9, 7) << 6) | (_bits(h, 12, 10) << 3), 2)
    raise DecodeError(f"unsupported compressed instruction {h:#06x}")


def _cj_offset(h: int) -> int:
    off = (
        (_bits(h, 12, 12) << 11) | (_bits(h, 8, 8) << 10) | (_bits(h, 10, 9) << 8) | (_bits(h, 6, 6) << 7)
        | (_bits(h, 7, 7) << 6) | (_bits(h, 2, 2) << 5) | (_bits(h, 11, 11) << 4) | (_bits(h, 5, 3) << 1)
    )
    return _sext(off, 12)
