"""Encoders of the few RISC-V base instructions rlcc writes into RAM itself (the prover's loop
that calls a firmware function over a range of arguments in the emulator)."""

from __future__ import annotations

import struct

EBREAK = 0x00100073


def i_type(opcode: int, rd: int, funct3: int, rs1: int, imm: int) -> int:
    return ((imm & 0xFFF) << 20) | (rs1 << 15) | (funct3 << 12) | (rd << 7) | opcode


def addi(rd: int, rs1: int, imm: int) -> int:
    return i_type(0x13, rd, 0, rs1, imm)


def jalr(rd: int, rs1: int, imm: int) -> int:
    return i_type(0x67, rd, 0, rs1, imm)


def sw(rs2: int, rs1: int, imm: int) -> int:
    return ((imm >> 5 & 0x7F) << 25) | (rs2 << 20) | (rs1 << 15) | (2 << 12) | ((imm & 0x1F) << 7) | 0x23


def bne(rs1: int, rs2: int, offset: int) -> int:
    o = offset & 0x1FFF
    return (((o >> 12) << 31) | ((o >> 5 & 0x3F) << 25) | (rs2 << 20) | (rs1 << 15) | (1 << 12) | ((o >> 1 & 0xF) << 8)
            | ((o >> 11 & 1) << 7) | 0x63)


def assemble(words: list[int]) -> bytes:
    return b"".join(struct.pack("<I", w) for w in words)
