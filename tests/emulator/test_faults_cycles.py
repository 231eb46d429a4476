"""Fault reporting, the instruction limit, counters and cycle accounting against the profile JSON."""

from __future__ import annotations

import json

import pytest
import rv_testkit as K

from rlcc.emulator import FAULT_KINDS, Machine, load_profile
from rlcc.errors import BadInputError, EmulationError, ExitCode

BASE, END = K.BASE, K.BASE + K.SIZE


def machine(xlen: int, code: bytes, regs: dict | None = None, at: int = BASE, profile: str = "generic5") -> Machine:
    m = Machine(xlen=xlen, profile=profile)
    m.write_mem(at, code)
    for r, v in (regs or {}).items():
        m.set_reg(r, v)
    m.pc = at
    return m


FAULT_CASES = {
    "load_out_of_range": (K.words(K.load("lw", 10, 5, 0)), {5: END}, END),
    "load_misaligned": (K.words(K.load("lw", 10, 5, 2)), {5: K.SCRATCH}, K.SCRATCH + 2),
    "store_out_of_range": (K.words(K.store("sb", 0, 5, -1)), {5: BASE}, BASE - 1),
    "store_misaligned": (K.words(K.store("sh", 0, 5, 1)), {5: K.SCRATCH}, K.SCRATCH + 1),
    "amo_out_of_range": (K.words(K.amo("amoadd", "w", 10, 5, 6)), {5: 0x100}, 0x100),
    "amo_misaligned": (K.words(K.amo("lr", "w", 10, 5, 0)), {5: K.SCRATCH + 4 + 2}, K.SCRATCH + 6),
    "jump_out_of_range": (K.words(K.jalr(1, 5, 0)), {5: END + 64}, END + 64),
}


@pytest.mark.parametrize("xlen", [32, 64])
@pytest.mark.parametrize("kind", sorted(FAULT_CASES))
def test_memory_and_jump_faults(kind, xlen):
    code, regs, addr = FAULT_CASES[kind]
    m = machine(xlen, code, regs)
    with pytest.raises(EmulationError) as ei:
        m.run()
    e = ei.value
    assert e.kind == kind and e.pc == BASE and e.addr == addr
    assert e.exit_code == ExitCode.EMULATION
    assert "\n" not in str(e) and f"{addr:#x}" in str(e) and kind in str(e)
    assert m.instret == 0  # the faulting instruction did not retire


@pytest.mark.parametrize("xlen", [32, 64])
def test_illegal_instructions(xlen):
    flw = K.i_type(0, 5, 2, 10, 0x07)
    fadd = K.r_type(0, 2, 1, 0, 3, 0x53)
    mret = 0x30200073
    csrw_cycle = K.i_type(0xC00, 5, 1, 0, 0x73)  # csrrw x0, cycle, t0: counters are read-only
    mcycle = K.csrr(10, 0xB00)
    for w in (0xFFFFFFFF, flw, fadd, mret, csrw_cycle, mcycle):
        m = machine(xlen, K.words(K.NOP, w))
        with pytest.raises(EmulationError) as ei:
            m.run()
        assert ei.value.kind == "illegal_instruction" and ei.value.pc == BASE + 4 and ei.value.insn == w
        assert f"{w:#x}" in str(ei.value)
    if xlen == 32:  # RV64-only encodings are illegal on RV32
        for w in (K.load("ld", 10, 2, 0), K.addiw(10, 10, 1), K.op("addw", 1, 2, 3), K.amo("amoadd", "d", 1, 2, 3)):
            with pytest.raises(EmulationError, match="illegal"):
                machine(32, K.words(w)).run()


def test_fetch_faults():
    m = machine(64, K.words(K.NOP, K.NOP), at=END - 8)  # runs off the end of RAM
    with pytest.raises(EmulationError) as ei:
        m.run()
    assert ei.value.kind == "fetch_out_of_range" and ei.value.pc == END
    m = machine(64, K.assemble([(K.C_EBREAK, 2), (K.NOP & 0xFFFF, 2)]), at=END - 4)
    m.pc = END - 2  # a 32-bit instruction whose second half would lie outside RAM
    with pytest.raises(EmulationError, match="fetch_out_of_range"):
        m.run()
    m = machine(64, K.words(K.NOP))
    m.pc = BASE + 1
    with pytest.raises(EmulationError) as ei:
        m.run()
    assert ei.value.kind == "fetch_misaligned"
    assert set(FAULT_KINDS) >= {"fetch_out_of_range", "fetch_misaligned", "illegal_instruction"}


def test_instruction_limit_stops_infinite_loop_and_can_resume():
    m = machine(64, K.words(K.opimm("addi", 10, 10, 1), K.jal(0, -4)))
    with pytest.raises(EmulationError) as ei:
        m.run(max_instructions=1001)
    assert ei.value.kind == "limit" and "1001" in str(ei.value)
    assert m.instret == 1001 and m.reg(10) == 501
    r = m.run(max_instructions=10, limit_ok=True)
    assert r.halt_reason == "limit" and r.instret == 10 and m.instret == 1011


@pytest.mark.parametrize("xlen", [32, 64])
def test_ecall_exit_code_signed_and_resume(xlen):
    m = machine(xlen, K.words(K.opimm("addi", 10, 0, -3), K.ECALL, K.opimm("addi", 10, 0, 4), K.ECALL))
    r = m.run()
    assert (r.halt_reason, r.exit_code, r.instret, r.pc) == ("ecall", -3, 2, BASE + 8)
    r = m.run()
    assert (r.halt_reason, r.exit_code, r.total_instret) == ("ecall", 4, 4)


# ------------------------------------------------------------------ cycle accounting


@pytest.mark.parametrize("profile", ["generic5", "dpa"])
def test_cycles_per_class_match_profile(profile):
    c = load_profile(profile).costs
    m = machine(64, K.words(
        K.opimm("addi", 10, 0, 1),        # alu
        K.load("lw", 11, 8, 0),           # load
        K.opimm("addi", 12, 11, 1),       # alu + load-use stall (reads a1)
        K.load("lw", 13, 8, 4),           # load
        K.opimm("addi", 14, 10, 1),       # alu, no stall (independent)
        K.store("sw", 14, 8, 8),          # store
        K.op("mul", 15, 10, 10),          # mul
        K.op("div", 16, 10, 10),          # div
        K.branch("beq", 0, 10, 8),        # not taken
        K.branch("beq", 0, 0, 8),         # taken -> skips the next
        K.NOP,
        K.jal(1, 4),                      # jump
        K.amo("amoadd", "w", 17, 8, 10),  # atomic
        K.csrr(18, 0xC00),                # csr
    ), {8: K.SCRATCH}, profile=profile)
    m.write_mem(BASE + 14 * 4, K.words(K.EBREAK))
    r = m.run()
    expected = (3 * c["alu"] + 2 * c["load"] + c["load_use_stall"] + c["store"] + c["mul"] + c["div"]
                + c["branch_not_taken"] + c["branch_taken"] + c["jump"] + c["atomic"] + c["csr"] + c["alu"])  # ebreak
    assert r.cycles == expected
    assert r.instret == 14
    # rdcycle returned the cycles of everything before it
    assert m.reg(18) == expected - c["csr"] - c["alu"]
    st = m.stats()
    assert st["load_use_stalls"] == 1 and st["branch_taken"] == 1 and st["load"] == 2 and st["branch"] == 2
    assert r.class_counts["alu"] == 3 and r.class_counts["system"] == 1


def test_load_use_stall_only_for_dependent_next_instruction():
    c = load_profile("generic5").costs

    def cycles(second: int) -> int:
        return machine(64, K.words(K.load("ld", 10, 8, 0), second, K.EBREAK), {8: K.SCRATCH}).run().cycles

    base = c["load"] + c["alu"] + c["alu"]
    assert cycles(K.opimm("addi", 11, 12, 1)) == base
    assert cycles(K.opimm("addi", 11, 10, 1)) == base + c["load_use_stall"]
    assert cycles(K.op("add", 11, 12, 10)) == base + c["load_use_stall"]  # via rs2
    # loading into x0 never stalls
    r = machine(64, K.words(K.load("ld", 0, 8, 0), K.opimm("addi", 11, 0, 1), K.EBREAK), {8: K.SCRATCH}).run()
    assert r.cycles == base


def test_costs_come_from_the_json_file(tmp_path):
    data = json.loads(load_profile("generic5").path.read_text())
    data["costs"]["alu"] = 7
    data["clock_hz"] = 500_000_000
    p = tmp_path / "slow.json"
    p.write_text(json.dumps(data))
    m = machine(64, K.words(K.NOP, K.NOP, K.csrr(10, 0xC01), K.csrr(11, 0xC02), K.EBREAK), profile=str(p))
    r = m.run()
    c = data["costs"]
    assert r.cycles == 7 * 3 + 2 * c["csr"]
    assert m.reg(10) == 14 * 1_000_000_000 // 500_000_000  # rdtime: cycles scaled to the 1 GHz time base
    assert m.reg(11) == 3  # rdinstret


def test_rv32_counter_high_halves():
    m = machine(32, K.words(K.csrr(10, 0xC80), K.csrr(11, 0xC82), K.csrr(12, 0xC81), K.csrr(13, 0xC00), K.EBREAK))
    m._core.cycles = (5 << 32) + 7
    m._core.instret = (3 << 32) + 1
    m.run()
    assert m.reg(10) == 5 and m.reg(11) == 3 and m.reg(13) == 7 + 3 * load_profile("generic5").costs["csr"]
    with pytest.raises(EmulationError, match="illegal"):
        machine(64, K.words(K.csrr(10, 0xC80))).run()


@pytest.mark.parametrize("mutate,msg", [
    (lambda d: d.pop("clock_hz"), "missing"),
    (lambda d: d["costs"].pop("div"), "div"),
    (lambda d: d["costs"].update(fpu=3), "unknown cost"),
    (lambda d: d["costs"].update(alu=-1), "alu"),
    (lambda d: d.update(isa="rv64gc"), "isa"),
    (lambda d: d.update(hw_threads=0), "hw_threads"),
])
def test_bad_profiles_are_rejected(tmp_path, mutate, msg):
    data = json.loads(load_profile("dpa").path.read_text())
    mutate(data)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data))
    with pytest.raises(BadInputError, match=msg):
        load_profile(p)


def test_profile_errors_and_listing(tmp_path):
    from rlcc.emulator import list_profiles

    assert {"generic5", "dpa"} <= set(list_profiles())
    with pytest.raises(BadInputError, match="unknown cycle profile"):
        load_profile("nope")
    p = tmp_path / "x.json"
    p.write_text("{not json")
    with pytest.raises(BadInputError, match="not JSON"):
        load_profile(p)
    dpa = load_profile("dpa")
    assert dpa.hw_threads == 16 and dpa.zbb and dpa.clock_hz == 1_800_000_000


@pytest.mark.parametrize("between", [0, 1, 2])
def test_jalr_waits_for_a_load_two_instructions_back(between, tmp_path):
    """cv32e40p: a jalr whose address register was loaded two instructions earlier costs
    jalr_load_dep2_stall more; right after the load the distance-1 hazards apply instead, and three
    instructions on nothing is added (bench/rtl/microbench.py class jalr_load_dep2)."""
    data = json.loads(load_profile("cv32e40p").path.read_text())
    assert data["costs"]["jalr_load_dep2_stall"] == 1
    without = tmp_path / "no_dep2.json"
    data["costs"]["jalr_load_dep2_stall"] = 0
    without.write_text(json.dumps(data))
    fillers = [K.opimm("addi", 6, 6, 1)] * between
    target = BASE + 4 * (2 + between)
    code = K.words(K.load("lw", 7, 8, 0), *fillers, K.jalr(0, 7, 0), K.EBREAK)

    def cycles(profile) -> int:
        m = machine(32, code, {8: K.SCRATCH}, profile=profile)
        m.write_mem(K.SCRATCH, target.to_bytes(4, "little"))
        r = m.run()
        assert r.halt_reason == "ebreak" and r.halt_pc == target  # the jalr went where it was loaded to
        return r.cycles

    assert cycles("cv32e40p") - cycles(str(without)) == (1 if between == 1 else 0)
