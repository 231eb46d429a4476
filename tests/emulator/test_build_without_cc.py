"""The emulator's C core builds on a machine without cc/gcc/clang: setup.py falls back to zig's
clang from the ``ziglang`` wheel (also a build requirement in pyproject.toml)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from elftools.elf.elffile import ELFFile
import pytest
from rlcc.emulator import _rvcore

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_extension_builds_with_zig_when_path_has_no_compiler(tmp_path):
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    lib = tmp_path / "lib"
    cmd = [sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(lib), "--build-temp", str(tmp_path / "obj")]
    env = {"PATH": str(empty), "HOME": str(Path.home())}  # HOME: zig's cache
    proc = subprocess.run(cmd, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (so,) = (lib / "rlcc" / "emulator").glob("_rvcore*")
    if sys.platform.startswith("linux"):  # zig's clang built it, not a compiler found elsewhere
        with open(so, "rb") as fh:
            assert b"clang" in ELFFile(fh).get_section_by_name(".comment").data()
    spec = importlib.util.spec_from_file_location("rlcc.emulator._rvcore", so)
    core = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(core)
    assert core.FAULT_NAMES == _rvcore.FAULT_NAMES
    assert core.Core(64, 0x10000, 1 << 20, False) is not None
