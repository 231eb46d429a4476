"""The block builder's handler choices (csrc/rv_exec_body.h) must not change any result.

Within a block, an instruction that reads the value of the block's last load (not the
instruction just before it) takes it from lacc instead of the register file, a load or store
whose sp the block already sampled skips the stack guard's sample, and slli + add and add + load
pairs run as one handler. Seeded random blocks built from few registers, so loaded values are
read again at every distance and overwritten in between and pairs share registers in every way,
are run against unicorn; directed programs change sp between two accesses of one block (by an
ALU op and by a load into sp) and check the fault and the high-water mark the documented guard
gives, and fault in the second instruction of a fused pair.
"""

from __future__ import annotations

import random

import pytest
import rv_testkit as K

from rlcc.emulator import Machine, load_profile
from rlcc.errors import EmulationError

SP, S0 = 2, 8
REGS = [10, 11, 12, 13]  # few destinations: loads and their readers collide often
SEQS, LEN = 150, 40


def load_alu_block(rng: random.Random, xlen: int) -> bytes:
    """One straight-line run (one block) of loads from scratch and ALU ops on REGS."""
    loads = ["lb", "lh", "lw", "lbu", "lhu"] + (["ld", "lwu"] if xlen == 64 else [])
    ops = ["add", "sub", "xor", "or", "and", "slt", "sltu", "sll", "srl", "sra"] + (["addw", "subw"] if xlen == 64 else [])
    words = []
    for _ in range(LEN):
        k = rng.random()
        if k < 0.4:
            nm = rng.choice(loads)
            size = K.LOADS[nm][1]
            words.append(K.load(nm, rng.choice(REGS + [0]), S0, rng.randrange(0, 512, size)))
        elif k < 0.8:
            words.append(K.op(rng.choice(ops), rng.choice(REGS), rng.choice(REGS), rng.choice(REGS)))
        elif k < 0.9:
            words.append(K.opimm(rng.choice(list(K.OPIMM)), rng.choice(REGS), rng.choice(REGS), rng.randint(-2048, 2047)))
        else:
            words.append(K.store("sw", rng.choice(REGS), S0, rng.randrange(0, 512, 4)))
    return K.words(*words)


def _blocks_match_unicorn(xlen: int, seed: str, block) -> None:
    """SEQS random blocks from ``block(rng, xlen)`` on random registers and scratch memory: rlcc's
    registers and memory afterwards equal unicorn's."""
    rng = random.Random(seed)
    for _ in range(SEQS):
        code = block(rng, xlen)
        regs = {r: rng.getrandbits(xlen) for r in REGS}
        regs[S0], regs[SP] = K.SCRATCH, K.SCRATCH + 0x1000
        scratch = rng.randbytes(K.SCRATCH_SIZE)
        ours, _m = K.run_rlcc(xlen, code, regs, scratch)
        ref = K.run_unicorn(xlen, code, regs, scratch)
        assert ours.regs == ref.regs, f"code={code.hex()}"
        assert ours.scratch == ref.scratch, f"code={code.hex()}"


@pytest.mark.parametrize("xlen", [32, 64])
def test_loaded_values_read_later_in_the_block_match_unicorn(xlen):
    _blocks_match_unicorn(xlen, f"lacc-{xlen}", load_alu_block)


@pytest.mark.parametrize("xlen", [32, 64])
def test_stale_load_value_is_not_read_after_an_overwrite(xlen):
    """lw a0; addi a0, x0, 5; nop; add a1, a0, a0: the add reads the 5, not the loaded word."""
    code = K.words(K.load("lw", 10, S0, 0), K.opimm("addi", 10, 0, 5), K.NOP, K.op("add", 11, 10, 10))
    ours, _m = K.run_rlcc(xlen, code, {S0: K.SCRATCH, SP: K.SCRATCH + 0x1000}, (1234).to_bytes(4, "little") + bytes(K.SCRATCH_SIZE - 4))
    assert ours.regs[11] == 10


def fused_pairs_block(rng: random.Random, xlen: int) -> bytes:
    """slli + add and add + load pairs (and a few other instructions) on REGS and S0."""
    loads = ["lb", "lh", "lw", "lbu", "lhu"] + (["ld", "lwu"] if xlen == 64 else [])
    words = []
    for _ in range(LEN // 3):
        a, b, c = rng.choice(REGS), rng.choice(REGS), rng.choice(REGS)
        k = rng.random()
        if k < 0.4:  # slli a, b, sh; add c, a, x or add c, x, a (x may be a or b)
            other = rng.choice(REGS)
            pair = (a, other) if rng.random() < 0.5 else (other, a)
            words += [K.shift_imm("slli", a, b, rng.randrange(xlen)), K.op("add", c, *pair)]
        elif k < 0.8:  # index in b, address in a (the base may be on either side), load into c
            nm = rng.choice(loads)
            size = K.LOADS[nm][1]
            words.append(K.opimm("andi", b, b, 0x1F8))
            words.append(K.op("add", a, S0, b) if rng.random() < 0.5 else K.op("add", a, b, S0))
            words.append(K.load(nm, c, a, rng.randrange(0, 256, size)))
        else:
            words.append(K.op(rng.choice(["xor", "or", "sub"]), a, b, c))
    return K.words(*words)


@pytest.mark.parametrize("xlen", [32, 64])
def test_fused_pairs_match_unicorn(xlen):
    _blocks_match_unicorn(xlen, f"fuse-{xlen}", fused_pairs_block)


@pytest.mark.parametrize("xlen", [32, 64])
def test_fault_in_the_second_of_a_fused_pair_retires_the_first(xlen):
    """add a0, s0, a1; lw a2, 2(a0) is misaligned: the add retires, the fault is the lw's."""
    code = K.words(K.op("add", 10, S0, 11), K.load("lw", 12, 10, 2), K.ECALL)
    m = Machine(xlen=xlen, profile="generic5", mem_base=K.BASE, mem_size=K.SIZE)
    m.write_mem(K.BASE, code)
    m.pc = K.BASE
    m.set_reg(S0, K.SCRATCH)
    m.set_reg(11, 8)
    with pytest.raises(EmulationError) as ei:
        m.run()
    e = ei.value
    assert e.kind == "load_misaligned" and e.pc == K.BASE + 4 and e.addr == K.SCRATCH + 10
    assert m.instret == 1 and m.reg(10) == K.SCRATCH + 8 and m.pc == K.BASE + 4
    assert m.cycles == load_profile("generic5").costs["alu"]


def guarded(xlen: int, code: bytes) -> Machine:
    m = Machine(xlen=xlen, profile="generic5", mem_base=K.BASE, mem_size=K.SIZE)
    m.write_mem(K.BASE, code)
    m.pc = K.BASE
    m.set_stack_bounds(K.BASE + K.SIZE - 1024, K.BASE + K.SIZE)
    return m


@pytest.mark.parametrize("xlen", [32, 64])
def test_sp_lowered_between_two_accesses_of_a_block_faults_at_the_second(xlen):
    code = K.words(K.load("lw", 10, SP, 0), K.opimm("addi", SP, SP, -2000), K.load("lw", 11, SP, 0), K.ECALL)
    m = guarded(xlen, code)
    sp = m.stack_top - 2000
    with pytest.raises(EmulationError) as ei:
        m.run()
    assert ei.value.kind == "stack_overflow" and ei.value.pc == K.BASE + 8 and ei.value.addr == sp
    assert m.instret == 2


@pytest.mark.parametrize("xlen", [32, 64])
def test_sp_loaded_by_a_load_is_sampled_by_the_next_access(xlen):
    """lw sp, 0(sp) samples the old sp; the store after it samples the loaded one."""
    code = K.words(K.load("lw", SP, SP, 0), K.store("sw", 0, SP, 0), K.ECALL)
    m = guarded(xlen, code)
    low = m.stack_top - 3000
    m.write_u32(m.stack_top, low)
    with pytest.raises(EmulationError) as ei:
        m.run()
    assert ei.value.kind == "stack_overflow" and ei.value.pc == K.BASE + 4 and ei.value.addr == low


@pytest.mark.parametrize("xlen", [32, 64])
def test_high_water_counts_an_sp_changed_inside_a_block(xlen):
    code = K.words(
        K.load("lw", 10, SP, 0), K.opimm("addi", SP, SP, -48), K.load("lw", 11, SP, 0),
        K.store("sw", 11, SP, 4), K.opimm("addi", SP, SP, 48), K.load("lw", 12, SP, 0), K.ECALL,
    )  # fmt: skip
    r = guarded(xlen, code).run()
    assert r.halt_reason == "ecall" and r.stack_high_water_bytes == 16 + 48
