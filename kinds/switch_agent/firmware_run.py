"""Build switch-agent firmware into the switch SDK stub's harness and run records in the emulator.

    with switch_build("out/firmware.c", "rv32imc") as fw:
        out = fw.run(records)                                   # one timed decision per record
        out = fw.run(records, mode=sl.MODE_INTERVAL, n_ports=48)  # one timed interval per 48 records
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from pathlib import Path
from typing import Iterator

import numpy as np

from rlcc import firmware_sdk_stub as sdk
from rlcc.emulator import Machine
from rlcc.emulator.cycle_model import Profile
from rlcc.errors import EmulationError
from rlcc.firmware_sdk_stub import switch_layout as sl
from rlcc.targets import Target
from rlcc.verify.build import firmware_footprint
from rlcc.verify.firmware_run import resolve
from rlcc.verify.toolchain import compile_riscv

# A decision that runs this many instructions is a runaway (exit 7), as on the NIC path.
RUNAWAY_INSTRUCTIONS_PER_RECORD = 10_000_000


def build_switch_elf(firmware_c: Path, target: str, workdir: Path, cc: str | None = None, zbb: bool = False,
                     capacity: int = sl.DEFAULT_MAX_RECORDS) -> Path:
    """Link ``firmware_c`` with crt0, the switch harness and the switch SDK stub (BuildError on failure)."""
    firmware_c = Path(firmware_c)
    return compile_riscv(
        [firmware_c, *sdk.switch_runtime_sources(target)], target=target,
        include_dirs=[firmware_c.parent, *sdk.include_dirs()], linker_script=sdk.linker_script(target),
        out_path=Path(workdir) / f"{firmware_c.stem}.switch.{target}.elf", cc=cc, zbb=zbb,
        extra_flags=[f"-DSW_HARNESS_MAX_RECORDS={capacity}u"],
    )


class SwitchRunner:
    """The harness ELF loaded once; each batch starts from the pristine image."""

    def __init__(self, elf: Path, xlen: int, profile: str | Profile, zbb: bool | None = None) -> None:
        self.machine = Machine(xlen=xlen, profile=profile, zbb=zbb)
        self.entry = self.machine.load_elf(elf).entry
        symbols = sl.table_symbols(elf)
        self.in_addr, in_size = symbols[sl.SYM_IN]
        self.out_addr, _ = symbols[sl.SYM_OUT]
        self.halt_addr, _ = symbols[sl.SYM_HALT]
        self.capacity = sl.capacity_from_in_symbol_size(in_size)
        self._image = self.machine.read_mem(self.machine.mem_base, self.machine.mem_size)

    def run(self, records: np.ndarray, mode: int = sl.MODE_DECISION, n_ports: int = 0, n_queues: int = 1) -> np.ndarray:
        """Output records (OUT_RECORD_DTYPE) in order. In decision mode, chained records
        (REC_CHAIN_CTX) must not straddle a batch boundary: callers keep chains shorter than the
        capacity and the runner cuts batches before a record that starts a chain."""
        group = max(1, n_ports * n_queues) if mode == sl.MODE_INTERVAL else 1
        step = self.capacity - self.capacity % group
        if step == 0:
            raise EmulationError(f"one interval of {group} queues exceeds the harness capacity {self.capacity}")
        outs, start = [], 0
        while start < len(records):
            end = min(start + step, len(records))
            if mode == sl.MODE_DECISION:
                while end < len(records) and end > start + 1 and records["flags"][end] & sl.REC_CHAIN_CTX:
                    end -= 1
            outs.append(self._batch(records[start:end], mode, n_ports, n_queues, start))
            start = end
        return np.concatenate(outs) if outs else np.zeros(0, dtype=sl.OUT_RECORD_DTYPE)

    def _batch(self, batch: np.ndarray, mode: int, n_ports: int, n_queues: int, start: int) -> np.ndarray:
        m = self.machine
        m.write_mem(m.mem_base, self._image)
        m.write_mem(self.in_addr, sl.pack_input(batch, mode, n_ports, n_queues))
        m.pc = self.entry
        m.set_reg(2, m.stack_top)
        limit = RUNAWAY_INSTRUCTIONS_PER_RECORD * (len(batch) + 1)
        r = m.run(max_instructions=limit, limit_ok=True)
        if r.halt_reason != "ebreak" or r.halt_pc != self.halt_addr:
            pc = r.halt_pc if r.halt_pc is not None else r.pc
            where = m.symbolize(pc)
            raise EmulationError(f"switch firmware stopped by {r.halt_reason} at pc {pc:#x}"
                                 f"{' in ' + where if where else ''} in the batch from record {start}")
        out = sl.unpack_output(m.read_mem(self.out_addr, sl.output_nbytes(len(batch))))
        if len(out) != len(batch):
            raise EmulationError(f"switch harness processed {len(out)} of {len(batch)} records")
        return out.copy()


@dataclasses.dataclass(frozen=True)
class SwitchBuild:
    firmware_c: Path
    target: Target
    profile: Profile
    zbb: bool
    elf: Path
    workdir: Path
    cc: str | None = None

    def runner(self) -> SwitchRunner:
        return SwitchRunner(self.elf, self.target.xlen, self.profile, zbb=self.zbb)

    def run(self, records: np.ndarray, mode: int = sl.MODE_DECISION, n_ports: int = 0, n_queues: int = 1) -> np.ndarray:
        return self.runner().run(records, mode, n_ports, n_queues)

    def footprint(self) -> dict[str, int]:
        return firmware_footprint(self.firmware_c, self.target.name, self.workdir, cc=self.cc, zbb=self.zbb)


def build_switch_in(workdir: Path, firmware_c: str | Path, target: str | Target,
                    profile: str | Path | Profile | None = None, cc: str | None = None) -> SwitchBuild:
    t, prof, zbb = resolve(target, profile)
    elf = build_switch_elf(Path(firmware_c), t.name, Path(workdir), cc=cc, zbb=zbb)
    return SwitchBuild(Path(firmware_c), t, prof, zbb, elf, Path(workdir), cc)


@contextlib.contextmanager
def switch_build(firmware_c: str | Path, target: str | Target, profile: str | Path | Profile | None = None,
                 cc: str | None = None) -> Iterator[SwitchBuild]:
    with tempfile.TemporaryDirectory(prefix="rlcc-sw-") as work:
        yield build_switch_in(Path(work), firmware_c, target, profile, cc)
