"""A machine without cc/gcc/clang runs every build: the host harness and the RISC-V firmware both
compile with the zig clang from the ``ziglang`` wheel (PATH holds nothing but an empty directory)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from rlcc import firmware_sdk_stub as sdk
from rlcc.firmware_sdk_stub import harness_layout as hl
from rlcc.verify.toolchain import compile_riscv


@pytest.fixture
def bare_path(tmp_path, monkeypatch):
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for cc in ("cc", "gcc", "clang", "c99"):
        assert shutil.which(cc) is None
    return empty


@pytest.mark.slow
def test_host_and_riscv_builds_need_no_system_compiler(bare_path, tmp_path, sdkt):
    src = [sdk.example_source("rtt_template")]
    exe = sdkt.build_host(sdk.runtime_sources("host") + src, tmp_path / "rtt_host")  # zig, UBSan
    recs = hl.new_records(4)
    rc, out, err = sdkt.run_host_harness(exe, hl.pack_input(recs), tmp_path)
    assert rc == 0, err
    rates = hl.unpack_output(out).records["rate"]
    assert np.all(rates > 0)
    elf = compile_riscv(sdk.runtime_sources("rv32imc") + src, target="rv32imc", include_dirs=[sdk.SDK_DIR],
                        linker_script=sdk.linker_script("rv32imc"), out_path=tmp_path / "rtt.elf")
    assert elf.read_bytes()[:4] == b"\x7fELF"


def test_system_compiler_checks_skip_with_a_reason(bare_path, sdkt):
    with pytest.raises(pytest.skip.Exception, match="gcc is not on PATH"):
        sdkt.host_cc("gcc")
