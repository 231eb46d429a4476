"""Build hook for the one compiled part of rlcc: the RISC-V interpreter core.

Everything else is declared in setup.cfg; setup.py exists only because a C extension
cannot be declared there.
"""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "rlcc.emulator._rvcore",
            sources=["emulator/csrc/rvcore.c", "emulator/csrc/rv_decode.c", "emulator/csrc/rv_exec.c"],
            depends=["emulator/csrc/rv.h", "emulator/csrc/rv_exec_body.h"],
            include_dirs=["emulator/csrc"],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra"],
        )
    ]
)
