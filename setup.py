"""Build hook for the compiled parts of rlcc: the RISC-V interpreter core and the simulator's block loop.

Everything else is declared in setup.cfg; setup.py exists only because C extensions
cannot be declared there. The system C compiler builds them when there is one; on a machine
without gcc/clang, zig's clang from the ``ziglang`` wheel (a build requirement in
pyproject.toml, and a runtime dependency anyway) does, so nothing has to be installed by hand.
"""
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildExt(build_ext):
    """build_ext that falls back to ``python -m ziglang cc`` when the configured compiler is missing."""

    def build_extensions(self) -> None:
        cc = self.compiler
        clang = False
        if cc.compiler_type == "unix" and shutil.which(cc.compiler_so[0]) is None:
            try:
                import ziglang  # noqa: F401
            except ImportError:
                sys.exit(f"no C compiler: {cc.compiler_so[0]} is not on PATH and the ziglang package is missing")
            zig = [sys.executable, "-m", "ziglang", "cc"]
            link = zig + ["-shared"] + (["-undefined", "dynamic_lookup"] if sys.platform == "darwin" else [])
            cc.set_executables(compiler=zig, compiler_so=zig + ["-fPIC"], compiler_cxx=zig,
                               linker_so=link, linker_exe=zig)
            clang = True
        elif cc.compiler_type == "unix":
            clang = _is_clang(cc.compiler_so[0])
        if clang:
            # The interpreter's handlers start 64-byte lines, as the GCC pragma in rv_exec.c asks
            # (bench_emulator.py: 0.50x -> 0.62x unicorn on rv64imac, 0.42x -> 0.52x on rv32imc).
            for ext in self.extensions:
                if ext.name == "rlcc.emulator._rvcore":
                    ext.extra_compile_args = [*ext.extra_compile_args, "-mllvm", "-align-all-nofallthru-blocks=6"]
        super().build_extensions()


def _is_clang(compiler: str) -> bool:
    """Whether the C compiler is clang (Apple's cc, a clang on PATH)."""
    try:
        out = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "clang" in out


setup(
    cmdclass={"build_ext": BuildExt},
    ext_modules=[
        Extension(
            "rlcc.emulator._rvcore",
            sources=["emulator/csrc/rvcore.c", "emulator/csrc/rv_decode.c", "emulator/csrc/rv_exec.c"],
            depends=["emulator/csrc/rv.h", "emulator/csrc/rv_ops.h", "emulator/csrc/rv_exec_body.h", "emulator/csrc/rv_exec_ops.h", "emulator/csrc/rv_exec_mem.h"],
            include_dirs=["emulator/csrc"],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra"],
        ),
        # The single-switch block loop of the simulator: the same float operations as its Python
        # twin in the same order, so no fused multiply-add (bit-identical results, blocks.py).
        Extension(
            "rlcc.simulator._fluidcore",
            sources=["simulator/csrc/fluidcore.c"],
            depends=["simulator/csrc/npcompat.h"],
            # -O3 vectorizes element-wise loops only: float sums are never reassociated without
            # -ffast-math, so the results stay bit-identical (tests/simulator/test_kernel*.py);
            # -fno-math-errno lets sqrt vectorize (no errno to set; the same correctly rounded values).
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-ffp-contract=off", "-fno-fast-math",
                                "-fno-math-errno"],
        ),
        # Swift's step loop on one switch port: bit-identical to the engine's Python loop, as above.
        Extension(
            "rlcc.simulator._swiftloop",
            sources=["simulator/csrc/swiftloop.c"],
            depends=["simulator/csrc/npcompat.h"],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-ffp-contract=off", "-fno-fast-math"],
        ),
    ]
)
