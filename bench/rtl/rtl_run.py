"""Run rlcc's harness ELF on a Verilator model of a RISC-V core: the RTL side of the cycle-model
benchmark. The image is the one rlcc's emulator runs (``HarnessRunner``: PT_LOAD segments with the
input table written at ``rlcc_harness_in``); the testbench (tb_mem.h) stops at the harness's
final status store and dumps the output table, whose per-record ``cycles`` the firmware measured
with the core's own ``cycle`` CSR, exactly as it does in the emulator.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from rlcc.firmware_sdk_stub import harness_layout as hl
from rlcc.verify.runner import HarnessRunner

_STATUS_OFFSET = hl.OUT_HEADER_DTYPE.fields["status"][1]
CYCLES_PER_RECORD_LIMIT = 2_000_000  # a record slower than this on RTL is a hang


# Zicntr counter CSRs -> the machine counters they shadow (cycle -> mcycle, ...): csr - 0x100.
_COUNTER_ALIAS = {0xC00: 0xB00, 0xC80: 0xB80, 0xC02: 0xB02, 0xC82: 0xB82}


def alias_counter_reads(image: bytes, base: int, text: tuple[int, int]) -> bytes:
    """``image`` with every ``csrr rd, cycle[h]/instret[h]`` in ``text`` = (start, end) reading
    ``mcycle[h]/minstret[h]`` instead.

    Ibex implements only the machine-mode counters; the firmware runs in M-mode, where the
    unprivileged CSRs are by definition read-only shadows of them, so the read is the same
    counter through the name the core decodes. The rewritten copy is what the testbench's
    instruction port returns (same length, same instruction classes), data reads see the original.
    """
    out = bytearray(image)
    pc = text[0]
    while pc < text[1]:
        off = pc - base
        lo = int.from_bytes(out[off:off + 2], "little")
        if lo & 3 != 3:
            pc += 2
            continue
        word = int.from_bytes(out[off:off + 4], "little")
        csr = word >> 20
        if word & 0x000FF07F == 0x00002073 and csr in _COUNTER_ALIAS:  # csrrs rd, csr, x0
            out[off:off + 4] = ((word & 0xFFFFF) | (_COUNTER_ALIAS[csr] << 20)).to_bytes(4, "little")
        pc += 4
    return bytes(out)


def text_range(elf: Path) -> tuple[int, int]:
    """(start, end) address of the ELF's .text section."""
    from elftools.elf.elffile import ELFFile

    with open(elf, "rb") as fh:
        sec = ELFFile(fh).get_section_by_name(".text")
        return int(sec["sh_addr"]), int(sec["sh_addr"]) + int(sec["sh_size"])


def run_on_rtl(tb_exe: Path, elf: Path, records: np.ndarray, alias_counters: bool = False) -> tuple[np.ndarray, dict[str, float]]:
    """Output records (OUT_RECORD_DTYPE) of ``records`` run through ``elf`` on the testbench, and
    {"cycles": total clock cycles, "wall_s": simulation seconds}; batches of the ELF's capacity,
    each from the pristine image like ``HarnessRunner.run``. ``alias_counters``: the core reads
    the counters through the machine CSRs (``alias_counter_reads``)."""
    runner = HarnessRunner(elf, 32, "generic5")  # loads the ELF exactly as verification does (costs unused)
    m = runner.machine
    pristine = m.read_mem(m.mem_base, m.mem_size)
    outs, total, wall = [], 0, 0.0
    with tempfile.TemporaryDirectory(prefix="rlcc-rtl-") as work:
        for start in range(0, len(records), runner.capacity):
            batch = records[start:start + runner.capacity]
            table = hl.pack_input(batch)
            image = bytearray(pristine)
            off = runner.in_addr - m.mem_base
            image[off:off + len(table)] = table
            end = max(off + len(table), _last_nonzero(image))
            img_path, out_path = Path(work) / "image.bin", Path(work) / "out.bin"
            img_path.write_bytes(bytes(image[:end]))
            extra = []
            if alias_counters:
                fetch_path = Path(work) / "fetch.bin"
                fetch_path.write_bytes(alias_counter_reads(bytes(image[:end]), m.mem_base, text_range(elf)))
                extra = [str(fetch_path)]
            nbytes = hl.output_nbytes(len(batch))
            cmd = [str(tb_exe), str(img_path), hex(m.mem_base), hex(m.mem_size), hex(runner.out_addr + _STATUS_OFFSET),
                   hex(runner.out_addr), str(nbytes), str(out_path), str(CYCLES_PER_RECORD_LIMIT * (len(batch) + 1)), *extra]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            wall += time.perf_counter() - t0
            if proc.returncode != 0:
                raise RuntimeError(f"{tb_exe.name} exited {proc.returncode}: {proc.stderr.strip()}")
            total += int(proc.stdout.split()[1])
            outs.append(hl.unpack_output(out_path.read_bytes()).records.copy())
    return np.concatenate(outs), {"cycles": float(total), "wall_s": wall}


def _last_nonzero(image: bytearray) -> int:
    """Length of ``image`` without its trailing zero bytes (the testbench zero-fills RAM)."""
    arr = np.frombuffer(bytes(image), dtype=np.uint8)
    nz = np.flatnonzero(arr)
    return int(nz[-1]) + 1 if len(nz) else 0
