"""Run harness records through firmware in rlcc's RISC-V emulator, in capacity-sized batches."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rlcc.emulator import Machine
from rlcc.emulator.cycle_model import Profile
from rlcc.errors import EmulationError
from rlcc.firmware_sdk_stub import harness_layout as hl
from rlcc.fxp.vectors import Vectors

# Generous per-record instruction allowance: a decision is O(100) instructions; a runaway
# loop is stopped by the emulator's limit instead of hanging verification.
MAX_INSTRUCTIONS_PER_RECORD = 20_000
STARTUP_INSTRUCTIONS = 2_000_000


def records_from_vectors(v: Vectors) -> np.ndarray:
    """Harness input records (IN_RECORD_DTYPE) for test vectors' (ctx_in, event, attr)."""
    recs = hl.new_records(len(v))
    recs["ctx_in"], recs["event"], recs["attr"] = v.ctx_in, v.event, v.attr
    return recs


class HarnessRunner:
    """Loads a harness ELF once and replays batches of input records through it."""

    def __init__(self, elf: Path, xlen: int, profile: str | Profile, zbb: bool | None = None) -> None:
        self.machine = Machine(xlen=xlen, profile=profile, zbb=zbb)
        loaded = self.machine.load_elf(elf)
        self.entry = loaded.entry
        symbols = hl.table_symbols(elf)
        self.in_addr, in_size = symbols[hl.SYM_IN]
        self.out_addr, _ = symbols[hl.SYM_OUT]
        self.capacity = hl.capacity_from_in_symbol_size(in_size)
        self._image = self.machine.read_mem(self.machine.mem_base, self.machine.mem_size)

    def run(self, records: np.ndarray) -> np.ndarray:
        """Output records (OUT_RECORD_DTYPE) for input records (IN_RECORD_DTYPE), in order.

        Each batch starts from the pristine loaded image, so batches are independent; records
        chained with REC_CHAIN_CTX must not straddle batches (callers keep them whole).
        """
        outs = []
        for start in range(0, len(records), self.capacity):
            batch = records[start : start + self.capacity]
            m = self.machine
            m.write_mem(m.mem_base, self._image)
            m.write_mem(self.in_addr, hl.pack_input(batch))
            m.pc = self.entry
            m.set_reg(2, m.stack_top)
            result = m.run(max_instructions=STARTUP_INSTRUCTIONS + MAX_INSTRUCTIONS_PER_RECORD * len(batch))
            if result.halt_reason != "ebreak":
                raise EmulationError(f"firmware stopped with {result.halt_reason} instead of finishing the harness")
            raw = m.read_mem(self.out_addr, hl.output_nbytes(len(batch)))
            table = hl.unpack_output(raw)
            if len(table.records) != len(batch):
                raise EmulationError(f"harness processed {len(table.records)} of {len(batch)} records")
            outs.append(table.records.copy())
        return np.concatenate(outs) if outs else np.zeros(0, dtype=hl.OUT_RECORD_DTYPE)
