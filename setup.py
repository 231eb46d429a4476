"""Build hook for the compiled parts of rlcc: the RISC-V interpreter core and the simulator's block loop.

Everything else is declared in setup.cfg; setup.py exists only because C extensions
cannot be declared there. The system C compiler builds them when there is one; on a machine
without gcc/clang, zig's clang from the ``ziglang`` wheel (a build requirement in
pyproject.toml, and a runtime dependency anyway) does, so nothing has to be installed by hand.
"""
import shutil
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildExt(build_ext):
    """build_ext that falls back to ``python -m ziglang cc`` when the configured compiler is missing."""

    def build_extensions(self) -> None:
        cc = self.compiler
        if cc.compiler_type == "unix" and shutil.which(cc.compiler_so[0]) is None:
            try:
                import ziglang  # noqa: F401
            except ImportError:
                sys.exit(f"no C compiler: {cc.compiler_so[0]} is not on PATH and the ziglang package is missing")
            zig = [sys.executable, "-m", "ziglang", "cc"]
            link = zig + ["-shared"] + (["-undefined", "dynamic_lookup"] if sys.platform == "darwin" else [])
            cc.set_executables(compiler=zig, compiler_so=zig + ["-fPIC"], compiler_cxx=zig,
                               linker_so=link, linker_exe=zig)
        super().build_extensions()


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
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-ffp-contract=off", "-fno-fast-math"],
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
