"""Build hook for the one compiled part of rlcc: the RISC-V interpreter core.

Everything else is declared in setup.cfg; setup.py exists because a C extension cannot be
declared there, and derives the package list from setup.cfg's ``package_dir`` so that a new
sub-package folder is never left out of a wheel. The system C compiler builds it when there is one; on a machine
without gcc/clang, zig's clang from the ``ziglang`` wheel (a build requirement in
pyproject.toml, and a runtime dependency anyway) does, so nothing has to be installed by hand.
"""
import configparser
import shutil
import sys
from pathlib import Path

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


def rlcc_packages(setup_cfg: Path) -> list[str]:
    """Every folder below a ``package_dir`` root that holds an ``__init__.py``, as a dotted name."""
    cfg = configparser.ConfigParser()
    cfg.read(setup_cfg)
    roots = {}
    for line in cfg["options"]["package_dir"].strip().splitlines():
        name, _, folder = (part.strip() for part in line.partition("="))
        roots[name] = Path(folder)
    packages = set()
    for name, folder in roots.items():
        for init in (setup_cfg.parent / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(setup_cfg.parent / folder)
            packages.add(".".join((name, *rel.parts)))
    return sorted(packages)


setup(
    packages=rlcc_packages(Path(__file__).resolve().parent / "setup.cfg"),
    cmdclass={"build_ext": BuildExt},
    ext_modules=[
        Extension(
            "rlcc.emulator._rvcore",
            sources=["emulator/csrc/rvcore.c", "emulator/csrc/rv_decode.c", "emulator/csrc/rv_exec.c"],
            depends=["emulator/csrc/rv.h", "emulator/csrc/rv_ops.h", "emulator/csrc/rv_exec_body.h"],
            include_dirs=["emulator/csrc"],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra"],
        )
    ]
)
