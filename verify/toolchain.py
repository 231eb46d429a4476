"""Cross-compile bare-metal RISC-V firmware: zig's clang (``python -m ziglang cc``) or a user compiler.

    exe = compile_riscv(["fw.c", "crt0.S"], target="rv64imac", linker_script="link.ld", out_path="fw.elf")

``cc=`` selects another compiler command (e.g. "riscv64-unknown-elf-gcc"); it gets gcc-style
``-march``/``-mabi`` flags instead of zig's ``-target``/``-mcpu``. ``host_compiler()`` is the
same zig clang for programs that run on this machine (no system C compiler needed).

The build is confined: ``-nostdinc`` drops every system include path, leaving the ``-I``
directories and the compiler's own freestanding headers (stdint.h, stddef.h, stdbool.h,
stdarg.h...), and ``rlcc.verify.include_guard`` refuses, before the compiler runs, any include
that is absolute, climbs with ``..``, is not a literal name or leaves its directory through a
symlink (exit 6). A compiler error located in a file outside those directories is reported
without its text, so no file's content is echoed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterable, Sequence

from rlcc.errors import BadInputError, BuildError
from rlcc.firmware_sdk_stub import SDK_DIR
from rlcc.targets import DEFAULT_TARGET, get_target
from rlcc.verify.include_guard import check_includes

# -fomit-frame-pointer: gcc's -O2 already omits it, zig's clang keeps it for RISC-V; a frame
# pointer cost the bundled decision 90 of its 820 cycles (ra and s0 saved in every leaf helper).
COMMON_FLAGS = ("-O2", "-fomit-frame-pointer", "-ffreestanding", "-Wall", "-Wextra", "-Werror", "-g0")
# Interprocedural register allocation (LLVM's; gcc's -fipa-ra is on at -O2): a caller knows which
# registers its static callees write and keeps values in the others across the call, and a static
# callee may use callee-saved registers without saving them. The bundled RTT decision: 24 of 486
# cycles on rv64imac/dpa, TX 94 -> 62. rlcc-verify --prove reads each abstracted function's
# written registers from its code and proves it keeps the rest
# (rlcc.verify.prove_image.ElfImage.clobbered_registers). No tail merging: it joins the code of
# different inputs' searches, after which the prover cannot take the ramps' terms input by input
# (rv32imc: that proof timed out at 60 s with it, 7 s without; cycles unchanged or fewer).
ZIG_FLAGS = ("-mllvm", "-enable-ipra", "-mllvm", "-enable-tail-merge=false")


def _zig_cc(purpose: str) -> list[str]:
    """``zig cc`` from the ziglang wheel, as its own binary when it has one: ``python -m ziglang``
    only execs that binary, and a Python start-up per build was about half of building a mutant."""
    try:
        import ziglang
    except ImportError:
        raise BuildError(f"no {purpose}: the 'ziglang' package is not installed (pip install ziglang)") from None
    zig = Path(ziglang.__file__).with_name("zig")
    if os.access(zig, os.X_OK):
        return [str(zig), "cc"]
    return [sys.executable, "-m", "ziglang", "cc"]


def find_compiler() -> list[str]:
    """The default compiler command: zig's clang from the ziglang wheel (BuildError if missing)."""
    return _zig_cc("RISC-V compiler")


def host_compiler() -> list[str]:
    """The C compiler for programs that run on this machine (the SDK stub's hosted harness, the
    tests' host builds): the same zig clang without ``-target``, i.e. for the native host, so
    nothing beyond the Python packages is needed. zig bundles UBSan's runtime but not ASan's:
    ``-fsanitize=address`` needs a system gcc or clang."""
    return _zig_cc("host C compiler")


def target_flags(target: str, zbb: bool = False, gcc_style: bool = False) -> list[str]:
    """Architecture flags for ``target`` (a name of ``rlcc.targets``), zig/clang or gcc style."""
    try:
        return get_target(target).compiler_flags(zbb, gcc_style)
    except BadInputError as e:
        raise BuildError(str(e)) from None


def freestanding_include_dir(cmd: Sequence[str], gcc_style: bool) -> Path:
    """The compiler's own header directory (stdint.h, stddef.h...), the one system directory a
    ``-nostdinc`` build keeps: zig's ``lib/include``; for a gcc-style ``--cc``, what it reports
    for ``-print-file-name=include`` (gcc) or ``-print-resource-dir`` + ``/include`` (clang)."""
    if not gcc_style:
        try:
            import ziglang

            return Path(ziglang.__file__).resolve().parent / "lib" / "include"
        except ImportError:  # a zig of its own (--cc "zig cc"): ask it as any other compiler
            pass
    for query, suffix in (("-print-file-name=include", ""), ("-print-resource-dir", "include")):
        try:
            out = subprocess.run([*cmd, query], capture_output=True, text=True, timeout=60).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        path = Path(out) / suffix if out else None
        if path is not None and path.is_absolute() and (path / "stddef.h").is_file():
            return path
    raise BuildError(f"cannot find the freestanding headers (stddef.h) of {shlex.join(cmd)}")


# "path:line:col: error: ..." / "path:line: error: ..." of gcc and clang
_LOCATED = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+)(?::\d+)?:\s*(?:fatal )?error\b")


def _first_error(text: str, allowed_dirs: Sequence[str | Path] = ()) -> str:
    """The compiler's first error line; when it points into a file outside ``allowed_dirs``
    (the sources' and include directories), only its location: never a foreign file's text."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "(no compiler output)")
    m = _LOCATED.match(first)
    if m is not None and allowed_dirs:
        where = os.path.realpath(m.group("path"))
        roots = [os.path.realpath(d) for d in allowed_dirs]
        if not any(os.path.commonpath([where, r]) == r for r in roots):
            return f"{m.group('path')}:{m.group('line')}: error in a file outside the firmware and SDK directories (text not shown)"
    return first


def compile_riscv(
    sources: Sequence[str | Path],
    target: str = DEFAULT_TARGET.name,
    include_dirs: Iterable[str | Path] = (),
    linker_script: str | Path | None = None,
    out_path: str | Path = "a.elf",
    cc: str | Sequence[str] | None = None,
    extra_flags: Iterable[str] = (),
    zbb: bool = False,
    timeout_s: float = 300.0,
) -> Path:
    """Compile and link ``sources`` into a static ELF at ``out_path``; returns its path.

    Raises BuildError with the compiler's first error line on failure.
    """
    if not sources:
        raise BuildError("compile_riscv: no source files")
    for s in sources:
        if not Path(s).is_file():
            raise BuildError(f"source file not found: {s}")
    if cc is None:
        cmd, gcc_style = find_compiler(), False
    else:
        cmd = shlex.split(cc) if isinstance(cc, str) else list(cc)
        if not cmd or shutil.which(cmd[0]) is None and not Path(cmd[0]).exists():
            raise BuildError(f"compiler not found: {cmd[0] if cmd else cc!r}")
        if shutil.which(cmd[0]) is None and not (Path(cmd[0]).is_file() and os.access(cmd[0], os.X_OK)):
            raise BuildError(f"cannot run the compiler {cmd[0]}: not an executable file")
        gcc_style = "ziglang" not in cmd and "zig" not in Path(cmd[0]).name
    include_dirs = [Path(d) for d in include_dirs]
    system_dir = freestanding_include_dir(cmd, gcc_style)
    check_includes(sources, include_dirs, [system_dir], trusted=[SDK_DIR, system_dir])
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    args = [*cmd, *target_flags(target, zbb, gcc_style), *COMMON_FLAGS, "-nostdinc"]
    args += ["-nostartfiles", "-static"] if gcc_style else ZIG_FLAGS
    args += [f"-I{d}" for d in include_dirs]
    args += ["-isystem", str(system_dir)]
    if linker_script is not None:
        args += ["-T", str(linker_script)]
    args += [*extra_flags, *map(str, sources), "-o", str(out)]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s)
    except FileNotFoundError:
        raise BuildError(f"compiler not found: {args[0]}") from None
    except OSError as exc:  # a directory or a non-executable file as --cc
        raise BuildError(f"cannot run the compiler {args[0]}: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        raise BuildError(f"compiler timed out after {timeout_s:.0f} s") from None
    if proc.returncode != 0 or not out.exists():
        allowed = [*(Path(s).parent for s in sources), *include_dirs, system_dir]
        raise BuildError(f"cross-compilation failed: {_first_error(proc.stderr + proc.stdout, allowed)}")
    return out
