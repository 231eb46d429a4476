"""The RISC-V cores rlcc's cycle model is validated against: where their RTL comes from, how
Verilator builds each one with its testbench, and what the testbench must adapt.

Third-party RTL is not committed: ``ensure_rtl`` takes a checkout directory or clones the pinned
commit from the documented git URL.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent


@dataclasses.dataclass(frozen=True)
class Core:
    """One validated core: its cycle profile, RTL source and Verilator build."""

    name: str  # also the profile name in emulator/profiles/
    git_url: str
    commit: str  # the revision measured (results and profile cite it)
    config: str  # the configuration built, in words
    verilator_args: Callable[[Path], list[str]]  # RTL checkout -> sources and options
    top: str
    testbench: str
    counter_csr_alias: bool  # the core lacks the unprivileged cycle/instret CSRs (see rtl_run.py)


def _picorv32_args(rtl: Path) -> list[str]:
    return ["+define+RISCV_FORMAL", "-GCOMPRESSED_ISA=1", "-GENABLE_FAST_MUL=1", "-GENABLE_DIV=1", "-GBARREL_SHIFTER=1",
            "-GPROGADDR_RESET=32'h10000", str(rtl / "picorv32.v")]


def _ibex_args(rtl: Path) -> list[str]:
    prim = rtl / "vendor/lowrisc_ip/ip/prim/rtl"
    shims = rtl / "dv/uvm/core_ibex/common/prim"  # the DV environment's prim_buf/prim_flop/... wrappers
    packages = [shims / "prim_pkg.sv", *(prim / f"{p}.sv" for p in (
        "prim_util_pkg", "prim_mubi_pkg", "prim_count_pkg", "prim_cipher_pkg", "prim_ram_1p_pkg", "prim_secded_pkg")),
        rtl / "rtl/ibex_pkg.sv"]
    return ["+define+RVFI", f"+incdir+{HERE}", f"+incdir+{prim}", f"+incdir+{rtl / 'vendor/lowrisc_ip/dv/sv/dv_utils'}",
            "-y", str(rtl / "rtl"), "-y", str(shims), "-y", str(prim),
            "-y", str(rtl / "vendor/lowrisc_ip/ip/prim_generic/rtl"), *map(str, packages),
            str(HERE / "ibex_tb_top.sv")]


def _cv32e40p_args(rtl: Path) -> list[str]:
    r = rtl / "rtl"
    files = [r / "include" / f for f in ("cv32e40p_apu_core_pkg.sv", "cv32e40p_fpu_pkg.sv", "cv32e40p_pkg.sv")]
    files += [r / f"cv32e40p_{m}.sv" for m in (
        "if_stage", "cs_registers", "register_file_ff", "load_store_unit", "id_stage", "aligner", "decoder",
        "compressed_decoder", "fifo", "prefetch_buffer", "hwloop_regs", "mult", "int_controller", "ex_stage",
        "alu_div", "alu", "ff_one", "popcnt", "apu_disp", "controller", "obi_interface", "prefetch_controller",
        "sleep_unit", "core", "top")]
    files.append(rtl / "bhv" / "cv32e40p_sim_clock_gate.sv")
    return ["-Wno-BLKANDNBLK", f"+incdir+{HERE}", f"+incdir+{r / 'include'}", *map(str, files), str(HERE / "cv32e40p_tb_top.sv")]


CORES: dict[str, Core] = {c.name: c for c in (
    Core("picorv32", "https://github.com/YosysHQ/picorv32", "87c89acc18994c8cf9a2311e871818e87d304568",
         "picorv32 (native memory interface) with COMPRESSED_ISA, ENABLE_FAST_MUL, ENABLE_DIV, BARREL_SHIFTER, "
         "ENABLE_REGS_DUALPORT, 64-bit counters; zero-wait memory (mem_ready in the cycle of mem_valid)",
         _picorv32_args, "picorv32", "tb_picorv32.cpp", False),
    Core("ibex", "https://github.com/lowRISC/ibex", "e2b721d488b7a0ca236ba54f3be2e39bed556b68",
         "ibex_top, 2-stage pipeline, RV32IMC, RV32MFast multiplier, BranchTargetALU=0, WritebackStage=0, "
         "no icache; OBI memories with grant in the request cycle and response one cycle later",
         _ibex_args, "ibex_tb_top", "tb_ibex.cpp", True),
    Core("cv32e40p", "https://github.com/openhwgroup/cv32e40p", "6033d2b1be3295ec774d17ac4cf226faacfdeb08",
         "cv32e40p_top, 4-stage pipeline, RV32IMC, COREV_PULP=0, FPU=0; OBI memories with grant in the request "
         "cycle and response one cycle later",
         _cv32e40p_args, "cv32e40p_tb_top", "tb_cv32e40p.cpp", False),
)}


def ensure_rtl(core: Core, source: str | Path | None, cache: Path) -> Path:
    """An RTL checkout for ``core``: ``source`` if it is a directory, else a clone of ``source`` (or
    the core's git URL) at the pinned commit under ``cache``."""
    if source is not None and Path(source).is_dir():
        return Path(source)
    url = str(source) if source else core.git_url
    dest = cache / f"{core.name}-{core.commit[:12]}"
    if not dest.is_dir():
        tmp = dest.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "clone", "--quiet", url, str(tmp)], check=True)
        subprocess.run(["git", "-C", str(tmp), "checkout", "--quiet", core.commit], check=True)
        tmp.rename(dest)
    return dest


def build(core: Core, rtl: Path, build_dir: Path, jobs: int = 1) -> tuple[Path, float]:
    """Verilate and compile ``core``'s testbench from scratch; (executable, build seconds)."""
    if shutil.which("verilator") is None:
        raise RuntimeError("verilator not found: install the OS package (Debian/Ubuntu: apt-get install verilator)")
    mdir = build_dir / core.name
    shutil.rmtree(mdir, ignore_errors=True)  # a clean build, so the reported build time is real
    mdir.mkdir(parents=True)
    exe = mdir / f"tb_{core.name}"
    t0 = time.perf_counter()
    cmd = ["verilator", "--cc", "--exe", "--build", "-O2", "-j", str(jobs), "-Wno-fatal", "-Wno-lint", "-Wno-style",
           "--top-module", core.top, *core.verilator_args(rtl), str(HERE / core.testbench),
           "-CFLAGS", f"-I{HERE}", "--Mdir", str(mdir), "-o", exe.name]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "MAKEFLAGS": f"-j{jobs}"})
    if proc.returncode != 0:
        errors = [ln for ln in (proc.stderr + proc.stdout).splitlines() if "rror" in ln][:10]
        raise RuntimeError(f"verilator build of {core.name} failed:\n" + "\n".join(errors))
    return exe, time.perf_counter() - t0
