"""Host C compilers for the tests: zig's clang from the ``ziglang`` wheel always (nothing to
install), a system gcc or clang only where a test wants compiler diversity or ASan, skipped with
a clear reason when that compiler is not on PATH."""

from __future__ import annotations

import shutil

import pytest
from rlcc.verify.toolchain import host_compiler

SYSTEM_CCS = ("gcc", "clang")
UBSAN = ["-fsanitize=undefined", "-fno-sanitize-recover=all"]
ASAN_UBSAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


def host_cc(name: str = "zig") -> list[str]:
    """The command of compiler ``name``: "zig" (bundled, always there), "gcc" or "clang" (skips the
    calling test when missing)."""
    if name == "zig":
        return host_compiler()
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not on PATH: this {name}-specific check is skipped (the zig cc build always runs)")
    return [path]


def sanitizer_flags(name: str = "zig") -> list[str]:
    """ASan + UBSan where the compiler has both runtimes; zig ships only UBSan's."""
    return UBSAN if name == "zig" else ASAN_UBSAN
