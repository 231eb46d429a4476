"""The block cache (csrc/rv_exec_body.h) must not change any result or count.

Blocks are decoded once with the cycle model's static costs folded in, so cycles, instret, class
counts and stalls are charged per block and taken back when a block is left early. These tests cut
the same programs into blocks at every possible place (runs of a few instructions at a time, which
build blocks that stop at the instruction limit) and compare registers, RAM, pc and every counter
with one uninterrupted run; they also pin the counts of the benchmark program to the numbers the
per-instruction interpreter committed in bench/results/emulator.json, and check stores into the
block being executed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import rv_testkit as K

from rlcc.emulator import Machine, _rvcore
from rlcc.emulator.cycle_model import load_profile
from rlcc.emulator.elf_loader import load_elf

ROOT = Path(__file__).resolve().parents[2]
BASE = K.BASE

# (xlen, profile): the RTL-validated RV32 profiles charge every optional dynamic term
# (jalr dependences, divider early-out, misaligned fetch and targets).
CASES = [(64, "generic5"), (64, "dpa"), (32, "generic5"), (32, "ibex"), (32, "cv32e40p"), (32, "picorv32")]


def snapshot(m: Machine) -> tuple:
    return (m.regs(), m.pc, m.cycles, m.instret, m.stats(), hashlib.sha256(bytes(m.memory)).hexdigest())


def load(compiled, name: str, xlen: int, profile: str) -> Machine:
    m = Machine(xlen=xlen, profile=profile)
    m.load_elf(compiled(name, xlen))
    return m


@pytest.mark.parametrize("xlen,profile", CASES)
@pytest.mark.parametrize("name", ["trees", "muldiv64", "sort", "crc"])
def test_runs_cut_anywhere_match_one_run(compiled, name, xlen, profile):
    whole = load(compiled, name, xlen, profile)
    r = whole.run(max_instructions=5_000_000)
    assert r.halt_reason == "ecall"
    cut = load(compiled, name, xlen, profile)
    rng = random.Random(f"{name}{xlen}{profile}")
    runs = 0
    while True:
        part = cut.run(max_instructions=rng.choice([1, 2, 3, rng.randrange(1, 90)]), limit_ok=True)
        runs += 1
        if part.halt_reason != "limit":
            break
    assert part.halt_reason == "ecall" and part.exit_code == r.exit_code
    assert runs > 100
    assert snapshot(cut) == snapshot(whole)


@pytest.mark.parametrize("xlen", [32, 64])
def test_benchmark_counts_equal_the_committed_ones(compiled, xlen):
    """bench/results/emulator.json holds the per-instruction interpreter's counts of the same ELF."""
    doc = json.loads((ROOT / "bench" / "results" / "emulator.json").read_text())
    row = next(x for x in doc["results"] if x["isa"] == ("rv64imac" if xlen == 64 else "rv32imc"))
    m = Machine(xlen=xlen, profile="generic5", mem_base=0x10000, mem_size=4 << 20)
    m.load_elf(compiled("trees", xlen, (f"ROUNDS={doc['rounds']}",)))
    r = m.run(max_instructions=1_000_000_000)
    assert (r.instret, r.cycles) == (row["instructions"], row["modelled_cycles_generic5"])


@pytest.mark.parametrize("xlen", [32, 64])
def test_store_over_the_next_instruction_of_the_running_block(xlen):
    new = K.opimm("addi", 10, 0, 42)
    code = K.words(
        K.store("sw", 7, 5, 8),       # 0: patches the instruction at 8
        K.load("lw", 11, 5, 0),       # 4: a load ...
        K.opimm("addi", 10, 11, 1),   # 8: ... whose use is patched away: no load-use stall any more
        K.EBREAK,
    )
    m = Machine(xlen=xlen, profile="generic5")
    m.write_mem(BASE, code)
    m.set_reg(5, BASE)
    m.set_reg(7, new)
    m.pc = BASE
    r = m.run(max_instructions=100)
    c = load_profile("generic5").costs
    assert m.reg(10) == 42
    assert (r.instret, r.cycles) == (4, c["store"] + c["load"] + 2 * c["alu"])
    assert m.stats()["load_use_stalls"] == 0 and r.class_counts == {
        "alu": 1, "branch": 0, "jump": 0, "load": 1, "store": 1, "mul": 0, "div": 0, "csr": 0, "atomic": 0,
        "system": 1}


@pytest.mark.parametrize("xlen", [32, 64])
def test_fault_mid_block_charges_only_what_retired(xlen):
    c = load_profile("generic5").costs
    code = K.words(
        K.load("lw", 11, 5, 0),       # load
        K.opimm("addi", 12, 11, 1),   # alu + load-use stall
        K.load("lw", 13, 6, 0),       # faults: a6 points outside RAM
        K.opimm("addi", 14, 0, 1),
        K.EBREAK,
    )
    m = Machine(xlen=xlen, profile="generic5")
    m.write_mem(BASE, code)
    m.set_reg(5, BASE)
    m.set_reg(6, 8)
    m.pc = BASE
    with pytest.raises(Exception, match="outside|out of range"):
        m.run(max_instructions=100)
    assert (m.pc, m.instret, m.cycles) == (BASE + 8, 2, c["load"] + c["alu"] + c["load_use_stall"])
    st = m.stats()
    assert (st["load"], st["alu"], st["load_use_stalls"]) == (1, 1, 1)


def test_ram_above_4_gib_is_refused():
    """Block records hold 32-bit RAM offsets."""
    with pytest.raises(ValueError, match="4 GiB"):
        _rvcore.Core(64, 0x10000, (1 << 32) + 8)


def run_core(module, path: Path, xlen: int, profile: str) -> tuple:
    """Load and run an ELF on a bare ``Core`` of ``module``; the state and counters after it."""
    core = module.Core(xlen, 0x10000, 4 << 20, False)
    prof = load_profile(profile)
    core.set_costs(prof.cost_tuple(), prof.clock_hz, prof.timebase_hz)

    class Mem:
        def write_mem(self, addr: int, data: bytes) -> None:
            core.write_mem(addr, bytes(data))

    elf = load_elf(path, Mem(), xlen, 0x10000, 4 << 20)
    core.pc = elf.entry
    core.set_reg(2, 0x10000 + (4 << 20) - 16)
    halt = core.run(10_000_000)
    return (halt, core.get_regs(), core.pc, core.cycles, core.instret, core.stats(),
            hashlib.sha256(bytes(core.memory())).hexdigest())


@pytest.mark.slow
def test_switch_dispatch_build_runs_like_the_threaded_one(compiled, tmp_path):
    """The portable build (no computed goto: -DRV_NO_THREADED) gives the same results and counts."""
    lib = tmp_path / "lib"
    env = {**os.environ, "CFLAGS": "-DRV_NO_THREADED"}
    cmd = [sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(lib), "--build-temp", str(tmp_path / "obj")]
    proc = subprocess.run(cmd, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (so,) = (lib / "rlcc" / "emulator").glob("_rvcore*")
    spec = importlib.util.spec_from_file_location("rlcc.emulator._rvcore", so)
    switched = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(switched)
    for name in ("trees", "muldiv64", "crc"):
        for xlen, profile in ((64, "dpa"), (32, "cv32e40p")):
            path = compiled(name, xlen)
            assert run_core(switched, path, xlen, profile) == run_core(_rvcore, path, xlen, profile), (name, xlen)
