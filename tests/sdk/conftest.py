"""Build/run helpers for the SDK stub tests (tests only: the product's compiler wrapper is
rlcc.verify.toolchain and its emulator rlcc.emulator; these call zig and unicorn directly)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlcc import firmware_sdk_stub as sdk
from rlcc.firmware_sdk_stub import harness_layout as hl
from rlcc.verify.toolchain import find_compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hostcc import host_cc, sanitizer_flags

CSRC = Path(__file__).resolve().parent / "csrc"

WARN = ["-Wall", "-Wextra", "-Werror", "-Wconversion", "-std=c11"]
ZIG_TARGET = {
    "rv32imc": ["-target", "riscv32-freestanding-none", "-mcpu=generic_rv32+m+c"],
    "rv64imac": ["-target", "riscv64-freestanding-none", "-mcpu=generic_rv64+m+a+c", "-mcmodel=medany"],
}
RAM_BASE = 0x10000
RAM_SIZE = 4 << 20


def run(cmd, **kw) -> subprocess.CompletedProcess:
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=kw.pop("text", True), **kw)
    return p


def zig_cc(target: str) -> list[str]:
    return [*find_compiler(), *ZIG_TARGET[target]]


def compile_ok(cmd) -> None:
    p = run(cmd)
    assert p.returncode == 0, f"compile failed: {' '.join(map(str, cmd))}\n{p.stdout}\n{p.stderr}"


def build_host(sources, out: Path, extra=(), sanitize=True, cc: str = "zig") -> Path:
    """A host executable; ``cc``: "zig" (bundled; UBSan), "gcc" or "clang" (ASan + UBSan; the test
    skips when that compiler is missing)."""
    flags = ["-O1", "-g", *(sanitizer_flags(cc) if sanitize else [])]
    compile_ok([*host_cc(cc), *WARN, *flags, f"-I{sdk.SDK_DIR}", *extra, *sources, "-o", out])
    return out


def build_riscv(target: str, algo_sources, out: Path, max_records: int = 2048) -> Path:
    cmd = [
        *zig_cc(target), "-O2", "-ffreestanding", *WARN, f"-I{sdk.SDK_DIR}",
        f"-DRLCC_HARNESS_MAX_RECORDS={max_records}u", "-T", sdk.linker_script(target),
        *sdk.runtime_sources(target), *algo_sources, "-o", out,
    ]
    compile_ok(cmd)
    return out


def host_env() -> dict:
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0"
    env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
    return env


def run_host_harness(exe: Path, table: bytes, tmp: Path) -> tuple[int, bytes, str]:
    inp, outp = tmp / "in.bin", tmp / "out.bin"
    inp.write_bytes(table)
    if outp.exists():
        outp.unlink()
    p = subprocess.run([str(exe), str(inp), str(outp)], capture_output=True, env=host_env())
    data = outp.read_bytes() if outp.exists() else b""
    return p.returncode, data, p.stderr.decode(errors="replace")



def run_unicorn(elf: Path, table: bytes, max_insns: int = 200_000_000) -> bytes:
    """Load a harness ELF into unicorn, write the input table, run to the final ebreak,
    return the output table bytes (header + capacity records)."""
    from elftools.elf.elffile import ELFFile
    from unicorn import UC_ARCH_RISCV, UC_ERR_INSN_INVALID, UC_MODE_RISCV32, UC_MODE_RISCV64, Uc, UcError
    from unicorn.riscv_const import UC_RISCV_REG_PC

    with open(elf, "rb") as fh:
        e = ELFFile(fh)
        mode = UC_MODE_RISCV64 if e.elfclass == 64 else UC_MODE_RISCV32
        segs = [(s["p_vaddr"], s.data()) for s in e.iter_segments() if s["p_type"] == "PT_LOAD"]
        entry = e["e_entry"]
    syms = hl.table_symbols(elf)
    uc = Uc(UC_ARCH_RISCV, mode)
    uc.mem_map(RAM_BASE, RAM_SIZE)
    for vaddr, data in segs:
        assert RAM_BASE <= vaddr and vaddr + len(data) <= RAM_BASE + RAM_SIZE
        uc.mem_write(vaddr, data)
    in_addr, in_size = syms[hl.SYM_IN]
    assert len(table) <= in_size, "input table larger than the ELF's rlcc_harness_in"
    uc.mem_write(in_addr, table)
    halt = syms[hl.SYM_HALT][0]
    try:
        uc.emu_start(entry, halt, count=max_insns)  # stops when pc reaches the ebreak
        pc = uc.reg_read(UC_RISCV_REG_PC)
        if pc != halt:
            raise AssertionError(f"program did not reach the final ebreak (step limit?); pc={pc:#x}")
    except UcError as ex:
        pc = uc.reg_read(UC_RISCV_REG_PC)
        if not (ex.errno == UC_ERR_INSN_INVALID and pc == halt):
            raise AssertionError(f"emulation fault {ex} at pc={pc:#x} (halt at {halt:#x})") from ex
    out_addr, out_size = syms[hl.SYM_OUT]
    return bytes(uc.mem_read(out_addr, out_size))


@pytest.fixture(scope="session")
def sdk_build_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sdkbuild")


@pytest.fixture(scope="session")
def rtt_host_exe(sdk_build_dir) -> Path:
    srcs = sdk.runtime_sources("host") + [sdk.example_source("rtt_template")]
    return build_host(srcs, sdk_build_dir / "rtt_host")


@pytest.fixture(scope="session")
def rtt_riscv_elf(sdk_build_dir):
    cache: dict[str, Path] = {}

    def get(target: str) -> Path:
        if target not in cache:
            cache[target] = build_riscv(target, [sdk.example_source("rtt_template")],
                                        sdk_build_dir / f"rtt_{target}.elf")
        return cache[target]

    return get


@pytest.fixture(scope="session")
def sdkt():
    """The helpers above, for test modules (with --import-mode=importlib they cannot import
    conftest)."""
    import types

    return types.SimpleNamespace(
        CSRC=CSRC, WARN=WARN, ZIG_TARGET=ZIG_TARGET, run=run, zig_cc=zig_cc, host_cc=host_cc, compile_ok=compile_ok,
        build_host=build_host, build_riscv=build_riscv, host_env=host_env,
        run_host_harness=run_host_harness, run_unicorn=run_unicorn,
    )
