"""One instruction word as the C core decodes it, with its operation named.

The interpreter (``csrc/rv_decode.c``) and the prover's symbolic executor
(``rlcc.verify.symexec``) read instructions through this one decoder, so the proof is about the
instructions the emulator runs. Compressed forms come expanded to their base operation
(``c.addi`` -> ``addi``, ``c.mv`` -> ``add`` with rs1 = x0), immediates sign-extended (shift
amounts for shifts), and a register field the operation does not use is 0.
"""

from __future__ import annotations

from typing import NamedTuple

from . import _rvcore


class Decoded(NamedTuple):
    op: str  # mnemonic from the core's op table (``_rvcore.OP_NAMES``), "illegal" for no instruction
    rd: int
    rs1: int
    rs2: int
    imm: int
    size: int  # 2 (compressed) or 4 bytes


def decode(word: int, xlen: int, zbb: bool = True) -> Decoded:
    """The instruction in the low 16 (compressed: low bits not 11) or 32 bits of ``word``."""
    if word & 3 != 3:
        word &= 0xFFFF
    op, rd, rs1, rs2, imm, size = _rvcore.decode(word & 0xFFFFFFFF, xlen=xlen, zbb=zbb)
    return Decoded(_rvcore.OP_NAMES[op], rd, rs1, rs2, imm, size)
