"""The fetch-alignment costs of the cycle model (csrc/rv.h), one at a time on hand-laid code.

``misaligned_fetch`` is charged on every 32-bit instruction at an address = 2 mod 4,
``misaligned_target`` when a jump or taken branch lands on one, and
``branch_lookahead_misaligned`` when a branch is taken whose fall-through instruction is one
(PicoRV32 reads that instruction's second word while the branch executes; measured on its RTL by
bench/bench_cycle_model.py, microbenchmark ``branch_over_misaligned``). Each cost gets a distinct
value, so every expected total below says which terms were charged.
"""

from __future__ import annotations

import json
import struct

import pytest
import rv_testkit as K

from rlcc.emulator import Machine
from rlcc.emulator.cycle_model import load_profile, profile_from_dict

BASE = K.BASE
C_NOP = 0x0001


def _profile():
    doc = json.loads(load_profile("picorv32").path.read_text())
    doc["costs"].update(alu=3, branch_taken=5, branch_not_taken=4, jump=7, store=6, misaligned_fetch=11,
                        misaligned_target=13, branch_lookahead_misaligned=17)
    return profile_from_dict(doc, "test")


P = _profile()
C = P.costs


def code(*insns: tuple[int, int]) -> bytes:
    """(encoding, size) pairs laid out back to back."""
    return b"".join(struct.pack("<H" if size == 2 else "<I", enc) for enc, size in insns)


def run(prog: bytes, regs: dict | None = None) -> int:
    assert BASE % 8 == 0
    m = Machine(xlen=32, profile=P)
    m.write_mem(BASE, prog)
    for r, v in (regs or {}).items():
        m.set_reg(r, v)
    m.pc = BASE
    r = m.run(max_instructions=1000)
    assert r.halt_reason == "ebreak"
    return r.cycles


def w(enc: int) -> tuple[int, int]:
    return (enc, 4)


def h(enc: int) -> tuple[int, int]:
    return (enc, 2)


ADD = w(K.op("add", 5, 5, 5))
EBREAK = w(K.EBREAK)


def test_taken_branch_over_a_misaligned_32_bit_instruction_pays_the_lookahead():
    # 0 c.nop | 2 beq (misaligned itself) -> 10 | 6 add (skipped: 32-bit at 2 mod 4) | 10 c.nop | 12 ebreak
    cycles = run(code(h(C_NOP), w(K.branch("beq", 0, 0, 8)), ADD, h(C_NOP), EBREAK))
    assert cycles == C["alu"] + C["branch_taken"] + C["misaligned_fetch"] + C["branch_lookahead_misaligned"] \
        + C["alu"] + C["alu"]


def test_not_taken_branch_runs_the_misaligned_instruction_instead():
    cycles = run(code(h(C_NOP), w(K.branch("bne", 0, 0, 8)), ADD, h(C_NOP), EBREAK))
    assert cycles == C["alu"] + C["branch_not_taken"] + C["misaligned_fetch"] + C["alu"] + C["misaligned_fetch"] \
        + C["alu"] + C["alu"]


def test_compressed_or_aligned_fall_through_costs_nothing_extra():
    # 0 c.nop | 2 beq -> 10 | 6 c.nop (the fall-through: compressed) | 8 c.nop | 10 c.nop | 12 ebreak
    cycles = run(code(h(C_NOP), w(K.branch("beq", 0, 0, 8)), h(C_NOP), h(C_NOP), h(C_NOP), EBREAK))
    assert cycles == C["alu"] + C["branch_taken"] + C["misaligned_fetch"] + C["alu"] + C["alu"]
    # the branch at 0 mod 4: its fall-through (a 32-bit add) is aligned
    cycles = run(code(w(K.branch("beq", 0, 0, 8)), ADD, EBREAK))
    assert cycles == C["branch_taken"] + C["alu"]


def test_jumps_do_not_pay_the_lookahead():
    cycles = run(code(h(C_NOP), w(K.jal(0, 8)), ADD, h(C_NOP), EBREAK))
    assert cycles == C["alu"] + C["jump"] + C["misaligned_fetch"] + C["alu"] + C["alu"]


def test_a_redirect_onto_a_misaligned_instruction_pays_the_target_cost():
    # 0 beq -> 6 | 4 c.nop (skipped) | 6 add (target, 32-bit at 2 mod 4) | 10 c.nop | 12 ebreak
    cycles = run(code(w(K.branch("beq", 0, 0, 6)), h(C_NOP), ADD, h(C_NOP), EBREAK))
    assert cycles == C["branch_taken"] + C["alu"] + C["misaligned_fetch"] + C["misaligned_target"] + C["alu"] \
        + C["alu"]


@pytest.mark.parametrize("through", ["store", "write_mem"])
def test_patching_the_fall_through_changes_the_cost_of_the_cached_branch(through):
    """The branch's block depends on the bytes of its fall-through, which no decoded instruction
    covers here (the branch is the last instruction decoded): rewriting them must rebuild it."""
    # 0 c.nop (target) | 2 c.nop | 4 ebreak | 8 c.nop (start) | 10 beq -> 0 | 14 c.nop (fall-through)
    prog = code(h(C_NOP), h(C_NOP), EBREAK, h(C_NOP), w(K.branch("beq", 0, 0, -10)), h(C_NOP))
    m = Machine(xlen=32, profile=P)
    m.write_mem(BASE, prog)
    m.pc = BASE + 8
    first = m.run(max_instructions=1000).cycles
    assert first == 4 * C["alu"] + C["branch_taken"] + C["misaligned_fetch"]
    low_half_of_add = K.op("add", 5, 5, 5) & 0xFFFF  # makes the fall-through a 32-bit instruction
    extra = 0
    if through == "write_mem":
        m.write_mem(BASE + 14, struct.pack("<H", low_half_of_add))
        m.pc = BASE + 8
    else:  # the guest's own store, from code placed after the program, then a jump to its start
        m.write_mem(BASE + 64, code(w(K.store("sh", 7, 5, 14)), w(K.jal(0, 8 - 68))))
        m.set_reg(5, BASE)
        m.set_reg(7, low_half_of_add)
        m.pc = BASE + 64
        extra = C["store"] + C["jump"]
    second = m.run(max_instructions=1000).cycles
    assert second == first + C["branch_lookahead_misaligned"] + extra
