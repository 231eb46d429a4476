"""Differential tests: seeded random instruction sequences run on rlcc's emulator and on unicorn.

Each sequence starts from random register values (biased towards corner values), runs to the end
of the code on both, and all 32 registers plus the scratch memory region must match.
Memory accesses are kept inside the scratch region: x2 (sp) and x8 (s0) point into it and are
never a destination; x9 is the address register of the A-extension tests.
"""

from __future__ import annotations

import random

import pytest
import rv_testkit as K

SP_VAL = K.SCRATCH + 3072
S0_VAL = K.SCRATCH + 4096
PROTECTED = {2, 8, 9}
N_SEQ = 500
SEQ_LEN = 64


def special_values(xlen: int) -> list[int]:
    m = (1 << xlen) - 1
    return [0, 1, 2, m, m - 1, 1 << (xlen - 1), (1 << (xlen - 1)) - 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
            0xFFFF8000, 0x8000, 0xFF, 0x80, 31, 32, 63, 64, (1 << 32) & m, m ^ 0x80000000]


def rand_val(rng: random.Random, xlen: int) -> int:
    r = rng.random()
    if r < 0.35:
        return rng.choice(special_values(xlen))
    if r < 0.5:
        return rng.randint(-300, 300) & ((1 << xlen) - 1)
    return rng.getrandbits(xlen)


def init_regs(rng: random.Random, xlen: int) -> dict[int, int]:
    regs = {i: rand_val(rng, xlen) for i in range(1, 32)}
    regs[2], regs[8], regs[9] = SP_VAL, S0_VAL, S0_VAL
    return regs


def rd_of(rng: random.Random) -> int:
    if rng.random() < 0.04:
        return 0
    return rng.choice([r for r in range(1, 32) if r not in PROTECTED])


def rs_of(rng: random.Random) -> int:
    return rng.randrange(32)


class Seq:
    """Instruction list with forward branches resolved after all items are known."""

    def __init__(self) -> None:
        self.items: list = []  # (word, len) or ("fwd", make(offset) -> word, len, skip)

    def add(self, w: int, n: int = 4) -> None:
        self.items.append((w, n))

    def fwd(self, make, n: int, skip: int) -> None:
        self.items.append(("fwd", make, n, skip))

    def code(self) -> bytes:
        lens = [it[2] if it[0] == "fwd" else it[1] for it in self.items]
        out = []
        for i, it in enumerate(self.items):
            if it[0] == "fwd":
                _, make, n, skip = it
                off = sum(lens[i : min(len(lens), i + 1 + skip)])
                out.append((make(off), n))
            else:
                out.append(it)
        return K.assemble(out)


def gen_i(rng: random.Random, xlen: int, s: Seq) -> None:
    rv64 = xlen == 64
    k = rng.random()
    if k < 0.3:
        names = ["add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and"]
        if rv64:
            names += ["addw", "subw", "sllw", "srlw", "sraw"]
        s.add(K.op(rng.choice(names), rd_of(rng), rs_of(rng), rs_of(rng)))
    elif k < 0.5:
        if rng.random() < 0.6:
            s.add(K.opimm(rng.choice(list(K.OPIMM)), rd_of(rng), rs_of(rng), rng.randint(-2048, 2047)))
        elif rv64 and rng.random() < 0.5:
            if rng.random() < 0.4:
                s.add(K.addiw(rd_of(rng), rs_of(rng), rng.randint(-2048, 2047)))
            else:
                s.add(K.shift_imm(rng.choice(["slliw", "srliw", "sraiw"]), rd_of(rng), rs_of(rng), rng.randrange(32), True))
        else:
            s.add(K.shift_imm(rng.choice(["slli", "srli", "srai"]), rd_of(rng), rs_of(rng), rng.randrange(xlen)))
    elif k < 0.58:
        s.add((K.lui if rng.random() < 0.5 else K.auipc)(rd_of(rng), rng.getrandbits(20)))
    elif k < 0.72:
        names = ["lb", "lh", "lw", "lbu", "lhu"] + (["ld", "lwu"] if rv64 else [])
        nm = rng.choice(names)
        size = K.LOADS[nm][1]
        s.add(K.load(nm, rd_of(rng), rng.choice([2, 8]), rng.randint(-1000, 1000) // size * size))
    elif k < 0.84:
        names = ["sb", "sh", "sw"] + (["sd"] if rv64 else [])
        nm = rng.choice(names)
        size = K.STORES[nm][1]
        s.add(K.store(nm, rs_of(rng), rng.choice([2, 8]), rng.randint(-1000, 1000) // size * size))
    elif k < 0.95:
        nm, a, b = rng.choice(list(K.BRANCHES)), rs_of(rng), rs_of(rng)
        s.fwd(lambda off, nm=nm, a=a, b=b: K.branch(nm, a, b, off), 4, rng.randint(0, 3))
    elif k < 0.98:
        rd = rd_of(rng)
        s.fwd(lambda off, rd=rd: K.jal(rd, off), 4, rng.randint(0, 3))
    else:
        s.add(rng.choice([K.FENCE, K.FENCE_I, K.NOP]))


def gen_m(rng: random.Random, xlen: int, s: Seq) -> None:
    names = ["mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu"]
    if xlen == 64:
        names += ["mulw", "divw", "divuw", "remw", "remuw"]
    if rng.random() < 0.8:
        s.add(K.op(rng.choice(names), rd_of(rng), rs_of(rng), rs_of(rng)))
    else:
        gen_i(rng, xlen, s)


def gen_a(rng: random.Random, xlen: int, s: Seq) -> None:
    widths = ["w", "d"] if xlen == 64 else ["w"]
    k = rng.random()
    if k < 0.2:
        gen_i(rng, xlen, s)
        return
    wd = rng.choice(widths)
    # 8-aligned even for .w: a forward branch may skip this addi and leave x9 from an earlier AMO
    s.add(K.opimm("addi", 9, 8, rng.randint(-120, 120) * 8))
    if k < 0.45:  # LR/SC pair, sometimes with an intervening store or a different address
        s.add(K.amo("lr", wd, rd_of(rng), 9, 0, aq=rng.randrange(2)))
        r = rng.random()
        if r < 0.2:
            s.add(K.store("sw", rs_of(rng), 9, 0))
        elif r < 0.35:
            s.add(K.opimm("addi", 9, 9, 8))
        elif r < 0.6:
            gen_m(rng, xlen, s)
        s.add(K.amo("sc", wd, rd_of(rng), 9, rs_of(rng), rl=rng.randrange(2)))
    elif k < 0.5:
        s.add(K.amo("sc", wd, rd_of(rng), 9, rs_of(rng)))  # SC without reservation fails
    else:
        s.add(K.amo(rng.choice(list(K.AMOS)), wd, rd_of(rng), 9, rs_of(rng), aq=rng.randrange(2), rl=rng.randrange(2)))


def _rdp(rng: random.Random) -> int:
    return rng.choice([10, 11, 12, 13, 14, 15])


def gen_c(rng: random.Random, xlen: int, s: Seq) -> None:
    rv64 = xlen == 64
    k = rng.randrange(22)
    nz6 = lambda: rng.choice([i for i in range(-32, 32) if i != 0])  # noqa: E731
    if k == 0:
        s.add(K.c_addi(rd_of(rng) or 1, nz6()), 2)
    elif k == 1:
        s.add(K.c_li(rd_of(rng) or 1, rng.randint(-32, 31)), 2)
    elif k == 2:
        s.add((K.c_addiw(rd_of(rng) or 1, rng.randint(-32, 31)) if rv64 else K.c_addi(rd_of(rng) or 1, nz6())), 2)
    elif k == 3:
        s.add(K.c_lui(rd_of(rng) or 1, nz6()), 2)
    elif k == 4:
        imm = rng.choice([i for i in range(-512, 512, 16) if i != 0])
        s.add(K.c_addi16sp(imm), 2)
        s.add(K.c_addi16sp(-imm), 2)
    elif k == 5:
        s.add(K.c_addi4spn(_rdp(rng), rng.randrange(1, 256) * 4), 2)
    elif k == 6:
        s.add(K.c_lw(_rdp(rng), 8, rng.randrange(32) * 4), 2)
    elif k == 7:
        s.add(K.c_sw(rng.choice(range(8, 16)), 8, rng.randrange(32) * 4), 2)
    elif k == 8:
        s.add(K.c_lwsp(rd_of(rng) or 1, rng.randrange(64) * 4), 2)
    elif k == 9:
        s.add(K.c_swsp(rs_of(rng), rng.randrange(64) * 4), 2)
    elif k == 10 and rv64:
        s.add(K.c_ld(_rdp(rng), 8, rng.randrange(32) * 8), 2)
    elif k == 11 and rv64:
        s.add(K.c_sd(rng.choice(range(8, 16)), 8, rng.randrange(32) * 8), 2)
    elif k == 12 and rv64:
        s.add(K.c_ldsp(rd_of(rng) or 1, rng.randrange(64) * 8), 2)
    elif k == 13 and rv64:
        s.add(K.c_sdsp(rs_of(rng), rng.randrange(64) * 8), 2)
    elif k == 14:
        kind = rng.choice(["slli", "srli", "srai"])
        rd = (rd_of(rng) or 1) if kind == "slli" else _rdp(rng)
        s.add(K.c_shift(kind, rd, rng.randrange(1, xlen)), 2)
    elif k == 15:
        s.add(K.c_andi(_rdp(rng), rng.randint(-32, 31)), 2)
    elif k == 16:
        kinds = ["sub", "xor", "or", "and"] + (["subw", "addw"] if rv64 else [])
        s.add(K.c_arith(rng.choice(kinds), _rdp(rng), rng.choice(range(8, 16))), 2)
    elif k == 17:
        s.add((K.c_mv if rng.random() < 0.5 else K.c_add)(rd_of(rng) or 1, rng.randrange(1, 32)), 2)
    elif k == 18:
        kind, r = rng.choice(["beqz", "bnez"]), rng.choice(range(8, 16))
        s.fwd(lambda off, kind=kind, r=r: K.c_bz(kind, r, off), 2, rng.randint(0, 3))
    elif k == 19:
        if not rv64 and rng.random() < 0.5:
            s.fwd(lambda off: K.c_jal(off), 2, rng.randint(0, 3))
        else:
            s.fwd(lambda off: K.c_j(off), 2, rng.randint(0, 3))
    else:
        gen_i(rng, xlen, s)  # mix in 32-bit instructions (misaligned-to-4 placements)


GENERATORS = {"I": gen_i, "M": gen_m, "A": gen_a, "C": gen_c}


def check_sequence(rng: random.Random, xlen: int, gen, seq_len: int = SEQ_LEN) -> None:
    s = Seq()
    for _ in range(seq_len):
        gen(rng, xlen, s)
    code = s.code()
    regs = init_regs(rng, xlen)
    scratch = rng.randbytes(K.SCRATCH_SIZE)
    ours, _m = K.run_rlcc(xlen, code, regs, scratch)
    ref = K.run_unicorn(xlen, code, regs, scratch)
    if ours.regs != ref.regs:
        diff = [(f"x{i}", hex(a), hex(b)) for i, (a, b) in enumerate(zip(ours.regs, ref.regs)) if a != b]
        raise AssertionError(f"register mismatch (rlcc, unicorn): {diff}\ncode={code.hex()}")
    assert ours.pc == ref.pc
    assert ours.scratch == ref.scratch, f"scratch memory mismatch; code={code.hex()}"


@pytest.mark.slow
@pytest.mark.parametrize("xlen", [32, 64])
@pytest.mark.parametrize("ext", ["I", "M", "A", "C"])
def test_random_sequences_match_unicorn(ext, xlen):
    rng = random.Random(f"{ext}-{xlen}-20240601")
    for _ in range(N_SEQ):
        check_sequence(rng, xlen, GENERATORS[ext])


def test_differential_harness_detects_a_difference():
    """The comparison itself can fail: a wrong initial register on one side is caught."""
    rng = random.Random(1)
    code = K.words(K.op("add", 10, 11, 12))
    regs = init_regs(rng, 64)
    ours, _ = K.run_rlcc(64, code, regs, bytes(K.SCRATCH_SIZE))
    regs[11] += 1
    ref = K.run_unicorn(64, code, regs, bytes(K.SCRATCH_SIZE))
    assert ours.regs != ref.regs
