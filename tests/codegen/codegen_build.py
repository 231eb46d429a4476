"""Build generated firmware against the SDK stub (host: zig cc, or gcc/clang where a test asks;
RISC-V: zig cc) and run the hosted harness."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from rlcc import firmware_sdk_stub as sdk
from rlcc.firmware_sdk_stub import harness_layout as hl
from rlcc.fxp.vectors import Vectors
from rlcc.verify.toolchain import find_compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hostcc import host_cc, sanitizer_flags

WARN = ["-Wall", "-Wextra", "-Werror", "-Wconversion", "-std=c11"]
ZIG_TARGET = {
    "rv32imc": ["-target", "riscv32-freestanding-none", "-mcpu=generic_rv32+m+c"],
    "rv64imac": ["-target", "riscv64-freestanding-none", "-mcpu=generic_rv64+m+a+c", "-mcmodel=medany"],
}


def _run(cmd: list, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def compile_ok(cmd: list) -> None:
    p = _run(cmd)
    assert p.returncode == 0, f"compile failed: {' '.join(map(str, cmd))}\n{p.stdout}\n{p.stderr}"


def host_driver(d: Path, source: str, name: str) -> Path:
    """A host executable of a test driver ``source`` that includes the runtime header."""
    drv = d / f"{name}.c"
    drv.write_text(source)
    exe = d / name
    compile_ok([*host_cc(), *WARN, "-O2", f"-I{sdk.SDK_DIR}", drv, "-o", exe])
    return exe


def build_host(c_file: Path, out: Path, sanitize: bool = False, cc: str = "zig") -> Path:
    """Hosted harness executable for one generated firmware source; ``cc``: "zig" (bundled; UBSan
    when sanitized), "gcc" or "clang" (ASan + UBSan; the test skips when it is missing)."""
    flags = ["-O1", "-g", *sanitizer_flags(cc)] if sanitize else ["-O2"]
    compile_ok([*host_cc(cc), *WARN, *flags, f"-I{sdk.SDK_DIR}", f"-I{c_file.parent}",
                *sdk.runtime_sources("host"), c_file, "-o", out])
    return out


def compile_riscv(c_file: Path, target: str, out: Path) -> Path:
    compile_ok([*find_compiler(), *ZIG_TARGET[target], "-O2", "-ffreestanding", *WARN,
                f"-I{sdk.SDK_DIR}", f"-I{c_file.parent}", "-c", c_file, "-o", out])
    return out


def run_host(exe: Path, vectors: Vectors, tmp: Path, param_cmds=()) -> hl.OutputTable:
    """Run every vector through the hosted harness (independent records, no chaining)."""
    recs = hl.new_records(len(vectors))
    recs["ctx_in"] = vectors.ctx_in
    recs["event"] = vectors.event
    recs["attr"] = vectors.attr
    inp, outp = tmp / f"{exe.name}.in", tmp / f"{exe.name}.out"
    inp.write_bytes(hl.pack_input(recs, param_cmds))
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    p = subprocess.run([str(exe), str(inp), str(outp)], capture_output=True, env=env)
    assert p.returncode == 0, f"harness failed ({p.returncode}): {p.stderr.decode(errors='replace')[-3000:]}"
    return hl.unpack_output(outp.read_bytes())


def mismatches(out: hl.OutputTable, vectors: Vectors) -> np.ndarray:
    """Indices of vectors whose C outputs (ctx_out, rate, rtt_req) differ from the golden ones."""
    r = out.records
    bad = (r["ctx_out"] != vectors.ctx_out).any(axis=1) | (r["rate"] != vectors.rate) | (r["rtt_req"] != vectors.rtt_req)
    return np.flatnonzero(bad)


def describe(out: hl.OutputTable, vectors: Vectors, bad: np.ndarray, limit: int = 3) -> str:
    lines = [f"{len(bad)} of {len(vectors)} vectors differ"]
    for i in bad[:limit]:
        r = out.records[i]
        lines.append(f"#{i}: ctx_in={vectors.ctx_in[i].tolist()} event={vectors.event[i].tolist()}\n"
                     f"  C      rate={int(r['rate'])} rtt_req={int(r['rtt_req'])} ctx={r['ctx_out'].tolist()}\n"
                     f"  golden rate={int(vectors.rate[i])} rtt_req={int(vectors.rtt_req[i])} ctx={vectors.ctx_out[i].tolist()}")
    return "\n".join(lines)


def bound_writes(constants, ids) -> list[tuple[str, int]]:
    """Single parameter writes at and around every bound of ``fxp.model.PARAM_RULES`` (a bound
    naming another parameter at that parameter's default), plus 0, for each parameter in ``ids``."""
    from rlcc.fxp.model import PARAM_RULE

    defaults = {k: getattr(constants, PARAM_RULE[k].field) for k in ids}
    writes = []
    for key in ids:
        r = PARAM_RULE[key]
        for b in (r.lo, r.hi):
            v = defaults[b] if isinstance(b, str) else b
            writes += [(key, x) for x in (v - 1, v, v + 1) if 0 <= x <= 0xFFFFFFFF]
        writes.append((key, 0))
    return writes
