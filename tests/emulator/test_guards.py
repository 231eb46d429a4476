"""Guards of issue 12: stack overflow + high-water mark, memory view lifetime, Ctrl-C, concurrent
run(), error messages (RAM bounds, truncated ELF, oversized RAM) and the load-use stall of a fault."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
import warnings

import pytest
import rv_testkit as K

from rlcc.emulator import Machine, load_profile
from rlcc.errors import BadInputError, EmulationError, ExitCode, RlccError

BASE, END = K.BASE, K.BASE + K.SIZE
SP = 2


def machine(xlen: int, code: bytes, profile: str = "generic5") -> Machine:
    m = Machine(xlen=xlen, profile=profile)
    m.write_mem(BASE, code)
    m.pc = BASE
    return m


# ------------------------------------------------------------------ stack guard


@pytest.mark.parametrize("xlen", [32, 64])
def test_stack_overflow_faults_with_pc_and_sp(xlen):
    m = machine(xlen, K.words(K.opimm("addi", SP, SP, -2000), K.store("sw", 0, SP, 0), K.ECALL))
    m.set_stack_bounds(END - 1024, END)
    with pytest.raises(EmulationError) as ei:
        m.run()
    e = ei.value
    sp = END - 16 - 2000
    assert e.kind == "stack_overflow" and e.pc == BASE + 4 and e.addr == sp
    assert e.exit_code == ExitCode.EMULATION
    assert str(e).startswith(f"stack overflow at pc {BASE + 4:#x} (sp {sp:#x}") and "\n" not in str(e)
    assert m.instret == 1  # the store did not retire


@pytest.mark.parametrize("xlen", [32, 64])
def test_stack_high_water_per_run(xlen):
    code = K.words(
        K.opimm("addi", SP, SP, -64), K.store("sw", 0, SP, 0), K.opimm("addi", SP, SP, 64), K.ECALL,
        K.opimm("addi", SP, SP, -32), K.load("lw", 10, SP, 0), K.opimm("addi", SP, SP, 32), K.ECALL,
    )  # fmt: skip
    m = machine(xlen, code)
    assert m.run().stack_high_water_bytes is None  # no stack bounds known
    m.pc = BASE
    m.set_stack_bounds(END - 4096, END)
    r = m.run()
    assert r.stack_high_water_bytes == 16 + 64  # Machine.stack_top is 16 bytes below the end of RAM
    assert m.run().stack_high_water_bytes == 16 + 32  # measured per run
    with pytest.raises(BadInputError):
        m.set_stack_bounds(BASE - 16, END)


def test_stack_guard_is_off_without_bounds():
    m = machine(64, K.words(K.opimm("addi", SP, SP, -2000), K.store("sw", 0, SP, 0), K.ECALL))
    assert m.run().halt_reason == "ecall"


def test_elf_stack_symbols_set_the_guard(compiled, tmp_path):
    from rlcc import firmware_sdk_stub as sdk
    from rlcc.verify.toolchain import compile_riscv

    src = tmp_path / "deep.c"
    src.write_text(
        "volatile unsigned sink;\n"
        "unsigned deep(unsigned n) { volatile unsigned pad[64]; pad[n & 63] = n;"
        " return n ? deep(n - 1) + pad[n & 63] : 0; }\n"
        "void rlcc_main(void) { sink = deep(100000); }\n"
    )
    elf = compile_riscv(
        [src, sdk.SDK_DIR / "crt0.S"], target="rv64imac", linker_script=sdk.linker_script("rv64imac"),
        out_path=tmp_path / "deep.elf",
    )  # fmt: skip
    m = Machine(xlen=64)
    m.load_elf(elf)
    assert m.stack_bounds == (m.symbol("__stack_bottom"), m.symbol("__stack_top"))
    assert m.stack_bounds[1] - m.stack_bounds[0] == 64 << 10
    with pytest.raises(EmulationError) as ei:
        m.run()
    assert ei.value.kind == "stack_overflow" and " in deep " in str(ei.value)


# ------------------------------------------------------------------ memory view, signals, threads


def test_memory_view_keeps_ram_alive():
    code = (
        "import gc\nfrom rlcc.emulator import Machine\n"
        "mv = Machine().memory\ngc.collect()\nprint(mv[0], len(mv), bytes(mv[-4:]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:2] == ["0", str(4 << 20)]


def test_ctrl_c_interrupts_run():
    # The child starts with SIGINT unblocked and Python's handler whatever the pytest process
    # holds: a blocked or ignored SIGINT is inherited across exec, and a shell without job control
    # starts background commands (`pytest &`, e.g. a CI runner's) with SIGINT ignored.
    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    if blocked or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        warnings.warn(f"the test process has SIGINT {'blocked' if blocked else 'ignored'}; the child resets it")
    code = (
        "import os, signal, threading, time\nimport rv_testkit as K\nfrom rlcc.emulator import Machine\n"
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "m = Machine()\nm.write_mem(m.mem_base, K.words(K.jal(0, 0)))\nm.pc = m.mem_base\n"
        "threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
        "t0 = time.perf_counter()\n"
        "try:\n    m.run(max_instructions=10**12)\nexcept KeyboardInterrupt:\n"
        "    print('interrupted', m.pc == m.mem_base, round(time.perf_counter() - t0, 1))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=K.__file__.rsplit("/", 1)[0]
    )
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.split()
    assert words[:2] == ["interrupted", "True"] and float(words[2]) < 5


def test_second_run_from_another_thread_is_refused():
    m = machine(64, K.words(K.jal(0, 0)))
    errors: list[BaseException] = []

    def spin() -> None:
        try:
            m.run(max_instructions=60_000_000, limit_ok=True)
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            errors.append(e)

    t = threading.Thread(target=spin)
    t.start()
    deadline = time.monotonic() + 10
    while not m._core.running and t.is_alive() and time.monotonic() < deadline:
        time.sleep(0.0005)
    assert m._core.running, "run() finished before the test could race it"
    with pytest.raises(RlccError, match="already running"):
        m.run(max_instructions=10)
    with pytest.raises(RlccError, match="already running"):
        m.write_mem(BASE + 64, b"x")
    t.join()
    assert not errors and m.instret == 60_000_000


# ------------------------------------------------------------------ messages and bad input


def test_ram_bounds_message_is_formatted():
    m = Machine()
    with pytest.raises(EmulationError) as ei:
        m.read_mem(0x20, 4)
    assert "%" not in str(ei.value) and f"[0x20, 0x24) is outside RAM [{BASE:#x}, {END:#x})" in str(ei.value)
    with pytest.raises(EmulationError) as ei:
        m.write_mem(END - 2, b"abcd")
    assert "%" not in str(ei.value) and f"{END - 2:#x}" in str(ei.value)


def test_truncated_elf_is_bad_input(compiled, tmp_path):
    data = compiled("crc", 64).read_bytes()
    for n in (70, 200, len(data) // 2, len(data) - 40):
        path = tmp_path / f"cut{n}.elf"
        path.write_bytes(data[:n])
        with pytest.raises(BadInputError) as ei:
            Machine(xlen=64).load_elf(path)
        assert "\n" not in str(ei.value) and path.name in str(ei.value)


def test_oversized_ram_is_bad_input_naming_the_limit():
    with pytest.raises(BadInputError, match="256 MiB"):
        Machine(mem_size=1 << 40)


# ------------------------------------------------------------------ cycle model


@pytest.mark.parametrize("xlen", [32, 64])
def test_faulting_instruction_takes_no_load_use_stall(xlen):
    # lw a0 <- END-ish address, then lw a1, 0(a0) uses a0 right away and faults (a0 outside RAM)
    m = machine(xlen, K.words(K.load("lw", 10, 5, 0), K.load("lw", 11, 10, 0)))
    m.set_reg(5, BASE + 0x800)
    m.write_u32(BASE + 0x800, END + 64)
    with pytest.raises(EmulationError, match="load_out_of_range"):
        m.run()
    costs = load_profile("generic5").costs
    assert m.stats()["load_use_stalls"] == 0
    assert m.cycles == costs["load"] and m.instret == 1


def test_halt_pc_and_symbolize(compiled):
    m = Machine(xlen=64)
    m.load_elf(compiled("crc", 64))
    r = m.run()
    assert r.halt_reason == "ecall" and r.halt_pc is not None and r.halt_pc < r.pc
    name = m.symbolize(m.symbol("main") + 2)
    assert name == "main"
    assert m.symbolize(END + 100) is None
