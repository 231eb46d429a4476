"""The decoder the symbolic executor reads instructions through (``rlcc.emulator.decode``, the C
core's ``rv_decode``) against rv_testkit's independent encoder, and the executor run on concrete
values against unicorn on seeded random RV32/RV64 I, M and C sequences (forward branches
included): same registers, same scratch memory."""

from __future__ import annotations

import random

import pytest
import rv_testkit as K
from test_diff_random import GENERATORS, Seq, init_regs
from test_op_table import encodings

from rlcc.emulator import Decoded, decode
from rlcc.verify.symexec import Executor, Region, State, SymexecUnsupported


def test_every_op_is_named_with_its_operands():
    enc = encodings()
    for name, word in enc.items():
        d = decode(word, 64)
        assert (d.op, d.size) == (name, 4), hex(word)
    assert decode(enc["addi"], 64) == Decoded("addi", 5, 6, 0, -3, 4)
    assert decode(enc["sd"], 64) == Decoded("sd", 0, 6, 7, 8, 4)
    assert decode(enc["beq"], 64) == Decoded("beq", 0, 6, 7, 16, 4)
    assert decode(enc["jal"], 64) == Decoded("jal", 5, 0, 0, 64, 4)
    assert decode(enc["lui"], 64) == Decoded("lui", 5, 0, 0, 0x12345 << 12, 4)
    assert decode(enc["srai"], 64) == Decoded("srai", 5, 6, 0, 33, 4)
    assert decode(enc["sraiw"], 64) == Decoded("sraiw", 5, 6, 0, 17, 4)
    assert decode(K.lui(5, 0x80000), 64).imm == -(1 << 31)  # sign-extended


@pytest.mark.parametrize(("word", "xlen", "want"), [
    (K.c_addi(10, -5), 64, ("addi", 10, 10, 0, -5)),
    (K.c_li(11, 17), 32, ("addi", 11, 0, 0, 17)),
    (K.c_lui(12, 0x3F), 64, ("lui", 12, 0, 0, -(1 << 12))),
    (K.c_addi16sp(-64), 64, ("addi", 2, 2, 0, -64)),
    (K.c_addi4spn(9, 40), 32, ("addi", 9, 2, 0, 40)),
    (K.c_addiw(13, -1), 64, ("addiw", 13, 13, 0, -1)),
    (K.c_lw(8, 9, 68), 32, ("lw", 8, 9, 0, 68)),
    (K.c_sw(10, 11, 4), 64, ("sw", 0, 11, 10, 4)),
    (K.c_ld(12, 13, 136), 64, ("ld", 12, 13, 0, 136)),
    (K.c_sd(14, 15, 8), 64, ("sd", 0, 15, 14, 8)),
    (K.c_lwsp(20, 252), 32, ("lw", 20, 2, 0, 252)),
    (K.c_ldsp(21, 504), 64, ("ld", 21, 2, 0, 504)),
    (K.c_swsp(22, 12), 32, ("sw", 0, 2, 22, 12)),
    (K.c_sdsp(23, 16), 64, ("sd", 0, 2, 23, 16)),
    (K.c_shift("slli", 5, 33), 64, ("slli", 5, 5, 0, 33)),
    (K.c_shift("srai", 9, 3), 32, ("srai", 9, 9, 0, 3)),
    (K.c_andi(10, -2), 64, ("andi", 10, 10, 0, -2)),
    (K.c_arith("subw", 8, 9), 64, ("subw", 8, 8, 9, 0)),
    (K.c_arith("xor", 8, 9), 32, ("xor", 8, 8, 9, 0)),
    (K.c_mv(6, 7), 64, ("add", 6, 0, 7, 0)),
    (K.c_add(6, 7), 32, ("add", 6, 6, 7, 0)),
    (K.c_jr(1), 64, ("jalr", 0, 1, 0, 0)),
    (K.c_jalr(5), 32, ("jalr", 1, 5, 0, 0)),
    (K.c_j(-4), 64, ("jal", 0, 0, 0, -4)),
    (K.c_jal(2046), 32, ("jal", 1, 0, 0, 2046)),
    (K.c_bz("bnez", 8, -256), 64, ("bne", 0, 8, 0, -256)),
    (K.C_EBREAK, 64, ("ebreak", 0, 0, 0, 0)),
])
def test_compressed_forms_are_expanded_to_their_base_operation(word, xlen, want):
    assert decode(word, xlen) == Decoded(*want, 2)


def test_what_the_target_lacks_is_illegal():
    assert decode(0, 64).op == "illegal"
    assert decode(K.op("mulw", 1, 2, 3), 32).op == "illegal"  # RV64 only
    assert decode(K.op("andn", 1, 2, 3), 64, zbb=False).op == "illegal"
    assert decode(K.op("andn", 1, 2, 3), 64).op == "andn"  # the executor decodes Zbb


def _symexec(xlen: int, code: bytes, regs: dict[int, int], scratch: bytes) -> tuple[tuple[int, ...], bytes]:
    image = bytearray(K.SCRATCH - K.BASE + K.SCRATCH_SIZE)
    image[K.CODE - K.BASE : K.CODE - K.BASE + len(code)] = code
    image[K.SCRATCH - K.BASE :] = scratch
    regions = [Region(K.CODE, K.CODE + len(code), "code"),
               Region(K.SCRATCH, K.SCRATCH + K.SCRATCH_SIZE, "scratch", writable=True)]
    ex = Executor(bytes(image), K.BASE, xlen, regions)  # a run ends at a jump to the stop address
    fin = ex.run(State(K.CODE, [0] + [regs[i] for i in range(1, 32)], {}, ()), K.CODE + len(code)).state
    assert all(isinstance(v, int) for v in fin.regs)
    mem = bytes(ex.load(fin, K.SCRATCH + a, 1) for a in range(K.SCRATCH_SIZE))
    return tuple(fin.regs), mem


@pytest.mark.parametrize("xlen", [32, 64])
@pytest.mark.parametrize("ext", ["I", "M", "C"])
def test_executor_matches_unicorn_on_random_sequences(ext, xlen):
    rng = random.Random(f"symexec-{ext}-{xlen}")
    for _ in range(12):
        s = Seq()
        for _ in range(48):
            GENERATORS[ext](rng, xlen, s)
        code = s.code() + K.words(K.jal(0, 4))  # straight-line runs end at a jump
        regs = init_regs(rng, xlen)
        scratch = rng.randbytes(K.SCRATCH_SIZE)
        ref = K.run_unicorn(xlen, code, regs, scratch)
        got, mem = _symexec(xlen, code, regs, scratch)
        diff = [(f"x{i}", hex(a), hex(b)) for i, (a, b) in enumerate(zip(got, ref.regs)) if a != b]
        assert not diff, f"register mismatch (symexec, unicorn): {diff}\ncode={code.hex()}"
        assert mem == ref.scratch, f"scratch memory mismatch; code={code.hex()}"


def test_an_illegal_word_is_unsupported_not_a_crash():
    with pytest.raises(SymexecUnsupported, match="unsupported instruction"):
        _symexec(64, K.words(0xFFFFFFFF, K.jal(0, 4)), {i: 0 for i in range(1, 32)}, bytes(K.SCRATCH_SIZE))
