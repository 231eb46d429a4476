"""Shared fixtures of the emulator tests: make rv_testkit importable, compile the C test programs once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

PROGS = HERE / "progs"
PROGRAMS = ("crc", "sort", "muldiv64", "trees")
TARGETS = {32: "rv32imc", 64: "rv64imac"}


@pytest.fixture(scope="session")
def compiled(tmp_path_factory):
    """Compile function: (name, xlen, defines=()) -> ELF path, cached per session."""
    from rlcc.verify.toolchain import compile_riscv

    out_dir = tmp_path_factory.mktemp("rvprogs")
    cache: dict = {}

    def build(name: str, xlen: int, defines: tuple[str, ...] = (), zbb: bool = False) -> Path:
        key = (name, xlen, defines, zbb)
        if key not in cache:
            out = out_dir / f"{name}_{xlen}_{len(cache)}.elf"
            cache[key] = compile_riscv(
                [PROGS / "crt0.c", PROGS / f"{name}.c"],
                target=TARGETS[xlen],
                linker_script=PROGS / "link.ld",
                out_path=out,
                extra_flags=[f"-D{d}" for d in defines],
                zbb=zbb,
            )
        return cache[key]

    return build
