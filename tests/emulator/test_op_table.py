"""The instruction-facts table of the C core (emulator/csrc/rv_ops.h) as seen from Python: OP_NAMES,
OP_CLASSES, OP_FORMATS, FORMAT_FIELDS and decode(). Expectations come from rv_testkit's encoder and the
cycle-model rules in emulator/README.md, not from the table itself."""

from __future__ import annotations

import random

import pytest
import rv_testkit as tk
from rlcc.emulator import _rvcore as core

REG_FIELDS = ("rd", "rs1", "rs2")


def encodings() -> dict[str, int]:
    """mnemonic -> one 32-bit encoding (RV64 + Zbb) with rd = 5, rs1 = 6, rs2 = 7 where it has them."""
    rd, rs1, rs2 = 5, 6, 7
    enc: dict[str, int] = {}
    for name in (*tk.OP, *tk.OP32):
        enc[name] = tk.op(name, rd, rs1, rs2)
    for name in tk.OPIMM:
        enc[name] = tk.opimm(name, rd, rs1, -3)
    for name in ("slli", "srli", "srai", "rori"):
        enc[name] = tk.shift_imm(name, rd, rs1, 33)
    for name in ("slliw", "srliw", "sraiw", "roriw"):
        enc[name] = tk.shift_imm(name[:-1], rd, rs1, 17, word=True)
    enc["addiw"] = tk.addiw(rd, rs1, 9)
    for name in tk.LOADS:
        enc[name] = tk.load(name, rd, rs1, 8)
    for name in tk.STORES:
        enc[name] = tk.store(name, rs2, rs1, 8)
    for name in tk.BRANCHES:
        enc[name] = tk.branch(name, rs1, rs2, 16)
    enc["lui"], enc["auipc"] = tk.lui(rd, 0x12345), tk.auipc(rd, 0x12345)
    enc["jal"], enc["jalr"] = tk.jal(rd, 64), tk.jalr(rd, rs1, 4)
    for width in ("w", "d"):
        for name in ("lr", "sc", *tk.AMOS):
            enc[f"{name}.{width}"] = tk.amo(name, width, rd, rs1, rs2)
    enc["csrr"] = tk.csrr(rd, 0xC00)
    for name in ("clz", "ctz", "cpop", "sext.b", "sext.h", "orc.b", "rev8", "clzw", "ctzw", "cpopw", "zext.h"):
        enc[name] = tk.unary_zbb(name, rd, rs1, 64)
    enc["ecall"], enc["ebreak"], enc["fence"] = tk.ECALL, tk.EBREAK, tk.FENCE
    return enc


def expected_class(name: str) -> str:
    """The cycle class of a mnemonic by the rules of emulator/README.md (Cycle model)."""
    base = name.split(".")[0]
    if name in tk.BRANCHES:
        return "branch"
    if name in ("jal", "jalr"):
        return "jump"
    if name in tk.LOADS:
        return "load"
    if name in tk.STORES:
        return "store"
    if base in ("lr", "sc") or base in tk.AMOS:
        return "atomic"
    if name.startswith("mul"):
        return "mul"
    if name.startswith(("div", "rem")):
        return "div"
    if name == "csrr":
        return "csr"
    if name in ("fence", "ecall", "ebreak", "illegal"):
        return "system"
    return "alu"


def test_table_is_consistent():
    n = len(core.OP_NAMES)
    assert len(core.OP_CLASSES) == len(core.OP_FORMATS) == n
    assert len(set(core.OP_NAMES)) == n, "mnemonics must be unique"
    assert all(core.OP_NAMES) and all(name == name.lower() for name in core.OP_NAMES)
    assert core.OP_NAMES[:2] == ("undecoded", "illegal")
    assert set(core.OP_CLASSES) == set(core.CLASS_NAMES)  # every class is used, no unknown class
    assert set(core.OP_FORMATS) == set(core.FORMAT_FIELDS)
    assert all(set(f) <= set(REG_FIELDS) for f in core.FORMAT_FIELDS.values())


def test_every_op_decodes_from_its_encoding_with_the_expected_class_and_operands():
    enc = encodings()
    assert set(enc) == set(core.OP_NAMES) - {"undecoded", "illegal"}, "the table and the encoder disagree"
    for name, word in enc.items():
        op, rd, rs1, rs2, _imm, length = core.decode(word, xlen=64, zbb=True)
        assert (core.OP_NAMES[op], length) == (name, 4), hex(word)
        assert core.OP_CLASSES[op] == expected_class(name), name
        used = core.FORMAT_FIELDS[core.OP_FORMATS[op]]
        got = dict(zip(REG_FIELDS, (rd, rs1, rs2)))
        want = {"rd": 5, "rs1": 6, "rs2": 7}
        if name == "csrr":
            want["rs1"] = 0  # the counter reads are csrrs rd, csr, x0
        for field in REG_FIELDS:
            assert got[field] == (want[field] if field in used else 0), (name, field, got)


@pytest.mark.parametrize(
    ("word", "xlen", "name", "cls"),
    [
        (tk.op("mul", 1, 2, 3), 32, "mul", "mul"),
        (tk.op("remu", 1, 2, 3), 32, "remu", "div"),
        (tk.load("lw", 1, 2, 0), 32, "lw", "load"),
        (tk.branch("beq", 1, 2, 8), 32, "beq", "branch"),
        (tk.c_lw(8, 9, 4), 32, "lw", "load"),
        (tk.c_sd(8, 9, 8), 64, "sd", "store"),
        (tk.c_bz("bnez", 8, 8), 64, "bne", "branch"),
        (tk.c_jal(8), 32, "jal", "jump"),
        (tk.c_jr(1), 64, "jalr", "jump"),
        (tk.C_EBREAK, 64, "ebreak", "system"),
        (0, 64, "illegal", "system"),  # the all-zero halfword
        (tk.op("mulw", 1, 2, 3), 32, "illegal", "system"),  # RV64-only
        (tk.op("andn", 1, 2, 3), 64, "illegal", "system"),  # Zbb off
    ],
)
def test_sample_ops_have_the_cycle_class_the_model_expects(word, xlen, name, cls):
    op, *_ = core.decode(word, xlen=xlen)
    assert (core.OP_NAMES[op], core.OP_CLASSES[op]) == (name, cls)


@pytest.mark.parametrize("xlen", [32, 64])
def test_decoded_forms_leave_unused_register_fields_zero(xlen):
    """The load-use check relies on rs1/rs2 = 0 when an op does not read them: every compressed
    halfword, and random 32-bit words, decode to forms that use only their format's fields."""
    rng = random.Random(xlen)
    words = [h for h in range(1 << 16) if h & 3 != 3] + [rng.getrandbits(32) | 3 for _ in range(50_000)]
    seen = set()
    for w in words:
        op, rd, rs1, rs2, imm, length = core.decode(w, xlen=xlen, zbb=True)
        assert length == (4 if w & 3 == 3 else 2)
        used = core.FORMAT_FIELDS[core.OP_FORMATS[op]]
        for field, v in zip(REG_FIELDS, (rd, rs1, rs2)):
            assert field in used or v == 0, (hex(w), core.OP_NAMES[op], field, v)
        if core.OP_NAMES[op] == "illegal":
            assert (rd, rs1, rs2, imm) == (0, 0, 0, 0)
        seen.add(core.OP_NAMES[op])
    assert "undecoded" not in seen


def test_decode_rejects_bad_arguments():
    with pytest.raises(ValueError):
        core.decode(0x13, xlen=16)
    with pytest.raises(ValueError):
        core.decode(0x10000)  # low bits 00: a compressed form has 16 bits
    with pytest.raises((ValueError, OverflowError)):
        core.decode(1 << 32)
